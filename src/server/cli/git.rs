//! `rivet git push --project ID`: pushes a project of a running `rivet
//! serve` to the git remote connected to it (in the settings or with `PUT
//! /api/v1/projects/{id}/git/remote`), and prints the commit and branch.

use std::process::ExitCode;

use super::client::Client;
use crate::server::config::Config;

#[derive(Debug, clap::Args)]
pub struct GitArgs {
    #[command(subcommand)]
    pub action: GitAction,
    /// The server's address (default: server.addr of the configuration).
    #[arg(long, env = "RIVET_URL", global = true)]
    pub server: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub enum GitAction {
    /// Push the project's checkpoints to its remote's branch (never forced).
    Push {
        /// The project's id (see `rivet projects`).
        #[arg(long)]
        project: String,
    },
}

pub async fn run(args: GitArgs, config: Config) -> anyhow::Result<ExitCode> {
    let client = Client::new(&config, args.server.as_deref())?;
    match args.action {
        GitAction::Push { project } => {
            let pushed = client.push(&project).await?;
            println!(
                "pushed {} to {}",
                pushed["commit"].as_str().unwrap_or("?"),
                pushed["branch"].as_str().unwrap_or("?")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
