//! The moment parts out of the first load may start loading: once the
//! chat is usable and the browser is idle, or sooner when a person opens a
//! part that needs its code (the settings). Until then nothing competes
//! with the main bundle for the wire.

use std::cell::RefCell;

use futures::channel::oneshot;
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue, closure::Closure};

/// How long an idle callback may wait on a page that is never idle.
const IDLE_TIMEOUT_MS: u32 = 2_000;

#[derive(Default)]
struct Gate {
    open: bool,
    asked: bool,
    waiting: Vec<oneshot::Sender<()>>,
}

thread_local! {
    static GATE: RefCell<Gate> = RefCell::new(Gate::default());
}

/// Resolves once the gate is open (at once if it already is).
pub async fn opened() {
    let waiting = GATE.with(|gate| {
        let mut gate = gate.borrow_mut();
        if gate.open {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        gate.waiting.push(tx);
        let first = !std::mem::replace(&mut gate.asked, true);
        Some((rx, first))
    });
    let Some((rx, first)) = waiting else { return };
    if first {
        open_when_idle();
    }
    let _ = rx.await;
}

/// Opens the gate now: a part a person asked for loads without waiting.
pub fn open_now() {
    let waiting = GATE.with(|gate| {
        let mut gate = gate.borrow_mut();
        gate.open = true;
        std::mem::take(&mut gate.waiting)
    });
    for tx in waiting {
        let _ = tx.send(());
    }
}

/// Asks the browser to open the gate when it is next idle (after the
/// hydration's effects, the chat's included, have run), or after a timer
/// where there is no `requestIdleCallback`.
fn open_when_idle() {
    let Some(window) = web_sys::window() else {
        open_now();
        return;
    };
    let callback = Closure::once_into_js(open_now);
    let idle = Reflect::get(&window, &JsValue::from_str("requestIdleCallback"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    let scheduled = match idle {
        Some(idle) => {
            let options = Object::new();
            let _ = Reflect::set(&options, &"timeout".into(), &IDLE_TIMEOUT_MS.into());
            idle.call2(&window, &callback, &options).is_ok()
        }
        None => window
            .set_timeout_with_callback_and_timeout_and_arguments_0(callback.unchecked_ref(), 0)
            .is_ok(),
    };
    if !scheduled {
        open_now();
    }
}
