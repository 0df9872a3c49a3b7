//! Everything the process module does differently on each system, chosen once, at the `mod`
//! lines below (as process-wrap does): the rest of the module is written against the items
//! re-exported here and has no `cfg` of its own.
//!
//! Every system provides the same items:
//!
//! - how a child is started and ended: `spawn` (its group or session and the child subreaper
//!   on Unix; on Windows its Job Object and exactly its three stdio handles), `terminate` and
//!   `terminate_now`, `raw_fd` (its stdin for the guard);
//! - signals for a tree: `signal_group`, `signal_process`, `group_exists`;
//! - the process table: `TABLE`, `snapshot`, `entry`, `environ` and `ENVIRON_LAYOUT` (the OS
//!   queries only: what they return is parsed in [`super::table`], on every system);
//! - what keeps orphans in sight ([`super::tracking`]): `SUBREAPER`, `make_subreaper`;
//! - the host-death guard: `GUARD_NEEDED`, `start_guard` and `GuardLink`;
//! - small facts: `is_executable`, `exit_signal`, `signal_name`, `cannot_run`.
//!
//! Unix (`unix.rs`) shares groups, signals and the guard; its process table and subreaper come
//! from the system's own file (Linux: `/proc` and `PR_SET_CHILD_SUBREAPER`; macOS:
//! `proc_listallpids`, `proc_pidinfo`, `KERN_PROCARGS2`; any other Unix: none, as on Windows, in `no_table.rs`).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub use macos::*;

#[cfg(all(unix, not(any(target_os = "linux", target_os = "macos"))))]
mod unix_other;
#[cfg(all(unix, not(any(target_os = "linux", target_os = "macos"))))]
pub use unix_other::*;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod no_table;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub use no_table::*;
