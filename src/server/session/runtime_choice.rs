//! The runtime each project runs on: chosen when it is created (from
//! `[runtime] default`), kept in the store, changeable from the settings.

use crate::runtime::kind::RuntimeKind;
use crate::runtime::project::ProjectId;
use crate::server::llm::prompt::RuntimeDescription;
use crate::server::projects::ProjectError;
use crate::server::state::AppState;
use crate::server::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeChoiceError {
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("an answer is still streaming; stop it before changing the runtime")]
    Busy,
}

/// The runtime the project runs on, as its row in the store says; an
/// unknown stored name reads as `[runtime] default` (the store decides
/// that, for every row it reads).
pub async fn runtime_of(
    state: &AppState,
    id: &ProjectId,
) -> Result<RuntimeKind, RuntimeChoiceError> {
    let row = state.store.project(id.as_str()).await?;
    let row = row.ok_or_else(|| ProjectError::NotFound(id.clone()))?;
    Ok(row.runtime)
}

/// Moves the project to `runtime`; refused while an answer streams, since
/// its actions are running on the other one.
pub async fn set_runtime(
    state: &AppState,
    id: &ProjectId,
    runtime: RuntimeKind,
) -> Result<RuntimeKind, RuntimeChoiceError> {
    runtime_of(state, id).await?;
    if let Some(handle) = state.open_projects.get(id)
        && super::conversation::is_busy(&handle)
    {
        return Err(RuntimeChoiceError::Busy);
    }
    state
        .store
        .set_project_runtime(id.as_str(), runtime)
        .await?;
    Ok(runtime)
}

/// What the system prompt says about where the project's actions run.
pub async fn description(state: &AppState, id: &ProjectId) -> RuntimeDescription {
    let kind = match runtime_of(state, id).await {
        Ok(kind) => kind,
        Err(error) => {
            tracing::warn!(project = %id.as_str(), %error, "the project's runtime could not be read");
            state.config.runtime.default
        }
    };
    RuntimeDescription::for_kind(&state.config, kind)
}

#[cfg(test)]
mod tests {

    use super::*;

    fn state(default: RuntimeKind) -> (AppState, tempfile::TempDir) {
        crate::server::state::for_tests(|config| config.runtime.default = default)
    }

    #[tokio::test]
    async fn a_new_project_runs_on_the_configured_default() {
        for default in RuntimeKind::ALL {
            let (state, _data) = state(default);
            let project = crate::server::state::project_for_tests(&state, "p").await;
            let got = runtime_of(&state, &project.id).await.unwrap();
            assert_eq!(got, default);
            let row = state.store.project(project.id.as_str()).await.unwrap();
            assert_eq!(row.unwrap().runtime, default);
        }
    }

    #[tokio::test]
    async fn a_switched_runtime_is_stored_and_described_to_the_model() {
        let (state, _data) = state(RuntimeKind::Webcontainer);
        let project = crate::server::state::project_for_tests(&state, "p").await;
        let id = &project.id;
        assert_eq!(
            description(&state, &project.id).await,
            RuntimeDescription::Webcontainer
        );
        let set = set_runtime(&state, id, RuntimeKind::Sandbox).await.unwrap();
        assert_eq!(set, RuntimeKind::Sandbox);
        assert_eq!(runtime_of(&state, id).await.unwrap(), RuntimeKind::Sandbox);
        assert!(matches!(
            description(&state, &project.id).await,
            RuntimeDescription::Sandbox { .. }
        ));
        // Another project keeps the default.
        let other = crate::server::state::project_for_tests(&state, "q").await;
        assert_eq!(
            runtime_of(&state, &other.id).await.unwrap(),
            RuntimeKind::Webcontainer
        );
    }

    #[tokio::test]
    async fn runtime_switch_while_an_answer_streams_is_refused() {
        let (state, _data) = state(RuntimeKind::Webcontainer);
        let project = crate::server::state::project_for_tests(&state, "p").await;
        let handle = state.open_projects.open(&state, &project.id).await;
        crate::server::session::conversation::pretend_streaming(&handle, true);
        let err = set_runtime(&state, &project.id, RuntimeKind::Sandbox)
            .await
            .unwrap_err();
        assert!(matches!(err, RuntimeChoiceError::Busy), "{err}");
        assert_eq!(
            runtime_of(&state, &project.id).await.unwrap(),
            RuntimeKind::Webcontainer
        );
        crate::server::session::conversation::pretend_streaming(&handle, false);
        set_runtime(&state, &project.id, RuntimeKind::Sandbox)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn runtime_of_unknown_project_is_not_found() {
        let (state, _data) = state(RuntimeKind::Sandbox);
        let err = runtime_of(&state, &ProjectId::parse("nosuchproject").unwrap())
            .await
            .unwrap_err();
        assert!(matches!(err, RuntimeChoiceError::Project(_)), "{err}");
        let err = set_runtime(
            &state,
            &ProjectId::parse("nosuchproject").unwrap(),
            RuntimeKind::Sandbox,
        )
        .await
        .unwrap_err();
        assert!(matches!(err, RuntimeChoiceError::Project(_)), "{err}");
    }

    #[tokio::test]
    async fn a_project_row_with_an_unknown_runtime_opens_with_the_default() {
        let (state, _data) = state(RuntimeKind::Webcontainer);
        let project = crate::server::state::project_for_tests(&state, "p").await;
        let id = project.id.as_str();
        set_runtime(&state, &project.id, RuntimeKind::Sandbox)
            .await
            .unwrap();
        // A name this version does not know (a newer version's runtime, a
        // hand-edited database): only SQL can write it now.
        let pool = state.store.writes().await.unwrap();
        sqlx::query("UPDATE projects SET runtime = 'docker' WHERE id = $1")
            .bind(id)
            .execute(pool)
            .await
            .unwrap();
        assert_eq!(
            runtime_of(&state, &project.id).await.unwrap(),
            RuntimeKind::Webcontainer
        );
        assert_eq!(
            description(&state, &project.id).await,
            RuntimeDescription::Webcontainer
        );
        let row = state.store.project(id).await.unwrap().unwrap();
        assert_eq!(row.runtime, RuntimeKind::Webcontainer);
        let listed = state.store.list_projects().await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].runtime, RuntimeKind::Webcontainer);
        let found = state.store.find_projects("").await.unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].runtime, RuntimeKind::Webcontainer);
    }
}
