//! Running the short-lived processes of discovery (`codex --version`, an `app-server`
//! handshake through the exchange, the login shell, the WSL helper scripts) with a deadline
//! each. They are children like any other ([`crate::process`]): a probe that ends, or is dropped
//! half-way because nobody waits for its discovery any more, leaves nothing of its child
//! running.

use super::env::Env;
use crate::cancel::Cancel;
use crate::exchange::{handshake, Exchange, Frame, Input, Output, Owner, Stop, Wire};
use crate::failure::Code;
use crate::process::collect::{Collected, MAX_OUTPUT};
use crate::process::{self, End, ExitInfo, Launch, Scope, SpawnError, Spec};
use crate::rpc::Connection;
use crate::transport::FrameReader;
use std::future::Future;
use std::time::Duration;

/// Largest line accepted during the handshake.
const MAX_HANDSHAKE_FRAME: usize = 1024 * 1024;
/// Messages other than the `initialize` response tolerated during the handshake.
const MAX_OTHER_MESSAGES: usize = 100;

/// A probe child: `launch` with `args`, the environment given and nothing else.
fn spec(launch: &Launch, env: &Env, args: &[&str], scope: Scope) -> Spec {
    let mut spec = launch.spec(args.iter().copied());
    spec.launch.env = env.pairs().to_vec();
    spec.launch.clear_env = true;
    spec.scope = scope;
    spec
}

/// The last few non-empty lines of a stderr tail, joined for a reason.
pub fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let start = lines.len().saturating_sub(count);
    lines[start..].iter().map(|l| crate::text::excerpt(l, 300)).collect::<Vec<_>>().join(" | ")
}

/// Runs `launch` as it is (stdin closed) with `env` alone: see [`process::collect::collect`].
pub async fn collect(
    launch: &Launch,
    env: &Env,
    timeout: Duration,
    scope: Scope,
    stop_at: Option<&[u8]>,
) -> Result<Collected, SpawnError> {
    process::collect::collect(&spec(launch, env, &[], scope), timeout, MAX_OUTPUT, stop_at, STDERR_SAID_LINES).await
}

/// Lines of stderr a reason quotes.
const STDERR_SAID_LINES: usize = 3;

fn with_stderr(reason: String, stderr: &[String]) -> String {
    if stderr.is_empty() {
        return reason;
    }
    let said: Vec<String> = stderr.iter().map(|l| crate::text::excerpt(l, 300)).collect();
    format!("{reason}; stderr: {}", said.join(" | "))
}

fn spawn_reason(what: &str, e: &SpawnError) -> String {
    match e {
        SpawnError::NotFound(m) => format!("{what} could not be started: not found ({m})"),
        SpawnError::NotExecutable(m) => format!("{what} could not be started: not executable ({m})"),
        SpawnError::CwdNotFound(m) | SpawnError::Other(m) => format!("{what} could not be started: {m}"),
        SpawnError::GuardUnavailable(why) => format!("{what} was not started: {why}"),
    }
}

/// Probe 2: `<cmd> --version` answers with a version. The stdout text on success.
pub async fn version(launch: &Launch, env: &Env, timeout: Duration) -> Result<String, String> {
    let spec = spec(launch, env, &["--version"], Scope::Tree);
    let run = process::collect::collect(&spec, timeout, MAX_OUTPUT, None, STDERR_SAID_LINES)
        .await
        .map_err(|e| spawn_reason("it", &e))?;
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    if run.overflowed {
        return Err(format!("`--version` printed more than {} MiB", MAX_OUTPUT / (1024 * 1024)));
    }
    if run.timed_out {
        return Err(with_stderr(
            format!("`--version` did not finish within {} ms", timeout.as_millis()),
            &run.stderr_said,
        ));
    }
    match run.exit {
        ExitInfo { code: Some(0), .. } => Ok(stdout),
        // A crash (or an outside kill) while probed is not a refusal to answer: say which.
        exit if exit.killed_by_signal() => {
            Err(with_stderr(format!("`--version` {} while probed", exit.how()), &run.stderr_said))
        }
        exit => Err(with_stderr(format!("`--version` failed ({})", ExitInfo::describe(Some(exit))), &run.stderr_said)),
    }
}

/// Probe 3: `<cmd> app-server` completes the handshake every run makes
/// ([`handshake::handshake`]), over the exchange every run speaks through, with the probe's
/// timeout as `initialize`'s deadline. The `userAgent` on success.
pub async fn handshake(launch: &Launch, env: &Env, timeout: Duration) -> Result<String, String> {
    let mut spec = spec(launch, env, &["app-server"], Scope::Tree);
    spec.stdin = true;
    let mut child = process::spawn(&spec, None).map_err(|e| spawn_reason("`app-server`", &e))?;
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let conn = Connection::new(FrameReader::with_limit(stdout, MAX_HANDSHAKE_FRAME), stdin);
    // Nothing aborts a probe: one that nobody waits for any more is dropped, and its child with it.
    let cancel = Cancel::new();
    let mut exchange = Exchange::new(conn, &cancel, timeout);
    let mut probe = Probe::default();
    let outcome = handshake::handshake(&mut exchange, &mut probe, false).await;
    // Close stdin: app-server exits on EOF. Then make sure nothing of it is left. Whether it
    // left by itself tells a crash from a server that merely stopped talking: only the former's
    // status is its own, the latter's is the signal sent here.
    exchange.close().await;
    // app-server exits within tens of milliseconds of its stdin closing.
    let by_itself = child.wait(process::collect::EXIT_GRACE).await;
    child.end(End::Polite(Duration::ZERO)).await;
    let stderr = child.stderr_said(STDERR_SAID_LINES);
    outcome.map(|hello| hello.user_agent).map_err(|stop| {
        let mut reason = failed_handshake(stop, timeout, by_itself);
        if !probe.preamble.is_empty() {
            let printed: Vec<String> =
                probe.preamble.iter().rev().take(3).rev().map(|l| crate::text::excerpt(l, 200)).collect();
            reason = format!("{reason}; it printed: {}", printed.join(" | "));
        }
        with_stderr(reason, &stderr)
    })
}

/// The handshake probe as the exchange's owner: it waits for `initialize`'s answer alone,
/// keeping what the child printed before the protocol and counting anything else it sent.
#[derive(Default)]
struct Probe {
    preamble: Vec<String>,
    others: usize,
}

impl Owner for Probe {
    type Wake = ();

    fn on_frame<R: Input, W: Output>(
        &mut self,
        frame: Frame,
        _wire: &mut Wire<'_, R, W>,
    ) -> impl Future<Output = Result<(), Stop>> + Send {
        let handled = match frame {
            Frame::Preamble(line) => {
                self.preamble.push(line);
                Ok(())
            }
            // Neither answered nor kept: a server that says this much else is not answering.
            Frame::Notification { .. } | Frame::Request { .. } | Frame::Stray(_) => {
                self.others += 1;
                if self.others > MAX_OTHER_MESSAGES {
                    Err(Stop::Done)
                } else {
                    Ok(())
                }
            }
        };
        std::future::ready(handled)
    }
}

/// Why the handshake failed, in the probe's words. `by_itself`: how the child ended before it
/// was ended here, if it did.
fn failed_handshake(stop: Stop, timeout: Duration, by_itself: Option<ExitInfo>) -> String {
    match stop {
        Stop::Failed(failure) => match failure.code {
            Code::RequestTimeout => {
                format!("`app-server` did not answer `initialize` within {} ms", timeout.as_millis())
            }
            Code::UnexpectedResponse => format!(
                "`app-server` answered `initialize` without a userAgent: {}",
                crate::text::excerpt(failure.detail["result"].as_str().unwrap_or_default(), 300)
            ),
            Code::RequestFailed | Code::MethodUnsupported => {
                format!("`app-server` rejected `initialize`: {} ({})", failure.message, failure.detail["code"])
            }
            // Its stdout stopped being the protocol (a line too long, not UTF-8, not JSON-RPC).
            _ => format!("`app-server` did not answer `initialize`: {}", failure.message),
        },
        Stop::Done => format!("`app-server` sent {MAX_OTHER_MESSAGES} messages but no `initialize` response"),
        // Its output ended (EOF or a broken pipe) before the answer: how it ended is the reason.
        Stop::Eof { .. } => match by_itself {
            Some(exit) if exit.killed_by_signal() => {
                format!("`app-server` {} before answering `initialize`", exit.how())
            }
            Some(exit) => format!("`app-server` {} without answering `initialize`", exit.how()),
            None => "`app-server` closed its output without answering `initialize` and did not exit".to_string(),
        },
        // Nothing cancels a probe's exchange; said for completeness.
        Stop::Cancelled => "the `app-server` probe was cancelled".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_lines_of_stderr() {
        assert_eq!(last_lines("a\n\n b \nc\nd\n", 3), "b | c | d");
        assert_eq!(last_lines("", 3), "");
        assert!(last_lines(&"x".repeat(1000), 1).ends_with('…'));
    }
}
