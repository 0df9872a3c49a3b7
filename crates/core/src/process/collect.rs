//! A helper run to completion with a deadline and an output bound — `codex --version`,
//! `codex mcp list --json`, the login shell, the WSL helper scripts — and what it printed. Its
//! tree is ended either way.

use super::{spawn, End, ExitInfo, SpawnError, Spec};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

/// The output bound of the probes: far more than any answer they wait for.
pub const MAX_OUTPUT: usize = 1024 * 1024;
/// How long a helper may take to exit by itself once it printed what it was waited for.
pub const EXIT_GRACE: Duration = Duration::from_millis(500);

/// What a helper printed, and how it ended.
#[derive(Debug, Default)]
pub struct Collected {
    pub stdout: Vec<u8>,
    /// Its first stderr lines ([`super::Child::stderr_head`]).
    pub stderr_head: Vec<String>,
    /// What it said on stderr, at most `said_lines` lines ([`super::stderr::StderrLog::said`]).
    pub stderr_said: Vec<String>,
    pub exit: ExitInfo,
    /// Its output did not end, or it did not exit, within the deadline.
    pub timed_out: bool,
    /// It printed more than the bound: reading stopped there (`stdout` holds the first `bound`
    /// bytes) and it was ended at once.
    pub overflowed: bool,
}

/// Runs `spec` and collects its stdout until it ends, until `stop_at` appears in it, until it
/// passes `max_output` bytes, or until `timeout`; then gives it the rest of the deadline (or
/// [`EXIT_GRACE`] after `stop_at`, nothing after a timeout or an overflow) to exit.
pub async fn collect(
    spec: &Spec,
    timeout: Duration,
    max_output: usize,
    stop_at: Option<&[u8]>,
    said_lines: usize,
) -> Result<Collected, SpawnError> {
    let mut child = spawn(spec, None)?;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let deadline = Instant::now() + timeout;
    let mut out = Vec::new();
    let mut timed_out = false;
    let mut stopped = false;
    let mut overflowed = false;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        tokio::select! {
            read = stdout.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = max_output.saturating_sub(out.len());
                    out.extend_from_slice(&buf[..n.min(room)]);
                    if n > room {
                        // Whatever follows is not read: a helper that prints without end
                        // would otherwise hold the caller until the deadline.
                        overflowed = true;
                        break;
                    }
                    if stop_at.is_some_and(|marker| contains(&out, marker)) {
                        stopped = true;
                        break;
                    }
                }
            },
            _ = tokio::time::sleep_until(deadline) => {
                timed_out = true;
                break;
            }
        }
    }
    drop(stdout);
    let patience = if timed_out || overflowed {
        Duration::ZERO
    } else if stopped {
        EXIT_GRACE
    } else {
        deadline.saturating_duration_since(Instant::now())
    };
    let exited = child.wait(patience).await;
    let exit = child.end(if exited.is_some() { End::Polite(Duration::ZERO) } else { End::Kill }).await;
    // Output that ended without the process ending within the deadline is a timeout too.
    let timed_out = timed_out || (exited.is_none() && !stopped && !overflowed);
    Ok(Collected {
        stdout: out,
        stderr_head: child.stderr_head(),
        stderr_said: child.stderr_said(said_lines),
        exit,
        timed_out,
        overflowed,
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::contains;
    #[cfg(unix)]
    use {super::collect, crate::process::Launch, std::time::Duration};

    /// `sh -c script` as a helper.
    #[cfg(unix)]
    fn shell(script: &str) -> crate::process::Spec {
        Launch::new("/bin/sh", ["-c", script]).spec(Vec::<String>::new())
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn output_past_the_bound_stops_the_reading_and_ends_the_helper_at_once() {
        let run =
            collect(&shell("while :; do echo 0123456789; done"), Duration::from_secs(60), 1000, None, 0).await.unwrap();
        assert!(run.overflowed && !run.timed_out, "{run:?}");
        assert_eq!(run.stdout.len(), 1000);
        assert_eq!(run.exit.code, None, "ended, not exited: {:?}", run.exit);
        // Exactly the bound is not past it.
        let run = collect(&shell("printf '%0100d' 0"), Duration::from_secs(60), 100, None, 0).await.unwrap();
        assert!(!run.overflowed && !run.timed_out, "{run:?}");
        assert_eq!((run.stdout.len(), run.exit.code), (100, Some(0)));
    }

    #[test]
    fn finds_markers() {
        assert!(contains(b"abc__END__x", b"__END__"));
        assert!(!contains(b"abc", b""));
        assert!(!contains(b"ab", b"abc"));
    }
}
