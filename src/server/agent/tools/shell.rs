//! `run_shell_command` and `read_build_result`.
//!
//! A command runs without the runtime's wall-clock limit (so a dev server
//! may keep running) and the tool waits for whichever comes first: the
//! command ends (its output and exit code are the answer), it opens a port
//! (it is a server: it keeps running in the background and the answer names
//! the port), the tool's own time limit (it is killed), or Stop.
//!
//! Because it runs as a server, the runtime does not reap what a finished
//! command left running in the background (`node server.js &` keeps going);
//! the rest of a finished command's output is awaited for [`OUTPUT_GRACE`].

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolOutput};
use crate::runtime::build_result::report::failure_report;
use crate::runtime::host::{CommandSpec, EventStream, ExitStatus, PortEvent, Process};

/// Most characters of output the model is given; the middle of a longer
/// output is cut.
pub const MAX_OUTPUT_CHARS: usize = 30_000;
/// How long the rest of a finished command's output may take to arrive.
const OUTPUT_GRACE: Duration = Duration::from_secs(2);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    pub(in crate::server::agent) command: String,
    #[allow(dead_code)] // Shown to the person by the step card, not used here.
    description: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// How the wait for a command ended.
enum Ended {
    Exited(ExitStatus),
    Listening(u16),
    TimedOut,
    Stopped,
}

pub async fn run_shell_command(cx: &ToolContext, args: ShellArgs) -> Result<ToolOutput, ToolError> {
    if args.command.trim().is_empty() {
        return Err(ToolError::Arguments("command is empty".to_owned()));
    }
    let already: BTreeSet<u16> = cx.runtime.open_ports().await.into_iter().collect();
    let ports = cx.runtime.port_events();
    let process = cx
        .runtime
        .spawn(CommandSpec::server(args.command.clone()))
        .await?;
    let mut output = process
        .take_output()
        .unwrap_or_else(|| futures::stream::empty().boxed());
    let mut collected = Vec::new();
    let ended = {
        let port = std::pin::pin!(new_port(ports, already));
        let deadline = std::pin::pin!(tokio::time::sleep(cx.command_timeout));
        wait_for_end(cx, &*process, &mut output, &mut collected, port, deadline).await
    };
    match ended {
        Ended::Exited(_) => {
            // The output ends with the process; a child left running in the
            // background may hold it open, so do not wait for it forever.
            let rest = tokio::time::timeout(OUTPUT_GRACE, async {
                while let Some(chunk) = output.next().await {
                    collected.extend_from_slice(&chunk);
                }
            });
            let _ = rest.await;
        }
        _ => {
            // What has already arrived belongs to the answer.
            while let Some(Some(chunk)) = output.next().now_or_never() {
                collected.extend_from_slice(&chunk);
            }
        }
    }
    let text = cap_middle(&String::from_utf8_lossy(&collected), MAX_OUTPUT_CHARS);
    Ok(answer(cx, process, output, text, ended).await)
}

async fn wait_for_end(
    cx: &ToolContext,
    process: &dyn Process,
    output: &mut EventStream<Vec<u8>>,
    collected: &mut Vec<u8>,
    mut port: Pin<&mut impl Future<Output = Option<u16>>>,
    mut deadline: Pin<&mut tokio::time::Sleep>,
) -> Ended {
    let mut output_open = true;
    loop {
        tokio::select! {
            biased;
            chunk = output.next(), if output_open => match chunk {
                Some(chunk) => {
                    if let Some(sink) = &cx.output {
                        sink(&chunk);
                    }
                    collected.extend_from_slice(&chunk);
                }
                None => output_open = false,
            },
            status = process.wait() => return Ended::Exited(status),
            Some(port) = &mut port => return Ended::Listening(port),
            _ = &mut deadline => return Ended::TimedOut,
            _ = cx.cancel.cancelled() => return Ended::Stopped,
        }
    }
}

async fn answer(
    cx: &ToolContext,
    process: Box<dyn Process>,
    mut output: EventStream<Vec<u8>>,
    text: String,
    ended: Ended,
) -> ToolOutput {
    match ended {
        Ended::Exited(status) => exited(text, &status),
        Ended::Listening(port) => {
            // A server's output is still read, or it could block on a full pipe.
            tokio::spawn(async move { while output.next().await.is_some() {} });
            cx.keep_server(process);
            ToolOutput {
                text: format!(
                    "{text}\n[running in the background, listening on port {port}; the preview shows it]"
                ),
                ok: true,
                port: Some(port),
                images: Vec::new(),
            }
        }
        Ended::TimedOut => {
            let _ = process.kill().await;
            failed(format!(
                "{text}\n[stopped: still running after {} s without opening a port]",
                cx.command_timeout.as_secs()
            ))
        }
        Ended::Stopped => {
            let _ = process.kill().await;
            failed(format!("{text}\n[stopped by the user]"))
        }
    }
}

fn failed(text: String) -> ToolOutput {
    ToolOutput {
        text,
        ok: false,
        port: None,
        images: Vec::new(),
    }
}

fn exited(output: String, status: &ExitStatus) -> ToolOutput {
    let end = match (&status.message, status.code, status.signal) {
        (Some(message), _, _) => format!("[{message}]"),
        (None, Some(code), _) => format!("[exit code: {code}]"),
        (None, None, Some(signal)) => format!("[killed by signal {signal}]"),
        (None, None, None) => "[ended]".to_owned(),
    };
    let text = if output.is_empty() {
        end
    } else if output.ends_with('\n') {
        format!("{output}{end}")
    } else {
        format!("{output}\n{end}")
    };
    ToolOutput {
        text,
        ok: status.success(),
        port: None,
        images: Vec::new(),
    }
}

/// The first port opened that was not open before the command started (a
/// port closed meanwhile may be opened again by the new server).
async fn new_port(mut events: EventStream<PortEvent>, mut already: BTreeSet<u16>) -> Option<u16> {
    while let Some(event) = events.next().await {
        match event {
            PortEvent::Opened { port } if !already.contains(&port) => return Some(port),
            PortEvent::Opened { .. } => {}
            PortEvent::Closed { port } => {
                already.remove(&port);
            }
        }
    }
    None
}

/// `text` cut to `max` characters by dropping its middle, which says how
/// much was dropped.
pub fn cap_middle(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let half = max / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!("{head}\n[… {} characters cut …]\n{tail}", count - 2 * half)
}

/// The open failures as the fix loop describes them to the model
/// (`runtime::build_result::report`), with the files they name.
pub async fn read_build_result(cx: &ToolContext) -> ToolOutput {
    let failures = (cx.build_results)();
    if failures.is_empty() {
        return ToolOutput::ok("No failures: the latest build and actions succeeded.");
    }
    let report = failure_report(cx.runtime.as_ref(), &failures).await;
    ToolOutput::ok(format!("{} failure(s):\n\n{report}", failures.len()))
}
