//! The preview pane: the running app in an iframe, at a chosen device width.

use leptos::prelude::*;

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

#[component]
pub fn PreviewPane() -> impl IntoView {
    // The URL of the dev server being shown; none until an app is running.
    let url = RwSignal::new(None::<String>);
    let device = RwSignal::new(Device::Desktop);
    // Bumped to reload the frame.
    let generation = RwSignal::new(0u32);

    let src = move || {
        generation.track();
        url.get().unwrap_or_else(|| "about:blank".to_owned())
    };

    view! {
        <section class="preview-pane" data-testid="preview" aria-label="Preview">
            <div class="preview-toolbar">
                <button
                    class="icon-button"
                    title="Reload"
                    disabled=move || url.with(Option::is_none)
                    on:click=move |_| generation.update(|g| *g += 1)
                >
                    "⟳"
                </button>
                <span class="preview-url">{move || url.get().unwrap_or_default()}</span>
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
                    href=move || url.get()
                    class:disabled=move || url.with(Option::is_none)
                >
                    "↗"
                </a>
            </div>
            <div class="preview-stage">
                <iframe
                    data-testid="preview-frame"
                    title="Preview"
                    src=src
                    style:width=move || device.get().width()
                ></iframe>
                <Show when=move || url.with(Option::is_none)>
                    <div class="empty-state preview-empty">
                        "No preview yet. When the model starts a dev server, the app appears here."
                    </div>
                </Show>
            </div>
        </section>
    }
}
