//! Each case: a file, an edit body (or replace arguments), and the file
//! after it or the error message, in full.

use pretty_assertions::assert_eq;

use super::*;

fn check(original: &str, body: &str, expect: Result<&str, &str>) {
    let actual = apply_edit(original, body);
    match (&actual, expect) {
        (Ok(text), Ok(want)) => assert_eq!(text, want),
        (Err(error), Err(want)) => assert_eq!(error.to_string(), want),
        _ => panic!("expected {expect:?}, got {actual:?}"),
    }
}

fn check_replace(original: &str, old: &str, new: &str, count: usize, expect: Result<&str, &str>) {
    let actual = replace(original, old, new, count);
    match (&actual, expect) {
        (Ok(text), Ok(want)) => assert_eq!(text, want),
        (Err(error), Err(want)) => assert_eq!(error.to_string(), want),
        _ => panic!("expected {expect:?}, got {actual:?}"),
    }
}

const FILE: &str = "function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n";

#[test]
fn exact_blocks_apply_in_order() {
    check(
        FILE,
        "<<<<<<< SEARCH\n  return 1;\n=======\n  return 10;\n>>>>>>> REPLACE\n\
         <<<<<<< SEARCH\n  return 10;\n}\n=======\n  return 11;\n}\n// a\n>>>>>>> REPLACE\n",
        Ok("function a() {\n  return 11;\n}\n// a\n\nfunction b() {\n  return 2;\n}\n"),
    );
}

#[test]
fn markers_tolerate_spacing_and_length() {
    check(
        "x\n",
        "\n```\n  <<<<<<<SEARCH  \r\nx\r\n =======\n y\n>>>>>>>>>  REPLACE\n```\n",
        Ok(" y\n"),
    );
}

#[test]
fn blocks_can_delete_and_insert() {
    check(
        FILE,
        "<<<<<<< SEARCH\n\nfunction b() {\n  return 2;\n}\n=======\n>>>>>>> REPLACE",
        Ok("function a() {\n  return 1;\n}\n"),
    );
    check(
        "",
        "<<<<<<< SEARCH\n=======\nnew file\n>>>>>>> REPLACE",
        Ok("new file\n"),
    );
}

#[test]
fn whitespace_differences_at_line_ends_are_forgiven() {
    // The model dropped the indentation: the match ignores it and the new
    // lines get it back.
    check(
        "class A {\n    run() {\n        go();\n    }\n}\n",
        "<<<<<<< SEARCH\nrun() {\n    go();\n}\n=======\nrun() {\n    go();\n    stop();\n}\n>>>>>>> REPLACE",
        Ok("class A {\n    run() {\n        go();\n        stop();\n    }\n}\n"),
    );
    // Trailing spaces in the file.
    check(
        "a  \nb\t\nc\n",
        "<<<<<<< SEARCH\na\nb\n=======\nz\n>>>>>>> REPLACE",
        Ok("z\nc\n"),
    );
}

#[test]
fn line_endings_and_a_missing_final_newline_are_kept() {
    check(
        "a\r\nb\r\nc",
        "<<<<<<< SEARCH\nc\n=======\nC\n>>>>>>> REPLACE",
        Ok("a\r\nb\r\nC"),
    );
    check(
        "one\ntwo",
        "<<<<<<< SEARCH\none\n=======\n1\n>>>>>>> REPLACE",
        Ok("1\ntwo"),
    );
}

#[test]
fn a_search_matches_whole_lines_only() {
    check(
        "data = 1\nta = 2\n",
        "<<<<<<< SEARCH\nta = 2\n=======\nta = 3\n>>>>>>> REPLACE",
        Ok("data = 1\nta = 3\n"),
    );
}

#[test]
fn a_block_that_matches_nowhere_quotes_the_closest_lines() {
    check(
        FILE,
        "<<<<<<< SEARCH\n  return 1;\n=======\n  return 10;\n>>>>>>> REPLACE\n\
         <<<<<<< SEARCH\nfunction b() {\n  return 3;\n}\n=======\n>>>>>>> REPLACE",
        Err(
            "SEARCH block 2 (starting \"function b() {\") matches nowhere in the file; \
             the closest lines are 5-7:\n    5 | function b() {\n    6 |   return 2;\n    7 | }\n",
        ),
    );
    check(
        "alpha\n",
        "<<<<<<< SEARCH\nzzz\n=======\ny\n>>>>>>> REPLACE",
        Err("SEARCH block 1 (starting \"zzz\") matches nowhere in the file"),
    );
}

#[test]
fn a_block_that_matches_twice_is_refused() {
    check(
        FILE,
        "<<<<<<< SEARCH\n}\n=======\n};\n>>>>>>> REPLACE",
        Err(
            "SEARCH block 1 (starting \"}\") matches 2 places (lines 3, 7); \
             add surrounding lines so it matches one",
        ),
    );
    check(
        "  x\n    x\n",
        "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE",
        Err(
            "SEARCH block 1 (starting \"x\") matches 2 places (lines 1, 2); \
             add surrounding lines so it matches one",
        ),
    );
}

#[test]
fn malformed_bodies_are_errors() {
    check(
        "a\n",
        "just a file\n",
        Err(
            "the edit has no SEARCH/REPLACE blocks (<<<<<<< SEARCH, old lines, =======, new lines, >>>>>>> REPLACE)",
        ),
    );
    check(
        "a\n",
        "<<<<<<< SEARCH\na\n>>>>>>> REPLACE",
        Err("SEARCH block 1: the SEARCH section does not end with a ======= line"),
    );
    check(
        "a\n",
        "<<<<<<< SEARCH\na\n=======\nb\n",
        Err("SEARCH block 1: the block does not end with a >>>>>>> REPLACE line"),
    );
    check(
        "a\n",
        "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n=======\n",
        Err("SEARCH block 2: a ======= or >>>>>>> REPLACE line comes before <<<<<<< SEARCH"),
    );
    check(
        "a\n",
        "<<<<<<< SEARCH\n=======\nb\n>>>>>>> REPLACE",
        Err("SEARCH block 1 is empty, which only fits an empty file; quote the lines to change"),
    );
}

#[test]
fn a_divider_inside_the_new_text_is_content() {
    check(
        "Title\n",
        "<<<<<<< SEARCH\nTitle\n=======\nTitle\n=======\n>>>>>>> REPLACE",
        Ok("Title\n=======\n"),
    );
}

#[test]
fn replace_counts_occurrences() {
    check_replace("a b a b a", "a", "x", 3, Ok("x b x b x"));
    check_replace("foo(1); foo(2);", "foo", "bar", 2, Ok("bar(1); bar(2);"));
    check_replace(
        "a b a",
        "a",
        "x",
        1,
        Err(
            "the text to replace (starting \"a\") was expected 1 times but occurs 2 times (lines 1, 1)",
        ),
    );
    check_replace(
        "if (x) {\n\t\treturn;\n\t}\n",
        "if (x) {\n  return;\n}",
        "if (y) {\n  return;\n}",
        1,
        Ok("if (y) {\n  return;\n}\n"),
    );
    check_replace("abc", "", "x", 1, Err("the text to replace is empty"));
    check_replace(
        "let total = 1;\n",
        "let totl = 1;",
        "let total = 2;",
        1,
        Err(
            "the text to replace (starting \"let totl = 1;\") matches nowhere in the file; \
             the closest line is 1:\n    1 | let total = 1;\n",
        ),
    );
}
