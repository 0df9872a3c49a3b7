//! Which program starts `codex app-server` for a turn, with which argv prefix, working
//! directory and environment: the caller's `codexPath`, else the Codex that discovery
//! selected; with a WSL locus, through `wsl.exe` inside the distribution.

use crate::discovery::{self, env::Env, env::Os, wsl, DiscoverOptions};
use crate::failure::{Code, Failure, FailureSource};
use crate::locus::Wsl;
use crate::options::TurnOptions;
use serde_json::json;
use std::ffi::OsString;
use std::path::PathBuf;

/// The child of one turn: `program prefix_args… app-server …`.
#[derive(Debug)]
pub struct ChildLaunch {
    pub program: PathBuf,
    pub prefix_args: Vec<OsString>,
    /// Where the host process starts (inside WSL the distribution path is given by `--cd`).
    pub host_cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// The Codex executable as reported in `started.codexPath`.
    pub codex_path: String,
    /// Started through wsl.exe: variables cross only when `WSLENV` names them.
    wsl: bool,
}

impl ChildLaunch {
    /// Merges `vars` over the child's environment.
    pub fn add_env(&mut self, vars: Vec<(String, String)>) {
        for (key, value) in vars {
            self.env.retain(|(k, _)| *k != key);
            self.env.push((key, value));
        }
        if self.wsl {
            self.env = with_wslenv(&self.env);
        }
    }
}

/// The discovery a turn without `codexPath` waits for (see [`resolve`]).
pub fn discovery_for(options: &TurnOptions) -> Option<discovery::Waiter> {
    let locus = options.locus.as_ref().map(|l| l.wsl.clone());
    options
        .codex_path
        .is_none()
        .then(|| discovery::join(&DiscoverOptions { locus, env: options.env.clone(), refresh: false }))
}

/// `discovery` is [`discovery_for`]'s waiter when the options name no Codex.
pub async fn resolve(options: &TurnOptions, discovery: Option<&discovery::Waiter>) -> Result<ChildLaunch, Failure> {
    let target = options.locus.as_ref().map(|l| l.wsl.clone());
    let (program, prefix_args, codex_path) = match (&options.codex_path, &target) {
        (Some(path), None) => (PathBuf::from(path), Vec::new(), path.clone()),
        (Some(path), Some(target)) => {
            let exe = wsl_exe(options, target)?;
            (exe, wsl_prefix(&target.distro, path), path.clone())
        }
        (None, _) => {
            let discovery =
                discovery.expect("discovery_for joins a discovery when no codexPath is given").result().await;
            match &discovery.selected {
                Some(selected) => {
                    let launch = selected.launch();
                    (launch.program, launch.prefix_args, selected.path.clone())
                }
                None => {
                    let reason = discovery.reason.clone().unwrap_or_else(|| "no usable Codex CLI was found".into());
                    let detail = serde_json::to_value(&*discovery).unwrap_or_else(|_| json!({}));
                    return Err(Failure::new(FailureSource::Spawn, Code::CodexNotFound, reason).with_detail(detail));
                }
            }
        }
    };
    if target.is_none() {
        return Ok(ChildLaunch {
            program,
            prefix_args,
            host_cwd: options.cwd.clone().into(),
            env: options.env.clone(),
            codex_path,
            wsl: false,
        });
    }
    // wsl.exe maps its own working directory into the distribution only for Windows paths;
    // `--cd` says it for every form the caller may give.
    let mut args: Vec<OsString> = vec!["--cd".into(), options.thread_cwd.clone().into()];
    args.extend(prefix_args);
    let host_cwd = PathBuf::from(&options.cwd);
    let host_cwd = if host_cwd.is_dir() { host_cwd } else { std::env::temp_dir() };
    Ok(ChildLaunch { program, prefix_args: args, host_cwd, env: with_wslenv(&options.env), codex_path, wsl: true })
}

fn wsl_exe(options: &TurnOptions, target: &Wsl) -> Result<PathBuf, Failure> {
    let os = Os::current();
    wsl::wsl_exe(&Env::from_process(&options.env, os), os, &|p| std::path::Path::new(p).is_file())
        .map(PathBuf::from)
        .ok_or_else(|| Failure::new(FailureSource::Spawn, Code::CodexNotFound, wsl::not_found(&target.distro)))
}

fn wsl_prefix(distro: &str, codex: &str) -> Vec<OsString> {
    ["-d", distro, "--exec", codex].into_iter().map(OsString::from).collect()
}

/// Variables cross from Windows into a distribution only when `WSLENV` names them.
fn with_wslenv(env: &[(String, String)]) -> Vec<(String, String)> {
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
    use super::with_wslenv;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn wslenv_names_every_variable_once() {
        let out = with_wslenv(&pairs(&[("A", "1"), ("WSLENV", "B/u:A/p"), ("C", "3")]));
        assert_eq!(out, pairs(&[("A", "1"), ("C", "3"), ("WSLENV", "B/u:A/p:C")]));
        assert!(with_wslenv(&[]).is_empty());
    }
}
