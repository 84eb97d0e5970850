//! Rewrites applied to a shell action before it runs, as bolt.diy does and
//! models expect: `rm` of a file that does not exist becomes `rm -f`, and `cd`
//! into a folder that does not exist creates it first. Every rewrite is
//! reported, so the person sees what actually ran.
//!
//! Only simple segments are touched: words without quotes, globs or
//! variables, joined by `&&` or `;`. Anything else runs as written.

use std::collections::BTreeSet;

/// A command as it will run, and why it differs from what the model wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    pub command: String,
    pub notes: Vec<String>,
}

/// One `&&`/`;`-separated piece of a command line, with the separator after it.
struct Segment<'a> {
    words: Vec<&'a str>,
    separator: &'a str,
}

fn segments(command: &str) -> Vec<Segment<'_>> {
    let mut segments = Vec::new();
    let mut rest = command;
    loop {
        let next = [
            rest.find("&&").map(|i| (i, 2)),
            rest.find(';').map(|i| (i, 1)),
        ]
        .into_iter()
        .flatten()
        .min();
        match next {
            Some((at, len)) => {
                segments.push(Segment {
                    words: rest[..at].split_whitespace().collect(),
                    separator: &rest[at..at + len],
                });
                rest = &rest[at + len..];
            }
            None => {
                segments.push(Segment {
                    words: rest.split_whitespace().collect(),
                    separator: "",
                });
                return segments;
            }
        }
    }
}

/// Words a shell would expand or treat specially; such segments are left alone.
fn is_plain(word: &str) -> bool {
    !word.is_empty()
        && !word.contains([
            '\'', '"', '`', '$', '*', '?', '[', '~', '\\', '|', '>', '<', '(', ')', '{',
        ])
}

/// `dir` joined with the relative `path`, normalised; `None` when it is
/// absolute or climbs out of the project.
fn join(dir: &str, path: &str) -> Option<String> {
    if path.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(parts.join("/"))
}

/// What a segment does to the paths this module cares about.
enum Step {
    Rm { targets: Vec<String> },
    Cd { target: String },
    Other,
}

fn step(words: &[&str], dir: &str) -> Step {
    if !words.iter().all(|w| is_plain(w)) {
        return Step::Other;
    }
    match words {
        ["rm", args @ ..] => {
            let forced = args
                .iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('f'))
                || args.contains(&"--force");
            let targets: Option<Vec<String>> = args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .map(|a| join(dir, a))
                .collect();
            match targets {
                Some(targets) if !forced && !targets.is_empty() => Step::Rm { targets },
                _ => Step::Other,
            }
        }
        ["cd", target] => join(dir, target).map_or(Step::Other, |target| Step::Cd { target }),
        _ => Step::Other,
    }
}

/// The project paths the command's `rm` and `cd` segments name, whose
/// existence decides the rewrite.
pub fn referenced_paths(command: &str) -> BTreeSet<String> {
    let mut dir = String::new();
    let mut paths = BTreeSet::new();
    for segment in segments(command) {
        match step(&segment.words, &dir) {
            Step::Rm { targets } => paths.extend(targets),
            Step::Cd { target } => {
                paths.insert(target.clone());
                dir = target;
            }
            Step::Other => {}
        }
    }
    paths
}

/// The rewritten command, given which of its referenced paths are missing;
/// `None` when it runs as written.
pub fn rewrite(command: &str, missing: &BTreeSet<String>) -> Option<Rewrite> {
    let mut dir = String::new();
    let mut notes = Vec::new();
    let mut out = String::new();
    for segment in segments(command) {
        let text = segment.words.join(" ");
        let rewritten = match step(&segment.words, &dir) {
            Step::Rm { targets } => {
                let absent: Vec<&String> =
                    targets.iter().filter(|t| missing.contains(*t)).collect();
                if absent.is_empty() {
                    None
                } else {
                    let names: Vec<&str> = absent.iter().map(|s| s.as_str()).collect();
                    notes.push(format!("`rm -f`: {} does not exist", names.join(", ")));
                    Some(format!("rm -f {}", segment.words[1..].join(" ")))
                }
            }
            Step::Cd { target } => {
                let created = missing.contains(&target);
                dir = target;
                if created {
                    let folder = segment.words[1];
                    notes.push(format!("created the missing folder {folder} before `cd`"));
                    Some(format!("mkdir -p {folder} && cd {folder}"))
                } else {
                    None
                }
            }
            Step::Other => None,
        };
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(rewritten.as_deref().unwrap_or(&text));
        if !segment.separator.is_empty() {
            out.push(' ');
            out.push_str(segment.separator);
        }
    }
    (!notes.is_empty()).then(|| Rewrite {
        command: out.trim_end().to_owned(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(command: &str, missing: &[&str], expected: Option<&str>) {
        let missing: BTreeSet<String> = missing.iter().map(|s| s.to_string()).collect();
        let got = rewrite(command, &missing).map(|r| r.command);
        assert_eq!(
            got.as_deref(),
            expected,
            "{command:?} with {missing:?} missing"
        );
    }

    #[test]
    fn rm_of_a_missing_file_is_forced() {
        check(
            "rm dist/old.js",
            &["dist/old.js"],
            Some("rm -f dist/old.js"),
        );
        check("rm -r build", &["build"], Some("rm -f -r build"));
        check("rm a.js", &[], None);
        check("rm -f gone.js", &["gone.js"], None);
        check("rm -rf gone", &["gone"], None);
        check("rm \"a b\"", &["a b"], None);
        check("rm *.log", &["*.log"], None);
    }

    #[test]
    fn cd_into_a_missing_folder_creates_it() {
        check(
            "cd app && npm install",
            &["app"],
            Some("mkdir -p app && cd app && npm install"),
        );
        check("cd app && npm install", &[], None);
        check(
            "cd app; rm x.js",
            &["app/x.js"],
            Some("cd app ; rm -f x.js"),
        );
        check("cd /tmp", &[], None);
        check("cd ..", &[], None);
    }

    #[test]
    fn referenced_paths_follow_cd() {
        let paths: Vec<String> = referenced_paths("cd web && rm a.js ../b.js && cd src")
            .into_iter()
            .collect();
        assert_eq!(paths, ["b.js", "web", "web/a.js", "web/src"]);
        assert!(referenced_paths("npm install && npm run build").is_empty());
    }

    #[test]
    fn notes_say_what_changed() {
        let missing: BTreeSet<String> = ["x".to_owned()].into();
        let rewrite = rewrite("rm x", &missing).unwrap();
        assert_eq!(rewrite.notes, ["`rm -f`: x does not exist"]);
    }
}
