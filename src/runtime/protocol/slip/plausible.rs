//! Whether content the answer's end cut off is plausibly whole: brackets
//! balanced, markup tags closed, the last character not one that continues
//! an expression. A file that fails is not written (the action stays
//! truncated); prose files (`.md`, `.txt`) cannot be judged and never pass.

/// Elements that have no closing tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];
/// Elements whose content is not markup.
const RAW_TEXT: &[&str] = &["script", "style"];

/// Whether the cut-off content of the file `path` looks whole.
pub(in crate::runtime::protocol) fn complete_file(path: &str, content: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, ext)| ext);
    let ext = ext.to_ascii_lowercase();
    let t = content.trim_end();
    if t.is_empty() || matches!(ext.as_str(), "md" | "mdx" | "txt" | "rst") {
        return false;
    }
    let markup = matches!(
        ext.as_str(),
        "html" | "htm" | "xml" | "svg" | "vue" | "svelte"
    );
    ends_cleanly(t) && brackets_balance(t) && (!markup || tags_balance(t))
}

/// Whether a cut-off edit ends with a whole SEARCH/REPLACE block.
pub(in crate::runtime::protocol) fn complete_edit(content: &str) -> bool {
    let last = content.trim_end().lines().last().unwrap_or("").trim();
    let arrows = last.bytes().take_while(|&b| b == b'>').count();
    (5..=9).contains(&arrows) && last[arrows..].trim() == "REPLACE"
}

/// The last line does not stop inside a string or before an operand.
fn ends_cleanly(t: &str) -> bool {
    let last_line = t.lines().last().unwrap_or("");
    let quotes_closed = |q: char| last_line.matches(q).count().is_multiple_of(2);
    let last = t.chars().last().unwrap_or(' ');
    quotes_closed('"') && quotes_closed('`') && !",=([{+\\|&<:".contains(last)
}

/// `()`, `[]` and `{}` nest and close, in order.
fn brackets_balance(t: &str) -> bool {
    let mut open = Vec::new();
    for b in t.bytes() {
        match b {
            b'(' | b'[' | b'{' => open.push(b),
            b')' | b']' | b'}' => {
                let want = match b {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if open.pop() != Some(want) {
                    return false;
                }
            }
            _ => {}
        }
    }
    open.is_empty()
}

/// Every element opened is closed, in order (void elements, `<… />`,
/// comments, doctypes and the text of scripts and styles aside).
fn tags_balance(t: &str) -> bool {
    let mut open: Vec<String> = Vec::new();
    let mut rest = t;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        let Some(gt) = rest.find('>') else {
            return false;
        };
        let tag = &rest[..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            if open.pop().as_deref() != Some(tag_name(name).as_str()) {
                return false;
            }
            continue;
        }
        let name = tag_name(tag);
        if name.is_empty() || tag.ends_with('/') || VOID.contains(&name.as_str()) {
            continue;
        }
        if RAW_TEXT.contains(&name.as_str()) {
            match rest.find(&format!("</{name}")) {
                Some(end) => rest = &rest[end..],
                None => return false,
            }
        }
        open.push(name);
    }
    open.is_empty()
}

/// The element name at the start of a tag's text, lower-cased; empty for a
/// comment, a doctype or a stray `<`.
fn tag_name(tag: &str) -> String {
    if !tag.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return String::new();
    }
    tag.split(|c: char| c.is_whitespace() || c == '/')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}
