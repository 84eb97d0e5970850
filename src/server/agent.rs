//! Agent mode: the model works on the project step by step with tools
//! (`tools.rs`) instead of answering with one bolt artifact.

pub mod tools;
