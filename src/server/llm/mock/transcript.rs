//! Transcripts: the answers the scripted provider replays, and how it picks
//! one for a request.
//!
//! A `.txt` transcript is an answer, optionally preceded by front matter
//! lines `#! key: value` (the fault keys, plus `match: words…`). A `.json`
//! transcript scripts tool calls for agent mode:
//! `{"match": "…", "fault": {…}, "turns": [{"content": "…", "tool_calls":
//! [{"id": "…", "name": "…", "arguments": {…}}]}, …]}`.

use std::path::Path;

use serde::Deserialize;

use super::fault::Fault;

#[derive(Clone, Debug, PartialEq)]
pub struct Transcript {
    /// The file name without its extension.
    pub name: String,
    pub body: Body,
    /// Words that select this transcript (front matter `match`, else the
    /// answer's first line), besides the words of its name.
    pub keywords: Vec<String>,
    /// The keywords were given (`match`), not taken from the first line: a
    /// message holding all of them picks this transcript outright.
    pub explicit: bool,
    pub fault: Fault,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    Text(String),
    /// One turn per model answer; the turn played is the number of
    /// assistant messages after the last user message.
    Turns(Vec<Turn>),
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptedToolCall>,
    /// What the tool results sent back before this turn must contain, one
    /// piece of text per result, in order (checked when not empty).
    #[serde(default)]
    pub expect_results: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedToolCall {
    pub id: String,
    pub name: String,
    /// Sent as its JSON text.
    pub arguments: serde_json::Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolScript {
    #[serde(default, rename = "match")]
    keywords: String,
    #[serde(default)]
    fault: Fault,
    turns: Vec<Turn>,
}

impl Transcript {
    /// Checks the tool results a request sends back against what the turn
    /// it plays expects; the error says which result differs and how.
    pub fn check_results(&self, turns_taken: usize, results: &[String]) -> Result<(), String> {
        let Body::Turns(turns) = &self.body else {
            return Ok(());
        };
        let turn = &turns[turns_taken.min(turns.len() - 1)];
        for (i, expected) in turn.expect_results.iter().enumerate() {
            let got = results.get(i).map(String::as_str);
            if !got.is_some_and(|got| got.contains(expected.as_str())) {
                return Err(format!(
                    "transcript {:?} turn {}: tool result {} should contain {expected:?}, got {:?}",
                    self.name,
                    turns_taken + 1,
                    i + 1,
                    got.unwrap_or("nothing")
                ));
            }
        }
        Ok(())
    }
}

/// The demo transcripts, compiled in.
const EMBEDDED: &[(&str, &str)] = &[
    ("broken-dep.txt", include_str!("transcripts/broken-dep.txt")),
    (
        "broken-syntax.txt",
        include_str!("transcripts/broken-syntax.txt"),
    ),
    ("edit-app.txt", include_str!("transcripts/edit-app.txt")),
    ("fix-dep.txt", include_str!("transcripts/fix-dep.txt")),
    ("fix-syntax.txt", include_str!("transcripts/fix-syntax.txt")),
    ("todo-react.txt", include_str!("transcripts/todo-react.txt")),
];

pub fn embedded() -> Vec<Transcript> {
    EMBEDDED
        .iter()
        // The embedded files are checked by a test.
        .filter_map(|(name, text)| parse(name, text).ok())
        .collect()
}

/// Every `.txt` and `.json` file of a directory, in name order.
pub fn load_dir(dir: &Path) -> Result<Vec<Transcript>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("txt" | "json")))
        .collect();
    paths.sort();
    let mut transcripts = Vec::with_capacity(paths.len());
    for path in paths {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        transcripts.push(parse(name, &text).map_err(|e| format!("{}: {e}", path.display()))?);
    }
    if transcripts.is_empty() {
        return Err(format!("{}: no .txt or .json transcripts", dir.display()));
    }
    Ok(transcripts)
}

/// Parses one transcript file's text; `file_name` gives its name and kind.
pub fn parse(file_name: &str, text: &str) -> Result<Transcript, String> {
    let (stem, is_json) = match file_name.rsplit_once('.') {
        Some((stem, "json")) => (stem, true),
        Some((stem, _)) => (stem, false),
        None => (file_name, false),
    };
    if is_json {
        let script: ToolScript = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if script.turns.is_empty() {
            return Err("a tool script needs at least one turn".to_owned());
        }
        return Ok(Transcript {
            name: stem.to_owned(),
            explicit: !script.keywords.trim().is_empty(),
            keywords: words(&script.keywords),
            body: Body::Turns(script.turns),
            fault: script.fault,
        });
    }
    let mut fault = Fault::default();
    let mut keywords = None;
    let mut body = text;
    while let Some(line) = body.strip_prefix("#!") {
        let (line, rest) = line.split_once('\n').unwrap_or((line, ""));
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| format!("front matter line {line:?} is not `#! key: value`"))?;
        if key.trim() == "match" {
            keywords = Some(words(value));
        } else {
            fault.set(key, value)?;
        }
        body = rest;
    }
    let first_line = body.lines().next().unwrap_or_default();
    Ok(Transcript {
        name: stem.to_owned(),
        explicit: keywords.as_ref().is_some_and(|k| !k.is_empty()),
        keywords: keywords.unwrap_or_else(|| words(first_line)),
        body: Body::Text(body.to_owned()),
        fault,
    })
}

const STOPWORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "you", "your", "can", "please", "into", "from",
    "will", "then", "are", "was", "have", "has", "not", "but", "all", "use", "using", "want",
    "would", "like", "some", "just", "now", "its", "also", "there", "what", "which",
];

/// Lower-case words of three letters or more, without common filler words.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// Two words match when equal, or when the shorter (three letters or more)
/// starts the longer: "dep" matches "dependency".
fn same_word(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    long.starts_with(short)
}

/// How well a transcript fits a message: a word of its name counts twice,
/// a keyword once.
pub fn score(transcript: &Transcript, message_words: &[String]) -> usize {
    let name_words = words(&transcript.name);
    let hits = |list: &[String]| {
        message_words
            .iter()
            .filter(|m| list.iter().any(|w| same_word(m, w)))
            .count()
    };
    2 * hits(&name_words) + hits(&transcript.keywords)
}

/// The transcript whose `match` words the message holds, all of them (the
/// one with most words, then the first), so an error quoted in an automatic
/// fix request picks the transcript that fixes it; else the best-scoring
/// transcript (the first on a tie), or `None` when no word matches.
pub fn best_match(transcripts: &[Transcript], message: &str) -> Option<usize> {
    let message_words = words(message);
    let holds_all = |t: &Transcript| {
        t.explicit
            && t.keywords
                .iter()
                .all(|k| message_words.iter().any(|m| same_word(m, k)))
    };
    let full = (0..transcripts.len())
        .filter(|&i| holds_all(&transcripts[i]))
        .max_by_key(|&i| (transcripts[i].keywords.len(), std::cmp::Reverse(i)));
    if full.is_some() {
        return full;
    }
    let mut best: Option<(usize, usize)> = None;
    for (i, t) in transcripts.iter().enumerate() {
        let s = score(t, &message_words);
        if s > 0 && best.is_none_or(|(_, b)| s > b) {
            best = Some((i, s));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_transcript_parses() {
        assert_eq!(embedded().len(), EMBEDDED.len());
        for (name, text) in EMBEDDED {
            let t = parse(name, text).unwrap();
            let answer: String = text
                .split_inclusive('\n')
                .filter(|l| !l.starts_with("#!"))
                .collect();
            assert_eq!(t.body, Body::Text(answer), "{name}");
            assert_eq!(t.fault, Fault::default(), "{name}");
        }
    }

    #[test]
    fn messages_pick_their_transcript() {
        let transcripts = embedded();
        let check = |message: &str, expect: Option<&str>| {
            let got = best_match(&transcripts, message).map(|i| transcripts[i].name.as_str());
            assert_eq!(got, expect, "{message}");
        };
        check("build a todo app", Some("todo-react"));
        check("Build a TODO app with React", Some("todo-react"));
        check("add a clear completed button", Some("edit-app"));
        check("fix the dependency", Some("fix-dep"));
        check("fix the syntax error", Some("fix-syntax"));
        check(
            "build a todo app with a broken dependency",
            Some("broken-dep"),
        );
        check("hello there", None);
        check("", None);
    }

    #[test]
    fn a_fix_request_quoting_the_error_picks_the_fix() {
        let transcripts = embedded();
        let check = |message: &str, expect: &str| {
            let got = best_match(&transcripts, message).map(|i| transcripts[i].name.as_str());
            assert_eq!(got, Some(expect), "{message}");
        };
        check("broken dep", "broken-dep");
        check("broken syntax", "broken-syntax");
        // The demo's misspelt plugin, as npm reports it, with package.json
        // (which names react and the app many times) quoted after it.
        check(
            "## The install failed: `npm install` (exit code 1)\n\
             npm error 404 Not Found - GET https://registry.npmjs.org/@vitejs%2fplugin-recat\n\
             npm error 404  '@vitejs/plugin-recat@^5.0.0' is not in this registry.\n\
             ### Current content of package.json\n\
             {\"name\": \"todo-app\", \"dependencies\": {\"react\": \"^19\", \"react-dom\": \"^19\"}}",
            "fix-dep",
        );
        check(
            "## The dev server reported a compile error\n\
             /home/project/src/App.jsx:86:9: ERROR: Expected \")\" but found \"}\"\n\
             Files it names: src/App.jsx\n### Current content of src/App.jsx\n\
             export default function App() { const todos = []; return <main className=\"app\">…",
            "fix-syntax",
        );
    }

    #[test]
    fn front_matter_sets_faults_and_keywords() {
        let t = parse(
            "slow.txt",
            "#! status: 503\n#! retry-after: 2\n#! match: weather, forecast\nIt is sunny.\n",
        )
        .unwrap();
        assert_eq!(t.fault.status, Some(503));
        assert_eq!(t.fault.retry_after, Some(2));
        assert_eq!(t.keywords, ["weather", "forecast"]);
        assert_eq!(t.body, Body::Text("It is sunny.\n".into()));
        let err = parse("bad.txt", "#! nonsense\nx").unwrap_err();
        assert!(err.contains("#! key: value"), "{err}");
        let err = parse("bad.txt", "#! speed: 3\nx").unwrap_err();
        assert!(err.contains("unknown fault key"), "{err}");
    }

    #[test]
    fn tool_scripts_parse() {
        let t = parse(
            "list-files.json",
            r#"{"match": "list files", "turns": [
                {"content": "Looking.", "tool_calls": [{"id": "c1", "name": "ls", "arguments": {"dir": "."}}]},
                {"content": "Two files."}
            ]}"#,
        )
        .unwrap();
        assert_eq!(t.name, "list-files");
        let Body::Turns(turns) = &t.body else {
            panic!("not turns")
        };
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].tool_calls[0].arguments["dir"], ".");
        assert!(parse("x.json", r#"{"turns": []}"#).is_err());
    }

    #[test]
    fn directories_load_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.txt"), "B").unwrap();
        std::fs::write(dir.path().join("a.txt"), "A").unwrap();
        std::fs::write(dir.path().join("notes.md"), "ignored").unwrap();
        let names: Vec<String> = load_dir(dir.path())
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["a", "b"]);
        let empty = tempfile::tempdir().unwrap();
        assert!(load_dir(empty.path()).is_err());
    }
}
