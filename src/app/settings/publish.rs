//! Publishing the project as a static site: Publish (public or private),
//! the site's address, its versions with Roll back, and Unpublish.

use leptos::prelude::*;

use crate::app::context::CurrentProject;
use crate::app::error::RivetError;
use crate::runtime::project::ProjectId;
use crate::runtime::ship::{Published, Pushed, SiteView, Version, Visibility};

#[server(endpoint = "publish_site")]
pub async fn publish_site(project: ProjectId, private: bool) -> Result<Published, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    let visibility = if private {
        Visibility::Private
    } else {
        Visibility::Public
    };
    let input = crate::server::session::publish::PublishInput {
        visibility: Some(visibility),
    };
    Ok(crate::server::session::publish::publish(&state, &project, input).await?)
}

#[server(endpoint = "site_info")]
pub async fn site_info(project: ProjectId) -> Result<SiteView, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::publish::site(&state, &project).await?)
}

#[server(endpoint = "rollback_site")]
pub async fn rollback_site(project: ProjectId, version: u32) -> Result<SiteView, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::publish::rollback(&state, &project, version).await?)
}

#[server(endpoint = "unpublish_site")]
pub async fn unpublish_site(project: ProjectId) -> Result<SiteView, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::publish::unpublish(&state, &project).await?)
}

#[server(endpoint = "publish_to_git")]
pub async fn publish_to_git(project: ProjectId) -> Result<Pushed, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::publish::publish_to_branch(&state, &project, None).await?)
}

/// The publish section, in a project only.
#[component]
pub fn PublishSetting(open: RwSignal<bool>) -> impl IntoView {
    use_context::<CurrentProject>().map(|current| view! { <PublishForm project=current.0 open /> })
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1u32 << 20)),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

#[component]
fn PublishForm(project: ProjectId, open: RwSignal<bool>) -> impl IntoView {
    let project = StoredValue::new(project);
    let publish = ServerAction::<PublishSite>::new();
    let rollback = ServerAction::<RollbackSite>::new();
    let unpublish = ServerAction::<UnpublishSite>::new();
    let to_git = ServerAction::<PublishToGit>::new();
    let private = RwSignal::new(false);
    let site = Resource::new(
        move || {
            (
                open.get(),
                publish.version().get(),
                rollback.version().get(),
                unpublish.version().get(),
            )
        },
        move |(open, ..)| async move {
            if open {
                site_info(project.get_value()).await.map(Some)
            } else {
                Ok(None)
            }
        },
    );
    let failed = move || {
        let error = |e: Option<RivetError>| e.map(|e| e.to_string());
        error(publish.value().get().and_then(Result::err))
            .or_else(|| error(rollback.value().get().and_then(Result::err)))
            .or_else(|| error(unpublish.value().get().and_then(Result::err)))
            .or_else(|| error(to_git.value().get().and_then(Result::err)))
    };
    let status = move || {
        if publish.pending().get() {
            return "Building and publishing…".to_owned();
        }
        if to_git.pending().get() {
            return "Pushing the live version…".to_owned();
        }
        let pushed = to_git.value().get().and_then(Result::ok);
        failed()
            .or_else(|| {
                pushed.map(|p| {
                    format!(
                        "Pushed the live version to {} ({})",
                        p.branch,
                        &p.commit[..p.commit.len().min(10)]
                    )
                })
            })
            .unwrap_or_default()
    };
    let on_publish = move |_| {
        publish.dispatch(PublishSite {
            project: project.get_value(),
            private: private.get_untracked(),
        });
    };
    let shown = move || {
        site.get().and_then(Result::ok).flatten().map(|site| {
            let live = site.live;
            let href = site.owner_link.clone().unwrap_or_else(|| site.url.clone());
            let versions = site.versions.into_iter().rev().map(|v| view! {
                <VersionRow version=v live on_rollback=move |version| {
                    rollback.dispatch(RollbackSite { project: project.get_value(), version });
                } />
            }).collect_view();
            view! {
                {live.map(|_| view! {
                    <p><a data-testid="publish-url" href=href target="_blank" rel="noopener">{site.url.clone()}</a>
                    {(site.visibility == Visibility::Private).then_some(" (private)")}</p>
                })}
                <ul class="settings-versions">{versions}</ul>
                {live.map(|_| view! {
                    <div class="settings-actions">
                        <button type="button" data-testid="publish-git" title="Push the live version to the git remote's gh-pages branch"
                            on:click=move |_| { to_git.dispatch(PublishToGit { project: project.get_value() }); }>"Push to gh-pages"</button>
                        <button type="button" data-testid="publish-unpublish"
                            on:click=move |_| { unpublish.dispatch(UnpublishSite { project: project.get_value() }); }>"Unpublish"</button>
                    </div>
                })}
            }
        })
    };
    view! {
        <section class="settings-form settings-publish">
            <h3>"Publish"</h3>
            <small class="settings-hint">
                "Builds the app (its build action, else npm run build, else its files) and serves it at an address of its own."
            </small>
            <label class="settings-check">
                <input type="checkbox" data-testid="publish-private"
                    prop:checked=move || private.get() on:change:target=move |ev| private.set(ev.target().checked()) />
                <span>"Private: only this browser, through the link below"</span>
            </label>
            <div class="settings-actions">
                <button type="button" data-testid="publish-button" disabled=move || publish.pending().get() on:click=on_publish>"Publish"</button>
                <span class="settings-status" role="status" data-testid="publish-status">{status}</span>
            </div>
            <Transition fallback=|| ()>{shown}</Transition>
        </section>
    }
}

#[component]
fn VersionRow(
    version: Version,
    live: Option<u32>,
    on_rollback: impl Fn(u32) + 'static,
) -> impl IntoView {
    let number = version.version;
    let is_live = live == Some(number);
    let detail = format!("{} files, {}", version.files, size(version.bytes));
    view! {
        <li data-testid="publish-version" data-version=number.to_string() class:live=is_live>
            <span>{format!("v{number}")}</span>
            <small>{detail}</small>
            {if is_live {
                view! { <strong>"live"</strong> }.into_any()
            } else {
                view! { <button type="button" data-testid="publish-rollback" on:click=move |_| on_rollback(number)>"Roll back"</button> }.into_any()
            }}
        </li>
    }
}
