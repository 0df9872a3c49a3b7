//! Where a Codex CLI may live and how a found file is launched. Pure logic over an [`Env`]
//! and the facts gathered about a file ([`FileInfo`]), for every platform on every platform:
//! the macOS and Windows rules are unit-tested on Linux.

use super::env::{Env, Os};

/// Prefix for the system-wide locations (`/usr/local/bin`, `/opt/homebrew/bin`,
/// `/Applications`, …), so that tests can build them in a temporary directory.
pub const ROOT_VAR: &str = "RENNET_DISCOVERY_ROOT";

/// The Unix environment variables the candidate list depends on (reported from inside WSL).
pub const UNIX_INPUT_VARS: &[&str] = &[
    "HOME",
    "PATH",
    "SHELL",
    "USER",
    super::CODEX_BIN_VAR,
    ROOT_VAR,
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "NPM_CONFIG_PREFIX",
    "npm_config_prefix",
    "PNPM_HOME",
    "BUN_INSTALL",
    "VOLTA_HOME",
    "NVM_DIR",
    "NVM_BIN",
    "FNM_DIR",
    "N_PREFIX",
    "CARGO_HOME",
    "ASDF_DATA_DIR",
    "MISE_DATA_DIR",
    "CODEX_HOME",
];

/// The name of the CLI executable (without a Windows extension).
pub const CODEX: &str = "codex";

/// A system-wide absolute Unix location, under [`ROOT_VAR`] when that is set.
fn system(env: &Env, path: &str) -> String {
    match env.get(ROOT_VAR) {
        Some(root) => format!("{}{path}", root.trim_end_matches('/')),
        None => path.to_string(),
    }
}

/// Directories where users commonly have a Codex CLI installed, most specific first. An
/// entry may contain one `*` component (every installed Node version of nvm or fnm).
pub fn known_dirs(os: Os, env: &Env) -> Vec<String> {
    let dirs = match os {
        Os::Windows => windows_known_dirs(env),
        Os::Unix | Os::MacOs => unix_known_dirs(os, env),
    };
    let mut out: Vec<String> = Vec::new();
    for dir in dirs {
        if !is_store_package(os, &dir) && !out.iter().any(|d| os.path_key(d) == os.path_key(&dir)) {
            out.push(dir);
        }
    }
    out
}

fn unix_known_dirs(os: Os, env: &Env) -> Vec<String> {
    let home = env.home(os).map(str::to_string);
    let under = |base: &Option<String>, rel: &str| base.as_ref().map(|b| os.join(b, rel));
    let var = |name: &str| env.get(name).map(str::to_string);
    let xdg_data = var("XDG_DATA_HOME").or_else(|| under(&home, ".local/share"));
    let xdg_config = var("XDG_CONFIG_HOME").or_else(|| under(&home, ".config"));
    let macos = os == Os::MacOs;

    let mut dirs: Vec<Option<String>> = vec![
        // npm
        under(&var("NPM_CONFIG_PREFIX").or_else(|| var("npm_config_prefix")), "bin"),
        under(&home, ".npm-global/bin"),
        under(&home, ".npm-packages/bin"),
        // pnpm
        var("PNPM_HOME"),
        if macos { under(&home, "Library/pnpm") } else { under(&xdg_data, "pnpm") },
        // yarn
        under(&home, ".yarn/bin"),
        under(&xdg_config, "yarn/global/node_modules/.bin"),
        // bun
        under(&var("BUN_INSTALL"), "bin"),
        under(&home, ".bun/bin"),
        // volta
        under(&var("VOLTA_HOME"), "bin"),
        under(&home, ".volta/bin"),
        // nvm: the active version, then every installed one (newest first)
        var("NVM_BIN"),
        under(&var("NVM_DIR").or_else(|| under(&home, ".nvm")), "versions/node/*/bin"),
    ];
    // fnm
    let fnm_dirs = match var("FNM_DIR") {
        Some(dir) => vec![Some(dir)],
        None => vec![
            if macos { under(&home, "Library/Application Support/fnm") } else { under(&xdg_data, "fnm") },
            under(&home, ".fnm"),
        ],
    };
    for fnm in &fnm_dirs {
        dirs.push(under(fnm, "aliases/default/bin"));
        dirs.push(under(fnm, "node-versions/*/installation/bin"));
    }
    dirs.extend([
        // n
        under(&var("N_PREFIX"), "bin"),
        // the user's own bin directories
        under(&home, ".local/bin"),
        under(&home, "bin"),
        under(&var("CARGO_HOME").or_else(|| under(&home, ".cargo")), "bin"),
        // Homebrew and other system-wide prefixes
        Some(system(env, "/usr/local/bin")),
        Some(system(env, "/opt/homebrew/bin")),
        Some(system(env, "/home/linuxbrew/.linuxbrew/bin")),
        under(&home, ".linuxbrew/bin"),
        // version-manager shims
        under(&var("ASDF_DATA_DIR").or_else(|| under(&home, ".asdf")), "shims"),
        under(&var("MISE_DATA_DIR").or_else(|| under(&xdg_data, "mise")), "shims"),
        // Nix
        under(&home, ".nix-profile/bin"),
        var("USER").map(|user| system(env, &format!("/etc/profiles/per-user/{user}/bin"))),
        Some(system(env, "/run/current-system/sw/bin")),
        Some(system(env, "/nix/var/nix/profiles/default/bin")),
        // distribution packages
        Some(system(env, "/usr/bin")),
    ]);
    dirs.into_iter().flatten().collect()
}

fn windows_known_dirs(env: &Env) -> Vec<String> {
    let os = Os::Windows;
    let home = env.home(os).map(str::to_string);
    let var = |name: &str| env.get(name).map(str::to_string);
    let under = |base: &Option<String>, rel: &str| base.as_ref().map(|b| os.join(b, rel));
    let appdata = var("APPDATA");
    let local = var("LOCALAPPDATA");
    [
        var("NPM_CONFIG_PREFIX").or_else(|| var("npm_config_prefix")),
        under(&appdata, "npm"),
        var("PNPM_HOME"),
        under(&local, "pnpm"),
        under(&local, "Yarn\\bin"),
        under(&var("BUN_INSTALL"), "bin"),
        under(&home, ".bun\\bin"),
        under(&var("VOLTA_HOME"), "bin"),
        under(&local, "Volta\\bin"),
        var("NVM_SYMLINK"),
        under(&var("ProgramFiles"), "nodejs"),
        under(&var("SCOOP").or_else(|| under(&home, "scoop")), "shims"),
        under(&local, "Microsoft\\WinGet\\Links"),
        under(&var("CARGO_HOME").or_else(|| under(&home, ".cargo")), "bin"),
        under(&var("MISE_DATA_DIR").or_else(|| under(&local, "mise")), "shims"),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The desktop apps that carry a Codex CLI inside their bundle, in rank order: the Codex app
/// first (its CLI is the one that app itself runs), then the ChatGPT app.
const DESKTOP_APPS: &[&str] = &["Codex.app", "ChatGPT.app"];
/// Where each app keeps its CLI.
const BUNDLED_CLI: &str = "Contents/Resources/codex";

/// The Codex binaries inside the desktop apps (macOS only); for each app, system-wide then
/// per-user.
pub fn bundle_paths(os: Os, env: &Env) -> Vec<String> {
    if os != Os::MacOs {
        return Vec::new();
    }
    let mut out = Vec::new();
    for app in DESKTOP_APPS {
        let inside = format!("Applications/{app}/{BUNDLED_CLI}");
        out.push(system(env, &format!("/{inside}")));
        if let Some(home) = env.home(os) {
            out.push(os.join(home, &inside));
        }
    }
    out
}

/// The Codex home (`CODEX_HOME`, else `~/.codex`): discovery touches nothing inside it.
pub fn codex_home(os: Os, env: &Env) -> Option<String> {
    env.get("CODEX_HOME").map(str::to_string).or_else(|| env.home(os).map(|h| os.join(h, ".codex")))
}

/// Whether `path` is `dir` or inside it.
pub fn is_inside(os: Os, path: &str, dir: &str) -> bool {
    let sep = if os.is_windows() { '\\' } else { '/' };
    let path = os.path_key(path);
    let dir = os.path_key(dir);
    let dir = dir.trim_end_matches(sep);
    path == dir || path.starts_with(&format!("{dir}{sep}"))
}

/// The Codex binary of a desktop app, however it was reached (a symbolic link on PATH to it
/// still ranks as the bundle, below every user-installed CLI).
pub fn is_desktop_bundle(path: &str) -> bool {
    DESKTOP_APPS.iter().any(|app| path.contains(&format!("/{app}/Contents/Resources/")))
}

/// A path inside the Microsoft Store package area (`…\WindowsApps\…`, including the app
/// execution aliases on PATH). The Store ChatGPT package does not expose a Codex other
/// applications can start: such a candidate is reported, never started.
pub fn is_store_package(os: Os, path: &str) -> bool {
    if !os.is_windows() {
        return false;
    }
    let key = os.path_key(path);
    key.contains("\\windowsapps\\") || key.ends_with("\\windowsapps")
}

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

/// The script an npm (or pnpm) `.cmd` shim runs with Node, relative to the shim's directory:
/// `"%dp0%\node_modules\@openai\codex\bin\codex.js"` → `node_modules\@openai\codex\bin\codex.js`.
pub fn parse_npm_cmd_shim(text: &str) -> Option<String> {
    const PREFIXES: &[&str] = &["\"%dp0%\\", "\"%~dp0\\", "\"%dp0%", "\"%~dp0"];
    let mut rest = text;
    while let Some(start) = rest.find("\"%") {
        let tail = &rest[start..];
        if let Some(prefix) = PREFIXES.iter().find(|p| tail.starts_with(**p)) {
            let body = &tail[prefix.len()..];
            if let Some(end) = body.find('"') {
                let rel = body[..end].trim_start_matches(['\\', '/']);
                let lower = rel.to_ascii_lowercase();
                let is_node = lower == "node.exe" || lower == "node";
                if !rel.is_empty() && !is_node {
                    return Some(rel.to_string());
                }
            }
        }
        rest = &tail[2..];
    }
    None
}

/// A Windows path with `.` and `..` resolved lexically and `/` turned into `\`.
pub fn normalize_windows(path: &str) -> String {
    let path = path.replace('/', "\\");
    let (prefix, rest) = if let Some(unc) = path.strip_prefix("\\\\") {
        // \\server\share is the root of a UNC path.
        let mut parts = unc.splitn(3, '\\');
        let server = parts.next().unwrap_or("");
        let share = parts.next().unwrap_or("");
        (format!("\\\\{server}\\{share}"), parts.next().unwrap_or("").to_string())
    } else if path.len() >= 2 && path.as_bytes()[1] == b':' {
        (path[..2].to_string(), path[2..].to_string())
    } else {
        (String::new(), path.clone())
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('\\') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("{prefix}\\{}", parts.join("\\"))
}

/// What a candidate file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileState {
    Missing,
    NotFile,
    File { executable: bool },
}

/// The facts discovery needs about one candidate file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileInfo {
    /// As found (not canonicalised): what the report shows.
    pub path: String,
    pub state: FileState,
    /// The file with every symbolic link resolved; duplicates are detected on it.
    pub canonical: Option<String>,
    /// The start of the file (its first line on Unix, the whole of a small `.cmd` shim on
    /// Windows), lossily decoded.
    pub head: String,
    /// An executable `node` beside the file as found or beside the file it links to
    /// (`node.exe` beside a Windows shim).
    pub node_beside: Option<String>,
}

impl FileInfo {
    /// The key under which two paths are the same file.
    pub fn key(&self, os: Os) -> String {
        os.path_key(self.canonical.as_deref().unwrap_or(&self.path))
    }
}

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

/// A `#!` line: the interpreter, and for `#!/usr/bin/env [-S] cmd …` the command env looks up.
#[derive(Debug, PartialEq, Eq)]
pub struct Shebang {
    pub line: String,
    pub interpreter: String,
    pub env_command: Option<String>,
}

pub fn parse_shebang(head: &str) -> Option<Shebang> {
    let line = head.lines().next()?.trim_end();
    let body = line.strip_prefix("#!")?.trim();
    let mut words = body.split_whitespace();
    let interpreter = words.next()?.to_string();
    let env_command = if Os::Unix.file_name(&interpreter) == "env" {
        // `env -S node --flag`, `env -Snode`, `env VAR=1 node`: the first word that is
        // neither an option nor an assignment.
        words
            .flat_map(|w| match w.strip_prefix("-S") {
                Some(glued) if !glued.is_empty() => vec![glued],
                _ => vec![w],
            })
            .find(|w| !w.starts_with('-') && !w.contains('='))
            .map(str::to_string)
    } else {
        None
    };
    Some(Shebang { line: line.to_string(), interpreter, env_command })
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

/// The `codex.exe` that `@openai/codex`'s launcher script would start, where the installed
/// package has it: started directly, it saves a Node process per child, and an abort or a
/// kill reaches Codex itself rather than the Node between.
pub fn vendored_codex(script: &str, exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let os = Os::Windows;
    let lower = script.to_ascii_lowercase();
    if !lower.ends_with(r"\@openai\codex\bin\codex.js") {
        return None;
    }
    let (package, triple) = if cfg!(target_arch = "aarch64") {
        ("codex-win32-arm64", "aarch64-pc-windows-msvc")
    } else {
        ("codex-win32-x64", "x86_64-pc-windows-msvc")
    };
    let root = os.parent(&os.parent(script)?)?;
    let scope = os.parent(&root)?;
    // As the launcher looks: the platform package below the package (npm's global install) or
    // beside it (hoisted), then a vendor directory of its own (older releases).
    [os.join(&os.join(&os.join(&root, "node_modules"), "@openai"), package), os.join(&scope, package), root]
        .into_iter()
        .map(|base| os.join(&os.join(&os.join(&os.join(&base, "vendor"), triple), "bin"), "codex.exe"))
        .find(|exe| exists(exe))
}

/// Numbers in a path, for ordering installed versions newest first (`v22.1.0` > `v9.11.2`).
pub fn version_key(path: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let mut current: Option<u64> = None;
    for c in path.chars() {
        match c.to_digit(10) {
            Some(d) => current = Some(current.unwrap_or(0).saturating_mul(10).saturating_add(d as u64)),
            None => out.extend(current.take()),
        }
    }
    out.extend(current);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix_env(extra: &[(&str, &str)]) -> Env {
        let mut pairs = vec![("HOME", "/h")];
        pairs.extend_from_slice(extra);
        Env::from_pairs(pairs, Os::Unix)
    }

    #[test]
    fn unix_known_dirs_cover_the_common_installers() {
        let dirs = known_dirs(Os::Unix, &unix_env(&[]));
        for expected in [
            "/h/.npm-global/bin",
            "/h/.local/share/pnpm",
            "/h/.yarn/bin",
            "/h/.config/yarn/global/node_modules/.bin",
            "/h/.bun/bin",
            "/h/.volta/bin",
            "/h/.nvm/versions/node/*/bin",
            "/h/.local/share/fnm/node-versions/*/installation/bin",
            "/h/.local/bin",
            "/h/.cargo/bin",
            "/usr/local/bin",
            "/opt/homebrew/bin",
            "/home/linuxbrew/.linuxbrew/bin",
            "/h/.asdf/shims",
            "/h/.local/share/mise/shims",
            "/h/.nix-profile/bin",
            "/usr/bin",
        ] {
            assert!(dirs.contains(&expected.to_string()), "missing {expected} in {dirs:#?}");
        }
        let pos = |d: &str| dirs.iter().position(|x| x == d).unwrap();
        // The order the issue lists: package-manager bins, ~/.local/bin, /usr/local/bin,
        // /opt/homebrew/bin, then the shims.
        assert!(pos("/h/.npm-global/bin") < pos("/h/.local/bin"));
        assert!(pos("/h/.volta/bin") < pos("/h/.local/bin"));
        assert!(pos("/h/.local/bin") < pos("/usr/local/bin"));
        assert!(pos("/usr/local/bin") < pos("/opt/homebrew/bin"));
        assert!(pos("/opt/homebrew/bin") < pos("/h/.asdf/shims"));
        assert!(pos("/h/.asdf/shims") < pos("/h/.local/share/mise/shims"));
        assert!(!dirs.iter().any(|d| d.contains("Library")));
    }

    #[test]
    fn unix_known_dirs_follow_the_installers_variables() {
        let env = unix_env(&[
            ("NPM_CONFIG_PREFIX", "/npm"),
            ("PNPM_HOME", "/pnpm"),
            ("BUN_INSTALL", "/bun"),
            ("VOLTA_HOME", "/volta"),
            ("NVM_DIR", "/nvm"),
            ("NVM_BIN", "/nvm/versions/node/v22.0.0/bin"),
            ("FNM_DIR", "/fnm"),
            ("N_PREFIX", "/n"),
            ("ASDF_DATA_DIR", "/asdf"),
            ("MISE_DATA_DIR", "/mise"),
            ("XDG_DATA_HOME", "/data"),
            ("USER", "ann"),
            (ROOT_VAR, "/tmp/root/"),
        ]);
        let dirs = known_dirs(Os::Unix, &env);
        for expected in [
            "/npm/bin",
            "/pnpm",
            "/bun/bin",
            "/volta/bin",
            "/nvm/versions/node/v22.0.0/bin",
            "/nvm/versions/node/*/bin",
            "/fnm/aliases/default/bin",
            "/n/bin",
            "/asdf/shims",
            "/mise/shims",
            "/tmp/root/usr/local/bin",
            "/tmp/root/opt/homebrew/bin",
            "/tmp/root/etc/profiles/per-user/ann/bin",
        ] {
            assert!(dirs.contains(&expected.to_string()), "missing {expected} in {dirs:#?}");
        }
        assert!(!dirs.contains(&"/usr/local/bin".to_string()), "system dirs move under the root");
        assert!(!dirs.contains(&"/h/.asdf/shims".to_string()));
        // Without HOME only the absolute ones remain.
        let bare = known_dirs(Os::Unix, &Env::from_pairs(Vec::<(String, String)>::new(), Os::Unix));
        assert!(
            bare.iter().all(|d| d.starts_with("/usr")
                || d.starts_with("/opt")
                || d.starts_with("/home/linuxbrew")
                || d.starts_with("/run")
                || d.starts_with("/nix")),
            "{bare:?}"
        );
    }

    #[test]
    fn macos_dirs_and_bundles() {
        let env = unix_env(&[]);
        let dirs = known_dirs(Os::MacOs, &env);
        assert!(dirs.contains(&"/h/Library/pnpm".to_string()));
        assert!(dirs.contains(&"/h/Library/Application Support/fnm/aliases/default/bin".to_string()));
        assert!(!dirs.contains(&"/h/.local/share/pnpm".to_string()));
        assert_eq!(
            bundle_paths(Os::MacOs, &env),
            vec![
                "/Applications/Codex.app/Contents/Resources/codex".to_string(),
                "/h/Applications/Codex.app/Contents/Resources/codex".to_string(),
                "/Applications/ChatGPT.app/Contents/Resources/codex".to_string(),
                "/h/Applications/ChatGPT.app/Contents/Resources/codex".to_string()
            ]
        );
        // System-wide ones move under the root; without HOME only those remain.
        let rooted = unix_env(&[(ROOT_VAR, "/r/")]);
        assert_eq!(bundle_paths(Os::MacOs, &rooted)[0], "/r/Applications/Codex.app/Contents/Resources/codex");
        let bare = Env::from_pairs(Vec::<(String, String)>::new(), Os::MacOs);
        assert_eq!(
            bundle_paths(Os::MacOs, &bare),
            vec![
                "/Applications/Codex.app/Contents/Resources/codex",
                "/Applications/ChatGPT.app/Contents/Resources/codex"
            ]
        );
        assert!(bundle_paths(Os::Unix, &env).is_empty());
        assert!(bundle_paths(Os::Windows, &env).is_empty());
    }

    #[test]
    fn windows_known_dirs_and_store_exclusion() {
        let env = Env::from_pairs(
            [
                ("USERPROFILE", "C:\\Users\\a"),
                ("APPDATA", "C:\\Users\\a\\AppData\\Roaming"),
                ("LOCALAPPDATA", "C:\\Users\\a\\AppData\\Local"),
                ("ProgramFiles", "C:\\Program Files"),
                ("PNPM_HOME", "C:\\Users\\a\\AppData\\Local\\Microsoft\\WindowsApps"),
            ],
            Os::Windows,
        );
        let dirs = known_dirs(Os::Windows, &env);
        for expected in [
            "C:\\Users\\a\\AppData\\Roaming\\npm",
            "C:\\Users\\a\\AppData\\Local\\pnpm",
            "C:\\Users\\a\\.bun\\bin",
            "C:\\Users\\a\\AppData\\Local\\Volta\\bin",
            "C:\\Program Files\\nodejs",
            "C:\\Users\\a\\scoop\\shims",
        ] {
            assert!(dirs.contains(&expected.to_string()), "missing {expected} in {dirs:#?}");
        }
        assert!(!dirs.iter().any(|d| d.to_lowercase().contains("windowsapps")), "{dirs:?}");
        assert!(is_store_package(
            Os::Windows,
            "C:\\Program Files\\WindowsApps\\OpenAI.ChatGPT-Desktop_1.0_x64__abc\\app\\codex.exe"
        ));
        assert!(is_store_package(Os::Windows, "c:/users/a/appdata/local/microsoft/windowsapps/codex.exe"));
        assert!(!is_store_package(Os::Windows, "C:\\Users\\a\\AppData\\Roaming\\npm\\codex.cmd"));
        assert!(!is_store_package(Os::Unix, "/x/WindowsApps/codex"));
    }

    #[test]
    fn codex_home_and_bundles() {
        let env = unix_env(&[]);
        assert_eq!(codex_home(Os::Unix, &env).as_deref(), Some("/h/.codex"));
        let env = unix_env(&[("CODEX_HOME", "/c")]);
        assert_eq!(codex_home(Os::Unix, &env).as_deref(), Some("/c"));
        assert!(is_inside(Os::Unix, "/c/bin/codex", "/c"));
        assert!(is_inside(Os::Unix, "/c", "/c/"));
        assert!(!is_inside(Os::Unix, "/codex", "/c"));
        assert!(is_inside(Os::Windows, "C:/Users/A/.codex/x", "c:\\users\\a\\.codex"));
        assert!(is_desktop_bundle("/Applications/ChatGPT.app/Contents/Resources/codex"));
        assert!(is_desktop_bundle("/Users/a/Applications/Codex.app/Contents/Resources/codex"));
        assert!(!is_desktop_bundle("/usr/local/bin/codex"));
        assert!(!is_desktop_bundle("/opt/MyCodex.app/Contents/Resources/codex"));
    }

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

    const NPM_SHIM: &str = "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n\r\nIF EXIST \"%dp0%\\node.exe\" (\r\n  SET \"_prog=%dp0%\\node.exe\"\r\n) ELSE (\r\n  SET \"_prog=node\"\r\n  SET PATHEXT=%PATHEXT:;.JS;=;%\r\n)\r\n\r\nendLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & \"%_prog%\"  \"%dp0%\\node_modules\\@openai\\codex\\bin\\codex.js\" %*\r\n";
    const PNPM_SHIM: &str = "@SETLOCAL\r\n@IF NOT DEFINED NODE_PATH (\r\n  @SET \"NODE_PATH=C:\\x\"\r\n)\r\n@IF EXIST \"%~dp0\\node.exe\" (\r\n  \"%~dp0\\node.exe\"  \"%~dp0\\global\\5\\node_modules\\@openai\\codex\\bin\\codex.js\" %*\r\n) ELSE (\r\n  @SET PATHEXT=%PATHEXT:;.JS;=;%\r\n  node  \"%~dp0\\global\\5\\node_modules\\@openai\\codex\\bin\\codex.js\" %*\r\n)\r\n";

    #[test]
    fn npm_and_pnpm_shims() {
        assert_eq!(parse_npm_cmd_shim(NPM_SHIM).as_deref(), Some("node_modules\\@openai\\codex\\bin\\codex.js"));
        assert_eq!(
            parse_npm_cmd_shim(PNPM_SHIM).as_deref(),
            Some("global\\5\\node_modules\\@openai\\codex\\bin\\codex.js")
        );
        assert_eq!(parse_npm_cmd_shim("@echo off\r\npowershell -File codex.ps1 %*\r\n"), None);
        assert_eq!(parse_npm_cmd_shim("\"%~dp0..\\lib\\codex.js\" %*"), Some("..\\lib\\codex.js".into()));
    }

    #[test]
    fn normalizes_windows_paths() {
        assert_eq!(normalize_windows("C:\\npm\\..\\lib\\.\\codex.js"), "C:\\lib\\codex.js");
        assert_eq!(normalize_windows("C:/a//b/"), "C:\\a\\b");
        assert_eq!(normalize_windows("\\\\srv\\share\\a\\..\\..\\b"), "\\\\srv\\share\\b");
    }

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
        let package = format!("{npm}\\node_modules\\@openai\\codex");
        let (platform, triple) = if cfg!(target_arch = "aarch64") {
            ("codex-win32-arm64", "aarch64-pc-windows-msvc")
        } else {
            ("codex-win32-x64", "x86_64-pc-windows-msvc")
        };
        let nested = format!("{package}\\node_modules\\@openai\\{platform}\\vendor\\{triple}\\bin\\codex.exe");
        let hoisted = format!("{npm}\\node_modules\\@openai\\{platform}\\vendor\\{triple}\\bin\\codex.exe");
        let own = format!("{package}\\vendor\\{triple}\\bin\\codex.exe");
        for exe in [&nested, &hoisted, &own] {
            let only = |p: &str| p == exe.as_str();
            assert_eq!(plan(Os::Windows, &shim, &node, &only), Plan::Vendored(exe.clone()));
        }
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

    #[test]
    fn shebangs() {
        let s = parse_shebang("#!/usr/bin/env VAR=1 -S node --x\nrest").unwrap();
        assert_eq!(s.env_command.as_deref(), Some("node"));
        assert_eq!(parse_shebang("#! /bin/sh -e").unwrap().interpreter, "/bin/sh");
        assert_eq!(parse_shebang("#!/usr/bin/env -Snode").unwrap().env_command.as_deref(), Some("node"));
        assert_eq!(parse_shebang("\x7fELF"), None);
        assert_eq!(parse_shebang("#!"), None);
    }

    #[test]
    fn orders_versions_newest_first() {
        let mut dirs = vec!["/nvm/v9.11.2/bin", "/nvm/v22.1.0/bin", "/nvm/v20.10.0/bin"];
        dirs.sort_by_key(|d| std::cmp::Reverse(version_key(d)));
        assert_eq!(dirs, vec!["/nvm/v22.1.0/bin", "/nvm/v20.10.0/bin", "/nvm/v9.11.2/bin"]);
    }
}
