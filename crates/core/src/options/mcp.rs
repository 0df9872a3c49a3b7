//! The MCP policy a turn is given (`mcp: { servers }`), and the options of the policy's own entry
//! points (what `runTurn` would add for `mcp`, and the configured inventory), which the
//! installed-CLI proof and the tests call: `{ cwd, codexPath?, launcher?, locus?, env?, mcp? }`.
//! `launcher` (an argv prefix such as `[node, codex.js]`) stands in for `codexPath` where the
//! proof runs a launcher script directly.

use super::json::{from_json, invalid, OptionsError};
use super::locus::Locus;
use super::target::Target;
use serde::Deserialize;
use std::collections::BTreeMap;

/// `Debug` shows header names, never their values.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServer {
    pub url: String,
    #[serde(default)]
    pub bearer_token_env_var: Option<String>,
    #[serde(default)]
    pub http_headers: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct McpPolicy {
    pub servers: BTreeMap<String, McpServer>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("url", &"<redacted>")
            .field("bearer_token_env_var", &self.bearer_token_env_var)
            .field("http_headers", &self.http_headers.as_ref().map(|h| h.keys().collect::<Vec<_>>()))
            .finish()
    }
}

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
    /// An argv prefix (`[node, codex.js]`) used instead of `codexPath`.
    pub launcher: Option<Vec<String>>,
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
}
