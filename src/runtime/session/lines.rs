//! Newline-delimited JSON framing for the session feed. Network chunks split
//! lines (and multi-byte characters) anywhere; a line is handed on only once
//! it is whole, so it is always complete UTF-8.

/// One line of a feed: `value`'s JSON and its `\n`. Serialising Rivet's
/// own types cannot fail; if it did, the line would be empty, which
/// [`LineDecoder`] skips.
pub fn encode_line<T: serde::Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(value).unwrap_or_default();
    line.push(b'\n');
    line
}

#[derive(Default)]
pub struct LineDecoder {
    partial: Vec<u8>,
}

impl LineDecoder {
    /// Adds a chunk and returns the lines it completed, without their `\n`.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        let mut lines = Vec::new();
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let mut line = std::mem::take(&mut self.partial);
            line.extend_from_slice(&rest[..end]);
            if !line.is_empty() {
                lines.push(line);
            }
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_survive_any_split() {
        let text = "{\"a\":\"é€\"}\n\n{\"b\":2}\n{\"c\"";
        let bytes = text.as_bytes();
        for cut in 0..=bytes.len() {
            let mut decoder = LineDecoder::default();
            let mut lines = decoder.push(&bytes[..cut]);
            lines.extend(decoder.push(&bytes[cut..]));
            let lines: Vec<String> = lines
                .into_iter()
                .map(|l| String::from_utf8(l).unwrap())
                .collect();
            assert_eq!(lines, ["{\"a\":\"é€\"}", "{\"b\":2}"], "cut at {cut}");
        }
    }

    #[test]
    fn encoded_lines_decode_to_their_values() {
        let values = [
            serde_json::json!({"a": "line\nbreak"}),
            serde_json::json!([1, 2]),
        ];
        let bytes: Vec<u8> = values.iter().flat_map(encode_line).collect();
        let decoded: Vec<serde_json::Value> = LineDecoder::default()
            .push(&bytes)
            .iter()
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(decoded, values);
    }
}
