//! Where discovery looks and where its probes run: this machine (`Machine::Local`, whose
//! side is local.rs), or a WSL distribution reached through `wsl.exe -d <distro> --exec …`
//! (`Machine::Wsl`, whose scripts are wsl.rs'). Both answer the same questions — the
//! environment machine_env, the login shell's PATH, what the candidate files are — so the ranking
//! and probing above them are the same code. (Not "host": in this package the host is the
//! Node process, whose death the guard watches.)

use super::env::{Env, Os};
use super::file::{FileInfo, Request};
use super::local;
use super::locations;
use super::login_shell::{self, LoginPath};
use super::probe;
use super::wsl;
use crate::process::{Launch, Scope};
use std::time::Duration;

#[derive(Clone, Debug)]
pub enum Machine {
    Local { os: Os },
    Wsl { exe: String, distro: String },
}

/// The environment as seen where the candidates live.
#[derive(Clone, Debug)]
pub struct MachineEnv {
    pub env: Env,
    /// The `node` that `#!/usr/bin/env node` would find machine_env.
    pub node_on_path: Option<String>,
}

impl Machine {
    /// Whose path conventions the candidates follow.
    pub fn os(&self) -> Os {
        match self {
            Machine::Local { os } => *os,
            Machine::Wsl { .. } => Os::Unix,
        }
    }

    /// The command that runs `argv` machine_env.
    pub fn command(&self, argv: &[String]) -> Launch {
        match self {
            Machine::Local { .. } => Launch::new(&argv[0], &argv[1..]),
            Machine::Wsl { exe, distro } => {
                let mut args = vec!["-d".to_string(), distro.clone(), "--exec".to_string()];
                args.extend(argv.iter().cloned());
                let mut launch = Launch::new(exe, args);
                launch.wsl = true;
                launch
            }
        }
    }

    /// `sh -c <script> sh <args…>` machine_env.
    fn script(&self, script: &str, args: impl IntoIterator<Item = String>) -> Launch {
        let mut argv = vec!["/bin/sh".to_string(), "-c".to_string(), script.to_string(), "sh".to_string()];
        argv.extend(args);
        self.command(&argv)
    }

    /// The environment machine_env. `env` is the one this process was given (merged over its own).
    pub async fn environment(&self, env: &Env, timeout: Duration) -> Result<MachineEnv, String> {
        match self {
            Machine::Local { os } => {
                Ok(MachineEnv { env: env.clone(), node_on_path: local::resolve(*os, env, "node") })
            }
            Machine::Wsl { distro, .. } => {
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
                Ok(MachineEnv { env, node_on_path })
            }
        }
    }

    /// Asks the user's login shell machine_env for its PATH.
    pub async fn login_path(&self, machine_env: &MachineEnv, env: &Env, timeout: Duration) -> LoginPath {
        let nonce = login_shell::nonce();
        let command = login_shell::login_command(&nonce);
        let (cmd, run_env) = match self {
            Machine::Local { os } if os.is_windows() => {
                return LoginPath::Unavailable("Windows has no login shell".into());
            }
            Machine::Local { .. } => {
                let Some(shell) = machine_env.env.get("SHELL") else {
                    return LoginPath::Unavailable("SHELL is not set".into());
                };
                (Launch::new(shell, login_shell::login_shell_args(shell, &command)), &machine_env.env)
            }
            Machine::Wsl { .. } => {
                let secs = timeout.as_secs().max(1).to_string();
                (self.script(wsl::LOGIN_SCRIPT, [command.clone(), secs]), env)
            }
        };
        login_shell::ask(&cmd, run_env, timeout, &nonce).await
    }

    /// The facts about every file the requests name, each with its request's index.
    pub async fn examine(
        &self,
        machine_env: &MachineEnv,
        env: &Env,
        requests: &[Request],
        timeout: Duration,
    ) -> Vec<(usize, FileInfo)> {
        if requests.is_empty() {
            return Vec::new();
        }
        match self {
            Machine::Local { os } => {
                let (os, env, requests) = (*os, machine_env.env.clone(), requests.to_vec());
                tokio::task::spawn_blocking(move || local::examine(os, &env, &requests)).await.unwrap_or_default()
            }
            Machine::Wsl { .. } => {
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

    /// Finds a command on the PATH machine_env (for a shebang's `env` lookup).
    pub fn resolve(&self, machine_env: &MachineEnv, command: &str) -> Option<String> {
        match self {
            Machine::Local { os } => local::resolve(*os, &machine_env.env, command),
            // Only `node` is looked up inside WSL; other interpreters are left to the probes.
            Machine::Wsl { .. } if command == "node" => machine_env.node_on_path.clone(),
            Machine::Wsl { .. } => Some(command.to_string()),
        }
    }

    /// Whether an absolute interpreter path exists machine_env.
    pub fn exists(&self, path: &str) -> bool {
        match self {
            Machine::Local { .. } => local::exists(path),
            Machine::Wsl { .. } => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wsl_commands() {
        let machine = Machine::Wsl { exe: "/x/wsl.exe".into(), distro: "Ubuntu".into() };
        let cmd = machine.command(&["/usr/bin/codex".to_string(), "--version".to_string()]);
        assert_eq!(cmd.argv(), vec!["/x/wsl.exe", "-d", "Ubuntu", "--exec", "/usr/bin/codex", "--version"]);
        assert!(cmd.wsl);
        assert_eq!(machine.os(), Os::Unix);
    }
}
