//! A child's stderr: always drained (a full pipe would stall the child), each line handed on as
//! it arrives without terminal escapes, and the first and last lines kept for a failure's detail.

use crate::transport::{LineReader, Overflow};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncRead;

/// Lines kept from the start and from the end of stderr.
pub const KEPT_LINES: usize = 40;
/// Longest line kept (longer ones are cut, marked with `…`).
const LINE_BYTES: usize = 4096;
/// Shorter secrets are not redacted: they would blank ordinary words.
const MIN_SECRET_LEN: usize = 6;

/// What a child wrote to stderr, bounded.
#[derive(Debug, Default)]
pub struct StderrLog {
    head: Vec<String>,
    tail: VecDeque<String>,
}

impl StderrLog {
    fn push(&mut self, line: String) {
        if self.head.len() < KEPT_LINES {
            self.head.push(line.clone());
        }
        if self.tail.len() == KEPT_LINES {
            self.tail.pop_front();
        }
        self.tail.push_back(line);
    }

    /// The first lines written (a program's own error comes before a backtrace).
    pub fn head(&self) -> Vec<String> {
        self.head.clone()
    }

    /// The last lines written.
    pub fn tail(&self) -> Vec<String> {
        self.tail.iter().cloned().collect()
    }

    /// What the program said of its failure, in at most `count` lines: its error lines
    /// (`Error: …`) before any backtrace, else its first lines before a backtrace, else its
    /// last lines. Backtrace frames (Rust's numbered ones, Node's `at …`) never count.
    pub fn said(&self, count: usize) -> Vec<String> {
        let is_frame = |raw: &str| {
            let l = raw.trim_start();
            raw.len() > l.len()
                && (l.starts_with("at ") || l.split_once(": ").is_some_and(|(n, _)| n.parse::<u32>().is_ok()))
        };
        let is_trace_start = |l: &str| l.trim().eq_ignore_ascii_case("stack backtrace:");
        let meaningful = |lines: Vec<&String>| -> Vec<String> {
            lines.into_iter().filter(|l| !l.trim().is_empty() && !is_frame(l)).map(|l| l.trim().to_string()).collect()
        };
        let head = meaningful(self.head.iter().take_while(|l| !is_trace_start(l)).collect());
        // `Error: …`, `TypeError: …`, `error: …`: the first word names the error.
        let is_error = |l: &str| l.split_whitespace().next().is_some_and(|w| w.ends_with("rror:"));
        let errors: Vec<String> = head.iter().filter(|l| is_error(l)).cloned().collect();
        let chosen = if !errors.is_empty() { errors } else { head };
        if !chosen.is_empty() {
            return chosen.into_iter().take(count).collect();
        }
        let tail = meaningful(self.tail.iter().filter(|l| !is_trace_start(l)).collect());
        tail[tail.len().saturating_sub(count)..].to_vec()
    }
}

/// Receives each stderr line (without terminal escapes, redacted) as it arrives.
pub type LineSink = Box<dyn Fn(String) + Send + Sync>;

/// Reads `stderr` to its end in a task of its own. `secrets` are replaced by `<redacted>` before
/// a line goes anywhere.
pub fn drain(
    stderr: impl AsyncRead + Unpin + Send + 'static,
    secrets: &[String],
    on_line: Option<LineSink>,
) -> (Arc<Mutex<StderrLog>>, tokio::task::JoinHandle<()>) {
    let log = Arc::new(Mutex::new(StderrLog::default()));
    let mut secrets: Vec<String> = secrets.iter().filter(|s| s.len() >= MIN_SECRET_LEN).cloned().collect();
    // Longest first, so that a secret containing another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    // Its lines are logged in the context of whoever started the child (a turn's span).
    let done = tokio::spawn(tracing::Instrument::instrument(
        read_lines(stderr, log.clone(), secrets, on_line),
        tracing::Span::current(),
    ));
    (log, done)
}

async fn read_lines(
    stderr: impl AsyncRead + Unpin,
    log: Arc<Mutex<StderrLog>>,
    secrets: Vec<String>,
    on_line: Option<LineSink>,
) {
    let mut lines = LineReader::new(stderr, LINE_BYTES, Overflow::KeepHead);
    // An unreadable stderr ends like a closed one: nothing more to drain.
    while let Ok(Some(line)) = lines.next_line().await {
        // Codex colours its stderr even on a pipe: every reader (the log, a `diagnostic`, a
        // failure's stderr tail) gets the words, not the escapes.
        let mut text = crate::text::plain_line(String::from_utf8_lossy(&line.bytes).trim_end_matches('\r'));
        if line.cut {
            text.push('…');
        }
        for secret in &secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "<redacted>");
            }
        }
        log.lock().unwrap_or_else(|e| e.into_inner()).push(text.clone());
        if let Some(on_line) = &on_line {
            on_line(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_of(text: &str) -> StderrLog {
        let mut log = StderrLog::default();
        text.lines().for_each(|l| log.push(l.to_string()));
        log
    }

    #[test]
    fn what_a_failing_program_said_leaves_its_backtrace_out() {
        let node = "file:///n/codex.js:106\n  throw new Error(\n  ^\n\nError: Missing optional dependency @openai/codex-win32-x64.\n    at findCodexExecutable (file:///n/codex.js:106:9)\n    at file:///n/codex.js:109:20\n\nNode.js v20.20.2";
        assert_eq!(log_of(node).said(3), vec!["Error: Missing optional dependency @openai/codex-win32-x64."]);
        let rust = "Error: Lock violation (os error 33)\n\nStack backtrace:\n   0: <unknown>\n   9: <unknown>";
        assert_eq!(log_of(rust).said(3), vec!["Error: Lock violation (os error 33)"]);
        assert_eq!(log_of("warming up\nready\n").said(1), vec!["warming up"]);
        assert_eq!(log_of("   3: <unknown>\n").said(3), Vec::<String>::new());
    }

    #[tokio::test]
    async fn keeps_head_and_tail_cuts_long_lines_and_redacts() {
        let mut input = String::new();
        for i in 0..100 {
            input.push_str(&format!("line {i}\n"));
        }
        input.push_str(&"x".repeat(5000));
        // Coloured, with a secret whose colour codes would split it: redacted all the same.
        input.push_str("\n\u{1b}[2mtoken=\u{1b}[0ms3cret-\u{1b}[1mvalue\u{1b}[0m here\nlast without newline");
        let seen = Arc::new(Mutex::new(0usize));
        let counter = seen.clone();
        let (log, _) = drain(
            std::io::Cursor::new(input.into_bytes()),
            &["s3cret-value".to_string(), "short".to_string()],
            Some(Box::new(move |_| *counter.lock().unwrap() += 1)),
        );
        for _ in 0..200 {
            if *seen.lock().unwrap() == 103 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let log = log.lock().unwrap();
        assert_eq!(log.head().len(), KEPT_LINES);
        assert_eq!(log.head()[0], "line 0");
        let tail = log.tail();
        assert_eq!(tail.len(), KEPT_LINES);
        assert_eq!(tail[KEPT_LINES - 1], "last without newline");
        assert_eq!(tail[KEPT_LINES - 2], "token=<redacted> here");
        let cut = &tail[KEPT_LINES - 3];
        assert!(cut.ends_with('…') && cut.len() == LINE_BYTES + '…'.len_utf8());
    }
}
