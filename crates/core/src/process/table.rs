//! Snapshots of the system's process table: for each process its parent, group, start time and
//! whether it is a zombie, and what its environment holds.
//!
//! Linux reads `/proc`; macOS asks the kernel (`proc_listallpids`, `proc_pidinfo` and the
//! `KERN_PROCARGS2` sysctl, which returns the environment of a process of the same user). Other
//! platforms have no table: [`snapshot`] is empty and only process groups can be signalled.
//! The system calls are in `platform`; what they return is parsed here.

/// One process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    /// When it started, in a unit of the platform's own (clock ticks since boot on Linux,
    /// microseconds since the epoch on macOS): with the pid, it tells a process from a later
    /// one that reuses the pid.
    pub start: u64,
    pub zombie: bool,
}

use super::platform;

/// Whether this platform has a process table (and so descendants and markers can be found).
pub const SUPPORTED: bool = platform::TABLE;

/// Every process, as the platform reports it.
pub fn snapshot() -> Vec<Entry> {
    platform::snapshot()
}

/// One process, if it exists.
pub fn entry(pid: i32) -> Option<Entry> {
    platform::entry(pid)
}

/// Whether the environment `pid` started with holds an entry for which `matches` is true.
/// Processes of other users (whose environment cannot be read) never match.
pub fn environ_matches(pid: i32, matches: &dyn Fn(&[u8]) -> bool) -> bool {
    platform::environ(pid).is_some_and(|environ| environ_entries(&environ, platform::ENVIRON_LAYOUT).any(matches))
}

// What the systems answer, parsed here rather than next to the calls that ask: every platform
// compiles these and runs their tests on byte fixtures, macOS's included.

/// How the environment bytes of a process are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvironLayout {
    /// `NAME=value\0NAME=value\0…` (Linux's `/proc/<pid>/environ`).
    Plain,
    /// macOS `KERN_PROCARGS2`: argc (a native-endian i32), the executable path, padding NULs,
    /// argc arguments, then the environment, each NUL-terminated, until an empty string.
    ProcArgs2,
}

/// The environment entries in `bytes`.
pub fn environ_entries(bytes: &[u8], layout: EnvironLayout) -> Box<dyn Iterator<Item = &[u8]> + '_> {
    match layout {
        EnvironLayout::Plain => Box::new(bytes.split(|&b| b == 0).filter(|e| !e.is_empty())),
        EnvironLayout::ProcArgs2 => {
            let Some((argc, rest)) = bytes.split_first_chunk::<4>() else {
                return Box::new(std::iter::empty());
            };
            let argc = i32::from_ne_bytes(*argc).max(0) as usize;
            // The executable path, then any number of NULs of padding.
            let Some(path_end) = rest.iter().position(|&b| b == 0) else {
                return Box::new(std::iter::empty());
            };
            let rest = &rest[path_end..];
            let start = rest.iter().position(|&b| b != 0).unwrap_or(rest.len());
            let mut strings = rest[start..].split(|&b| b == 0);
            for _ in 0..argc {
                if strings.next().is_none() {
                    return Box::new(std::iter::empty());
                }
            }
            Box::new(strings.take_while(|e| !e.is_empty()))
        }
    }
}

/// One line of Linux's `/proc/<pid>/stat`.
pub fn parse_stat(pid: i32, stat: &str) -> Option<Entry> {
    // The command name is parenthesised and may contain anything; the fields follow it.
    let (_, rest) = stat.rsplit_once(')')?;
    // From the state (3rd field in proc(5)) on: ppid, pgrp, … starttime (22nd).
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|s| s.parse::<i64>().ok());
    Some(Entry {
        pid,
        ppid: field(1)? as i32,
        pgrp: field(2)? as i32,
        start: field(19)? as u64,
        zombie: fields.first() == Some(&"Z"),
    })
}

/// Where macOS's `struct proc_bsdinfo` (`<sys/proc_info.h>`, what `proc_pidinfo` writes for
/// `PROC_PIDTBSDINFO`) keeps the fields read here, in bytes, native-endian. The macOS build
/// checks each against libc's definition of the struct.
pub mod bsdinfo {
    pub const SIZE: usize = 136;
    /// `pbi_status`, a u32.
    pub const STATUS: usize = 4;
    /// `pbi_ppid`, a u32.
    pub const PPID: usize = 16;
    /// `pbi_pgid`, a u32.
    pub const PGID: usize = 100;
    /// `pbi_start_tvsec`, a u64: seconds since the epoch.
    pub const START_SEC: usize = 120;
    /// `pbi_start_tvusec`, a u64: and microseconds.
    pub const START_USEC: usize = 128;
    /// `pbi_status` of a zombie (`SZOMB`).
    pub const ZOMBIE: u32 = 5;
}

/// A `proc_bsdinfo` as `proc_pidinfo` wrote it (nothing unless all of it was written). Its
/// start time, in microseconds since the epoch, tells the process from a later one with its
/// pid.
pub fn parse_bsdinfo(pid: i32, bytes: &[u8]) -> Option<Entry> {
    if bytes.len() != bsdinfo::SIZE {
        return None;
    }
    let u32_at = |at: usize| bytes.get(at..at + 4).and_then(|b| b.try_into().ok()).map(u32::from_ne_bytes);
    let u64_at = |at: usize| bytes.get(at..at + 8).and_then(|b| b.try_into().ok()).map(u64::from_ne_bytes);
    let start = u64_at(bsdinfo::START_SEC)?.saturating_mul(1_000_000).saturating_add(u64_at(bsdinfo::START_USEC)?);
    Some(Entry {
        pid,
        ppid: u32_at(bsdinfo::PPID)? as i32,
        pgrp: u32_at(bsdinfo::PGID)? as i32,
        start,
        zombie: u32_at(bsdinfo::STATUS)? == bsdinfo::ZOMBIE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_stat_line_whose_name_holds_parentheses_and_spaces() {
        let line = "4242 (we (ird) name) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2 3";
        assert_eq!(
            parse_stat(4242, line),
            Some(Entry { pid: 4242, ppid: 17, pgrp: 4242, start: 987654, zombie: false })
        );
        let zombie = "7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0";
        assert!(parse_stat(7, zombie).unwrap().zombie);
        assert_eq!(parse_stat(7, "7 (sh) S 1"), None);
    }

    #[test]
    fn finds_the_environment_in_procargs2() {
        // argc 2, the executable path, padding, two arguments, two variables, the terminator.
        let mut buf = 2i32.to_ne_bytes().to_vec();
        buf.extend_from_slice(b"/usr/bin/codex\0\0\0\0codex\0app-server\0A=1\0RENNET_CODEX_TREE=h-1\0\0junk\0");
        let env: Vec<&[u8]> = environ_entries(&buf, EnvironLayout::ProcArgs2).collect();
        assert_eq!(env, [b"A=1".as_slice(), b"RENNET_CODEX_TREE=h-1".as_slice()]);
        // Truncated or empty buffers yield nothing, never a panic.
        assert_eq!(environ_entries(&buf[..3], EnvironLayout::ProcArgs2).count(), 0);
        assert_eq!(environ_entries(&buf[..20], EnvironLayout::ProcArgs2).count(), 0);
        let mut no_env = 1i32.to_ne_bytes().to_vec();
        no_env.extend_from_slice(b"/bin/sh\0sh\0");
        assert_eq!(environ_entries(&no_env, EnvironLayout::ProcArgs2).count(), 0);
    }

    #[test]
    fn splits_a_plain_environment() {
        let env: Vec<&[u8]> = environ_entries(b"A=1\0B=2\0", EnvironLayout::Plain).collect();
        assert_eq!(env, [b"A=1".as_slice(), b"B=2".as_slice()]);
    }

    /// A `proc_bsdinfo` as macOS writes it, field by field at the offsets of `<sys/proc_info.h>`
    /// (written out here, not taken from `bsdinfo`).
    fn bsdinfo_fixture(status: u32, start_sec: u64, start_usec: u64) -> Vec<u8> {
        let mut b = vec![0u8; 136];
        let mut put32 = |at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        put32(0, 0x4001); // pbi_flags
        put32(4, status); // pbi_status
        put32(12, 4242); // pbi_pid
        put32(16, 4200); // pbi_ppid
        for (at, id) in [(20, 501), (24, 20), (28, 501), (32, 20), (36, 501), (40, 20)] {
            put32(at, id); // uid, gid, ruid, rgid, svuid, svgid
        }
        put32(96, 12); // pbi_nfiles
        put32(100, 4100); // pbi_pgid
        put32(108, u32::MAX); // e_tdev: none
        b[48..53].copy_from_slice(b"codex"); // pbi_comm
        b[64..69].copy_from_slice(b"codex"); // pbi_name
        b[120..128].copy_from_slice(&start_sec.to_ne_bytes());
        b[128..136].copy_from_slice(&start_usec.to_ne_bytes());
        b
    }

    #[test]
    fn reads_a_bsdinfo_with_its_start_in_microseconds() {
        let running = bsdinfo_fixture(2, 1_700_000_000, 123_456);
        assert_eq!(
            parse_bsdinfo(4242, &running),
            Some(Entry { pid: 4242, ppid: 4200, pgrp: 4100, start: 1_700_000_000_123_456, zombie: false })
        );
        assert!(parse_bsdinfo(4242, &bsdinfo_fixture(5, 1, 0)).unwrap().zombie);
        // The same second, a later microsecond: another process.
        let later = parse_bsdinfo(4242, &bsdinfo_fixture(2, 1_700_000_000, 123_457)).unwrap();
        assert_ne!(later.start, parse_bsdinfo(4242, &running).unwrap().start);
        // proc_pidinfo wrote less than the whole struct (the process went meanwhile): nothing.
        assert_eq!(parse_bsdinfo(4242, &running[..running.len() - 1]), None);
        assert_eq!(parse_bsdinfo(4242, &[]), None);
    }

    #[test]
    #[cfg_attr(
        not(any(target_os = "linux", target_os = "macos")),
        ignore = "no process table is read on this platform"
    )]
    fn sees_this_process() {
        let me = std::process::id() as i32;
        let entry = entry(me).expect("this process is in the table");
        assert!(!entry.zombie);
        assert!(snapshot().iter().any(|e| e == &entry));
        assert!(environ_matches(me, &|e| e.starts_with(b"PATH=")) || std::env::var_os("PATH").is_none());
        assert!(!environ_matches(me, &|_| false));
    }
}
