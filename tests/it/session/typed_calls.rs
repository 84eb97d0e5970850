//! The IDE's server functions take typed arguments: a project id and
//! paths inside the project. A malformed one is refused with the `invalid`
//! code before the session sees it; an unknown project is `not_found`.

use serde_json::Value;

use super::super::llm::Mock;
use super::Ide;

async fn code_of(ide: &Ide, function: &str, fields: &[(&str, &str)]) -> String {
    let (status, body) = ide.call(function, fields).await;
    assert_ne!(status, 200, "{function} {fields:?}: {body}");
    let error: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{body}"));
    error["code"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_path_outside_the_project_is_refused_as_invalid() {
    let mock = Mock::start(&[]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let p = project.as_str();
    for bad in ["../escape.txt", "/etc/passwd", ".git/config", "a\\b", ""] {
        let calls: [(&str, Vec<(&str, &str)>); 5] = [
            ("read_file", vec![("project", p), ("path", bad)]),
            (
                "write_file",
                vec![("project", p), ("path", bad), ("content", "x")],
            ),
            ("delete_path", vec![("project", p), ("path", bad)]),
            (
                "rename_path",
                vec![("project", p), ("from", "a.txt"), ("to", bad)],
            ),
            ("answer_diff", vec![("project", p), ("path", bad)]),
        ];
        for (function, fields) in calls {
            assert_eq!(
                code_of(&ide, function, &fields).await,
                "invalid",
                "{function} {bad:?}"
            );
        }
    }
    // A path inside the project goes through.
    let (status, body) = ide
        .call(
            "write_file",
            &[
                ("project", p),
                ("path", "./src/../a.txt"),
                ("content", "hi"),
            ],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = ide
        .call("read_file", &[("project", p), ("path", "a.txt")])
        .await;
    assert_eq!((status, body.as_str()), (200, r#""hi""#));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_project_id_is_invalid_and_an_unknown_one_not_found() {
    let mock = Mock::start(&[]);
    let ide = Ide::start(&mock).await;
    let calls: [(&str, Vec<(&str, &str)>); 5] = [
        ("try_fix_again", vec![("alert", "1")]),
        (
            "report_page_error",
            vec![("kind", "error"), ("message", "boom")],
        ),
        ("conversation_mode", vec![]),
        ("restore_to_message", vec![("message_id", "m2")]),
        ("project_runtime", vec![]),
    ];
    for (function, fields) in calls {
        for (project, code) in [("Not An Id!", "invalid"), ("nosuchproject", "not_found")] {
            let mut fields = fields.clone();
            fields.push(("project", project));
            assert_eq!(
                code_of(&ide, function, &fields).await,
                code,
                "{function} {project}"
            );
        }
    }
}
