//! Snapshots of the system's process table: for each process its parent, group, start time and
//! whether it is a zombie, and what its environment holds.
//!
//! Linux reads `/proc`; macOS asks the kernel (`proc_listallpids`, `proc_pidinfo` and the
//! `KERN_PROCARGS2` sysctl, which returns the environment of a process of the same user). Other
//! platforms have no table: [`snapshot`] is empty and only process groups can be signalled.

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

/// Whether this platform has a process table (and so descendants and markers can be found).
pub const SUPPORTED: bool = cfg!(any(target_os = "linux", target_os = "macos"));

/// Every process, as the platform reports it.
pub fn snapshot() -> Vec<Entry> {
    imp::snapshot()
}

/// One process, if it exists.
pub fn entry(pid: i32) -> Option<Entry> {
    imp::entry(pid)
}

/// Whether the environment `pid` started with holds an entry for which `matches` is true.
/// Processes of other users (whose environment cannot be read) never match.
pub fn environ_matches(pid: i32, matches: &dyn Fn(&[u8]) -> bool) -> bool {
    imp::environ(pid).is_some_and(|environ| env_entries(&environ, imp::ENVIRON_LAYOUT).any(matches))
}

/// How the environment bytes of a process are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EnvironLayout {
    /// `NAME=value\0NAME=value\0…` (Linux's `/proc/<pid>/environ`).
    #[cfg_attr(target_os = "macos", allow(dead_code))]
    Plain,
    /// macOS `KERN_PROCARGS2` (read on every platform by the tests): argc (a native-endian i32), the executable path, padding NULs,
    /// argc arguments, then the environment, each NUL-terminated, until an empty string.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    ProcArgs2,
}

/// The environment entries in `bytes`.
fn env_entries(bytes: &[u8], layout: EnvironLayout) -> Box<dyn Iterator<Item = &[u8]> + '_> {
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

/// One line of `/proc/<pid>/stat`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_stat(pid: i32, stat: &str) -> Option<Entry> {
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

#[cfg(target_os = "linux")]
mod imp {
    use super::{parse_stat, Entry, EnvironLayout};

    pub const ENVIRON_LAYOUT: EnvironLayout = EnvironLayout::Plain;

    pub fn snapshot() -> Vec<Entry> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
            .filter_map(entry)
            .collect()
    }

    pub fn entry(pid: i32) -> Option<Entry> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        parse_stat(pid, &stat)
    }

    pub fn environ(pid: i32) -> Option<Vec<u8>> {
        std::fs::read(format!("/proc/{pid}/environ")).ok()
    }
}

#[cfg(target_os = "macos")]
mod imp {
    use super::{Entry, EnvironLayout};
    use std::mem::{size_of, MaybeUninit};

    pub const ENVIRON_LAYOUT: EnvironLayout = EnvironLayout::ProcArgs2;

    pub fn snapshot() -> Vec<Entry> {
        // SAFETY: a null buffer asks for the number of pids.
        let count = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
        if count <= 0 {
            return Vec::new();
        }
        // Room for processes started between the two calls.
        let mut pids = vec![0 as libc::pid_t; count as usize + 64];
        let bytes = (pids.len() * size_of::<libc::pid_t>()) as libc::c_int;
        // SAFETY: the buffer holds `bytes` bytes; the call writes at most that many.
        let filled = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
        if filled <= 0 {
            return Vec::new();
        }
        pids.truncate(filled as usize);
        pids.into_iter().filter(|&pid| pid > 0).filter_map(entry).collect()
    }

    pub fn entry(pid: i32) -> Option<Entry> {
        let mut info = MaybeUninit::<libc::proc_bsdinfo>::zeroed();
        let size = size_of::<libc::proc_bsdinfo>() as libc::c_int;
        // SAFETY: the buffer is a proc_bsdinfo of `size` bytes, as PROC_PIDTBSDINFO expects.
        let got = unsafe { libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, info.as_mut_ptr().cast(), size) };
        if got != size {
            return None;
        }
        // SAFETY: fully written, as checked above.
        let info = unsafe { info.assume_init() };
        Some(Entry {
            pid,
            ppid: info.pbi_ppid as i32,
            pgrp: info.pbi_pgid as i32,
            start: info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec,
            zombie: info.pbi_status == libc::SZOMB,
        })
    }

    pub fn environ(pid: i32) -> Option<Vec<u8>> {
        let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
        let mut size: libc::size_t = 0;
        // SAFETY: a null buffer asks for the size.
        let rc = unsafe { libc::sysctl(mib.as_mut_ptr(), 3, std::ptr::null_mut(), &mut size, std::ptr::null_mut(), 0) };
        if rc != 0 || size == 0 {
            return None;
        }
        let mut buf = vec![0u8; size];
        // SAFETY: the buffer holds `size` bytes; the kernel writes at most that many and says how many.
        let rc =
            unsafe { libc::sysctl(mib.as_mut_ptr(), 3, buf.as_mut_ptr().cast(), &mut size, std::ptr::null_mut(), 0) };
        if rc != 0 {
            return None;
        }
        buf.truncate(size);
        Some(buf)
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod imp {
    use super::{Entry, EnvironLayout};

    pub const ENVIRON_LAYOUT: EnvironLayout = EnvironLayout::Plain;

    pub fn snapshot() -> Vec<Entry> {
        Vec::new()
    }

    pub fn entry(_pid: i32) -> Option<Entry> {
        None
    }

    pub fn environ(_pid: i32) -> Option<Vec<u8>> {
        None
    }
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
        let env: Vec<&[u8]> = env_entries(&buf, EnvironLayout::ProcArgs2).collect();
        assert_eq!(env, [b"A=1".as_slice(), b"RENNET_CODEX_TREE=h-1".as_slice()]);
        // Truncated or empty buffers yield nothing, never a panic.
        assert_eq!(env_entries(&buf[..3], EnvironLayout::ProcArgs2).count(), 0);
        assert_eq!(env_entries(&buf[..20], EnvironLayout::ProcArgs2).count(), 0);
        let mut no_env = 1i32.to_ne_bytes().to_vec();
        no_env.extend_from_slice(b"/bin/sh\0sh\0");
        assert_eq!(env_entries(&no_env, EnvironLayout::ProcArgs2).count(), 0);
    }

    #[test]
    fn splits_a_plain_environment() {
        let env: Vec<&[u8]> = env_entries(b"A=1\0B=2\0", EnvironLayout::Plain).collect();
        assert_eq!(env, [b"A=1".as_slice(), b"B=2".as_slice()]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn sees_this_process() {
        let me = std::process::id() as i32;
        let entry = entry(me).expect("this process is in the table");
        assert!(!entry.zombie);
        assert!(snapshot().iter().any(|e| e == &entry));
        assert!(environ_matches(me, &|e| e.starts_with(b"PATH=")) || std::env::var_os("PATH").is_none());
        assert!(!environ_matches(me, &|_| false));
    }
}
