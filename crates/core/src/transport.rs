//! Newline-delimited JSON framing over any byte stream.
//!
//! The reader enforces a maximum frame size without buffering an oversized line, tolerates a
//! bounded preamble of non-JSON lines before the first frame (launcher banners, shell noise),
//! and is cancel-safe: a read abandoned inside `select!` loses no bytes.

use crate::failure::{Code, Failure, FailureSource};
use crate::protocol::Incoming;
use serde::Serialize;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// The largest frame accepted from the server. Codex's largest frames are items that carry a
/// command's aggregated output or a whole diff; 16 MiB leaves wide room above those.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;
/// Non-JSON lines tolerated before the first frame.
pub const MAX_PREAMBLE_LINES: usize = 20;
/// How much of an offending line is kept in a failure's detail.
/// How much of a line a failure or a preamble diagnostic quotes.
pub const EXCERPT_CHARS: usize = 1024;

#[derive(Debug)]
pub struct Frame {
    /// The line as received (without the newline); foreign frames are passed on verbatim.
    pub line: String,
    pub message: Incoming,
}

#[derive(Debug)]
pub enum ReadItem {
    Frame(Frame),
    Preamble(String),
    Eof,
}

#[derive(Debug, PartialEq)]
pub enum FrameError {
    TooLarge { limit: usize },
    InvalidUtf8 { excerpt: String },
    Malformed { excerpt: String, reason: String },
    PreambleTooLong { lines: usize },
    Io(String),
}

impl FrameError {
    fn code(&self) -> Code {
        match self {
            FrameError::TooLarge { .. } => Code::FrameTooLarge,
            FrameError::InvalidUtf8 { .. } => Code::InvalidUtf8,
            FrameError::Malformed { .. } => Code::MalformedFrame,
            FrameError::PreambleTooLong { .. } => Code::PreambleTooLong,
            FrameError::Io(_) => Code::StdoutReadFailed,
        }
    }
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::TooLarge { limit } => write!(f, "a line from codex app-server exceeded {limit} bytes"),
            FrameError::InvalidUtf8 { .. } => f.write_str("a line from codex app-server is not valid UTF-8"),
            FrameError::Malformed { reason, .. } => {
                write!(f, "a line from codex app-server is not a JSON-RPC message: {reason}")
            }
            FrameError::PreambleTooLong { lines } => {
                write!(f, "codex app-server wrote {lines} non-JSON lines before its first message")
            }
            FrameError::Io(e) => write!(f, "reading codex app-server's stdout failed: {e}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// A frame error as the turn's failure (source `parse`).
impl From<FrameError> for Failure {
    fn from(error: FrameError) -> Failure {
        let detail = match &error {
            FrameError::TooLarge { limit } => json!({"limit": limit}),
            FrameError::InvalidUtf8 { excerpt } | FrameError::Malformed { excerpt, .. } => json!({"line": excerpt}),
            FrameError::PreambleTooLong { lines } => json!({"lines": lines}),
            FrameError::Io(_) => json!({}),
        };
        Failure::new(FailureSource::Parse, error.code(), error.to_string()).with_detail(detail)
    }
}

/// What a line longer than the reader's limit does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// It is an error at once, before the rest of it is read (a protocol frame).
    Fail,
    /// Its head is kept and the rest read and dropped (a diagnostic line).
    KeepHead,
}

/// A line that did not fit (with [`Overflow::Fail`]).
#[derive(Debug)]
pub enum LineError {
    TooLong,
    Io(std::io::Error),
}

/// One line, without its `\n` (or `\r\n`).
pub struct Line {
    pub bytes: Vec<u8>,
    /// Only its first `limit` bytes are in `bytes` ([`Overflow::KeepHead`]).
    pub cut: bool,
}

/// The lines of a byte stream, each bounded. Cancel-safe: a read abandoned inside `select!`
/// loses no bytes (a partial line stays in the reader).
pub struct LineReader<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    cut: bool,
    limit: usize,
    overflow: Overflow,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(reader: R, limit: usize, overflow: Overflow) -> Self {
        LineReader {
            reader: BufReader::with_capacity(64 * 1024, reader),
            line: Vec::new(),
            cut: false,
            limit,
            overflow,
        }
    }

    /// Whether a complete line is already buffered, so that `next_line` will not wait.
    pub fn has_buffered_line(&self) -> bool {
        memchr::memchr(b'\n', self.reader.buffer()).is_some()
    }

    /// The next line; a last line without a newline is still a line. `None` at end of stream.
    pub async fn next_line(&mut self) -> Result<Option<Line>, LineError> {
        loop {
            let available = self.reader.fill_buf().await.map_err(LineError::Io)?;
            if available.is_empty() {
                if self.line.is_empty() && !self.cut {
                    return Ok(None);
                }
                return Ok(Some(self.take()));
            }
            let (taken, complete) = match memchr::memchr(b'\n', available) {
                Some(pos) => (pos + 1, true),
                None => (available.len(), false),
            };
            let content = if complete { &available[..taken - 1] } else { available };
            let room = self.limit.saturating_sub(self.line.len());
            if content.len() > room {
                if self.overflow == Overflow::Fail {
                    return Err(LineError::TooLong);
                }
                self.cut = true;
            }
            if complete && self.line.is_empty() && !self.cut {
                // The usual case, a whole line in the buffer: one allocation of its exact size
                // rather than a buffer regrown from nothing for every line.
                let mut bytes = content.to_vec();
                self.reader.consume(taken);
                if bytes.last() == Some(&b'\r') {
                    bytes.pop();
                }
                return Ok(Some(Line { bytes, cut: false }));
            }
            self.line.extend_from_slice(&content[..content.len().min(room)]);
            self.reader.consume(taken);
            if complete {
                return Ok(Some(self.take()));
            }
        }
    }

    fn take(&mut self) -> Line {
        let mut bytes = std::mem::take(&mut self.line);
        let cut = std::mem::take(&mut self.cut);
        if !cut && bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        Line { bytes, cut }
    }
}

pub struct FrameReader<R> {
    lines: LineReader<R>,
    max_frame: usize,
    seen_frame: bool,
    preamble_lines: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(reader: R) -> Self {
        Self::with_limit(reader, MAX_FRAME_BYTES)
    }

    pub fn with_limit(reader: R, max_frame: usize) -> Self {
        FrameReader {
            lines: LineReader::new(reader, max_frame, Overflow::Fail),
            max_frame,
            seen_frame: false,
            preamble_lines: 0,
        }
    }

    /// Reads the next complete line. `None` at end of stream with nothing buffered.
    async fn next_line(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        match self.lines.next_line().await {
            Ok(line) => Ok(line.map(|l| l.bytes)),
            Err(LineError::TooLong) => Err(FrameError::TooLarge { limit: self.max_frame }),
            Err(LineError::Io(e)) => Err(FrameError::Io(e.to_string())),
        }
    }

    /// Whether a complete line is already buffered, so that `next` will not wait for input.
    pub fn has_buffered_line(&self) -> bool {
        self.lines.has_buffered_line()
    }

    /// The next frame, preamble line or end of stream.
    pub async fn next(&mut self) -> Result<ReadItem, FrameError> {
        loop {
            let Some(bytes) = self.next_line().await? else {
                return Ok(ReadItem::Eof);
            };
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line = match String::from_utf8(bytes) {
                Ok(line) => line,
                Err(e) => {
                    let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
                    if !self.seen_frame {
                        match self.preamble(&lossy)? {
                            Some(item) => return Ok(item),
                            None => continue,
                        }
                    }
                    return Err(FrameError::InvalidUtf8 { excerpt: excerpt(&lossy) });
                }
            };
            match Incoming::parse(&line) {
                Ok(message) => {
                    self.seen_frame = true;
                    return Ok(ReadItem::Frame(Frame { line, message }));
                }
                Err(reason) if self.seen_frame => {
                    return Err(FrameError::Malformed { excerpt: excerpt(&line), reason });
                }
                Err(_) => match self.preamble(&line)? {
                    Some(item) => return Ok(item),
                    None => continue,
                },
            }
        }
    }

    /// A line before the first frame: counted against the bound, and handed on as text for an
    /// app (a `diagnostic`, a log record), without terminal escapes. A line that held only
    /// escapes (a shell switching its modes) is skipped, as a blank line is.
    fn preamble(&mut self, line: &str) -> Result<Option<ReadItem>, FrameError> {
        self.preamble_lines += 1;
        if self.preamble_lines > MAX_PREAMBLE_LINES {
            return Err(FrameError::PreambleTooLong { lines: self.preamble_lines });
        }
        let text = crate::text::plain_line(line);
        Ok((!text.trim().is_empty()).then(|| ReadItem::Preamble(excerpt(&text))))
    }
}

/// The part of a line a failure or a diagnostic quotes.
pub fn excerpt(line: &str) -> String {
    crate::text::excerpt(line, EXCERPT_CHARS)
}

pub struct FrameWriter<W> {
    writer: W,
    buf: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    pub fn new(writer: W) -> Self {
        FrameWriter { writer, buf: Vec::with_capacity(1024) }
    }

    pub async fn send(&mut self, message: &impl Serialize) -> std::io::Result<()> {
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, message)?;
        self.buf.push(b'\n');
        self.writer.write_all(&self.buf).await?;
        self.writer.flush().await
    }

    /// Closes the stream (the child's stdin): `codex app-server` exits on EOF.
    pub async fn close(mut self) {
        let _ = self.writer.shutdown().await;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    async fn read_all(input: &[u8], limit: usize) -> Vec<Result<String, FrameError>> {
        drain(FrameReader::with_limit(input, limit), input.len()).await
    }

    /// Everything `reader` yields over an input of `len` bytes, up to its first error, as
    /// `frame:…` / `preamble:…` lines.
    pub(crate) async fn drain<R: AsyncRead + Unpin>(
        mut reader: FrameReader<R>,
        len: usize,
    ) -> Vec<Result<String, FrameError>> {
        let mut out = Vec::new();
        // Each item consumes at least one line, so this bound is never reached by a correct
        // reader; reaching it means a loop that reads nothing.
        for _ in 0..=len + 1 {
            match reader.next().await {
                Ok(ReadItem::Eof) => return out,
                Ok(ReadItem::Frame(f)) => out.push(Ok(format!("frame:{}", f.line))),
                Ok(ReadItem::Preamble(p)) => out.push(Ok(format!("preamble:{p}"))),
                Err(e) => {
                    out.push(Err(e));
                    return out;
                }
            }
        }
        panic!("the reader did not reach the end of {len} bytes");
    }

    #[tokio::test]
    async fn frames_preamble_and_last_line_without_newline() {
        // A launcher's banner in colour: its words only; a line of nothing but a mode switch
        // is skipped, as a blank one is.
        let input =
            b"\x1b[1mbanner\x1b[0m one\r\n\x1b[?2004h\n\n{\"method\":\"a\",\"params\":{}}\n{\"id\":1,\"result\":{}}";
        let got = read_all(input, 1024).await;
        assert_eq!(
            got,
            vec![
                Ok("preamble:banner one".to_string()),
                Ok("frame:{\"method\":\"a\",\"params\":{}}".to_string()),
                Ok("frame:{\"id\":1,\"result\":{}}".to_string()),
            ]
        );
    }

    #[tokio::test]
    async fn knows_whether_a_line_is_buffered() {
        let mut reader = FrameReader::with_limit(&b"{\"method\":\"a\"}\n{\"method\":\"b\"}\n{\"method\""[..], 1024);
        assert!(!reader.has_buffered_line(), "nothing read yet");
        assert!(matches!(reader.next().await, Ok(ReadItem::Frame(_))));
        assert!(reader.has_buffered_line());
        assert!(matches!(reader.next().await, Ok(ReadItem::Frame(_))));
        assert!(!reader.has_buffered_line(), "only a partial line is left");
    }

    #[tokio::test]
    async fn bad_line_after_first_frame_is_malformed() {
        let got = read_all(b"{\"method\":\"a\"}\nnot json\n", 1024).await;
        assert!(matches!(got.last(), Some(Err(FrameError::Malformed { .. }))));
        let got = read_all(b"{\"method\":\"a\"}\n[1]\n", 1024).await;
        assert!(matches!(got.last(), Some(Err(FrameError::Malformed { .. }))));
    }

    #[tokio::test]
    async fn invalid_utf8_after_first_frame() {
        let got = read_all(b"{\"method\":\"a\"}\n{\"method\":\"\xff\"}\n", 1024).await;
        assert!(matches!(got.last(), Some(Err(FrameError::InvalidUtf8 { .. }))));
    }

    #[tokio::test]
    async fn oversized_line_fails_without_buffering_it() {
        let mut input = b"{\"method\":\"a\"}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 10_000));
        input.push(b'\n');
        let got = read_all(&input, 4096).await;
        assert_eq!(got.last(), Some(&Err(FrameError::TooLarge { limit: 4096 })));
    }

    #[tokio::test]
    async fn preamble_is_bounded() {
        let input: Vec<u8> = (0..=MAX_PREAMBLE_LINES).flat_map(|i| format!("noise {i}\n").into_bytes()).collect();
        let got = read_all(&input, 1024).await;
        assert_eq!(got.len(), MAX_PREAMBLE_LINES + 1);
        assert_eq!(got.last(), Some(&Err(FrameError::PreambleTooLong { lines: MAX_PREAMBLE_LINES + 1 })));
    }
}
