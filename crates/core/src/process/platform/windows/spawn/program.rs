//! What the child runs: the file its program names, found as the standard library finds it
//! (`cmd.exe` for a batch file), and its environment block, its names compared as Windows
//! compares them.

use super::win32::nul_terminated;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use windows::Win32::Globalization::{CompareStringOrdinal, CSTR_EQUAL, CSTR_LESS_THAN};
use windows::Win32::System::SystemInformation::{GetSystemDirectoryW, GetWindowsDirectoryW};

/// The file `program` names, as the standard library finds it: a path as it is (with `.exe`
/// added when that file exists and no extension was given), a file name in the child's `PATH`,
/// the host's own directory, the system directories, then the host's `PATH`.
pub(super) fn resolve(program: &Path, child_path: Option<&OsStr>) -> io::Result<PathBuf> {
    let text = program.as_os_str().to_string_lossy();
    if text.is_empty() || text.ends_with(['/', '\\']) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "the program path has no file name"));
    }
    let is_file_name = !text.contains(['/', '\\', ':']);
    if !is_file_name {
        if has_extension(program, "exe") {
            return Ok(program.to_path_buf());
        }
        let mut with_exe = program.as_os_str().to_owned();
        with_exe.push(".exe");
        let with_exe = PathBuf::from(with_exe);
        return Ok(if exists(&with_exe) { with_exe } else { program.to_path_buf() });
    }
    let name = if text.contains('.') { program.to_path_buf() } else { program.with_extension("exe") };
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(paths) = child_path {
        dirs.extend(std::env::split_paths(paths));
    }
    if let Some(own) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)) {
        dirs.push(own);
    }
    dirs.extend(system_directory(GetSystemDirectoryW));
    dirs.extend(system_directory(GetWindowsDirectoryW));
    if let Some(paths) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&paths));
    }
    dirs.into_iter()
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(&name))
        .find(|candidate| exists(candidate))
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("program not found: {}", program.display())))
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case(extension))
}

pub(super) fn is_batch_file(path: &Path) -> bool {
    has_extension(path, "bat") || has_extension(path, "cmd")
}

fn system_directory(get: unsafe fn(Option<&mut [u16]>) -> u32) -> Option<PathBuf> {
    let mut buffer = vec![0u16; 1024];
    // SAFETY: the buffer's length is passed with it.
    let len = unsafe { get(Some(&mut buffer)) } as usize;
    if len == 0 || len > buffer.len() {
        return None;
    }
    use std::os::windows::ffi::OsStringExt;
    Some(PathBuf::from(OsString::from_wide(&buffer[..len])))
}

/// `cmd.exe` of the system directory, which runs batch files.
pub(super) fn command_prompt() -> io::Result<Vec<u16>> {
    let dir = system_directory(GetSystemDirectoryW).ok_or_else(io::Error::last_os_error)?;
    nul_terminated(dir.join("cmd.exe").as_os_str())
}

/// Whether two variable names are the same to Windows (case-insensitive, ordinal).
pub(super) fn key_eq(a: &OsStr, b: &OsStr) -> bool {
    key_order(a, b) == std::cmp::Ordering::Equal
}

fn key_order(a: &OsStr, b: &OsStr) -> std::cmp::Ordering {
    let (a, b): (Vec<u16>, Vec<u16>) = (a.encode_wide().collect(), b.encode_wide().collect());
    // SAFETY: two slices with their lengths.
    match unsafe { CompareStringOrdinal(&a, &b, true) } {
        CSTR_LESS_THAN => std::cmp::Ordering::Less,
        CSTR_EQUAL => std::cmp::Ordering::Equal,
        _ => std::cmp::Ordering::Greater,
    }
}

/// The child's variables: `set` over the host's (or over none), sorted as Windows keeps them.
pub(super) fn environment(clear: bool, set: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> = if clear { Vec::new() } else { std::env::vars_os().collect() };
    for (key, value) in set {
        // A variable already there keeps the name it had, as the standard library keeps it.
        match vars.iter_mut().find(|(k, _)| key_eq(k, key)) {
            Some((_, v)) => *v = value.clone(),
            None => vars.push((key.clone(), value.clone())),
        }
    }
    vars.sort_by(|(a, _), (b, _)| key_order(a, b));
    vars
}

/// `NAME=value\0…\0` in UTF-16.
pub(super) fn environment_block(vars: &[(OsString, OsString)]) -> io::Result<Vec<u16>> {
    let mut block = Vec::new();
    for (key, value) in vars {
        let entry: Vec<u16> = key.encode_wide().chain([b'=' as u16]).chain(value.encode_wide()).collect();
        if entry.contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an environment variable contains a NUL character",
            ));
        }
        block.extend(entry);
        block.push(0);
    }
    if block.is_empty() {
        block.push(0);
    }
    block.push(0);
    Ok(block)
}
