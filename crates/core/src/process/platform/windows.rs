//! Windows: every child in a Job Object of its own, which holds everything the child starts
//! and which the kernel ends with the host's last handle to it. No process groups, no signals,
//! no process table and no guard: the Job Object does what they do on Unix. Children are
//! started here rather than through the standard library, so that each inherits its three
//! stdio handles and nothing else of the host's (`spawn.rs` says why and how).

mod spawn;

use super::super::tracking::Tracking;
use super::super::tree::{Signal, Tree};
use super::super::{Spec, TREE_MARKER_VAR};
use process_wrap::tokio::ChildWrapper;
use spawn::JobChild;
use std::any::Any;
use std::ffi::OsString;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long, once a job was terminated, its processes may take to be gone.
const JOB_GONE_WAIT: Duration = Duration::from_millis(1000);
/// How often a terminated job is asked whether it is empty.
const JOB_POLL: Duration = Duration::from_millis(10);

/// Starts `spec`'s program in a Job Object of its own with kill-on-close (ending the job ends
/// everything in it, and the kernel ends it when the host's last handle to it closes, however
/// the host ends), without a console window (a GUI host must not flash one per child), with
/// exactly its stdio handles; `marker` goes into its environment.
pub fn spawn(spec: &Spec, marker: Option<&str>, _tracking: Tracking) -> std::io::Result<Box<dyn ChildWrapper>> {
    let launch = &spec.launch;
    let mut env: Vec<(OsString, OsString)> = launch.env.iter().map(|(k, v)| (k.into(), v.into())).collect();
    if let Some(marker) = marker {
        env.push((TREE_MARKER_VAR.into(), marker.into()));
    }
    let request = spawn::Request {
        program: &launch.program,
        args: &spec.args,
        cwd: &launch.cwd,
        clear_env: launch.clear_env,
        env,
        stdin: spec.stdin,
    };
    Ok(Box::new(spawn::start(&request)?))
}

fn job_child(inner: &dyn ChildWrapper) -> Option<&JobChild> {
    (inner as &dyn Any).downcast_ref::<JobChild>()
}

/// Windows has no polite signal: the job is terminated once the child had its time, and is
/// empty before this returns (or the wait for it gave up).
pub async fn terminate(inner: &mut Box<dyn ChildWrapper>, _tree: &Arc<Mutex<Tree>>, _grace: Duration) {
    let _ = inner.start_kill();
    if let Some(child) = job_child(inner.as_ref()) {
        let deadline = Instant::now() + JOB_GONE_WAIT;
        while !child.job_is_empty() && Instant::now() < deadline {
            tokio::time::sleep(JOB_POLL).await;
        }
    }
}

pub fn terminate_now(inner: &mut Box<dyn ChildWrapper>, _tree: &Arc<Mutex<Tree>>) {
    let _ = inner.start_kill();
    if let Some(child) = job_child(inner.as_ref()) {
        let deadline = Instant::now() + JOB_GONE_WAIT;
        while !child.job_is_empty() && Instant::now() < deadline {
            std::thread::sleep(JOB_POLL);
        }
    }
}

/// No guard holds a copy of a child's stdin here.
pub fn raw_fd(_pipe: &tokio::process::ChildStdin) -> Option<i32> {
    None
}

// A Windows tree is its Job Object: there is no group or process to signal, and the tree
// (built from nothing but groups and an empty table) has no member to find.

pub fn signal_group(_pgid: i32, _signal: Signal) {}

pub fn signal_process(_pid: i32, _signal: Signal) {}

pub fn group_exists(_pgid: i32) -> bool {
    false
}

/// No subreaper, and no need of one: the Job Object holds every descendant.
pub const SUBREAPER: bool = false;

/// Windows has no execute bit: whether a file runs is known when it is started.
pub fn is_executable(_meta: &std::fs::Metadata) -> bool {
    true
}

pub fn exit_signal(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

pub fn signal_name(_signal: i32) -> Option<&'static str> {
    None
}

/// Windows has no exec bit: a file it cannot run is one that is not a program it knows.
pub fn cannot_run(error: &std::io::Error) -> bool {
    const ERROR_BAD_EXE_FORMAT: i32 = 193;
    error.raw_os_error() == Some(ERROR_BAD_EXE_FORMAT)
}

/// The kernel ends every Job Object with the host: no guard is needed.
pub const GUARD_NEEDED: bool = false;

/// There is never a guard to speak to here.
pub enum GuardLink {}

/// Never called ([`GUARD_NEEDED`] is false); says so if it were.
pub fn start_guard(
    _program: &Path,
    _host: &str,
    _tracking: Tracking,
) -> std::io::Result<(std::process::Child, GuardLink)> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "Windows needs no host-death guard"))
}

impl GuardLink {
    pub fn send(&mut self, _line: &[u8], _fd: Option<i32>) -> std::io::Result<()> {
        match *self {}
    }
}
