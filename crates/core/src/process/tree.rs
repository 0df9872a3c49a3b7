//! Finding and signalling everything a child started.
//!
//! A turn's child may start processes that leave its process group (`setpgid`) or its session
//! (`setsid`), and daemons that double-fork so that their parent link is cut. Process groups
//! alone do not find those. A [`Tree`] is the union of several nets, each catching what the
//! previous one misses:
//!
//! 1. the process groups it was given (`killpg`), for everything that stays in them;
//! 2. its members and, through the parent links of the process table, every descendant of a
//!    member, looked for again before each signal (so descendants that changed group or session
//!    are found); on Linux the child is a *child subreaper* (see [`super`]), so orphans below it
//!    stay attached to it while it lives;
//! 3. every process whose environment carries the [`Marker`] (inherited by default across `fork`
//!    and `exec`): this finds what was orphaned after the child itself died (a crash, a host
//!    that died). Each environment read is only compared with that one entry, never kept.
//!
//! Every member is remembered with its start time, so a recycled pid is never signalled.
//! Where the platform has no process table ([`table::SUPPORTED`]), only the groups are used.

use super::platform::{group_exists, signal_group, signal_process};
use super::table::{self, Entry};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    Term,
    Kill,
}

/// How often the table is looked at while waiting for a tree to go.
const POLL: Duration = Duration::from_millis(10);
/// After SIGKILL, how long to wait for the kernel to take every member down (a process in an
/// uninterruptible sleep goes only when its I/O returns).
const GONE_WAIT: Duration = Duration::from_millis(1000);

/// An environment entry that makes a process a member.
#[derive(Clone, Debug)]
pub struct Marker {
    needle: Vec<u8>,
    prefix: bool,
}

impl Marker {
    /// Processes whose environment has exactly `var=value`.
    pub fn exact(var: &str, value: &str) -> Marker {
        Marker { needle: format!("{var}={value}").into_bytes(), prefix: false }
    }

    /// Processes whose environment has `var=` followed by a value that starts with `value`.
    pub fn prefix(var: &str, value: &str) -> Marker {
        Marker { needle: format!("{var}={value}").into_bytes(), prefix: true }
    }

    fn matches(&self, entry: &[u8]) -> bool {
        if self.prefix {
            entry.starts_with(&self.needle)
        } else {
            entry == self.needle.as_slice()
        }
    }
}

/// Process groups, members and a marker; see the module documentation.
#[derive(Default, Debug)]
pub struct Tree {
    groups: Vec<i32>,
    /// Pid and start time of every member found.
    members: Vec<(i32, u64)>,
    marker: Option<Marker>,
    /// The oldest root's start time: a descendant cannot have started before it, so only
    /// younger processes are read for the marker (reading every environment on the machine at
    /// each look made ending a turn measurably slower).
    born: Option<u64>,
}

impl Tree {
    pub fn new(marker: Option<Marker>) -> Tree {
        Tree { marker, ..Tree::default() }
    }

    /// Adds `pid`, the leader of its own process group, with everything it starts.
    pub fn add_root(&mut self, pid: i32, start: Option<u64>) {
        self.add_group(pid);
        if let Some(start) = start {
            if !self.members.iter().any(|m| m.0 == pid) {
                self.members.push((pid, start));
            }
            self.born = Some(self.born.map_or(start, |born| born.min(start)));
        }
    }

    /// Adds a process group, signalled as a whole; nothing outside it is followed.
    pub fn add_group(&mut self, pgid: i32) {
        if pgid > 0 && !self.groups.contains(&pgid) {
            self.groups.push(pgid);
        }
    }

    /// Forgets a root and its group (it ended); what was found below it stays known.
    pub fn remove_root(&mut self, pid: i32) {
        self.groups.retain(|&g| g != pid);
        self.members.retain(|m| m.0 != pid);
    }

    /// Adds the members that appeared since the last look.
    pub fn refresh(&mut self, table: &[Entry]) {
        self.grow(table, &|pid, marker| table::environ_matches(pid, &|e| marker.matches(e)));
    }

    /// [`Tree::refresh`] with the environment check given (tests use a fake one).
    fn grow(&mut self, table: &[Entry], carries: &dyn Fn(i32, &Marker) -> bool) {
        // Only members still known by their start time lead to descendants: a recycled pid's
        // children are someone else's.
        let mut frontier: Vec<i32> = self
            .members
            .iter()
            .filter(|(pid, start)| table.iter().any(|p| p.pid == *pid && p.start == *start))
            .map(|m| m.0)
            .collect();
        while let Some(parent) = frontier.pop() {
            for child in table.iter().filter(|p| p.ppid == parent) {
                if !self.members.iter().any(|m| m.0 == child.pid) {
                    self.members.push((child.pid, child.start));
                    frontier.push(child.pid);
                }
            }
        }
        if let Some(marker) = &self.marker {
            let born = self.born.unwrap_or(0);
            for entry in table.iter().filter(|p| !p.zombie && p.start >= born) {
                if !self.members.iter().any(|m| m.0 == entry.pid) && carries(entry.pid, marker) {
                    self.members.push((entry.pid, entry.start));
                }
            }
        }
    }

    /// Members still running in `table`, matched by pid and start time.
    fn live_members<'a>(&'a self, table: &'a [Entry]) -> impl Iterator<Item = i32> + 'a {
        self.members
            .iter()
            .filter(|(pid, start)| table.iter().any(|p| p.pid == *pid && p.start == *start && !p.zombie))
            .map(|m| m.0)
    }

    /// Whether anything of the tree still runs in `table` (zombies do not count: an orphaned
    /// zombie waits for its new parent, not for us).
    fn alive_in(&self, table: &[Entry]) -> bool {
        if !table::SUPPORTED {
            return self.groups.iter().any(|&g| group_exists(g));
        }
        table.iter().any(|p| {
            !p.zombie && (self.groups.contains(&p.pgrp) || self.members.iter().any(|m| m.0 == p.pid && m.1 == p.start))
        })
    }

    fn send(&self, table: &[Entry], signal: Signal) {
        for &group in &self.groups {
            signal_group(group, signal);
        }
        for pid in self.live_members(table) {
            signal_process(pid, signal);
        }
    }

    /// Looks for new members, then signals the groups and every member: one look at the table
    /// for both. Returns whether anything of the tree was still running then.
    pub fn refresh_and_signal(&mut self, signal: Signal) -> bool {
        let table = table::snapshot();
        self.refresh(&table);
        self.send(&table, signal);
        self.alive_in(&table)
    }

    /// Looks for new members; whether anything of the tree runs.
    pub fn refresh_alive(&mut self) -> bool {
        let table = table::snapshot();
        self.refresh(&table);
        self.alive_in(&table)
    }

    /// Ends the tree: SIGTERM, up to `grace` for everything to go, then SIGKILL to what is
    /// left (members that appeared meanwhile included), and waits until it is gone. Blocks the
    /// calling thread: call it where blocking is fine (a blocking task, a `Drop`, the guard).
    pub fn terminate(&mut self, grace: Duration) {
        if !self.refresh_and_signal(Signal::Term) {
            // Nothing alive when the signal went out: nothing is left that could start anything.
            return;
        }
        if self.wait_gone(grace) {
            return;
        }
        self.refresh_and_signal(Signal::Kill);
        let deadline = Instant::now() + GONE_WAIT;
        while Instant::now() < deadline {
            std::thread::sleep(POLL);
            // Members that appeared since (started before the kill reached their parent).
            if !self.refresh_and_signal(Signal::Kill) {
                return;
            }
        }
    }

    /// Polls until nothing of the tree runs or `within` passed; whether it is gone.
    pub fn wait_gone(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if !self.refresh_alive() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(POLL.min(deadline.saturating_duration_since(Instant::now())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pid: i32, ppid: i32, pgrp: i32, start: u64) -> Entry {
        Entry { pid, ppid, pgrp, start, zombie: false }
    }

    #[test]
    #[cfg_attr(not(unix), ignore = "groups and parent links find a Unix tree; Windows has the Job Object")]
    fn follows_parent_links_from_known_members_only() {
        let table = vec![
            entry(10, 1, 10, 100),  // the root
            entry(11, 10, 10, 101), // in its group
            entry(12, 11, 12, 102), // left the group (setpgid)
            entry(13, 12, 13, 103), // its own session below that
            entry(20, 1, 20, 50),   // unrelated, older
            entry(21, 20, 20, 105), // unrelated child
        ];
        let mut tree = Tree::new(None);
        tree.add_root(10, Some(100));
        tree.grow(&table, &|_, _| false);
        let mut members: Vec<i32> = tree.members.iter().map(|m| m.0).collect();
        members.sort();
        assert_eq!(members, [10, 11, 12, 13]);
        assert!(tree.alive_in(&table));
        let live: Vec<i32> = tree.live_members(&table).collect();
        assert_eq!(live.len(), 4);
    }

    #[test]
    fn a_recycled_pid_is_not_a_member_nor_a_parent() {
        let mut tree = Tree::new(None);
        tree.add_root(10, Some(100));
        // Pid 10 now belongs to a process that started later: its children are not ours.
        let table = vec![entry(10, 1, 30, 900), entry(11, 10, 30, 901)];
        tree.grow(&table, &|_, _| false);
        assert_eq!(tree.members, [(10, 100)]);
        assert_eq!(tree.live_members(&table).count(), 0);
        // Group 10 is gone (the recycled pid leads group 30): nothing of ours runs.
        assert!(!tree.alive_in(&table));
    }

    #[test]
    fn the_marker_finds_orphans_younger_than_the_oldest_root() {
        let marker = Marker::prefix("RENNET_CODEX_TREE", "h-");
        let mut tree = Tree::new(Some(marker));
        tree.add_root(10, Some(100));
        let table = vec![
            entry(40, 1, 40, 150), // orphaned daemon carrying the marker
            entry(41, 1, 41, 90),  // carries it too but is older than the root: never read
            entry(42, 1, 42, 160), // another process, no marker
        ];
        let read = std::cell::RefCell::new(Vec::new());
        tree.grow(&table, &|pid, marker| {
            read.borrow_mut().push(pid);
            pid != 42 && marker.matches(b"RENNET_CODEX_TREE=h-3")
        });
        assert_eq!(tree.members, [(10, 100), (40, 150)]);
        assert_eq!(*read.borrow(), [40, 42]);
    }

    #[test]
    #[cfg_attr(not(unix), ignore = "groups and parent links find a Unix tree; Windows has the Job Object")]
    fn zombies_are_not_alive_and_groups_keep_a_tree_alive() {
        let mut tree = Tree::new(None);
        tree.add_group(70);
        let mut table = vec![entry(71, 1, 70, 5)];
        assert!(tree.alive_in(&table));
        table[0].zombie = true;
        assert!(!tree.alive_in(&table));
    }

    // Without a subreaper (macOS; Linux with RENNET_GUARD_TRACKING=poll) an orphan's parent
    // link is gone at once: the guard's looks every 500 ms are what keeps it known.

    #[test]
    fn a_descendant_a_look_saw_stays_known_once_orphaned() {
        let mut tree = Tree::new(Some(Marker::prefix("RENNET_CODEX_TREE", "h-")));
        tree.add_root(10, Some(100));
        let no_marker = |_: i32, _: &Marker| false;
        // A look while its parent lives: 12 left the group and session, and its environment.
        tree.grow(&[entry(10, 1, 10, 100), entry(11, 10, 10, 101), entry(12, 11, 12, 102)], &no_marker);
        // Its parent left: 12 belongs to init now, and nothing leads to it.
        let later = [entry(10, 1, 10, 100), entry(12, 1, 12, 102)];
        tree.grow(&later, &no_marker);
        assert_eq!(tree.live_members(&later).collect::<Vec<_>>(), [10, 12]);
    }

    #[test]
    fn what_leaves_the_tree_and_drops_the_marker_between_two_looks_is_not_found() {
        let mut tree = Tree::new(Some(Marker::prefix("RENNET_CODEX_TREE", "h-")));
        tree.add_root(10, Some(100));
        tree.grow(&[entry(10, 1, 10, 100)], &|_, _| false);
        // Between two looks 11 started 12 with a cleared environment in a session of its own,
        // and left: by the next look 12's parent is init.
        let next = [entry(10, 1, 10, 100), entry(12, 1, 12, 102)];
        tree.grow(&next, &|_, _| false);
        assert_eq!(tree.live_members(&next).collect::<Vec<_>>(), [10], "the limit");
        // The control: with the marker kept, the same orphan is found.
        tree.grow(&next, &|pid, marker| pid == 12 && marker.matches(b"RENNET_CODEX_TREE=h-0"));
        assert_eq!(tree.live_members(&next).collect::<Vec<_>>(), [10, 12]);
    }

    #[test]
    fn markers_match_exactly_or_by_prefix() {
        let exact = Marker::exact("V", "a-1");
        assert!(exact.matches(b"V=a-1"));
        assert!(!exact.matches(b"V=a-10"));
        let prefix = Marker::prefix("V", "a-");
        assert!(prefix.matches(b"V=a-10"));
        assert!(!prefix.matches(b"V=b-1"));
        assert!(!prefix.matches(b"W=a-1"));
    }
}
