//! The server functions of "point at it": an element's text the person
//! changed in the preview, written to the project's source without the
//! model when the old text is in exactly one place.

use leptos::prelude::*;

use super::{ProjectId, RivetError};
pub use crate::runtime::selection::TextEdit;

/// Replaces `old_text` with `new_text` where it occurs exactly once in the
/// project's source files, as the person's own edit; [`TextEdit::Ambiguous`]
/// (and nothing written) when it occurs nowhere or more than once. Fails
/// with `ErrorCode::Busy` while an answer streams.
#[server(endpoint = "edit_text_in_place")]
pub async fn edit_text_in_place(
    project: ProjectId,
    old_text: String,
    new_text: String,
) -> Result<TextEdit, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(
        crate::server::session::selection::edit_text(&state, &project, &old_text, &new_text)
            .await?,
    )
}
