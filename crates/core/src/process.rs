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
    /// Notes what the process has started, while it still runs: called before its stdin is
    /// closed, since it exits on EOF and what it leaves behind is then harder to find.
    fn capture_tree(&mut self) {}
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
    /// Values replaced by `<redacted>` in the child's stderr before it goes anywhere (events,
    /// the tail, logs): a child that prints its configuration must not carry them out.
    pub secrets: Vec<String>,
}

/// Shorter values are not redacted: they would blank ordinary words.
const MIN_SECRET_LEN: usize = 6;

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
    /// This child's value of [`TREE_MARKER_VAR`].
    marker: String,
    /// What `capture_tree` found.
    tree: Option<tree::Tree>,
}

/// Set in the child's environment to a value unique to the turn, so that descendants orphaned
/// after the child died can still be found (see [`tree`]).
pub const TREE_MARKER_VAR: &str = "RENNET_CODEX_TREE";

fn tree_marker() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{}-{n}-{nanos}", std::process::id())
}

/// Starts the program with piped stdio in a new process group. Every stderr line goes to
/// `on_stderr` as it arrives (the pipe is always drained) and into a bounded tail.
pub fn spawn(spec: &LaunchSpec, on_stderr: impl Fn(String) + Send + 'static) -> Result<Spawned, SpawnError> {
    check_launch(spec)?;
    let marker = tree_marker();
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(TREE_MARKER_VAR, &marker)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe and touches nothing of the parent's state.
    unsafe {
        command.pre_exec(|| {
            // Orphans below the child stay in its tree (see `tree`); kept across exec.
            if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| classify_spawn_error(&spec.program, e))?;
    let pid = child.id().unwrap_or(0);
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_LINES)));
    let mut secrets: Vec<String> = spec.secrets.iter().filter(|s| s.len() >= MIN_SECRET_LEN).cloned().collect();
    // Longest first, so that a secret containing another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    tokio::spawn(drain_stderr(stderr, tail.clone(), secrets, on_stderr));
    Ok(Spawned { process: ChildProcess { child, pid, exit: None, tail, marker, tree: None }, stdin, stdout })
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
    secrets: Vec<String>,
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
        for secret in &secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "<redacted>");
            }
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

    fn capture_tree(&mut self) {
        // While the child lives, its orphans are re-parented to it (it is their subreaper).
        self.tree = Some(tree::Tree::capture_marked(self.pid, Some(&self.marker)));
    }

    async fn end_tree(&mut self) -> ExitInfo {
        let mut tree = match self.tree.take() {
            Some(tree) => tree,
            None => tree::Tree::capture_marked(self.pid, Some(&self.marker)),
        };
        let polite = self.wait_exit(EXIT_GRACE).await;
        let anything_left = tree.refresh_and_signal(tree::Signal::Term);
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
        // Nothing alive when the last signal went out: nothing is left that could have started
        // anything since, so the tree is gone (the usual end, one look at /proc instead of three).
        if anything_left || polite.is_none() {
            tree.finish(TERM_GRACE).await;
        }
        exit
    }

    fn stderr_tail(&self) -> Vec<String> {
        self.tail.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect()
    }
}

/// Finding and signalling everything a child started.
///
/// A turn's child may start processes that leave its process group (`setpgid`) or its session
/// (`setsid`), and daemons that double-fork so that their parent link is cut. Process groups
/// alone do not find those. What each platform does:
///
/// - **Linux.** Four nets, each catching what the previous one misses:
///   1. the child's process group (`killpg`), for everything that stays in it;
///   2. the child is made a *child subreaper* (`PR_SET_CHILD_SUBREAPER`, set between `fork`
///      and `exec`, kept across `exec`): while it lives, every orphan below it — a
///      double-forked daemon, the grandchild of a `setsid -f` — is re-parented to it rather
///      than to init, so the parent links in `/proc` still lead to it;
///   3. the tree is walked through those parent links in `/proc` when the turn ends, and again
///      before each signal, so descendants that changed group or session are found;
///   4. every process that carries the child's per-turn marker in its environment
///      ([`TREE_MARKER_VAR`], inherited by default across `fork` and `exec`) is a member too:
///      this finds what was orphaned to init after the child itself died (a crash). Each
///      readable `/proc/<pid>/environ` is only compared with that one entry, never kept.
///
///   Limits: a descendant that both replaced its environment (`env -i`, or an exec with an
///   explicit environment) *and* was orphaned after the child died is not found; neither is one
///   running as another user (its `/proc` entries are not readable). Every member is
///   remembered with its start time, so a recycled pid is never signalled. Orphans that exit
///   while the child lives stay zombies of the child until it exits (the child does not reap
///   processes it did not start); they are reaped by init afterwards.
/// - **macOS and other Unix.** The process group only: there is no subreaper and no `/proc`.
///   Descendants that call `setpgid` or `setsid` survive the turn.
/// - **Windows.** Only the child itself is killed (a Job object would be needed for its tree).
pub mod tree {
    use std::time::Duration;

    #[derive(Clone, Copy, Debug)]
    pub enum Signal {
        Term,
        Kill,
    }

    /// The child's process group plus every member found so far.
    // Members and the marker are only looked for where /proc exists.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub struct Tree {
        pgid: i32,
        marker: Option<String>,
        /// Pid and start time (clock ticks since boot) of every member found.
        members: Vec<(i32, u64)>,
        /// The child's start time: a descendant cannot have started before it, so only younger
        /// processes are read for the marker (reading every environment on the machine at each
        /// look made ending a turn measurably slower).
        born: u64,
    }

    impl Tree {
        /// Finds the tree of `pid`, the leader of its own process group.
        pub fn capture(pid: u32) -> Tree {
            Tree::capture_marked(pid, None)
        }

        /// Like [`Tree::capture`], also finding every process whose environment holds `marker`
        /// as the value of [`super::TREE_MARKER_VAR`].
        pub fn capture_marked(pid: u32, marker: Option<&str>) -> Tree {
            let tree = Tree { pgid: pid as i32, marker: marker.map(str::to_string), members: Vec::new(), born: 0 };
            #[cfg(target_os = "linux")]
            let tree = {
                let mut tree = tree;
                let all = scan();
                tree.add(&all, pid as i32);
                tree.born = tree.members.first().map_or(0, |m| m.1);
                tree.refresh_from(&all);
                tree
            };
            tree
        }

        /// Adds the members that appeared since the last look.
        #[cfg(target_os = "linux")]
        fn refresh_from(&mut self, all: &[ProcEntry]) {
            // Only members still known by their start time: a recycled pid's children are
            // someone else's.
            let roots: Vec<i32> = self
                .members
                .iter()
                .filter(|(pid, start)| all.iter().any(|p| p.pid == *pid && p.start == *start))
                .map(|m| m.0)
                .collect();
            for pid in descendants(all, &roots) {
                self.add(all, pid);
            }
            if let Some(marker) = &self.marker {
                let needle = format!("{}={marker}", super::TREE_MARKER_VAR);
                for entry in all.iter().filter(|p| !p.zombie && p.start >= self.born) {
                    if !self.members.iter().any(|m| m.0 == entry.pid) && carries(entry.pid, needle.as_bytes()) {
                        self.members.push((entry.pid, entry.start));
                    }
                }
            }
        }

        #[cfg(target_os = "linux")]
        fn add(&mut self, all: &[ProcEntry], pid: i32) {
            if self.members.iter().any(|m| m.0 == pid) {
                return;
            }
            if let Some(entry) = all.iter().find(|p| p.pid == pid) {
                self.members.push((pid, entry.start));
            }
        }

        /// Sends `signal` to the group and every member still running.
        pub fn signal(&self, signal: Signal) {
            #[cfg(target_os = "linux")]
            self.send(signal, &self.live_members(&scan()));
            #[cfg(not(target_os = "linux"))]
            self.send(signal, &[]);
        }

        /// Looks for new members, then signals: one look at the process table for both.
        /// Returns whether anything of the tree was still running then.
        pub fn refresh_and_signal(&mut self, signal: Signal) -> bool {
            #[cfg(target_os = "linux")]
            {
                let all = scan();
                self.refresh_from(&all);
                self.send(signal, &self.live_members(&all));
                self.alive_in(&all)
            }
            #[cfg(not(target_os = "linux"))]
            {
                self.send(signal, &[]);
                self.any_alive()
            }
        }

        fn send(&self, signal: Signal, members: &[i32]) {
            #[cfg(unix)]
            {
                let sig = match signal {
                    Signal::Term => libc::SIGTERM,
                    Signal::Kill => libc::SIGKILL,
                };
                // SAFETY: plain syscalls on processes of this tree; ESRCH (gone) is fine.
                unsafe {
                    libc::killpg(self.pgid, sig);
                }
                for &pid in members {
                    // SAFETY: as above; the start time check rules out a recycled pid.
                    unsafe {
                        libc::kill(pid, sig);
                    }
                }
            }
            #[cfg(not(unix))]
            let _ = (signal, members);
        }

        /// Members still running in `all`, matched by pid and start time.
        #[cfg(target_os = "linux")]
        fn live_members(&self, all: &[ProcEntry]) -> Vec<i32> {
            self.members
                .iter()
                .filter(|(pid, start)| all.iter().any(|p| p.pid == *pid && p.start == *start && !p.zombie))
                .map(|m| m.0)
                .collect()
        }

        /// Whether anything of the tree still runs (zombies do not count: an orphaned zombie
        /// waits for its new parent, not for us).
        pub fn any_alive(&self) -> bool {
            #[cfg(target_os = "linux")]
            {
                self.alive_in(&scan())
            }
            #[cfg(all(unix, not(target_os = "linux")))]
            {
                // SAFETY: signal 0 only checks for existence.
                unsafe { libc::killpg(self.pgid, 0) == 0 }
            }
            #[cfg(not(unix))]
            {
                false
            }
        }

        #[cfg(target_os = "linux")]
        fn alive_in(&self, all: &[ProcEntry]) -> bool {
            all.iter().any(|p| {
                !p.zombie && (p.pgrp == self.pgid || self.members.iter().any(|m| m.0 == p.pid && m.1 == p.start))
            })
        }

        /// After SIGTERM: waits up to `grace` for the rest of the tree, then kills what is left
        /// (including members that appeared meanwhile).
        pub async fn finish(&mut self, grace: Duration) {
            let until = tokio::time::Instant::now() + grace;
            while self.any_alive() && tokio::time::Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            #[cfg(target_os = "linux")]
            {
                let all = scan();
                self.refresh_from(&all);
                if self.alive_in(&all) {
                    self.send(Signal::Kill, &self.live_members(&all));
                }
            }
            #[cfg(not(target_os = "linux"))]
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
        start: u64,
        zombie: bool,
    }

    /// Every process in /proc with its parent, group, start time and whether it is a zombie.
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
            // Fields from the state (3rd in proc(5)) on: ppid, pgrp, … starttime (22nd).
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let field = |i: usize| fields.get(i).and_then(|s| s.parse().ok());
            out.push(ProcEntry {
                pid,
                ppid: field(1).unwrap_or(0) as i32,
                pgrp: field(2).unwrap_or(0) as i32,
                start: field(19).unwrap_or(0),
                zombie: fields.first() == Some(&"Z"),
            });
        }
        out
    }

    /// Every process below any of `roots`, found through the parent links.
    #[cfg(target_os = "linux")]
    fn descendants(all: &[ProcEntry], roots: &[i32]) -> Vec<i32> {
        let mut found: Vec<i32> = roots.to_vec();
        let mut i = 0;
        while i < found.len() {
            let parent = found[i];
            for p in all.iter().filter(|p| p.ppid == parent) {
                if !found.contains(&p.pid) {
                    found.push(p.pid);
                }
            }
            i += 1;
        }
        found.split_off(roots.len())
    }

    /// Whether the environment `pid` started with holds the exact entry `needle`.
    #[cfg(target_os = "linux")]
    fn carries(pid: i32, needle: &[u8]) -> bool {
        match std::fs::read(format!("/proc/{pid}/environ")) {
            Ok(environ) => environ.split(|&b| b == 0).any(|entry| entry == needle),
            Err(_) => false,
        }
    }
}
