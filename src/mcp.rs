//! N-API exports of the MCP policy (`rennet_codex::mcp_policy`), so that the installed-CLI proof
//! (`scripts/real-mcp-isolation.mjs`) and the tests exercise the shipped code path.
//!
//! Both take the JSON text of `{ cwd, codexPath?, launcher?, locus?, env?, mcp?,
//! requestTimeoutMs? }`, resolved
//! by the core as a turn's options are (`rennet_codex::mcp_policy::request`): `launcher` is
//! the argv prefix of a launcher (`[node, codex.js]`), used instead of `codexPath`; without
//! either, the Codex discovery selects.
//!
//! A policy failure rejects with a `GenericFailure` whose message starts with its stable code
//! (`MCP_NOT_LOOPBACK: …`): async exports cannot carry custom error codes (napi-notes §5).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rennet_codex::failure::Failure;
use rennet_codex::mcp_policy;
use rennet_codex::options::mcp::PolicyRequest;
use rennet_codex::process::Launch;

/// The options, validated as `runTurn`'s are, and the launch the turn would start.
async fn parse(options_json: &str) -> Result<(PolicyRequest, Launch)> {
    crate::locate_guard();
    let request = PolicyRequest::parse(options_json).map_err(|e| Error::new(Status::InvalidArg, e.0))?;
    let launch = mcp_policy::request::launch(&request).await.map_err(policy_error)?;
    Ok((request, launch))
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
/// values). Runs `codex mcp list --json` first (within `requestTimeoutMs`, default 30000).
/// Rejects with `MCP_NOT_LOOPBACK`, `MCP_POLICY_INVALID`, `MCP_INVENTORY_FAILED`,
/// `MCP_INVENTORY_INVALID`, `MCP_INVENTORY_TOO_LARGE`, `REQUEST_TIMEOUT` or
/// `MCP_NAME_COLLISION` at the start of the message.

#[napi(ts_args_type = "optionsJson: string")]
pub async fn mcp_policy_args(options_json: String) -> Result<McpPolicyLaunch> {
    let (request, child) = parse(&options_json).await?;
    let policy = request.policy.ok_or_else(|| Error::new(Status::InvalidArg, "options.mcp is required"))?;
    let launch = mcp_policy::prepare(&child, &policy, request.request_timeout).await.map_err(policy_error)?;
    Ok(McpPolicyLaunch {
        args: launch.args.into_iter().map(|a| a.to_string_lossy().into_owned()).collect(),
        env: launch.env.into_iter().collect(),
    })
}

/// The configured MCP servers as the policy sees them: JSON text of
/// `[{name, enabled, transport: "stdio" | "streamable_http"}]` (no commands, URLs or headers).
#[napi(ts_args_type = "optionsJson: string")]
pub async fn mcp_inventory(options_json: String) -> Result<String> {
    let (request, child) = parse(&options_json).await?;
    let servers = mcp_policy::inventory::read(&child, request.request_timeout).await.map_err(policy_error)?;
    serde_json::to_string(&servers).map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
}
