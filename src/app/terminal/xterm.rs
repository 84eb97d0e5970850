//! xterm.js bindings (the `@xterm/xterm` global build), the fit addon, and
//! the kinds of tab: the Rivet log, a shell of the server's sandbox over a
//! WebSocket, and for a `webcontainer` project `jsh` in the page's
//! WebContainer (`xterm/webcontainer.rs`).

mod webcontainer;

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue, closure::Closure, prelude::wasm_bindgen};

use super::TabId;
use crate::app::context::CurrentProject;
use crate::app::runtime_choice::RuntimeChoice;
use crate::app::scripts::load_xterm;
use crate::app::session::SessionStore;
use crate::runtime::kind::RuntimeKind;

#[wasm_bindgen]
extern "C" {
    pub type Terminal;
    #[wasm_bindgen(constructor)]
    fn new(options: &JsValue) -> Terminal;
    #[wasm_bindgen(method)]
    fn open(this: &Terminal, host: &web_sys::HtmlElement);
    #[wasm_bindgen(method)]
    pub fn write(this: &Terminal, data: &str);
    #[wasm_bindgen(method, js_name = write)]
    fn write_bytes(this: &Terminal, data: &js_sys::Uint8Array);
    #[wasm_bindgen(method)]
    fn reset(this: &Terminal);
    #[wasm_bindgen(method, js_name = loadAddon)]
    fn load_addon(this: &Terminal, addon: &Fit);
    #[wasm_bindgen(method, js_name = onData)]
    fn on_data(this: &Terminal, listener: &js_sys::Function);
    #[wasm_bindgen(method, getter)]
    fn cols(this: &Terminal) -> u16;
    #[wasm_bindgen(method, getter)]
    fn rows(this: &Terminal) -> u16;
}

// The fit addon's global build exposes its class as `FitAddon.FitAddon`. The
// Rust type must not share the namespace's name, or wasm-bindgen nests impls.
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = FitAddon, js_name = FitAddon)]
    type Fit;
    #[wasm_bindgen(constructor, js_namespace = FitAddon, js_class = FitAddon)]
    fn new() -> Fit;
    #[wasm_bindgen(method)]
    fn fit(this: &Fit);
}

/// The first line of the Rivet tab.
const BANNER: &str =
    "Rivet terminal: the commands the model runs, and their output, appear here.\r\n";

/// Opens a terminal in `host` once xterm.js has loaded, sized to the pane,
/// and connects it to what `tab` shows.
pub fn mount(
    host: NodeRef<leptos::html::Div>,
    tab: TabId,
    active: RwSignal<TabId>,
    failed: RwSignal<Option<String>>,
) {
    let store = expect_context::<SessionStore>();
    let project = expect_context::<CurrentProject>().0;
    let runtime = use_context::<RuntimeChoice>().map(|choice| choice.kind);
    let shell = webcontainer::shell_slot();
    let socket = sandbox_socket_slot();
    let mounted = StoredValue::new(false);
    Effect::new(move |_| {
        let Some(element) = host.get() else { return };
        // A shell runs where the project does: wait until the page knows.
        let runs_on = match (tab, runtime) {
            (Some(_), Some(kind)) => match kind.get() {
                Some(kind) => Some(kind),
                None => return,
            },
            _ => None,
        };
        if mounted.get_value() {
            return;
        }
        mounted.set_value(true);
        let project = project.clone();
        leptos::task::spawn_local(async move {
            if let Err(e) = load_xterm().await {
                failed.set(Some(format!("{e:?}")));
                return;
            }
            let options =
                js_sys::JSON::parse(&theme_options(tab.is_none())).unwrap_or(JsValue::UNDEFINED);
            let terminal = std::rc::Rc::new(Terminal::new(&options));
            let fit = std::rc::Rc::new(Fit::new());
            terminal.load_addon(&fit);
            terminal.open(element.unchecked_ref());
            fit.fit();
            let resize: std::rc::Rc<dyn Fn()> = match tab {
                None => {
                    let term = std::rc::Rc::clone(&terminal);
                    store.attach_terminal(move |text, reset| {
                        if reset {
                            term.reset();
                            term.write(BANNER);
                        }
                        term.write(text);
                    });
                    let fit = std::rc::Rc::clone(&fit);
                    std::rc::Rc::new(move || fit.fit())
                }
                Some(_) if runs_on == Some(RuntimeKind::Webcontainer) => {
                    webcontainer::connect(&terminal, &fit, shell)
                }
                Some(n) => connect_shell(&project.to_string(), n, &terminal, &fit, socket),
            };
            let on_resize = Closure::<dyn Fn()>::new(move || resize());
            if let Ok(observer) = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()) {
                observer.observe(&element);
            }
            // The observer lives as long as the element.
            on_resize.forget();
        });
    });
    let _ = active;
}

/// Where a sandbox shell tab keeps its connection: when the tab closes, it
/// tells the server to end the shell and closes. (A page closed or reloaded
/// leaves the shell running for the next visit.)
type SocketSlot = StoredValue<Option<web_sys::WebSocket>, LocalStorage>;

fn sandbox_socket_slot() -> SocketSlot {
    let slot = StoredValue::new_local(None::<web_sys::WebSocket>);
    on_cleanup(move || {
        if let Some(Some(socket)) = slot.try_get_value() {
            if socket.ready_state() == web_sys::WebSocket::OPEN {
                let _ = socket.send_with_str(r#"{"type":"close"}"#);
            }
            let _ = socket.close();
        }
    });
    slot
}

/// Bridges a terminal to shell `n` of the project; returns what to do on resize.
fn connect_shell(
    project: &str,
    n: u32,
    terminal: &std::rc::Rc<Terminal>,
    fit: &std::rc::Rc<Fit>,
    slot: SocketSlot,
) -> std::rc::Rc<dyn Fn()> {
    let location = window().location();
    let scheme = if location.protocol().as_deref() == Ok("https:") {
        "wss"
    } else {
        "ws"
    };
    let host = location.host().unwrap_or_default();
    let url = format!(
        "{scheme}://{host}/api/projects/{project}/terminals/{n}/ws?cols={}&rows={}",
        terminal.cols(),
        terminal.rows()
    );
    let Ok(socket) = web_sys::WebSocket::new(&url) else {
        terminal.write("\r\nCould not open the terminal connection.\r\n");
        return std::rc::Rc::new(|| {});
    };
    socket.set_binary_type(web_sys::BinaryType::Arraybuffer);
    slot.set_value(Some(socket.clone()));
    let socket = std::rc::Rc::new(socket);

    let term = std::rc::Rc::clone(terminal);
    let on_message =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            let data = ev.data();
            if let Some(text) = data.as_string() {
                // Control messages: the shell exited, or an error.
                term.write(&crate::app::shell_lines::control_line(&text));
            } else if let Ok(buffer) = data.dyn_into::<js_sys::ArrayBuffer>() {
                term.write_bytes(&js_sys::Uint8Array::new(&buffer));
            }
        });
    socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();

    let input = std::rc::Rc::clone(&socket);
    let on_data = Closure::<dyn Fn(String)>::new(move |data: String| {
        let _ = input.send_with_u8_array(data.as_bytes());
    });
    terminal.on_data(on_data.as_ref().unchecked_ref());
    on_data.forget();

    let (term, fit) = (std::rc::Rc::clone(terminal), std::rc::Rc::clone(fit));
    std::rc::Rc::new(move || {
        fit.fit();
        let message = format!(
            r#"{{"type":"resize","cols":{},"rows":{}}}"#,
            term.cols(),
            term.rows()
        );
        if socket.ready_state() == web_sys::WebSocket::OPEN {
            let _ = socket.send_with_str(&message);
        }
    })
}

fn theme_options(read_only: bool) -> String {
    let dark = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches());
    let (background, foreground) = if dark {
        ("#1e1e1e", "#d4d4d4")
    } else {
        ("#ffffff", "#1f2328")
    };
    format!(
        r#"{{"convertEol":false,"fontSize":13,"cursorBlink":{},"disableStdin":{read_only},"scrollback":5000,"theme":{{"background":"{background}","foreground":"{foreground}","cursor":"{foreground}"}}}}"#,
        !read_only
    )
}
