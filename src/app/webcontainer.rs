//! The browser runtime: a WebContainer in this tab (browser only).

use crate::runtime::kind::BootFailure;

/// What this tab rules out before a boot is tried: no cross-origin
/// isolation, or no `SharedArrayBuffer`.
pub fn environment_failure() -> Option<BootFailure> {
    let global = js_sys::global();
    let isolated = js_sys::Reflect::get(&global, &"crossOriginIsolated".into())
        .ok()
        .and_then(|v| v.as_bool());
    let shared = js_sys::Reflect::get(&global, &"SharedArrayBuffer".into())
        .map(|v| !v.is_undefined())
        .unwrap_or(false);
    BootFailure::diagnose(isolated, shared)
}

mod bindings;
mod database;
mod driver;
mod runtime;
mod shell;
mod site;

pub use driver::start;
pub use shell::Shell;
