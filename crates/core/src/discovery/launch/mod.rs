//! How a found file is started: the launch plan. On Unix the file runs itself, unless its
//! `#!` line would find no interpreter and a Node beside it can run it instead; on Windows an
//! `.exe` runs itself, an npm `.cmd` shim of Codex runs the binary its script would start (or
//! that script under Node), and nothing goes through a shell. Pure logic over the facts about
//! the file ([`FileInfo`]): the Windows rules are unit-tested on Linux.

mod npm_shim;
mod shebang;
mod vendored;

use super::env::Os;
use super::file::{FileInfo, FileState};
use super::locations::is_store_package;
use npm_shim::{normalize_windows, parse_npm_cmd_shim};
use shebang::parse_shebang;
use vendored::vendored_codex;

/// How a candidate is started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// The file itself is argv[0].
    Direct,
    /// A launcher script run by a Node executable: `[node, script]`.
    Node { node: String, script: String },
    /// The native binary that the file, an npm shim, would have its Node script start.
    Vendored(String),
    /// It cannot be started; the reason.
    Rejected(String),
}

fn is_node(name: &str) -> bool {
    name == "node" || name == "nodejs"
}

/// How to start the file described by `info`. `resolve` finds a command on the PATH of the
/// process that starts it (`node`, or a shebang's `env` command; on Windows, `node` means
/// `node.exe`); `exists` tells whether an absolute interpreter path exists.
pub fn plan(os: Os, info: &FileInfo, resolve: &dyn Fn(&str) -> Option<String>, exists: &dyn Fn(&str) -> bool) -> Plan {
    let executable = match info.state {
        FileState::Missing => return Plan::Rejected("does not exist".into()),
        FileState::NotFile => return Plan::Rejected("is not a file".into()),
        FileState::File { executable } => executable,
    };
    if os.is_windows() {
        return windows_plan(info, resolve, exists);
    }
    if !executable {
        return Plan::Rejected("is not executable (no execute permission)".into());
    }
    let Some(shebang) = parse_shebang(&info.head) else {
        return Plan::Direct;
    };
    let script = info.canonical.clone().unwrap_or_else(|| info.path.clone());
    let beside = |missing: String| match &info.node_beside {
        Some(node) => Plan::Node { node: node.clone(), script: script.clone() },
        None => Plan::Rejected(missing),
    };
    match &shebang.env_command {
        Some(command) if resolve(command).is_some() => Plan::Direct,
        Some(command) if is_node(command) => beside(format!(
            "its `{}` line finds no `{command}` on PATH, and there is no node executable beside it",
            shebang.line
        )),
        Some(command) => Plan::Rejected(format!("its `{}` line finds no `{command}` on PATH", shebang.line)),
        None if exists(&shebang.interpreter) => Plan::Direct,
        None if is_node(Os::Unix.file_name(&shebang.interpreter)) => beside(format!(
            "its interpreter {} does not exist, and there is no node executable beside it",
            shebang.interpreter
        )),
        None => Plan::Rejected(format!("its interpreter {} does not exist", shebang.interpreter)),
    }
}

fn windows_plan(info: &FileInfo, resolve: &dyn Fn(&str) -> Option<String>, exists: &dyn Fn(&str) -> bool) -> Plan {
    let os = Os::Windows;
    if is_store_package(os, &info.path) {
        return Plan::Rejected(
            "is inside the Microsoft Store package area (WindowsApps), whose programs other applications cannot start"
                .into(),
        );
    }
    let name = os.file_name(&info.path).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "exe" | "com" => Plan::Direct,
        "cmd" | "bat" => match parse_npm_cmd_shim(&info.head) {
            Some(rel) => {
                let dir = os.parent(&info.path).unwrap_or_default();
                let script = normalize_windows(&os.join(&dir, &rel));
                if let Some(exe) = vendored_codex(&script, exists) {
                    return Plan::Vendored(exe);
                }
                match info.node_beside.clone().or_else(|| resolve("node")) {
                    Some(node) => Plan::Node { node, script },
                    None => Plan::Rejected(
                        "is an npm shim, but there is no node.exe beside it or on PATH to run its script".into(),
                    ),
                }
            }
            None => Plan::Rejected(format!(
                "is a .{ext} batch file that is not an npm shim; batch files are never started through a shell"
            )),
        },
        "" => Plan::Rejected("has no extension, so Windows cannot start it".into()),
        other => Plan::Rejected(format!("a .{other} file cannot be started without a shell")),
    }
}

#[cfg(test)]
mod tests {
    use super::npm_shim::tests::NPM_SHIM;
    use super::*;

    fn file(path: &str, head: &str) -> FileInfo {
        FileInfo {
            path: path.into(),
            state: FileState::File { executable: true },
            canonical: Some(path.into()),
            head: head.into(),
            node_beside: None,
        }
    }

    #[test]
    fn windows_plans() {
        let none = |_: &str| None;
        let yes = |_: &str| true;
        // No vendored codex.exe beside the shims' script (see the test below for one).
        let no = |_: &str| false;
        assert_eq!(plan(Os::Windows, &file("C:\\bin\\codex.exe", "MZ"), &none, &yes), Plan::Direct);
        let mut shim = file("C:\\Users\\a\\AppData\\Roaming\\npm\\codex.cmd", NPM_SHIM);
        assert!(matches!(plan(Os::Windows, &shim, &none, &no), Plan::Rejected(r) if r.contains("node.exe")));
        let on_path = |c: &str| (c == "node").then(|| "C:\\Program Files\\nodejs\\node.exe".to_string());
        assert_eq!(
            plan(Os::Windows, &shim, &on_path, &no),
            Plan::Node {
                node: "C:\\Program Files\\nodejs\\node.exe".into(),
                script: "C:\\Users\\a\\AppData\\Roaming\\npm\\node_modules\\@openai\\codex\\bin\\codex.js".into()
            }
        );
        shim.node_beside = Some("C:\\Users\\a\\AppData\\Roaming\\npm\\node.exe".into());
        assert!(
            matches!(plan(Os::Windows, &shim, &on_path, &no), Plan::Node { node, .. } if node.ends_with("npm\\node.exe"))
        );
        assert!(
            matches!(plan(Os::Windows, &file("C:\\x\\codex.bat", "@echo off\r\nbash codex"), &on_path, &yes), Plan::Rejected(r) if r.contains("never started through a shell"))
        );
        assert!(matches!(plan(Os::Windows, &file("C:\\x\\codex.ps1", ""), &on_path, &yes), Plan::Rejected(_)));
        let alias = file("C:\\Users\\a\\AppData\\Local\\Microsoft\\WindowsApps\\codex.exe", "MZ");
        assert!(
            matches!(plan(Os::Windows, &alias, &on_path, &yes), Plan::Rejected(r) if r.contains("Microsoft Store"))
        );
        assert!(matches!(plan(Os::Windows, &file("C:\\x\\codex", "#!/bin/sh"), &on_path, &yes), Plan::Rejected(_)));
    }

    #[test]
    fn an_npm_shim_of_codex_runs_the_binary_its_script_would_start() {
        let npm = "C:\\Users\\a\\AppData\\Roaming\\npm";
        let shim = file(&format!("{npm}\\codex.cmd"), NPM_SHIM);
        let node = |c: &str| (c == "node").then(|| "C:\\node\\node.exe".to_string());
        // Where the binary sits inside the install is vendored.rs's (and its tests').
        let vendored = |p: &str| p.ends_with("\\bin\\codex.exe");
        let package = format!("{npm}\\node_modules\\@openai\\codex\\");
        assert!(
            matches!(plan(Os::Windows, &shim, &node, &vendored), Plan::Vendored(exe) if exe.starts_with(&package)),
            "{:?}",
            plan(Os::Windows, &shim, &node, &vendored)
        );
        // Without the binary, the shim's own way: its script under Node.
        let nothing = |_: &str| false;
        assert!(matches!(plan(Os::Windows, &shim, &node, &nothing), Plan::Node { .. }));
        // Only Codex's own launcher: another package's shim keeps its Node.
        let other = file("C:\\npm\\codex.cmd", "@\"%dp0%\\node_modules\\other\\cli.js\" %*");
        let any = |_: &str| true;
        assert!(matches!(plan(Os::Windows, &other, &node, &any), Plan::Node { .. }));
    }

    #[test]
    fn unix_plans() {
        let none = |_: &str| None;
        let yes = |_: &str| true;
        let no = |_: &str| false;
        let node_on_path = |c: &str| (c == "node").then(|| "/usr/bin/node".to_string());
        assert_eq!(plan(Os::Unix, &file("/b/codex", "\x7fELF\x02"), &none, &no), Plan::Direct);
        let mut launcher = file("/n/bin/codex", "#!/usr/bin/env node\n");
        launcher.canonical = Some("/n/lib/node_modules/@openai/codex/bin/codex.js".into());
        assert_eq!(plan(Os::Unix, &launcher, &node_on_path, &yes), Plan::Direct);
        assert!(matches!(plan(Os::Unix, &launcher, &none, &yes), Plan::Rejected(r) if r.contains("no `node` on PATH")));
        launcher.node_beside = Some("/n/bin/node".into());
        assert_eq!(
            plan(Os::Unix, &launcher, &none, &yes),
            Plan::Node { node: "/n/bin/node".into(), script: "/n/lib/node_modules/@openai/codex/bin/codex.js".into() }
        );
        let mut env_s = file("/n/bin/codex", "#!/usr/bin/env -S node --no-warnings\n");
        env_s.node_beside = Some("/n/bin/node".into());
        assert!(matches!(plan(Os::Unix, &env_s, &none, &yes), Plan::Node { .. }));
        let mut absolute = file("/n/bin/codex", "#!/gone/bin/node\n");
        assert!(matches!(plan(Os::Unix, &absolute, &none, &no), Plan::Rejected(r) if r.contains("/gone/bin/node")));
        absolute.node_beside = Some("/n/bin/node".into());
        assert!(matches!(plan(Os::Unix, &absolute, &none, &no), Plan::Node { .. }));
        assert_eq!(plan(Os::Unix, &file("/s/codex", "#!/bin/sh\n"), &none, &yes), Plan::Direct);
        assert!(
            matches!(plan(Os::Unix, &file("/s/codex", "#!/usr/bin/env bash\n"), &none, &yes), Plan::Rejected(r) if r.contains("`bash`"))
        );
        let mut not_exec = file("/s/codex", "");
        not_exec.state = FileState::File { executable: false };
        assert!(matches!(plan(Os::Unix, &not_exec, &none, &yes), Plan::Rejected(r) if r.contains("not executable")));
        not_exec.state = FileState::NotFile;
        assert!(matches!(plan(Os::Unix, &not_exec, &none, &yes), Plan::Rejected(r) if r.contains("not a file")));
        not_exec.state = FileState::Missing;
        assert!(matches!(plan(Os::Unix, &not_exec, &none, &yes), Plan::Rejected(r) if r.contains("does not exist")));
    }
}
