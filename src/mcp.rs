//! N-API exports of the MCP policy (`rennet_codex::mcp_policy`), so that the installed-CLI proof
//! (`scripts/real-mcp-isolation.mjs`) and the tests exercise the shipped code path.
//!
//! Both take the JSON text of `{ cwd, codexPath?, launcher?, env?, mcp? }`: `launcher` is the
//! argv prefix of a launcher (`[node, codex.js]`), used instead of `codexPath`; without
//! either, `codex` is looked up on PATH. `env` is merged over the inherited environment.
//!
//! A policy failure rejects with a `GenericFailure` whose message starts with its stable code
//! (`MCP_NOT_LOOPBACK: …`): async exports cannot carry custom error codes (napi-notes §5).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rennet_codex::failure::Failure;
use rennet_codex::mcp_policy;
use rennet_codex::options::McpPolicy;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PolicyOptions {
    cwd: String,
    #[serde(default)]
    codex_path: Option<String>,
    #[serde(default)]
    launcher: Option<Vec<String>>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    mcp: Option<McpPolicy>,
}

struct Target {
    program: PathBuf,
    prefix: Vec<OsString>,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    policy: Option<McpPolicy>,
}

/// The options, validated as `runTurn`'s are; without `launcher` or `codexPath` the Codex
/// that discovery selects, as `runTurn` would run it.
async fn parse(options_json: &str) -> Result<Target> {
    crate::locate_guard();
    let invalid = |e: rennet_codex::input::OptionsError| Error::new(Status::InvalidArg, e.0);
    let options: PolicyOptions = rennet_codex::input::from_json(options_json).map_err(invalid)?;
    if !std::path::Path::new(&options.cwd).is_absolute() {
        return Err(Error::new(Status::InvalidArg, "options.cwd must be an absolute path"));
    }
    let env = options.env.unwrap_or_default();
    rennet_codex::input::check_env(&env).map_err(invalid)?;
    let env: Vec<(String, String)> = env.into_iter().collect();
    let (program, prefix) = match (options.launcher, options.codex_path) {
        (Some(launcher), _) => {
            let mut parts = launcher.into_iter();
            let program = parts
                .next()
                .filter(|p| !p.is_empty())
                .ok_or_else(|| Error::new(Status::InvalidArg, "options.launcher must name a program"))?;
            (PathBuf::from(program), parts.map(OsString::from).collect())
        }
        (None, Some(path)) if !path.is_empty() => (PathBuf::from(path), Vec::new()),
        (None, _) => {
            let wanted = rennet_codex::discovery::DiscoverOptions { locus: None, env: env.clone(), refresh: false };
            let discovery = rennet_codex::discovery::discover(&wanted).await;
            let selected = discovery.selected.as_ref().ok_or_else(|| {
                Error::new(
                    Status::GenericFailure,
                    format!(
                        "CODEX_NOT_FOUND: {}",
                        discovery.reason.as_deref().unwrap_or("no usable Codex CLI was found")
                    ),
                )
            })?;
            let launch = selected.launch();
            (launch.program, launch.prefix_args)
        }
    };
    Ok(Target { program, prefix, cwd: PathBuf::from(options.cwd), env, policy: options.mcp })
}

fn policy_error(e: Failure) -> Error {
    Error::new(Status::GenericFailure, e.to_string())
}

/// What a child needs for an MCP policy: the arguments after `app-server` and the variables
/// holding header values (merge them over the child's environment; never log them).
#[napi(object)]
pub struct McpPolicyLaunch {
    pub args: Vec<String>,
    pub env: std::collections::HashMap<String, String>,
}

/// What `runTurn` adds to the child for `options.mcp`: `args`
/// (`["--disable", "plugins", "-c", "mcp_servers=<inline TOML>"]`) and `env` (the header
/// values). Runs `codex mcp list --json` first. Rejects with `MCP_NOT_LOOPBACK`,
/// `MCP_POLICY_INVALID`, `MCP_INVENTORY_FAILED`, `MCP_INVENTORY_INVALID` or
/// `MCP_NAME_COLLISION` at the start of the message.

#[napi(ts_args_type = "optionsJson: string")]
pub async fn mcp_policy_args(options_json: String) -> Result<McpPolicyLaunch> {
    let target = parse(&options_json).await?;
    let policy = target.policy.ok_or_else(|| Error::new(Status::InvalidArg, "options.mcp is required"))?;
    let launch = mcp_policy::prepare(&target.program, &target.prefix, &target.cwd, &target.env, &policy)
        .await
        .map_err(policy_error)?;
    Ok(McpPolicyLaunch {
        args: launch.args.into_iter().map(|a| a.to_string_lossy().into_owned()).collect(),
        env: launch.env.into_iter().collect(),
    })
}

/// The configured MCP servers as the policy sees them: JSON text of
/// `[{name, enabled, transport: "stdio" | "streamable_http"}]` (no commands, URLs or headers).
#[napi(ts_args_type = "optionsJson: string")]
pub async fn mcp_inventory(options_json: String) -> Result<String> {
    let target = parse(&options_json).await?;
    let servers = mcp_policy::configured_servers(&target.program, &target.prefix, &target.cwd, &target.env)
        .await
        .map_err(policy_error)?;
    serde_json::to_string(&servers).map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
}
