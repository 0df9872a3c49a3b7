//! The child's stdio: a named pipe per stream (tokio's end overlapped, the child's synchronous)
//! and `NUL` for a stdin that reads nothing. None of them inheritable.

use super::win32::{nul_terminated, os_error};
use std::ffi::OsStr;
use std::io;
use std::os::windows::io::{FromRawHandle, OwnedHandle};
use std::sync::atomic::{AtomicU32, Ordering};
use windows::core::PCWSTR;
use windows::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_PIPE_BUSY, GENERIC_READ, GENERIC_WRITE, INVALID_HANDLE_VALUE,
};
use windows::Win32::Storage::FileSystem::{
    CreateFileW, FILE_FLAGS_AND_ATTRIBUTES, FILE_FLAG_FIRST_PIPE_INSTANCE, FILE_FLAG_OVERLAPPED, FILE_READ_ATTRIBUTES,
    FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING, PIPE_ACCESS_INBOUND, PIPE_ACCESS_OUTBOUND,
};
use windows::Win32::System::Pipes::{
    CreateNamedPipeW, PIPE_READMODE_BYTE, PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE, PIPE_WAIT,
};

/// A pipe for one of the child's stdio streams: `ours` for tokio (overlapped, as the standard
/// library's own child pipes are), `theirs` for the child (synchronous).
pub(super) struct Pipe {
    pub(super) ours: OwnedHandle,
    pub(super) theirs: OwnedHandle,
}

/// Creates a pipe; `ours_readable`: the child writes (stdout, stderr), else it reads (stdin).
/// Neither end is inheritable.
pub(super) fn pipe(ours_readable: bool) -> io::Result<Pipe> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    const CAPACITY: u32 = 64 * 1024;
    let salt = {
        use std::hash::{BuildHasher, Hasher};
        std::collections::hash_map::RandomState::new().build_hasher().finish()
    };
    let access = if ours_readable { PIPE_ACCESS_INBOUND } else { PIPE_ACCESS_OUTBOUND };
    let mut tries = 0;
    let (ours, name) = loop {
        let name = format!(
            r"\\.\pipe\rennet-codex-{}-{}-{salt:016x}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let wide = nul_terminated(OsStr::new(&name))?;
        // SAFETY: a NUL-terminated name; no security attributes (not inheritable).
        let created = unsafe {
            CreateNamedPipeW(
                PCWSTR(wide.as_ptr()),
                access | FILE_FLAG_FIRST_PIPE_INSTANCE | FILE_FLAG_OVERLAPPED,
                PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
                1,
                CAPACITY,
                CAPACITY,
                0,
                None,
            )
        };
        if created != INVALID_HANDLE_VALUE && !created.is_invalid() {
            // SAFETY: a handle just created, ours to close.
            break (unsafe { OwnedHandle::from_raw_handle(created.0) }, wide);
        }
        let error = io::Error::last_os_error();
        let taken = [ERROR_ACCESS_DENIED.0, ERROR_PIPE_BUSY.0].map(|c| c as i32);
        tries += 1;
        if tries >= 10 || !taken.contains(&error.raw_os_error().unwrap_or(0)) {
            return Err(error);
        }
    };
    let theirs_access = if ours_readable { GENERIC_WRITE.0 | FILE_READ_ATTRIBUTES.0 } else { GENERIC_READ.0 };
    // SAFETY: the pipe's NUL-terminated name; no security attributes (not inheritable).
    let theirs = unsafe {
        CreateFileW(
            PCWSTR(name.as_ptr()),
            theirs_access,
            Default::default(),
            None,
            OPEN_EXISTING,
            FILE_FLAGS_AND_ATTRIBUTES(0),
            None,
        )
    }
    .map_err(os_error)?;
    // SAFETY: a handle just opened, ours to close.
    let theirs = unsafe { OwnedHandle::from_raw_handle(theirs.0) };
    Ok(Pipe { ours, theirs })
}

/// `NUL`, for a child's stdin that reads nothing. Not inheritable.
pub(super) fn null_device() -> io::Result<OwnedHandle> {
    let name = nul_terminated(OsStr::new(r"\\.\NUL"))?;
    // SAFETY: a NUL-terminated name; no security attributes (not inheritable).
    let handle = unsafe {
        CreateFileW(
            PCWSTR(name.as_ptr()),
            GENERIC_READ.0,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            None,
            OPEN_EXISTING,
            FILE_FLAGS_AND_ATTRIBUTES(0),
            None,
        )
    }
    .map_err(os_error)?;
    // SAFETY: a handle just opened, ours to close.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle.0) })
}
