//! A shell tab of a `webcontainer` project: `jsh` in the page's
//! WebContainer instead of `bash` in the server's sandbox.

use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::{JsCast, closure::Closure};

use super::{Fit, Terminal};
use crate::app::webcontainer::Shell;

/// The tab's shell, kept where the tab's cleanup finds it.
pub type ShellSlot = StoredValue<Option<Shell>, LocalStorage>;

/// A slot whose shell is killed when the tab closes.
pub fn shell_slot() -> ShellSlot {
    let slot = StoredValue::new_local(None::<Shell>);
    on_cleanup(move || {
        if let Some(Some(shell)) = slot.try_get_value() {
            shell.kill();
        }
    });
    slot
}

/// Bridges `terminal` to a new `jsh`; returns what to do on resize.
pub fn connect(terminal: &Rc<Terminal>, fit: &Rc<Fit>, slot: ShellSlot) -> Rc<dyn Fn()> {
    let term = Rc::clone(terminal);
    let shell = Shell::open(terminal.cols(), terminal.rows(), move |text| {
        term.write(text)
    });
    // The tab closed while xterm.js loaded.
    if slot.try_set_value(Some(shell.clone())).is_some() {
        shell.kill();
    }

    let input = shell.clone();
    let on_data = Closure::<dyn Fn(String)>::new(move |data: String| input.input(&data));
    terminal.on_data(on_data.as_ref().unchecked_ref());
    on_data.forget();

    let (term, fit) = (Rc::clone(terminal), Rc::clone(fit));
    Rc::new(move || {
        fit.fit();
        shell.resize(term.cols(), term.rows());
    })
}
