//! Building a project's site, one rule wherever it runs: the server builds
//! a sandbox project, the browser tab a WebContainer project, both through
//! the [`Runtime`] trait. Which command builds it ([`plan`]), what a build
//! must leave behind ([`build`]: an `index.html` in one of
//! [`OUTPUT_DIRS`]) and which of its files a site holds ([`site_files`]).

use std::time::Duration;

use futures::{FutureExt, StreamExt};

use crate::runtime::host::{CommandSpec, EntryKind, EventStream, Runtime, RuntimeError};
use crate::runtime::protocol::ActionKind;
use crate::runtime::session::SessionState;

/// The folders a build's output is looked for in, in order.
pub const OUTPUT_DIRS: &[&str] = &["dist", "build", "out"];
/// How much of a failed build's output its error keeps, in characters.
pub const ERROR_TAIL: usize = 2_000;

/// How a project becomes a site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildPlan {
    /// Its files as they are: it has an `index.html` and nothing builds it.
    AsIs,
    /// This command builds it.
    Command(String),
}

/// Why a project could not be built into a site.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildFailure {
    #[error("{0}")]
    NothingToPublish(String),
    #[error("{0}")]
    Failed(String),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// The latest `build` action's command.
pub fn build_action(state: &SessionState) -> Option<String> {
    state
        .artifacts
        .iter()
        .rev()
        .flat_map(|artifact| artifact.actions.iter().rev())
        .find(|action| action.kind == ActionKind::Build && action.closed)
        .map(|action| action.content.trim().to_owned())
        .filter(|command| !command.is_empty())
}

/// The project's latest `build` action, else `npm run build` when
/// package.json has a build script, else its files as they are when it has
/// an `index.html` at its root.
pub async fn plan(
    runtime: &dyn Runtime,
    build_action: Option<String>,
) -> Result<BuildPlan, BuildFailure> {
    if let Some(command) = build_action {
        return Ok(BuildPlan::Command(command));
    }
    if has_build_script(runtime).await {
        return Ok(BuildPlan::Command("npm run build".to_owned()));
    }
    if runtime.read_file("index.html").await.is_ok() {
        return Ok(BuildPlan::AsIs);
    }
    let why = "it has no build script and no index.html at its root";
    Err(BuildFailure::NothingToPublish(why.to_owned()))
}

/// Whether package.json has a `build` script.
async fn has_build_script(runtime: &dyn Runtime) -> bool {
    let Ok(bytes) = runtime.read_file("package.json").await else {
        return false;
    };
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .is_ok_and(|package| package["scripts"]["build"].is_string())
}

/// Runs `command` (after `npm install` when the project has a package.json
/// and no `node_modules`), each within `timeout`, and answers the folder
/// the site is in. Every chunk of output goes to `output` as well.
pub async fn build<F: Fn(&[u8])>(
    runtime: &dyn Runtime,
    command: &str,
    timeout: Duration,
    output: &F,
) -> Result<String, BuildFailure> {
    let spec = |command: &str| CommandSpec::command(command).with_timeout(timeout);
    let installed = runtime.list("node_modules").await.is_ok();
    if !installed && runtime.read_file("package.json").await.is_ok() {
        run(runtime, spec("npm install"), output).await?;
    }
    run(runtime, spec(command), output).await?;
    for dir in OUTPUT_DIRS {
        let index = format!("{dir}/index.html");
        if runtime.read_file(&index).await.is_ok() {
            return Ok((*dir).to_owned());
        }
    }
    let why = format!(
        "`{command}` wrote no {} with an index.html in it",
        OUTPUT_DIRS.join("/, ") + "/"
    );
    Err(BuildFailure::NothingToPublish(why))
}

/// Runs a command to its end; a failure keeps the end of its output.
async fn run<F: Fn(&[u8])>(
    runtime: &dyn Runtime,
    spec: CommandSpec,
    output: &F,
) -> Result<(), BuildFailure> {
    let command = spec.command.clone();
    let process = runtime.spawn(spec).await?;
    let mut reading = Box::pin(read_tail(process.take_output(), output)).fuse();
    let ended = {
        let waiting = process.wait().fuse();
        futures::pin_mut!(waiting);
        futures::select! {
            status = waiting => Err(status),
            tail = reading => Ok(tail),
        }
    };
    let (status, tail) = match ended {
        Ok(tail) => (process.wait().await, tail),
        // A runtime may end a process's output only when the process goes
        // (the browser's does): let it go, and read what is left.
        Err(status) => {
            drop(process);
            (status, reading.await)
        }
    };
    if status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&tail);
    let why = status
        .message
        .clone()
        .unwrap_or_else(|| format!("exit code {:?}", status.code));
    let said = last_chars(&said, ERROR_TAIL).trim();
    Err(BuildFailure::Failed(format!(
        "`{command}` failed ({why}):\n{said}"
    )))
}

/// Hands each chunk of `stream` to `output`, to its end; the last of it.
async fn read_tail<F: Fn(&[u8])>(stream: Option<EventStream<Vec<u8>>>, output: &F) -> Vec<u8> {
    let mut tail = Vec::new();
    let Some(mut stream) = stream else {
        return tail;
    };
    while let Some(chunk) = stream.next().await {
        output(&chunk);
        tail.extend_from_slice(&chunk);
        let excess = tail.len().saturating_sub(ERROR_TAIL * 2);
        tail.drain(..excess);
    }
    tail
}

/// The last `n` characters of `text`.
fn last_chars(text: &str, n: usize) -> &str {
    let from = text
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(at, _)| at);
    &text[from..]
}

/// A file of a site: where it is in the project, and in the site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteFile {
    pub path: String,
    pub relative: String,
}

/// Every file under `root` that a site holds ([`kept_in_site`]), folder by
/// folder. It reads each folder itself, not the project's listing: the
/// listing leaves out the insides of `build/`, `dist/` and the like, which
/// a built site may well have. Symbolic links are left out.
pub async fn site_files(runtime: &dyn Runtime, root: &str) -> Result<Vec<SiteFile>, RuntimeError> {
    let prefix = if root.is_empty() {
        String::new()
    } else {
        format!("{root}/")
    };
    let mut files = Vec::new();
    let mut folders = vec![root.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in runtime.list(&folder).await? {
            let Some(relative) = entry.path.strip_prefix(&prefix) else {
                continue;
            };
            let name = relative.rsplit('/').next().unwrap_or(relative);
            if !kept_in_site(name) {
                continue;
            }
            match entry.kind {
                EntryKind::Dir => folders.push(entry.path),
                EntryKind::File => files.push(SiteFile {
                    relative: relative.to_owned(),
                    path: entry.path,
                }),
                _ => {}
            }
        }
    }
    Ok(files)
}

/// A site file's bytes; `None` when it was removed since the listing
/// (then it is not part of the site).
pub async fn read_site_file(
    runtime: &dyn Runtime,
    file: &SiteFile,
) -> Result<Option<Vec<u8>>, RuntimeError> {
    match runtime.read_file(&file.path).await {
        Ok(content) => Ok(Some(content)),
        Err(RuntimeError::NotFound { .. }) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Whether a file or folder of this name goes into a site: not hidden ones
/// (`.env`, `.git`…) and not dependencies.
pub fn kept_in_site(name: &str) -> bool {
    !name.starts_with('.') && name != "node_modules" && name != "bower_components"
}

#[cfg(test)]
mod tests;
