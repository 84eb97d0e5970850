//! A running command's output on its step card, as it arrives: the tools
//! hand each chunk over ([`LiveOutput::sink`]), and a task of the board
//! publishes the end of the output so far (terminal escapes removed, at
//! most [`AgentStep::OUTPUT_TAIL`] bytes) at most once per period, so a
//! chatty command adds a few small events a second to the stored event
//! log, not one per chunk. The step's result replaces it when it ends.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::MissedTickBehavior;

use crate::runtime::session::AgentStep;
use crate::runtime::terminal_text::plain_text;
use crate::server::agent::tools::OutputSink;

/// The shortest time between two output events of a step.
pub const PERIOD: Duration = Duration::from_millis(250);
/// Raw bytes kept to render the tail from (escape sequences and redrawn
/// progress lines take room).
const RAW_KEEP: usize = 4 * AgentStep::OUTPUT_TAIL;

enum Piece {
    Start(String),
    Chunk(Vec<u8>),
    End,
}

/// Where a run's command output goes; the task stops when this is dropped.
pub struct LiveOutput {
    tx: mpsc::UnboundedSender<Piece>,
}

impl LiveOutput {
    /// Starts the task; `publish(step_id, output)` shows a step's output.
    pub fn spawn(publish: impl Fn(&str, String) + Send + 'static, period: Duration) -> LiveOutput {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(rx, publish, period));
        LiveOutput { tx }
    }

    /// Output from now on belongs to `step_id`.
    pub fn start(&self, step_id: &str) {
        let _ = self.tx.send(Piece::Start(step_id.to_owned()));
    }

    /// The step ended: output not yet shown is dropped (the result has it).
    pub fn end(&self) {
        let _ = self.tx.send(Piece::End);
    }

    /// What the tools call with each chunk of a running command's output.
    pub fn sink(&self) -> OutputSink {
        let tx = self.tx.clone();
        Arc::new(move |bytes: &[u8]| {
            let _ = tx.send(Piece::Chunk(bytes.to_vec()));
        })
    }
}

/// The output of the step that runs now.
struct Current {
    step_id: String,
    raw: Vec<u8>,
    /// Output arrived since it was last shown.
    unseen: bool,
}

impl Current {
    fn push(&mut self, bytes: &[u8]) {
        self.raw.extend_from_slice(bytes);
        if self.raw.len() > 2 * RAW_KEEP {
            self.raw.drain(..self.raw.len() - RAW_KEEP);
        }
        self.unseen = true;
    }

    fn text(&self) -> String {
        let text = plain_text(&String::from_utf8_lossy(&self.raw));
        AgentStep::output_tail(&text).to_owned()
    }
}

async fn run(
    mut rx: mpsc::UnboundedReceiver<Piece>,
    publish: impl Fn(&str, String),
    period: Duration,
) {
    let mut current: Option<Current> = None;
    // A tick missed while nothing was new fires at once when output comes,
    // and the next one a whole period later.
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        let unseen = current.as_ref().is_some_and(|c| c.unseen);
        tokio::select! {
            // Everything queued first: a step's end drops what came before it.
            biased;
            piece = rx.recv() => match piece {
                None => return,
                Some(Piece::Start(step_id)) => {
                    current = Some(Current { step_id, raw: Vec::new(), unseen: false });
                }
                Some(Piece::Chunk(bytes)) => {
                    if let Some(current) = &mut current {
                        current.push(&bytes);
                    }
                }
                Some(Piece::End) => current = None,
            },
            _ = tick.tick(), if unseen => {
                if let Some(current) = &mut current {
                    current.unseen = false;
                    publish(&current.step_id, current.text());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
