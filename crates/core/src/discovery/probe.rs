//! Running the short-lived processes of discovery (`codex --version`, an `app-server`
//! handshake, the login shell, the WSL helper scripts) with a deadline each, and making sure
//! none of them, nor anything they started, outlives its probe.
//!
//! Every child starts in a process group of its own (the login shell in a session of its
//! own, so that an interactive shell finds no terminal to take over). When a probe ends, the
//! child gets a short grace to exit by itself, then its group (and, for Codex, every
//! descendant seen) is sent SIGTERM, then SIGKILL, and the child is reaped. A probe future
//! dropped half-way kills the group from a guard.

use super::env::Env;
use crate::process::ExitInfo;
use crate::protocol::{method, InitializeResult, Incoming, Outgoing};
use crate::transport::{excerpt, FrameError, FrameReader, FrameWriter, ReadItem};
use serde_json::json;
use std::collections::VecDeque;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// How long a probe child may take to exit by itself once its work is done (after stdin
/// closed, for the handshake: app-server exits within tens of milliseconds).
pub const EXIT_GRACE: Duration = Duration::from_millis(500);
/// Between SIGTERM and SIGKILL.
#[cfg(unix)]
const TERM_GRACE: Duration = Duration::from_millis(500);
/// Output kept from a helper (`--version`, the login shell, the WSL scripts).
const MAX_OUTPUT: usize = 1024 * 1024;
/// Largest line accepted during the handshake.
const MAX_HANDSHAKE_FRAME: usize = 1024 * 1024;
/// Stderr kept for a reason.
const STDERR_TAIL_BYTES: usize = 4096;
/// Messages other than the `initialize` response tolerated during the handshake.
const MAX_OTHER_MESSAGES: usize = 100;

/// A program and its arguments, as the host starts them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cmd {
    pub program: String,
    pub args: Vec<String>,
}

impl Cmd {
    pub fn new(program: impl Into<String>, args: impl IntoIterator<Item = impl Into<String>>) -> Cmd {
        Cmd { program: program.into(), args: args.into_iter().map(Into::into).collect() }
    }

    pub fn with_arg(&self, arg: &str) -> Cmd {
        let mut cmd = self.clone();
        cmd.args.push(arg.to_string());
        cmd
    }
}

/// What is signalled when a probe ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The process group, plus every descendant that moved out of it (Codex probes).
    Tree,
    /// A new session: only its process group (the login shell; agents it daemonised are the
    /// user's and are left alone).
    Session,
}

fn command(cmd: &Cmd, env: &Env, scope: Scope) -> Command {
    let mut command = Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .env_clear()
        .envs(env.pairs().iter().map(|(k, v)| (k, v)))
        .kill_on_drop(true);
    // Not wherever the host process happens to be (a deleted or slow directory).
    let cwd = std::env::temp_dir();
    if cwd.is_dir() {
        command.current_dir(cwd);
    }
    #[cfg(unix)]
    match scope {
        Scope::Tree => {
            command.process_group(0);
        }
        Scope::Session => {
            // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
            unsafe {
                command.pre_exec(|| {
                    if libc::setsid() == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
    }
    #[cfg(windows)]
    {
        let _ = scope;
        // CREATE_NO_WINDOW: a GUI host must not flash a console per probe.
        command.creation_flags(0x0800_0000);
    }
    command
}

/// Kills the child's process group if the probe is abandoned before it ended the child.
struct GroupGuard {
    #[cfg_attr(not(unix), allow(dead_code))]
    pgid: Option<u32>,
}

impl GroupGuard {
    fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            // SAFETY: signalling a process group we created; ESRCH is fine.
            unsafe {
                libc::killpg(pgid as i32, libc::SIGKILL);
            }
        }
    }
}

async fn wait(child: &mut Child, within: Duration) -> Option<ExitInfo> {
    match tokio::time::timeout(within, child.wait()).await {
        Ok(Ok(status)) => Some(status.into()),
        _ => None,
    }
}

#[cfg(unix)]
fn signal_group(pgid: u32, signal: i32) {
    // SAFETY: signalling a process group we created; ESRCH (already gone) is fine.
    unsafe {
        libc::killpg(pgid as i32, signal);
    }
}

#[cfg(unix)]
fn group_alive(pgid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::killpg(pgid as i32, 0) == 0 }
}

/// Ends a probe child: up to `wait_for` to exit by itself, then SIGTERM to its group (always,
/// for anything it left behind), SIGKILL after a grace, reaped. The exit, if it exited.
async fn finish(child: &mut Child, pid: Option<u32>, wait_for: Duration, scope: Scope) -> Option<ExitInfo> {
    let Some(pid) = pid else {
        return wait(child, wait_for).await;
    };
    #[cfg(unix)]
    {
        use crate::process::tree::{Signal, Tree};
        let mut tree = (scope == Scope::Tree).then(|| Tree::capture(pid));
        let mut exit = wait(child, wait_for).await;
        let send = |signal: Signal| match &tree {
            Some(tree) => tree.signal(signal),
            None => signal_group(pid, if matches!(signal, Signal::Term) { libc::SIGTERM } else { libc::SIGKILL }),
        };
        send(Signal::Term);
        if exit.is_none() {
            exit = wait(child, TERM_GRACE).await;
        }
        if exit.is_none() {
            send(Signal::Kill);
            exit = child.wait().await.ok().map(ExitInfo::from);
        }
        match &mut tree {
            Some(tree) => tree.finish(TERM_GRACE).await,
            None => {
                let until = Instant::now() + TERM_GRACE;
                while group_alive(pid) && Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                signal_group(pid, libc::SIGKILL);
            }
        }
        exit
    }
    #[cfg(not(unix))]
    {
        let _ = (pid, scope);
        let mut exit = wait(child, wait_for).await;
        if exit.is_none() {
            let _ = child.start_kill();
            exit = child.wait().await.ok().map(ExitInfo::from);
        }
        exit
    }
}

/// The last bytes of a stream, read to its end.
async fn tail_of(mut stream: impl AsyncRead + Unpin) -> Vec<u8> {
    let mut tail: VecDeque<u8> = VecDeque::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        tail.extend(&buf[..n]);
        let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
        tail.drain(..excess);
    }
    tail.into_iter().collect()
}

/// The stderr tail of a finished child; a grandchild holding the pipe does not stall it.
async fn take_tail(task: tokio::task::JoinHandle<Vec<u8>>) -> String {
    let abort = task.abort_handle();
    match tokio::time::timeout(Duration::from_millis(200), task).await {
        Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        _ => {
            abort.abort();
            String::new()
        }
    }
}

/// The last few non-empty lines of a stderr tail, joined for a reason.
pub fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let start = lines.len().saturating_sub(count);
    lines[start..].iter().map(|l| excerpt_chars(l, 300)).collect::<Vec<_>>().join(" | ")
}

fn excerpt_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    format!("{}…", text.chars().take(max).collect::<String>())
}

/// The output of a helper run to completion (or to its deadline).
#[derive(Debug, Default)]
pub struct Collected {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub exit: Option<ExitInfo>,
    pub timed_out: bool,
}

/// Runs `cmd` with stdin closed and collects its stdout until it ends, until `stop_at`
/// appears in it, or until `timeout`. The child and its group are ended either way.
pub async fn collect(
    cmd: &Cmd,
    env: &Env,
    timeout: Duration,
    scope: Scope,
    stop_at: Option<&[u8]>,
) -> std::io::Result<Collected> {
    let mut child = command(cmd, env, scope)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = child.id();
    let mut guard = GroupGuard { pgid: pid };
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let stderr = tokio::spawn(tail_of(child.stderr.take().expect("stderr is piped")));
    let deadline = Instant::now() + timeout;
    let mut out = Vec::new();
    let mut timed_out = false;
    let mut stopped = false;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        tokio::select! {
            read = stdout.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = MAX_OUTPUT.saturating_sub(out.len());
                    out.extend_from_slice(&buf[..n.min(room)]);
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
    let wait_for = if timed_out {
        Duration::ZERO
    } else if stopped {
        EXIT_GRACE
    } else {
        deadline.saturating_duration_since(Instant::now())
    };
    let exit = finish(&mut child, pid, wait_for, scope).await;
    guard.disarm();
    // Output that ended without the process ending within the deadline is a timeout too.
    let timed_out = timed_out || (exit.is_none() && !stopped);
    Ok(Collected { stdout: out, stderr: take_tail(stderr).await, exit, timed_out })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

fn describe_exit(exit: Option<ExitInfo>) -> String {
    match exit {
        Some(ExitInfo { code: Some(code), .. }) => format!("exit code {code}"),
        Some(ExitInfo { signal: Some(signal), .. }) => format!("signal {signal}"),
        _ => "no exit status".to_string(),
    }
}

fn with_stderr(reason: String, stderr: &str) -> String {
    let tail = last_lines(stderr, 3);
    if tail.is_empty() {
        reason
    } else {
        format!("{reason}; stderr: {tail}")
    }
}

fn spawn_reason(what: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("{what} could not be started: not found ({e})"),
        std::io::ErrorKind::PermissionDenied => format!("{what} could not be started: not executable ({e})"),
        _ => format!("{what} could not be started: {e}"),
    }
}

/// Probe 2: `<cmd> --version` answers with a version. The stdout text on success.
pub async fn version(cmd: &Cmd, env: &Env, timeout: Duration) -> Result<String, String> {
    let run = collect(&cmd.with_arg("--version"), env, timeout, Scope::Tree, None)
        .await
        .map_err(|e| spawn_reason("it", &e))?;
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    if run.timed_out {
        return Err(with_stderr(format!("`--version` did not finish within {} ms", timeout.as_millis()), &run.stderr));
    }
    match run.exit {
        Some(ExitInfo { code: Some(0), .. }) => Ok(stdout),
        exit => Err(with_stderr(format!("`--version` failed ({})", describe_exit(exit)), &run.stderr)),
    }
}

/// Probe 3: `<cmd> app-server` completes the `initialize` handshake. The `userAgent` on success.
pub async fn handshake(cmd: &Cmd, env: &Env, timeout: Duration) -> Result<String, String> {
    let mut child = command(&cmd.with_arg("app-server"), env, Scope::Tree)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_reason("`app-server`", &e))?;
    let pid = child.id();
    let mut guard = GroupGuard { pgid: pid };
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = tokio::spawn(tail_of(child.stderr.take().expect("stderr is piped")));
    let mut writer = FrameWriter::new(stdin);
    let mut preamble: Vec<String> = Vec::new();

    enum Failure {
        Reason(String),
        /// Ended (EOF or a broken pipe): the reason needs the exit status.
        Ended(String),
    }
    let exchange = async {
        let request = Outgoing {
            id: Some(1),
            method: method::INITIALIZE,
            params: Some(json!({"clientInfo": {
                "name": crate::turn::CLIENT_NAME,
                "title": null,
                "version": crate::turn::CLIENT_VERSION,
            }})),
        };
        if let Err(e) = writer.send(&request).await {
            return Err(Failure::Ended(format!("`app-server` closed its input before the handshake ({e})")));
        }
        let mut reader = FrameReader::with_limit(stdout, MAX_HANDSHAKE_FRAME);
        let mut others = 0;
        loop {
            match reader.next().await {
                Ok(ReadItem::Frame(frame)) => match frame.message {
                    Incoming::Response { id, outcome } if id == json!(1) => {
                        return match outcome {
                            Ok(result) => serde_json::from_str::<InitializeResult>(result.get())
                                .map(|r| r.user_agent)
                                .map_err(|_| {
                                    Failure::Reason(format!(
                                        "`app-server` answered `initialize` without a userAgent: {}",
                                        excerpt_chars(&frame.line, 300)
                                    ))
                                }),
                            Err(error) => Err(Failure::Reason(format!(
                                "`app-server` rejected `initialize`: {} ({})",
                                error.message, error.code
                            ))),
                        };
                    }
                    _ => {
                        others += 1;
                        if others > MAX_OTHER_MESSAGES {
                            return Err(Failure::Reason(format!(
                                "`app-server` sent {MAX_OTHER_MESSAGES} messages but no `initialize` response"
                            )));
                        }
                    }
                },
                Ok(ReadItem::Preamble(line)) => preamble.push(line),
                Ok(ReadItem::Eof) => {
                    return Err(Failure::Ended("`app-server` exited before answering `initialize`".into()))
                }
                Err(e) => return Err(Failure::Reason(format!("`app-server` {}", describe_frame_error(&e)))),
            }
        }
    };
    let outcome = match tokio::time::timeout(timeout, exchange).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Failure::Reason(format!(
            "`app-server` did not answer `initialize` within {} ms",
            timeout.as_millis()
        ))),
    };
    // Close stdin: app-server exits on EOF. Then make sure nothing of it is left.
    writer.close().await;
    let exit = finish(&mut child, pid, EXIT_GRACE, Scope::Tree).await;
    guard.disarm();
    let stderr = take_tail(stderr).await;
    outcome.map_err(|failure| {
        let mut reason = match failure {
            Failure::Reason(reason) => reason,
            Failure::Ended(reason) => format!("{reason} ({})", describe_exit(exit)),
        };
        if !preamble.is_empty() {
            let printed: Vec<String> = preamble.iter().rev().take(3).rev().map(|l| excerpt_chars(l, 200)).collect();
            reason = format!("{reason}; it printed: {}", printed.join(" | "));
        }
        with_stderr(reason, &stderr)
    })
}

fn describe_frame_error(e: &FrameError) -> String {
    match e {
        FrameError::TooLarge { limit } => format!("sent a line longer than {limit} bytes instead of `initialize`'s response"),
        FrameError::InvalidUtf8 { excerpt } => format!("sent a line that is not UTF-8: {excerpt}"),
        FrameError::Malformed { excerpt: line, reason } => {
            format!("sent a line that is not a protocol message ({reason}): {}", excerpt(line))
        }
        FrameError::PreambleTooLong { lines } => {
            format!("printed {lines} lines that are not protocol messages instead of answering `initialize`")
        }
        FrameError::Io(e) => format!("output could not be read: {e}"),
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

    #[test]
    fn finds_markers() {
        assert!(contains(b"abc__END__x", b"__END__"));
        assert!(!contains(b"abc", b""));
        assert!(!contains(b"ab", b"abc"));
    }
}
