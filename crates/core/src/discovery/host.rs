//! Where discovery looks and where the probes run: this machine (`Native`), or a WSL
//! distribution reached through `wsl.exe -d <distro> --exec …` (`Wsl`). Both answer the same
//! questions — the environment there, the login shell's PATH, what the candidate files are —
//! so the ranking and probing above them are the same code.

use super::env::{Env, Os};
use super::file::{FileInfo, FileState};
use super::locations;
use super::pathext;
use super::probe;
use super::wsl;
use crate::process::is_executable;
use crate::process::{Launch, Scope};
use std::path::Path;
use std::time::Duration;

#[derive(Clone, Debug)]
pub enum Host {
    Native { os: Os },
    Wsl { exe: String, distro: String },
}

/// One thing to look at.
#[derive(Clone, Debug)]
pub enum Request {
    /// This file, reported even when it does not exist.
    File(String),
    /// This file, only if it exists.
    OptionalFile(String),
    /// `codex` in this directory (every directory, if the pattern has a `*` component).
    Dir(String),
}

/// The environment as seen where the candidates live.
#[derive(Clone, Debug)]
pub struct HostEnv {
    pub env: Env,
    /// The `node` that `#!/usr/bin/env node` would find there.
    pub node_on_path: Option<String>,
}

/// The answer to a login-shell PATH query.
#[derive(Debug, PartialEq, Eq)]
pub enum LoginPath {
    Found(String),
    /// Not asked or no answer; why (for the report when nothing is found).
    Unavailable(String),
}

impl Host {
    /// Whose path conventions the candidates follow.
    pub fn os(&self) -> Os {
        match self {
            Host::Native { os } => *os,
            Host::Wsl { .. } => Os::Unix,
        }
    }

    /// The command that runs `argv` there.
    pub fn command(&self, argv: &[String]) -> Launch {
        match self {
            Host::Native { .. } => Launch::new(&argv[0], &argv[1..]),
            Host::Wsl { exe, distro } => {
                let mut args = vec!["-d".to_string(), distro.clone(), "--exec".to_string()];
                args.extend(argv.iter().cloned());
                let mut launch = Launch::new(exe, args);
                launch.wsl = true;
                launch
            }
        }
    }

    /// `sh -c <script> sh <args…>` there.
    fn script(&self, script: &str, args: impl IntoIterator<Item = String>) -> Launch {
        let mut argv = vec!["/bin/sh".to_string(), "-c".to_string(), script.to_string(), "sh".to_string()];
        argv.extend(args);
        self.command(&argv)
    }

    /// The environment there. `env` is the one this process was given (merged over its own).
    pub async fn environment(&self, env: &Env, timeout: Duration) -> Result<HostEnv, String> {
        match self {
            Host::Native { os } => {
                let node = if os.is_windows() { resolve_windows(env, "node") } else { resolve_unix(env, "node") };
                Ok(HostEnv { env: env.clone(), node_on_path: node })
            }
            Host::Wsl { distro, .. } => {
                let cmd = self.script(wsl::ENV_SCRIPT, locations::UNIX_INPUT_VARS.iter().map(|v| v.to_string()));
                let run = probe::collect(&cmd, env, timeout, Scope::Tree, None)
                    .await
                    .map_err(|e| format!("wsl.exe could not be started ({}): {e}", cmd.program.display()))?;
                let ok = run.exit.code == Some(0);
                if run.timed_out || !ok {
                    let what = if run.timed_out { "did not answer in time".to_string() } else { "failed".to_string() };
                    let tail = run.stderr_said.join(" | ");
                    return Err(format!(
                        "the WSL distribution {distro:?} {what}{}",
                        if tail.is_empty() { String::new() } else { format!(": {tail}") }
                    ));
                }
                let (env, node_on_path) = wsl::parse_env_report(&String::from_utf8_lossy(&run.stdout));
                Ok(HostEnv { env, node_on_path })
            }
        }
    }

    /// Asks the user's login shell there for its PATH.
    pub async fn login_path(&self, host_env: &HostEnv, env: &Env, timeout: Duration) -> LoginPath {
        let nonce = nonce();
        let command = login_command(&nonce);
        let (cmd, run_env) = match self {
            Host::Native { os } if os.is_windows() => {
                return LoginPath::Unavailable("Windows has no login shell".into());
            }
            Host::Native { .. } => {
                let Some(shell) = host_env.env.get("SHELL") else {
                    return LoginPath::Unavailable("SHELL is not set".into());
                };
                (Launch::new(shell, login_shell_args(shell, &command)), &host_env.env)
            }
            Host::Wsl { .. } => {
                let secs = timeout.as_secs().max(1).to_string();
                (self.script(wsl::LOGIN_SCRIPT, [command.clone(), secs]), env)
            }
        };
        let end = end_marker(&nonce);
        match probe::collect(&cmd, run_env, timeout, Scope::Session, Some(end.as_bytes())).await {
            Err(e) => {
                LoginPath::Unavailable(format!("the login shell {} could not be started: {e}", cmd.program.display()))
            }
            Ok(run) => match parse_login_output(&String::from_utf8_lossy(&run.stdout), &nonce) {
                Some(path) => LoginPath::Found(path),
                None if run.timed_out => {
                    LoginPath::Unavailable(format!("the login shell did not answer within {} ms", timeout.as_millis()))
                }
                None => LoginPath::Unavailable("the login shell printed no PATH".into()),
            },
        }
    }

    /// The facts about every file the requests name, each with its request's index.
    pub async fn examine(
        &self,
        host_env: &HostEnv,
        env: &Env,
        requests: &[Request],
        timeout: Duration,
    ) -> Vec<(usize, FileInfo)> {
        if requests.is_empty() {
            return Vec::new();
        }
        match self {
            Host::Native { os } => {
                let (os, env, requests) = (*os, host_env.env.clone(), requests.to_vec());
                tokio::task::spawn_blocking(move || examine_native(os, &env, &requests)).await.unwrap_or_default()
            }
            Host::Wsl { .. } => {
                let args = requests.iter().map(|r| match r {
                    Request::File(p) => format!("f:{p}"),
                    Request::OptionalFile(p) => format!("o:{p}"),
                    Request::Dir(p) => format!("d:{p}"),
                });
                let cmd = self.script(wsl::EXAMINE_SCRIPT, args);
                match probe::collect(&cmd, env, timeout, Scope::Tree, None).await {
                    Ok(run) => wsl::parse_examine_report(&String::from_utf8_lossy(&run.stdout)),
                    Err(e) => {
                        tracing::warn!("WSL file inspection failed: {e}");
                        Vec::new()
                    }
                }
            }
        }
    }

    /// Finds a command on the PATH there (for a shebang's `env` lookup).
    pub fn resolve(&self, host_env: &HostEnv, command: &str) -> Option<String> {
        match self {
            Host::Native { os } if os.is_windows() => resolve_windows(&host_env.env, command),
            Host::Native { .. } => resolve_unix(&host_env.env, command),
            // Only `node` is looked up inside WSL; other interpreters are left to the probes.
            Host::Wsl { .. } if command == "node" => host_env.node_on_path.clone(),
            Host::Wsl { .. } => Some(command.to_string()),
        }
    }

    /// Whether an absolute interpreter path exists there.
    pub fn exists(&self, path: &str) -> bool {
        match self {
            Host::Native { .. } => Path::new(path).is_file(),
            Host::Wsl { .. } => true,
        }
    }
}

fn nonce() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("{}_{}_{nanos}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

fn begin_marker(nonce: &str) -> String {
    format!("__RENNET_PATH_BEGIN_{nonce}__")
}

fn end_marker(nonce: &str) -> String {
    format!("__RENNET_PATH_END_{nonce}__")
}

/// The command the login shell runs: PATH between two markers. Each marker is printed in two
/// pieces, so a shell that echoes its input cannot produce a marker by echoing the command.
pub fn login_command(nonce: &str) -> String {
    format!(
        "printf '%s%s\\n' __RENNET_PATH_ 'BEGIN_{nonce}__'; printenv PATH; printf '%s%s\\n' __RENNET_PATH_ 'END_{nonce}__'"
    )
}

/// Arguments that make `shell` an interactive login shell running `command` (interactive so
/// that PATH set in `.zshrc`/`.bashrc` counts). tcsh accepts `-l` only on its own.
pub fn login_shell_args(shell: &str, command: &str) -> Vec<String> {
    let name = Os::Unix.file_name(shell);
    let flags: &[&str] = match name {
        "csh" | "tcsh" => &["-i", "-c"],
        _ => &["-l", "-i", "-c"],
    };
    flags.iter().map(|f| f.to_string()).chain([command.to_string()]).collect()
}

/// PATH from a login shell's output: the last non-empty line between the markers; banners,
/// prompts and escape sequences around them are ignored.
pub fn parse_login_output(stdout: &str, nonce: &str) -> Option<String> {
    let begin = begin_marker(nonce);
    let end = end_marker(nonce);
    let start = stdout.find(&begin)? + begin.len();
    let stop = start + stdout[start..].find(&end)?;
    stdout[start..stop]
        .lines()
        .map(|l| l.trim_matches(|c: char| c.is_whitespace() || c.is_control()))
        .rfind(|l| !l.is_empty())
        .map(str::to_string)
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

fn examine_native(os: Os, env: &Env, requests: &[Request]) -> Vec<(usize, FileInfo)> {
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

    #[test]
    fn login_output_between_markers() {
        let n = "1_2_3";
        let out = format!("Welcome!\n\x1b[?2004h{}\n/a/bin:/usr/bin\r\n{}\nbye\n", begin_marker(n), end_marker(n));
        assert_eq!(parse_login_output(&out, n).as_deref(), Some("/a/bin:/usr/bin"));
        // A banner inside the block: the PATH is the last line.
        let out = format!("{}\nnoise\n/x:/y\n{}", begin_marker(n), end_marker(n));
        assert_eq!(parse_login_output(&out, n).as_deref(), Some("/x:/y"));
        assert_eq!(parse_login_output(&format!("{}\n/x", begin_marker(n)), n), None);
        assert_eq!(parse_login_output("nothing", n), None);
        assert_eq!(parse_login_output(&format!("{}\n\n{}", begin_marker(n), end_marker(n)), n), None);
        // The command text does not contain the markers.
        let cmd = login_command(n);
        assert!(!cmd.contains(&begin_marker(n)) && !cmd.contains(&end_marker(n)));
    }

    #[test]
    fn login_shell_flags() {
        assert_eq!(login_shell_args("/bin/zsh", "x"), vec!["-l", "-i", "-c", "x"]);
        assert_eq!(login_shell_args("/usr/bin/fish", "x"), vec!["-l", "-i", "-c", "x"]);
        assert_eq!(login_shell_args("/bin/tcsh", "x"), vec!["-i", "-c", "x"]);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_login_command_works_in_sh() {
        let n = nonce();
        let env = Env::from_pairs([("PATH", "/usr/bin:/bin")], Os::Unix);
        let run = probe::collect(
            &Launch::new("/bin/sh", ["-c", &login_command(&n)]),
            &env,
            Duration::from_secs(5),
            Scope::Session,
            None,
        )
        .await
        .unwrap();
        assert_eq!(parse_login_output(&String::from_utf8_lossy(&run.stdout), &n).as_deref(), Some("/usr/bin:/bin"));
    }

    #[test]
    fn wsl_commands() {
        let host = Host::Wsl { exe: "/x/wsl.exe".into(), distro: "Ubuntu".into() };
        let cmd = host.command(&["/usr/bin/codex".to_string(), "--version".to_string()]);
        assert_eq!(cmd.argv(), vec!["/x/wsl.exe", "-d", "Ubuntu", "--exec", "/usr/bin/codex", "--version"]);
        assert!(cmd.wsl);
        assert_eq!(host.os(), Os::Unix);
    }
}
