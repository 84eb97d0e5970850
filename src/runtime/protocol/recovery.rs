//! How an action that slipped out of the bolt format was recovered. The
//! action card shows the sentence, so the person knows the model did not
//! answer in the format and where the path or command came from.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// A markdown fence with the path in a `title=`, `filename=`, `file=` or
    /// `path=` of its info string.
    FenceTitle,
    /// A markdown fence whose info string is the path (```` ```src/a.js ````,
    /// ```` ```js:src/a.js ````, ```` ```js src/a.js ````).
    FenceInfo,
    /// A markdown fence after a line that is only the path (a heading, a bold
    /// or backticked path, `File: path`).
    HeadingBefore,
    /// A markdown fence whose first line is a comment naming the path.
    FirstLineComment,
    /// A shell fence of install and run commands.
    ShellFence,
    /// Another builder's tag (`<dyad-write path=…>`, `<file path=…>`).
    ForeignTag,
    /// A `boltAction` with `path=`, `filepath=` or `file=` for `filePath=`.
    MisspeltAttribute,
    /// A `boltAction` outside any `boltArtifact`.
    NoArtifact,
    /// A `boltArtifact` inside a markdown code fence.
    FencedArtifact,
    /// Tags written as `&lt;boltAction …&gt;`.
    HtmlEscaped,
    /// The answer ended inside the action, whose content looks whole.
    CutOff,
    /// A snippet after a sentence that names a file: never written, only
    /// reported when it leaves code out.
    PathInProse,
}

impl Recovery {
    /// What the action card says about it.
    pub fn sentence(self) -> &'static str {
        match self {
            Recovery::FenceTitle => "recovered from a markdown fence: path from the title",
            Recovery::FenceInfo => "recovered from a markdown fence: path from the info string",
            Recovery::HeadingBefore => "recovered from a markdown fence: path from the line before",
            Recovery::FirstLineComment => {
                "recovered from a markdown fence: path from the comment on its first line"
            }
            Recovery::ShellFence => "recovered from a shell code block",
            Recovery::ForeignTag => "recovered from another builder's tag",
            Recovery::MisspeltAttribute => "recovered from a misspelt filePath attribute",
            Recovery::NoArtifact => "recovered from an action outside an artifact",
            Recovery::FencedArtifact => "recovered from an artifact inside a code fence",
            Recovery::HtmlEscaped => "recovered from HTML-escaped tags",
            Recovery::CutOff => "the answer ended inside this action; its content looks whole",
            Recovery::PathInProse => "a code block for a file named in the sentence before it",
        }
    }
}
