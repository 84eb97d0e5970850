//! Whether automatic fixes run: `[fix] enabled` is the server's own switch;
//! under it, a project's choice (a `SessionEvent::AutoFix`, stored with its
//! events) wins over the global setting of the settings panel (the `fix`
//! section of `settings.json`), which is on until switched off.

use serde_json::json;

use super::FixContext;
use crate::runtime::project::ProjectId;
use crate::runtime::session::SessionEvent;
use crate::server::llm::settings_file::{SettingsFile, SettingsFileError};
use crate::server::session::api::{ApiError, open_project};
use crate::server::state::AppState;

/// The section of `settings.json`.
const SECTION: &str = "fix";

/// Whether automatic fixes run, from the three switches.
pub fn effective(server: bool, project: Option<bool>, global: bool) -> bool {
    server && project.unwrap_or(global)
}

/// The global setting; on when never set or unreadable.
pub fn global(file: &SettingsFile) -> bool {
    file.load()
        .ok()
        .and_then(|s| s.other.get(SECTION)?.get("auto")?.as_bool())
        .unwrap_or(true)
}

pub fn set_global(file: &SettingsFile, enabled: bool) -> Result<(), SettingsFileError> {
    file.set_section(SECTION, json!({ "auto": enabled }))
}

/// Whether the loop `cx` may make attempts.
pub fn is_on(cx: &FixContext) -> bool {
    let project = cx.project.session.read(|s| s.auto_fix);
    effective(cx.config.enabled, project, global(cx.llm.settings_file()))
}

/// The project's own choice (the chat's switch).
pub async fn set_project(
    state: &AppState,
    project: &ProjectId,
    enabled: bool,
) -> Result<(), ApiError> {
    let handle = open_project(state, project).await?;
    handle.publish(SessionEvent::AutoFix { enabled });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_choice_wins_over_the_global_one_under_the_server_switch() {
        assert!(effective(true, None, true));
        assert!(!effective(true, None, false));
        assert!(effective(true, Some(true), false));
        assert!(!effective(true, Some(false), true));
        assert!(!effective(false, Some(true), true));
    }

    #[test]
    fn the_global_setting_is_kept_beside_the_llm_settings() {
        let dir = tempfile::tempdir().unwrap();
        let file = SettingsFile::in_dir(dir.path());
        assert!(global(&file), "on until switched off");
        set_global(&file, false).unwrap();
        assert!(!global(&file));
        let saved = file.load().unwrap();
        assert_eq!(saved.other["fix"]["auto"], false);
        set_global(&file, true).unwrap();
        assert!(global(&file));
    }
}
