//! NDJSON framing (protocols.md §0): one JSON object per `\n`-terminated line, framed on raw
//! bytes so lines of any size (file contents, tool results) arrive whole. Blank lines and
//! lines not starting with `{` (debug text some builds print) are skipped; a line starting
//! with `{` that does not parse is a protocol error.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

use super::ProviderError;

/// The longest line accepted (a guard against a runaway child, not a protocol limit).
const MAX_LINE: u64 = 256 * 1024 * 1024;

/// Reads JSON objects line by line.
#[derive(Debug)]
pub(crate) struct NdjsonReader<R> {
    adapter: &'static str,
    inner: BufReader<R>,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin> NdjsonReader<R> {
    /// Wraps a byte stream.
    pub(crate) fn new(adapter: &'static str, inner: R) -> Self {
        Self {
            adapter,
            inner: BufReader::with_capacity(64 * 1024, inner),
            line: Vec::new(),
        }
    }

    /// The next object, `None` at end of stream.
    ///
    /// # Errors
    /// [`ProviderError::BadOutput`] for a malformed or oversized line,
    /// [`ProviderError::StreamCut`] when reading fails.
    pub(crate) async fn next(&mut self) -> Result<Option<Value>, ProviderError> {
        loop {
            self.line.clear();
            let read = (&mut self.inner)
                .take(MAX_LINE)
                .read_until(b'\n', &mut self.line)
                .await
                .map_err(|error| {
                    ProviderError::stream_cut(
                        self.adapter,
                        format!("reading stdout failed: {error}"),
                    )
                })?;
            if read == 0 {
                return Ok(None);
            }
            if self.line.last() != Some(&b'\n') && read as u64 >= MAX_LINE {
                return Err(ProviderError::bad_output(
                    self.adapter,
                    format!("an output line is longer than {MAX_LINE} bytes"),
                ));
            }
            let text = self.line.trim_ascii();
            if !text.starts_with(b"{") {
                continue;
            }
            return serde_json::from_slice(text).map(Some).map_err(|error| {
                ProviderError::bad_output(
                    self.adapter,
                    format!(
                        "an output line is not valid JSON ({error}): {}",
                        preview(text)
                    ),
                )
            });
        }
    }
}

fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_by_newline_and_skips_noise() {
        let big = "x".repeat(200_000);
        let input =
            format!("debug text\n\n{{\"a\":1}}\r\n{{\"big\":\"{big}\"}}\n{{\"last\":true}}");
        let mut reader = NdjsonReader::new("t", input.as_bytes());
        assert_eq!(
            reader.next().await.expect("ok"),
            Some(serde_json::json!({"a": 1}))
        );
        let value = reader.next().await.expect("ok").expect("a value");
        assert_eq!(value["big"].as_str().map(str::len), Some(200_000));
        assert_eq!(
            reader.next().await.expect("ok"),
            Some(serde_json::json!({"last": true}))
        );
        assert_eq!(reader.next().await.expect("ok"), None);
    }

    #[tokio::test]
    async fn a_broken_object_is_bad_output() {
        let mut reader = NdjsonReader::new("t", &b"{\"a\":\n"[..]);
        let error = reader.next().await.expect_err("malformed");
        assert!(matches!(error, ProviderError::BadOutput { .. }), "{error}");
    }
}
