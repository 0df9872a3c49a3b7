//! The guard on Unix: `rennet-codex-guard <host marker>`, started by the addon with one end of
//! a Unix socket as its stdin.

use crate::{detach, serve};

const USAGE: &str = "usage: rennet-codex-guard <host marker> (started by @rennet/codex, not by hand)";

/// Runs the guard; its exit code.
pub fn main(args: Vec<String>) -> i32 {
    let Some(host) = args.first().filter(|h| !h.is_empty()) else {
        eprintln!("{USAGE}");
        return 2;
    };
    detach::detach();
    // SAFETY: the host gives the guard one end of a Unix socket as its stdin, which nothing
    // else in this process uses.
    let control = unsafe { <std::os::unix::net::UnixStream as std::os::fd::FromRawFd>::from_raw_fd(0) };
    serve::serve(control, host);
    0
}
