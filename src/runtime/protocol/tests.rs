//! Data-driven tests of the parser: each case is input chunks and the events
//! they must give, rendered one per line. `check` also feeds the same input
//! in one piece, character by character and cut in two at every position,
//! and requires the same events each time.

use pretty_assertions::assert_eq;

use super::*;

mod recovery;

/// Runs the parser over `chunks` and returns every event.
pub(super) fn run(chunks: &[&str]) -> Vec<Event> {
    let mut parser = Parser::new("m");
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.push(chunk));
    }
    events.extend(parser.finish());
    events
}

/// The same through `push_with` and `finish_with`.
fn run_with(chunks: &[&str]) -> Vec<Event> {
    let mut parser = Parser::new("m");
    let mut events = Vec::new();
    for chunk in chunks {
        parser.push_with(chunk, |e| events.push(e));
    }
    parser.finish_with(|e| events.push(e));
    events
}

fn render_kind(kind: &ActionKind) -> String {
    match kind {
        ActionKind::Supabase {
            operation,
            file_path,
            project_id,
        } => {
            let mut s = "supabase".to_owned();
            if let Some(op) = operation {
                s.push_str(&format!(" {op:?}").to_lowercase());
            }
            if let Some(p) = file_path {
                s.push_str(&format!(" {p}"));
            }
            if let Some(p) = project_id {
                s.push_str(&format!(" project={p}"));
            }
            s
        }
        ActionKind::Unknown { kind } => format!("unknown({kind})"),
        other => match other.file_path() {
            Some(path) if !path.is_empty() => format!("{} {path}", other.type_name()),
            _ => other.type_name().to_owned(),
        },
    }
}

fn render_attributes(attributes: &Attributes) -> String {
    attributes
        .iter()
        .map(|(k, v)| format!(" {k}={v:?}"))
        .collect()
}

fn render_recovery(recovery: Option<Recovery>) -> String {
    recovery
        .map(|r| format!(" recovered={r:?}"))
        .unwrap_or_default()
}

/// One line per event.
pub(super) fn render(events: &[Event]) -> String {
    let mut out = String::new();
    for event in events {
        let line = match event {
            Event::Text { text } => format!("text {text:?}"),
            Event::ArtifactOpen { id, artifact } => {
                let kind = (artifact.kind.as_ref())
                    .map(|k| format!(" type={k}"))
                    .unwrap_or_default();
                format!(
                    "artifact_open {id} {:?}{kind}{}",
                    artifact.title,
                    render_attributes(&artifact.attributes)
                )
            }
            Event::ActionOpen {
                artifact_id,
                action_id,
                action,
                recovery,
            } => format!(
                "action_open {artifact_id}/{action_id} {}{}",
                render_kind(action),
                render_recovery(*recovery)
            ),
            Event::ActionDelta {
                artifact_id,
                action_id,
                delta,
            } => format!("delta {artifact_id}/{action_id} {delta:?}"),
            Event::ActionClose {
                artifact_id,
                action_id,
                action,
            } => {
                let mut line = format!(
                    "action_close {artifact_id}/{action_id} {} {:?}{}",
                    render_kind(&action.kind),
                    action.content,
                    render_attributes(&action.attributes)
                );
                if action.truncated {
                    line.push_str(" truncated");
                }
                if let Some(error) = &action.error {
                    line.push_str(&format!(" error={error:?}"));
                }
                line.push_str(&render_recovery(action.recovery));
                line
            }
            Event::ArtifactClose { id } => format!("artifact_close {id}"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

pub(super) fn tidy(expect: &str) -> String {
    expect
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

pub(super) fn check(chunks: &[&str], expect: &str) {
    let actual = render(&merge_adjacent(run(chunks)));
    assert_eq!(actual, tidy(expect), "chunks: {chunks:?}");

    let whole = chunks.concat();
    let chars: Vec<&str> = whole
        .char_indices()
        .map(|(i, c)| &whole[i..i + c.len_utf8()])
        .collect();
    assert_eq!(
        render(&merge_adjacent(run(&[&whole]))),
        actual,
        "in one piece"
    );
    assert_eq!(render(&merge_adjacent(run(&chars))), actual, "char by char");
    assert_eq!(
        render(&merge_adjacent(run_with(&chars))),
        actual,
        "push_with"
    );
    for (cut, _) in whole.char_indices().skip(1) {
        let two = [&whole[..cut], &whole[cut..]];
        assert_eq!(render(&merge_adjacent(run(&two))), actual, "cut at {cut}");
    }
}

#[test]
fn plain_text_and_other_markup_pass_through() {
    check(&["Hello, world."], r#"text "Hello, world.""#);
    check(
        &["<div>a <strong>b</strong> < c > & d</div>"],
        r#"text "<div>a <strong>b</strong> < c > & d</div>""#,
    );
    check(&[""], "");
    check(&["<", "<", "<"], r#"text "<<<""#);
}

#[test]
fn a_complete_artifact() {
    check(
        &[
            "Here you go.\n\n<boltArtifact id=\"todo\" title=\"Todo App\">\n",
            "<boltAction type=\"file\" filePath=\"src/App.jsx\">\nexport default 1;\n</boltAction>\n",
            "<boltAction type=\"shell\">\n  npm install\n</boltAction>\n",
            "<boltAction type=\"start\">npm run dev</boltAction>\n",
            "</boltArtifact>\n\nDone.",
        ],
        r#"
        text "Here you go.\n\n"
        artifact_open todo "Todo App"
        action_open todo/0 file src/App.jsx
        delta todo/0 "\nexport default 1;\n"
        action_close todo/0 file src/App.jsx "export default 1;\n"
        action_open todo/1 shell
        delta todo/1 "\n  npm install\n"
        action_close todo/1 shell "npm install"
        action_open todo/2 start
        delta todo/2 "npm run dev"
        action_close todo/2 start "npm run dev"
        artifact_close todo
        text "\n\nDone."
        "#,
    );
}

#[test]
fn lookalike_tags_are_text() {
    check(&["<boltArtifactt>x"], r#"text "<boltArtifactt>x""#);
    check(
        &["<boltArtifacts id=\"a\">x"],
        r#"text "<boltArtifacts id=\"a\">x""#,
    );
    check(
        &["<boltartifact id=\"a\">"],
        r#"text "<boltartifact id=\"a\">""#,
    );
    check(&["< boltArtifact>"], r#"text "< boltArtifact>""#);
    check(&["<bolt>a</bolt>"], r#"text "<bolt>a</bolt>""#);
    check(&["a </boltArtifact> b"], r#"text "a </boltArtifact> b""#);
    check(&["<<boltArtifact-x>"], r#"text "<<boltArtifact-x>""#);
}

#[test]
fn an_action_outside_an_artifact_is_text() {
    check(
        &["<boltAction type=\"shell\">ls</boltAction>"],
        r#"text "<boltAction type=\"shell\">ls</boltAction>""#,
    );
}

#[test]
fn the_name_must_end_with_whitespace_angle_or_slash() {
    check(
        &["<boltArtifact>a</boltArtifact>"],
        r#"
        artifact_open m-0 ""
        artifact_close m-0
        "#,
    );
    check(
        &["<boltArtifact\nid='x'\n>a</boltArtifact>"],
        "artifact_open x \"\"\nartifact_close x",
    );
    check(
        &["<boltArtifact/>after"],
        r#"
        artifact_open m-0 ""
        artifact_close m-0
        text "after"
        "#,
    );
}

#[test]
fn attributes_in_either_quotes_any_order_and_spacing() {
    check(
        &["<boltArtifact title='Single' id=\"double\">"],
        r#"
        artifact_open double "Single"
        artifact_close double
        "#,
    );
    check(
        &["<boltArtifact\n\tid = 'a'\n  title=\n\"T\"   type=\"bundled\"  extra=\"kept\" flag >"],
        r#"
        artifact_open a "T" type=bundled extra="kept" flag=""
        artifact_close a
        "#,
    );
    check(
        &["<boltArtifact id=\"a\" title=\"It's <b>bold</b> & done\">"],
        r#"
        artifact_open a "It's <b>bold</b> & done"
        artifact_close a
        "#,
    );
    check(
        &["<boltArtifact id=\"a\" title=\"Tom &amp; Jerry&#39;s\" id=\"b\">"],
        r#"
        artifact_open a "Tom & Jerry's"
        artifact_close a
        "#,
    );
    check(
        &["<boltArtifact id=a title=Plain>"],
        r#"
        artifact_open a "Plain"
        artifact_close a
        "#,
    );
}

#[test]
fn action_attributes() {
    check(
        &[
            "<boltArtifact id='a'><boltAction filePath='./src/x.js' note=\"n\" type='file'>x</boltAction>",
        ],
        r#"
        artifact_open a ""
        action_open a/0 file src/x.js
        delta a/0 "x"
        action_close a/0 file src/x.js "x\n" note="n"
        artifact_close a
        "#,
    );
    check(
        &[
            "<boltArtifact id='a'><boltAction type='file' filePath='/home/project/./src/y.js'>y</boltAction>",
        ],
        r#"
        artifact_open a ""
        action_open a/0 file src/y.js
        delta a/0 "y"
        action_close a/0 file src/y.js "y\n"
        artifact_close a
        "#,
    );
}

#[test]
fn self_closing_actions_are_empty() {
    check(
        &[
            "<boltArtifact id='a'><boltAction type=\"shell\"/><boltAction type=file filePath=e.txt/></boltArtifact>",
        ],
        r#"
        artifact_open a ""
        action_open a/0 shell
        action_close a/0 shell ""
        action_open a/1 file e.txt
        action_close a/1 file e.txt ""
        artifact_close a
        "#,
    );
}

#[test]
fn text_inside_an_artifact_is_not_shown() {
    check(
        &[
            "a<boltArtifact id='x'>hidden <b>too</b><boltAction type='build'>b</boltAction> also hidden</boltArtifact>z",
        ],
        r#"
        text "a"
        artifact_open x ""
        action_open x/0 build
        delta x/0 "b"
        action_close x/0 build "b"
        artifact_close x
        text "z"
        "#,
    );
}

#[test]
fn closing_tags_allow_whitespace_before_the_angle() {
    check(
        &["<boltArtifact id='a'><boltAction type='shell'>ls</boltAction \n></boltArtifact\t>t"],
        r#"
        artifact_open a ""
        action_open a/0 shell
        delta a/0 "ls"
        action_close a/0 shell "ls"
        artifact_close a
        text "t"
        "#,
    );
    check(
        &[
            "<boltArtifact id='a'><boltAction type='shell'>a</boltActionx></boltAction/></boltAction>",
        ],
        r#"
        artifact_open a ""
        action_open a/0 shell
        delta a/0 "a</boltActionx></boltAction/>"
        action_close a/0 shell "a</boltActionx></boltAction/>"
        artifact_close a
        "#,
    );
}

#[test]
fn tags_do_not_nest() {
    // Inside an action only `</boltAction>` counts; inside an artifact a
    // second artifact tag is hidden text.
    check(
        &[
            "<boltArtifact id='a'><boltArtifact id='b'><boltAction type='edit' filePath='p'><boltAction type='shell'>x</boltArtifact></boltAction></boltArtifact>",
        ],
        r#"
        artifact_open a ""
        action_open a/0 edit p
        delta a/0 "<boltAction type='shell'>x</boltArtifact>"
        action_close a/0 edit p "<boltAction type='shell'>x</boltArtifact>"
        artifact_close a
        "#,
    );
}

#[test]
fn file_content_keeps_first_line_indentation() {
    check(
        &[
            "<boltArtifact id='a'><boltAction type='file' filePath='f.py'>\n\n   \n    indented()\nnext()\n\n  \n</boltAction></boltArtifact>",
        ],
        r#"
        artifact_open a ""
        action_open a/0 file f.py
        delta a/0 "\n\n   \n    indented()\nnext()\n\n  \n"
        action_close a/0 file f.py "    indented()\nnext()\n"
        artifact_close a
        "#,
    );
}

/// The final content of a file action whose raw content is `body`.
fn check_file_content(body: &str, content: &str) {
    let input =
        format!("<boltArtifact id='a'><boltAction type='file' filePath='f'>{body}</boltAction>");
    let events = merge_adjacent(run(&[&input]));
    let Some(Event::ActionClose { action, .. }) = events.get(3) else {
        panic!("no close in {events:?}");
    };
    assert_eq!(action.content, content, "{body:?}");
}

#[test]
fn fenced_file_bodies_are_unwrapped() {
    let cases = [
        ("\n```jsx\nconst a = 1;\n```\n", "const a = 1;\n"),
        ("```\n  x\n```", "  x\n"),
        ("````md\n```js\ny\n```\n````", "```js\ny\n```\n"),
        // Two blocks, or prose around a block, are the file itself.
        (
            "```\na\n```\ntext\n```\nb\n```",
            "```\na\n```\ntext\n```\nb\n```\n",
        ),
        ("See:\n```\na\n```", "See:\n```\na\n```\n"),
        ("```\n```", ""),
    ];
    for (body, content) in cases {
        check_file_content(body, content);
    }
}

#[test]
fn entities_are_decoded_only_in_a_wholly_escaped_file() {
    let cases = [
        // JSX: `&lt;` next to real tags is meant literally.
        ("<p>a &lt; b</p>", "<p>a &lt; b</p>\n"),
        ("&lt;p&gt;a &amp;amp; b&lt;/p&gt;", "<p>a &amp; b</p>\n"),
        ("a &amp; b &gt; c", "a &amp; b &gt; c\n"),
        ("if (a &lt; b) {}", "if (a < b) {}\n"),
    ];
    for (body, content) in cases {
        check_file_content(body, content);
    }
}

#[test]
fn edit_content_is_kept_raw() {
    check(
        &[
            "<boltArtifact id='a'><boltAction type='edit' filePath='src/App.jsx'>\n<<<<<<< SEARCH\n  a &lt; b\n=======\n  b\n>>>>>>> REPLACE\n</boltAction></boltArtifact>",
        ],
        r#"
        artifact_open a ""
        action_open a/0 edit src/App.jsx
        delta a/0 "\n<<<<<<< SEARCH\n  a &lt; b\n=======\n  b\n>>>>>>> REPLACE\n"
        action_close a/0 edit src/App.jsx "\n<<<<<<< SEARCH\n  a &lt; b\n=======\n  b\n>>>>>>> REPLACE\n"
        artifact_close a
        "#,
    );
}

#[test]
fn unknown_and_invalid_actions_are_delivered_with_an_error() {
    check(
        &[
            "<boltArtifact id='a'><boltAction type='deploy' target='prod'>go</boltAction><boltAction>x</boltAction><boltAction type='file'>y</boltAction></boltArtifact>",
        ],
        r#"
        artifact_open a ""
        action_open a/0 unknown(deploy)
        delta a/0 "go"
        action_close a/0 unknown(deploy) "go" target="prod" error="unknown action type \"deploy\""
        action_open a/1 unknown()
        delta a/1 "x"
        action_close a/1 unknown() "x" error="the action has no type attribute"
        action_open a/2 file
        delta a/2 "y"
        action_close a/2 file "y\n" error="the file action has no filePath attribute"
        artifact_close a
        "#,
    );
}

#[test]
fn supabase_actions() {
    check(
        &[
            "<boltArtifact id='a'><boltAction type='supabase' operation='migration' filePath='/home/project/supabase/migrations/1.sql' projectId='p1'>\ncreate table t();\n</boltAction><boltAction type='supabase' operation='query'>select 1</boltAction><boltAction type='supabase' operation='drop'>x</boltAction></boltArtifact>",
        ],
        r#"
        artifact_open a ""
        action_open a/0 supabase migration supabase/migrations/1.sql project=p1
        delta a/0 "\ncreate table t();\n"
        action_close a/0 supabase migration supabase/migrations/1.sql project=p1 "create table t();\n"
        action_open a/1 supabase query
        delta a/1 "select 1"
        action_close a/1 supabase query "select 1\n"
        action_open a/2 supabase
        delta a/2 "x"
        action_close a/2 supabase "x\n" error="unknown supabase operation \"drop\" (expected migration or query)"
        artifact_close a
        "#,
    );
}

#[test]
fn a_cut_off_message_closes_what_is_open() {
    check(
        &["<boltArtifact id='a'><boltAction type='file' filePath='f.js'>const x = 1;\n</boltAc"],
        r#"
        artifact_open a ""
        action_open a/0 file f.js
        delta a/0 "const x = 1;\n</boltAc"
        action_close a/0 file f.js "const x = 1;\n</boltAc\n" truncated
        artifact_close a
        "#,
    );
    check(
        &["Text <boltArtifact id='a'>hidden"],
        r#"
        text "Text "
        artifact_open a ""
        artifact_close a
        "#,
    );
    check(&["Trailing <bolt"], r#"text "Trailing <bolt""#);
    check(
        &["Trailing <boltArtifact id=\"a"],
        r#"text "Trailing <boltArtifact id=\"a""#,
    );
    check(
        &["<boltArtifact id='a'><boltAction type='shell'"],
        r#"
        artifact_open a ""
        artifact_close a
        "#,
    );
}

#[test]
fn multi_byte_characters() {
    check(
        &[
            "héllo 😀 <boltArtifact id='ü' title=\"日本語\">€<boltAction type='file' filePath='ö/ß.txt'>Grüße 🎉\n</boltAction></boltArtifact>ñ",
        ],
        r#"
        text "héllo 😀 "
        artifact_open ü "日本語"
        action_open ü/0 file ö/ß.txt
        delta ü/0 "Grüße 🎉\n"
        action_close ü/0 file ö/ß.txt "Grüße 🎉\n"
        artifact_close ü
        text "ñ"
        "#,
    );
    check(&["<é<boltArtifact€"], r#"text "<é<boltArtifact€""#);
}

#[test]
fn artifact_ids_are_unique_within_the_message() {
    check(
        &[
            "<boltArtifact id='m-1'></boltArtifact><boltArtifact></boltArtifact><boltArtifact id='m-1'></boltArtifact><boltArtifact id=''/>",
        ],
        r#"
        artifact_open m-1 ""
        artifact_close m-1
        artifact_open m-2 ""
        artifact_close m-2
        artifact_open m-3 ""
        artifact_close m-3
        artifact_open m-4 ""
        artifact_close m-4
        "#,
    );
}

#[test]
fn action_ids_count_through_the_message() {
    check(
        &[
            "<boltArtifact id='a'><boltAction type='shell'>1</boltAction></boltArtifact><boltArtifact id='b'><boltAction type='shell'>2</boltAction></boltArtifact>",
        ],
        r#"
        artifact_open a ""
        action_open a/0 shell
        delta a/0 "1"
        action_close a/0 shell "1"
        artifact_close a
        artifact_open b ""
        action_open b/1 shell
        delta b/1 "2"
        action_close b/1 shell "2"
        artifact_close b
        "#,
    );
}

#[test]
fn deltas_carry_only_new_content() {
    let mut parser = Parser::new("m");
    let first: Vec<Event> = parser
        .push("<boltArtifact id='a'><boltAction type='shell'>np")
        .collect();
    assert_eq!(
        render(&first),
        tidy(
            r#"
            artifact_open a ""
            action_open a/0 shell
            delta a/0 "np"
            "#
        )
    );
    let second: Vec<Event> = parser.push("m i</bolt").collect();
    assert_eq!(render(&second), "delta a/0 \"m i\"\n");
    let third: Vec<Event> = parser.push("Actio").collect();
    assert_eq!(render(&third), "");
    let fourth: Vec<Event> = parser.push("n").collect();
    assert_eq!(render(&fourth), "");
    let fifth: Vec<Event> = parser.push("X").collect();
    assert_eq!(render(&fifth), "delta a/0 \"</boltActionX\"\n");
}

#[test]
fn a_tag_is_held_back_at_most_max_held_tag_bytes() {
    let mut parser = Parser::new("m");
    let start = "<boltArtifact title=\"";
    let mut shown = 0;
    shown += text_len(parser.push(start));
    let filler = "é".repeat(MAX_HELD_TAG);
    for c in filler.chars() {
        shown += text_len(parser.push(c.encode_utf8(&mut [0; 4])));
    }
    let pushed = start.len() + filler.len();
    assert!(pushed - shown <= MAX_HELD_TAG, "{} held", pushed - shown);
    assert!(shown > 0);
    let rest: usize = parser
        .finish()
        .iter()
        .map(|e| match e {
            Event::Text { text } => text.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(shown + rest, pushed);
}

fn text_len(events: std::vec::Drain<'_, Event>) -> usize {
    events
        .map(|e| match e {
            Event::Text { text } => text.len(),
            other => panic!("unexpected {other:?}"),
        })
        .sum()
}

#[test]
fn events_serialize_to_the_documented_json() {
    let events = Parser::parse(
        "m",
        "Hi<boltArtifact id=\"a\" title=\"T\"><boltAction type=\"file\" filePath=\"x.js\">1</boltAction><boltAction type=\"supabase\" operation=\"query\" projectId=\"p\">q</boltAction><boltAction type=\"x-y\" k=\"v\"/></boltArtifact>",
    );
    let json: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).expect("serializes"))
        .collect();
    assert_eq!(
        json,
        [
            r#"{"event":"text","text":"Hi"}"#,
            r#"{"event":"artifact_open","id":"a","title":"T","type":null}"#,
            r#"{"event":"action_open","artifact_id":"a","action_id":"0","type":"file","file_path":"x.js"}"#,
            r#"{"event":"action_delta","artifact_id":"a","action_id":"0","delta":"1"}"#,
            r#"{"event":"action_close","artifact_id":"a","action_id":"0","type":"file","file_path":"x.js","content":"1\n","truncated":false,"error":null}"#,
            r#"{"event":"action_open","artifact_id":"a","action_id":"1","type":"supabase","operation":"query","project_id":"p"}"#,
            r#"{"event":"action_delta","artifact_id":"a","action_id":"1","delta":"q"}"#,
            r#"{"event":"action_close","artifact_id":"a","action_id":"1","type":"supabase","operation":"query","project_id":"p","content":"q\n","truncated":false,"error":null}"#,
            r#"{"event":"action_open","artifact_id":"a","action_id":"2","type":"x-y"}"#,
            r#"{"event":"action_close","artifact_id":"a","action_id":"2","type":"x-y","attributes":{"k":"v"},"content":"","truncated":false,"error":"unknown action type \"x-y\""}"#,
            r#"{"event":"artifact_close","id":"a"}"#,
        ]
    );
    for (event, line) in events.iter().zip(&json) {
        let back: Event = serde_json::from_str(line).expect("deserializes");
        assert_eq!(&back, event, "{line}");
    }
}
