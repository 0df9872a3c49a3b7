//! How a program is started: the one value every child of the package comes from — a turn's
//! or a call's `codex app-server`, the MCP inventory, discovery's probes and login shell, the
//! WSL helper scripts. Which Codex it is, and with which argv prefix, is decided once (see
//! [`crate::resolve`]); everything after that only adds the subcommand's arguments.

use super::{Scope, Spec};
use std::ffi::OsString;
use std::path::PathBuf;

/// `program prefix_args… <arguments>` in `cwd`, with `env`.
#[derive(Clone, PartialEq, Eq)]
pub struct Launch {
    pub program: PathBuf,
    /// Before the subcommand's arguments: `[script]` for a launcher run by its Node,
    /// `[-d, distro, --exec, codex]` through wsl.exe, `--cd <dir>` and so on.
    pub prefix_args: Vec<OsString>,
    pub cwd: PathBuf,
    /// Set over the inherited environment, or over none with `clear_env`.
    pub env: Vec<(String, String)>,
    pub clear_env: bool,
    /// Started through wsl.exe: a variable crosses into the distribution only when `WSLENV`
    /// names it, so [`Launch::add_env`] keeps it naming every variable given.
    pub wsl: bool,
}

impl std::fmt::Debug for Launch {
    // Variable names only: their values are often credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch")
            .field("program", &self.program)
            .field("prefix_args", &self.prefix_args)
            .field("cwd", &self.cwd)
            .field("env", &self.env.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("clear_env", &self.clear_env)
            .field("wsl", &self.wsl)
            .finish()
    }
}

impl Launch {
    /// `program prefix_args…` in the temporary directory, inheriting the environment: not
    /// wherever the host process happens to be (a deleted or slow directory).
    pub fn new(program: impl Into<PathBuf>, prefix_args: impl IntoIterator<Item = impl Into<OsString>>) -> Launch {
        Launch {
            program: program.into(),
            prefix_args: prefix_args.into_iter().map(Into::into).collect(),
            cwd: neutral_dir(),
            env: Vec::new(),
            clear_env: false,
            wsl: false,
        }
    }

    /// Merges `vars` over the environment given.
    pub fn add_env(&mut self, vars: Vec<(String, String)>) {
        for (key, value) in vars {
            self.env.retain(|(k, _)| *k != key);
            self.env.push((key, value));
        }
        if self.wsl {
            self.env = with_wslenv(&self.env);
        }
    }

    /// The argv that starts it, as a person would read it (`launcher` in discovery's report).
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.to_string_lossy().into_owned())
            .chain(self.prefix_args.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect()
    }

    /// This launch with `args` after its prefix: stdin closed, its own process group, no
    /// secrets to hide (set the fields for more).
    pub fn spec(&self, args: impl IntoIterator<Item = impl Into<OsString>>) -> Spec {
        let mut all = self.prefix_args.clone();
        all.extend(args.into_iter().map(Into::into));
        Spec { launch: self.clone(), args: all, stdin: false, scope: Scope::Tree, secrets: Vec::new() }
    }
}

/// The temporary directory, or the current one where it is missing.
pub fn neutral_dir() -> PathBuf {
    let temp = std::env::temp_dir();
    if temp.is_dir() {
        temp
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
    }
}

/// Variables cross from Windows into a distribution only when `WSLENV` names them.
pub(crate) fn with_wslenv(env: &[(String, String)]) -> Vec<(String, String)> {
    if env.is_empty() {
        return Vec::new();
    }
    let existing = env
        .iter()
        .find(|(k, _)| k == "WSLENV")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("WSLENV").ok())
        .unwrap_or_default();
    let mut names: Vec<String> = existing.split(':').filter(|n| !n.is_empty()).map(str::to_string).collect();
    for (key, _) in env {
        let listed = names.iter().any(|n| n.split('/').next() == Some(key.as_str()));
        if key != "WSLENV" && !listed {
            names.push(key.clone());
        }
    }
    let mut out: Vec<(String, String)> = env.iter().filter(|(k, _)| k != "WSLENV").cloned().collect();
    out.push(("WSLENV".into(), names.join(":")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn wslenv_names_every_variable_once() {
        let out = with_wslenv(&pairs(&[("A", "1"), ("WSLENV", "B/u:A/p"), ("C", "3")]));
        assert_eq!(out, pairs(&[("A", "1"), ("C", "3"), ("WSLENV", "B/u:A/p:C")]));
        assert!(with_wslenv(&[]).is_empty());
    }

    #[test]
    fn a_spec_puts_the_arguments_after_the_prefix_and_debug_hides_values() {
        let mut launch = Launch::new("/n/node", ["/n/codex.js"]);
        launch.add_env(pairs(&[("TOKEN", "canary-1")]));
        let spec = launch.spec(["app-server"]);
        assert_eq!(spec.args, vec![OsString::from("/n/codex.js"), OsString::from("app-server")]);
        assert_eq!(launch.argv(), vec!["/n/node".to_string(), "/n/codex.js".to_string()]);
        let debug = format!("{launch:?}");
        assert!(debug.contains("TOKEN") && !debug.contains("canary-1"), "{debug}");
    }
}
