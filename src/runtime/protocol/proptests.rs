//! Properties over random input: any way of cutting a message into chunks
//! gives the same events (after merging adjacent text and deltas), for bolt
//! answers and for answers that slip out of the format, and the deltas of an
//! action add up to its raw content. Arbitrary input is run too:
//! these double as the fuzz run in CI.

use proptest::prelude::*;

use super::tests::run;
use super::*;

/// Pieces that exercise every state of the parser when strung together.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("<boltArtifact id=\"a\" title='T'>".to_owned()),
        Just("<boltArtifact>".to_owned()),
        Just("</boltArtifact>".to_owned()),
        Just("</boltArtifact \n>".to_owned()),
        Just("<boltAction type=\"file\" filePath=\"./x.js\">".to_owned()),
        Just("<boltAction type='shell'>".to_owned()),
        Just("<boltAction type=edit filePath=e/>".to_owned()),
        Just("<boltAction type=\"supabase\" operation=\"nope\">".to_owned()),
        Just("</boltAction>".to_owned()),
        Just("</boltAction\t>".to_owned()),
        Just("<boltArtifactt>".to_owned()),
        Just("<bolt".to_owned()),
        Just("</bolt".to_owned()),
        Just("<".to_owned()),
        Just(">".to_owned()),
        Just("/".to_owned()),
        Just("=".to_owned()),
        Just("\"".to_owned()),
        Just("'".to_owned()),
        Just("```js\n".to_owned()),
        Just("\n```".to_owned()),
        Just("&lt;".to_owned()),
        Just("é".to_owned()),
        Just("😀".to_owned()),
        "[a-z \n]{0,6}",
    ]
}

/// Pieces of answers that slip out of the format: fences with paths in
/// every place, shell fences, other builders' tags, escaped tags, misspelt
/// attributes, code left out.
fn slip() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("```js title=\"a.js\"\n".to_owned()),
        Just("```src/b.ts\n".to_owned()),
        Just("```js:c.js\n".to_owned()),
        Just("```\n".to_owned()),
        Just("```bash\n".to_owned()),
        Just("```console\n".to_owned()),
        Just("~~~\n".to_owned()),
        Just("\n```\n".to_owned()),
        Just("#### `d.js`\n".to_owned()),
        Just("**e.css**\n".to_owned()),
        Just("In `f.js`, change:\n".to_owned()),
        Just("// g.js\n".to_owned()),
        Just("<!-- h.html -->\n".to_owned()),
        Just("npm install\n".to_owned()),
        Just("$ npm run dev\n".to_owned()),
        Just("npm i && npx vite\n".to_owned()),
        Just("// ...existing code...\n".to_owned()),
        Just("function a() {\n".to_owned()),
        Just("}\n".to_owned()),
        Just("<dyad-write path=\"i.js\">".to_owned()),
        Just("</dyad-write>".to_owned()),
        Just("<file path='j.js'>".to_owned()),
        Just("</file>".to_owned()),
        Just("<boltAction type=\"file\" path=\"k.js\">".to_owned()),
        Just("<boltAction type=\"shell\">".to_owned()),
        Just("</boltAction>".to_owned()),
        Just("<boltArtifact id=\"a\">".to_owned()),
        Just("</boltArtifact>".to_owned()),
        Just("&lt;boltArtifact id=&quot;x&quot;&gt;".to_owned()),
        Just("&lt;boltAction type=&quot;file&quot; filePath=&quot;l.js&quot;&gt;".to_owned()),
        Just("&lt;/boltAction&gt;".to_owned()),
        Just("&lt;/boltArtifact&gt;".to_owned()),
        Just("&amp;".to_owned()),
        Just("&l".to_owned()),
        Just("`".to_owned()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("é".to_owned()),
        "[a-z .\n]{0,6}",
    ]
}

fn slipped_message() -> impl Strategy<Value = String> {
    prop::collection::vec(slip(), 0..40).prop_map(|parts| parts.concat())
}

fn message() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..40).prop_map(|parts| parts.concat())
}

/// Content for an action: anything that does not close it.
fn body() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..12)
        .prop_map(|parts| parts.concat())
        .prop_filter("closes the action", |b| !b.contains("</boltAction"))
}

/// Cuts `input` at the given fractions of its length, moved back to
/// character boundaries.
fn cut<'a>(input: &'a str, cuts: &[usize]) -> Vec<&'a str> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| {
            let mut at = if input.is_empty() {
                0
            } else {
                c % (input.len() + 1)
            };
            while !input.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect();
    points.push(0);
    points.push(input.len());
    points.sort_unstable();
    points.dedup();
    points.windows(2).map(|w| &input[w[0]..w[1]]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn chunking_never_changes_the_events(
        input in message(),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        let whole = merge_adjacent(run(&[&input]));
        let chunked = merge_adjacent(run(&cut(&input, &cuts)));
        prop_assert_eq!(chunked, whole);
    }

    #[test]
    fn chunking_never_changes_recovered_events(
        input in slipped_message(),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        let whole = merge_adjacent(run(&[&input]));
        let chunked = merge_adjacent(run(&cut(&input, &cuts)));
        prop_assert_eq!(chunked, whole);
    }

    #[test]
    fn recovered_events_are_the_same_in_chunks_of_one_character(input in slipped_message()) {
        let whole = merge_adjacent(run(&[&input]));
        let chars: Vec<&str> = input
            .char_indices()
            .map(|(i, c)| &input[i..i + c.len_utf8()])
            .collect();
        prop_assert_eq!(merge_adjacent(run(&chars)), whole);
    }

    #[test]
    fn arbitrary_input_never_panics_and_chunking_never_matters(
        input in any::<String>(),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        let whole = merge_adjacent(run(&[&input]));
        let chunked = merge_adjacent(run(&cut(&input, &cuts)));
        prop_assert_eq!(chunked, whole);
    }

    #[test]
    fn deltas_add_up_to_the_raw_content(
        bodies in prop::collection::vec(body(), 1..5),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        let mut input = "intro <boltArtifact id=\"a\">".to_owned();
        for body in &bodies {
            input.push_str("<boltAction type=\"edit\" filePath=\"f\">");
            input.push_str(body);
            input.push_str("</boltAction>");
        }
        input.push_str("</boltArtifact>");
        let events = run(&cut(&input, &cuts));
        let mut deltas = vec![String::new(); bodies.len()];
        let mut closed = Vec::new();
        for event in events {
            match event {
                Event::ActionDelta { action_id, delta, .. } => {
                    prop_assert!(!delta.is_empty());
                    let index: usize = action_id.parse().expect("numeric id");
                    deltas[index].push_str(&delta);
                }
                Event::ActionClose { action, .. } => closed.push(action.content),
                _ => {}
            }
        }
        prop_assert_eq!(&deltas, &bodies);
        // Edit content is kept raw, so it equals the deltas too.
        prop_assert_eq!(&closed, &bodies);
    }
}
