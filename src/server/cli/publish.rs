//! `rivet publish --project ID [--private]`: builds a project of a running
//! `rivet serve` and publishes it as a static site, then prints its
//! address (`POST /api/v1/projects/{id}/publish`).

use std::process::ExitCode;

use super::client::Client;
use crate::server::config::Config;

#[derive(Debug, clap::Args)]
pub struct PublishArgs {
    /// The project's id (see `rivet projects`).
    #[arg(long)]
    pub project: String,
    /// Only the owner may open the site (through the link Rivet gives).
    #[arg(long)]
    pub private: bool,
    /// The server's address (default: server.addr of the configuration).
    #[arg(long, env = "RIVET_URL")]
    pub server: Option<String>,
}

pub async fn run(args: PublishArgs, config: Config) -> anyhow::Result<ExitCode> {
    let client = Client::new(&config, args.server.as_deref())?;
    let body = if args.private {
        serde_json::json!({"visibility": "private"})
    } else {
        serde_json::json!({})
    };
    let published = client.publish(&args.project, body).await?;
    println!(
        "published version {} at {}",
        published["version"],
        published["url"].as_str().unwrap_or("?")
    );
    Ok(ExitCode::SUCCESS)
}
