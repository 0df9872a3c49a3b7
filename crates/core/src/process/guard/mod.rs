//! The host-death guard: a small process (`rennet-codex-guard`, crates/guard) that outlives
//! the host long enough to end everything the host's turns started when the host itself ends
//! without doing so — `SIGKILL`, a default `SIGTERM`/`SIGINT`, `process.exit()`, a crash.
//!
//! One guard runs while the host has children of this package, and none otherwise. The host
//! starts it (`rennet-codex-guard <host marker> subreaper|poll`: how the children keep their
//! orphans in sight, [`crate::process::tracking`]; its environment is empty) with a Unix socket
//! on its stdin and writes a line per child (`+<pid> <start> t|g`)
//! and per child ended (`-<pid>`), then `bye` when the last one is gone ([`wire`]). With a child
//! whose stdin is a pipe, the host also hands the guard a copy of the pipe's writing end
//! (`SCM_RIGHTS`, `fd_pass`), and takes it back (`=<pid>`) just before it closes its own: so
//! when the host dies, the child does not see end-of-file before the guard has looked at its
//! tree — a child that leaves on EOF (`codex app-server` does) would otherwise orphan its
//! descendants to init first.
//!
//! The kernel closes the socket when the host dies, however it dies: the guard reads
//! end-of-file without `bye`, notes every registered child's tree (its process group, its
//! descendants and, through the marker in their environment, everything carrying this host's
//! marker), lets the children go by closing their stdin, gives them a moment to leave by
//! themselves, then `SIGTERM`, then `SIGKILL`, and exits. Where the children are no
//! subreapers (`poll`), it also notes their descendants every 500 ms while the host lives. The guard sits in a session of its
//! own, so terminal signals meant for the host (Ctrl-C, a closed terminal) do not reach it.
//! Its loop is the guard crate's; this module is the host's side and what both sides share.
//!
//! Unix only: on Windows every child is in a Job Object that the kernel kills with the host's
//! last handle to it.
//!
//! A guarantee is never lost in silence: where the guard cannot be found or started, no child
//! starts ([`ticket`] fails with [`Unavailable`], naming where it looked), unless the caller
//! switched the guard off ([`SWITCH_VAR`]`=off`).
//!
//! - [`wire`]: the line protocol, spoken by the host and read by the guard;
//! - `fd_pass`: descriptors over the socket (Unix);
//! - `client`: the host's side — the one guard, its tickets, the lines it is sent, its status;
//! - `locate`: where the guard executable is, and whether it may run;
//! - `marker`: the environment marker every child carries;
//! - `unavailable`: why there is no guard, as a turn's failure.

mod client;
// Unix sockets carry descriptors only on Unix; the host's side reaches them through `platform`.
#[cfg(unix)]
pub mod fd_pass;
mod locate;
mod marker;
mod unavailable;
pub mod wire;

pub use client::{status, ticket, Status, StdinRelease, Ticket};
pub use locate::set_executable;
pub use marker::{child_marker, host_marker};
pub use unavailable::Unavailable;
pub use wire::Kind;

/// `off` runs turns without a guard; an absolute path names the guard executable to use; empty
/// is the same as unset (the guard beside the addon).
pub const SWITCH_VAR: &str = "RENNET_HOST_GUARD";
/// The guard executable's name in the platform package, next to the addon.
pub const EXECUTABLE_NAME: &str = "rennet-codex-guard";
