//! The user's configured MCP servers, as `codex mcp list --json` reports them.
//!
//! The command runs with the child's binary, launcher prefix, environment, working directory
//! (so trusted project layers count) and `--disable plugins` (the child's own feature flags),
//! so that the list names exactly the servers the child's merged configuration will hold.
//!
//! Its stdout carries the user's header values and stdio `env` values verbatim. Validation
//! therefore reads `serde_json::Value`s and writes its own messages, which name entries by
//! index and server name and fields by path, and never quote a value.

use super::refused;
use crate::failure::{Code, Failure, FailureSource};
use crate::process::collect::collect;
use crate::process::{self, Launch};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::time::Duration;

/// The most `codex mcp list --json` may print: 4 MiB, thousands of times a real inventory (a
/// few hundred bytes a server), so that only a wrong binary that prints without end meets it.
pub const INVENTORY_MAX_OUTPUT: usize = 4 * 1024 * 1024;
/// The command, as failures name it.
const COMMAND: &str = "codex mcp list --json";
/// Longest stderr line kept.
const STDERR_LINE_CHARS: usize = 2000;

/// Codex's transports, in `codex mcp list --json` spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    Stdio,
    StreamableHttp,
}

/// One configured server: only what the policy needs (no commands, URLs, headers or env).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfiguredServer {
    pub name: String,
    pub enabled: bool,
    pub transport: TransportKind,
}

/// The arguments after the launch's prefix that list the inventory.
pub const LIST_ARGS: [&str; 5] = ["--disable", "plugins", "mcp", "list", "--json"];

/// Runs `codex mcp list --json` with the child's launch and validates its output. It has
/// `timeout` (the turn's `requestTimeoutMs`) to finish and [`INVENTORY_MAX_OUTPUT`] to print;
/// past either it is ended at once: `REQUEST_TIMEOUT`, `MCP_INVENTORY_TOO_LARGE`.
pub async fn read(launch: &Launch, timeout: Duration) -> Result<Vec<ConfiguredServer>, Failure> {
    let failed = |message: String, detail: Value| refused(Code::McpInventoryFailed, message, detail);
    let program = launch.program.display().to_string();
    let run = collect(&launch.spec(LIST_ARGS), timeout, INVENTORY_MAX_OUTPUT, None, 0).await.map_err(|e| match e {
        process::SpawnError::GuardUnavailable(why) => why.failure(),
        e => failed(format!("could not run `{COMMAND}` ({program}): {e}"), json!({"codexPath": program})),
    })?;
    if run.overflowed {
        return Err(refused(
            Code::McpInventoryTooLarge,
            format!("`{COMMAND}` printed more than {} MiB: it was ended", INVENTORY_MAX_OUTPUT / (1024 * 1024)),
            json!({"command": COMMAND, "codexPath": program, "limitBytes": INVENTORY_MAX_OUTPUT}),
        ));
    }
    if run.timed_out {
        let ms = timeout.as_millis() as u64;
        // Nothing was started but the list command, which is gone: source `spawn`.
        return Err(Failure::new(
            FailureSource::Spawn,
            Code::RequestTimeout,
            format!("`{COMMAND}` did not finish within {ms} ms (requestTimeoutMs): it was ended"),
        )
        .with_detail(json!({"command": COMMAND, "codexPath": program, "timeoutMs": ms})));
    }
    let exit = run.exit;
    if exit.code != Some(0) {
        let stderr = meaningful(run.stderr_head);
        let headline =
            stderr.iter().find(|l| !l.trim().is_empty() && !l.starts_with("WARNING:")).cloned().unwrap_or_default();
        let cause = configuration_cause(&stderr);
        let mut message = format!("`codex mcp list --json` {}", exit.how());
        for part in [headline, cause].into_iter().filter(|p| !p.is_empty()) {
            message.push_str(": ");
            message.push_str(part.trim());
        }
        return Err(failed(message, json!({"exitCode": exit.code, "signal": exit.signal, "stderr": stderr})));
    }
    parse(&run.stdout)
}

/// Codex prints `Caused by:` and then the reason, indented, then a backtrace.
fn configuration_cause(stderr: &[String]) -> String {
    let Some(start) = stderr.iter().position(|l| l.trim() == "Caused by:") else {
        return String::new();
    };
    stderr[start + 1..]
        .iter()
        .map(|l| l.trim())
        .take_while(|l| !l.is_empty() && !l.starts_with("Stack backtrace"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The meaningful lines of stderr: those before the backtrace, each bounded in length.
fn meaningful(head: Vec<String>) -> Vec<String> {
    head.into_iter()
        .take_while(|l| !l.starts_with("Stack backtrace:"))
        .map(|l| crate::text::excerpt(&l, STDERR_LINE_CHARS))
        .collect()
}

/// Shape errors: a message (no values) and where.
struct ShapeError {
    entry: Option<usize>,
    name: Option<String>,
    field: String,
    problem: String,
}

impl ShapeError {
    fn into_error(self) -> Failure {
        let place = match (&self.entry, &self.name) {
            (Some(i), Some(n)) => format!("entry {i} ({n:?}): "),
            (Some(i), None) => format!("entry {i}: "),
            _ => String::new(),
        };
        let field = if self.field.is_empty() { String::new() } else { format!("{} ", self.field) };
        refused(
            Code::McpInventoryInvalid,
            format!("`codex mcp list --json` printed an unexpected inventory: {place}{field}{}", self.problem),
            json!({"entry": self.entry, "server": self.name, "field": self.field}),
        )
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses and validates the stdout of `codex mcp list --json` (codex-cli 0.171.0 shape):
/// an array of `{name, enabled, disabled_reason?, transport: {type, …}, startup_timeout_sec?,
/// tool_timeout_sec?, auth_status?}`. Every known field must have its known type; names must
/// be unique; unknown fields are allowed (newer CLIs add some); an unknown transport type is
/// not (whether a placeholder is valid for it was never checked).
pub fn parse(stdout: &[u8]) -> Result<Vec<ConfiguredServer>, Failure> {
    let top: Value = serde_json::from_slice(stdout).map_err(|e| {
        // serde_json's syntax errors carry a position, never the offending text.
        refused(
            Code::McpInventoryInvalid,
            format!("`codex mcp list --json` did not print JSON: {e}"),
            json!({"field": ""}),
        )
    })?;
    let entries = top.as_array().ok_or_else(|| {
        ShapeError {
            entry: None,
            name: None,
            field: String::new(),
            problem: format!("is {} instead of an array", kind(&top)),
        }
        .into_error()
    })?;
    let mut seen = HashSet::new();
    let mut servers = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let server = parse_entry(i, entry).map_err(ShapeError::into_error)?;
        if !seen.insert(server.name.clone()) {
            return Err(ShapeError {
                entry: Some(i),
                name: Some(server.name),
                field: "name".into(),
                problem: "repeats an earlier entry's name".into(),
            }
            .into_error());
        }
        servers.push(server);
    }
    Ok(servers)
}

fn parse_entry(i: usize, entry: &Value) -> Result<ConfiguredServer, ShapeError> {
    let err = |name: Option<&str>, field: &str, problem: String| ShapeError {
        entry: Some(i),
        name: name.map(str::to_string),
        field: field.to_string(),
        problem,
    };
    let obj = entry.as_object().ok_or_else(|| err(None, "", format!("is {} instead of an object", kind(entry))))?;
    let name = match obj.get("name") {
        Some(Value::String(s)) => s.as_str(),
        Some(v) => return Err(err(None, "name", format!("is {} instead of a string", kind(v)))),
        None => return Err(err(None, "name", "is missing".into())),
    };
    let n = Some(name);
    let enabled = match obj.get("enabled") {
        Some(Value::Bool(b)) => *b,
        Some(v) => return Err(err(n, "enabled", format!("is {} instead of a boolean", kind(v)))),
        None => return Err(err(n, "enabled", "is missing".into())),
    };
    optional(obj, "disabled_reason", Ty::Str).map_err(|p| err(n, "disabled_reason", p))?;
    optional(obj, "startup_timeout_sec", Ty::Num).map_err(|p| err(n, "startup_timeout_sec", p))?;
    optional(obj, "tool_timeout_sec", Ty::Num).map_err(|p| err(n, "tool_timeout_sec", p))?;
    optional(obj, "auth_status", Ty::Str).map_err(|p| err(n, "auth_status", p))?;
    let transport = match obj.get("transport") {
        Some(Value::Object(t)) => t,
        Some(v) => return Err(err(n, "transport", format!("is {} instead of an object", kind(v)))),
        None => return Err(err(n, "transport", "is missing".into())),
    };
    let transport_kind = match transport.get("type") {
        Some(Value::String(t)) if t == "stdio" => TransportKind::Stdio,
        Some(Value::String(t)) if t == "streamable_http" => TransportKind::StreamableHttp,
        Some(Value::String(t)) => {
            return Err(err(n, "transport.type", format!("is {t:?}, not \"stdio\" or \"streamable_http\"")))
        }
        Some(v) => return Err(err(n, "transport.type", format!("is {} instead of a string", kind(v)))),
        None => return Err(err(n, "transport.type", "is missing".into())),
    };
    let fields: &[(&str, Ty, bool)] = match transport_kind {
        TransportKind::Stdio => &[
            ("command", Ty::Str, true),
            ("args", Ty::StrArray, false),
            ("env", Ty::StrMap, false),
            ("env_vars", Ty::Array, false),
            ("cwd", Ty::Str, false),
        ],
        TransportKind::StreamableHttp => &[
            ("url", Ty::Str, true),
            ("bearer_token_env_var", Ty::Str, false),
            ("http_headers", Ty::StrMap, false),
            ("env_http_headers", Ty::StrMap, false),
        ],
    };
    for &(field, ty, required) in fields {
        let path = format!("transport.{field}");
        if required && transport.get(field).is_none_or(Value::is_null) {
            return Err(err(n, &path, "is missing".into()));
        }
        optional(transport, field, ty).map_err(|p| err(n, &path, p))?;
    }
    Ok(ConfiguredServer { name: name.to_string(), enabled, transport: transport_kind })
}

#[derive(Clone, Copy)]
enum Ty {
    Str,
    Num,
    Array,
    StrArray,
    StrMap,
}

/// The field may be absent or null; otherwise it must have the given type.
fn optional(obj: &Map<String, Value>, field: &str, ty: Ty) -> Result<(), String> {
    let Some(v) = obj.get(field) else {
        return Ok(());
    };
    let ok = match (ty, v) {
        (_, Value::Null) => true,
        (Ty::Str, Value::String(_)) => true,
        (Ty::Num, Value::Number(_)) => true,
        (Ty::Array, Value::Array(_)) => true,
        (Ty::StrArray, Value::Array(items)) => items.iter().all(Value::is_string),
        (Ty::StrMap, Value::Object(map)) => map.values().all(Value::is_string),
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let expected = match ty {
        Ty::Str => "a string",
        Ty::Num => "a number",
        Ty::Array => "an array",
        Ty::StrArray => "an array of strings",
        Ty::StrMap => "an object of strings",
    };
    Err(format!("is not {expected} (or null)"))
}
