//! `rivet chat [--project ID | --new NAME] PROMPT`: sends one message to a
//! running `rivet serve` and follows the answer through the project's
//! event stream (`docs/api.md`).
//!
//! Output: `project <id>` first, then the answer's prose as it streams,
//! one `action <status>: …` line per action step and `preview <url>` per
//! preview address. Returns once the answer and its actions have finished
//! (a dev server counts once it listens). Exit status: 0 when the answer
//! completed and no action failed, 1 otherwise.

use std::io::Write;
use std::process::ExitCode;

use futures::StreamExt;

use super::client::Client;
use super::follow::{Follower, Output};
use crate::runtime::session::SessionState;
use crate::server::config::Config;
use crate::server::store::UNTITLED;

/// Times the event stream is reopened after it dropped.
const RECONNECTS: u32 = 5;

#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    /// Continue this project's conversation.
    #[arg(long, conflicts_with = "new")]
    pub project: Option<String>,
    /// Start a project with this name (without either flag, a new project
    /// is named after the message).
    #[arg(long)]
    pub new: Option<String>,
    /// The server's address (default: server.addr of the configuration).
    #[arg(long, env = "RIVET_URL")]
    pub server: Option<String>,
    /// The message; several words are joined with spaces.
    #[arg(required = true)]
    pub prompt: Vec<String>,
}

pub async fn run(args: ChatArgs, config: Config) -> anyhow::Result<ExitCode> {
    let client = Client::new(&config, args.server.as_deref())?;
    let project = match (&args.project, &args.new) {
        (Some(id), _) => client.project(id).await?.id,
        (None, Some(name)) => client.create(name).await?,
        (None, None) => client.create(UNTITLED).await?,
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "project {project}")?;
    stdout.flush()?;
    // Subscribed before sending, so no event of the answer is missed.
    let mut events = Box::pin(client.events(&project, None).await?);
    let Some(first) = events.next().await.transpose()? else {
        anyhow::bail!("the event stream of project {project} ended at once");
    };
    let mut last_seq = first.seq;
    let mut state = SessionState::default();
    state.apply(&first.event);
    let sent = client.message(&project, &args.prompt.join(" ")).await?;
    let mut follower = Follower::new(state, sent.assistant_message_id);
    let mut printer = Printer::default();
    let mut reconnects = 0;
    loop {
        if let Some(outcome) = follower.outcome() {
            printer.end_line(&mut stdout)?;
            for problem in &outcome.problems {
                eprintln!("rivet chat: {problem}");
            }
            return Ok(if outcome.success {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
        match events.next().await {
            Some(Ok(envelope)) => {
                last_seq = envelope.seq;
                for output in follower.apply(&envelope.event) {
                    printer.print(&mut stdout, output)?;
                }
            }
            // The connection dropped: resume after the last event seen.
            dropped => {
                if let Some(Err(error)) = dropped {
                    tracing::debug!(%error, "the event stream broke");
                }
                reconnects += 1;
                if reconnects > RECONNECTS {
                    anyhow::bail!("the event stream of project {project} kept dropping");
                }
                events = Box::pin(client.events(&project, Some(last_seq)).await?);
            }
        }
    }
}

/// Prints prose as it comes and every other line on a line of its own.
#[derive(Default)]
struct Printer {
    mid_line: bool,
}

impl Printer {
    fn print(&mut self, out: &mut impl Write, output: Output) -> std::io::Result<()> {
        match output {
            Output::Text(text) => {
                write!(out, "{text}")?;
                self.mid_line = !text.ends_with('\n');
            }
            Output::Line(line) => {
                self.end_line(out)?;
                writeln!(out, "{line}")?;
            }
        }
        out.flush()
    }

    fn end_line(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        if self.mid_line {
            writeln!(out)?;
            self.mid_line = false;
        }
        Ok(())
    }
}
