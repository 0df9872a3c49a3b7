//! The options of the MCP policy's own entry points (what `runTurn` would add for `mcp`, and
//! the configured inventory), which the installed-CLI proof and the tests call:
//! `{ cwd, codexPath?, launcher?, locus?, env?, mcp? }`. The Codex is resolved exactly as a
//! turn resolves it ([`crate::target`]); `launcher` (an argv prefix such as `[node, codex.js]`)
//! stands in for `codexPath` where the proof runs a launcher script directly.

use crate::failure::Failure;
use crate::input::{from_json, invalid, OptionsError};
use crate::locus::Locus;
use crate::options::McpPolicy;
use crate::process::Launch;
use crate::target::{self, Target};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawRequest {
    cwd: String,
    #[serde(default)]
    codex_path: Option<String>,
    #[serde(default)]
    launcher: Option<Vec<String>>,
    #[serde(default)]
    locus: Option<Locus>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    mcp: Option<McpPolicy>,
}

pub struct PolicyRequest {
    pub target: Target,
    launcher: Option<Vec<String>>,
    pub policy: Option<McpPolicy>,
}

impl PolicyRequest {
    pub fn parse(json: &str) -> Result<PolicyRequest, OptionsError> {
        let raw: RawRequest = from_json(json)?;
        if raw.launcher.as_ref().is_some_and(|l| l.first().is_none_or(String::is_empty)) {
            return Err(invalid("options.launcher must name a program"));
        }
        if raw.launcher.is_some() && raw.locus.is_some() {
            return Err(invalid("options.launcher cannot be combined with options.locus"));
        }
        let target = Target::parse(raw.cwd, raw.codex_path, raw.locus, raw.env)?;
        Ok(PolicyRequest { target, launcher: raw.launcher, policy: raw.mcp })
    }

    /// The launch of the child the policy is for.
    pub async fn launch(&self) -> Result<Launch, Failure> {
        if let Some(argv) = &self.launcher {
            let mut launch = Launch::new(&argv[0], &argv[1..]);
            launch.cwd = PathBuf::from(&self.target.cwd);
            launch.add_env(self.target.env.clone());
            return Ok(launch);
        }
        let discovery = target::discovery_for(&self.target);
        Ok(target::resolve(&self.target, discovery.as_ref()).await?.launch)
    }
}
