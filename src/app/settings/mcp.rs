//! The owner's MCP servers: their list with status and tools, which of them
//! this project's agent gets, and removing one (`add.rs` adds one).
//! Variable and header values go to the server once and never come back.

mod add;

use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

use crate::app::context::CurrentProject;
use crate::app::error::RivetError;
use crate::runtime::mcp::{Choice, McpRun, McpServerSpec, ServerStatus, Status};
use crate::runtime::project::ProjectId;

/// The servers, and in a project its choice of them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct McpPanel {
    pub servers: Vec<ServerStatus>,
    pub choice: Option<Choice>,
}

#[server(endpoint = "mcp_servers")]
pub async fn mcp_servers(project: Option<ProjectId>) -> Result<McpPanel, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    let choice = match project {
        Some(project) => Some(crate::server::session::mcp::of(&state, &project).await?),
        None => None,
    };
    Ok(McpPanel {
        servers: crate::server::session::mcp::servers(&state),
        choice,
    })
}

#[server(endpoint = "set_mcp_server", input = Json)]
pub async fn set_mcp_server(spec: McpServerSpec) -> Result<(), RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    let name = spec.name.clone();
    crate::server::session::mcp::put(&state, &name, spec)?;
    Ok(())
}

#[server(endpoint = "remove_mcp_server")]
pub async fn remove_mcp_server(name: String) -> Result<(), RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::mcp::delete(&state, &name)?)
}

#[server(endpoint = "choose_mcp_servers", input = Json)]
pub async fn choose_mcp_servers(
    project: ProjectId,
    servers: Vec<String>,
) -> Result<Choice, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::mcp::choose(&state, &project, Some(servers)).await?)
}

/// Where a server runs, as its row says.
fn place(server: &ServerStatus) -> &'static str {
    match (server.server.transport.as_str(), server.server.run) {
        ("http", _) => "HTTP",
        (_, Some(McpRun::Host)) => "on this machine (trusted)",
        _ => "in the sandbox",
    }
}

fn status_text(server: &ServerStatus) -> String {
    match &server.status {
        Status::NotStarted => "not started yet".to_owned(),
        Status::Ready => format!("ready, {} tools", server.tools.len()),
        Status::Failed { error } => format!("failed: {error}"),
    }
}

#[component]
pub fn McpSetting(open: RwSignal<bool>) -> impl IntoView {
    let project = use_context::<CurrentProject>().map(|p| p.0);
    let set = ServerAction::<SetMcpServer>::new();
    let remove = ServerAction::<RemoveMcpServer>::new();
    let choose = ServerAction::<ChooseMcpServers>::new();
    let asked = project.clone();
    let panel = Resource::new(
        move || {
            (
                open.get(),
                set.version().get(),
                remove.version().get(),
                choose.version().get(),
            )
        },
        move |(open, ..)| {
            let project = asked.clone();
            async move {
                if open {
                    mcp_servers(project).await.map(Some)
                } else {
                    Ok(None)
                }
            }
        },
    );
    let project = StoredValue::new(project);
    // The servers this page last asked to be on: a switch flipped before the
    // list is read again starts from them, not from the list as it was drawn.
    // They are forgotten when the settings close: the list read when they
    // open again is the record, with what another tab may have changed.
    let sent = StoredValue::new(None::<Vec<String>>);
    Effect::new(move |_| {
        open.track();
        sent.set_value(None);
    });
    let failed = move || {
        let error = |v: Option<Result<_, RivetError>>| {
            v.and_then(Result::err).map(|e: RivetError| e.to_string())
        };
        error(remove.value().get()).or_else(|| error(choose.value().get().map(|r| r.map(|_| ()))))
    };
    let rows = move || {
        let Some(Ok(Some(current))) = panel.get() else {
            return Vec::new();
        };
        let on: Option<Vec<String>> = current.choice.map(|c| c.servers);
        current.servers.iter().map(|server| {
            let name = server.server.name.clone();
            let toggle = on.clone().map(|on| {
                let checked = on.contains(&name);
                let name = name.clone();
                // What the box shows now, not what it showed when drawn.
                let flip = move |ev: leptos::ev::Event| {
                    let mut servers = sent.get_value().unwrap_or_else(|| on.clone());
                    servers.retain(|n| *n != name);
                    if event_target_checked(&ev) { servers.push(name.clone()); }
                    sent.set_value(Some(servers.clone()));
                    if let Some(project) = project.get_value() {
                        choose.dispatch(ChooseMcpServers { project, servers });
                    }
                };
                // One choice at a time, so the server keeps them in order.
                let busy = move || choose.pending().get();
                view! {
                    <label class="settings-check">
                        <input type="checkbox" data-testid="mcp-on" prop:checked=checked disabled=busy on:change=flip />
                        "On in this project"
                    </label>
                }
            });
            let gone = name.clone();
            let removable = !server.server.from_config;
            view! {
                <li data-testid="mcp-server" data-name=name.clone()>
                    <code>{name.clone()}</code>
                    " "<span data-testid="mcp-place">{place(server)}</span>
                    " · "<span data-testid="mcp-status-text">{status_text(server)}</span>
                    {toggle}
                    {removable.then(|| view! {
                        <button type="button" data-testid="mcp-remove"
                            on:click=move |_| { remove.dispatch(RemoveMcpServer { name: gone.clone() }); }>"Remove"</button>
                    })}
                </li>
            }
        }).collect::<Vec<_>>()
    };
    view! {
        <section class="settings-form settings-mcp">
            <h3>"MCP servers"</h3>
            <ul class="settings-secret-list">
                <Transition fallback=|| ()>{rows}</Transition>
            </ul>
            <small class="settings-hint">
                "Their tools are offered to the model in Agent mode as server__tool; each call waits for your approval unless the server is trusted. Command servers run in the project's sandbox unless you choose this machine."
            </small>
            <span class="settings-status" role="status" data-testid="mcp-errors">{move || failed().unwrap_or_default()}</span>
            <add::AddServer set />
        </section>
    }
}
