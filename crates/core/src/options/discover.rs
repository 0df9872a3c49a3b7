//! `discoverCodex`'s options: a locus, an environment, and whether to probe again.

use super::locus::Locus;
use crate::discovery::DiscoverOptions;
use serde::Deserialize;
use std::collections::BTreeMap;
use ts_rs::TS;

/// What `discoverCodex` takes: where to look, with which environment, and whether to look again.
#[derive(Deserialize, TS, Default)]
#[serde(deny_unknown_fields)]
#[ts(rename = "DiscoverOptions")]
pub struct DiscoverCodexOptions {
    /// Discover inside this WSL distribution (through `wsl.exe`).
    #[serde(default)]
    #[ts(optional)]
    pub locus: Option<Locus>,
    /// Merged over the process environment (`PATH`, `HOME`, `SHELL`, `RENNET_CODEX_BIN`, …).
    #[serde(default)]
    #[ts(optional, type = "Record<string, string>")]
    pub env: Option<BTreeMap<String, String>>,
    /// Probe again instead of answering from the per-process cache.
    #[serde(default)]
    #[ts(optional)]
    pub refresh: Option<bool>,
}

/// Parses the JSON text of `discoverCodex` options. Errors name the option
/// (`options.env.A: invalid type …`).
pub fn parse(json: Option<&str>) -> Result<DiscoverOptions, String> {
    let json = json.map(str::trim).filter(|j| !j.is_empty() && *j != "null" && *j != "undefined");
    let raw: DiscoverCodexOptions = match json {
        None => DiscoverCodexOptions::default(),
        Some(json) => super::json::from_json(json).map_err(|e| e.0)?,
    };
    let locus = match raw.locus {
        Some(locus) if locus.wsl.distro.trim().is_empty() => {
            return Err("options.locus.wsl.distro must be a non-empty string".into())
        }
        Some(locus) => Some(locus.wsl),
        None => None,
    };
    let env = raw.env.unwrap_or_default();
    super::json::check_env(&env).map_err(|e| e.0)?;
    Ok(DiscoverOptions { locus, env: env.into_iter().collect(), refresh: raw.refresh.unwrap_or(false) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::locus::Wsl;
    #[test]
    fn options_from_json() {
        let o = parse(None).unwrap();
        assert!(o.locus.is_none() && o.env.is_empty() && !o.refresh);
        let o = parse(Some("null")).unwrap();
        assert!(o.locus.is_none());
        let o = parse(Some(r#"{"locus":{"wsl":{"distro":"Ubuntu"}},"env":{"A":"1"},"refresh":true}"#)).unwrap();
        assert_eq!(o.locus, Some(Wsl { distro: "Ubuntu".into() }));
        assert_eq!(o.env, vec![("A".to_string(), "1".to_string())]);
        assert!(o.refresh);
        let err = |json: &str| parse(Some(json)).unwrap_err();
        assert!(err(r#"{"env":{"A":1}}"#).starts_with("options.env.A:"), "{}", err(r#"{"env":{"A":1}}"#));
        assert!(err(r#"{"refresh":"yes"}"#).starts_with("options.refresh:"));
        assert!(err(r#"{"locus":{"wsl":{}}}"#).starts_with("options.locus.wsl"), "{}", err(r#"{"locus":{"wsl":{}}}"#));
        assert!(err(r#"{"locus":{"wsl":{"distro":""}}}"#).starts_with("options.locus.wsl.distro"));
        assert!(err(r#"{"locus":{"docker":{}}}"#).starts_with("options.locus"));
        assert!(err(r#"{"refesh":true}"#).contains("refesh"));
        assert!(err(r#"{"env":{"A=B":"1"}}"#).starts_with("options.env"));
        assert!(err("[1]").starts_with("options"));
    }
}
