//! Every child process of the package — the turn's `codex app-server`, discovery's probes and
//! login shell, the MCP inventory, the WSL helper scripts — starts and ends here.
//!
//! A child starts in a process group of its own ([`Scope::Tree`]) or, for the user's login
//! shell, in a session of its own ([`Scope::Session`]: an interactive shell finds no terminal
//! to take over, and only its group is ever signalled, since agents it daemonises are the
//! user's). Its stderr is always drained, each line handed on and the first and last lines kept
//! ([`stderr`]). It ends in one of two ways ([`End`]): politely — it may leave by itself for a
//! while (`codex app-server` exits when its stdin closes), then `SIGTERM`, then `SIGKILL` — or
//! at once — `SIGTERM`, [`KILL_GRACE`], `SIGKILL`. A child dropped before it was ended is ended
//! at once from its `Drop`, which returns only when its tree is gone: an abandoned probe or an
//! aborted turn leaves nothing running, and nothing of it writes anywhere afterwards.
//!
//! What each platform guarantees when a child ends (docs/what-ends-when.md has the whole
//! story, with what runs where):
//!
//! | | Linux | macOS (and Linux with `RENNET_GUARD_TRACKING=poll`) | Windows |
//! | --- | --- | --- | --- |
//! | the child and its process group | yes | yes | the whole Job Object |
//! | descendants that left the group or session (`setsid`) | yes: the child is a subreaper, so they stay below it; parent links and the marker find them | found through parent links while their parent lives, and through the marker after ([`tracking`]) | yes: Job Object |
//! | double-forked daemons | yes (subreaper, marker) | through the marker | yes: Job Object |
//! | the host dies mid-turn | the guard ends the tree ([`guard`]) | the guard ends the tree; it looks every 500 ms while the host lives | the kernel closes the Job Object |
//! | no handle of the host's in the child (an app's own child pipes) | close-on-exec | close-on-exec | the child inherits its three stdio handles only (`platform/windows/spawn.rs`) |
//!
//! Limits: a descendant that both replaced its environment (`env -i`) and was orphaned after the
//! child died is not found on Linux; on macOS the same holds for one orphaned at any time (no
//! subreaper), unless the host died and one of the guard's looks saw it while its parent lived.
//! Processes of another user are not found. A Job Object cannot be escaped by a descendant unless it breaks
//! away explicitly.
//!
//! What differs between systems is in `platform`, chosen once at its `mod` lines.

pub mod collect;
pub mod command_line;
pub mod guard;
pub mod launch;
pub mod stderr;
pub mod table;
pub mod tracking;
pub mod tree;

// What differs between systems, chosen once at the `mod` lines inside it: the rest of the
// module has no platform `cfg`.
mod platform;
// Asked of a child on Windows itself (under Wine in the Windows lane).
#[cfg(all(test, windows))]
mod windows_tests;

use process_wrap::tokio::ChildWrapper;
use std::ffi::OsString;
use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use stderr::{LineSink, StderrLog};
use tokio::process::{ChildStdin, ChildStdout};
use tree::{Marker, Tree};

pub use launch::Launch;

/// How long a turn's child may take to exit by itself once its stdin closed, before it is
/// signalled.
pub const EXIT_GRACE: Duration = Duration::from_millis(1500);
/// Ending politely: between `SIGTERM` and `SIGKILL`.
pub const TERM_GRACE: Duration = Duration::from_millis(1000);
/// How long, once a tree ended, its stderr may take to be read to the end.
const STDERR_SETTLE: Duration = Duration::from_millis(250);
/// Ending at once: between `SIGTERM` and `SIGKILL` (a child that honours `SIGTERM` has this
/// long to go by itself).
pub const KILL_GRACE: Duration = Duration::from_millis(50);

/// Set in every [`Scope::Tree`] child's environment to a value unique to the child that starts
/// with the host's own ([`guard::host_marker`]), so that descendants orphaned after the child
/// died can still be found.
pub const TREE_MARKER_VAR: &str = "RENNET_CODEX_TREE";

/// How a process ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExitInfo {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl From<std::process::ExitStatus> for ExitInfo {
    fn from(status: std::process::ExitStatus) -> Self {
        ExitInfo { code: status.code(), signal: platform::exit_signal(&status) }
    }
}

impl ExitInfo {
    /// As a noun: `exit code 3`, `signal 9`.
    pub fn describe(exit: Option<ExitInfo>) -> String {
        match exit {
            Some(ExitInfo { code: Some(code), .. }) => format!("exit code {code}"),
            Some(ExitInfo { signal: Some(signal), .. }) => format!("signal {signal}"),
            _ => "no exit status".to_string(),
        }
    }

    /// As a verb: `exited with code 3`, `was killed by signal 9 (SIGKILL)`.
    pub fn how(&self) -> String {
        match (self.code, self.signal) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => match platform::signal_name(signal) {
                Some(name) => format!("was killed by signal {signal} ({name})"),
                None => format!("was killed by signal {signal}"),
            },
            (None, None) => "exited".to_string(),
        }
    }

    pub fn killed_by_signal(&self) -> bool {
        self.code.is_none() && self.signal.is_some()
    }
}

/// What the child's signals reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Its own process group, everything it starts, and what carries its marker.
    Tree,
    /// Its own session; only its process group (a login shell).
    Session,
}

/// How a child is ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// It may take this long to exit by itself first (its work is done, its stdin closed).
    Polite(Duration),
    /// Without waiting for it.
    Kill,
}

/// One start of a [`Launch`]: its arguments after the prefix and how the child is wired.
pub struct Spec {
    pub launch: Launch,
    /// Everything after the program (the launch's prefix first).
    pub args: Vec<OsString>,
    /// A pipe to the child's stdin; otherwise it reads nothing.
    pub stdin: bool,
    pub scope: Scope,
    /// Values replaced by `<redacted>` in the child's stderr before it goes anywhere (events,
    /// the tail, logs): a child that prints its configuration must not carry them out.
    pub secrets: Vec<String>,
}

#[derive(Debug)]
pub enum SpawnError {
    NotFound(String),
    NotExecutable(String),
    CwdNotFound(String),
    /// No host-death guard could watch the child: it was not started (or ended at once).
    GuardUnavailable(guard::Unavailable),
    Other(String),
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpawnError::NotFound(m)
            | SpawnError::NotExecutable(m)
            | SpawnError::CwdNotFound(m)
            | SpawnError::Other(m) => f.write_str(m),
            SpawnError::GuardUnavailable(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for SpawnError {}

/// A running child. Dropping it before [`Child::end`] returned ends it at once.
pub struct Child {
    inner: Box<dyn ChildWrapper>,
    pid: u32,
    exit: Option<ExitInfo>,
    stderr: Arc<Mutex<StderrLog>>,
    /// The task reading stderr; it ends at end-of-file.
    stderr_read: Option<tokio::task::JoinHandle<()>>,
    /// Shared with the blocking task that ends it.
    tree: Arc<Mutex<Tree>>,
    ended: bool,
    // Dropped last: the guard forgets the child once it is gone.
    _ticket: guard::Ticket,
    pub stdin: Option<Stdin>,
    pub stdout: Option<ChildStdout>,
}

/// A child's stdin. The host-death guard holds a copy of it (see [`guard`]) and lets it go
/// when this is dropped, just before this one closes: the child sees end-of-file then.
pub struct Stdin {
    // Dropped first: the guard lets its copy go before this one closes.
    _release: Option<guard::StdinRelease>,
    pipe: ChildStdin,
    /// `codex app-server` exits on end-of-file, and what it started is orphaned then: the tree
    /// is looked at once more before the pipe closes, however it is dropped (a turn whose
    /// runner is cancelled included), so that the child's end finds those too.
    tree: Arc<Mutex<Tree>>,
}

impl Drop for Stdin {
    fn drop(&mut self) {
        self.tree.lock().unwrap_or_else(|e| e.into_inner()).refresh_alive();
    }
}

impl tokio::io::AsyncWrite for Stdin {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().pipe).poll_write(cx, buf)
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().pipe).poll_flush(cx)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().pipe).poll_shutdown(cx)
    }
}

/// Starts `spec`'s program with piped stdout and stderr; every stderr line goes to `on_stderr`
/// as it arrives and into the kept lines.
pub fn spawn(spec: &Spec, on_stderr: Option<LineSink>) -> Result<Child, SpawnError> {
    let launch = &spec.launch;
    check_launch(launch)?;
    let marker = (spec.scope == Scope::Tree).then(guard::child_marker);
    // Before the child starts, so that the guard runs when it does; without one, nothing starts.
    let mut ticket = guard::ticket().map_err(SpawnError::GuardUnavailable)?;
    let mut inner = platform::spawn(spec, marker.as_deref(), tracking::Tracking::current())
        .map_err(|e| classify_spawn_error(&launch.program, e))?;
    let pid = inner.id().unwrap_or(0);
    let start = table::entry(pid as i32).map(|e| e.start);
    let kind = if spec.scope == Scope::Tree { guard::Kind::Tree } else { guard::Kind::Group };
    let pipe = inner.stdin().take();
    let (release, unwatched) = match ticket.register(pid, start, kind, pipe.as_ref().and_then(platform::raw_fd)) {
        Ok(release) => (release, None),
        Err(why) => (None, Some(why)),
    };
    let mut tree = Tree::new(marker.map(|m| Marker::exact(TREE_MARKER_VAR, &m)));
    match spec.scope {
        Scope::Tree => tree.add_root(pid as i32, start),
        Scope::Session => tree.add_group(pid as i32),
    }
    let tree = Arc::new(Mutex::new(tree));
    let stdin = pipe.map(|pipe| Stdin { _release: release, pipe, tree: tree.clone() });
    let stdout = inner.stdout().take();
    let (stderr, stderr_read) =
        stderr::drain(inner.stderr().take().expect("stderr is piped"), &spec.secrets, on_stderr);
    let child = Child {
        inner,
        pid,
        exit: None,
        stderr,
        stderr_read: Some(stderr_read),
        tree,
        ended: false,
        _ticket: ticket,
        stdin,
        stdout,
    };
    match unwatched {
        // The guard died between the ticket and the child: the child's `Drop` ends it at once.
        Some(why) => Err(SpawnError::GuardUnavailable(why)),
        None => Ok(child),
    }
}

fn check_launch(launch: &Launch) -> Result<(), SpawnError> {
    match std::fs::metadata(&launch.cwd) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(SpawnError::CwdNotFound(format!(
                "working directory {} is not a directory",
                launch.cwd.display()
            )))
        }
        Err(_) => {
            return Err(SpawnError::CwdNotFound(format!("working directory {} does not exist", launch.cwd.display())))
        }
    }
    let program = &launch.program;
    if program.components().count() > 1 {
        let meta =
            std::fs::metadata(program).map_err(|e| SpawnError::NotFound(format!("{}: {e}", program.display())))?;
        if meta.is_dir() || !is_executable(&meta) {
            return Err(SpawnError::NotExecutable(format!("{} is not an executable file", program.display())));
        }
    }
    Ok(())
}

pub(crate) use platform::is_executable;

fn classify_spawn_error(program: &Path, e: std::io::Error) -> SpawnError {
    let text = format!("{}: {e}", program.display());
    match e.kind() {
        std::io::ErrorKind::NotFound => SpawnError::NotFound(text),
        std::io::ErrorKind::PermissionDenied => SpawnError::NotExecutable(text),
        _ if platform::cannot_run(&e) => SpawnError::NotExecutable(text),
        _ => SpawnError::Other(text),
    }
}

impl Child {
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Its stdout and stdin, taken once, to speak to it over.
    pub fn pipes(&mut self) -> (ChildStdout, Stdin) {
        (self.stdout.take().expect("stdout is piped, once"), self.stdin.take().expect("stdin is piped, once"))
    }

    /// Waits up to `within` for the child to exit by itself.
    pub async fn wait(&mut self, within: Duration) -> Option<ExitInfo> {
        if self.exit.is_some() {
            return self.exit;
        }
        match tokio::time::timeout(within, self.inner.wait()).await {
            Ok(status) => {
                self.exit = Some(status.map(ExitInfo::from).unwrap_or_default());
                self.exit
            }
            Err(_) => None,
        }
    }

    /// Ends the child and everything it started, and reaps it.
    pub async fn end(&mut self, how: End) -> ExitInfo {
        let grace = match how {
            End::Polite(patience) => {
                self.wait(patience).await;
                TERM_GRACE
            }
            End::Kill => KILL_GRACE,
        };
        platform::terminate(&mut self.inner, &self.tree, grace).await;
        let exit = match self.exit {
            Some(exit) => exit,
            None => self.inner.wait().await.map(ExitInfo::from).unwrap_or_default(),
        };
        self.exit = Some(exit);
        self.ended = true;
        // Whoever reads stderr after the end sees all of it: with the tree gone nothing holds
        // the pipe, so the reader meets end-of-file at once (bounded for a process that escaped
        // with it).
        if let Some(read) = self.stderr_read.as_mut() {
            if tokio::time::timeout(STDERR_SETTLE, read).await.is_ok() {
                self.stderr_read = None;
            }
        }
        exit
    }

    /// The first lines the child wrote to stderr.
    pub fn stderr_head(&self) -> Vec<String> {
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).head()
    }

    /// The last lines the child wrote to stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).tail()
    }

    /// What the child said of its failure on stderr ([`StderrLog::said`]).
    pub fn stderr_said(&self, count: usize) -> Vec<String> {
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).said(count)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.ended {
            platform::terminate_now(&mut self.inner, &self.tree);
        }
    }
}

/// What the turn runner needs from the process that serves it. Implemented by [`Child`] and,
/// in tests, by a scripted stand-in.
pub trait ServerProcess: Send {
    fn pid(&self) -> u32;
    /// Waits up to `within` for the process to exit on its own.
    fn wait_exit(&mut self, within: Duration) -> impl Future<Output = Option<ExitInfo>> + Send;
    /// Ends the process and everything it started, and reaps it. Stdin is already closed.
    fn end_tree(&mut self, how: End) -> impl Future<Output = ExitInfo> + Send;
    /// The last lines the process wrote to stderr.
    fn stderr_tail(&self) -> Vec<String>;
}

impl ServerProcess for Child {
    fn pid(&self) -> u32 {
        self.pid
    }

    async fn wait_exit(&mut self, within: Duration) -> Option<ExitInfo> {
        self.wait(within).await
    }

    async fn end_tree(&mut self, how: End) -> ExitInfo {
        self.end(how).await
    }

    fn stderr_tail(&self) -> Vec<String> {
        Child::stderr_tail(self)
    }
}
