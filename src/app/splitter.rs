//! A draggable boundary between two panes.

use leptos::prelude::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Between columns: dragging moves horizontally.
    Columns,
    /// Between rows: dragging moves vertically.
    Rows,
}

/// Dragging changes `size` (in pixels) within `min..=max`. `inverted` is for a
/// pane that sits after the splitter, which grows as the splitter moves back.
#[component]
pub fn Splitter(
    axis: Axis,
    size: RwSignal<f64>,
    min: f64,
    max: f64,
    #[prop(optional)] inverted: bool,
) -> impl IntoView {
    // (pointer position, size) when the drag started.
    let drag_start = RwSignal::new(None::<(f64, f64)>);
    let position = move |ev: &web_sys::PointerEvent| match axis {
        Axis::Columns => f64::from(ev.client_x()),
        Axis::Rows => f64::from(ev.client_y()),
    };
    let class = match axis {
        Axis::Columns => "splitter splitter-columns",
        Axis::Rows => "splitter splitter-rows",
    };
    let orientation = match axis {
        Axis::Columns => "vertical",
        Axis::Rows => "horizontal",
    };

    view! {
        <div
            class=class
            role="separator"
            aria-orientation=orientation
            class:dragging=move || drag_start.get().is_some()
            on:pointerdown=move |ev| {
                ev.prevent_default();
                // Capturing the pointer keeps the drag alive over iframes and Monaco.
                if let Some(target) = event_target_element(&ev) {
                    let _ = target.set_pointer_capture(ev.pointer_id());
                }
                drag_start.set(Some((position(&ev), size.get_untracked())));
            }
            on:pointermove=move |ev| {
                if let Some((start, start_size)) = drag_start.get_untracked() {
                    let delta = position(&ev) - start;
                    let delta = if inverted { -delta } else { delta };
                    size.set((start_size + delta).clamp(min, max));
                }
            }
            on:pointerup=move |_| drag_start.set(None)
            on:pointercancel=move |_| drag_start.set(None)
        ></div>
    }
}

fn event_target_element(ev: &web_sys::PointerEvent) -> Option<web_sys::Element> {
    use leptos::wasm_bindgen::JsCast;
    ev.target()?.dyn_into::<web_sys::Element>().ok()
}
