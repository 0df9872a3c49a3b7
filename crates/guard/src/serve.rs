//! The guard's loop: it reads the host's lines (`rennet_codex::process::guard::wire`) and the
//! stdin copies that come with them until the host says `bye` — then it leaves — or until the
//! socket ends without it: the host died, and the guard ends everything of its children.
//!
//! Where the children are no subreapers (macOS; Linux with `RENNET_GUARD_TRACKING=poll`), a
//! second thread, `track`, notes their descendants every `TRACK_EVERY` (500 ms) while the host
//! lives, so that one orphaned before the host died is still known by then
//! (`rennet_codex::process::tracking`).

use rennet_codex::process::guard::fd_pass;
use rennet_codex::process::guard::wire::{Kind, Message};
use rennet_codex::process::table;
use rennet_codex::process::tracking::Tracking;
use rennet_codex::process::tree::{Marker, Tree};
use rennet_codex::process::TREE_MARKER_VAR;
use std::collections::{HashMap, VecDeque};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the guard lets registered children leave by themselves after the host died.
pub const ROOT_EXIT_WAIT: Duration = Duration::from_millis(300);
/// After that, between SIGTERM and SIGKILL.
pub const TERM_WAIT: Duration = Duration::from_millis(400);
/// The name of the thread that looks every `TRACK_EVERY` (`/proc/<guard>/task/*/comm`, `ps -T`).
pub const TRACK_THREAD: &str = "track";

/// What the guard knows: the registered children, what it found below them, and the copies of
/// their stdin it holds.
struct Watch<F> {
    tree: Tree,
    roots: Vec<(i32, Option<u64>)>,
    stdins: HashMap<i32, F>,
}

impl<F> Watch<F> {
    fn new(host: &str) -> Watch<F> {
        Watch {
            tree: Tree::new(Some(Marker::prefix(TREE_MARKER_VAR, &format!("{host}-")))),
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
        // While the children still run, their descendants are below them (with subreapers even
        // the orphans; in the poll, those a look saw are known already): note them all first.
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
/// or after it ended everything because the host died. `tracking`: how the host's children
/// keep their orphans in sight (the host says it on the guard's command line).
pub fn serve(input: UnixStream, host: &str, tracking: Tracking) {
    let watch = Arc::new(Mutex::new(Watch::new(host)));
    let done = Arc::new(AtomicBool::new(false));
    if let Some(every) = tracking.look_every() {
        let (watch, done) = (watch.clone(), done.clone());
        let track = move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(every);
                watch.lock().unwrap_or_else(|e| e.into_inner()).tree.refresh_alive();
            }
        };
        // As `std::thread::spawn` would: a guard that cannot look must not pretend to.
        std::thread::Builder::new().name(TRACK_THREAD.to_string()).spawn(track).expect("the tracking thread starts");
    }
    let mut pending: Vec<u8> = Vec::new();
    let mut received = VecDeque::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = match fd_pass::recv(&input, &mut buf, &mut received) {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A child of this test in a process group of its own, registered with the guard as the
    /// host would; killed when dropped, whatever the test did.
    struct Registered(std::process::Child);

    impl Registered {
        fn start() -> Registered {
            use std::os::unix::process::CommandExt;
            Registered(std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap())
        }

        fn line(&self) -> String {
            let pid = self.0.id() as i32;
            let start = table::entry(pid).map(|e| e.start);
            Message::Add { pid, start, kind: Kind::Tree, stdin: false }.line()
        }

        fn running(&mut self) -> bool {
            matches!(self.0.try_wait(), Ok(None))
        }
    }

    impl Drop for Registered {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    #[test]
    fn bye_leaves_the_children_alone_and_junk_is_skipped() {
        use std::io::Write;
        let mut child = Registered::start();
        let (mut host, guard) = UnixStream::pair().unwrap();
        write!(host, "garbage\n{}bye\n+2 6 t\n", child.line()).unwrap();
        serve(guard, "test-host", Tracking::PLATFORM);
        assert!(child.running(), "bye ended a registered child");
    }

    #[test]
    fn the_host_gone_without_bye_ends_its_children() {
        use std::io::Write;
        let mut child = Registered::start();
        let (mut host, guard) = UnixStream::pair().unwrap();
        write!(host, "garbage\n{}", child.line()).unwrap();
        drop(host);
        serve(guard, "test-host", Tracking::PLATFORM);
        // Reaped here: serve returns only once the tree is gone (or SIGKILLed and waited for).
        let status = child.0.wait().unwrap();
        assert!(!status.success(), "{status:?}");
    }

    #[test]
    fn the_budget_after_the_host_died_stays_under_two_seconds() {
        // What the guard may spend before SIGKILL; the kill itself is immediate.
        assert!(ROOT_EXIT_WAIT + TERM_WAIT < Duration::from_millis(1000));
    }
}
