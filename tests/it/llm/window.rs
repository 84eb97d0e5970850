//! The context window from the provider's `/v1/models`, and `rivet ask`
//! within it, against `rivet mock-llm` over HTTP.

use super::*;

/// A service whose configuration says the window is 128k.
fn service(data: &Path) -> LlmService {
    let mut config = Config::defaults();
    config.server.data_dir = data.to_owned();
    config.llm.context_tokens = 131_072;
    LlmService::new(Arc::new(config))
}

#[tokio::test]
async fn a_window_reported_by_the_models_list_wins_over_the_configured_one() {
    let mock = Mock::start(&["--context-length", "8192"]);
    let data = tempfile::tempdir().unwrap();
    let service = service(data.path());
    let llm = mock.llm();
    let window = service.context_window(&llm).await;
    assert_eq!(window.context_tokens, 8192);
    assert_eq!(
        window.answer_tokens, 2048,
        "a quarter of the reported window"
    );
    // It wins over a preset's provider-wide figure too.
    let mut preset = llm.clone();
    preset.provider = "openai".into();
    assert_eq!(service.context_window(&preset).await.context_tokens, 8192);
}

#[tokio::test]
async fn a_models_list_failure_falls_back_to_the_preset_then_the_configuration() {
    let mock = Mock::start(&["--models-status", "500"]);
    let data = tempfile::tempdir().unwrap();
    let service = service(data.path());
    let llm = mock.llm();
    assert_eq!(service.context_window(&llm).await.context_tokens, 131_072);
    let mut preset = llm.clone();
    preset.provider = "deepseek".into();
    assert_eq!(service.context_window(&preset).await.context_tokens, 65_536);
    // The chat itself is not affected.
    let (outcome, _) = ask(&llm, request("hello")).await;
    assert!(
        matches!(outcome.result, Ok(FinishReason::Stop)),
        "{:?}",
        outcome.result
    );
}

#[tokio::test]
async fn a_models_list_without_a_figure_falls_back_to_the_configuration() {
    let mock = Mock::start(&[]);
    let data = tempfile::tempdir().unwrap();
    let window = service(data.path()).context_window(&mock.llm()).await;
    assert_eq!(window.context_tokens, 131_072);
}

#[tokio::test]
async fn ask_refuses_a_question_over_the_reported_window_without_sending_it() {
    let mock = Mock::start(&["--context-length", "2048", "--context-limit", "2048"]);
    let url = mock.base_url();
    let question = "why ".repeat(3000);
    let (code, stdout, stderr) = rivet_ask(&["--base-url", &url, "--model", MODEL, &question]);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert!(
        stderr.contains("does not fit the model's context window"),
        "{stderr}"
    );
    assert!(stderr.contains("2048 tokens"), "{stderr}");
    assert!(mock.log().await.is_empty(), "nothing was sent");
}

#[tokio::test]
async fn ask_cuts_the_project_files_to_the_reported_window() {
    let mock = Mock::start(&["--context-length", "4096", "--context-limit", "4096"]);
    let url = mock.base_url();
    let project = tempfile::tempdir().unwrap();
    let big = "const line = 'a line of the project';\n".repeat(600);
    std::fs::write(project.path().join("big.js"), &big).unwrap();
    let dir = project.path().to_str().unwrap();
    let (code, stdout, stderr) =
        rivet_ask(&["--base-url", &url, "--raw", "--project", dir, "hello"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, body_of("greeting.txt"));
    let log = mock.log().await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["status"], 200);
    assert!(
        log[0]["prompt_estimate"].as_u64().unwrap() <= 4096,
        "{}",
        log[0]
    );
}
