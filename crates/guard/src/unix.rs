//! The guard on Unix: `rennet-codex-guard <host marker> subreaper|poll`, started by the addon
//! with one end of a Unix socket as its stdin and an empty environment: the second argument
//! says how the host's children keep their orphans in sight
//! (`rennet_codex::process::tracking`).

use crate::{detach, serve};
use rennet_codex::process::tracking::Tracking;

const USAGE: &str = "usage: rennet-codex-guard <host marker> subreaper|poll (started by @rennet/codex, not by hand)";

/// Runs the guard; its exit code.
pub fn main(args: Vec<String>) -> i32 {
    let (Some(host), Some(tracking), None) =
        (args.first().filter(|h| !h.is_empty()), args.get(1).and_then(|word| Tracking::from_word(word)), args.get(2))
    else {
        eprintln!("{USAGE}");
        return 2;
    };
    detach::detach();
    // SAFETY: the host gives the guard one end of a Unix socket as its stdin, which nothing
    // else in this process uses.
    let control = unsafe { <std::os::unix::net::UnixStream as std::os::fd::FromRawFd>::from_raw_fd(0) };
    serve::serve(control, host, tracking);
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_marker_and_a_known_way_of_tracking_are_required() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Each returns before the guard detaches or reads anything.
        for wrong in [&[][..], &["1-2"], &["", "poll"], &["1-2", "sometimes"], &["1-2", "poll", "more"]] {
            assert_eq!(main(args(wrong)), 2, "{wrong:?}");
        }
    }
}
