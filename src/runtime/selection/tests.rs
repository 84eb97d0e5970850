use super::*;

fn button() -> ElementSelection {
    ElementSelection {
        selector: "#root > div.card > button.counter".to_owned(),
        tag: "button".to_owned(),
        id: None,
        classes: vec!["counter".to_owned(), "big".to_owned()],
        text: "count is 0".to_owned(),
        html: "<button class=\"counter big\">count is 0</button>".to_owned(),
        rect: Rect {
            x: 10.4,
            y: 19.6,
            width: 120.0,
            height: 40.2,
        },
        source: Some(SourceLocation {
            file: "src/App.jsx".to_owned(),
            line: Some(12),
            column: Some(5),
        }),
        files: Vec::new(),
    }
}

fn posted(kind: &str, extra: serde_json::Value) -> String {
    let mut message = serde_json::json!({"source": "rivet-preview", "kind": kind});
    if let (Some(message), Some(extra)) = (message.as_object_mut(), extra.as_object()) {
        message.extend(extra.clone());
    }
    message.to_string()
}

fn element_json() -> serde_json::Value {
    serde_json::to_value(button()).unwrap()
}

#[test]
fn the_label_names_the_tag_the_first_class_and_the_start_of_the_text() {
    assert_eq!(button().label(), "button.counter \"count is 0\"");
    let mut titled = button();
    titled.id = Some("save".to_owned());
    titled.text = "Save every change you made to this document now".to_owned();
    assert_eq!(
        titled.label(),
        "button#save \"Save every change you made to…\""
    );
    let mut bare = button();
    bare.classes.clear();
    bare.text.clear();
    assert_eq!(bare.label(), "button");
}

#[test]
fn the_block_tells_the_model_what_and_where_the_element_is() {
    let block = button().block();
    assert_eq!(
        block,
        "<selected_element>\n\
         selector: #root > div.card > button.counter\n\
         tag: button\n\
         classes: counter big\n\
         text: \"count is 0\"\n\
         size: 120×40 at (10, 20)\n\
         source: src/App.jsx:12:5\n\
         html:\n```html\n<button class=\"counter big\">count is 0</button>\n```\n\
         </selected_element>"
    );
}

#[test]
fn without_a_source_the_block_names_the_files_that_hold_the_text() {
    let mut element = button();
    element.source = None;
    element.files = vec!["src/App.jsx".to_owned(), "src/Other.jsx".to_owned()];
    element.id = Some("go".to_owned());
    let block = element.block();
    assert!(block.contains("\nid: go\n"), "{block}");
    assert!(
        block.contains("\nfiles: src/App.jsx, src/Other.jsx\n"),
        "{block}"
    );
    assert!(!block.contains("source:"), "{block}");
}

#[test]
fn html_with_backticks_cannot_close_its_fence() {
    let mut element = button();
    element.html = "<pre>```</pre>".to_owned();
    let block = element.block();
    assert!(
        block.contains("\n````html\n<pre>```</pre>\n````\n"),
        "{block}"
    );
}

#[test]
fn a_message_with_selections_ends_with_their_blocks() {
    assert_eq!(message_with_selections("make it red", &[]), "make it red");
    let message = message_with_selections("make it red", &[button(), button()]);
    let expected = format!(
        "make it red\n\nThe person selected these elements in the preview:\n\n{}\n\n{}",
        button().block(),
        button().block()
    );
    assert_eq!(message, expected);
}

#[test]
fn a_selected_element_is_parsed_and_checked() {
    let json = posted("selected", serde_json::json!({"element": element_json()}));
    assert_eq!(parse(&json), Some(InspectorMessage::Selected(button())));
    assert_eq!(
        parse(&posted("select-cancelled", serde_json::json!({}))),
        Some(InspectorMessage::Cancelled)
    );
}

#[test]
fn a_text_edit_is_parsed_with_its_texts() {
    let json = posted(
        "text-edited",
        serde_json::json!({"element": element_json(), "old_text": "count is 0", "new_text": ""}),
    );
    assert_eq!(
        parse(&json),
        Some(InspectorMessage::TextEdited {
            element: button(),
            old_text: "count is 0".to_owned(),
            new_text: String::new(),
        })
    );
}

#[test]
fn parse_refuses_other_shapes() {
    let element = serde_json::json!({"element": element_json()});
    for json in [
        "not json".to_owned(),
        "[1, 2]".to_owned(),
        serde_json::json!({"source": "rivet-ide", "kind": "selected", "element": element_json()})
            .to_string(),
        posted("error", serde_json::json!({"message": "boom"})),
        posted("hovered", element.clone()),
        posted("selected", serde_json::json!({})),
        posted("selected", serde_json::json!({"element": {"tag": "p"}})),
        posted("text-edited", element.clone()),
        posted(
            "text-edited",
            serde_json::json!({"element": element_json(), "old_text": "", "new_text": ""}),
        ),
    ] {
        assert_eq!(parse(&json), None, "{json}");
    }
}

#[test]
fn parse_refuses_oversize_fields() {
    let long = |n: usize| "a".repeat(n);
    let mut cases: Vec<ElementSelection> = Vec::new();
    let mut e = button();
    e.selector = long(MAX_SELECTOR_CHARS + 1);
    cases.push(e);
    let mut e = button();
    e.tag = long(MAX_TAG_CHARS + 1);
    cases.push(e);
    let mut e = button();
    e.classes = vec!["c".to_owned(); MAX_CLASSES + 1];
    cases.push(e);
    let mut e = button();
    e.classes = vec![long(MAX_CLASS_CHARS + 1)];
    cases.push(e);
    let mut e = button();
    e.text = format!("  {}  ", long(MAX_TEXT_CHARS + 1));
    cases.push(e);
    let mut e = button();
    e.selector = "div\n> p".to_owned();
    cases.push(e);
    for element in cases {
        let json = posted("selected", serde_json::json!({ "element": element }));
        assert_eq!(parse(&json), None, "{json}");
    }
    let edit = |old: usize, new: usize| {
        posted(
            "text-edited",
            serde_json::json!({"element": element_json(), "old_text": long(old), "new_text": long(new)}),
        )
    };
    assert_eq!(parse(&edit(MAX_EDIT_CHARS + 1, 1)), None);
    assert_eq!(parse(&edit(1, MAX_EDIT_CHARS + 1)), None);
    assert!(parse(&edit(MAX_EDIT_CHARS, MAX_EDIT_CHARS)).is_some());
}

#[test]
fn a_long_html_is_cut_at_a_character_not_refused() {
    let mut element = button();
    element.html = format!("<p>{}</p>", "é".repeat(MAX_HTML_BYTES));
    element.text = format!("  {}  ", "x".repeat(MAX_TEXT_CHARS));
    let checked = element.checked().unwrap();
    assert!(checked.html.len() <= MAX_HTML_BYTES);
    assert!(checked.html.len() >= MAX_HTML_BYTES - 1);
    assert!(checked.html.starts_with("<p>é"));
    assert_eq!(checked.text.len(), MAX_TEXT_CHARS);
}

#[test]
fn checking_collapses_the_text_and_lower_cases_the_tag() {
    let mut element = button();
    element.tag = "BUTTON".to_owned();
    element.text = "  count\n   is  0 ".to_owned();
    element.id = Some(String::new());
    assert_eq!(element.checked(), Some(button()));
}

#[test]
fn a_text_found_once_is_found_once() {
    let files = [("src/App.jsx", "<h1>Hello</h1>"), ("src/b.js", "other")];
    assert_eq!(
        find_once("Hello", files),
        TextMatch::Once {
            path: "src/App.jsx".to_owned(),
            at: 4
        }
    );
}

#[test]
fn a_text_twice_in_one_file_is_many() {
    let files = [("a.jsx", "Hello and Hello"), ("b.js", "x")];
    assert_eq!(find_once("Hello", files), TextMatch::Many(2));
    // Overlapping occurrences count too.
    assert_eq!(find_once("aa", [("a.txt", "aaa")]), TextMatch::Many(2));
}

#[test]
fn a_text_once_in_each_of_two_files_is_many() {
    let files = [("a.jsx", "<p>Hello</p>"), ("b.jsx", "<p>Hello</p>")];
    assert_eq!(find_once("Hello", files), TextMatch::Many(2));
}

#[test]
fn an_absent_or_empty_text_is_found_nowhere() {
    let files = [("a.jsx", "<p>Hello</p>")];
    assert_eq!(find_once("Goodbye", files), TextMatch::None);
    assert_eq!(find_once("", files), TextMatch::None);
}

#[test]
fn a_sandbox_path_is_the_project_file_it_ends_with() {
    let files = vec![
        "src/App.jsx".to_owned(),
        "App.jsx".to_owned(),
        "index.js".to_owned(),
    ];
    for reported in [
        "/home/project/src/App.jsx",
        "/@fs/home/project/src/App.jsx",
        "/src/App.jsx?v=1a2b3c",
        "webpack://my-app/./src/App.jsx",
        "src/App.jsx",
    ] {
        assert_eq!(
            project_file_of(reported, &files).as_deref(),
            Some("src/App.jsx"),
            "{reported}"
        );
    }
}

#[test]
fn a_path_that_is_no_project_file_is_none() {
    let files = vec!["src/App.jsx".to_owned(), "index.js".to_owned()];
    assert_eq!(project_file_of("/home/project/src/Other.jsx", &files), None);
    assert_eq!(project_file_of("", &files), None);
    assert_eq!(
        project_file_of("/home/project/node_modules/react/index.js", &files),
        None
    );
}

#[test]
fn an_edit_result_is_tagged_for_the_browser() {
    let applied = TextEdit::Applied {
        path: "src/App.jsx".to_owned(),
    };
    assert_eq!(
        serde_json::to_value(&applied).unwrap(),
        serde_json::json!({"outcome": "applied", "path": "src/App.jsx"})
    );
    let json = r#"{"outcome": "ambiguous", "occurrences": 2}"#;
    assert_eq!(
        serde_json::from_str::<TextEdit>(json).unwrap(),
        TextEdit::Ambiguous { occurrences: 2 }
    );
}
