//! The child process: spawn in its own process group, drain stderr, and end the whole tree.
//!
//! Ending is ordered so that `codex app-server` can shut down by itself first: the caller
//! closes stdin (the server exits on EOF within tens of milliseconds and stops its own MCP
//! children); only then is the process group sent SIGTERM, and SIGKILL after a grace period.
//! Signalling while Codex's login-shell environment snapshot runs can leave the user's shell
//! start-up files half-done, so the polite step always comes first.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child as TokioChild, ChildStdin, ChildStdout, Command};

/// Lines of stderr kept for a failure's detail.
pub const STDERR_TAIL_LINES: usize = 40;
/// Longest stderr line kept (longer ones are cut).
const STDERR_LINE_BYTES: usize = 4096;
/// How long the server may take to exit after stdin closes before it is signalled.
pub const EXIT_GRACE: Duration = Duration::from_millis(1500);
/// How long between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(1000);

/// How a process ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExitInfo {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl From<std::process::ExitStatus> for ExitInfo {
    fn from(status: std::process::ExitStatus) -> Self {
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal = None;
        ExitInfo { code: status.code(), signal }
    }
}

/// What the turn runner needs from the process that serves it. Implemented by the real
/// child and, in tests, by a scripted stand-in.
pub trait ServerProcess: Send {
    fn pid(&self) -> u32;
    /// Waits up to `within` for the process to exit on its own.
    fn wait_exit(&mut self, within: Duration) -> impl Future<Output = Option<ExitInfo>> + Send;
    /// Ends the process and everything it started, and reaps it. Stdin is already closed.
    fn end_tree(&mut self) -> impl Future<Output = ExitInfo> + Send;
    /// The last lines the process wrote to stderr.
    fn stderr_tail(&self) -> Vec<String>;
}

#[derive(Debug)]
pub enum SpawnError {
    NotFound(String),
    NotExecutable(String),
    CwdNotFound(String),
    Other(String),
}

pub struct LaunchSpec {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
}

pub struct Spawned {
    pub process: ChildProcess,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
}

pub struct ChildProcess {
    child: TokioChild,
    pid: u32,
    exit: Option<ExitInfo>,
    tail: Arc<Mutex<VecDeque<String>>>,
}

/// Starts the program with piped stdio in a new process group. Every stderr line goes to
/// `on_stderr` as it arrives (the pipe is always drained) and into a bounded tail.
pub fn spawn(spec: &LaunchSpec, on_stderr: impl Fn(String) + Send + 'static) -> Result<Spawned, SpawnError> {
    check_launch(spec)?;
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(|e| classify_spawn_error(&spec.program, e))?;
    let pid = child.id().unwrap_or(0);
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_LINES)));
    tokio::spawn(drain_stderr(stderr, tail.clone(), on_stderr));
    Ok(Spawned { process: ChildProcess { child, pid, exit: None, tail }, stdin, stdout })
}

fn check_launch(spec: &LaunchSpec) -> Result<(), SpawnError> {
    if !spec.cwd.is_dir() {
        return Err(SpawnError::CwdNotFound(format!("working directory {} does not exist", spec.cwd.display())));
    }
    let program = &spec.program;
    if program.components().count() > 1 {
        let meta = std::fs::metadata(program)
            .map_err(|e| SpawnError::NotFound(format!("{}: {e}", program.display())))?;
        if meta.is_dir() || !is_executable(&meta) {
            return Err(SpawnError::NotExecutable(format!("{} is not an executable file", program.display())));
        }
    }
    Ok(())
}

#[cfg(unix)]
pub(crate) fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
pub(crate) fn is_executable(_meta: &std::fs::Metadata) -> bool {
    true
}

fn classify_spawn_error(program: &Path, e: std::io::Error) -> SpawnError {
    let text = format!("{}: {e}", program.display());
    match e.kind() {
        std::io::ErrorKind::NotFound => SpawnError::NotFound(text),
        std::io::ErrorKind::PermissionDenied => SpawnError::NotExecutable(text),
        _ => SpawnError::Other(text),
    }
}

async fn drain_stderr(
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
    on_line: impl Fn(String) + Send + 'static,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Reads a whole line, however long, but keeps only its head.
        let mut overflow = false;
        loop {
            let available = match reader.fill_buf().await {
                Ok(buf) => buf,
                Err(_) => return,
            };
            if available.is_empty() {
                if line.is_empty() {
                    return;
                }
                break;
            }
            let (taken, complete) = match available.iter().position(|&b| b == b'\n') {
                Some(pos) => (pos + 1, true),
                None => (available.len(), false),
            };
            let room = STDERR_LINE_BYTES.saturating_sub(line.len());
            let content = &available[..if complete { taken - 1 } else { taken }];
            overflow |= content.len() > room;
            line.extend_from_slice(&content[..content.len().min(room)]);
            reader.consume(taken);
            if complete {
                break;
            }
        }
        let mut text = String::from_utf8_lossy(&line).trim_end_matches('\r').to_string();
        if overflow {
            text.push('…');
        }
        {
            let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(text.clone());
        }
        on_line(text);
    }
}

impl ChildProcess {
    async fn reap(&mut self) -> ExitInfo {
        if let Some(exit) = self.exit {
            return exit;
        }
        let exit = self.child.wait().await.map(ExitInfo::from).unwrap_or_default();
        self.exit = Some(exit);
        exit
    }
}

impl ServerProcess for ChildProcess {
    fn pid(&self) -> u32 {
        self.pid
    }

    async fn wait_exit(&mut self, within: Duration) -> Option<ExitInfo> {
        if let Some(exit) = self.exit {
            return Some(exit);
        }
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(status) => {
                let exit = status.map(ExitInfo::from).unwrap_or_default();
                self.exit = Some(exit);
                Some(exit)
            }
            Err(_) => None,
        }
    }

    async fn end_tree(&mut self) -> ExitInfo {
        let tree = tree::Tree::capture(self.pid);
        let polite = self.wait_exit(EXIT_GRACE).await;
        tree.signal(tree::Signal::Term);
        if polite.is_none() {
            let _ = self.wait_exit(TERM_GRACE).await;
        }
        let exit = match self.exit {
            Some(exit) => exit,
            None => {
                tree.signal(tree::Signal::Kill);
                self.reap().await
            }
        };
        tree.finish(TERM_GRACE).await;
        exit
    }

    fn stderr_tail(&self) -> Vec<String> {
        self.tail.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect()
    }
}

/// Finding and signalling everything a child started.
pub mod tree {
    use std::time::Duration;

    #[derive(Clone, Copy, Debug)]
    pub enum Signal {
        Term,
        Kill,
    }

    /// The child's process group plus every descendant seen when the tree was captured (a
    /// descendant may have moved to another group or session).
    pub struct Tree {
        pgid: i32,
        descendants: Vec<i32>,
    }

    impl Tree {
        pub fn capture(pid: u32) -> Tree {
            let pgid = pid as i32;
            Tree { pgid, descendants: descendants(pgid) }
        }

        pub fn signal(&self, signal: Signal) {
            #[cfg(unix)]
            {
                let sig = match signal {
                    Signal::Term => libc::SIGTERM,
                    Signal::Kill => libc::SIGKILL,
                };
                // SAFETY: plain syscalls on pids we started; ESRCH (already gone) is fine.
                unsafe {
                    libc::killpg(self.pgid, sig);
                    for &pid in &self.descendants {
                        libc::kill(pid, sig);
                    }
                }
            }
            #[cfg(not(unix))]
            let _ = signal;
        }

        fn any_alive(&self) -> bool {
            any_alive(self.pgid, &self.descendants)
        }

        /// After SIGTERM: waits up to `grace` for the rest of the tree, then kills what is left.
        pub async fn finish(&self, grace: Duration) {
            let until = tokio::time::Instant::now() + grace;
            while self.any_alive() && tokio::time::Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if self.any_alive() {
                self.signal(Signal::Kill);
            }
        }
    }

    #[cfg(target_os = "linux")]
    struct ProcEntry {
        pid: i32,
        ppid: i32,
        pgrp: i32,
        zombie: bool,
    }

    /// Every process in /proc with its parent, group and whether it is a zombie.
    #[cfg(target_os = "linux")]
    fn scan() -> Vec<ProcEntry> {
        let mut out = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return out;
        };
        for entry in dir.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // The command name is parenthesised and may contain anything; fields follow it.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let mut fields = rest.split_whitespace();
            let state = fields.next().unwrap_or("");
            let ppid = fields.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            let pgrp = fields.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            out.push(ProcEntry { pid, ppid, pgrp, zombie: state == "Z" });
        }
        out
    }

    /// Every process below `root`, found through the parent links in /proc.
    #[cfg(target_os = "linux")]
    fn descendants(root: i32) -> Vec<i32> {
        let all = scan();
        let mut found = vec![root];
        let mut i = 0;
        while i < found.len() {
            let parent = found[i];
            found.extend(all.iter().filter(|p| p.ppid == parent).map(|p| p.pid));
            i += 1;
        }
        found.remove(0);
        found
    }

    /// Zombies do not count: an orphaned zombie waits for its new parent, not for us.
    #[cfg(target_os = "linux")]
    fn any_alive(pgid: i32, descendants: &[i32]) -> bool {
        scan().iter().any(|p| !p.zombie && (p.pgrp == pgid || descendants.contains(&p.pid)))
    }

    #[cfg(not(target_os = "linux"))]
    fn descendants(_root: i32) -> Vec<i32> {
        Vec::new()
    }

    #[cfg(all(unix, not(target_os = "linux")))]
    fn any_alive(pgid: i32, _descendants: &[i32]) -> bool {
        // SAFETY: signal 0 only checks for existence.
        unsafe { libc::killpg(pgid, 0) == 0 }
    }

    #[cfg(not(unix))]
    fn any_alive(_pgid: i32, _descendants: &[i32]) -> bool {
        false
    }
}
