//! Rules the person gives the model once: the project's `AGENTS.md` (and
//! `.rivet/rules.md`) and the app-wide rules of the settings panel (the
//! `rules` section of `settings.json`). They go into the system prompt of
//! every request, in every mode (Build, fix attempts, Agent), counted in
//! the context budget like the rest of the prompt, and the answer records
//! where they came from (`SessionEvent::RulesIncluded`).

use serde_json::json;

use crate::runtime::action::ProjectPath;
use crate::runtime::host::{Runtime, checked_path};
use crate::runtime::project::ProjectId;
use crate::runtime::session::RulesSettings;
use crate::server::llm::settings_file::{SettingsFile, SettingsFileError};
use crate::server::session::api::{self, ApiError};
use crate::server::state::AppState;

/// The section of `settings.json`.
const SECTION: &str = "rules";

/// The project's rules files, read in this order; the settings panel edits
/// the first that exists, else the first.
pub const PROJECT_FILES: [&str; 2] = ["AGENTS.md", ".rivet/rules.md"];

/// The name the app-wide rules go by in an answer's record.
pub const APP_SOURCE: &str = "settings";

/// Rules longer than this (per source) are cut, saying so: they are meant
/// to be a page, not a manual, and every request carries them.
pub const MAX_RULES_BYTES: usize = 16 * 1024;

/// The rules for one request.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Rules {
    /// Where they came from: file paths, then [`APP_SOURCE`].
    pub sources: Vec<String>,
    /// The prompt's section ("" when there are no rules).
    pub section: String,
}

impl Rules {
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

/// The rules of the project `runtime` serves and the app-wide ones.
pub async fn gather(runtime: &dyn Runtime, app: &str) -> Rules {
    let mut parts = Vec::new();
    for path in PROJECT_FILES {
        if let Ok(bytes) = runtime.read_file(path).await {
            parts.push((
                path.to_owned(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    parts.push((APP_SOURCE.to_owned(), app.to_owned()));
    parts.retain(|(_, text)| !text.trim().is_empty());
    render(parts)
}

fn render(parts: Vec<(String, String)>) -> Rules {
    if parts.is_empty() {
        return Rules::default();
    }
    let mut section = String::from(
        "\n## The user's rules\n\nThe user set these rules for this project; follow them in every \
         answer unless the user's message says otherwise.\n",
    );
    let mut sources = Vec::with_capacity(parts.len());
    for (source, text) in parts {
        let heading = if source == APP_SOURCE {
            "From the settings (every project)".to_owned()
        } else {
            format!("From {source}")
        };
        section.push_str(&format!("\n### {heading}\n\n{}\n", capped(text.trim())));
        sources.push(source);
    }
    Rules { sources, section }
}

/// `text`, cut at [`MAX_RULES_BYTES`] on a character boundary with a note.
fn capped(text: &str) -> String {
    if text.len() <= MAX_RULES_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_RULES_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[… {} more bytes of rules left out]",
        &text[..end],
        text.len() - end
    )
}

/// The prompt's note on the app's secrets: their names, so the model uses
/// them (`process.env.NAME`) instead of asking for values or writing
/// placeholders; never their values, which the model never sees.
pub fn secrets_note(names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    format!(
        "\n## The app's secrets\n\nThe user set these environment variables for the app's \
         processes (commands, dev servers, the app's server code): {}. Read them from the \
         environment (for example `process.env.{}`); their values are hidden from you. Never \
         write a value for them into a file, and never print them.\n",
        names.join(", "),
        names[0]
    )
}

/// Whether `path` is one of the project's rules files (the prompt's file
/// list leaves them out: they are in the rules section).
pub fn is_rules_file(path: &str) -> bool {
    PROJECT_FILES.contains(&path)
}

/// The app-wide rules; none when never set or unreadable.
pub fn app_rules(file: &SettingsFile) -> String {
    file.load()
        .ok()
        .and_then(|s| Some(s.other.get(SECTION)?.get("app")?.as_str()?.to_owned()))
        .unwrap_or_default()
}

pub fn set_app_rules(file: &SettingsFile, text: &str) -> Result<(), SettingsFileError> {
    file.set_section(SECTION, json!({ "app": text }))
}

/// The rules as the settings panel shows them: the app-wide ones and, with
/// a project, its rules file.
pub async fn settings(
    state: &AppState,
    project: Option<&ProjectId>,
) -> Result<RulesSettings, ApiError> {
    let app = app_rules(state.llm.settings_file());
    let Some(project) = project else {
        return Ok(RulesSettings {
            app,
            project_path: None,
            project: None,
        });
    };
    let (path, text) = project_rules(state, project).await?;
    Ok(RulesSettings {
        app,
        project_path: Some(path.as_str().to_owned()),
        project: Some(text),
    })
}

/// The project's rules file (the first of [`PROJECT_FILES`] that exists,
/// else `AGENTS.md`) and its text.
async fn project_rules(
    state: &AppState,
    project: &ProjectId,
) -> Result<(ProjectPath, String), ApiError> {
    for path in PROJECT_FILES {
        let path = checked_path(path)?;
        match api::read_bytes(state, project, &path).await {
            Ok(bytes) => return Ok((path, String::from_utf8_lossy(&bytes).into_owned())),
            Err(ApiError::Runtime(_)) => continue,
            Err(other) => return Err(other),
        }
    }
    Ok((checked_path(PROJECT_FILES[0])?, String::new()))
}

/// Saves the settings panel's rules: the app-wide ones, and the project's
/// file when given (written like any edit of the person's).
pub async fn save(
    state: &AppState,
    app: &str,
    project: Option<(&ProjectId, String)>,
) -> Result<RulesSettings, ApiError> {
    set_app_rules(state.llm.settings_file(), app)?;
    let Some((id, text)) = project else {
        return settings(state, None).await;
    };
    let (path, before) = project_rules(state, id).await?;
    if before != text {
        api::write_file(state, id, &path, text.into_bytes()).await?;
    }
    settings(state, Some(id)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_name_their_sources_in_order_and_skip_blank_ones() {
        let rules = render(vec![
            ("AGENTS.md".into(), "Use TypeScript.".into()),
            (APP_SOURCE.into(), "Answer briefly.".into()),
        ]);
        assert_eq!(rules.sources, ["AGENTS.md", "settings"]);
        let agents = rules.section.find("Use TypeScript.").unwrap();
        let app = rules.section.find("Answer briefly.").unwrap();
        assert!(agents < app);
        assert!(rules.section.contains("### From AGENTS.md"));
        assert!(render(vec![]).is_empty());
        assert_eq!(render(vec![]).section, "");
    }

    #[test]
    fn rules_past_the_limit_are_cut_on_a_character_with_a_note() {
        let long = "é".repeat(MAX_RULES_BYTES);
        let cut = capped(&long);
        assert!(cut.len() < long.len());
        assert!(cut.ends_with(&format!(
            "[… {} more bytes of rules left out]",
            long.len() - MAX_RULES_BYTES
        )));
        assert_eq!(capped("short"), "short");
    }

    #[test]
    fn app_rules_are_kept_in_the_settings_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = SettingsFile::in_dir(dir.path());
        assert_eq!(app_rules(&file), "");
        set_app_rules(&file, "Use pnpm.").unwrap();
        assert_eq!(app_rules(&file), "Use pnpm.");
    }
}
