//! Wrong tokens are rate-limited per client address: past a number of
//! failures in a window, that address's further wrong attempts are answered
//! "too many" without being checked. A right token always passes, so a flood
//! of wrong ones cannot lock the owner out, and one noisy client does not
//! throttle another.
//!
//! The limit slows guessing from one address; it does not stop guesses
//! spread over many addresses (a 256-bit token needs no such help), and
//! behind a reverse proxy every client shares the proxy's address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Addresses remembered at most; past it, expired windows are forgotten
/// first, then the oldest.
const MAX_CLIENTS: usize = 4096;

pub struct Limiter {
    max_failures: u32,
    window: Duration,
    clients: Mutex<HashMap<Option<IpAddr>, Window>>,
}

#[derive(Clone, Copy)]
struct Window {
    started: Instant,
    failures: u32,
}

/// What one more failure from a client means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// Over the limit: answer "too many" without checking.
    pub throttled: bool,
    /// The first failure of this client's window: the one to log.
    pub first_in_window: bool,
    /// The failures of the client's window before this one, when it had
    /// any (said in the log line of the new window).
    pub previous_window: Option<u32>,
}

impl Limiter {
    pub fn new(max_failures: u32, window: Duration) -> Limiter {
        Limiter {
            max_failures,
            window,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a failure of `client` (`None` when its address is unknown) at `now`.
    pub fn fail(&self, client: Option<IpAddr>, now: Instant) -> Failure {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if clients.len() >= MAX_CLIENTS && !clients.contains_key(&client) {
            self.forget_some(&mut clients, now);
        }
        let window = clients.entry(client).or_insert(Window {
            started: now,
            failures: 0,
        });
        let mut previous_window = None;
        if now.saturating_duration_since(window.started) >= self.window {
            previous_window = Some(window.failures);
            *window = Window {
                started: now,
                failures: 0,
            };
        }
        window.failures = window.failures.saturating_add(1);
        Failure {
            throttled: window.failures > self.max_failures,
            first_in_window: window.failures == 1,
            previous_window,
        }
    }

    /// Makes room: expired windows go, and if none had, the oldest one.
    fn forget_some(&self, clients: &mut HashMap<Option<IpAddr>, Window>, now: Instant) {
        clients.retain(|_, w| now.saturating_duration_since(w.started) < self.window);
        if clients.len() >= MAX_CLIENTS
            && let Some(oldest) = clients
                .iter()
                .min_by_key(|(_, w)| w.started)
                .map(|(client, _)| *client)
        {
            clients.remove(&oldest);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn ip(last: u8) -> Option<IpAddr> {
        Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, last)))
    }

    #[test]
    fn guessing_tokens_is_throttled_until_the_window_passes() {
        let limiter = Limiter::new(3, Duration::from_secs(60));
        let start = Instant::now();
        let results: Vec<bool> = (0..5)
            .map(|_| limiter.fail(ip(1), start).throttled)
            .collect();
        assert_eq!(results, [false, false, false, true, true]);
        assert!(
            !limiter
                .fail(ip(1), start + Duration::from_secs(61))
                .throttled
        );
    }

    #[test]
    fn one_guessing_client_does_not_throttle_another() {
        let limiter = Limiter::new(3, Duration::from_secs(60));
        let start = Instant::now();
        for _ in 0..10 {
            limiter.fail(ip(1), start);
        }
        assert!(limiter.fail(ip(1), start).throttled);
        assert!(!limiter.fail(ip(2), start).throttled);
        assert!(!limiter.fail(None, start).throttled);
    }

    #[test]
    fn a_window_is_logged_once_with_the_count_of_the_one_before() {
        let limiter = Limiter::new(3, Duration::from_secs(60));
        let start = Instant::now();
        let first: Vec<Failure> = (0..7).map(|_| limiter.fail(ip(1), start)).collect();
        assert_eq!(first.iter().filter(|f| f.first_in_window).count(), 1);
        assert!(first[0].first_in_window && first[0].previous_window.is_none());
        let next = limiter.fail(ip(1), start + Duration::from_secs(60));
        assert!(next.first_in_window);
        assert_eq!(next.previous_window, Some(7));
    }

    #[test]
    fn the_limiter_remembers_a_bounded_number_of_clients() {
        let limiter = Limiter::new(3, Duration::from_secs(60));
        let start = Instant::now();
        for n in 0..(MAX_CLIENTS as u32 + 10) {
            let client = Some(IpAddr::V4(Ipv4Addr::from(0xc612_0000 + n)));
            limiter.fail(client, start + Duration::from_millis(u64::from(n)));
        }
        let clients = limiter.clients.lock().unwrap();
        assert!(clients.len() <= MAX_CLIENTS, "{}", clients.len());
        assert!(
            !clients.contains_key(&Some(IpAddr::V4(Ipv4Addr::from(0xc612_0000)))),
            "the oldest client was forgotten"
        );
    }
}
