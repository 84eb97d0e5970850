//! What the IDE page (`ide.rs`) shares with its panes through Leptos
//! context. It has a module of its own so that the panes depend on it and
//! not on the page that lays them out, which depends on them.

use crate::runtime::project::ProjectId;

/// The project the page shows, from the `/p/{project}` path.
#[derive(Clone, Debug, PartialEq)]
pub struct CurrentProject(pub ProjectId);

/// The chat the chat pane shows, where the composer's messages go.
#[derive(Clone, Copy)]
pub struct OpenChat(pub leptos::prelude::RwSignal<crate::runtime::session::ChatId>);
