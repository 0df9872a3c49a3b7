//! Which Codex a turn (or a call around turns, or the MCP proof) starts, and where: the
//! caller's `codexPath`, else the Codex that discovery selected; with a WSL locus, through
//! `wsl.exe` inside the distribution. Every entry point's [`Target`] (its options, checked in
//! [`crate::options::target`]) resolves here into one [`Launch`].

use crate::discovery::{self, env::Env, env::Os, wsl, DiscoverOptions};
use crate::failure::{Code, Failure, FailureSource};
pub use crate::options::target::Target;
use crate::process::Launch;
use serde_json::json;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A resolved Codex: how to start it, and the executable `started.codexPath` names.
#[derive(Debug)]
pub struct Resolved {
    pub launch: Launch,
    pub codex_path: String,
}

/// The discovery a target without `codexPath` waits for (see [`resolve`]); joined as early
/// as possible, so that it runs while other work does.
pub fn discovery_for(target: &Target) -> Option<discovery::Waiter> {
    let locus = target.locus.as_ref().map(|l| l.wsl.clone());
    target
        .codex_path
        .is_none()
        .then(|| discovery::join(&DiscoverOptions { locus, env: target.env.clone(), refresh: false }))
}

/// `discovery` is [`discovery_for`]'s waiter when the target names no Codex.
pub async fn resolve(target: &Target, discovery: Option<&discovery::Waiter>) -> Result<Resolved, Failure> {
    let wsl = target.locus.as_ref().map(|l| l.wsl.clone());
    let (mut launch, codex_path) = match (&target.codex_path, &wsl) {
        (Some(path), None) => (Launch::new(path, std::iter::empty::<OsString>()), path.clone()),
        (Some(path), Some(wsl)) => {
            let exe = wsl_exe(target, &wsl.distro)?;
            let mut launch = Launch::new(exe, ["-d", wsl.distro.as_str(), "--exec", path.as_str()]);
            launch.wsl = true;
            (launch, path.clone())
        }
        (None, _) => {
            let discovery =
                discovery.expect("discovery_for joins a discovery when no codexPath is given").result().await;
            match &discovery.selected {
                Some(selected) => (selected.launch(), selected.path.clone()),
                None => {
                    let reason = discovery.reason.clone().unwrap_or_else(|| "no usable Codex CLI was found".into());
                    let detail = serde_json::to_value(&*discovery).unwrap_or_else(|_| json!({}));
                    return Err(Failure::new(FailureSource::Spawn, Code::CodexNotFound, reason).with_detail(detail));
                }
            }
        }
    };
    launch.env.clear();
    launch.clear_env = false;
    launch.cwd = PathBuf::from(&target.cwd);
    if launch.wsl {
        // wsl.exe maps its own working directory into the distribution only for Windows
        // paths; `--cd` says it for every form the caller may give.
        let mut prefix: Vec<OsString> = vec!["--cd".into(), target.thread_cwd.clone().into()];
        prefix.append(&mut launch.prefix_args);
        launch.prefix_args = prefix;
        if !launch.cwd.is_dir() {
            launch.cwd = std::env::temp_dir();
        }
    }
    launch.add_env(target.env.clone());
    Ok(Resolved { launch, codex_path })
}

fn wsl_exe(target: &Target, distro: &str) -> Result<PathBuf, Failure> {
    let os = Os::current();
    wsl::wsl_exe(&Env::from_process(&target.env, os), os, &|p| Path::new(p).is_file())
        .map(PathBuf::from)
        .ok_or_else(|| Failure::new(FailureSource::Spawn, Code::CodexNotFound, wsl::not_found(distro)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// An absolute path on this platform.
    const TMP: &str = if cfg!(windows) { r"C:\tmp" } else { "/tmp" };

    fn env(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
        Some(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[tokio::test]
    async fn a_codex_path_starts_in_the_cwd_with_the_env_given() {
        let target = Target::parse(TMP.into(), Some("/opt/codex".into()), None, env(&[("A", "1")])).unwrap();
        let resolved = resolve(&target, None).await.unwrap();
        assert_eq!(resolved.codex_path, "/opt/codex");
        assert_eq!(resolved.launch.argv(), vec!["/opt/codex".to_string()]);
        assert_eq!(resolved.launch.cwd, PathBuf::from(TMP));
        assert_eq!(resolved.launch.env, vec![("A".to_string(), "1".to_string())]);
        assert!(!resolved.launch.clear_env && !resolved.launch.wsl);
    }
}
