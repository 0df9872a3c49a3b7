//! What every call of the start takes or gives: NUL-terminated UTF-16, raw handles, and a
//! Windows error as an `io::Error`.

use std::ffi::OsStr;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use windows::Win32::Foundation::HANDLE;

pub(super) fn nul_terminated(text: &OsStr) -> io::Result<Vec<u16>> {
    let mut wide: Vec<u16> = text.encode_wide().collect();
    if wide.contains(&0) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a name contains a NUL character"));
    }
    wide.push(0);
    Ok(wide)
}

pub(super) fn raw(handle: &OwnedHandle) -> HANDLE {
    HANDLE(handle.as_raw_handle())
}

/// A Windows error as the `io::Error` of its code, so that its kind (`NotFound` …) is known.
pub(super) fn os_error(error: windows::core::Error) -> io::Error {
    let code = error.code().0 as u32;
    if code & 0xFFFF_0000 == 0x8007_0000 {
        io::Error::from_raw_os_error((code & 0xFFFF) as i32)
    } else {
        io::Error::other(error)
    }
}
