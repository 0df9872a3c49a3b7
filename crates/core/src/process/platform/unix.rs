//! Unix: a child in a process group (or a session) of its own, ended by signals to its tree;
//! the host-death guard, a process of its own that the host speaks to over a Unix socket.

use super::super::tracking::Tracking;
use super::super::tree::{Signal, Tree};
use super::super::{Scope, Spec, KILL_GRACE, TREE_MARKER_VAR};
use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup, ProcessSession};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Starts `spec`'s program in a process group (or session) of its own, with `marker` in its
/// environment, made a subreaper where that is how orphans are tracked.
pub fn spawn(spec: &Spec, marker: Option<&str>, tracking: Tracking) -> std::io::Result<Box<dyn ChildWrapper>> {
    let launch = &spec.launch;
    let mut command = tokio::process::Command::new(&launch.program);
    command.args(&spec.args).current_dir(&launch.cwd);
    if launch.clear_env {
        command.env_clear();
    }
    command
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spec.stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(marker) = marker {
        command.env(TREE_MARKER_VAR, marker);
    }
    let mut wrapped = CommandWrap::from(command);
    match spec.scope {
        Scope::Tree => {
            wrapped.wrap(ProcessGroup::leader());
            if tracking == Tracking::Subreaper {
                super::make_subreaper(&mut wrapped);
            }
        }
        Scope::Session => {
            wrapped.wrap(ProcessSession);
        }
    }
    wrapped.wrap(KillOnDrop);
    wrapped.spawn()
}

/// Signals the tree (blocking work, off the runtime's threads) until it is gone.
pub async fn terminate(_inner: &mut Box<dyn ChildWrapper>, tree: &Arc<Mutex<Tree>>, grace: Duration) {
    let tree = tree.clone();
    let ended = tokio::task::spawn_blocking(move || tree.lock().unwrap_or_else(|e| e.into_inner()).terminate(grace));
    if let Err(e) = ended.await {
        tracing::debug!("ending a process tree did not finish: {e}");
    }
}

pub fn terminate_now(_inner: &mut Box<dyn ChildWrapper>, tree: &Arc<Mutex<Tree>>) {
    tree.lock().unwrap_or_else(|e| e.into_inner()).terminate(KILL_GRACE);
}

/// The writing end of a child's stdin, of which the guard gets a copy.
pub fn raw_fd(pipe: &tokio::process::ChildStdin) -> Option<i32> {
    Some(pipe.as_raw_fd())
}

fn raw(signal: Signal) -> i32 {
    match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    }
}

pub fn signal_group(pgid: i32, signal: Signal) {
    // SAFETY: a plain syscall on a group of the tree; ESRCH (gone) is fine.
    unsafe {
        libc::killpg(pgid, raw(signal));
    }
}

pub fn signal_process(pid: i32, signal: Signal) {
    // SAFETY: as above; the caller's start time check rules out a recycled pid.
    unsafe {
        libc::kill(pid, raw(signal));
    }
}

pub fn group_exists(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::killpg(pgid, 0) == 0 }
}

pub fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

/// The signal that ended a process, if one did.
pub fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

/// The usual name of a signal that ends a process: numbers differ between systems (`SIGBUS` is
/// 7 on Linux, 10 on macOS), names do not.
pub fn signal_name(signal: i32) -> Option<&'static str> {
    let names = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGXCPU, "SIGXCPU"),
    ];
    names.iter().find(|(n, _)| *n == signal).map(|(_, name)| *name)
}

/// Whether a spawn error says the file is no program this system runs, beyond what its kind
/// says: Unix reports that as `PermissionDenied`, which is classified already.
pub fn cannot_run(_error: &std::io::Error) -> bool {
    false
}

/// Unix has no Job Object: a guard must end a host's children when the host dies.
pub const GUARD_NEEDED: bool = true;

/// The host's end of the guard's control socket.
pub struct GuardLink(UnixStream);

/// Starts the guard `program` for the host `host` with the other end of a Unix socket as its
/// stdin, and nothing else of the host's: its environment is empty, so the way its children
/// are tracked is said on its command line.
pub fn start_guard(
    program: &Path,
    host: &str,
    tracking: Tracking,
) -> std::io::Result<(std::process::Child, GuardLink)> {
    let (control, theirs) = UnixStream::pair()?;
    let child = std::process::Command::new(program)
        .arg(host)
        .arg(tracking.word())
        .env_clear()
        // Holds no directory of the host's busy.
        .current_dir("/")
        .stdin(std::process::Stdio::from(OwnedFd::from(theirs)))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    Ok((child, GuardLink(control)))
}

impl GuardLink {
    /// Writes `line`; with `fd`, a copy of that descriptor travels with it.
    pub fn send(&mut self, line: &[u8], fd: Option<i32>) -> std::io::Result<()> {
        match fd {
            Some(fd) => super::super::guard::fd_pass::send(&self.0, line, fd),
            None => std::io::Write::write_all(&mut self.0, line),
        }
    }
}
