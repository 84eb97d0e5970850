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

/// What the next message will carry besides its text: the images the
/// composer took and the elements selected in the preview (the preview
/// adds to it, the composer shows and sends it).
#[derive(Clone, Copy)]
pub struct Attaching {
    pub images: leptos::prelude::RwSignal<Vec<crate::runtime::attachment::ImageRef>>,
    pub selections: leptos::prelude::RwSignal<Vec<crate::runtime::selection::ElementSelection>>,
    /// Whether the preview's Select mode is on.
    pub selecting: leptos::prelude::RwSignal<bool>,
    /// A message to send now with what is attached (the composer's, or an
    /// in-place edit the model has to make); the attachments bar sends it,
    /// so the code that sends attachments stays out of the first load.
    pub ask: leptos::prelude::RwSignal<Option<Outgoing>>,
    /// Whether such a message is on its way.
    pub sending: leptos::prelude::RwSignal<bool>,
    /// Such a message the server refused, and its text (for the box).
    pub refused: leptos::prelude::RwSignal<Option<(crate::app::error::RivetError, String)>>,
}

/// A message to send with what is attached.
#[derive(Clone, Debug, PartialEq)]
pub struct Outgoing {
    pub text: String,
    /// The model picked for it, if any.
    pub model: Option<String>,
}

impl Attaching {
    pub fn new() -> Attaching {
        use leptos::prelude::RwSignal;
        Attaching {
            images: RwSignal::new(Vec::new()),
            selections: RwSignal::new(Vec::new()),
            selecting: RwSignal::new(false),
            ask: RwSignal::new(None),
            sending: RwSignal::new(false),
            refused: RwSignal::new(None),
        }
    }

    /// Whether the next message carries nothing yet.
    pub fn is_empty(&self) -> bool {
        use leptos::prelude::WithUntracked;
        self.images.with_untracked(Vec::is_empty) && self.selections.with_untracked(Vec::is_empty)
    }

    /// Gives a refused message's attachments back.
    pub fn give_back(&self, attachments: crate::runtime::attachment::Attachments) {
        use leptos::prelude::Set;
        self.images.set(attachments.images);
        self.selections.set(attachments.selections);
    }

    /// What to send, and empties it.
    pub fn take(&self) -> crate::runtime::attachment::Attachments {
        use leptos::prelude::{Update, WithUntracked};
        let attachments = crate::runtime::attachment::Attachments {
            images: self.images.with_untracked(Clone::clone),
            selections: self.selections.with_untracked(Clone::clone),
        };
        self.images.update(Vec::clear);
        self.selections.update(Vec::clear);
        attachments
    }
}
