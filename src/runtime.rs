//! Code shared by the server and the WASM client: the bolt protocol, the
//! actions it carries, and the runtimes actions run on. Nothing here knows
//! HTTP or the DOM.

pub mod action;
pub mod attachment;
pub mod build_result;
pub mod database;
pub mod error;
pub mod host;
pub mod kind;
pub mod llm;
pub mod mask;
pub mod mcp;
pub mod path;
pub mod preview;
pub mod project;
pub mod protocol;
pub mod relay;
pub mod runner;
pub mod selection;
pub mod session;
pub mod ship;
pub mod templates;
pub mod terminal_text;
pub mod time;
pub mod tree;
