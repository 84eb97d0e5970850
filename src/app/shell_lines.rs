//! The lines Rivet writes into a shell tab of the terminal pane, in
//! xterm.js's escape codes: how the shell ended, and what a sandbox shell's
//! control messages say. The pane's tabs and the WebContainer's shell both
//! write them; they are here, below both, so that the runtime in the tab
//! does not depend on the pane that shows it. Browser only, but tested
//! natively.

/// The dim line a shell tab shows when its shell has exited (`code` when
/// known).
pub fn exited_line(code: Option<i64>) -> String {
    match code {
        Some(code) => format!("\r\n\x1b[2m[exited with {code}]\x1b[0m\r\n"),
        None => "\r\n\x1b[2m[exited]\x1b[0m\r\n".to_owned(),
    }
}

/// What a sandbox shell's control message (`{"type":"exit","code":0}` or
/// `{"type":"error","message":"…"}`) shows in its tab; another text is
/// shown as it came.
pub fn control_line(text: &str) -> String {
    let frame: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    match frame["type"].as_str() {
        Some("exit") => exited_line(frame["code"].as_i64()),
        Some("error") => format!(
            "\r\n\x1b[31m{}\x1b[0m\r\n",
            frame["message"].as_str().unwrap_or("the shell failed")
        ),
        _ => format!("\r\n\x1b[2m[{text}]\x1b[0m\r\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shells_exit_frame_shows_its_code() {
        assert_eq!(
            control_line(r#"{"type":"exit","code":130}"#),
            "\r\n\x1b[2m[exited with 130]\x1b[0m\r\n"
        );
        assert_eq!(control_line(r#"{"type":"exit"}"#), exited_line(None));
    }

    #[test]
    fn a_shells_error_frame_shows_its_message_in_red() {
        assert_eq!(
            control_line(r#"{"type":"error","message":"the sandbox is not running"}"#),
            "\r\n\x1b[31mthe sandbox is not running\x1b[0m\r\n"
        );
    }

    #[test]
    fn another_control_text_is_shown_as_it_came() {
        assert_eq!(control_line("bye"), "\r\n\x1b[2m[bye]\x1b[0m\r\n");
    }
}
