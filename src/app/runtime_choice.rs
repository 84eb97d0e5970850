//! The runtime the project runs on, as the page shows and changes it: the
//! top bar names it (`runtime-status`), the settings change it, and when a
//! WebContainer cannot start here the page says why (`runtime-error`) and
//! offers the sandbox instead (`runtime-switch-sandbox`).

use leptos::prelude::*;

use crate::app::error::RivetError;
use crate::runtime::kind::{BootFailure, RuntimeKind};
use crate::runtime::project::ProjectId;

/// The runtime the project runs on.
#[server(endpoint = "project_runtime")]
pub async fn project_runtime(project: ProjectId) -> Result<RuntimeKind, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::runtime_choice::runtime_of(&state, &project).await?)
}

/// Moves the project to another runtime; refused while an answer streams.
#[server(endpoint = "set_project_runtime")]
pub async fn set_project_runtime(
    project: ProjectId,
    runtime: RuntimeKind,
) -> Result<RuntimeKind, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::runtime_choice::set_runtime(&state, &project, runtime).await?)
}

/// The page's knowledge of the project's runtime, shared by the top bar,
/// the settings and the WebContainer.
#[derive(Clone, Copy)]
pub struct RuntimeChoice {
    project: StoredValue<ProjectId>,
    /// `None` until the server has answered.
    pub kind: RwSignal<Option<RuntimeKind>>,
    /// Why the WebContainer cannot run in this tab, if it cannot.
    pub failure: RwSignal<Option<BootFailure>>,
    pub change: ServerAction<SetProjectRuntime>,
}

impl RuntimeChoice {
    /// Shares the project's runtime with the page and, in the browser,
    /// loads it.
    pub fn provide(project: ProjectId) -> RuntimeChoice {
        let this = RuntimeChoice {
            project: StoredValue::new(project),
            kind: RwSignal::new(None),
            failure: RwSignal::new(None),
            change: ServerAction::new(),
        };
        provide_context(this);
        #[cfg(feature = "hydrate")]
        this.follow();
        this
    }

    pub fn expect() -> RuntimeChoice {
        expect_context()
    }

    pub fn switch_to(&self, runtime: RuntimeKind) {
        self.change.dispatch(SetProjectRuntime {
            project: self.project.get_value(),
            runtime,
        });
    }

    /// Loads the runtime, follows changes, and checks whether a WebContainer
    /// can run here.
    #[cfg(feature = "hydrate")]
    fn follow(self) {
        let project = self.project.get_value();
        leptos::task::spawn_local(async move {
            match project_runtime(project).await {
                Ok(kind) => self.kind.set(Some(kind)),
                Err(e) => leptos::logging::warn!("the project's runtime is unknown: {e}"),
            }
        });
        Effect::new(move |_| {
            if let Some(Ok(kind)) = self.change.value().get() {
                self.kind.set(Some(kind));
            }
        });
        // One WebContainer per page: booted once, the first time the
        // project runs on it here.
        let booted = StoredValue::new(false);
        Effect::new(move |_| match self.kind.get() {
            Some(RuntimeKind::Webcontainer) => {
                let failure = super::webcontainer::environment_failure();
                let can_boot = failure.is_none();
                self.failure.set(failure);
                if can_boot && !booted.get_value() {
                    booted.set_value(true);
                    super::webcontainer::start(self.project.get_value(), self.failure);
                }
            }
            _ => self.failure.set(None),
        });
    }
}

/// The top bar's runtime name.
#[component]
pub fn RuntimeStatus() -> impl IntoView {
    let runtime = RuntimeChoice::expect();
    view! {
        <span
            class="runtime-status"
            data-testid="runtime-status"
            data-runtime=move || runtime.kind.get().map(RuntimeKind::as_str)
            title="Where this project's commands run"
        >
            {move || runtime.kind.get().map_or("Runtime…", RuntimeKind::label)}
        </span>
    }
}

/// Why the WebContainer cannot start, with the way out.
#[component]
pub fn RuntimeError() -> impl IntoView {
    let runtime = RuntimeChoice::expect();
    move || {
        runtime.failure.get().map(|failure| {
            view! {
                <div class="runtime-error" role="alert" data-testid="runtime-error">
                    <p>{failure.message()}</p>
                    <button
                        data-testid="runtime-switch-sandbox"
                        disabled=move || runtime.change.pending().get()
                        on:click=move |_| runtime.switch_to(RuntimeKind::Sandbox)
                    >
                        "Run this project in the sandbox on the server instead"
                    </button>
                    <ChangeError />
                </div>
            }
        })
    }
}

/// The settings' choice of runtime for this project.
#[component]
pub fn RuntimeSetting() -> impl IntoView {
    let runtime = RuntimeChoice::expect();
    let options = RuntimeKind::ALL.map(|kind| {
        view! {
            <option value=kind.as_str() selected=move || runtime.kind.get() == Some(kind)>
                {kind.label()}
            </option>
        }
    });
    view! {
        <label class="runtime-setting">
            "This project's runtime"
            <select
                data-testid="runtime-select"
                disabled=move || runtime.kind.get().is_none() || runtime.change.pending().get()
                on:change=move |ev| {
                    if let Ok(kind) = RuntimeKind::parse(&event_target_value(&ev)) {
                        runtime.switch_to(kind);
                    }
                }
            >
                {options}
            </select>
        </label>
        <ChangeError />
    }
}

/// Why the last change of runtime was refused.
#[component]
fn ChangeError() -> impl IntoView {
    let runtime = RuntimeChoice::expect();
    move || match runtime.change.value().get() {
        Some(Err(e)) => {
            Some(view! { <p class="runtime-change-error" role="alert">{e.to_string()}</p> })
        }
        _ => None,
    }
}
