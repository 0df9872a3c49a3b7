//! The one inline TOML table given to the child as `-c mcp_servers=<table>`.
//!
//! Rendered by the `toml` crate: keys that are not bare (dots, quotes, spaces, non-ASCII…)
//! are quoted and strings escaped by the library, so any server name and any header value
//! reaches Codex exactly. Keys are sorted (a `BTreeMap`), so the same policy and inventory
//! always give the same text.

use super::inventory::ConfiguredServer;
use crate::options::McpPolicy;
use toml::{Table, Value};

/// Why every other configured server gets exactly `{ enabled = false }`, verified with
/// codex-cli 0.171.0 (`codex -c mcp_servers=… mcp list --json` and `codex app-server`
/// `mcpServerStatus/list {threadId}`):
///
/// - Codex deep-merges `-c mcp_servers` into the user's (and trusted projects') tables, so an
///   empty table disables nothing; each configured name has to be named.
/// - `enabled = false` alone merges with the user's transport keys and stays valid for both
///   stdio and streamable-HTTP servers; the server reports `runtimeStatus: "disabled"` and
///   is never started.
/// - A transport key in the placeholder breaks the whole configuration: `url` on a stdio
///   server ("url is not supported for stdio") and `command` on an HTTP server both make
///   `thread/start` and `config/read` fail.
/// - A placeholder for a name that is *not* configured is also fatal ("invalid transport"),
///   so placeholders are written only for names the inventory reported, and the inventory is
///   read with the child's own binary, environment, working directory and flags.
pub fn placeholder() -> Value {
    let mut table = Table::new();
    table.insert("enabled".into(), Value::Boolean(false));
    Value::Table(table)
}

/// Prefix of the variables that carry header values into the child (`<prefix>1`, `<prefix>2`, …).
pub const HEADER_VAR_PREFIX: &str = "RENNET_MCP_HEADER_";

/// The requested servers (`url`, `bearer_token_env_var`, `env_http_headers`, explicitly
/// `enabled = true`) plus a placeholder for every configured server, and the variables that
/// hold the header values. A requested name never equals a configured one (`prepare` rejects
/// that before rendering).
pub fn table(policy: &McpPolicy, configured: &[ConfiguredServer]) -> (Table, Vec<(String, String)>) {
    let mut table = Table::new();
    let mut env = Vec::new();
    for server in configured {
        table.insert(server.name.clone(), placeholder());
    }
    for (name, server) in &policy.servers {
        let mut entry = Table::new();
        entry.insert("url".into(), Value::String(server.url.clone()));
        if let Some(var) = &server.bearer_token_env_var {
            entry.insert("bearer_token_env_var".into(), Value::String(var.clone()));
        }
        if let Some(headers) = &server.http_headers {
            let mut names = Table::new();
            for (header, value) in headers {
                let var = format!("{HEADER_VAR_PREFIX}{}", env.len() + 1);
                names.insert(header.clone(), Value::String(var.clone()));
                env.push((var, value.clone()));
            }
            entry.insert("env_http_headers".into(), Value::Table(names));
        }
        entry.insert("enabled".into(), Value::Boolean(true));
        table.insert(name.clone(), Value::Table(entry));
    }
    (table, env)
}

/// The table as one inline TOML value (`{ name = { … }, … }`).
pub fn inline(table: Table) -> String {
    Value::Table(table).to_string()
}
