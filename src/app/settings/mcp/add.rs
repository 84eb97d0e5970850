//! Adding an MCP server: a command (its arguments one per line, its
//! variables as NAME=value lines) or a URL (its headers as `Name: value`
//! lines). The values are sent once; the list shows their names only.

use std::collections::BTreeMap;

use leptos::prelude::*;

use super::SetMcpServer;
use crate::app::error::RivetError;
use crate::runtime::mcp::{McpRun, McpServerSpec};

/// `text`'s non-empty lines split at the first `separator`, trimmed.
pub fn pairs(text: &str, separator: char) -> Result<BTreeMap<String, String>, String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| match line.split_once(separator) {
            Some((name, value)) if !name.trim().is_empty() => {
                Ok((name.trim().to_owned(), value.trim().to_owned()))
            }
            _ => Err(format!("{line:?} is not name{separator}value")),
        })
        .collect()
}

/// The form's fields as a server's spec.
#[derive(Clone, Default)]
pub struct Fields {
    pub name: String,
    pub by_url: bool,
    pub command: String,
    pub args: String,
    pub env: String,
    pub host: bool,
    pub url: String,
    pub headers: String,
    pub trusted: bool,
}

impl Fields {
    pub fn spec(&self) -> Result<McpServerSpec, String> {
        let mut spec = McpServerSpec {
            name: self.name.trim().to_owned(),
            trusted: self.trusted,
            ..McpServerSpec::default()
        };
        if self.by_url {
            spec.url = Some(self.url.trim().to_owned());
            spec.headers = pairs(&self.headers, ':')?;
        } else {
            spec.command = Some(self.command.trim().to_owned());
            spec.args = self
                .args
                .lines()
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_owned)
                .collect();
            spec.env = pairs(&self.env, '=')?;
            spec.run = if self.host {
                McpRun::Host
            } else {
                McpRun::Sandbox
            };
        }
        Ok(spec)
    }
}

#[component]
pub fn AddServer(set: ServerAction<SetMcpServer>) -> impl IntoView {
    let fields = RwSignal::new(Fields::default());
    let local_error = RwSignal::new(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match fields.get_untracked().spec() {
            Ok(spec) => {
                local_error.set(None);
                set.dispatch(SetMcpServer { spec });
            }
            Err(error) => local_error.set(Some(error)),
        }
    };
    // The values leave the page once the server is kept.
    Effect::new(move || {
        if matches!(set.value().get(), Some(Ok(()))) {
            fields.set(Fields::default());
        }
    });
    let status = move || {
        local_error.get().or_else(|| {
            set.value()
                .get()
                .and_then(Result::err)
                .map(|e: RivetError| e.to_string())
        })
    };
    let text = move |get: fn(&Fields) -> &String, put: fn(&mut Fields, String)| {
        (
            move || get(&fields.get()).clone(),
            move |value: String| fields.update(|f| put(f, value)),
        )
    };
    let (name, set_name) = text(|f| &f.name, |f, v| f.name = v);
    let (command, set_command) = text(|f| &f.command, |f, v| f.command = v);
    let (args, set_args) = text(|f| &f.args, |f, v| f.args = v);
    let (env, set_env) = text(|f| &f.env, |f, v| f.env = v);
    let (url, set_url) = text(|f| &f.url, |f, v| f.url = v);
    let (headers, set_headers) = text(|f| &f.headers, |f, v| f.headers = v);
    let by_url = move || fields.get().by_url;
    view! {
        <form class="settings-form settings-mcp-add" on:submit=submit>
            <h4>"Add a server"</h4>
            <label><span>"Name"</span>
                <input data-testid="mcp-name" placeholder="docs" autocomplete="off"
                    prop:value=name on:input:target=move |ev| set_name(ev.target().value()) /></label>
            <label><span>"Reached by"</span>
                <select data-testid="mcp-transport"
                    on:change:target=move |ev| { let url = ev.target().value() == "url"; fields.update(|f| f.by_url = url) }>
                    <option value="command" selected=move || !by_url()>"a command (stdio)"</option>
                    <option value="url" selected=by_url>"a URL (streamable HTTP)"</option>
                </select></label>
            <Show when=move || !by_url() fallback=move || view! {
                <label><span>"URL"</span>
                    <input data-testid="mcp-url" placeholder="http://127.0.0.1:3001/mcp"
                        prop:value=url on:input:target=move |ev| set_url(ev.target().value()) /></label>
                <label><span>"Headers (Name: value, one per line)"</span>
                    <textarea data-testid="mcp-headers" rows="2"
                        prop:value=headers on:input:target=move |ev| set_headers(ev.target().value())></textarea></label>
            }>
                <label><span>"Command"</span>
                    <input data-testid="mcp-command" placeholder="npx" autocomplete="off"
                        prop:value=command on:input:target=move |ev| set_command(ev.target().value()) /></label>
                <label><span>"Arguments (one per line)"</span>
                    <textarea data-testid="mcp-args" rows="3"
                        prop:value=args on:input:target=move |ev| set_args(ev.target().value())></textarea></label>
                <label><span>"Variables (NAME=value, one per line)"</span>
                    <textarea data-testid="mcp-env" rows="2"
                        prop:value=env on:input:target=move |ev| set_env(ev.target().value())></textarea></label>
                <label class="settings-check">
                    <input type="checkbox" data-testid="mcp-host" prop:checked=move || fields.get().host
                        on:change:target=move |ev| { let on = ev.target().checked(); fields.update(|f| f.host = on) } />
                    "Run on this machine, outside the sandbox (only a server you trust)"</label>
            </Show>
            <label class="settings-check">
                <input type="checkbox" data-testid="mcp-trusted" prop:checked=move || fields.get().trusted
                    on:change:target=move |ev| { let on = ev.target().checked(); fields.update(|f| f.trusted = on) } />
                "Trusted: its tools run without asking"</label>
            <div class="settings-actions">
                <button type="submit" data-testid="mcp-add">"Add server"</button>
                <span class="settings-status" role="status" data-testid="mcp-status">{move || status().unwrap_or_default()}</span>
            </div>
        </form>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_name_and_value_are_read_and_a_bad_line_is_named() {
        let env = pairs("API_KEY=sk-1=2\n\n  LOG = warn ", '=').unwrap();
        assert_eq!(env["API_KEY"], "sk-1=2");
        assert_eq!(env["LOG"], "warn");
        assert_eq!(
            pairs("Authorization: Bearer x", ':').unwrap()["Authorization"],
            "Bearer x"
        );
        assert!(
            pairs("no separator", '=')
                .unwrap_err()
                .contains("no separator")
        );
        assert!(pairs("=value", '=').is_err());
    }

    #[test]
    fn the_fields_make_a_command_or_a_url_server() {
        let command = Fields {
            name: " docs ".into(),
            command: "node".into(),
            args: "server.js\n\nstdio\n".into(),
            host: true,
            ..Fields::default()
        };
        let spec = command.spec().unwrap();
        assert_eq!(spec.name, "docs");
        assert_eq!(spec.args, ["server.js", "stdio"]);
        assert_eq!(spec.run, McpRun::Host);
        assert_eq!(spec.url, None);
        let url = Fields {
            name: "remote".into(),
            by_url: true,
            url: "http://127.0.0.1:3001/mcp".into(),
            headers: "X-Key: 1".into(),
            ..Fields::default()
        };
        let spec = url.spec().unwrap();
        assert_eq!(spec.command, None);
        assert_eq!(spec.headers["X-Key"], "1");
    }
}
