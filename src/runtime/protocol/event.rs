//! The events the parser yields and the actions they carry. The serde
//! attributes give exactly the JSON Lines schema of `docs/protocol.md`, so
//! the same values go to the browser and out of `rivet parse`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::id::Id;
use super::recovery::Recovery;

/// Attributes a tag carried that the protocol does not know, kept as written.
pub type Attributes = BTreeMap<String, String>;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Prose shown to the person. How text is split into events carries no
    /// meaning.
    Text {
        text: String,
    },
    ArtifactOpen {
        id: Id,
        #[serde(flatten)]
        artifact: Box<Artifact>,
    },
    /// An action started; its content follows in deltas.
    ActionOpen {
        artifact_id: Id,
        action_id: Id,
        #[serde(flatten)]
        action: Box<ActionKind>,
        /// Set when the action slipped out of the bolt format.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        recovery: Option<Recovery>,
    },
    /// Content of the open action that arrived since the last delta.
    /// Concatenated, the deltas are the action's raw content; how it is split
    /// carries no meaning.
    ActionDelta {
        artifact_id: Id,
        action_id: Id,
        delta: String,
    },
    /// The action ended; `action.content` is its final content.
    ActionClose {
        artifact_id: Id,
        action_id: Id,
        #[serde(flatten)]
        action: Box<Action>,
    },
    ArtifactClose {
        id: Id,
    },
}

/// What an artifact's opening tag says besides its id.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Artifact {
    pub title: String,
    /// The artifact's own `type` attribute, if any.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Attributes::is_empty")]
    pub attributes: Attributes,
}

/// A complete action as the parser closed it. Validation (paths, truncation)
/// is a separate step: see `crate::runtime::action`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Action {
    #[serde(flatten)]
    pub kind: ActionKind,
    #[serde(default, skip_serializing_if = "Attributes::is_empty")]
    pub attributes: Attributes,
    /// The final content, after the rules of its kind (see `file_content`).
    pub content: String,
    /// The message ended before `</boltAction>`: the content is incomplete
    /// and must not be run as if it were whole.
    pub truncated: bool,
    /// What was wrong with the tag (a missing or invalid attribute, an
    /// unknown type). The action is delivered all the same, so the runner can
    /// report it.
    pub error: Option<String>,
    /// Set when the action slipped out of the bolt format: how it was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
}

/// What an action does, with the attributes that belong to its kind.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ActionKind {
    File {
        #[serde(default)]
        file_path: String,
    },
    Shell,
    Start,
    Build,
    Edit {
        #[serde(default)]
        file_path: String,
    },
    Supabase {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        operation: Option<SupabaseOperation>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_path: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        project_id: Option<String>,
    },
    /// Any other `type`, kept as the tag spelt it.
    #[serde(untagged)]
    Unknown {
        #[serde(rename = "type")]
        kind: String,
    },
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SupabaseOperation {
    Migration,
    Query,
}

/// Merges adjacent text events, and adjacent deltas of one action, into one:
/// how text and content are split carries no meaning, so this is the form to
/// compare or store.
pub fn merge_adjacent(events: impl IntoIterator<Item = Event>) -> Vec<Event> {
    let mut merged: Vec<Event> = Vec::new();
    for event in events {
        match (merged.last_mut(), event) {
            (Some(Event::Text { text }), Event::Text { text: more }) => text.push_str(&more),
            (
                Some(Event::ActionDelta {
                    action_id, delta, ..
                }),
                Event::ActionDelta {
                    action_id: id,
                    delta: more,
                    ..
                },
            ) if *action_id == id => delta.push_str(&more),
            (_, event) => merged.push(event),
        }
    }
    merged
}

impl ActionKind {
    /// The `type` string of the tag, as it appears in JSON.
    pub fn type_name(&self) -> &str {
        match self {
            ActionKind::File { .. } => "file",
            ActionKind::Shell => "shell",
            ActionKind::Start => "start",
            ActionKind::Build => "build",
            ActionKind::Edit { .. } => "edit",
            ActionKind::Supabase { .. } => "supabase",
            ActionKind::Unknown { kind } => kind,
        }
    }

    /// The project file the action writes or changes, if it names one.
    pub fn file_path(&self) -> Option<&str> {
        match self {
            ActionKind::File { file_path } | ActionKind::Edit { file_path } => Some(file_path),
            ActionKind::Supabase { file_path, .. } => file_path.as_deref(),
            _ => None,
        }
    }
}
