//! `rivet ask`: one question, the answer streamed to stdout, with the IDE's
//! configuration and system prompt. For scripts, and for checking that a
//! provider works.
//!
//! Output: the answer's text as it arrives (progress and usage on stderr);
//! with `--raw` exactly the model's text and nothing else; with `--events`
//! the bolt parser's events as JSON Lines, as `rivet parse` writes them.
//!
//! Exit status: 0 when the answer is complete, 1 when the request failed or
//! the stream was cut (what arrived is printed first), 3 when the answer
//! still hit the length limit after the continuations, 130 when stopped
//! with Ctrl-C.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::budget::fit::{Window, fit_system};
use super::budget::{PER_MESSAGE, estimate_text};
use super::client::{ChatMessage, ChatRequest, chat};
use super::prompt::{ProjectFile, PromptContext, RuntimeDescription, system_prompt};
use super::service::LlmService;
use super::settings::Layer;
use crate::runtime::llm::{FinishReason, LlmError, LlmEvent};
use crate::runtime::protocol::{Event, Parser};
use crate::server::config::Config;

#[derive(Debug, clap::Args)]
pub struct AskArgs {
    /// Provider preset (openai, groq, ollama, demo…); overrides the settings.
    #[arg(long)]
    pub provider: Option<String>,
    /// Base URL of an OpenAI-compatible API; alone, it means a custom provider.
    #[arg(long)]
    pub base_url: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    /// API key (prefer the environment: command lines are visible to other users).
    #[arg(long)]
    pub api_key: Option<String>,
    /// Print exactly the model's text (continuations spliced), nothing else.
    #[arg(long, conflicts_with = "events")]
    pub raw: bool,
    /// Print the bolt parser's events as JSON Lines, as `rivet parse` does.
    #[arg(long)]
    pub events: bool,
    /// Include this directory's files in the system prompt, as the IDE does
    /// for a project.
    #[arg(long)]
    pub project: Option<PathBuf>,
    /// The question; several words are joined with spaces.
    #[arg(required = true)]
    pub prompt: Vec<String>,
}

/// Exit status for an answer cut by the length limit.
const INCOMPLETE: u8 = 3;
/// Exit status after Ctrl-C, as shells report SIGINT.
const INTERRUPTED: u8 = 130;
/// Token budget for project files in the prompt.
const PROJECT_BUDGET: usize = 24_000;

pub async fn run(args: AskArgs, config: Config) -> anyhow::Result<ExitCode> {
    let service = LlmService::new(Arc::new(config.clone()));
    let command_line = Layer::command_line(
        args.provider.as_deref(),
        args.base_url.as_deref(),
        args.model.as_deref(),
        args.api_key.as_deref(),
    );
    let llm = match service.ready(service.resolve_with(command_line)).await {
        Ok(llm) => llm,
        Err(e) => {
            eprintln!("rivet: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    if llm.is_demo() && !args.raw {
        eprintln!("rivet: demo provider: replayed answers, not a live model");
    }
    let files = match &args.project {
        Some(dir) => read_project(dir)?,
        None => Vec::new(),
    };
    let ctx = PromptContext {
        runtime: RuntimeDescription::from_config(&config),
        files,
        user_edits: Vec::new(),
        token_budget: PROJECT_BUDGET,
        relevant: Vec::new(),
        summary: None,
        compact: false,
        remind_format: false,
        tools: false,
        rules: String::new(),
        plan: false,
    };
    let question = args.prompt.join(" ");
    let system = match fitted_system(&ctx, &question, service.context_window(&llm).await) {
        Ok(system) => system,
        Err(e) => {
            eprintln!("rivet: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let request = ChatRequest::new(system, vec![ChatMessage::user(question)]);
    let cancel = CancellationToken::new();
    tokio::spawn({
        let cancel = cancel.clone();
        async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        }
    });
    let raw = args.raw;
    let mut output = if args.events {
        Output::Events(Box::new(Parser::new(MESSAGE_ID)))
    } else {
        Output::Text
    };
    let outcome = chat(&llm, request, cancel, |event| {
        output.show(&event);
        print_progress(&event, raw);
    })
    .await;
    match output {
        Output::Events(parser) => write_events(parser.finish()),
        Output::Text if !raw && !outcome.text.is_empty() && !outcome.text.ends_with('\n') => {
            println!()
        }
        Output::Text => {}
    }
    Ok(match outcome.result {
        Ok(FinishReason::Length) => {
            eprintln!(
                "rivet: the answer is incomplete: it reached the length limit after {} continuations",
                outcome.continuations
            );
            ExitCode::from(INCOMPLETE)
        }
        Ok(_) => ExitCode::SUCCESS,
        Err(LlmError::Cancelled) => ExitCode::from(INTERRUPTED),
        Err(_) => ExitCode::FAILURE,
    })
}

/// A question that cannot fit the model's context window.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "the question does not fit the model's context window: the request would be about \
     {needed} tokens, and the window of {window} tokens leaves {limit} beside the answer's \
     room; shorten the question (or set [llm] context_tokens if the window is larger)"
)]
pub struct TooLong {
    pub needed: u32,
    pub limit: u32,
    pub window: u32,
}

/// The system prompt for `question`, its project files cut to what the
/// window leaves (`budget::fit::fit_system`); an error when even the
/// question and the prompt without files are over the window.
pub fn fitted_system(
    ctx: &PromptContext,
    question: &str,
    window: Window,
) -> Result<String, TooLong> {
    let limit = window.prompt_limit();
    let others = PER_MESSAGE + estimate_text(question);
    let system = fit_system(limit, others, |budget| {
        system_prompt(&PromptContext {
            token_budget: budget.min(PROJECT_BUDGET),
            compact: ctx.compact || window.wants_compact_prompt(),
            ..ctx.clone()
        })
    });
    let needed = others + PER_MESSAGE + estimate_text(&system);
    if needed > limit {
        return Err(TooLong {
            needed,
            limit,
            window: window.context_tokens,
        });
    }
    Ok(system)
}

/// The message id given to the parser, as `rivet parse` does by default.
const MESSAGE_ID: &str = "message";

/// What goes to stdout.
enum Output {
    /// The answer's text.
    Text,
    /// The parser's events for it, as JSON Lines.
    Events(Box<Parser>),
}

impl Output {
    fn show(&mut self, event: &LlmEvent) {
        let LlmEvent::Delta { text } = event else {
            return;
        };
        match self {
            Output::Text => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
            }
            Output::Events(parser) => write_events(parser.push(text)),
        }
    }
}

fn write_events(events: impl IntoIterator<Item = Event>) {
    let mut out = std::io::stdout().lock();
    for event in events {
        let _ = serde_json::to_writer(&mut out, &event);
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

/// Progress (unless `raw`) and errors, to stderr.
fn print_progress(event: &LlmEvent, raw: bool) {
    match event {
        LlmEvent::Delta { .. } => {}
        LlmEvent::Failed { error } => {
            // The partial answer on stdout ends first, so the message is not glued to it.
            let _ = std::io::stdout().flush();
            eprintln!("\nrivet: {error}");
        }
        _ if raw => {}
        LlmEvent::Usage(u) => eprintln!(
            "rivet: {} prompt + {} completion = {} tokens",
            u.prompt_tokens, u.completion_tokens, u.total_tokens
        ),
        LlmEvent::Continuing { attempt } => {
            eprintln!("\nrivet: length limit reached; continuing ({attempt})")
        }
        LlmEvent::Retrying {
            attempt,
            delay_ms,
            reason,
        } => eprintln!("rivet: {reason}; retrying in {delay_ms} ms (attempt {attempt})"),
        LlmEvent::ToolCalls { calls } => {
            for call in calls {
                eprintln!("rivet: tool call {}({})", call.name, call.arguments);
            }
        }
        LlmEvent::Finished { .. } => {}
    }
}

/// The text files of a project directory, skipping the folders the IDE never
/// looks into (`runtime::tree`: dependencies, version control, build output).
fn read_project(root: &Path) -> anyhow::Result<Vec<ProjectFile>> {
    const MAX_FILES: usize = 500;
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)?.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                if !crate::runtime::tree::is_skipped_dir(&entry.file_name().to_string_lossy()) {
                    dirs.push(path);
                }
            } else if kind.is_file() && files.len() < MAX_FILES {
                // Binary files are not shown to the model.
                if let Ok(content) = std::fs::read_to_string(&path) {
                    let relative = path.strip_prefix(root).unwrap_or(&path);
                    files.push(ProjectFile {
                        path: relative.to_string_lossy().into_owned(),
                        content,
                    });
                }
            }
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(content_bytes: usize) -> PromptContext {
        PromptContext {
            runtime: RuntimeDescription::from_config(&Config::defaults()),
            files: vec![ProjectFile {
                path: "src/big.js".into(),
                content: format!("// {}\n", "x".repeat(content_bytes)),
            }],
            user_edits: Vec::new(),
            token_budget: PROJECT_BUDGET,
            relevant: Vec::new(),
            summary: None,
            compact: false,
            remind_format: false,
            tools: false,
            rules: String::new(),
            plan: false,
        }
    }

    #[test]
    fn a_question_over_the_window_is_refused() {
        let window = Window::new(4096, None);
        let error = fitted_system(&project(10), &"why ".repeat(4000), window).unwrap_err();
        assert_eq!(error.window, 4096);
        assert_eq!(error.limit, window.prompt_limit());
        assert!(error.needed > error.limit);
        assert!(error.to_string().contains("does not fit"), "{error}");
    }

    #[test]
    fn project_files_are_cut_to_what_the_window_leaves() {
        let window = Window::new(4096, None);
        let question = "build a todo app";
        let system = fitted_system(&project(40_000), question, window).unwrap();
        let needed = 2 * PER_MESSAGE + estimate_text(&system) + estimate_text(question);
        assert!(needed <= window.prompt_limit(), "{needed}");
        assert!(!system.contains(&"x".repeat(40_000)));
        // A large window takes the file whole.
        let whole = fitted_system(&project(4000), question, Window::new(128_000, None)).unwrap();
        assert!(whole.contains(&"x".repeat(4000)));
    }

    #[test]
    fn a_window_of_8k_or_less_gets_the_compact_prompt() {
        let question = "build a todo app";
        let small = fitted_system(&project(10), question, Window::new(8192, None)).unwrap();
        let large = fitted_system(&project(10), question, Window::new(8193, None)).unwrap();
        assert!(
            small.starts_with("You build web apps inside Rivet"),
            "{small}"
        );
        assert!(large.starts_with("You build and change web applications"));
        assert!(small.len() < large.len());
    }
}
