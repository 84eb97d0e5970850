//! Where Rivet may send a browser after logging it in: a path on this host,
//! never another. Every redirect built from a request's path or from a
//! value a page sent back goes through [`local_target`].
//!
//! A browser reads `//evil.example/x` as a scheme-relative URL, treats `\`
//! as `/` and drops tabs and newlines from URLs, so `/\evil.example`,
//! `/\t/evil.example` and `/%2F%2Fevil.example` (once something decodes it)
//! would all leave the host. Such targets, absolute URLs and anything that
//! is not a plain path become `/`.

/// The longest target kept; a longer one becomes `/`.
const MAX_TARGET: usize = 2048;

/// How many rounds of percent-decoding are checked: a target that is
/// still encoded after that is refused rather than trusted.
const DECODE_ROUNDS: usize = 3;

/// `target` (a path with an optional query) when it stays on this host,
/// else `/`.
pub fn local_target(target: &str) -> String {
    if stays_on_host(target) {
        target.to_owned()
    } else {
        "/".to_owned()
    }
}

fn stays_on_host(target: &str) -> bool {
    if target.is_empty()
        || target.len() > MAX_TARGET
        || !target.bytes().all(|b| b.is_ascii_graphic())
    {
        return false;
    }
    let path = target.split(['?', '#']).next().unwrap_or("");
    if path.contains('\\') {
        return false;
    }
    let mut form = path.to_owned();
    for _ in 0..DECODE_ROUNDS {
        if !starts_on_host(&form) {
            return false;
        }
        let decoded = percent_decode(&form);
        if decoded == form {
            return true;
        }
        form = decoded;
    }
    false
}

/// A path whose start a browser reads as this host's: one `/`, not followed
/// by another, a backslash, white space or a control character.
fn starts_on_host(path: &str) -> bool {
    let mut chars = path.chars();
    chars.next() == Some('/')
        && !chars
            .next()
            .is_some_and(|c| c == '/' || c == '\\' || c.is_whitespace() || c.is_control())
}

/// `%XX` sequences decoded to bytes; an invalid sequence stays as it is.
/// Bytes that are not UTF-8 are replaced.
fn percent_decode(form: &str) -> String {
    let bytes = form.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
        });
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_path_and_its_query_are_kept() {
        for target in [
            "/",
            "/p/abc123",
            "/p/abc?x=1&y=%20two",
            "/import",
            "/a/b%2Fc",
        ] {
            assert_eq!(local_target(target), target);
        }
    }

    #[test]
    fn a_scheme_relative_path_cannot_leave_the_host() {
        assert_eq!(local_target("//evil.example/x"), "/");
        assert_eq!(local_target("///evil.example/x"), "/");
    }

    #[test]
    fn a_backslash_after_the_first_slash_cannot_leave_the_host() {
        assert_eq!(local_target("/\\evil.example/x"), "/");
        assert_eq!(local_target("\\\\evil.example/x"), "/");
        assert_eq!(local_target("/p/\\x"), "/");
    }

    #[test]
    fn encoded_slashes_and_backslashes_cannot_leave_the_host() {
        for target in [
            "/%2F%2Fevil.example/x",
            "/%2fevil.example/x",
            "%2F%2Fevil.example/x",
            "/%5Cevil.example/x",
            "/%5cevil.example",
            "/%252F%252Fevil.example",
            "/%25252F%25252Fevil.example",
        ] {
            assert_eq!(local_target(target), "/", "{target}");
        }
    }

    #[test]
    fn an_absolute_url_cannot_leave_the_host() {
        for target in [
            "http://evil.example/x",
            "https://evil.example",
            "javascript:alert(1)",
            "evil.example/x",
            "",
        ] {
            assert_eq!(local_target(target), "/", "{target}");
        }
    }

    #[test]
    fn white_space_and_control_characters_cannot_hide_a_second_slash() {
        for target in [
            "/\t/evil.example",
            "/\n/evil.example",
            "/%09/evil.example",
            "/ /evil.example",
            "/p/\u{e9}",
        ] {
            assert_eq!(local_target(target), "/", "{target:?}");
        }
    }

    #[test]
    fn a_target_longer_than_the_limit_becomes_the_root() {
        let long = format!("/{}", "a".repeat(MAX_TARGET));
        assert_eq!(local_target(&long), "/");
    }
}
