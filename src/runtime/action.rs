//! The action layer: an [`Action`] as the parser delivered it becomes a
//! [`ValidatedAction`] the runner may carry out, or a typed [`ActionError`]
//! it reports. Edits are parsed here too, and applied by [`apply_edit`].

mod edit;

pub use crate::runtime::path::{PathError, ProjectPath};
pub use edit::{EditBlock, EditError, apply_blocks, apply_edit, parse_edit_blocks, replace};

use serde::{Deserialize, Serialize};

use crate::runtime::protocol::{Action, ActionKind, Id, SupabaseOperation};

/// An action across the whole session: action ids are unique only within
/// their message.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ActionRef {
    pub message_id: String,
    pub action_id: Id,
}

/// An action that is complete and whose paths stay inside the project.
#[derive(Clone, Debug, PartialEq)]
pub enum ValidatedAction {
    /// Write `content` to `path`, creating directories as needed.
    WriteFile { path: ProjectPath, content: String },
    /// Apply SEARCH/REPLACE blocks to the file at `path`.
    Edit {
        path: ProjectPath,
        blocks: Vec<EditBlock>,
    },
    /// Run a command and wait for it.
    Shell { command: String },
    /// Start a long-running command (a dev server).
    Start { command: String },
    /// Run a build command and wait for it.
    Build { command: String },
    Supabase {
        operation: SupabaseOperation,
        path: Option<ProjectPath>,
        project_id: Option<String>,
        sql: String,
    },
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ActionError {
    #[error("the {kind} action was cut off before </boltAction>; it was not run")]
    Truncated { kind: String },
    #[error("unknown action type {0:?}")]
    UnknownType(String),
    #[error("invalid {kind} action: {message}")]
    Invalid { kind: String, message: String },
    #[error("the {kind} action has no command")]
    EmptyCommand { kind: String },
    #[error("invalid path {path:?}: {reason}")]
    Path { path: String, reason: PathError },
    #[error("edit of {path}: {source}")]
    Edit {
        path: String,
        #[source]
        source: EditError,
    },
}

impl TryFrom<Action> for ValidatedAction {
    type Error = ActionError;

    fn try_from(action: Action) -> Result<ValidatedAction, ActionError> {
        validate(action)
    }
}

/// Checks an action before it runs: a truncated action, one the parser
/// flagged, an unknown type, an empty command or a path that leaves the
/// project is an error.
pub fn validate(action: Action) -> Result<ValidatedAction, ActionError> {
    let kind = action.kind.type_name().to_owned();
    if action.truncated {
        return Err(ActionError::Truncated { kind });
    }
    if let ActionKind::Unknown { kind } = action.kind {
        return Err(ActionError::UnknownType(kind));
    }
    if let Some(message) = action.error {
        return Err(ActionError::Invalid { kind, message });
    }
    let command = |content: String| {
        if content.trim().is_empty() {
            Err(ActionError::EmptyCommand { kind: kind.clone() })
        } else {
            Ok(content)
        }
    };
    Ok(match action.kind {
        ActionKind::File { file_path } => ValidatedAction::WriteFile {
            path: project_path(&file_path)?,
            content: action.content,
        },
        ActionKind::Edit { file_path } => {
            let path = project_path(&file_path)?;
            let blocks =
                parse_edit_blocks(&action.content).map_err(|source| ActionError::Edit {
                    path: file_path,
                    source,
                })?;
            ValidatedAction::Edit { path, blocks }
        }
        ActionKind::Shell => ValidatedAction::Shell {
            command: command(action.content)?,
        },
        ActionKind::Start => ValidatedAction::Start {
            command: command(action.content)?,
        },
        ActionKind::Build => ValidatedAction::Build {
            command: command(action.content)?,
        },
        ActionKind::Supabase {
            operation,
            file_path,
            project_id,
        } => ValidatedAction::Supabase {
            operation: operation.ok_or_else(|| ActionError::Invalid {
                kind: kind.clone(),
                message: "no operation".to_owned(),
            })?,
            path: file_path.as_deref().map(project_path).transpose()?,
            project_id,
            sql: action.content,
        },
        ActionKind::Unknown { kind } => return Err(ActionError::UnknownType(kind)),
    })
}

fn project_path(path: &str) -> Result<ProjectPath, ActionError> {
    ProjectPath::parse(path).map_err(|reason| ActionError::Path {
        path: path.to_owned(),
        reason,
    })
}

#[cfg(test)]
mod tests;
