//! The guard process readied at its start: a session of its own (no terminal's signals reach
//! it), no descriptor of the host's but its stdin, and no death by a write to a closed pipe.

pub fn detach() {
    // SAFETY: plain syscalls at the start of a single-threaded process.
    unsafe {
        libc::setsid();
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    if !close_all_from(3) {
        // SAFETY: as above.
        let max = match unsafe { libc::sysconf(libc::_SC_OPEN_MAX) } {
            n if n > 0 => n.min(65536) as i32,
            _ => 1024,
        };
        for fd in 3..max {
            // SAFETY: nothing of this process uses a descriptor above 2 yet.
            unsafe { libc::close(fd) };
        }
    }
}

/// Closes every descriptor from `first` on in one call, where the system has one (Linux's
/// `close_range`); whether it did.
#[cfg(target_os = "linux")]
fn close_all_from(first: u32) -> bool {
    // SAFETY: a plain syscall; nothing of this process uses those descriptors yet.
    unsafe { libc::syscall(libc::SYS_close_range, first, u32::MAX, 0u32) == 0 }
}

/// Elsewhere the descriptors are closed one by one.
#[cfg(not(target_os = "linux"))]
fn close_all_from(_first: u32) -> bool {
    false
}
