//! The host-death guard: a small process (`rennet-codex-guard`) that outlives the host long
//! enough to end everything the host's turns started when the host itself ends without doing
//! so — `SIGKILL`, a default `SIGTERM`/`SIGINT`, `process.exit()`, a crash.
//!
//! One guard runs while the host has children of this package, and none otherwise. The host
//! starts it with a Unix socket on its stdin and writes a line per child (`+<pid> <start> t|g`)
//! and per child ended (`-<pid>`), then `bye` when the last one is gone. With a child whose stdin
//! is a pipe, the host also hands the guard a copy of the pipe's writing end (`SCM_RIGHTS`), and
//! takes it back (`=<pid>`) just before it closes its own: so when the host dies, the child does
//! not see end-of-file before the guard has looked at its tree — a child that leaves on EOF
//! (`codex app-server` does) would otherwise orphan its descendants to init first.
//!
//! The kernel closes the socket when the host dies, however it dies: the guard reads
//! end-of-file without `bye`, notes every registered child's tree (its process group, its
//! descendants and, through the marker in their environment, everything carrying this host's
//! marker), lets the children go by closing their stdin, gives them a moment to leave by
//! themselves, then `SIGTERM`, then `SIGKILL`, and exits. The guard sits in a session of its
//! own, so terminal signals meant for the host (Ctrl-C, a closed terminal) do not reach it.
//!
//! Unix only: on Windows every child is in a Job Object that the kernel kills with the host's
//! last handle to it.
//!
//! A guarantee is never lost in silence: where the guard cannot be found or started, no child
//! starts ([`ticket`] fails with [`Unavailable`], naming where it looked), unless the caller
//! switched the guard off ([`SWITCH_VAR`]`=off`).

use super::table;
use super::tree::{Marker, Tree};
use crate::failure::{Code, Failure, FailureSource};
use serde::Serialize;
use serde_json::json;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// `off` runs turns without a guard; an absolute path names the guard executable to use; empty
/// is the same as unset (the guard beside the addon).
pub const SWITCH_VAR: &str = "RENNET_HOST_GUARD";
/// The guard executable's name in the platform package, next to the addon.
pub const EXECUTABLE_NAME: &str = "rennet-codex-guard";

/// How long the guard lets registered children leave by themselves after the host died.
pub const ROOT_EXIT_WAIT: Duration = Duration::from_millis(300);
/// After that, between SIGTERM and SIGKILL.
pub const TERM_WAIT: Duration = Duration::from_millis(400);
#[cfg_attr(not(unix), allow(dead_code))]
/// How often, on a platform without a child subreaper, the guard notes the descendants of its
/// children while the host lives, before an exiting parent orphans them.
const TRACK_EVERY: Option<Duration> = if cfg!(target_os = "linux") { None } else { Some(Duration::from_millis(500)) };

static EXECUTABLE: OnceLock<PathBuf> = OnceLock::new();

/// Where the guard executable is, when [`SWITCH_VAR`] does not say: set once by the binding.
pub fn set_executable(path: PathBuf) {
    let _ = EXECUTABLE.set(path);
}

/// Why no guard can watch the children: no child may start then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    /// Where the guard was looked for, when anywhere.
    pub path: Option<PathBuf>,
    /// What was found there (or why nowhere was looked at).
    pub reason: String,
}

impl Unavailable {
    fn new(path: Option<PathBuf>, reason: impl Into<String>) -> Unavailable {
        Unavailable { path, reason: reason.into() }
    }

    /// The whole sentence: what is missing, what it costs, and the way out.
    pub fn message(&self) -> String {
        format!(
            "no host-death guard: {}; without it a child could outlive this process if it dies, so none was started \
             ({SWITCH_VAR}=off runs without host-death protection)",
            self.reason
        )
    }

    /// The terminal failure of a turn that could not start for it.
    pub fn failure(&self) -> Failure {
        Failure::new(FailureSource::Spawn, Code::HostGuardUnavailable, self.message()).with_detail(json!({
            "path": self.path.as_ref().map(|p| p.display().to_string()),
            "reason": self.reason,
            "switch": SWITCH_VAR,
        }))
    }
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// Whether children are guarded, as `discoverCodex()` reports it (`hostGuard`).
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// A guard runs, or its executable is in place: turns may start.
    pub available: bool,
    /// The guard executable (`null` where none is needed or none was looked for).
    pub path: Option<String>,
    /// Why it is not available: what [`Unavailable`] says, or that it was switched off.
    pub reason: Option<String>,
}

/// The guard as the next child would find it. Where it is not needed (Windows), available
/// without a path.
pub fn status() -> Status {
    if !NEEDED {
        return Status { available: true, path: None, reason: None };
    }
    let client = client().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(running) = &client.guard {
        return Status { available: true, path: Some(running.program.display().to_string()), reason: None };
    }
    drop(client);
    match resolve(std::env::var_os(SWITCH_VAR).as_deref(), located()).and_then(|program| match program {
        Some(program) => check_executable(&program).map(|()| Some(program)),
        None => Ok(None),
    }) {
        Ok(Some(program)) => Status { available: true, path: Some(program.display().to_string()), reason: None },
        Ok(None) => Status {
            available: false,
            path: None,
            reason: Some(format!("switched off ({SWITCH_VAR}=off): children run without host-death protection")),
        },
        Err(why) => Status {
            available: false,
            path: why.path.as_ref().map(|p| p.display().to_string()),
            reason: Some(why.message()),
        },
    }
}

/// Whether this platform needs the guard: Windows ends a host's children through Job Objects.
const NEEDED: bool = cfg!(unix);

/// Where the binding said the guard is. The core's own tests start their fakes without one, as
/// with `RENNET_HOST_GUARD=off` (host death is tested through the addon, `__test__/lifecycle`),
/// unless a test puts a location in place for its thread ([`testing::Located`]).
fn located() -> Located {
    #[cfg(all(test, unix))]
    if let Some(located) = testing::LOCATED.with(|l| l.borrow().clone()) {
        return located;
    }
    match EXECUTABLE.get() {
        Some(path) => Located::At(path.clone()),
        None if cfg!(test) => Located::Off,
        None => Located::Unknown,
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Located {
    At(PathBuf),
    Unknown,
    #[cfg_attr(not(test), allow(dead_code))]
    Off,
}

// Only Unix has a guard to test.
#[cfg(all(test, unix))]
pub(crate) mod testing {
    use super::Located;
    use std::cell::RefCell;

    thread_local! {
        pub(super) static LOCATED: RefCell<Option<Located>> = const { RefCell::new(None) };
    }

    /// Where this thread's tickets look for the guard until dropped (a current-thread runtime
    /// runs a test's tasks on its own thread).
    pub struct Using(());

    pub fn using(located: Located) -> Using {
        LOCATED.with(|l| *l.borrow_mut() = Some(located));
        Using(())
    }

    impl Drop for Using {
        fn drop(&mut self) {
            LOCATED.with(|l| *l.borrow_mut() = None);
        }
    }
}

/// The guard executable to start: `None` when switched off. [`SWITCH_VAR`] wins over where the
/// binding found it.
fn resolve(switch: Option<&std::ffi::OsStr>, located: Located) -> Result<Option<PathBuf>, Unavailable> {
    // An emptied variable (`RENNET_HOST_GUARD=`) unsets it, as environments often do.
    match switch.filter(|value| !value.is_empty()) {
        Some(value) if value == "off" => Ok(None),
        Some(value) if std::path::Path::new(value).is_absolute() => Ok(Some(PathBuf::from(value))),
        Some(value) => {
            Err(Unavailable::new(None, format!("{SWITCH_VAR} must be \"off\" or an absolute path, not {value:?}")))
        }
        None => match located {
            Located::At(path) => Ok(Some(path)),
            Located::Off => Ok(None),
            Located::Unknown => Err(Unavailable::new(
                None,
                format!(
                    "the location of {EXECUTABLE_NAME} is unknown (it belongs next to the native addon, whose own path \
                     could not be read); {SWITCH_VAR} may name it"
                ),
            )),
        },
    }
}

/// Whether `program` is a file this process may run.
fn check_executable(program: &std::path::Path) -> Result<(), Unavailable> {
    let origin = if std::env::var_os(SWITCH_VAR).is_some_and(|v| !v.is_empty()) {
        format!("named by {SWITCH_VAR}")
    } else {
        "next to the native addon".to_string()
    };
    let missing =
        |what: &str| Unavailable::new(Some(program.to_path_buf()), format!("{} ({origin}) {what}", program.display()));
    match std::fs::metadata(program) {
        Ok(meta) if meta.is_file() && super::is_executable(&meta) => Ok(()),
        Ok(meta) if meta.is_file() => Err(missing("is not executable")),
        Ok(_) => Err(missing("is not a file")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(missing("does not exist")),
        Err(e) => Err(missing(&format!("cannot be read: {e}"))),
    }
}

/// This host's part of every child's marker value: the guard ends what carries it.
pub fn host_marker() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        format!("{}-{nanos}", std::process::id())
    })
}

/// A marker value unique to one child: the host's, then a counter.
pub fn child_marker() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{}-{n}", host_marker())
}

/// How the guard ends a registered child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Its process group, its descendants and everything carrying the host's marker.
    Tree,
    /// Its process group only (a login shell: what it daemonised is the user's).
    Group,
}

/// One line of the host-to-guard protocol.
#[derive(Debug, PartialEq, Eq)]
enum Message {
    /// A child started; `stdin`: a copy of its stdin's writing end comes with the line.
    Add {
        pid: i32,
        start: Option<u64>,
        kind: Kind,
        stdin: bool,
    },
    /// The host is about to close the child's stdin: the guard lets its copy go.
    Release {
        pid: i32,
    },
    /// The child is gone.
    Remove {
        pid: i32,
    },
    Bye,
}

// Spoken only where there is a guard.
#[cfg_attr(not(unix), allow(dead_code))]
impl Message {
    fn line(&self) -> String {
        match self {
            Message::Add { pid, start, kind, stdin } => {
                let kind = if *kind == Kind::Tree { 't' } else { 'g' };
                let start = start.map_or("-".to_string(), |s| s.to_string());
                format!("+{pid} {start} {kind}{}\n", if *stdin { " f" } else { "" })
            }
            Message::Release { pid } => format!("={pid}\n"),
            Message::Remove { pid } => format!("-{pid}\n"),
            Message::Bye => "bye\n".to_string(),
        }
    }

    fn parse(line: &str) -> Option<Message> {
        if line == "bye" {
            return Some(Message::Bye);
        }
        if let Some(pid) = line.strip_prefix('-') {
            return Some(Message::Remove { pid: pid.parse().ok()? });
        }
        if let Some(pid) = line.strip_prefix('=') {
            return Some(Message::Release { pid: pid.parse().ok()? });
        }
        let mut parts = line.strip_prefix('+')?.split(' ');
        let pid = parts.next()?.parse().ok()?;
        let start = match parts.next()? {
            "-" => None,
            start => Some(start.parse().ok()?),
        };
        let kind = match parts.next()? {
            "t" => Kind::Tree,
            "g" => Kind::Group,
            _ => return None,
        };
        let stdin = match parts.next() {
            None => false,
            Some("f") => true,
            Some(_) => return None,
        };
        parts.next().is_none().then_some(Message::Add { pid, start, kind, stdin })
    }
}

// ---------------------------------------------------------------------------------------------
// The host's side

#[cfg(unix)]
use host::Running;

#[cfg(unix)]
mod host {
    use super::{fds, Message};
    use std::io::Write;
    use std::os::fd::{OwnedFd, RawFd};
    use std::os::unix::net::UnixStream;
    use std::path::Path;

    pub struct Running {
        pub child: std::process::Child,
        pub program: std::path::PathBuf,
        control: UnixStream,
    }

    impl Running {
        pub fn start(program: &Path, host: &str) -> std::io::Result<Running> {
            let (control, theirs) = UnixStream::pair()?;
            let child = std::process::Command::new(program)
                .arg(host)
                .env_clear()
                // Holds no directory of the host's busy.
                .current_dir("/")
                .stdin(std::process::Stdio::from(OwnedFd::from(theirs)))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()?;
            Ok(Running { child, program: program.to_path_buf(), control })
        }

        pub fn send(&mut self, message: &Message, fd: Option<RawFd>) -> std::io::Result<()> {
            let line = message.line();
            match fd {
                Some(fd) => fds::send(&self.control, line.as_bytes(), fd),
                None => self.control.write_all(line.as_bytes()),
            }
        }
    }
}

#[cfg(not(unix))]
struct Running {
    child: std::process::Child,
    program: PathBuf,
}

#[cfg(not(unix))]
impl Running {
    fn send(&mut self, _message: &Message, _fd: Option<i32>) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(Default)]
struct Client {
    guard: Option<Running>,
    /// Tickets out: children started or about to be.
    tickets: usize,
    /// That the guard is switched off, said once.
    said_off: bool,
}

fn client() -> &'static Mutex<Client> {
    static CLIENT: OnceLock<Mutex<Client>> = OnceLock::new();
    CLIENT.get_or_init(Default::default)
}

/// A child's place under the guard: taken before the child starts, so that the guard already
/// runs when it does; dropping it says the child is gone. A ticket never registered holds the
/// guard for what is about to start (a turn's discovery, inventory and child).
pub struct Ticket {
    pid: Option<i32>,
    /// A guard ran when it was taken (not switched off, nor needless on this platform).
    guarded: bool,
}

/// Takes a ticket, starting the guard if none runs. Fails where the guard is needed but cannot
/// be found or started: then nothing may start.
pub fn ticket() -> Result<Ticket, Unavailable> {
    let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(running) = &mut client.guard {
        // One that died by itself (or was killed) is replaced rather than trusted.
        if !matches!(running.child.try_wait(), Ok(None)) {
            tracing::warn!("the host-death guard had exited; starting another");
            if let Some(running) = client.guard.take() {
                reap(running.child);
            }
        }
    }
    if client.guard.is_none() {
        match start()? {
            Some(running) => client.guard = Some(running),
            None if NEEDED && !client.said_off => {
                client.said_off = true;
                tracing::info!("{SWITCH_VAR}=off: children run without the host-death guard");
            }
            None => {}
        }
    }
    client.tickets += 1;
    Ok(Ticket { pid: None, guarded: client.guard.is_some() })
}

impl Ticket {
    /// Registers the started child (its start time tells it from a later process with its pid).
    /// `stdin`: the writing end of the child's stdin pipe, of which the guard keeps a copy until
    /// [`StdinRelease`] says the host is closing it. Fails when the guard that the ticket was
    /// taken under stopped reading: the child is not watched, and must not run.
    pub fn register(
        &mut self,
        pid: u32,
        start: Option<u64>,
        kind: Kind,
        stdin: Option<i32>,
    ) -> Result<Option<StdinRelease>, Unavailable> {
        let pid = pid as i32;
        self.pid = Some(pid);
        if !self.guarded {
            return Ok(None);
        }
        match send(&Message::Add { pid, start, kind, stdin: stdin.is_some() }, stdin) {
            Ok(()) => Ok(stdin.is_some().then_some(StdinRelease { pid })),
            Err(why) => Err(Unavailable::new(
                None,
                format!("the guard stopped reading before the child was registered ({why})"),
            )),
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(pid) = self.pid.filter(|_| self.guarded) {
            let _ = send(&Message::Remove { pid }, None);
        }
        let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
        client.tickets -= 1;
        if client.tickets == 0 {
            if let Some(mut running) = client.guard.take() {
                let _ = running.send(&Message::Bye, None);
                reap(running.child);
            }
        }
    }
}

/// Lets the guard's copy of a child's stdin go; dropped just before the host's own copy closes,
/// so that the child sees end-of-file when the host closes its stdin.
pub struct StdinRelease {
    pid: i32,
}

impl Drop for StdinRelease {
    fn drop(&mut self) {
        let _ = send(&Message::Release { pid: self.pid }, None);
    }
}

/// Hands the message to the running guard.
fn send(message: &Message, fd: Option<i32>) -> Result<(), String> {
    let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
    let Some(running) = &mut client.guard else {
        return Err("no guard runs".to_string());
    };
    running.send(message, fd).map_err(|e| {
        // The guard died: the next ticket starts another. Children it watched are not watched
        // any more; that much can only be said.
        tracing::warn!("the host-death guard stopped reading: {e}");
        if let Some(running) = client.guard.take() {
            reap(running.child);
        }
        e.to_string()
    })
}

#[cfg(unix)]
fn start() -> Result<Option<Running>, Unavailable> {
    let Some(program) = resolve(std::env::var_os(SWITCH_VAR).as_deref(), located())? else {
        return Ok(None);
    };
    check_executable(&program)?;
    let running = Running::start(&program, host_marker()).map_err(|e| {
        Unavailable::new(Some(program.clone()), format!("{} could not be started: {e}", program.display()))
    })?;
    tracing::debug!(pid = running.child.id(), "host-death guard started");
    Ok(Some(running))
}

/// Windows needs no guard: every child is in a Job Object that ends with the host.
#[cfg(not(unix))]
fn start() -> Result<Option<Running>, Unavailable> {
    Ok(None)
}

/// Waits for a guard that was told to go, off the caller's thread.
fn reap(mut child: std::process::Child) {
    let wait = move || {
        let _ = child.wait();
    };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(wait)),
        Err(_) => drop(std::thread::spawn(wait)),
    }
}

// ---------------------------------------------------------------------------------------------
// The guard's side

/// What the guard knows: the registered children, what it found below them, and the copies of
/// their stdin it holds.
#[cfg_attr(not(unix), allow(dead_code))]
struct Watch<F> {
    tree: Tree,
    roots: Vec<(i32, Option<u64>)>,
    stdins: HashMap<i32, F>,
}

#[cfg_attr(not(unix), allow(dead_code))]
impl<F> Watch<F> {
    fn new(host: &str) -> Watch<F> {
        Watch {
            tree: Tree::new(Some(Marker::prefix(super::TREE_MARKER_VAR, &format!("{host}-")))),
            roots: Vec::new(),
            stdins: HashMap::new(),
        }
    }

    /// `fds`: descriptors received so far and not yet claimed, oldest first.
    fn apply(&mut self, message: Message, fds: &mut VecDeque<F>) {
        match message {
            Message::Add { pid, start, kind, stdin } => {
                match kind {
                    Kind::Tree => self.tree.add_root(pid, start),
                    Kind::Group => self.tree.add_group(pid),
                }
                self.roots.push((pid, start));
                if stdin {
                    if let Some(fd) = fds.pop_front() {
                        self.stdins.insert(pid, fd);
                    }
                }
            }
            Message::Release { pid } => {
                self.stdins.remove(&pid);
            }
            Message::Remove { pid } => {
                self.stdins.remove(&pid);
                self.tree.remove_root(pid);
                self.roots.retain(|r| r.0 != pid);
            }
            Message::Bye => {}
        }
    }

    fn roots_alive(&self, table: &[table::Entry]) -> bool {
        self.roots
            .iter()
            .any(|(pid, start)| table.iter().any(|e| e.pid == *pid && start.is_none_or(|s| s == e.start) && !e.zombie))
    }

    /// The host is gone: end everything of its children.
    fn end_all(&mut self) {
        // While the children still run, their descendants are below them (on Linux even the
        // orphans, the children being their subreapers): note them all first.
        self.tree.refresh_alive();
        // Now the children may see end-of-file and leave by themselves.
        self.stdins.clear();
        let deadline = Instant::now() + ROOT_EXIT_WAIT;
        loop {
            let table = table::snapshot();
            self.tree.refresh(&table);
            if !self.roots_alive(&table) || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.tree.terminate(TERM_WAIT);
    }
}

/// The guard's main loop over its input (the host's socket): returns when the host said `bye`,
/// or after it ended everything because the host died.
#[cfg(unix)]
pub fn serve(input: std::os::unix::net::UnixStream, host: &str) {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let watch = Arc::new(Mutex::new(Watch::new(host)));
    let done = Arc::new(AtomicBool::new(false));
    if let Some(every) = TRACK_EVERY {
        let (watch, done) = (watch.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(every);
                watch.lock().unwrap_or_else(|e| e.into_inner()).tree.refresh_alive();
            }
        });
    }
    let mut pending: Vec<u8> = Vec::new();
    let mut received = VecDeque::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = match fds::recv(&input, &mut buf, &mut received) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        pending.extend_from_slice(&buf[..n]);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let Some(message) = std::str::from_utf8(&line[..end]).ok().and_then(Message::parse) else {
                continue;
            };
            if message == Message::Bye {
                done.store(true, Ordering::Relaxed);
                return;
            }
            watch.lock().unwrap_or_else(|e| e.into_inner()).apply(message, &mut received);
        }
    }
    done.store(true, Ordering::Relaxed);
    watch.lock().unwrap_or_else(|e| e.into_inner()).end_all();
}

/// Readies the guard process: a session of its own (no terminal's signals), no descriptor of
/// the host's but its stdin, and no death by a write to a closed pipe.
#[cfg(unix)]
pub fn detach() {
    // SAFETY: plain syscalls at the start of a single-threaded process.
    unsafe {
        libc::setsid();
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        #[cfg(target_os = "linux")]
        let closed = libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) == 0;
        #[cfg(not(target_os = "linux"))]
        let closed = false;
        if !closed {
            let max = match libc::sysconf(libc::_SC_OPEN_MAX) {
                n if n > 0 => n.min(65536) as i32,
                _ => 1024,
            };
            for fd in 3..max {
                libc::close(fd);
            }
        }
    }
}

/// Descriptors over a Unix socket (`SCM_RIGHTS`).
#[cfg(unix)]
mod fds {
    use std::collections::VecDeque;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::os::unix::net::UnixStream;

    /// Room for this many descriptors in one message.
    const MAX_FDS: usize = 16;

    /// Sends `bytes` with a copy of `fd` attached to their first byte.
    pub fn send(socket: &UnixStream, bytes: &[u8], fd: RawFd) -> std::io::Result<()> {
        let mut space = [0u8; 64];
        // SAFETY: the message points at live buffers; CMSG_* compute offsets inside `space`,
        // which is large enough for one descriptor.
        let sent = unsafe {
            let mut iov = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: bytes.len() };
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = space.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as _;
            let header = libc::CMSG_FIRSTHDR(&msg);
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
            libc::sendmsg(socket.as_raw_fd(), &msg, 0)
        };
        if sent < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // The rest (rarely any) without the descriptor.
        std::io::Write::write_all(&mut &*socket, &bytes[sent as usize..])
    }

    /// Reads bytes, appending any descriptors that came with them to `received`.
    pub fn recv(socket: &UnixStream, buf: &mut [u8], received: &mut VecDeque<OwnedFd>) -> std::io::Result<usize> {
        let mut space = [0u64; 64]; // aligned room for MAX_FDS descriptors
                                    // SAFETY: as in `send`; the kernel writes at most msg_controllen bytes of control data,
                                    // and every descriptor it reports is new and ours to own.
        unsafe {
            let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = space.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE((MAX_FDS * std::mem::size_of::<RawFd>()) as u32) as _;
            let n = libc::recvmsg(socket.as_raw_fd(), &mut msg, 0);
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut header = libc::CMSG_FIRSTHDR(&msg);
            while !header.is_null() {
                if (*header).cmsg_level == libc::SOL_SOCKET && (*header).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(header);
                    let count = ((*header).cmsg_len as usize - (data as usize - header as usize))
                        / std::mem::size_of::<RawFd>();
                    for i in 0..count {
                        let fd = std::ptr::read_unaligned(data.cast::<RawFd>().add(i));
                        received.push_back(OwnedFd::from_raw_fd(fd));
                    }
                }
                header = libc::CMSG_NXTHDR(&msg, header);
            }
            Ok(n as usize)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_lines_round_trip() {
        for message in [
            Message::Add { pid: 42, start: Some(1234), kind: Kind::Tree, stdin: true },
            Message::Add { pid: 7, start: None, kind: Kind::Group, stdin: false },
            Message::Release { pid: 42 },
            Message::Remove { pid: 42 },
            Message::Bye,
        ] {
            let line = message.line();
            assert!(line.ends_with('\n'));
            assert_eq!(Message::parse(line.trim_end()), Some(message));
        }
        for junk in ["", "+", "+1", "+1 2", "+1 2 x", "+a 2 t", "+1 2 t x", "+1 2 t f f", "-x", "=", "byebye"] {
            assert_eq!(Message::parse(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn stdin_copies_are_claimed_in_order_and_let_go() {
        let mut watch: Watch<&str> = Watch::new("h");
        let mut fds: VecDeque<&str> = VecDeque::from(["fd-a", "fd-b"]);
        watch.apply(Message::Add { pid: 1, start: None, kind: Kind::Tree, stdin: true }, &mut fds);
        watch.apply(Message::Add { pid: 2, start: None, kind: Kind::Group, stdin: false }, &mut fds);
        watch.apply(Message::Add { pid: 3, start: None, kind: Kind::Tree, stdin: true }, &mut fds);
        assert_eq!(watch.stdins.get(&1), Some(&"fd-a"));
        assert_eq!(watch.stdins.get(&3), Some(&"fd-b"));
        assert!(fds.is_empty());
        watch.apply(Message::Release { pid: 1 }, &mut fds);
        assert!(!watch.stdins.contains_key(&1));
        watch.apply(Message::Remove { pid: 3 }, &mut fds);
        assert!(watch.stdins.is_empty());
        assert_eq!(watch.roots.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2]);
    }

    #[cfg(unix)]
    #[test]
    fn the_guard_leaves_quietly_on_bye_and_ignores_junk() {
        use std::io::Write;
        let (mut host, guard) = std::os::unix::net::UnixStream::pair().unwrap();
        host.write_all(b"garbage\n+1 5 t\n-1\nbye\n+2 6 t\n").unwrap();
        let started = Instant::now();
        serve(guard, "test-host");
        assert!(started.elapsed() < ROOT_EXIT_WAIT, "bye ends the guard at once");
    }

    #[cfg(unix)]
    #[test]
    fn descriptors_travel_with_their_lines() {
        use std::os::fd::AsRawFd;
        let (host, guard) = std::os::unix::net::UnixStream::pair().unwrap();
        let (pipe_read, pipe_write) = std::io::pipe().unwrap();
        fds::send(&host, b"+9 1 t f\n", pipe_write.as_raw_fd()).unwrap();
        drop(pipe_write);
        let mut received = VecDeque::new();
        let mut buf = [0u8; 64];
        let n = fds::recv(&guard, &mut buf, &mut received).unwrap();
        assert_eq!(&buf[..n], b"+9 1 t f\n");
        assert_eq!(received.len(), 1);
        // The copy keeps the pipe open: the reader sees no end-of-file until it goes.
        let copy = received.pop_front().unwrap();
        let mut pipe_read = pipe_read;
        std::io::Write::write_all(&mut std::fs::File::from(copy), b"x").unwrap();
        let mut got = [0u8; 1];
        std::io::Read::read_exact(&mut pipe_read, &mut got).unwrap();
        assert_eq!(&got, b"x");
    }

    #[test]
    fn the_budget_after_the_host_died_stays_under_two_seconds() {
        // What the guard may spend before SIGKILL; the kill itself is immediate.
        assert!(ROOT_EXIT_WAIT + TERM_WAIT < Duration::from_millis(1000));
    }

    /// Whether the tests below may rely on this process's environment not naming a guard.
    #[cfg(unix)]
    fn switch_unset() -> bool {
        let unset = std::env::var_os(SWITCH_VAR).is_none_or(|v| v.is_empty());
        if !unset {
            eprintln!("{SWITCH_VAR} is set for this run: the tests that read it themselves are left out");
        }
        unset
    }

    #[test]
    fn the_switch_wins_over_the_location_and_an_unknown_location_is_no_guard() {
        let at = || Located::At(PathBuf::from("/pkg/rennet-codex-guard"));
        let off = std::ffi::OsStr::new("off");
        // Absolute on this platform.
        let elsewhere = if cfg!(windows) { r"C:\elsewhere\guard" } else { "/elsewhere/guard" };
        let named = std::ffi::OsStr::new(elsewhere);
        assert_eq!(resolve(Some(off), at()), Ok(None));
        assert_eq!(resolve(Some(named), at()), Ok(Some(PathBuf::from(elsewhere))));
        assert_eq!(resolve(Some(named), Located::Unknown), Ok(Some(PathBuf::from(elsewhere))));
        assert_eq!(resolve(None, at()), Ok(Some(PathBuf::from("/pkg/rennet-codex-guard"))));
        assert_eq!(resolve(None, Located::Off), Ok(None));
        assert_eq!(resolve(Some(std::ffi::OsStr::new("")), at()), Ok(Some(PathBuf::from("/pkg/rennet-codex-guard"))));
        let relative = resolve(Some(std::ffi::OsStr::new("guard")), at()).unwrap_err();
        assert!(relative.reason.contains("must be \"off\" or an absolute path"), "{relative:?}");
        let unknown = resolve(None, Located::Unknown).unwrap_err();
        assert_eq!(unknown.path, None);
        assert!(unknown.reason.contains("location of rennet-codex-guard is unknown"), "{unknown:?}");
        assert!(unknown.message().contains("RENNET_HOST_GUARD=off runs without host-death protection"));
    }

    #[cfg(unix)]
    #[test]
    fn only_an_executable_file_is_a_guard() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("rennet-guard-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("rennet-codex-guard");
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let reason = |p: &std::path::Path| check_executable(p).unwrap_err().reason;
        assert!(reason(&file).ends_with("is not executable"), "{}", reason(&file));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(check_executable(&file), Ok(()));
        assert!(reason(&dir).ends_with("is not a file"), "{}", reason(&dir));
        let missing = dir.join("absent");
        let why = check_executable(&missing).unwrap_err();
        assert_eq!(why.path.as_deref(), Some(missing.as_path()));
        assert!(why.reason.starts_with(&format!("{} (", missing.display())), "{why:?}");
        assert!(why.reason.ends_with("does not exist"), "{why:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_missing_guard_gives_no_ticket_and_reports_where_it_looked() {
        if !switch_unset() {
            return;
        }
        let missing = PathBuf::from("/nonexistent/rennet-codex-guard");
        let _using = testing::using(Located::At(missing.clone()));
        let Err(why) = ticket() else { panic!("a ticket without a guard") };
        assert_eq!(why.path.as_deref(), Some(missing.as_path()));
        assert_eq!(why.reason, "/nonexistent/rennet-codex-guard (next to the native addon) does not exist");
        let failure = why.failure();
        assert_eq!((failure.source, failure.code), (FailureSource::Spawn, Code::HostGuardUnavailable));
        assert!(failure.message.contains("/nonexistent/rennet-codex-guard"), "{}", failure.message);
        assert_eq!(failure.detail["path"], "/nonexistent/rennet-codex-guard");
        assert_eq!(failure.detail["switch"], SWITCH_VAR);
        let now = status();
        assert_eq!((now.available, now.path.as_deref()), (false, Some("/nonexistent/rennet-codex-guard")), "{now:?}");
        assert!(now.reason.as_deref().unwrap().contains("does not exist"), "{now:?}");
        drop(_using);
        let _using = testing::using(Located::Unknown);
        let Err(why) = ticket() else { panic!("a ticket without a location") };
        assert_eq!(why.path, None);
        assert_eq!(status().path, None);
        assert!(!status().available);
        drop(_using);
        let _using = testing::using(Located::Off);
        let now = status();
        assert!(!now.available && now.path.is_none(), "{now:?}");
        assert!(now.reason.as_deref().unwrap().contains("switched off"), "{now:?}");
        drop(ticket().expect("switched off, a child may start"));
    }

    /// Through the production entry: nothing of the turn starts, and its one terminal says why.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_turn_without_its_guard_fails_at_once_and_starts_nothing() {
        if !switch_unset() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("rennet-guard-turn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let started = dir.join("started");
        let codex = dir.join("codex");
        std::fs::write(&codex, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", started.display())).unwrap();
        std::fs::set_permissions(&codex, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let cases = [
            ("missing", Located::At(dir.join("rennet-codex-guard")), Some(json!({"codexPath": codex}))),
            ("location unknown", Located::Unknown, Some(json!({"codexPath": codex}))),
            // Without codexPath: discovery would run probes; it is not even started.
            ("missing, with discovery", Located::At(dir.join("rennet-codex-guard")), None),
        ];
        for (what, located, extra) in cases {
            let _using = testing::using(located);
            let mut options = json!({"prompt": "hi", "cwd": dir, "env": {"RENNET_CODEX_BIN": codex, "PATH": dir}});
            if let Some(extra) = extra {
                options.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            }
            let options = crate::options::parse(&options.to_string()).unwrap();
            let (turn, work) = crate::turn::start(options, false);
            work.await;
            let stream = turn.stream;
            let mut events = Vec::new();
            while let Some(batch) = stream.next_batch().await {
                events.extend(crate::batch::decode(&batch).unwrap());
            }
            assert_eq!(events.len(), 1, "{what}: {events:#?}");
            let terminal = &events[0];
            assert_eq!(terminal["type"], "terminal", "{what}");
            assert_eq!(terminal["status"], "failed", "{what}");
            assert_eq!(terminal["failure"]["source"], "spawn", "{what}");
            assert_eq!(terminal["failure"]["code"], "HOST_GUARD_UNAVAILABLE", "{what}");
            assert!(terminal["failure"]["message"].as_str().unwrap().starts_with("no host-death guard: "), "{what}");
            assert!(!started.exists(), "{what}: the Codex stand-in was started");
        }
        // The control: switched off, the same stand-in does start (and fails as it should).
        let _using = testing::using(Located::Off);
        let options = json!({"prompt": "hi", "cwd": dir, "codexPath": codex});
        let (turn, work) = crate::turn::start(crate::options::parse(&options.to_string()).unwrap(), false);
        work.await;
        let stream = turn.stream;
        let mut events = Vec::new();
        while let Some(batch) = stream.next_batch().await {
            events.extend(crate::batch::decode(&batch).unwrap());
        }
        assert_ne!(events.last().unwrap()["failure"]["code"], "HOST_GUARD_UNAVAILABLE", "{events:#?}");
        assert!(started.exists(), "the control never started the stand-in");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn child_markers_share_the_host_prefix() {
        let (a, b) = (child_marker(), child_marker());
        assert_ne!(a, b);
        assert!(a.starts_with(&format!("{}-", host_marker())));
    }
}
