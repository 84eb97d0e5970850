//! Agent mode: the model works on the project step by step with tools
//! (`tools.rs`) instead of answering with one bolt artifact; `run.rs` is the
//! loop that asks the model, runs its calls and stops it with a reason;
//! `build.rs` picks the build results `read_build_result` reports; `as_actions.rs` turns the
//! file and shell tools' calls into bolt actions for Build mode with tools.

pub mod as_actions;
pub mod build;
pub mod run;
pub mod tools;
