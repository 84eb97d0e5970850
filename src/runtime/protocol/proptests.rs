//! Properties over random input: any way of cutting a message into chunks
//! gives the same events (after merging adjacent text and deltas), and the
//! deltas of an action add up to its raw content. Arbitrary input is run too:
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
