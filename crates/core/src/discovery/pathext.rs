//! Which file a command name means in a Windows directory: the first `PATHEXT` extension
//! whose file is there, among the extensions discovery can start without a shell. It names
//! the `codex` candidates of each directory (local.rs); a command this machine runs is found
//! by the `which` crate instead. Written out rather than taken from `which` because the
//! `PATHEXT` is the caller's (`env` merged over the process's; `which` reads the process's,
//! once) and because `.ps1`, `.js` or `.vbs` must never be chosen even where `PATHEXT` lists
//! them first. A rule over names and an `exists` question, unit-tested on Linux.

use super::env::Os;

/// The extensions a Windows candidate may have, in `PATHEXT` order, restricted to the ones
/// that can be started without a shell (`.exe`, `.com`) or through the Node behind an npm
/// shim (`.cmd`, `.bat`).
pub fn windows_extensions(pathext: Option<&str>) -> Vec<String> {
    const LAUNCHABLE: &[&str] = &[".exe", ".com", ".cmd", ".bat"];
    let listed: Vec<String> = pathext
        .unwrap_or(".COM;.EXE;.BAT;.CMD")
        .split(';')
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| LAUNCHABLE.contains(&e.as_str()))
        .collect();
    let mut out: Vec<String> = Vec::new();
    for ext in listed {
        if !out.contains(&ext) {
            out.push(ext);
        }
    }
    if out.is_empty() {
        return LAUNCHABLE.iter().map(|e| e.to_string()).collect();
    }
    out
}

/// `name` in `dir` the way Windows finds a command: the first `PATHEXT` extension whose file
/// exists (restricted as in [`windows_extensions`]).
pub fn windows_lookup(dir: &str, name: &str, extensions: &[String], exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    if extensions.iter().any(|e| lower.ends_with(e.as_str())) {
        let path = Os::Windows.join(dir, name);
        return exists(&path).then_some(path);
    }
    extensions.iter().map(|ext| Os::Windows.join(dir, &format!("{name}{ext}"))).find(|p| exists(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pathext_resolution() {
        let exts = windows_extensions(Some(".COM;.EXE;.BAT;.CMD;.VBS;.JS;.PS1"));
        assert_eq!(exts, vec![".com", ".exe", ".bat", ".cmd"]);
        assert_eq!(windows_extensions(None), vec![".com", ".exe", ".bat", ".cmd"]);
        assert_eq!(windows_extensions(Some(".PS1")), vec![".exe", ".com", ".cmd", ".bat"]);
        assert_eq!(windows_extensions(Some(".cmd;.EXE;.exe")), vec![".cmd", ".exe"]);

        let files =
            ["C:\\npm\\codex", "C:\\npm\\codex.cmd", "C:\\npm\\codex.ps1", "C:\\bin\\codex.exe", "C:\\bin\\codex.cmd"];
        let exists = |p: &str| files.contains(&p);
        assert_eq!(windows_lookup("C:\\npm", "codex", &exts, &exists).as_deref(), Some("C:\\npm\\codex.cmd"));
        assert_eq!(windows_lookup("C:\\bin\\", "codex", &exts, &exists).as_deref(), Some("C:\\bin\\codex.exe"));
        assert_eq!(windows_lookup("C:\\none", "codex", &exts, &exists), None);
        // .ps1 is never chosen, even when PATHEXT lists it first.
        assert_eq!(
            windows_lookup("C:\\npm", "codex", &windows_extensions(Some(".PS1;.CMD")), &exists).as_deref(),
            Some("C:\\npm\\codex.cmd")
        );
        // A name that already carries an extension is taken as is.
        assert_eq!(windows_lookup("C:\\bin", "codex.exe", &exts, &exists).as_deref(), Some("C:\\bin\\codex.exe"));
    }
}
