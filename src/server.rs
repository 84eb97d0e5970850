//! Everything that runs only on the server: HTTP, configuration, the LLM
//! client, the sandbox and the command line.

pub mod access;
pub mod agent;
pub mod api_v1;
pub mod assets;
pub mod atomic;
pub mod checkpoint;
pub mod cli;
pub mod config;
pub mod database;
pub mod errors;
pub mod host_tools;
pub mod http;
pub mod llm;
pub mod mcp;
pub mod page;
pub mod parse_cmd;
pub mod private_files;
pub mod projects;
pub mod publish;
pub mod remote;
pub mod sandbox;
pub mod secrets;
pub mod serve;
pub mod session;
pub mod state;
pub mod store;
pub mod templates;
pub mod transfer;
pub mod webcontainer_package;
