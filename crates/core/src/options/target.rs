//! Where a run's Codex runs and which one, as the caller gave it: `cwd`, `codexPath`, `locus`
//! and `env`, the options every entry point shares. Resolving it into a launch is
//! [`crate::resolve`]'s.

use super::json::{check_env, invalid, OptionsError};
use super::locus::Locus;
use std::collections::BTreeMap;
use std::path::Path;

/// Where Codex runs and which one, validated.
#[derive(Clone)]
pub struct Target {
    /// The working directory as the caller gave it (a host path).
    pub cwd: String,
    /// The working directory as Codex sees it: `cwd` itself, or with a WSL locus its path
    /// inside the distribution. This is what `thread/start` and `turn/start` carry.
    pub thread_cwd: String,
    pub codex_path: Option<String>,
    pub locus: Option<Locus>,
    /// Merged over the inherited environment for the child.
    pub env: Vec<(String, String)>,
}

impl std::fmt::Debug for Target {
    // Variable names only: their values are often credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("cwd", &self.cwd)
            .field("thread_cwd", &self.thread_cwd)
            .field("codex_path", &self.codex_path)
            .field("locus", &self.locus)
            .field("env", &self.env.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .finish()
    }
}

impl Target {
    /// Validates the options every entry point shares; errors name `options.<field>`.
    pub fn parse(
        cwd: String,
        codex_path: Option<String>,
        locus: Option<Locus>,
        env: Option<BTreeMap<String, String>>,
    ) -> Result<Target, OptionsError> {
        if !Path::new(&cwd).is_absolute() && locus.is_none() {
            return Err(invalid(format!("options.cwd must be an absolute path, got {cwd:?}")));
        }
        if matches!(&codex_path, Some(p) if p.is_empty()) {
            return Err(invalid("options.codexPath must be a non-empty string"));
        }
        let thread_cwd = match &locus {
            None => cwd.clone(),
            Some(locus) if locus.wsl.distro.trim().is_empty() => {
                return Err(invalid("options.locus.wsl.distro must be a non-empty string"));
            }
            Some(locus) => super::locus::wsl_path(&cwd, &locus.wsl.distro).ok_or_else(|| {
                invalid(format!(
                    "options.cwd {:?} has no path inside the WSL distribution {:?}: give an absolute Windows path, a \\\\wsl$\\{} path or a path of the distribution",
                    cwd, locus.wsl.distro, locus.wsl.distro
                ))
            })?,
        };
        let env = env.unwrap_or_default();
        check_env(&env)?;
        Ok(Target { cwd, thread_cwd, codex_path, locus, env: env.into_iter().collect() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An absolute path on this platform.
    const TMP: &str = if cfg!(windows) { r"C:\tmp" } else { "/tmp" };

    fn env(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
        Some(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn errors_name_the_option() {
        let err = |cwd: &str, path: Option<&str>| {
            Target::parse(cwd.into(), path.map(str::to_string), None, None).unwrap_err().0
        };
        assert!(err("rel", None).starts_with("options.cwd must be an absolute path"));
        assert!(err(TMP, Some("")).starts_with("options.codexPath"));
        let bad_env = Target::parse(TMP.into(), None, None, env(&[("A=B", "1")])).unwrap_err().0;
        assert!(bad_env.starts_with("options.env"), "{bad_env}");
    }
}
