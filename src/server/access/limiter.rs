//! Wrong tokens are rate-limited: past a number of failures in a window,
//! further wrong attempts are answered "too many" without being checked.
//! A right token always passes, so a flood of wrong ones cannot lock the
//! owner out.

use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct Limiter {
    max_failures: u32,
    window: Duration,
    state: Mutex<Window>,
}

struct Window {
    started: Instant,
    failures: u32,
}

impl Limiter {
    pub fn new(max_failures: u32, window: Duration) -> Limiter {
        Limiter {
            max_failures,
            window,
            state: Mutex::new(Window {
                started: Instant::now(),
                failures: 0,
            }),
        }
    }

    /// Counts a failure at `now`; true when it is over the limit.
    pub fn fail(&self, now: Instant) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if now.saturating_duration_since(state.started) >= self.window {
            state.started = now;
            state.failures = 0;
        }
        state.failures = state.failures.saturating_add(1);
        state.failures > self.max_failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guessing_tokens_is_throttled_until_the_window_passes() {
        let limiter = Limiter::new(3, Duration::from_secs(60));
        let start = Instant::now();
        let results: Vec<bool> = (0..5).map(|_| limiter.fail(start)).collect();
        assert_eq!(results, [false, false, false, true, true]);
        assert!(!limiter.fail(start + Duration::from_secs(61)));
    }
}
