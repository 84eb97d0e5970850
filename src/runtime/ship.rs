//! What the IDE, the HTTP API and the command line are told about getting
//! an app out of Rivet: a project's git remote (without its token), a push,
//! a pull and how far the two are apart, and its published site. The
//! server makes these (`server::remote`, `server::publish`); the browser
//! shows them.

use serde::{Deserialize, Serialize};

pub mod build;

/// A project's git remote as anyone may see it: without its token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteView {
    pub url: String,
    pub username: Option<String>,
    pub branch: String,
    /// Whether a token is kept.
    pub token_set: bool,
}

/// What a push sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pushed {
    pub commit: String,
    pub branch: String,
}

/// How a pull brought the remote's commits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PullOutcome {
    /// The project already had every commit of the remote.
    UpToDate,
    FastForward,
    /// A merge commit of both.
    Merged,
}

/// What a pull did: the commit the project is at now, how it got there and
/// the files it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pulled {
    pub commit: String,
    pub branch: String,
    pub outcome: PullOutcome,
    pub written: Vec<String>,
    pub removed: Vec<String>,
}

/// The project against its remote: commits the remote lacks (`ahead`) and
/// commits the project lacks (`behind`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitStatus {
    pub branch: String,
    /// The remote branch's commit; `None` while the branch does not exist.
    pub remote_commit: Option<String>,
    pub ahead: u64,
    pub behind: u64,
}

/// Who may open a published site.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Anyone who can reach the address.
    #[default]
    Public,
    /// The owner only, through a link the IDE gives.
    Private,
}

/// One published version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    pub version: u32,
    /// Seconds since the Unix epoch.
    pub created_at: i64,
    pub files: u64,
    pub bytes: u64,
    /// The build that made it (`npm run build`, a `build` action's command),
    /// or `None` for a project's files as they are.
    pub built_with: Option<String>,
}

/// What a publish made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Published {
    pub version: u32,
    pub url: String,
}

/// A project's site as the owner sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteView {
    pub url: String,
    pub live: Option<u32>,
    pub visibility: Visibility,
    pub versions: Vec<Version>,
    /// For a private site: the link that lets the owner's browser in.
    pub owner_link: Option<String>,
}
