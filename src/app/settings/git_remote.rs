//! The project's git remote: where it pushes (URL, user name, token,
//! branch; the token is typed once and never shown again), how far the
//! project and the remote are apart, and Push and Pull.

use leptos::prelude::*;

use crate::app::context::CurrentProject;
use crate::app::error::RivetError;
use crate::runtime::project::ProjectId;
use crate::runtime::ship::{GitStatus, PullOutcome, Pulled, Pushed, RemoteView};

#[server(endpoint = "git_remote")]
pub async fn git_remote(project: ProjectId) -> Result<Option<RemoteView>, RivetError> {
    use crate::server::remote::RemoteError;
    use crate::server::session::api::ApiError;
    let state = expect_context::<crate::server::state::AppState>();
    match crate::server::session::remote::remote(&state, &project).await {
        Ok(remote) => Ok(Some(remote)),
        Err(ApiError::Remote(RemoteError::NotSet)) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

#[server(endpoint = "set_git_remote")]
pub async fn set_git_remote(
    project: ProjectId,
    url: String,
    username: String,
    token: String,
    branch: String,
) -> Result<RemoteView, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    let given = |s: String| (!s.trim().is_empty()).then(|| s.trim().to_owned());
    let input = crate::server::remote::RemoteInput {
        url: url.trim().to_owned(),
        username: given(username),
        token: given(token),
        branch: given(branch),
    };
    Ok(crate::server::session::remote::set_remote(&state, &project, input).await?)
}

#[server(endpoint = "git_status")]
pub async fn fetch_git_status(project: ProjectId) -> Result<GitStatus, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::remote::status(&state, &project).await?)
}

#[server(endpoint = "git_push")]
pub async fn git_push(project: ProjectId) -> Result<Pushed, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::remote::push(&state, &project).await?)
}

#[server(endpoint = "git_pull")]
pub async fn git_pull(project: ProjectId) -> Result<Pulled, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::remote::pull(&state, &project).await?)
}

/// The git remote section, in a project only.
#[component]
pub fn GitRemoteSetting(open: RwSignal<bool>) -> impl IntoView {
    use_context::<CurrentProject>()
        .map(|current| view! { <GitRemoteForm project=current.0 open /> })
}

fn short(commit: &str) -> String {
    commit.chars().take(10).collect()
}

fn said_status(status: &GitStatus) -> String {
    match &status.remote_commit {
        None => format!("{}: not on the remote yet", status.branch),
        Some(_) => format!(
            "{}: {} ahead, {} behind",
            status.branch, status.ahead, status.behind
        ),
    }
}

fn said_pull(pulled: &Pulled) -> String {
    let how = match pulled.outcome {
        PullOutcome::UpToDate => "already up to date",
        PullOutcome::FastForward => "fast-forwarded",
        PullOutcome::Merged => "merged",
    };
    let changed = pulled.written.len() + pulled.removed.len();
    let files = if changed == 1 { "file" } else { "files" };
    format!(
        "Pulled {}: {how}, {changed} {files} changed, now at {}",
        pulled.branch,
        short(&pulled.commit)
    )
}

#[component]
fn GitRemoteForm(project: ProjectId, open: RwSignal<bool>) -> impl IntoView {
    let project = StoredValue::new(project);
    let save = ServerAction::<SetGitRemote>::new();
    let push = ServerAction::<GitPush>::new();
    let pull = ServerAction::<GitPull>::new();
    let remote = Resource::new(
        move || (open.get(), save.version().get()),
        move |(open, _)| async move {
            if open {
                git_remote(project.get_value()).await
            } else {
                Ok(None)
            }
        },
    );
    let status = Resource::new(
        move || {
            (
                open.get(),
                save.version().get(),
                push.version().get(),
                pull.version().get(),
            )
        },
        move |(open, ..)| async move {
            if open {
                fetch_git_status(project.get_value()).await.map(Some)
            } else {
                Ok(None)
            }
        },
    );
    let (url, username, token, branch) = (
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
    );
    // The kept remote fills the form (never its token).
    Effect::new(move || {
        if let Some(Ok(Some(kept))) = remote.get() {
            url.set(kept.url);
            username.set(kept.username.unwrap_or_default());
            branch.set(kept.branch);
        }
    });
    let result = RwSignal::new(String::new());
    Effect::new(move || match save.value().get() {
        Some(Ok(_)) => token.set(String::new()),
        Some(Err(e)) => result.set(e.to_string()),
        None => {}
    });
    Effect::new(move || {
        if let Some(pushed) = push.value().get() {
            result.set(pushed.map_or_else(
                |e| e.to_string(),
                |p| format!("Pushed {} to {}", short(&p.commit), p.branch),
            ));
        }
    });
    Effect::new(move || {
        if let Some(pulled) = pull.value().get() {
            result.set(pulled.map_or_else(|e| e.to_string(), |p| said_pull(&p)));
        }
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        save.dispatch(SetGitRemote {
            project: project.get_value(),
            url: url.get_untracked(),
            username: username.get_untracked(),
            token: token.get_untracked(),
            branch: branch.get_untracked(),
        });
    };
    let token_hint = move || match remote.get() {
        Some(Ok(Some(kept))) if kept.token_set => "A token is kept; leave empty to keep it",
        _ => "Optional",
    };
    let said = move || {
        if push.pending().get() || pull.pending().get() {
            "Talking to the remote…".to_owned()
        } else {
            result.get()
        }
    };
    let line = move || match status.get() {
        Some(Ok(Some(status))) => said_status(&status),
        Some(Err(e)) if remote.get().is_some_and(|r| matches!(r, Ok(Some(_)))) => e.to_string(),
        _ => String::new(),
    };
    view! {
        <form class="settings-form settings-git" on:submit=submit>
            <h3>"Git remote"</h3>
            <label><span>"URL"</span>
                <input data-testid="git-url" placeholder="https://git.example.com/me/app.git" autocomplete="off"
                    prop:value=move || url.get() on:input:target=move |ev| url.set(ev.target().value()) />
            </label>
            <label><span>"User name"</span>
                <input data-testid="git-username" autocomplete="off"
                    prop:value=move || username.get() on:input:target=move |ev| username.set(ev.target().value()) />
            </label>
            <label><span>"Token"</span>
                <input data-testid="git-token" type="password" autocomplete="off" placeholder=token_hint
                    prop:value=move || token.get() on:input:target=move |ev| token.set(ev.target().value()) />
            </label>
            <label><span>"Branch"</span>
                <input data-testid="git-branch" placeholder="main" autocomplete="off"
                    prop:value=move || branch.get() on:input:target=move |ev| branch.set(ev.target().value()) />
            </label>
            <div class="settings-actions">
                <button type="submit" data-testid="git-save">"Save remote"</button>
                <button type="button" data-testid="git-push" disabled=move || push.pending().get()
                    on:click=move |_| { push.dispatch(GitPush { project: project.get_value() }); }>"Push"</button>
                <button type="button" data-testid="git-pull" disabled=move || pull.pending().get()
                    on:click=move |_| { pull.dispatch(GitPull { project: project.get_value() }); }>"Pull"</button>
            </div>
            <p class="settings-status" data-testid="git-status"><Transition fallback=|| ()>{line}</Transition></p>
            <p class="settings-status" role="status" data-testid="git-result">{said}</p>
        </form>
    }
}
