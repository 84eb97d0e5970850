use super::*;
use crate::server::llm::client::ChatMessage;

fn turns(n: usize, bytes: usize) -> Vec<ChatMessage> {
    (0..n)
        .flat_map(|i| {
            [
                ChatMessage::user(format!("{i}{}", "q".repeat(bytes))),
                ChatMessage::assistant(format!("{i}{}", "a".repeat(bytes))),
            ]
        })
        .collect()
}

#[test]
fn the_answer_keeps_max_tokens_or_a_quarter_of_the_window_at_most_half() {
    for (context, max_tokens, answer, prompt) in [
        (8192, None, 2048, 6144),
        (8192, Some(1000), 1000, 7192),
        (8192, Some(100_000), 4096, 4096),
        (128_000, None, 32_000, 96_000),
        (0, None, 0, 0),
    ] {
        let window = Window::new(context, max_tokens);
        assert_eq!(
            (window.answer_tokens, window.prompt_limit()),
            (answer, prompt),
            "{context} {max_tokens:?}"
        );
    }
}

#[test]
fn the_conversation_gets_half_of_what_the_fixed_part_leaves() {
    let window = Window::new(8192, None);
    assert_eq!(window.conversation_share(2144), 2000);
    assert_eq!(window.conversation_share(10_000), 0);
}

#[test]
fn the_newest_whole_turns_that_fit_are_kept() {
    // Each message: 4 + ceil(401/4)=101 → 101 + 11 = 112, so 116 tokens.
    let history = {
        let mut h = turns(5, 400);
        h.push(ChatMessage::user("the question"));
        h
    };
    let question = message_tokens(&history[10]);
    let per = message_tokens(&history[0]);
    assert_eq!(per, 116);
    for (share, expect) in [
        // Only the question fits: it is kept anyway.
        (0, 10),
        (question, 10),
        // One more message fits, but it is an answer without its question.
        (question + per, 10),
        // The last whole turn.
        (question + 2 * per, 8),
        (question + 3 * per, 8),
        (question + 4 * per, 6),
        // Everything.
        (u32::MAX, 0),
    ] {
        assert_eq!(keep_from(&history, share), expect, "share {share}");
    }
    assert_eq!(keep_from(&[], 100), 0);
}

#[test]
fn a_text_over_its_tokens_is_cut_at_a_character_and_says_so() {
    assert_eq!(truncate_to("short", 100), "short");
    let cut = truncate_to(&"é".repeat(4000), 200);
    assert!(estimate_text(&cut) <= 200, "{}", estimate_text(&cut));
    assert!(cut.ends_with("cut to fit the context window]"));
    assert!(cut.starts_with('é'));
}

#[test]
fn the_system_prompt_gets_the_largest_file_budget_that_fits() {
    // A prompt of 100 bytes plus whatever of the budget's 4000 bytes of
    // files fit: each budget token stands for 4 bytes.
    let build = |budget: usize| {
        let files = "f".repeat((budget * 4).min(4000));
        format!("{}{files}", "p".repeat(100))
    };
    for (limit, others, fits_all) in [(10_000, 0, true), (1300, 100, true), (800, 100, false)] {
        let system = fit_system(limit, others, build);
        let used = others + PER_MESSAGE + estimate_text(&system);
        assert!(used <= limit, "{limit}: {used}");
        assert_eq!(system.len() == 4100, fits_all, "{limit}: {}", system.len());
        assert!(system.len() > 100, "{limit}: some files still fit");
    }
    // Not even the bare prompt fits: it goes without files.
    assert_eq!(fit_system(10, 0, build).len(), 100);
}

#[test]
fn files_named_by_the_build_come_first_then_changed_ones_each_once() {
    let s = |v: &[&str]| v.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>();
    for (named, changed, expect) in [
        (s(&[]), s(&[]), s(&[])),
        (s(&["src/App.jsx"]), s(&[]), s(&["src/App.jsx"])),
        (
            s(&["src/App.jsx", "vite.config.js"]),
            s(&["index.html", "src/App.jsx"]),
            s(&["src/App.jsx", "vite.config.js", "index.html"]),
        ),
        (s(&[]), s(&["a", "a", "b"]), s(&["a", "b"])),
    ] {
        assert_eq!(relevant_first(&named, &changed), expect);
    }
}

fn image() -> crate::server::llm::client::ImagePart {
    crate::server::llm::client::ImagePart {
        media_type: "image/png".into(),
        base64: "iVBORw0KGgo=".into(),
    }
}

#[test]
fn images_of_older_turns_are_dropped_first_and_the_question_keeps_its_own() {
    let mut history = vec![
        ChatMessage::user_with_images("first", vec![image(), image()]),
        ChatMessage::assistant("ok"),
        ChatMessage::user_with_images("second", vec![image()]),
        ChatMessage::assistant("ok"),
        ChatMessage::user_with_images("now", vec![image()]),
    ];
    let text_only = messages_tokens(
        &history
            .iter()
            .map(|m| ChatMessage {
                images: Vec::new(),
                ..m.clone()
            })
            .collect::<Vec<_>>(),
    );
    // Room for the text and two images: the oldest message's go.
    drop_old_images(
        &mut history,
        text_only + 2 * crate::server::llm::budget::IMAGE_TOKENS,
    );
    let counts: Vec<usize> = history.iter().map(|m| m.images.len()).collect();
    assert_eq!(counts, [0, 0, 1, 0, 1]);
    // No room for any: only the question keeps its image.
    drop_old_images(&mut history, 0);
    let counts: Vec<usize> = history.iter().map(|m| m.images.len()).collect();
    assert_eq!(counts, [0, 0, 0, 0, 1]);
}

#[test]
fn a_model_without_images_is_sent_none_and_the_question_s_are_counted() {
    let history = vec![
        ChatMessage::user_with_images("old", vec![image()]),
        ChatMessage::assistant("ok"),
        ChatMessage::user_with_images("now", vec![image(), image()]),
    ];
    let (sent, lost) = without_images(&history);
    assert_eq!(lost, 2);
    assert!(sent.iter().all(|m| m.images.is_empty()));
    assert_eq!(sent[2].content, "now");
}
