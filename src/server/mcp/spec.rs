//! A configured MCP server, checked: a name the model's tool names can
//! carry, and exactly one way to reach it (a command or a URL). The
//! servers the owner adds through the API or the settings panel are kept in
//! `<data_dir>/mcp/servers.json` (0600, written atomically), like the LLM
//! keys, because their variables and headers are often secrets; what the
//! browser and the API are shown ([`ServerView`]) names those variables and
//! headers without their values.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::runtime::mcp::{McpRun, McpServerSpec, ServerView};
use crate::server::private_files;

/// The longest server name: `<server>__<tool>` must fit the 64 characters
/// providers take as a function name.
pub const MAX_NAME: usize = 24;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpecError {
    #[error(
        "an MCP server's name is 1 to {MAX_NAME} letters, digits, - and _ (and not \"__\"); {0:?} is not"
    )]
    Name(String),
    #[error("MCP server {0:?} needs either a command (stdio) or a url (streamable HTTP), not both")]
    Transport(String),
    #[error("MCP server {name:?}: {message}")]
    Invalid { name: String, message: String },
}

/// How the IDE reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        run: McpRun,
    },
    Http {
        url: url::Url,
        headers: BTreeMap<String, String>,
    },
}

/// A server as the IDE uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub name: String,
    pub transport: Transport,
    /// Its calls run without asking.
    pub trusted: bool,
    /// Tools whose calls run without asking.
    pub trusted_tools: Vec<String>,
    /// Set in the configuration file (the API cannot remove it).
    pub from_config: bool,
}

impl Server {
    pub fn check(spec: &McpServerSpec, from_config: bool) -> Result<Server, SpecError> {
        check_name(&spec.name)?;
        let invalid = |message: String| SpecError::Invalid {
            name: spec.name.clone(),
            message,
        };
        let transport = match (&spec.command, &spec.url) {
            (Some(command), None) if !command.trim().is_empty() => {
                if !spec.headers.is_empty() {
                    return Err(invalid("headers are for a url; a command takes env".into()));
                }
                for name in spec.env.keys() {
                    check_variable(name).map_err(invalid)?;
                }
                Transport::Stdio {
                    command: command.clone(),
                    args: spec.args.clone(),
                    env: spec.env.clone(),
                    run: spec.run,
                }
            }
            (None, Some(raw)) => {
                if !spec.args.is_empty() || !spec.env.is_empty() {
                    return Err(invalid("args and env are for a command".into()));
                }
                let url = url::Url::parse(raw).map_err(|e| invalid(format!("url {raw:?}: {e}")))?;
                if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                    return Err(invalid(format!("url {raw:?} is not an http(s) address")));
                }
                for (name, value) in &spec.headers {
                    check_header(name, value).map_err(invalid)?;
                }
                Transport::Http {
                    url,
                    headers: spec.headers.clone(),
                }
            }
            _ => return Err(SpecError::Transport(spec.name.clone())),
        };
        Ok(Server {
            name: spec.name.clone(),
            transport,
            trusted: spec.trusted,
            trusted_tools: spec.trusted_tools.clone(),
            from_config,
        })
    }

    /// Whether a call of `tool` runs without asking.
    pub fn trusts(&self, tool: &str) -> bool {
        self.trusted || self.trusted_tools.iter().any(|t| t == tool)
    }

    /// The spec it was made from, for the file it is kept in.
    pub fn spec(&self) -> McpServerSpec {
        let mut spec = McpServerSpec {
            name: self.name.clone(),
            trusted: self.trusted,
            trusted_tools: self.trusted_tools.clone(),
            ..McpServerSpec::default()
        };
        match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                run,
            } => {
                spec.command = Some(command.clone());
                spec.args = args.clone();
                spec.env = env.clone();
                spec.run = *run;
            }
            Transport::Http { url, headers } => {
                spec.url = Some(url.to_string());
                spec.headers = headers.clone();
            }
        }
        spec
    }

    /// What the browser and the API see: no variable or header values.
    pub fn view(&self) -> ServerView {
        let (transport, command, args, run, url) = match &self.transport {
            Transport::Stdio {
                command, args, run, ..
            } => (
                "stdio",
                Some(command.clone()),
                args.clone(),
                Some(*run),
                None,
            ),
            Transport::Http { url, .. } => ("http", None, Vec::new(), None, Some(url.to_string())),
        };
        let (env, headers) = match &self.transport {
            Transport::Stdio { env, .. } => (env.keys().cloned().collect(), Vec::new()),
            Transport::Http { headers, .. } => (Vec::new(), headers.keys().cloned().collect()),
        };
        ServerView {
            name: self.name.clone(),
            transport: transport.to_owned(),
            command,
            args,
            run,
            url,
            env,
            headers,
            trusted: self.trusted,
            trusted_tools: self.trusted_tools.clone(),
            from_config: self.from_config,
        }
    }
}

pub fn check_name(name: &str) -> Result<(), SpecError> {
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.contains("__")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if fine {
        Ok(())
    } else {
        Err(SpecError::Name(name.to_owned()))
    }
}

fn check_variable(name: &str) -> Result<(), String> {
    let fine = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if fine {
        Ok(())
    } else {
        Err(format!("{name:?} is not a variable name"))
    }
}

fn check_header(name: &str, value: &str) -> Result<(), String> {
    axum::http::HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("{name:?} is not a header name"))?;
    axum::http::HeaderValue::from_str(value)
        .map_err(|_| format!("the value of header {name:?} is not a header value"))?;
    Ok(())
}

/// The servers added through the API, in `<data_dir>/mcp/servers.json`.
#[derive(Debug, Clone)]
pub struct SavedServers {
    file: PathBuf,
}

impl SavedServers {
    pub fn new(data_dir: &Path) -> SavedServers {
        SavedServers {
            file: data_dir.join("mcp").join("servers.json"),
        }
    }

    /// The saved servers; a file that does not parse is an error, never
    /// an empty list.
    pub fn read(&self) -> io::Result<Vec<McpServerSpec>> {
        private_files::read_json(&self.file).map(Option::unwrap_or_default)
    }

    pub fn write(&self, specs: &[McpServerSpec]) -> io::Result<()> {
        private_files::write_json(&self.file, &specs)
    }
}
