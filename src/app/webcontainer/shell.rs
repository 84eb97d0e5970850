//! An interactive shell of the page's WebContainer: `jsh` on a terminal of
//! the tab's size, for the shell tabs of a `webcontainer` project. It waits
//! for the page's one WebContainer (booting it if nothing has yet), and
//! says so on the terminal when that fails or when the shell exits.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::{JsCast, closure::Closure};
use wasm_bindgen_futures::JsFuture;

use super::bindings as js;
use super::driver::PACKAGE_URL;
use super::runtime::error_text;
use crate::app::shell_lines::exited_line;

/// Most input kept for a shell that has not started yet, in bytes.
const MAX_PENDING: usize = 4096;

type OutputListener = Closure<dyn Fn(String)>;

/// A `jsh` of the page's WebContainer; clones share it.
#[derive(Clone, Default)]
pub struct Shell {
    inner: Rc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Set once the shell runs, taken when it ends.
    process: RefCell<Option<js::ShellProcess>>,
    /// The terminal's latest size.
    size: Cell<(u16, u16)>,
    /// Killed (its tab closed): a shell that starts afterwards ends at once.
    killed: Cell<bool>,
    /// The shell ended, or could not start.
    over: Cell<bool>,
    /// What was typed before the shell started (while the page boots).
    pending: RefCell<String>,
    /// Receives the shell's output for as long as the shell is kept.
    on_output: RefCell<Option<OutputListener>>,
}

impl Shell {
    /// Starts `jsh` on a `cols` x `rows` terminal; `write` receives its
    /// output and the lines Rivet adds (why it did not start, how it ended).
    pub fn open(cols: u16, rows: u16, write: impl Fn(&str) + 'static) -> Shell {
        let shell = Shell::default();
        shell.inner.size.set((cols, rows));
        let this = shell.clone();
        leptos::task::spawn_local(async move { this.run(Rc::new(write)).await });
        shell
    }

    async fn run(self, write: Rc<dyn Fn(&str)>) {
        let Some(process) = self.start(&write).await else {
            return;
        };
        let exit = process.exit();
        *self.inner.process.borrow_mut() = Some(process);
        let code = JsFuture::from(exit)
            .await
            .ok()
            .and_then(|c| c.as_f64())
            .map(|c| c as i64);
        self.inner.over.set(true);
        self.inner.process.borrow_mut().take();
        if !self.inner.killed.get() {
            write(&exited_line(code));
        }
    }

    /// Waits for the page's WebContainer and spawns `jsh` on it, brought up
    /// to the terminal's size and given what was typed meanwhile; `None`
    /// when it could not start or its tab closed meanwhile.
    async fn start(&self, write: &Rc<dyn Fn(&str)>) -> Option<js::ShellProcess> {
        let output = Rc::clone(write);
        let on_output = OutputListener::new(move |text: String| output(&text));
        let (cols, rows) = self.inner.size.get();
        let started = js::shell(PACKAGE_URL, cols, rows, on_output.as_ref().unchecked_ref());
        *self.inner.on_output.borrow_mut() = Some(on_output);
        let process: js::ShellProcess = match JsFuture::from(started).await {
            Ok(process) => process.unchecked_into(),
            Err(e) => {
                self.inner.over.set(true);
                write(&failed_line(&error_text(&e)));
                return None;
            }
        };
        if self.inner.killed.get() {
            process.kill();
            return None;
        }
        if self.inner.size.get() != (cols, rows) {
            let (cols, rows) = self.inner.size.get();
            process.resize(cols, rows);
        }
        let typed = std::mem::take(&mut *self.inner.pending.borrow_mut());
        if !typed.is_empty() {
            process.write(&typed);
        }
        Some(process)
    }

    /// Types `data` into the shell; what is typed before it starts is
    /// kept for it (up to [`MAX_PENDING`]), what comes after it ended is
    /// dropped.
    pub fn input(&self, data: &str) {
        if let Some(process) = self.inner.process.borrow().as_ref() {
            process.write(data);
            return;
        }
        let mut pending = self.inner.pending.borrow_mut();
        let waiting = !self.inner.killed.get() && !self.inner.over.get();
        if waiting && pending.len() + data.len() <= MAX_PENDING {
            pending.push_str(data);
        }
    }

    pub fn resize(&self, cols: u16, rows: u16) {
        self.inner.size.set((cols, rows));
        if let Some(process) = self.inner.process.borrow().as_ref() {
            process.resize(cols, rows);
        }
    }

    /// Ends the shell, or keeps it from starting.
    pub fn kill(&self) {
        self.inner.killed.set(true);
        if let Some(process) = self.inner.process.borrow_mut().take() {
            process.kill();
        }
    }
}

fn failed_line(error: &str) -> String {
    format!("\r\n\x1b[31mThe WebContainer's shell could not start: {error}\x1b[0m\r\n")
}
