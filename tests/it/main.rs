//! Rivet's integration tests, one module per area, linked into one binary.

#![allow(clippy::unwrap_used)]

mod agent;
mod api_v1;
mod api_v1_control;
mod chat;
mod chats;

mod checkpoints;
mod database;
mod enhance;
mod git_remote;
mod images;
mod llm;
mod mcp;
mod protocol;
mod publish;
mod runtime_choice;
mod sandbox;
mod secrets;
mod serve;
mod session;
mod spend;
mod support;
mod templates;
mod transfer;
