//! MCP tools as the agent sees them: named `<server>__<tool>`, their
//! schemas as the server gave them, fitted to the context budget (the least
//! recently used servers' tools are left out first), and their results
//! turned into the text the model reads, capped like the built-in tools'.

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ResourceContents, Tool};
use serde_json::Value;

use super::McpService;
use super::spec::Server;
use crate::runtime::host::Runtime;
use crate::runtime::project::ProjectId;
use crate::server::agent::tools::{MAX_OUTPUT_CHARS, ToolOutput, ToolSource, cap_middle};
use crate::server::llm::budget::estimate_text;
use crate::server::llm::client::{ImagePart, ToolSpec};

/// Between the server's name and the tool's.
pub const SEPARATOR: &str = "__";
/// The longest function name providers take.
const MAX_NAME: usize = 64;

/// The name the model calls a server's tool by: characters providers do
/// not take become `_`, and the name is cut to 64 characters.
pub fn exposed_name(server: &str, tool: &str) -> String {
    let tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = format!("{server}{SEPARATOR}{tool}");
    name.truncate(MAX_NAME);
    name
}

/// One tool offered to the model.
#[derive(Clone, Debug)]
pub struct Offered {
    pub exposed: String,
    pub server: String,
    /// The tool's own name, as the server calls it.
    pub tool: String,
    pub trusted: bool,
    pub spec: ToolSpec,
}

impl Offered {
    pub fn new(server: &Server, tool: &Tool) -> Offered {
        let description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .unwrap_or_default();
        let exposed = exposed_name(&server.name, &tool.name);
        Offered {
            spec: ToolSpec {
                name: exposed.clone(),
                description: format!("[MCP server {}] {description}", server.name),
                parameters: Value::Object((*tool.input_schema).clone()),
            },
            exposed,
            server: server.name.clone(),
            tool: tool.name.to_string(),
            trusted: server.trusts(&tool.name),
        }
    }

    pub fn tokens(&self) -> u32 {
        let schema = self.spec.parameters.to_string();
        estimate_text(&self.spec.name)
            .saturating_add(estimate_text(&self.spec.description))
            .saturating_add(estimate_text(&schema))
    }
}

/// One server's tools, with when it was last used (`None`: never).
pub struct ServerTools {
    pub server: String,
    pub last_used: Option<std::time::Instant>,
    pub tools: Vec<Offered>,
}

/// The tools that fit `budget` tokens: whole servers, the most recently
/// used first (then in the order given), and the names of those left out.
pub fn fit(mut servers: Vec<ServerTools>, budget: u32) -> (Vec<Offered>, Vec<String>) {
    // Stable: servers never used keep their configured order, after the used ones.
    servers.sort_by_key(|s| std::cmp::Reverse(s.last_used));
    let mut used = 0u32;
    let (mut kept, mut left) = (Vec::new(), Vec::new());
    for server in servers {
        let cost = server
            .tools
            .iter()
            .map(Offered::tokens)
            .fold(0, u32::saturating_add);
        if used.saturating_add(cost) <= budget {
            used = used.saturating_add(cost);
            kept.extend(server.tools);
        } else {
            left.push(server.server);
        }
    }
    (kept, left)
}

/// A tool's result as the model reads it: text as it is, resources as
/// their text, images attached for a model that takes them (`vision`) and
/// described otherwise, other binary parts described; capped like the
/// built-in tools' output.
pub fn result_text(result: &CallToolResult, vision: bool) -> ToolOutput {
    let mut images = Vec::new();
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Image(image) if vision => {
                images.push(ImagePart {
                    media_type: image.mime_type.clone(),
                    base64: image.data.clone(),
                });
                format!(
                    "[image, {}, {} bytes: attached below]",
                    image.mime_type,
                    decoded_len(&image.data)
                )
            }
            other => block_text(other),
        })
        .collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let text = cap_middle(&parts.join("\n"), MAX_OUTPUT_CHARS);
    let failed = result.is_error == Some(true);
    ToolOutput {
        text: if failed {
            format!("Error: {text}")
        } else {
            text
        },
        ok: !failed,
        port: None,
        images,
    }
}

fn decoded_len(base64: &str) -> usize {
    base64::engine::general_purpose::STANDARD
        .decode(base64)
        .map_or(base64.len() * 3 / 4, |bytes| bytes.len())
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!(
            "[image, {}, {} bytes: not shown, this model is sent text only]",
            image.mime_type,
            decoded_len(&image.data)
        ),
        ContentBlock::Audio(audio) => format!(
            "[audio, {}, {} bytes: not shown]",
            audio.mime_type,
            decoded_len(&audio.data)
        ),
        ContentBlock::Resource(resource) => match &resource.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}, {}, {} bytes of binary data: not shown]",
                mime_type.as_deref().unwrap_or("unknown type"),
                decoded_len(blob)
            ),
            _ => "[resource of a kind this client does not know]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link {} ({})]", link.uri, link.name),
        _ => "[content of a kind this client does not know]".to_owned(),
    }
}

/// The arguments the model wrote, as the object MCP sends; an empty string
/// is no arguments.
pub fn arguments(raw: &str) -> Result<Option<JsonObject>, String> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(object)) => Ok(Some(object)),
        Ok(Value::Null) => Ok(None),
        Ok(_) => Err("the arguments must be a JSON object".to_owned()),
        Err(e) => Err(format!("the arguments are not JSON: {e}")),
    }
}

/// The MCP tools of one agent run on one project.
pub struct McpTools {
    pub(super) service: Arc<McpService>,
    pub(super) project: ProjectId,
    pub(super) runtime: Arc<dyn Runtime>,
    pub(super) offered: Vec<Offered>,
    /// The model takes images: they are attached, not only described.
    pub(super) vision: bool,
}

impl McpTools {
    fn find(&self, name: &str) -> Option<&Offered> {
        self.offered.iter().find(|o| o.exposed == name)
    }
}

#[async_trait]
impl ToolSource for McpTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.offered.iter().map(|o| o.spec.clone()).collect()
    }

    fn owns(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    fn needs_approval(&self, name: &str) -> bool {
        self.find(name).is_none_or(|o| !o.trusted)
    }

    fn describe(&self, name: &str, arguments: &str) -> String {
        let Some(offered) = self.find(name) else {
            return name.to_owned();
        };
        let place = self.service.place(&offered.server);
        let shown = serde_json::from_str::<Value>(arguments)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| arguments.to_owned());
        format!(
            "MCP server: {} ({place})\ntool: {}\narguments:\n{shown}",
            offered.server, offered.tool
        )
    }

    async fn call(&self, name: &str, raw: &str) -> ToolOutput {
        let Some(offered) = self.find(name) else {
            return error(format!("there is no tool named {name:?}"));
        };
        let arguments = match arguments(raw) {
            Ok(arguments) => arguments,
            Err(message) => return error(format!("invalid arguments: {message}")),
        };
        let result = self
            .service
            .call(
                &offered.server,
                &offered.tool,
                arguments,
                &self.project,
                &self.runtime,
            )
            .await;
        match result {
            Ok(result) => result_text(&result, self.vision),
            Err(e) => error(e.to_string()),
        }
    }
}

fn error(text: String) -> ToolOutput {
    ToolOutput {
        text: format!("Error: {text}"),
        ok: false,
        port: None,
        images: Vec::new(),
    }
}
