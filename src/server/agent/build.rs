//! What `read_build_result` reports: the build results the fix loop works
//! from (`runtime::build_result`), not yet resolved, of the latest answer
//! that ran actions and of everything since the agent's run began.

use crate::runtime::build_result::BuildResult;
use crate::runtime::session::SessionState;

/// The open failures for an agent run that began after build result
/// `since`: those of the latest answer with actions (a Build answer the
/// person switched away from), and every one since.
pub fn latest_failures(state: &SessionState, since: u64) -> Vec<BuildResult> {
    let latest = state.artifacts.last().map(|a| a.message_id.as_str());
    let of_latest = |r: &BuildResult| {
        r.action
            .as_ref()
            .is_some_and(|a| Some(a.message_id.as_str()) == latest)
    };
    state
        .build_results
        .iter()
        .filter(|r| r.resolved.is_none() && (r.id > since || of_latest(r)))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::build_result::Stage;
    use crate::runtime::session::{ActionRef, Artifact};

    fn artifact(message_id: &str) -> Artifact {
        Artifact {
            message_id: message_id.into(),
            id: "app".into(),
            title: "App".into(),
            closed: true,
            actions: Vec::new(),
        }
    }

    fn result(id: u64, message_id: Option<&str>, output: &str) -> BuildResult {
        let mut result = BuildResult::new(Stage::Install, None, Some(1), output);
        result.id = id;
        result.action = message_id.map(|m| ActionRef {
            message_id: m.into(),
            action_id: "a1".into(),
        });
        result
    }

    fn outputs(state: &SessionState, since: u64) -> Vec<String> {
        latest_failures(state, since)
            .into_iter()
            .map(|r| r.output)
            .collect()
    }

    #[test]
    fn the_latest_answers_failures_and_those_since_the_run_began_are_reported() {
        let mut state = SessionState::default();
        assert!(outputs(&state, 0).is_empty());
        state.artifacts.push(artifact("m1"));
        state.build_results.push(result(1, Some("m1"), "ERR! 404"));
        // The run began after it: still the latest answer's failure.
        assert_eq!(outputs(&state, 1), ["ERR! 404"]);
        // A later answer with actions that all succeeded.
        state.artifacts.push(artifact("m2"));
        assert!(outputs(&state, 1).is_empty());
        // A page error after the run began, tied to no action.
        state.build_results.push(result(2, None, "TypeError: boom"));
        assert_eq!(outputs(&state, 1), ["TypeError: boom"]);
        // Resolved failures are not reported.
        state.build_results[1].resolved = Some("fixed by automatic attempt 1".into());
        assert!(outputs(&state, 1).is_empty());
    }
}
