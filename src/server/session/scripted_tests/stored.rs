//! What the store holds of a conversation, read as a listing or a restart
//! reads it.

use super::{Scripted, answered, fixtures};
use crate::runtime::session::Role;

#[tokio::test(flavor = "multi_thread")]
async fn a_message_is_stored_before_it_is_acknowledged() {
    let scripted = Scripted::start(fixtures("transcripts"), |_| {}).await;
    let (project, _runtime) = scripted.project().await;
    scripted.send(&project, "broken dep").await;
    // Read at once, as `rivet chat` or the project list would.
    let rows = scripted
        .state
        .store
        .messages(project.as_str())
        .await
        .unwrap();
    let first = rows.first().expect("the message is stored");
    assert_eq!(
        (first.role, first.text.as_str()),
        (Role::User, "broken dep")
    );
    let listed = scripted.state.store.find_projects("").await.unwrap();
    let row = listed.iter().find(|p| p.id == project.as_str()).unwrap();
    assert!(row.last_message_at.is_some(), "{row:?}");
    scripted.until(&project, "the answer's end", answered).await;
}
