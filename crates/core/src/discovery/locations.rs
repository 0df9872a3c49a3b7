//! Where a Codex CLI may live: the directories installers put it in, per platform; the CLI
//! inside the macOS desktop apps; the Codex home and the Microsoft Store package area, which
//! discovery leaves alone. Pure logic over an [`Env`], for every platform on every platform:
//! the macOS and Windows rules are unit-tested on Linux. How a file found there is started is
//! [`super::launch`]'s.

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
    fn orders_versions_newest_first() {
        let mut dirs = vec!["/nvm/v9.11.2/bin", "/nvm/v22.1.0/bin", "/nvm/v20.10.0/bin"];
        dirs.sort_by_key(|d| std::cmp::Reverse(version_key(d)));
        assert_eq!(dirs, vec!["/nvm/v22.1.0/bin", "/nvm/v20.10.0/bin", "/nvm/v9.11.2/bin"]);
    }
}
