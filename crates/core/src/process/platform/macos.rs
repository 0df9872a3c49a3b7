//! macOS: the process table comes from the kernel (`proc_listallpids`, `proc_pidinfo` and the
//! `KERN_PROCARGS2` sysctl, which returns the arguments and environment of a process of the
//! same user). There is no child subreaper: an orphan goes to launchd at once.
//!
//! These calls cannot run anywhere but on macOS, so they are kept to the calls themselves:
//! each hands back the kernel's bytes, and `table` parses them (the `proc_bsdinfo` fields, the
//! start time, the `KERN_PROCARGS2` layout) with functions that every platform compiles and
//! tests on byte fixtures. The layout `table` reads is checked against libc's `proc_bsdinfo`
//! below, when this file is compiled (`cargo clippy --target *-apple-darwin` in CI).

use super::super::table::{self, bsdinfo, Entry, EnvironLayout};
use process_wrap::tokio::CommandWrap;
use std::mem::{offset_of, size_of};

pub const TABLE: bool = true;
/// No child subreaper: descendants are tracked by looking (`tracking`).
pub const SUBREAPER: bool = false;
pub const ENVIRON_LAYOUT: EnvironLayout = EnvironLayout::ProcArgs2;

// What `table::parse_bsdinfo` assumes of `struct proc_bsdinfo`.
const _: () = {
    assert!(size_of::<libc::proc_bsdinfo>() == bsdinfo::SIZE);
    assert!(offset_of!(libc::proc_bsdinfo, pbi_status) == bsdinfo::STATUS);
    assert!(offset_of!(libc::proc_bsdinfo, pbi_ppid) == bsdinfo::PPID);
    assert!(offset_of!(libc::proc_bsdinfo, pbi_pgid) == bsdinfo::PGID);
    assert!(offset_of!(libc::proc_bsdinfo, pbi_start_tvsec) == bsdinfo::START_SEC);
    assert!(offset_of!(libc::proc_bsdinfo, pbi_start_tvusec) == bsdinfo::START_USEC);
    assert!(libc::SZOMB == bsdinfo::ZOMBIE);
};

pub fn snapshot() -> Vec<Entry> {
    pids().into_iter().filter(|&pid| pid > 0).filter_map(entry).collect()
}

/// Every pid (`proc_listallpids`).
fn pids() -> Vec<i32> {
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
    pids.truncate(filled.max(0) as usize);
    pids
}

pub fn entry(pid: i32) -> Option<Entry> {
    let mut info = [0u8; bsdinfo::SIZE];
    // SAFETY: the buffer has room for a proc_bsdinfo, as PROC_PIDTBSDINFO writes (checked
    // above); the call says how many bytes it wrote.
    let got = unsafe {
        libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, info.as_mut_ptr().cast(), bsdinfo::SIZE as libc::c_int)
    };
    table::parse_bsdinfo(pid, &info[..got.max(0) as usize])
}

/// The `KERN_PROCARGS2` bytes of `pid` (argc, the executable, the arguments, the environment).
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
    let rc = unsafe { libc::sysctl(mib.as_mut_ptr(), 3, buf.as_mut_ptr().cast(), &mut size, std::ptr::null_mut(), 0) };
    if rc != 0 {
        return None;
    }
    buf.truncate(size);
    Some(buf)
}

/// Never asked for here ([`SUBREAPER`] is false, so `Tracking::current` is the poll): macOS
/// has no child subreaper, and nothing is added to the command.
pub fn make_subreaper(_command: &mut CommandWrap) {}
