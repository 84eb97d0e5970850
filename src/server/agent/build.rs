//! What `read_build_result` reports until the closed-loop work gives it
//! build results of its own: the failures of the actions the latest answer
//! with actions ran, read from the session the person sees.

use crate::runtime::session::SessionState;

/// One sentence per failed action of the latest answer that ran actions:
/// the alert's title, then the end of the output it quotes.
pub fn last_action_failures(state: &SessionState) -> Vec<String> {
    let Some(latest) = state.artifacts.last() else {
        return Vec::new();
    };
    state
        .alerts
        .iter()
        .filter(|alert| {
            alert
                .action
                .as_ref()
                .is_some_and(|action| action.message_id == latest.message_id)
        })
        .map(|alert| {
            let detail = alert.detail.trim_end();
            if detail.is_empty() {
                alert.title.clone()
            } else {
                format!("{}\n{detail}", alert.title)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::session::{ActionRef, Alert, Artifact};

    fn artifact(message_id: &str) -> Artifact {
        Artifact {
            message_id: message_id.into(),
            id: "app".into(),
            title: "App".into(),
            closed: true,
            actions: Vec::new(),
        }
    }

    fn alert(id: u64, message_id: &str, title: &str, detail: &str) -> Alert {
        Alert {
            id,
            title: title.into(),
            detail: detail.into(),
            action: Some(ActionRef {
                message_id: message_id.into(),
                action_id: "a1".into(),
            }),
            fix_results: Vec::new(),
        }
    }

    #[test]
    fn only_the_failures_of_the_latest_answer_with_actions_are_reported() {
        let mut state = SessionState::default();
        assert!(last_action_failures(&state).is_empty());
        state.artifacts.push(artifact("m1"));
        state
            .alerts
            .push(alert(1, "m1", "npm install failed", "ERR! 404\n"));
        assert_eq!(
            last_action_failures(&state),
            ["npm install failed\nERR! 404"]
        );
        state.artifacts.push(artifact("m2"));
        assert!(
            last_action_failures(&state).is_empty(),
            "a later answer whose actions all succeeded"
        );
        state
            .alerts
            .push(alert(2, "m2", "npm run dev exited with code 1", ""));
        assert_eq!(
            last_action_failures(&state),
            ["npm run dev exited with code 1"]
        );
    }
}
