//! Discovery on this machine (`Machine::Local`): the facts about candidate files, read from
//! the file system, and the commands on this machine's PATH.

use super::env::{Env, Os};
use super::file::{FileInfo, FileState};
use super::locations;
use super::machine::{MachineEnv, Request};
use super::pathext;
use crate::process::is_executable;
use std::path::Path;

/// The environment here: the one this process was given (merged over its own).
pub fn environment(os: Os, env: &Env) -> MachineEnv {
    MachineEnv { env: env.clone(), node_on_path: resolve(os, env, "node") }
}

/// Finds a command on the PATH here (`node`, or a shebang's `env` command).
pub fn resolve(os: Os, env: &Env, command: &str) -> Option<String> {
    if os.is_windows() {
        resolve_windows(env, command)
    } else {
        resolve_unix(env, command)
    }
}

/// Whether an absolute interpreter path exists here.
pub fn exists(path: &str) -> bool {
    Path::new(path).is_file()
}

fn resolve_unix(env: &Env, command: &str) -> Option<String> {
    env.path_dirs(Os::Unix)
        .iter()
        .map(|dir| Os::Unix.join(dir, command))
        .find(|p| std::fs::metadata(p).map(|m| m.is_file() && is_executable(&m)).unwrap_or(false))
}

fn resolve_windows(env: &Env, command: &str) -> Option<String> {
    let exe = [".exe".to_string()];
    let is_file = |p: &str| Path::new(p).is_file();
    env.path_dirs(Os::Windows).iter().find_map(|dir| pathext::windows_lookup(dir, command, &exe, &is_file))
}

/// The facts about every file the requests name, each with its request's index.
pub fn examine(os: Os, env: &Env, requests: &[Request]) -> Vec<(usize, FileInfo)> {
    let pathext = os.is_windows().then(|| pathext::windows_extensions(env.get("PATHEXT")));
    let mut out = Vec::new();
    for (index, request) in requests.iter().enumerate() {
        match request {
            Request::File(path) => out.push((index, file_info(os, path))),
            Request::OptionalFile(path) => {
                if std::fs::symlink_metadata(path).is_ok() {
                    out.push((index, file_info(os, path)));
                }
            }
            Request::Dir(pattern) => {
                for dir in expand(os, pattern) {
                    let found = match &pathext {
                        Some(exts) => {
                            pathext::windows_lookup(&dir, locations::CODEX, exts, &|p| Path::new(p).is_file())
                        }
                        None => {
                            let path = os.join(&dir, locations::CODEX);
                            std::fs::symlink_metadata(&path).is_ok().then_some(path)
                        }
                    };
                    if let Some(path) = found {
                        out.push((index, file_info(os, &path)));
                    }
                }
            }
        }
    }
    out
}

/// The directories a pattern with `*` components matches (the pattern itself otherwise).
fn expand(os: Os, pattern: &str) -> Vec<String> {
    let sep = if os.is_windows() { '\\' } else { '/' };
    let marker = format!("{sep}*{sep}");
    let Some(at) = pattern.find(&marker) else {
        return vec![pattern.to_string()];
    };
    let (base, rest) = (&pattern[..at], &pattern[at + marker.len()..]);
    let Ok(entries) = std::fs::read_dir(if base.is_empty() { "/" } else { base }) else {
        return Vec::new();
    };
    let mut names: Vec<String> =
        entries.flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names.into_iter().flat_map(|name| expand(os, &os.join(&os.join(base, &name), rest))).collect()
}

fn file_info(os: Os, path: &str) -> FileInfo {
    let meta = std::fs::metadata(path);
    let state = match &meta {
        Err(_) => FileState::Missing,
        Ok(m) if !m.is_file() => FileState::NotFile,
        Ok(m) => FileState::File { executable: is_executable(m) },
    };
    let canonical = std::fs::canonicalize(path).ok().map(|c| {
        let text = c.to_string_lossy().into_owned();
        // Windows canonical paths are verbatim (`\\?\C:\…`); the plain form is what users see.
        match text.strip_prefix("\\\\?\\") {
            Some(rest) if !rest.starts_with("UNC\\") => rest.to_string(),
            _ => text,
        }
    });
    let head = if matches!(state, FileState::File { .. }) { read_head(path, os) } else { String::new() };
    let node_beside = if os.is_windows() {
        os.parent(path).map(|dir| os.join(&dir, "node.exe")).filter(|p| Path::new(p).is_file())
    } else {
        [Some(path), canonical.as_deref()]
            .into_iter()
            .flatten()
            .filter_map(|p| os.parent(p))
            .map(|dir| os.join(&dir, "node"))
            .find(|p| std::fs::metadata(p).map(|m| m.is_file() && is_executable(&m)).unwrap_or(false))
    };
    FileInfo { path: path.to_string(), state, canonical, head, node_beside }
}

/// The first line of a Unix file (a `#!` line at most), or the start of a Windows shim.
fn read_head(path: &str, os: Os) -> String {
    use std::io::Read;
    let limit = if os.is_windows() { 8192 } else { 256 };
    let mut buf = Vec::with_capacity(limit);
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(limit as u64).read_to_end(&mut buf);
    }
    if !os.is_windows() {
        if let Some(end) = buf.iter().position(|&b| b == b'\n') {
            buf.truncate(end);
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}
