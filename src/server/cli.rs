//! The `rivet` command line. `chat` and `projects` are clients of a running
//! `rivet serve` (`cli/`).

mod chat;
mod client;
mod follow;
mod git;
mod list;
mod publish;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use super::config::Config;
use super::serve::ServeArgs;

#[derive(Debug, Parser)]
#[command(
    name = "rivet",
    version,
    about = "A web IDE where an LLM builds a working web app in front of you."
)]
pub struct Cli {
    /// The configuration file; every key can also be set with RIVET_<SECTION>_<KEY>.
    #[arg(
        long,
        global = true,
        default_value = "Leptos.toml",
        env = "RIVET_CONFIG"
    )]
    pub config: PathBuf,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the IDE (the default).
    Serve(ServeArgs),
    /// Parse a model's answer from stdin into bolt protocol events (JSON Lines).
    Parse(super::parse_cmd::ParseArgs),
    /// Serve an OpenAI-compatible API that replays scripted answers.
    MockLlm(super::llm::mock::MockArgs),
    /// Ask the configured model once and stream the answer to stdout.
    Ask(super::llm::ask::AskArgs),
    /// Send a message to a project of the running `rivet serve` and follow
    /// the answer and its actions; exits non-zero when any failed.
    Chat(chat::ChatArgs),
    /// List the projects of the running `rivet serve`, latest first.
    Projects(list::ProjectsArgs),
    /// A project's git remote: `rivet git push|pull --project ID`.
    Git(git::GitArgs),
    /// Publish a project as a static site: `rivet publish --project ID`.
    Publish(publish::PublishArgs),
    /// The sandbox's helper process, which runs inside a project's sandbox;
    /// started by `rivet serve`.
    #[command(hide = true)]
    SandboxAgent(super::sandbox::HelperArgs),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // The helper reads no configuration (its directory is the project's) and
    // reports to the IDE, which logs its stderr.
    if let Some(Command::SandboxAgent(args)) = &cli.command {
        return super::sandbox::helper::main(args.clone());
    }
    init_tracing();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("rivet: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // `parse` needs neither the configuration nor an async runtime.
    if let Some(Command::Parse(args)) = &cli.command {
        return super::parse_cmd::run(args);
    }
    let cwd = std::env::current_dir()?;
    let config = Config::load(&cli.config, &cwd)?;
    let runtime = tokio::runtime::Runtime::new()?;
    match cli.command.unwrap_or(Command::Serve(ServeArgs::default())) {
        Command::Serve(args) => runtime.block_on(super::serve::serve(config, args))?,
        Command::SandboxAgent(_) => unreachable!("handled before tracing starts"),
        Command::Parse(_) => unreachable!("handled before the configuration is loaded"),
        Command::MockLlm(args) => runtime.block_on(super::llm::mock::run(args))?,
        Command::Ask(args) => return runtime.block_on(super::llm::ask::run(args, config)),
        Command::Chat(args) => return runtime.block_on(chat::run(args, config)),
        Command::Projects(args) => return runtime.block_on(list::run(args, config)),
        Command::Git(args) => return runtime.block_on(git::run(args, config)),
        Command::Publish(args) => return runtime.block_on(publish::run(args, config)),
    }
    Ok(ExitCode::SUCCESS)
}

/// Logs go to stderr, filtered by RUST_LOG (default: info for Rivet, warnings
/// for its dependencies).
fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn,rivet=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // A log line that cannot be written (whoever read stderr went away)
        // is dropped; reporting it would print to that same stderr, which
        // panics, and a panic in the signal task would keep the server up.
        .log_internal_errors(false)
        .init();
}
