//! One answer: ask the model, feed its stream through the parser into the
//! session and the runner, and record how it ended. It runs on a task of its
//! own, so closing the tab does not stop it.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::conversation::Unfinished;
use super::project::ProjectHandle;
use super::saved::SavedAnswer;
use crate::runtime::llm::LlmError;
use crate::runtime::protocol::Parser;
use crate::runtime::session::{Message, MessageStatus, SessionEvent};
use crate::server::agent::as_actions;
use crate::server::llm::client::{ChatMessage, ChatOutcome, ChatRequest, Pace, chat};
use crate::server::llm::prompt::{
    ProjectFile, PromptContext, RuntimeDescription, TOOLS_INSTEAD, UserEdit,
};
use crate::server::llm::{LlmService, ResolvedLlm};
use path::AnswerPath;
use stream::Stream;

/// Files larger than this are listed by name only.
const LARGEST_PROMPT_FILE: u64 = 64 * 1024;

/// Where an answer's text goes: a new message, or the rest of an
/// interrupted one.
pub struct Answer {
    pub message_id: String,
    pub parser: Parser,
    /// Text already received (non-empty when continuing).
    pub text: String,
    /// The conversation to send, ending with the user's message.
    pub history: Vec<ChatMessage>,
}

/// Runs one answer to its end, on the path its project's runtime and its
/// mode give it.
pub async fn run(
    project: Arc<ProjectHandle>,
    llm: Arc<LlmService>,
    runtime_description: RuntimeDescription,
    answer: Answer,
    cancel: CancellationToken,
) {
    let plan = is_plan(&project, &answer.message_id);
    let path = path::for_answer(runtime_description, plan);
    run_on(project, llm, runtime_description, answer, cancel, path).await;
}

/// Runs one answer to its end on `path`.
async fn run_on(
    project: Arc<ProjectHandle>,
    llm: Arc<LlmService>,
    runtime_description: RuntimeDescription,
    answer: Answer,
    cancel: CancellationToken,
    path: &dyn AnswerPath,
) {
    let Answer {
        message_id,
        mut parser,
        text: earlier,
        history,
    } = answer;
    let continuing = !earlier.is_empty();
    let plan = is_plan(&project, &message_id);
    let publish = |event: SessionEvent| project.publish(event);
    let mut saved = SavedAnswer::new(&message_id, None, &earlier);

    let picked = project.conversation().model().map(str::to_owned);
    let llm_config = match llm.resolve_for_answer(picked.as_deref()).await {
        Ok(config) => config,
        Err(error) => {
            let end = (earlier.as_str(), parser, history);
            return finish_failed(&project, path, &message_id, &error, end, saved);
        }
    };
    record_model(&project, &mut saved, &message_id, &llm_config.model);
    let mut ctx = prompt_context(&project, runtime_description).await;
    ctx.rules = include_rules(&project, &llm, &message_id).await;
    ctx.plan = plan;
    let (base_url, model) = (llm_config.base_url.clone(), llm_config.model.clone());
    ctx.remind_format = llm.format_slips().needs_reminder(&base_url, &model);
    // A continued answer keeps to its text's format: tags.
    let mut tools = path.takes_tools()
        && !continuing
        && llm.format_slips().use_tools(
            llm.action_format(&llm_config.provider, &model),
            &base_url,
            &model,
        );
    ctx.tools = tools;
    let (sendable, images_left_out) = sendable(&llm, &llm_config, &history).await;
    let ask = super::context::Ask {
        llm: &llm_config,
        window: llm.context_window(&llm_config).await,
        history: &sendable,
        continuing: continuing.then_some(earlier.as_str()),
        message_id: &message_id,
    };
    let fitted = super::context::fit(&project, ask, ctx, &cancel).await;
    let price = llm.price(&llm_config).await;
    let mut system = fitted.system;
    let mut stream = Stream {
        project: &project,
        message_id: &message_id,
        parser: &mut parser,
        saved: &mut saved,
        path,
        given: Vec::new(),
        price,
    };
    if images_left_out > 0 {
        stream.notice(images_left_out_notice(&model, images_left_out));
    }
    let outcome = loop {
        let mut request = ChatRequest::new(system.clone(), fitted.messages.clone());
        request.continue_from = continuing.then(|| earlier.clone());
        request.pace = store_pace(&project);
        if tools {
            request.tools = as_actions::specs();
        }
        let outcome = chat(&llm_config, request, cancel.clone(), |e| stream.take(e)).await;
        // A provider that takes no tools: the same answer asked in tags.
        if tools && outcome.text.is_empty() && tools_refused_in(&outcome) {
            tools = false;
            llm.format_slips().record_tools_refused(&base_url, &model);
            system = system.replacen(TOOLS_INSTEAD, "", 1);
            stream.notice(format!(
                "{model} takes no tools; asking for the answer in tags."
            ));
            continue;
        }
        break outcome;
    };
    let given = std::mem::take(&mut stream.given);

    let text = earlier + &outcome.text;
    // The history shows the model what its calls did, as tags.
    let recorded = if given.is_empty() {
        text.clone()
    } else {
        format!("{text}\n\n{}", as_actions::as_tags(&given))
    };
    match outcome.result {
        Ok(finish_reason) => {
            path.end(&project, &message_id, parser, false);
            let format = project.session.read(|s| s.answer_format(&message_id));
            llm.format_slips().record(&base_url, &model, format);
            record_answer(&project, history, &recorded);
            let finish_reason = Some(finish_reason);
            let status = MessageStatus::Complete;
            saved.finish(&project.session, &text, &status, finish_reason);
            publish(SessionEvent::MessageFinished {
                message_id,
                status,
                finish_reason,
            });
        }
        Err(LlmError::Cancelled) => {
            path.end(&project, &message_id, parser, true);
            record_answer(&project, history, &text);
            let status = MessageStatus::Stopped;
            saved.finish(&project.session, &text, &status, None);
            publish(SessionEvent::MessageFinished {
                message_id,
                status,
                finish_reason: None,
            });
        }
        Err(error) => {
            finish_failed(
                &project,
                path,
                &message_id,
                &error,
                (&text, parser, history),
                saved,
            );
        }
    }
}

/// An answer that ended on an error: with no text it failed; with some it
/// was interrupted and can be continued, so its parser is kept.
fn finish_failed(
    project: &ProjectHandle,
    path: &dyn AnswerPath,
    message_id: &str,
    error: &LlmError,
    (text, parser, history): (&str, Parser, Vec<ChatMessage>),
    saved: SavedAnswer,
) {
    let status = if text.is_empty() {
        MessageStatus::Failed {
            error: error.to_string(),
        }
    } else {
        MessageStatus::Interrupted {
            reason: error.to_string(),
        }
    };
    if text.is_empty() {
        path.end(project, message_id, parser, false);
    } else {
        project.conversation().set_unfinished(Some(Unfinished {
            message_id: message_id.to_owned(),
            parser,
            text: text.to_owned(),
            history,
        }));
    }
    saved.finish(&project.session, text, &status, None);
    project.publish(SessionEvent::MessageFinished {
        message_id: message_id.to_owned(),
        status,
        finish_reason: None,
    });
}

/// Whether the request failed because the provider takes no tools.
fn tools_refused_in(outcome: &ChatOutcome) -> bool {
    let error = outcome.result.as_ref().err();
    error.is_some_and(super::agent::tools_refused)
}

/// Ends the parser of an answer that will not be continued, whichever path
/// it took: a relay still open to the browser is ended, held-back text is
/// shown, and an action still open is closed as truncated (the runner
/// reports it and does not run it).
pub fn close_parser(project: &ProjectHandle, message_id: &str, parser: Parser) {
    project.browser.end(message_id, false);
    let path: &dyn AnswerPath = if is_plan(project, message_id) {
        &path::Planned
    } else {
        &path::ServerRunner
    };
    path.end(project, message_id, parser, false);
}

fn record_answer(project: &ProjectHandle, mut history: Vec<ChatMessage>, text: &str) {
    history.push(ChatMessage::assistant(text));
    project.conversation().set_history(history);
}

/// The history as `llm`'s model may be sent it: without images when it
/// takes none, and how many of the question's images were left out.
pub async fn sendable<'a>(
    llm: &LlmService,
    resolved: &ResolvedLlm,
    history: &'a [ChatMessage],
) -> (std::borrow::Cow<'a, [ChatMessage]>, usize) {
    let has_images = history.iter().any(|m| !m.images.is_empty());
    if !has_images || llm.takes_images(resolved).await {
        return (std::borrow::Cow::Borrowed(history), 0);
    }
    let (messages, lost) = crate::server::llm::budget::fit::without_images(history);
    (std::borrow::Cow::Owned(messages), lost)
}

/// What the answer says when its question's images were not sent.
pub fn images_left_out_notice(model: &str, count: usize) -> String {
    let images = if count == 1 {
        "its image".to_owned()
    } else {
        format!("its {count} images")
    };
    format!(
        "{model} does not take images, so the message was sent without {images}. \
         Pick a model that takes images, or set [llm] vision if this one does."
    )
}

/// Whether `message_id` is an answer asked in Plan mode (its actions are
/// shown, never run).
pub fn is_plan(project: &ProjectHandle, message_id: &str) -> bool {
    project
        .session
        .read(|s| s.message(message_id).is_some_and(|m| m.plan))
}

/// Starts a new assistant message answering `history`'s last user message;
/// with `plan`, an answer of Plan mode.
pub fn new_answer(
    project: &ProjectHandle,
    history: Vec<ChatMessage>,
    asked: &str,
    plan: bool,
) -> Answer {
    let (message_id, chat) = {
        let mut conversation = project.conversation();
        let id = conversation.next_id();
        conversation.record_asked(id.clone(), asked.to_owned());
        (id, conversation.chat().clone())
    };
    project
        .answer_before
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clear();
    project.runner.begin_turn();
    SavedAnswer::new(&message_id, Some(asked.to_owned()), "").save(&project.session);
    let mut message = Message::assistant(message_id.clone());
    message.plan = plan;
    message.chat = chat;
    project.publish(SessionEvent::MessageAdded { message });
    Answer {
        parser: Parser::new(message_id.clone()),
        message_id,
        text: String::new(),
        history,
    }
}

/// The answer reads on from the provider once the store's writer has room.
fn store_pace(project: &ProjectHandle) -> Pace {
    match project.session.room() {
        Some(room) => Pace::new(move || {
            let room = room.clone();
            Box::pin(async move { room.wait().await })
        }),
        None => Pace::default(),
    }
}

/// The files and the person's edits, for the system prompt.
async fn prompt_context(project: &ProjectHandle, runtime: RuntimeDescription) -> PromptContext {
    let entries = project.runtime.list_tree("").await.unwrap_or_default();
    let mut files = Vec::new();
    for entry in entries {
        // The rules files are in the prompt's rules section.
        let skip = entry.kind != crate::runtime::host::EntryKind::File
            || crate::runtime::tree::is_inside_skipped_dir(&entry.path)
            || entry.path == "package-lock.json"
            || super::rules::is_rules_file(&entry.path);
        if skip {
            continue;
        }
        let content = if entry.size <= LARGEST_PROMPT_FILE {
            match project.runtime.read_file(&entry.path).await {
                Ok(bytes) => String::from_utf8(bytes).unwrap_or_default(),
                Err(_) => String::new(),
            }
        } else {
            String::new()
        };
        files.push(ProjectFile {
            path: entry.path,
            content,
        });
    }
    let mut edits = project.conversation().take_user_edits();
    edits.retain(|path, _| !super::rules::is_rules_file(path));
    let relevant = relevant_paths(project, edits.keys().cloned().collect());
    let user_edits = edits
        .into_iter()
        .map(|(path, (before, after))| UserEdit {
            path,
            before: before.unwrap_or_default(),
            after,
        })
        .collect();
    PromptContext {
        runtime,
        files,
        user_edits,
        // `context::fit` sets the budget the window leaves.
        token_budget: 0,
        relevant,
        summary: None,
        // `context::fit` decides from the window.
        compact: false,
        remind_format: false,
        tools: false,
        rules: String::new(),
        plan: false,
    }
}

/// The model that answers `message_id`: stored with the answer and shown.
pub fn record_model(
    project: &ProjectHandle,
    saved: &mut SavedAnswer,
    message_id: &str,
    model: &str,
) {
    saved.set_model(model);
    project.publish(SessionEvent::AnswerModel {
        message_id: message_id.to_owned(),
        model: model.to_owned(),
    });
}

/// The user's rules for the answer `message_id`, as the prompt's section,
/// with the names of the app's secrets and, in a chat opened beside the
/// first, the note it started from (Build, fix and Agent requests alike);
/// the answer records where the rules came from.
pub async fn include_rules(project: &ProjectHandle, llm: &LlmService, message_id: &str) -> String {
    let app = super::rules::app_rules(llm.settings_file());
    let rules = super::rules::gather(&*project.runtime, &app).await;
    if !rules.is_empty() {
        project.publish(SessionEvent::RulesIncluded {
            message_id: message_id.to_owned(),
            sources: rules.sources,
        });
    }
    let secrets = project.runtime.secret_names().await;
    rules.section + &super::rules::secrets_note(&secrets) + &chat_opening(project)
}

/// A chat opened beside the first one starts from a note about the
/// project, for as long as it lasts.
fn chat_opening(project: &ProjectHandle) -> String {
    let chat = project.conversation().chat().clone();
    let opening = super::chats::opening_of(project, &chat);
    if opening.is_empty() {
        return opening;
    }
    format!("\n\n# This chat\n\n{opening}\n")
}

/// Files the latest build results name, then those the person edited,
/// then those the latest answers wrote (newest first).
fn relevant_paths(project: &ProjectHandle, edited: Vec<String>) -> Vec<String> {
    use crate::runtime::protocol::ActionKind;
    let (named, written): (Vec<String>, Vec<String>) = project.session.read(|state| {
        let named = state
            .build_results
            .iter()
            .rev()
            .take(3)
            .flat_map(|r| r.files.iter().cloned())
            .collect();
        let written = state
            .artifacts
            .iter()
            .rev()
            .take(3)
            .flat_map(|a| a.actions.iter().rev())
            .filter_map(|action| match &action.kind {
                ActionKind::File { file_path } | ActionKind::Edit { file_path } => {
                    Some(file_path.clone())
                }
                _ => None,
            })
            .collect();
        (named, written)
    });
    let changed: Vec<String> = edited.into_iter().chain(written).collect();
    crate::server::llm::budget::fit::relevant_first(&named, &changed)
}

mod path;
mod stream;

#[cfg(test)]
mod tests;
