//! The read-only isolated turn (`access: 'readOnly'`): what is switched off, and the checks
//! that must pass before the turn may start. Any doubt fails closed.

use crate::failure::{Code, Failure, FailureSource};
use crate::protocol::merged_config;
use serde_json::{json, Map, Value};
use std::ffi::OsString;

/// Features switched off for a read-only turn: each gives the model a capability beyond reading
/// the working tree and running read-only commands, or starts a background service. Names are
/// those of `experimentalFeature/list` on codex-cli 0.171.0; they are passed as
/// `-c features.<name>=false`, which a binary that does not know a name ignores (whereas
/// `--disable <unknown>` refuses to start).
pub const CODEX_DISABLED_FEATURES: &[&str] = &[
    // Plugin discovery refreshes catalogues over the network and brings plugin MCP servers.
    "plugins",
    "remote_plugin",
    "plugin_sharing",
    // Apps and connectors: remote tools with their own credentials.
    "apps",
    // Suggests and installs tools and connectors.
    "tool_suggest",
    // Installs MCP servers that skills depend on.
    "skill_mcp_dependency_install",
    // Browser and computer control.
    "in_app_browser",
    "browser_use",
    "browser_use_full_cdp_access",
    "browser_use_external",
    "browser_annotation_api",
    "computer_use",
    "in_app_local_automation",
    // Generates images (a remote tool with side effects on the workspace).
    "image_generation",
    // Sub-agents run their own turns with their own policies.
    "multi_agent",
    "multi_agent_v2",
    // Persistent memories and goals write state beyond the turn.
    "memories",
    "goals",
    // User hooks run arbitrary commands at lifecycle points.
    "hooks",
    // Lets the model ask for more permissions.
    "request_permissions_tool",
    // Starts a background app-server daemon that outlives the turn.
    "daemon_auto_start",
];

/// Command-line additions that switch the features off, and web search (a setting, not a
/// feature, since 0.171.0: it reaches beyond the working tree).
pub fn feature_args() -> Vec<OsString> {
    CODEX_DISABLED_FEATURES
        .iter()
        .flat_map(|name| ["-c".into(), format!("features.{name}=false").into()])
        .chain(["-c".into(), "web_search=\"disabled\"".into()])
        .collect()
}

pub fn not_confirmed(message: impl Into<String>, report: Value) -> Failure {
    Failure::new(FailureSource::Jsonrpc, Code::IsolationNotConfirmed, message).with_detail(json!({"report": report}))
}

/// The MCP server names of the effective configuration (`config/read` result). Only an object
/// `config` is an answer: one without `mcp_servers` has none configured, but a missing or
/// malformed `config` says nothing about the servers and fails closed. `detail` carries the
/// part that was wrong, never the rest of the configuration, which can hold credentials.
pub fn configured_servers(config_read: &Value) -> Result<Vec<String>, Failure> {
    let config = merged_config(config_read).map_err(|(message, report)| not_confirmed(message, report))?;
    match config.get("mcp_servers") {
        None => Ok(Vec::new()),
        Some(Value::Object(servers)) => Ok(servers.keys().cloned().collect()),
        Some(other) => {
            Err(not_confirmed("config/read reported mcp_servers that is not a table", json!({"mcp_servers": other})))
        }
    }
}

/// `thread/start.config` that disables every configured server. Per-name `enabled = false`
/// (no transport keys) is the form Codex merges safely.
pub fn thread_config(configured: &[String]) -> Value {
    let servers: Map<String, Value> = configured.iter().map(|name| (name.clone(), json!({"enabled": false}))).collect();
    json!({"mcp_servers": servers})
}

/// The thread must report a read-only sandbox and approval policy `never` (the `sandbox` and
/// `approvalPolicy` of its `thread/start` or `thread/resume` result).
pub fn check_thread(sandbox: &Value, approval_policy: &Value) -> Result<(), Failure> {
    if sandbox["type"] == "readOnly" && approval_policy == "never" {
        return Ok(());
    }
    Err(not_confirmed(
        "the thread did not report a read-only sandbox with approval policy never",
        json!({"sandbox": sandbox, "approvalPolicy": approval_policy}),
    ))
}

/// The feature report must list features, and every feature this package switches off that it
/// lists must be off. Returns the switched-off features it does not list: ones this version of
/// Codex does not have.
pub fn check_features(features: &[Value]) -> Result<Vec<&'static str>, Failure> {
    if features.is_empty() {
        return Err(not_confirmed("experimentalFeature/list reported no features", json!({"features": []})));
    }
    let mut listed = Vec::with_capacity(features.len());
    for feature in features {
        let (Some(name), Some(enabled)) =
            (feature.get("name").and_then(Value::as_str), feature.get("enabled").and_then(Value::as_bool))
        else {
            return Err(not_confirmed(
                "experimentalFeature/list returned an entry of unexpected shape",
                feature.clone(),
            ));
        };
        listed.push((name, enabled));
    }
    let still_on: Vec<&str> =
        listed.iter().filter(|(n, on)| *on && CODEX_DISABLED_FEATURES.contains(n)).map(|f| f.0).collect();
    let absent: Vec<&'static str> =
        CODEX_DISABLED_FEATURES.iter().copied().filter(|name| !listed.iter().any(|(n, _)| n == name)).collect();
    if still_on.is_empty() {
        Ok(absent)
    } else {
        Err(not_confirmed(
            format!("features still enabled: {}", still_on.join(", ")),
            json!({"enabled": still_on, "notListed": absent}),
        ))
    }
}

/// Every MCP server must be reported `disabled` for the thread — plugin servers, which the
/// configuration does not name, included — and every server of the effective configuration
/// must be in the report: silence is not a confirmation.
pub fn check_servers(servers: &[Value], configured: &[String]) -> Result<(), Failure> {
    let mut not_disabled = Vec::new();
    let mut reported = Vec::with_capacity(servers.len());
    for server in servers {
        let Some(name) = server.get("name").and_then(Value::as_str) else {
            return Err(not_confirmed("mcpServerStatus/list returned an entry without a name", server.clone()));
        };
        reported.push(name);
        if server.get("runtimeStatus").and_then(Value::as_str) != Some("disabled") {
            not_disabled.push(
                json!({"name": name, "runtimeStatus": server.get("runtimeStatus"), "pluginId": server.get("pluginId")}),
            );
        }
    }
    let missing: Vec<&String> = configured.iter().filter(|name| !reported.contains(&name.as_str())).collect();
    if not_disabled.is_empty() && missing.is_empty() {
        return Ok(());
    }
    let mut problems = Vec::new();
    if !not_disabled.is_empty() {
        problems.push(format!("{} MCP server(s) not disabled for the thread", not_disabled.len()));
    }
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|n| n.as_str()).collect();
        problems.push(format!("configured MCP server(s) missing from the status report: {}", names.join(", ")));
    }
    Err(not_confirmed(problems.join("; "), json!({"notDisabled": not_disabled, "missing": missing})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_must_be_read_only_and_never() {
        let check_thread = |result: &Value| check_thread(&result["sandbox"], &result["approvalPolicy"]);
        assert!(check_thread(&json!({"sandbox": {"type": "readOnly"}, "approvalPolicy": "never"})).is_ok());
        for bad in [
            json!({"sandbox": {"type": "dangerFullAccess"}, "approvalPolicy": "never"}),
            json!({"sandbox": {"type": "readOnly"}, "approvalPolicy": "on-request"}),
            json!({}),
        ] {
            assert_eq!(check_thread(&bad).unwrap_err().code, Code::IsolationNotConfirmed);
        }
    }

    #[test]
    fn features_must_be_listed_and_off() {
        let ok = [json!({"name": "plugins", "enabled": false}), json!({"name": "shell_tool", "enabled": true})];
        let absent = check_features(&ok).unwrap();
        assert!(absent.contains(&"hooks") && !absent.contains(&"plugins"), "{absent:?}");
        let bad = [json!({"name": "hooks", "enabled": true})];
        let failure = check_features(&bad).unwrap_err();
        assert_eq!(failure.detail["report"]["enabled"], json!(["hooks"]));
        assert!(failure.detail["report"]["notListed"].as_array().unwrap().contains(&json!("plugins")));
        assert!(check_features(&[json!({"name": "hooks"})]).is_err());
        // Silence is no confirmation.
        assert_eq!(check_features(&[]).unwrap_err().code, Code::IsolationNotConfirmed);
    }

    #[test]
    fn every_server_must_be_reported_and_disabled() {
        let configured = ["a".to_string(), "b".to_string()];
        let both =
            [json!({"name": "a", "runtimeStatus": "disabled"}), json!({"name": "b", "runtimeStatus": "disabled"})];
        assert!(check_servers(&both, &configured).is_ok());
        // b is configured but not reported.
        let failure = check_servers(&both[..1], &configured).unwrap_err();
        assert_eq!(failure.detail["report"]["missing"], json!(["b"]));
        assert!(failure.message.contains("missing from the status report: b"), "{}", failure.message);
        // A plugin server the configuration does not name, still running.
        let plugin =
            [both[0].clone(), both[1].clone(), json!({"name": "p", "runtimeStatus": "connected", "pluginId": "x@y"})];
        let failure = check_servers(&plugin, &configured).unwrap_err();
        assert_eq!(failure.detail["report"]["notDisabled"][0]["pluginId"], "x@y");
        // Without runtimeStatus (a Codex before 0.150): not confirmed.
        assert!(check_servers(&[json!({"name": "a"}), both[1].clone()], &configured).is_err());
        assert!(check_servers(&[json!({"runtimeStatus": "disabled"})], &[]).is_err());
    }

    #[test]
    fn thread_config_disables_by_name() {
        let config = thread_config(&["a.b".into(), "c".into()]);
        assert_eq!(config, json!({"mcp_servers": {"a.b": {"enabled": false}, "c": {"enabled": false}}}));
        assert_eq!(configured_servers(&json!({"config": {"mcp_servers": {"x": {}}}})).unwrap(), vec!["x"]);
        assert!(configured_servers(&json!({"config": {}})).unwrap().is_empty());
    }

    #[test]
    fn configured_servers_need_an_object_config() {
        assert!(configured_servers(&json!({"config": {}, "origins": {}})).unwrap().is_empty());
        for (answer, part) in [
            (json!({"config": {"mcp_servers": 3}}), json!({"mcp_servers": 3})),
            (json!({"config": {"mcp_servers": null}}), json!({"mcp_servers": null})),
            (json!({"config": {"mcp_servers": ["a"]}}), json!({"mcp_servers": ["a"]})),
            (json!({"config": "not an object"}), json!({"config": "not an object", "members": ["config"]})),
            (json!({"config": null, "origins": {}}), json!({"config": null, "members": ["config", "origins"]})),
            (json!({"origins": {}}), json!({"config": null, "members": ["origins"]})),
            (json!([]), json!({"config": null, "members": []})),
        ] {
            let failure = configured_servers(&answer).unwrap_err();
            assert_eq!(failure.code, Code::IsolationNotConfirmed, "{answer}");
            assert_eq!(failure.detail["report"], part, "{answer}");
        }
        // Only the offending part is reported: the rest of a configuration can hold credentials.
        let failure =
            configured_servers(&json!({"config": {"mcp_servers": 1, "model_providers": {"p": {"key": "s3cret"}}}}))
                .unwrap_err();
        assert!(!failure.detail.to_string().contains("s3cret"), "{}", failure.detail);
    }
}
