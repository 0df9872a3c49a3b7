//! The sandbox of an `access: 'ask'` turn: the user's own workspace-write settings for the
//! turn's cwd — `sandbox_workspace_write` of the effective configuration as `config/read`
//! reports it (user and trusted project layers, `-c` overrides), relative roots already made
//! absolute by Codex — sent whole as the turn's `workspaceWrite` policy. A bare
//! `{type: "workspaceWrite"}` would not do: Codex takes what a turn's policy leaves out as its
//! default (`/tmp` and `$TMPDIR` writable, no extra roots, no network) in place of the user's
//! settings, and the turn would be wider than plain Codex with the same configuration.
//!
//! Without the table (absent, or `null` as codex-cli 0.171.0 reports it) every setting is
//! Codex's default, which is what the bare form means. Anything unexpected fails closed with
//! `UNEXPECTED_RESPONSE` before the thread starts; the failure names the setting and reports
//! only that part of the configuration (the rest can hold credentials).

use crate::failure::{Code, Failure, FailureSource};
use crate::protocol::{merged_config, WorkspaceWrite};
use serde_json::{json, Value};

/// The configuration table Codex reads the workspace-write settings from.
const TABLE: &str = "sandbox_workspace_write";

/// The user's workspace-write settings, from a `config/read` result.
pub fn workspace_write(config_read: &Value) -> Result<WorkspaceWrite, Failure> {
    let config = merged_config(config_read).map_err(|(message, report)| unexpected(message, None, report))?;
    let table = match config.get(TABLE) {
        None | Some(Value::Null) => return Ok(WorkspaceWrite::default()),
        Some(Value::Object(table)) => table,
        Some(other) => {
            return Err(unexpected(
                &format!("config/read reported {TABLE} that is not a table"),
                Some(TABLE),
                other.clone(),
            ))
        }
    };
    let mut settings = WorkspaceWrite::default();
    for (key, value) in table {
        let field = format!("{TABLE}.{key}");
        let wrong =
            |what: &str| unexpected(&format!("config/read reported {field} {what}"), Some(&field), value.clone());
        let not_a_flag = || wrong("that is not a boolean");
        match key.as_str() {
            "writable_roots" => {
                settings.writable_roots = roots(value).ok_or_else(|| wrong("that is not a list of absolute paths"))?
            }
            "network_access" => settings.network_access = flag(value).ok_or_else(not_a_flag)?,
            "exclude_tmpdir_env_var" => settings.exclude_tmpdir_env_var = flag(value).ok_or_else(not_a_flag)?,
            "exclude_slash_tmp" => settings.exclude_slash_tmp = flag(value).ok_or_else(not_a_flag)?,
            // A setting of a newer Codex, left at a value that asks for nothing, carries nothing.
            _ if neutral(value) => {
                tracing::debug!(setting = %field, "a workspace-write setting left at a neutral value")
            }
            // One that asks for something the turn's policy cannot say: the turn would not be
            // the user's sandbox.
            _ => return Err(wrong("that the turn's sandbox policy cannot carry")),
        }
    }
    Ok(settings)
}

fn unexpected(message: &str, field: Option<&str>, report: Value) -> Failure {
    Failure::new(
        FailureSource::Jsonrpc,
        Code::UnexpectedResponse,
        format!("{message}: the turn would not run in the user's workspace-write sandbox, so it was not started"),
    )
    .with_detail(json!({"method": "config/read", "field": field, "report": report}))
}

/// A boolean, or null (the default, false).
fn flag(value: &Value) -> Option<bool> {
    match value {
        Value::Null => Some(false),
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

/// A list of absolute paths, or null (none).
fn roots(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Null => Some(Vec::new()),
        Value::Array(items) => {
            items.iter().map(|item| item.as_str().filter(|p| absolute(p)).map(str::to_string)).collect()
        }
        _ => None,
    }
}

/// Absolute on the system Codex runs on, which need not be this one (a WSL locus): `/…`, a
/// drive `C:\…` or `C:/…`, or a UNC `\\…`.
fn absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    path.starts_with('/')
        || path.starts_with(r"\\")
        || (bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && matches!(bytes[2], b'\\' | b'/'))
}

/// A value that asks for nothing: null, false, an empty list or table.
fn neutral(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(members) => members.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_paths_of_either_system() {
        for path in ["/", "/opt/x", r"C:\Users\a", "c:/x", r"\\server\share"] {
            assert!(absolute(path), "{path}");
        }
        for path in ["", "rel", "./x", "C:", "C:rel", "~/x", r"\x"] {
            assert!(!absolute(path), "{path}");
        }
    }

    #[test]
    fn the_settings_as_codex_reports_them() {
        let answer = json!({"config": {"sandbox_workspace_write": {"writable_roots": [r"D:\cache", "/opt"],
            "network_access": true, "exclude_tmpdir_env_var": false, "exclude_slash_tmp": true}}, "origins": {}});
        assert_eq!(
            workspace_write(&answer).unwrap(),
            WorkspaceWrite {
                writable_roots: vec![r"D:\cache".into(), "/opt".into()],
                network_access: true,
                exclude_tmpdir_env_var: false,
                exclude_slash_tmp: true,
            }
        );
    }

    #[test]
    fn a_failure_reports_only_the_offending_part() {
        let answer = json!({"config": {"sandbox_workspace_write": {"network_access": "yes"},
            "model_providers": {"p": {"experimental_bearer_token": "sk-hidden"}}}});
        let failure = workspace_write(&answer).unwrap_err();
        assert_eq!(failure.code, Code::UnexpectedResponse);
        assert_eq!(
            failure.detail,
            json!({"method": "config/read", "field": "sandbox_workspace_write.network_access", "report": "yes"})
        );
        assert!(failure
            .message
            .starts_with("config/read reported sandbox_workspace_write.network_access that is not a boolean"));
        assert!(!failure.to_string().contains("sk-hidden"));
        let failure = workspace_write(&json!({"config": 3, "secret": "sk-hidden"})).unwrap_err();
        assert_eq!(failure.detail["report"], json!({"config": 3, "members": ["config", "secret"]}));
    }
}
