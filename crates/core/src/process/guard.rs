//! The host-death guard: a small process (`rennet-codex-guard`) that outlives the host long
//! enough to end everything the host's turns started when the host itself ends without doing
//! so — `SIGKILL`, a default `SIGTERM`/`SIGINT`, `process.exit()`, a crash.
//!
//! One guard runs while the host has children of this package, and none otherwise. The host
//! starts it with a pipe on its stdin and writes a line per child (`+<pid> <start> t|g`) and per
//! child ended (`-<pid>`), then `bye` when the last one is gone. The kernel closes the pipe when
//! the host dies, however it dies: the guard reads end-of-file without `bye`, and ends every
//! registered child's tree (its process group, its descendants and, through the marker in their
//! environment, everything carrying this host's marker) — first letting the children leave by
//! themselves (`codex app-server` exits on stdin EOF, which the host's death also delivers),
//! then `SIGTERM`, then `SIGKILL` — and exits. The guard sits in a session of its own, so
//! terminal signals meant for the host (Ctrl-C, a closed terminal) do not reach it.
//!
//! Unix only: on Windows every child is in a Job Object that the kernel kills with the host's
//! last handle to it.

use super::table;
use super::tree::{Marker, Tree};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// `off` runs turns without a guard; an absolute path names the guard executable to use.
pub const SWITCH_VAR: &str = "RENNET_HOST_GUARD";
/// The guard executable's name in the platform package, next to the addon.
pub const EXECUTABLE_NAME: &str = if cfg!(windows) { "rennet-codex-guard.exe" } else { "rennet-codex-guard" };

/// How long the guard lets registered children leave by themselves after the host died.
pub const ROOT_EXIT_WAIT: Duration = Duration::from_millis(300);
/// After that, between SIGTERM and SIGKILL.
pub const TERM_WAIT: Duration = Duration::from_millis(400);
/// How often, on a platform without a child subreaper, the guard notes the descendants of its
/// children while the host lives, before an exiting parent orphans them.
const TRACK_EVERY: Option<Duration> =
    if cfg!(target_os = "linux") { None } else { Some(Duration::from_millis(500)) };

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
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
    Add { pid: i32, start: Option<u64>, kind: Kind },
    Remove { pid: i32 },
    Bye,
}

impl Message {
    fn line(&self) -> String {
        match self {
            Message::Add { pid, start, kind } => {
                let kind = if *kind == Kind::Tree { 't' } else { 'g' };
                format!("+{pid} {} {kind}\n", start.map_or("-".to_string(), |s| s.to_string()))
            }
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
        Some(Message::Add { pid, start, kind })
    }
}

// ---------------------------------------------------------------------------------------------
// The host's side

struct Running {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
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
            Ok(Some(running)) => client.guard = Some(running),
            Ok(None) => {}
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
    pub fn register(&mut self, pid: u32, start: Option<u64>, kind: Kind) {
        let pid = pid as i32;
        self.pid = Some(pid);
        send(&Message::Add { pid, start, kind });
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            send(&Message::Remove { pid });
        }
        let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
        client.tickets -= 1;
        if client.tickets == 0 {
            if let Some(mut running) = client.guard.take() {
                let _ = running.stdin.write_all(Message::Bye.line().as_bytes());
                drop(running.stdin);
                reap(running.child);
            }
        }
    }
}

fn send(message: &Message) {
    let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(running) = &mut client.guard {
        if let Err(e) = running.stdin.write_all(message.line().as_bytes()) {
            // The guard died: the next ticket starts another.
            tracing::warn!("the host-death guard stopped reading: {e}");
            if let Some(running) = client.guard.take() {
                reap(running.child);
            }
        }
    }
}

/// The guard executable, unless the switch turns it off.
fn executable() -> Result<Option<PathBuf>, String> {
    match std::env::var_os(SWITCH_VAR) {
        Some(value) if value == "off" => Ok(None),
        Some(value) if Path::new(&value).is_absolute() => Ok(Some(PathBuf::from(value))),
        Some(value) => Err(format!("{SWITCH_VAR} must be \"off\" or an absolute path, not {value:?}")),
        None => match EXECUTABLE.get() {
            Some(path) if path.is_file() => Ok(Some(path.clone())),
            Some(path) => Err(format!("{} does not exist", path.display())),
            None => Err("the guard executable's location is unknown".to_string()),
        },
    }
}

fn start() -> Result<Option<Running>, String> {
    if !cfg!(unix) {
        return Ok(None);
    }
    let Some(program) = executable()? else {
        return Ok(None);
    };
    let mut command = std::process::Command::new(&program);
    command
        .arg(host_marker())
        .env_clear()
        // Holds no directory of the host's busy.
        .current_dir("/")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().map_err(|e| format!("{} could not be started: {e}", program.display()))?;
    let stdin = child.stdin.take().expect("stdin is piped");
    tracing::debug!(pid = child.id(), "host-death guard started");
    Ok(Some(Running { child, stdin }))
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

/// What the guard knows: the registered children and what it found below them.
struct Watch {
    tree: Tree,
    roots: Vec<(i32, Option<u64>)>,
}

impl Watch {
    fn new(host: &str) -> Watch {
        Watch { tree: Tree::new(Some(Marker::prefix(super::TREE_MARKER_VAR, &format!("{host}-")))), roots: Vec::new() }
    }

    fn apply(&mut self, message: Message) {
        match message {
            Message::Add { pid, start, kind: Kind::Tree } => {
                self.tree.add_root(pid, start);
                self.roots.push((pid, start));
            }
            Message::Add { pid, start, kind: Kind::Group } => {
                self.tree.add_group(pid);
                self.roots.push((pid, start));
            }
            Message::Remove { pid } => {
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
        // First, while the children's parent links are still intact.
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

/// The guard's main loop over its input (the host's pipe): returns when the host said `bye`,
/// or after it ended everything because the host died.
pub fn serve(input: &mut dyn std::io::Read, host: &str) {
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
    let mut buf = [0u8; 4096];
    loop {
        let n = match input.read(&mut buf) {
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
            watch.lock().unwrap_or_else(|e| e.into_inner()).apply(message);
        }
    }
    done.store(true, Ordering::Relaxed);
    watch.lock().unwrap_or_else(|e| e.into_inner()).end_all();
}

/// Readies the guard process: a session of its own (no terminal's signals), no descriptor of
/// the host's but its stdin, and no death by a write to a closed pipe.
pub fn detach() {
    #[cfg(unix)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_lines_round_trip() {
        for message in [
            Message::Add { pid: 42, start: Some(1234), kind: Kind::Tree },
            Message::Add { pid: 7, start: None, kind: Kind::Group },
            Message::Remove { pid: 42 },
            Message::Bye,
        ] {
            let line = message.line();
            assert!(line.ends_with('\n'));
            assert_eq!(Message::parse(line.trim_end()), Some(message));
        }
        for junk in ["", "+", "+1", "+1 2", "+1 2 x", "+a 2 t", "-x", "byebye"] {
            assert_eq!(Message::parse(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn the_guard_leaves_quietly_on_bye_and_ignores_junk() {
        let mut input: &[u8] = b"garbage\n+1 5 t\n-1\nbye\n+2 6 t\n";
        let started = Instant::now();
        serve(&mut input, "test-host");
        assert!(started.elapsed() < ROOT_EXIT_WAIT, "bye ends the guard at once");
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
