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
    /// Receives the shell's output for as long as the shell is kept.
    on_output: RefCell<Option<Closure<dyn Fn(String)>>>,
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
        let output = Rc::clone(&write);
        let on_output = Closure::<dyn Fn(String)>::new(move |text: String| output(&text));
        let (cols, rows) = self.inner.size.get();
        let started = js::shell(PACKAGE_URL, cols, rows, on_output.as_ref().unchecked_ref());
        *self.inner.on_output.borrow_mut() = Some(on_output);
        let process: js::ShellProcess = match JsFuture::from(started).await {
            Ok(process) => process.unchecked_into(),
            Err(e) => {
                write(&failed_line(&error_text(&e)));
                return;
            }
        };
        if self.inner.killed.get() {
            process.kill();
            return;
        }
        if self.inner.size.get() != (cols, rows) {
            let (cols, rows) = self.inner.size.get();
            process.resize(cols, rows);
        }
        let exit = process.exit();
        *self.inner.process.borrow_mut() = Some(process);
        let code = JsFuture::from(exit)
            .await
            .ok()
            .and_then(|c| c.as_f64())
            .map(|c| c as i64);
        self.inner.process.borrow_mut().take();
        if !self.inner.killed.get() {
            write(&exited_line(code));
        }
    }

    /// Types `data` into the shell (dropped before it runs or after it ended).
    pub fn input(&self, data: &str) {
        if let Some(process) = self.inner.process.borrow().as_ref() {
            process.write(data);
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

fn exited_line(code: Option<i64>) -> String {
    match code {
        Some(code) => format!("\r\n\x1b[2m[exited with {code}]\x1b[0m\r\n"),
        None => "\r\n\x1b[2m[exited]\x1b[0m\r\n".to_owned(),
    }
}
