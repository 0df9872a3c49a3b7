//! Discovery on this machine (`Machine::Local`): the facts about candidate files, read from
//! the file system, and the commands on this machine's PATH.
//!
//! Two lookups, on purpose. A command this machine is to run (`node` for a launcher,
//! `wsl.exe`) is found as the platform finds it, by the `which` crate. The candidates are not
//! looked up but listed: every file named `codex` in each directory, including those that
//! cannot run (not executable, a directory, a dangling link), so that the report can say why
//! each was rejected; `which` would hide exactly those. On Windows which file a directory
//! holds under that name follows [`pathext`], from the caller's environment.

use super::env::{Env, Os};
use super::file::{FileInfo, FileState, Request};
use super::locations;
use super::pathext;
use crate::process::is_executable;
use std::path::Path;

/// Finds a command on the PATH here (`node`, or a shebang's `env` command) the way this
/// platform does, through the `which` crate: the first executable file of that name. The PATH
/// is the caller's (`env`, merged over the process's), without its relative entries, as
/// everywhere in discovery. On Windows only a `.exe` counts (`node` means `node.exe`): what is
/// found here is started without a shell.
pub fn resolve(os: Os, env: &Env, command: &str) -> Option<String> {
    let dirs = env.path_dirs(os);
    // An empty list would make `which` look in the working directory.
    if dirs.is_empty() {
        return None;
    }
    let name = if os.is_windows() && !command.to_ascii_lowercase().ends_with(".exe") {
        format!("{command}.exe")
    } else {
        command.to_string()
    };
    which::WhichConfig::new()
        .binary_name(name.into())
        .custom_path_list(std::env::join_paths(&dirs).ok()?)
        .system_cwd(false)
        .first_result()
        .ok()
        .map(|found| found.to_string_lossy().into_owned())
}

/// Whether an absolute interpreter path exists here.
pub fn exists(path: &str) -> bool {
    Path::new(path).is_file()
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A directory of the test's own, removed afterwards.
    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let dir = std::env::temp_dir().join(format!("rennet-local-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Dir(dir)
        }

        fn path(&self, rel: &str) -> String {
            self.0.join(rel).to_string_lossy().into_owned()
        }

        /// A file at `rel`, executable or not (Unix; Windows has no such bit).
        fn file(&self, rel: &str, executable: bool) -> String {
            let path = self.0.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = if executable { 0o755 } else { 0o644 };
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            }
            #[cfg(not(unix))]
            let _ = executable;
            path.to_string_lossy().into_owned()
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_command_is_the_first_executable_file_on_the_callers_path() {
        let d = Dir::new("resolve");
        d.file("a/node", false);
        std::fs::create_dir_all(d.path("b/node")).unwrap();
        let node = d.file("c/node", true);
        d.file("d/node", true);
        let path = ["a", "b", "c", "d"].map(|dir| d.path(dir)).join(":");
        let env = Env::from_pairs([("PATH", path)], Os::Unix);
        assert_eq!(resolve(Os::Unix, &env, "node"), Some(node));
        assert_eq!(resolve(Os::Unix, &env, "nodejs"), None);
        // A relative entry is left out, even one that names the directory of an executable node.
        let up = "../".repeat(std::env::current_dir().unwrap().components().count());
        let relative = format!("{up}{}", d.path("c").trim_start_matches('/'));
        assert!(Path::new(&relative).join("node").is_file(), "{relative} does not reach the file");
        assert_eq!(resolve(Os::Unix, &Env::from_pairs([("PATH", relative)], Os::Unix), "node"), None);
        assert_eq!(resolve(Os::Unix, &Env::from_pairs(Vec::<(String, String)>::new(), Os::Unix), "node"), None);
    }

    #[cfg(windows)]
    #[test]
    fn a_command_is_its_exe_on_windows() {
        let d = Dir::new("resolve-windows");
        d.file("a\\node.cmd", true);
        let exe = d.file("b\\node.exe", true);
        let env = Env::from_pairs([("Path", format!("{};{}", d.path("a"), d.path("b")))], Os::Windows);
        assert_eq!(resolve(Os::Windows, &env, "node"), Some(exe.clone()));
        assert_eq!(resolve(Os::Windows, &env, "node.exe"), Some(exe));
        // A batch file is never the answer: it would need a shell.
        let env = Env::from_pairs([("Path", d.path("a"))], Os::Windows);
        assert_eq!(resolve(Os::Windows, &env, "node"), None);
    }
}
