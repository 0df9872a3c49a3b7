//! The explicit MCP policy for a `codex app-server` child.
//!
//! `mcp` absent: nothing here runs; the child inherits the user's MCP servers and plugins.
//! With a policy (`{servers: {}}` included):
//!
//! 1. every requested server is validated: a loopback `http(s)` URL (`MCP_NOT_LOOPBACK`),
//!    a sane name, bearer-token variable name and headers (`MCP_POLICY_INVALID`);
//! 2. `codex mcp list --json` runs with the child's binary, launcher prefix, environment,
//!    working directory and `--disable plugins`, and its output is validated
//!    (`MCP_INVENTORY_FAILED` when the command fails, `MCP_INVENTORY_INVALID` for its shape),
//!    within the turn's `requestTimeoutMs` (`REQUEST_TIMEOUT`) and
//!    [`inventory::INVENTORY_MAX_OUTPUT`] of output (`MCP_INVENTORY_TOO_LARGE`);
//! 3. a requested name that is already configured stops here (`MCP_NAME_COLLISION`): Codex
//!    would keep that entry's nested transport and header fields while merging;
//! 4. one inline TOML table holds the requested servers plus `{ enabled = false }` for every
//!    configured server (see [`render::placeholder`] for why that form), and the child gets
//!    `--disable plugins -c mcp_servers=<table>` so that plugin discovery cannot start
//!    background processes outside the policy.
//!
//! All of it happens before the app-server child starts. Errors name servers, never header
//! values or bearer-token variable names; nothing here logs.
//!
//! Header values never enter the child's argv, which any local user can read (`ps`,
//! `/proc/<pid>/cmdline`): the table names them through `env_http_headers`, and the values
//! travel in the child's environment ([`PolicyLaunch::env`]), readable only by the same user.

pub mod inventory;
pub mod loopback;
pub mod render;
pub mod request;

use crate::failure::{Code, Failure, FailureSource};
use crate::options::{McpPolicy, McpServer};
use crate::process::Launch;
use inventory::ConfiguredServer;
use serde_json::{json, Value};
use std::ffi::OsString;
use std::time::Duration;

/// Why the policy cannot be applied (source `spawn`: nothing was started). Its message and
/// detail contain no header value and no bearer-token variable name.
pub(crate) fn refused(code: Code, message: impl Into<String>, detail: Value) -> Failure {
    Failure::new(FailureSource::Spawn, code, message).with_detail(detail)
}

/// What the child needs for a policy: arguments right after `app-server`
/// (`["--disable", "plugins", "-c", "mcp_servers=<table>"]`) and the variables that hold the
/// header values, to merge over the child's environment.
#[derive(Clone, PartialEq)]
pub struct PolicyLaunch {
    pub args: Vec<OsString>,
    pub env: Vec<(String, String)>,
}

impl std::fmt::Debug for PolicyLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyLaunch")
            .field("args", &self.args)
            .field("env", &self.env.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .finish()
    }
}

/// Validates the policy, reads the configured inventory with the child's own launch (its
/// program, launcher prefix, directory and environment) within `timeout`, and returns what the
/// child needs.
pub async fn prepare(launch: &Launch, policy: &McpPolicy, timeout: Duration) -> Result<PolicyLaunch, Failure> {
    validate(policy)?;
    let configured = inventory::read(launch, timeout).await?;
    args_for(policy, &configured)
}

/// Steps 3 and 4 of `prepare` on an inventory already read (the policy already validated).
pub fn args_for(policy: &McpPolicy, configured: &[ConfiguredServer]) -> Result<PolicyLaunch, Failure> {
    check_collisions(policy, configured)?;
    let (table, env) = render::table(policy, configured);
    let table = render::inline(table);
    Ok(PolicyLaunch {
        args: vec!["--disable".into(), "plugins".into(), "-c".into(), format!("mcp_servers={table}").into()],
        env,
    })
}

fn check_collisions(policy: &McpPolicy, configured: &[ConfiguredServer]) -> Result<(), Failure> {
    let clashes: Vec<&str> =
        configured.iter().filter(|c| policy.servers.contains_key(&c.name)).map(|c| c.name.as_str()).collect();
    if clashes.is_empty() {
        return Ok(());
    }
    let names = clashes.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
    Err(refused(
        Code::McpNameCollision,
        format!(
            "requested MCP server name {names} is already configured for Codex (user or project configuration); \
             Codex would merge the request into that entry and keep its transport and header fields, so choose another name"
        ),
        json!({"servers": clashes}),
    ))
}

/// Checks every requested server without running anything. The first problem wins (servers
/// in name order).
pub fn validate(policy: &McpPolicy) -> Result<(), Failure> {
    for (name, server) in &policy.servers {
        validate_server(name, server)?;
    }
    Ok(())
}

fn invalid(name: &str, field: &str, problem: &str) -> Failure {
    refused(
        Code::McpPolicyInvalid,
        format!("MCP server {name:?}: {field} {problem}"),
        json!({"server": name, "field": field}),
    )
}

fn validate_server(name: &str, server: &McpServer) -> Result<(), Failure> {
    if name.is_empty() {
        return Err(refused(
            Code::McpPolicyInvalid,
            "MCP server names must be non-empty",
            json!({"server": name, "field": "name"}),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(refused(
            Code::McpPolicyInvalid,
            format!("MCP server name {name:?} contains control characters"),
            json!({"server": name, "field": "name"}),
        ));
    }
    if let Err(reason) = loopback::check(&server.url) {
        return Err(refused(
            Code::McpNotLoopback,
            format!(
                "MCP server {name:?}: url must be an http(s) URL on loopback (localhost, 127.0.0.0/8 or [::1]), but {}",
                reason.explain()
            ),
            json!({"server": name, "field": "url", "reason": reason.as_str()}),
        ));
    }
    if let Some(var) = &server.bearer_token_env_var {
        if var.is_empty() || var.contains('=') || var.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(invalid(name, "bearerTokenEnvVar", "is not a valid environment variable name"));
        }
    }
    if let Some(headers) = &server.http_headers {
        for (header, value) in headers {
            // RFC 9110 field names are tokens.
            let token = !header.is_empty()
                && header.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !token {
                return Err(invalid(name, "httpHeaders", "has a header name that is not an HTTP token"));
            }
            // Control characters (CR and LF above all) cannot be in a field value; tabs can.
            if value.chars().any(|c| c.is_control() && c != '\t') {
                return Err(invalid(name, "httpHeaders", "has a header value with control characters"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
