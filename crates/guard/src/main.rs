//! `rennet-codex-guard <host marker>`: started by the addon with a Unix socket on stdin; see
//! `rennet_codex::process::guard` for what it does and why.

#[cfg(unix)]
fn main() {
    let Some(host) = std::env::args().nth(1).filter(|h| !h.is_empty()) else {
        eprintln!("usage: rennet-codex-guard <host marker> (started by @rennet/codex, not by hand)");
        std::process::exit(2);
    };
    rennet_codex::process::guard::detach();
    // SAFETY: the host gives the guard one end of a Unix socket as its stdin, which nothing
    // else in this process uses.
    let control = unsafe { <std::os::unix::net::UnixStream as std::os::fd::FromRawFd>::from_raw_fd(0) };
    rennet_codex::process::guard::serve(control, &host);
}

/// Windows needs no guard: a turn's children are in Job Objects that end with their host.
#[cfg(not(unix))]
fn main() {
    eprintln!("rennet-codex-guard is not used on this platform");
    std::process::exit(2);
}
