//! Answers that slip out of the bolt format. Each case is fed whole, a
//! character at a time, cut in two at every position and in chunks of 2, 7
//! and 64 characters, and must give the same events every time.

use pretty_assertions::assert_eq;

use super::super::*;
use super::{check as check_cuts, render, run};
use crate::runtime::action::{ValidatedAction, validate};

/// `input` in chunks of `size` characters.
fn chunked(input: &str, size: usize) -> Vec<&str> {
    let starts: Vec<usize> = input.char_indices().map(|(i, _)| i).step_by(size).collect();
    let mut chunks = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(input.len());
        chunks.push(&input[start..end]);
    }
    chunks
}

/// The events of `input`, the same in every chunking.
fn events(input: &str) -> Vec<Event> {
    let whole = merge_adjacent(run(&[input]));
    for size in [1, 2, 7, 64] {
        let pieces = merge_adjacent(run(&chunked(input, size)));
        assert_eq!(render(&pieces), render(&whole), "chunks of {size}");
    }
    whole
}

fn check(input: &str, expect: &str) {
    events(input);
    check_cuts(&[input], expect);
}

/// What the runner would do with an answer: the files it writes, the
/// commands it runs (kind and command), what it refuses, as validation sees
/// them.
#[derive(Debug, Default, PartialEq)]
struct Outcome {
    files: Vec<(String, String)>,
    commands: Vec<(&'static str, String)>,
    refused: Vec<String>,
    recoveries: Vec<Recovery>,
}

fn outcome(input: &str) -> Outcome {
    let mut outcome = Outcome::default();
    for event in events(input) {
        let Event::ActionClose { action, .. } = event else {
            continue;
        };
        outcome.recoveries.extend(action.recovery);
        match validate(*action) {
            Ok(ValidatedAction::WriteFile { path, content }) => {
                outcome.files.push((path.as_str().to_owned(), content));
            }
            Ok(ValidatedAction::Shell { command }) => outcome.commands.push(("shell", command)),
            Ok(ValidatedAction::Start { command }) => outcome.commands.push(("start", command)),
            Ok(other) => panic!("unexpected {other:?}"),
            Err(error) => outcome.refused.push(error.to_string()),
        }
    }
    outcome
}

fn paths(outcome: &Outcome) -> Vec<&str> {
    outcome.files.iter().map(|(p, _)| p.as_str()).collect()
}

fn commands(outcome: &Outcome) -> Vec<(&str, &str)> {
    (outcome.commands.iter())
        .map(|(k, c)| (*k, c.as_str()))
        .collect()
}

const PACKAGE_JSON: &str = r#"{
  "name": "greeter",
  "private": true,
  "type": "module",
  "scripts": { "dev": "vite" },
  "devDependencies": { "vite": "^7.1.0" }
}
"#;

const INDEX_HTML: &str = r#"<!doctype html>
<html>
  <body>
    <input id="name" placeholder="Your name" />
    <p id="greeting">Hello!</p>
    <script type="module" src="/src/main.js"></script>
  </body>
</html>
"#;

const MAIN_JS: &str = r#"const input = document.querySelector('#name');
const out = document.querySelector('#greeting');
input.addEventListener('input', () => {
  out.textContent = `Hello, ${input.value || 'stranger'}!`;
});
"#;

/// The greeter of `tests/fixtures/slips`: its three files and two
/// commands, whatever shape the answer took.
fn assert_greeter(outcome: &Outcome, install: &str) {
    let files: Vec<(&str, &str)> = (outcome.files.iter())
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    assert_eq!(
        files,
        [
            ("package.json", PACKAGE_JSON),
            ("index.html", INDEX_HTML),
            ("src/main.js", MAIN_JS)
        ]
    );
    assert_eq!(
        commands(outcome),
        [("shell", install), ("start", "npm run dev")]
    );
    assert_eq!(outcome.refused, Vec::<String>::new());
}

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../../../tests/fixtures/slips/", $name, ".txt"))
    };
}

#[test]
fn the_fence_title_fixture_writes_the_greeter() {
    let outcome = outcome(fixture!("fence-title"));
    assert_greeter(&outcome, "npm install");
    assert_eq!(outcome.recoveries[..3], [Recovery::FenceTitle; 3]);
}

#[test]
fn the_heading_path_fixture_writes_the_greeter() {
    let outcome = outcome(fixture!("heading-path"));
    assert_greeter(&outcome, "npm install");
    assert_eq!(outcome.recoveries[..3], [Recovery::HeadingBefore; 3]);
}

#[test]
fn the_comment_path_fixture_writes_the_greeter_without_the_comments() {
    let outcome = outcome(fixture!("comment-path"));
    assert_greeter(&outcome, "npm i");
    assert_eq!(outcome.recoveries[..3], [Recovery::FirstLineComment; 3]);
}

#[test]
fn the_other_tags_fixture_writes_the_greeter() {
    let outcome = outcome(fixture!("other-tags"));
    assert_greeter(&outcome, "npm install");
    assert_eq!(outcome.recoveries[..3], [Recovery::ForeignTag; 3]);
    assert_eq!(outcome.recoveries[3..], [Recovery::ShellFence; 2]);
}

#[test]
fn the_cut_off_fixture_writes_the_greeter_and_starts_it() {
    let outcome = outcome(fixture!("cut-off"));
    assert_greeter(&outcome, "npm install");
    assert_eq!(outcome.recoveries, [Recovery::CutOff]);
}

#[test]
fn the_snippet_without_a_path_writes_nothing() {
    assert_eq!(outcome(fixture!("snippet-no-path")), Outcome::default());
}

#[test]
fn the_elided_snippet_writes_nothing_and_is_reported() {
    let outcome = outcome(fixture!("elided-partial"));
    assert_eq!(paths(&outcome), Vec::<&str>::new());
    assert_eq!(commands(&outcome), []);
    assert_eq!(
        outcome.refused,
        [
            "invalid file action: src/main.js was not written: the code block after the \
          sentence that names it leaves code out (// ...existing code...); only a whole \
          file with its path is written"
        ]
    );
}

#[test]
fn a_fence_with_the_path_in_its_title_writes_the_file() {
    check(
        "```tsx title=\"src/App.tsx\"\nexport default 1;\n```\n",
        r#"
        artifact_open m-0 "Recovered from the answer"
        action_open m-0/0 file src/App.tsx recovered=FenceTitle
        delta m-0/0 "export default 1;\n"
        action_close m-0/0 file src/App.tsx "export default 1;\n" recovered=FenceTitle
        artifact_close m-0
        "#,
    );
    let outcome = outcome("```js filename='a.js'\nx\n```\n```js path=b.js\ny\n```");
    assert_eq!(paths(&outcome), ["a.js", "b.js"]);
}

#[test]
fn a_fence_whose_info_string_is_the_path_writes_the_file() {
    check(
        "```src/App.tsx\nA\n```\n```js:src/main.js\nB\n```\n```tsx src/C.tsx\nC\n```",
        r#"
        artifact_open m-0 "Recovered from the answer"
        action_open m-0/0 file src/App.tsx recovered=FenceInfo
        delta m-0/0 "A\n"
        action_close m-0/0 file src/App.tsx "A\n" recovered=FenceInfo
        action_open m-0/1 file src/main.js recovered=FenceInfo
        delta m-0/1 "B\n"
        action_close m-0/1 file src/main.js "B\n" recovered=FenceInfo
        action_open m-0/2 file src/C.tsx recovered=FenceInfo
        delta m-0/2 "C\n"
        action_close m-0/2 file src/C.tsx "C\n" recovered=FenceInfo
        artifact_close m-0
        "#,
    );
}

#[test]
fn a_fence_after_a_line_that_is_the_path_writes_the_file() {
    check(
        "**src/a.js**\n```js\na\n```\n`b.js`:\n\n```\nb\n```\nFile: c.js\n```\nc\n```",
        r#"
        text "**src/a.js**\n"
        artifact_open m-0 "Recovered from the answer"
        action_open m-0/0 file src/a.js recovered=HeadingBefore
        delta m-0/0 "a\n"
        action_close m-0/0 file src/a.js "a\n" recovered=HeadingBefore
        artifact_close m-0
        text "`b.js`:\n\n"
        artifact_open m-1 "Recovered from the answer"
        action_open m-1/1 file b.js recovered=HeadingBefore
        delta m-1/1 "b\n"
        action_close m-1/1 file b.js "b\n" recovered=HeadingBefore
        artifact_close m-1
        text "File: c.js\n"
        artifact_open m-2 "Recovered from the answer"
        action_open m-2/2 file c.js recovered=HeadingBefore
        delta m-2/2 "c\n"
        action_close m-2/2 file c.js "c\n" recovered=HeadingBefore
        artifact_close m-2
        "#,
    );
    let outcome =
        outcome("### `src/d.ts`\n\n```ts\nd\n```\n- **File:** `e.css`\n```css\ne {}\n```");
    assert_eq!(paths(&outcome), ["src/d.ts", "e.css"]);
}

#[test]
fn a_comment_on_the_first_line_names_the_file_and_is_not_written() {
    check(
        "```css\n/* style.css */\nbody {}\n```",
        r#"
        artifact_open m-0 "Recovered from the answer"
        action_open m-0/0 file style.css recovered=FirstLineComment
        delta m-0/0 "body {}\n"
        action_close m-0/0 file style.css "body {}\n" recovered=FirstLineComment
        artifact_close m-0
        "#,
    );
    let outcome =
        outcome("```html\n<!-- index.html -->\n<p>x</p>\n```\n```python\n# main.py\nprint(1)\n```");
    assert_eq!(
        outcome.files,
        [
            ("index.html".to_owned(), "<p>x</p>\n".to_owned()),
            ("main.py".to_owned(), "print(1)\n".to_owned())
        ]
    );
}

#[test]
fn a_shell_fence_after_a_file_becomes_its_commands_in_order() {
    check(
        "```js\n// a.js\nx\n```\n```bash\n# deps\nnpm install\n$ npm run dev\n```\n",
        r#"
        artifact_open m-0 "Recovered from the answer"
        action_open m-0/0 file a.js recovered=FirstLineComment
        delta m-0/0 "x\n"
        action_close m-0/0 file a.js "x\n" recovered=FirstLineComment
        action_open m-0/1 shell recovered=ShellFence
        delta m-0/1 "npm install"
        action_close m-0/1 shell "npm install" recovered=ShellFence
        action_open m-0/2 start recovered=ShellFence
        delta m-0/2 "npm run dev"
        action_close m-0/2 start "npm run dev" recovered=ShellFence
        artifact_close m-0
        "#,
    );
    let outcome = outcome(
        "```js title=a.js\nx\n```\n```console\n$ npm install\nadded 3 packages\n$ npx vite\n```\n\
         ```sh\npnpm add zod && pnpm dev\n```",
    );
    assert_eq!(
        commands(&outcome),
        [
            ("shell", "npm install"),
            ("start", "npx vite"),
            ("shell", "pnpm add zod"),
            ("start", "pnpm dev")
        ]
    );
}

#[test]
fn a_shell_fence_in_an_answer_that_wrote_no_file_is_prose() {
    check(
        "Run:\n```bash\nnpm install\n```",
        r#"text "Run:\n```bash\nnpm install\n```""#,
    );
    check(
        "```console\n$ npm run dev\n```",
        r#"text "```console\n$ npm run dev\n```""#,
    );
}

#[test]
fn a_shell_fence_with_any_other_command_is_prose() {
    check(
        "```js title=a.js\nx\n```\n```bash\ncd app\nnpm install\n```",
        r#"
        artifact_open m-0 "Recovered from the answer"
        action_open m-0/0 file a.js recovered=FenceTitle
        delta m-0/0 "x\n"
        action_close m-0/0 file a.js "x\n" recovered=FenceTitle
        artifact_close m-0
        text "```bash\ncd app\nnpm install\n```"
        "#,
    );
    for other in [
        "rm -rf node_modules",
        "npm create vite@latest app",
        "curl x | sh",
    ] {
        let input = format!("```js title=a.js\nx\n```\n```sh\n{other}\n```");
        assert_eq!(commands(&outcome(&input)), [], "{other}");
    }
}

#[test]
fn other_builders_file_tags_write_the_file() {
    check(
        "<dyad-write path=\"a.js\">x</dyad-write> and <file path=\"b.js\">y</file><lov-write file_path=\"c.js\">z</lov-write>",
        r#"
        artifact_open m-0 "Recovered from the answer"
        action_open m-0/0 file a.js recovered=ForeignTag
        delta m-0/0 "x"
        action_close m-0/0 file a.js "x\n" recovered=ForeignTag
        text " "
        artifact_close m-0
        text "and "
        artifact_open m-1 "Recovered from the answer"
        action_open m-1/1 file b.js recovered=ForeignTag
        delta m-1/1 "y"
        action_close m-1/1 file b.js "y\n" recovered=ForeignTag
        action_open m-1/2 file c.js recovered=ForeignTag
        delta m-1/2 "z"
        action_close m-1/2 file c.js "z\n" recovered=ForeignTag
        artifact_close m-1
        "#,
    );
    check(
        "<file>not a file</file>",
        r#"text "<file>not a file</file>""#,
    );
}

#[test]
fn a_misspelt_file_path_attribute_is_recovered() {
    check(
        "<boltArtifact id=\"a\"><boltAction type=\"file\" path=\"a.js\">x</boltAction><boltAction type=\"file\" filepath=\"b.js\">y</boltAction><boltAction type=\"edit\" file=\"c.js\">z</boltAction></boltArtifact>",
        r#"
        artifact_open a ""
        action_open a/0 file a.js recovered=MisspeltAttribute
        delta a/0 "x"
        action_close a/0 file a.js "x\n" recovered=MisspeltAttribute
        action_open a/1 file b.js recovered=MisspeltAttribute
        delta a/1 "y"
        action_close a/1 file b.js "y\n" recovered=MisspeltAttribute
        action_open a/2 edit c.js recovered=MisspeltAttribute
        delta a/2 "z"
        action_close a/2 edit c.js "z" recovered=MisspeltAttribute
        artifact_close a
        "#,
    );
}

#[test]
fn actions_outside_an_artifact_are_recovered() {
    check(
        "Hi\n<boltAction type=\"file\" filePath=\"a.js\">x</boltAction>\n<boltAction type=\"shell\">npm install</boltAction>\n<boltAction type=\"start\">npm run dev</boltAction>",
        r#"
        text "Hi\n"
        artifact_open m-0 "Recovered from the answer"
        action_open m-0/0 file a.js recovered=NoArtifact
        delta m-0/0 "x"
        action_close m-0/0 file a.js "x\n" recovered=NoArtifact
        text "\n"
        action_open m-0/1 shell recovered=NoArtifact
        delta m-0/1 "npm install"
        action_close m-0/1 shell "npm install" recovered=NoArtifact
        text "\n"
        action_open m-0/2 start recovered=NoArtifact
        delta m-0/2 "npm run dev"
        action_close m-0/2 start "npm run dev" recovered=NoArtifact
        artifact_close m-0
        "#,
    );
    // A command recovery does not recognise stays text (see
    // `an_action_outside_an_artifact_is_text`), however long.
    let long = format!(
        "<boltAction type=\"shell\">{}</boltAction>",
        "x".repeat(5000)
    );
    check(&long, &format!("text {long:?}"));
}

#[test]
fn an_artifact_inside_a_code_fence_is_read_and_its_fence_hidden() {
    check(
        "```xml\n<boltArtifact id=\"a\"><boltAction type=\"file\" filePath=\"a.js\">x</boltAction></boltArtifact>\n```\nDone.",
        r#"
        artifact_open a ""
        action_open a/0 file a.js recovered=FencedArtifact
        delta a/0 "x"
        action_close a/0 file a.js "x\n" recovered=FencedArtifact
        artifact_close a
        text "\nDone."
        "#,
    );
}

#[test]
fn html_escaped_tags_are_read_and_their_content_unescaped_once() {
    check(
        "&lt;boltArtifact id=&quot;a&quot; title=&quot;T&quot;&gt;\n&lt;boltAction type=&quot;file&quot; filePath=&quot;a.html&quot;&gt;&lt;p&gt;a &amp;amp; b&lt;/p&gt;&lt;/boltAction&gt;\n&lt;/boltArtifact&gt; Tom &amp; Jerry",
        r#"
        artifact_open a "T"
        action_open a/0 file a.html recovered=HtmlEscaped
        delta a/0 "<p>a &amp; b</p>"
        action_close a/0 file a.html "<p>a &amp; b</p>\n" recovered=HtmlEscaped
        artifact_close a
        text " Tom &amp; Jerry"
        "#,
    );
    let outcome = outcome(
        "&lt;boltAction type=\"file\" filePath=\"a.js\"&gt;if (a &amp;&amp; b &lt; c) {}&lt;/boltAction&gt;",
    );
    assert_eq!(
        outcome.files,
        [("a.js".to_owned(), "if (a && b < c) {}\n".to_owned())]
    );
    check(
        "a &lt;boltArtifacts and &lt;b&gt;",
        r#"text "a &lt;boltArtifacts and &lt;b&gt;""#,
    );
}

#[test]
fn an_answer_cut_off_inside_a_whole_file_writes_it() {
    check(
        "<boltArtifact id=\"a\"><boltAction type=\"file\" filePath=\"a.js\">function a() {\n  return 1;\n}\n",
        r#"
        artifact_open a ""
        action_open a/0 file a.js
        delta a/0 "function a() {\n  return 1;\n}\n"
        action_close a/0 file a.js "function a() {\n  return 1;\n}\n" recovered=CutOff
        artifact_close a
        "#,
    );
    let outcome =
        outcome("```js title=a.js\nfunction a() {}\n```\n```bash\nnpm install\nnpm run dev");
    assert_eq!(paths(&outcome), ["a.js"]);
    assert_eq!(
        commands(&outcome),
        [("shell", "npm install"), ("start", "npm run dev")]
    );
    assert_eq!(outcome.recoveries[1..], [Recovery::CutOff; 2]);
}

#[test]
fn an_answer_cut_off_inside_an_unfinished_file_writes_nothing() {
    check(
        "<boltArtifact id=\"a\"><boltAction type=\"file\" filePath=\"a.js\">function a() {\n  return 1;\n",
        r#"
        artifact_open a ""
        action_open a/0 file a.js
        delta a/0 "function a() {\n  return 1;\n"
        action_close a/0 file a.js "function a() {\n  return 1;\n" truncated
        artifact_close a
        "#,
    );
    for cut in [
        "```js title=a.js\nfunction a() {",
        "<boltArtifact id=\"a\"><boltAction type=\"start\">npx vi",
        "<dyad-write path=\"a.html\"><html><body>",
    ] {
        let outcome = outcome(cut);
        assert_eq!(
            (paths(&outcome), commands(&outcome)),
            (vec![], vec![]),
            "{cut}"
        );
        assert_eq!(outcome.refused.len(), 1, "{cut}");
    }
}

#[test]
fn a_snippet_without_a_path_writes_nothing() {
    check(
        "```js\nconst v = 1;\n```",
        r#"text "```js\nconst v = 1;\n```""#,
    );
    check("```\nnpm\n```", r#"text "```\nnpm\n```""#);
}

#[test]
fn a_file_that_leaves_code_out_is_not_written() {
    check(
        "```js title=\"src/a.js\"\n// ...existing code...\nb();\n```",
        r#"
        artifact_open m-0 "Recovered from the answer"
        action_open m-0/0 file src/a.js recovered=FenceTitle
        delta m-0/0 "// ...existing code...\nb();\n"
        action_close m-0/0 file src/a.js "// ...existing code...\nb();\n" error="src/a.js was not written: the code leaves some out (// ...existing code...), so it is not the whole file" recovered=FenceTitle
        artifact_close m-0
        "#,
    );
    let outcome = outcome("<dyad-write path=\"b.js\">a();\n...\n</dyad-write>");
    assert_eq!(paths(&outcome), Vec::<&str>::new());
}

#[test]
fn prose_that_mentions_a_path_writes_nothing() {
    check(
        "Edit `src/App.tsx` like this:\n```tsx\nexport default 1;\n```",
        r#"text "Edit `src/App.tsx` like this:\n```tsx\nexport default 1;\n```""#,
    );
    check(
        "See src/a.js for details.\n```js\nx\n```",
        r#"text "See src/a.js for details.\n```js\nx\n```""#,
    );
}

#[test]
fn an_absolute_or_escaping_path_is_refused_as_any_other() {
    let outcome = outcome("```js title=\"/etc/x.js\"\nx\n```\n```js title=\"../../x.js\"\ny\n```");
    assert_eq!(paths(&outcome), Vec::<&str>::new());
    assert_eq!(
        outcome.refused,
        [
            "invalid path \"/etc/x.js\": the path is absolute; use a path relative to the project",
            "invalid path \"../../x.js\": the path leaves the project",
        ]
    );
}

#[test]
fn after_a_bolt_artifact_fences_are_prose() {
    check(
        "<boltArtifact id=\"a\"><boltAction type=\"shell\">npm install</boltAction></boltArtifact>\n#### `a.js`\n```js\nx\n```\n```bash\nnpm run dev\n```",
        r#"
        artifact_open a ""
        action_open a/0 shell
        delta a/0 "npm install"
        action_close a/0 shell "npm install"
        artifact_close a
        text "\n#### `a.js`\n```js\nx\n```\n```bash\nnpm run dev\n```"
        "#,
    );
}

#[test]
fn a_mixed_answer_gives_every_file_and_command_in_order() {
    let input = "I'll set it up.\n\n\
        ### `package.json`\n```json\n{ \"scripts\": { \"dev\": \"vite\" } }\n```\n\n\
        ```html title=\"index.html\"\n<p id=\"a\"></p>\n```\n\n\
        <dyad-write path=\"src/a.js\">document.querySelector('#a').textContent = 'hi';</dyad-write>\n\n\
        ```css\n/* src/a.css */\np { color: red; }\n```\n\n\
        <boltAction type=\"file\" path=\"src/b.js\">export const b = 1;</boltAction>\n\n\
        Then:\n\n```bash\n$ npm install\n$ npm run dev\n```\n";
    let outcome = outcome(input);
    assert_eq!(
        paths(&outcome),
        [
            "package.json",
            "index.html",
            "src/a.js",
            "src/a.css",
            "src/b.js"
        ]
    );
    assert_eq!(
        commands(&outcome),
        [("shell", "npm install"), ("start", "npm run dev")]
    );
    assert_eq!(
        outcome.recoveries,
        [
            Recovery::HeadingBefore,
            Recovery::FenceTitle,
            Recovery::ForeignTag,
            Recovery::FirstLineComment,
            Recovery::NoArtifact,
            Recovery::ShellFence,
            Recovery::ShellFence,
        ]
    );
}

#[test]
fn a_mixed_answer_with_snippets_writes_only_the_named_files() {
    let input = "Here is how it works:\n```js\nconst x = 1;\n```\n\
        **src/app.js**\n```js\nconsole.log(1);\n```\n\
        In `src/app.js` you could also add:\n```js\n// ...\nfoo();\n```\n\
        ```js title=\"src/c.js\"\n// rest unchanged\n```\n\
        &lt;boltAction type=&quot;shell&quot;&gt;npm install&lt;/boltAction&gt;";
    let outcome = outcome(input);
    assert_eq!(paths(&outcome), ["src/app.js"]);
    assert_eq!(commands(&outcome), [("shell", "npm install")]);
    assert_eq!(outcome.refused.len(), 2, "{:?}", outcome.refused);
    assert_eq!(
        outcome.recoveries,
        [
            Recovery::HeadingBefore,
            Recovery::PathInProse,
            Recovery::FenceTitle,
            Recovery::HtmlEscaped
        ]
    );
}

#[test]
fn recovered_actions_say_how_in_their_json() {
    let events = Parser::parse("m", "```js title=a.js\nx\n```");
    let json: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).expect("serializes"))
        .collect();
    assert_eq!(
        json[1],
        r#"{"event":"action_open","artifact_id":"m-0","action_id":"0","type":"file","file_path":"a.js","recovery":"fence_title"}"#
    );
    assert!(
        json[3].ends_with(r#""error":null,"recovery":"fence_title"}"#),
        "{}",
        json[3]
    );
    for event in &events {
        let line = serde_json::to_string(event).expect("serializes");
        let back: Event = serde_json::from_str(&line).expect("deserializes");
        assert_eq!(&back, event);
    }
    assert_eq!(
        Recovery::FenceTitle.sentence(),
        "recovered from a markdown fence: path from the title"
    );
}

#[test]
fn inputs_that_once_depended_on_their_chunking_no_longer_do() {
    for input in [
        "\n```é=\n```",
        "&lt;boltAction type=&quot;file&quot; filePath=&quot;l.js&quot;&gt;<boltArtifact id=\"a\"></boltAction>&lt;boltArtifact id=&quot;x&quot;&gt;",
        "<dyad-write path=\"a.js\">x</dyad-write> and",
        "```js title=a.js\nx\n```\n```sh\nnpm i\n```",
    ] {
        let whole = render(&events(input));
        for (cut, _) in input.char_indices().skip(1) {
            let two = [&input[..cut], &input[cut..]];
            assert_eq!(
                render(&merge_adjacent(run(&two))),
                whole,
                "{input:?} cut at {cut}"
            );
        }
    }
}
