//! `listMcpServers`: every page of `mcpServerStatus/list`, without starting the user's MCP
//! servers unless the app asks for it.
//!
//! Codex has no way to tell whether a server is up without connecting to it: asked without a
//! thread, `mcpServerStatus/list` starts every enabled stdio server and contacts every remote
//! one (observed on 0.171.0). So by default the call asks on a thread of its own for which
//! every server of the effective configuration (`config/read` for the directory, project
//! layers included) is disabled, in a child whose plugin and app features are off: Codex then
//! reports each configured server, disabled ones included, and starts none. A server the
//! configuration enables reads `runtimeStatus: "notStarted"` there (Codex's own word for it:
//! this call did not start it), one it disables `"disabled"`. With `connect`, the call asks as
//! Codex does without a thread, and the servers start (and are ended with the child).
//! The thread has no turn: Codex stores nothing of it.

use crate::exchange::{failures, Exchange, Input, Output, Owner, Stop};
use crate::protocol::{
    method, ApprovalPolicy, ConfigRead, McpServerStatusConnect, McpServerStatusList, ThreadSandbox, ThreadStart,
};
use crate::resolve::Target;
use serde_json::Value;
use std::collections::BTreeMap;

/// `runtimeStatus` of a server this call kept from starting.
const NOT_STARTED: &str = "notStarted";

pub(super) async fn list<R: Input, W: Output, O: Owner>(
    exchange: &mut Exchange<'_, R, W>,
    owner: &mut O,
    target: &Target,
    connect: bool,
) -> Result<Value, Stop> {
    if connect {
        let servers = exchange.list_all(owner, |cursor| McpServerStatusConnect { cursor }).await?;
        return Ok(Value::Array(servers));
    }
    let cwd = target.thread_cwd.as_str();
    let config = exchange.call(owner, &ConfigRead { cwd }).await?;
    let configured = configured(&config)?;
    let names: Vec<String> = configured.keys().cloned().collect();
    let thread = ThreadStart {
        cwd,
        approval_policy: ApprovalPolicy::Never,
        sandbox: ThreadSandbox::ReadOnly,
        model: None,
        config: Some(crate::isolation::thread_config(&names)),
        // Asked of only: never stored, never listed.
        ephemeral: true,
        dynamic_tools: None,
    };
    let thread_id = exchange.call(owner, &thread).await?.thread.id;
    let thread_id = thread_id.as_str();
    let mut servers = exchange
        .list_all(owner, |cursor| McpServerStatusList { thread_id, detail: "toolsAndAuthOnly", cursor })
        .await?;
    for server in &mut servers {
        let enabled = server.get("name").and_then(Value::as_str).and_then(|name| configured.get(name)).copied();
        let disabled_here = server.get("runtimeStatus").and_then(Value::as_str) == Some("disabled");
        if enabled == Some(true) && disabled_here {
            server["runtimeStatus"] = Value::String(NOT_STARTED.into());
        }
    }
    Ok(Value::Array(servers))
}

/// The servers of the effective configuration (`config/read` result) and whether each is
/// enabled (`enabled` absent: it is). Only what the call needs is read: the configuration can
/// hold credentials, and a failure names the part that was wrong, never the rest.
fn configured(config_read: &Value) -> Result<BTreeMap<String, bool>, Stop> {
    let unexpected =
        |why: &str, part: Value| Stop::Failed(failures::unexpected_result(method::CONFIG_READ, why, &part.to_string()));
    let Some(config) = config_read.get("config").and_then(Value::as_object) else {
        let mut members: Vec<&String> = config_read.as_object().map(|o| o.keys().collect()).unwrap_or_default();
        members.sort();
        return Err(unexpected("config is not an object", serde_json::json!({"members": members})));
    };
    match config.get("mcp_servers") {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(servers)) => Ok(servers
            .iter()
            .map(|(name, server)| {
                let enabled = server.get("enabled").and_then(Value::as_bool) != Some(false);
                (name.clone(), enabled)
            })
            .collect()),
        Some(other) => Err(unexpected("mcp_servers is not a table", serde_json::json!({"kind": kind(other)}))),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
