//! `rivet projects`: the projects of a running `rivet serve`, the latest
//! changed first, one per line: id, last activity (UTC), name.

use std::io::Write;
use std::process::ExitCode;

use super::client::Client;
use crate::runtime::time::format_utc;
use crate::server::config::Config;
use crate::server::store::ProjectListing;

#[derive(Debug, clap::Args)]
pub struct ProjectsArgs {
    /// Only projects whose name or messages contain this text.
    #[arg(long, default_value = "")]
    pub search: String,
    /// Print the projects as a JSON array (as `GET /api/v1/projects`).
    #[arg(long)]
    pub json: bool,
    /// The server's address (default: server.addr of the configuration).
    #[arg(long, env = "RIVET_URL")]
    pub server: Option<String>,
}

pub async fn run(args: ProjectsArgs, config: Config) -> anyhow::Result<ExitCode> {
    let client = Client::new(&config, args.server.as_deref())?;
    let projects = client.projects(&args.search).await?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &projects)?;
        writeln!(stdout)?;
    } else {
        for project in &projects {
            writeln!(stdout, "{}", line(project))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `id<TAB>2026-11-23 16:28<TAB>name`.
fn line(project: &ProjectListing) -> String {
    let when = project.last_message_at.unwrap_or(project.updated_at);
    format!("{}\t{}\t{}", project.id, format_utc(when), project.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::kind::RuntimeKind;

    #[test]
    fn a_line_shows_the_last_message_time_when_there_is_one() {
        let mut project = ProjectListing {
            id: "abc".into(),
            name: "Todo app".into(),
            created_at: 0,
            updated_at: 0,
            runtime: RuntimeKind::Sandbox,
            last_message_at: Some(951_782_400),
        };
        assert_eq!(line(&project), "abc\t2000-02-29 00:00\tTodo app");
        project.last_message_at = None;
        assert_eq!(line(&project), "abc\t1970-01-01 00:00\tTodo app");
    }
}
