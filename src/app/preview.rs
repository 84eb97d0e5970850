//! The preview pane: the running app in an iframe, at a chosen device width.
//!
//! Every port a server of the project listens on is listed; the dev server
//! of a `start` comes with its address, and any other port is given one by
//! the server when the person picks it (`open_preview`).

mod select;

use leptos::either::EitherOf3;
use leptos::prelude::*;

use super::api::open_preview;
use super::context::CurrentProject;
use super::session::SessionStore;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Device {
    Phone,
    Tablet,
    Desktop,
}

impl Device {
    const ALL: [Device; 3] = [Device::Phone, Device::Tablet, Device::Desktop];

    fn label(self) -> &'static str {
        match self {
            Device::Phone => "Phone",
            Device::Tablet => "Tablet",
            Device::Desktop => "Desktop",
        }
    }

    /// The frame's CSS width.
    fn width(self) -> &'static str {
        match self {
            Device::Phone => "390px",
            Device::Tablet => "820px",
            Device::Desktop => "100%",
        }
    }
}

/// What the framed app may do: everything an app under development needs,
/// except navigating the IDE's own page.
const PREVIEW_SANDBOX: &str = "allow-scripts allow-same-origin allow-forms allow-modals \
     allow-popups allow-popups-to-escape-sandbox allow-downloads allow-pointer-lock";

#[component]
pub fn PreviewPane() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let project = expect_context::<CurrentProject>().0;
    // The port chosen in the selector; otherwise the first server that has
    // an address, or the first one.
    let chosen = RwSignal::new(None::<u16>);
    let previews = move || {
        store.previews.track();
        store.with(|s| s.previews.clone())
    };
    let current = Memo::new(move |_| {
        let previews = previews();
        let chosen = chosen.get();
        previews
            .iter()
            .find(|p| Some(p.port) == chosen)
            .or_else(|| previews.iter().find(|p| p.url.is_some()))
            .or(previews.first())
            .cloned()
    });
    let url = Signal::derive(move || {
        current
            .get()
            .and_then(|p| p.url)
            .map(|url| on_this_host(&url))
    });
    // Errors the previewed page reports become build results (a
    // WebContainer project's come from its WebContainer instead).
    #[cfg(feature = "hydrate")]
    super::page_report::forward(
        project.clone(),
        url,
        use_context::<super::runtime_choice::RuntimeChoice>().map(|choice| choice.kind),
    );
    // Asks the server for an address for a port that has none; the address
    // arrives through the session too.
    let ask = Action::new(move |port: &u16| open_preview(project.clone(), *port));
    let refused = Signal::derive(move || {
        ask.value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    });
    let pick = move |port: Option<u16>| {
        chosen.set(port);
        let without_url = port.is_some_and(|port| {
            store.with(|s| s.previews.iter().any(|p| p.port == port && p.url.is_none()))
        });
        if let (Some(port), true) = (port, without_url) {
            ask.dispatch(port);
        }
    };
    let device = RwSignal::new(Device::Desktop);
    let frame = NodeRef::<leptos::html::Iframe>::new();
    let src = move || url.get().unwrap_or_else(|| "about:blank".to_owned());
    // Setting `src` through the DOM navigates the frame even when the value
    // is the same; a reactive attribute with an unchanged value would not.
    let reload = move |_| {
        if let Some(frame) = frame.get() {
            frame.set_src(&frame.src());
        }
    };

    view! {
        <section class="preview-pane" data-testid="preview" aria-label="Preview">
            <div class="preview-toolbar">
                <button
                    class="icon-button"
                    title="Reload"
                    data-testid="preview-reload"
                    disabled=move || url.with(Option::is_none)
                    on:click=reload
                >
                    "⟳"
                </button>
                <Show when=move || { previews().len() > 1 }>
                    <select
                        class="port-picker"
                        aria-label="Dev server"
                        data-testid="preview-port"
                        on:change:target=move |ev| pick(ev.target().value().parse().ok())
                    >
                        {move || {
                            let selected = current.get().map(|p| p.port);
                            previews()
                                .into_iter()
                                .map(|p| {
                                    view! {
                                        <option value=p.port.to_string() selected=Some(p.port) == selected>
                                            {format!("Port {}", p.port)}
                                        </option>
                                    }
                                })
                                .collect_view()
                        }}
                    </select>
                </Show>
                <select::SelectToggle url frame />
                <span class="preview-url" data-testid="preview-url">{move || url.get().unwrap_or_default()}</span>
                <div class="device-picker" role="group" aria-label="Device width">
                    {Device::ALL
                        .into_iter()
                        .map(|d| {
                            view! {
                                <button
                                    class="chip"
                                    class:active=move || device.get() == d
                                    on:click=move |_| device.set(d)
                                >
                                    {d.label()}
                                </button>
                            }
                        })
                        .collect_view()}
                </div>
                <a
                    class="icon-button"
                    title="Open in a new tab"
                    target="_blank"
                    rel="noopener"
                    data-testid="preview-open"
                    href=move || url.get()
                    class:disabled=move || url.with(Option::is_none)
                >
                    "↗"
                </a>
            </div>
            <div class="preview-stage">
                // The app may run scripts, submit forms, open dialogs and
                // popups and keep its own storage (same origin as itself),
                // but may not navigate the IDE's page away.
                <iframe
                    node_ref=frame
                    data-testid="preview-frame"
                    title="Preview"
                    sandbox=PREVIEW_SANDBOX
                    src=src
                    style:width=move || device.get().width()
                ></iframe>
                {move || match (current.get(), url.with(Option::is_some)) {
                    (_, true) => EitherOf3::A(()),
                    (None, false) => {
                        EitherOf3::B(view! {
                            <div class="empty-state preview-empty">
                                "No preview yet. When the model starts a dev server, the app appears here."
                            </div>
                        })
                    }
                    (Some(preview), false) => {
                        let port = preview.port;
                        EitherOf3::C(view! {
                            <div class="empty-state preview-empty">
                                <p>{format!("A server listens on port {port}.")}</p>
                                <button
                                    class="chip"
                                    data-testid="preview-show"
                                    disabled=move || ask.pending().get()
                                    on:click=move |_| {
                                        ask.dispatch(port);
                                    }
                                >
                                    {format!("Show port {port}")}
                                </button>
                                {move || {
                                    refused
                                        .get()
                                        .map(|e| view! { <p class="preview-error" role="alert">{e}</p> })
                                }}
                            </div>
                        })
                    }
                }}
            </div>
        </section>
    }
}

/// The preview's URL with the host name the page was opened with: the
/// server names its own address, and the preview is only same-site with the
/// IDE (so its storage works in the frame) under the same host name.
fn on_this_host(url: &str) -> String {
    #[cfg(feature = "hydrate")]
    {
        let page_host = window().location().hostname().unwrap_or_default();
        if let Some((scheme, rest)) = url.split_once("://")
            && let Some(port_start) = rest.rfind(':')
            && !page_host.is_empty()
        {
            let host = if page_host.contains(':') {
                format!("[{page_host}]")
            } else {
                page_host
            };
            return format!("{scheme}://{host}{}", &rest[port_start..]);
        }
    }
    url.to_owned()
}
