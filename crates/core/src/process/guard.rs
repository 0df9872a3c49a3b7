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

use super::table;
use super::tree::{Marker, Tree};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// `off` runs turns without a guard; an absolute path names the guard executable to use.
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
            Ok(Running { child, control })
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
    /// Why no guard could be started, said once.
    warned: bool,
}

fn client() -> &'static Mutex<Client> {
    static CLIENT: OnceLock<Mutex<Client>> = OnceLock::new();
    CLIENT.get_or_init(Default::default)
}

/// A child's place under the guard: taken before the child starts, so that the guard already
/// runs when it does; dropping it says the child is gone.
pub struct Ticket {
    pid: Option<i32>,
}

/// Takes a ticket, starting the guard if none runs.
pub fn ticket() -> Ticket {
    let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
    client.tickets += 1;
    if client.guard.is_none() {
        match start() {
            Ok(running) => client.guard = running,
            Err(why) => {
                if !client.warned {
                    client.warned = true;
                    tracing::warn!("no host-death guard: {why}; a child of a turn may outlive this process if it dies");
                }
            }
        }
    }
    Ticket { pid: None }
}

impl Ticket {
    /// Registers the started child (its start time tells it from a later process with its pid).
    /// `stdin`: the writing end of the child's stdin pipe, of which the guard keeps a copy until
    /// [`StdinRelease`] says the host is closing it.
    pub fn register(&mut self, pid: u32, start: Option<u64>, kind: Kind, stdin: Option<i32>) -> Option<StdinRelease> {
        let pid = pid as i32;
        self.pid = Some(pid);
        let sent = send(&Message::Add { pid, start, kind, stdin: stdin.is_some() }, stdin);
        (sent && stdin.is_some()).then_some(StdinRelease { pid })
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            send(&Message::Remove { pid }, None);
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
        send(&Message::Release { pid: self.pid }, None);
    }
}

/// Whether the message reached a running guard.
fn send(message: &Message, fd: Option<i32>) -> bool {
    let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
    let Some(running) = &mut client.guard else {
        return false;
    };
    match running.send(message, fd) {
        Ok(()) => true,
        Err(e) => {
            // The guard died: the next ticket starts another.
            tracing::warn!("the host-death guard stopped reading: {e}");
            if let Some(running) = client.guard.take() {
                reap(running.child);
            }
            false
        }
    }
}

/// The guard executable, unless the switch turns it off.
#[cfg(unix)]
fn executable() -> Result<Option<PathBuf>, String> {
    match std::env::var_os(SWITCH_VAR) {
        Some(value) if value == "off" => Ok(None),
        Some(value) if std::path::Path::new(&value).is_absolute() => Ok(Some(PathBuf::from(value))),
        Some(value) => Err(format!("{SWITCH_VAR} must be \"off\" or an absolute path, not {value:?}")),
        None => match EXECUTABLE.get() {
            Some(path) if path.is_file() => Ok(Some(path.clone())),
            Some(path) => Err(format!("{} does not exist", path.display())),
            None => Err("the guard executable's location is unknown".to_string()),
        },
    }
}

#[cfg(unix)]
fn start() -> Result<Option<Running>, String> {
    let Some(program) = executable()? else {
        return Ok(None);
    };
    let running = Running::start(&program, host_marker())
        .map_err(|e| format!("{} could not be started: {e}", program.display()))?;
    tracing::debug!(pid = running.child.id(), "host-death guard started");
    Ok(Some(running))
}

/// Windows needs no guard: every child is in a Job Object that ends with the host.
#[cfg(not(unix))]
fn start() -> Result<Option<Running>, String> {
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

    #[test]
    fn child_markers_share_the_host_prefix() {
        let (a, b) = (child_marker(), child_marker());
        assert_ne!(a, b);
        assert!(a.starts_with(&format!("{}-", host_marker())));
    }
}
