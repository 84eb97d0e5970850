//! `rivet git push|pull --project ID`: pushes a project of a running
//! `rivet serve` to the git remote connected to it (in the settings or with
//! `PUT /api/v1/projects/{id}/git/remote`), or pulls from it, and prints the
//! commit and branch.

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
    /// Bring the remote branch's commits into the project (a fast-forward
    /// or a merge; a conflict changes nothing).
    Pull {
        /// The project's id (see `rivet projects`).
        #[arg(long)]
        project: String,
    },
}

pub async fn run(args: GitArgs, config: Config) -> anyhow::Result<ExitCode> {
    let client = Client::new(&config, args.server.as_deref())?;
    let field =
        |value: &serde_json::Value, key: &str| value[key].as_str().unwrap_or("?").to_owned();
    match args.action {
        GitAction::Push { project } => {
            let pushed = client.git(&project, "push").await?;
            let (commit, branch) = (field(&pushed, "commit"), field(&pushed, "branch"));
            println!("pushed {commit} to {branch}");
        }
        GitAction::Pull { project } => {
            let pulled = client.git(&project, "pull").await?;
            let (commit, branch) = (field(&pulled, "commit"), field(&pulled, "branch"));
            let how = field(&pulled, "outcome").replace('_', " ");
            println!("pulled {branch}: {how}, now at {commit}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
