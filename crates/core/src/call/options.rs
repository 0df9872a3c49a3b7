//! A call's options as JavaScript passes them (JSON), validated; every error names the option.

use crate::input::{from_json, invalid, OptionsError};
use crate::locus::Locus;
use crate::options::DEFAULT_REQUEST_TIMEOUT;
use crate::target::Target;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// What is asked of the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    ReadAccount,
    ListModels {
        include_hidden: bool,
    },
    /// `cwd`: filter by the thread's directory (the target's, as Codex sees it).
    ListThreads {
        limit: Option<u32>,
        cursor: Option<String>,
        archived: Option<bool>,
        cwd: bool,
    },
    ReadThread {
        thread_id: String,
        include_turns: Option<bool>,
    },
    ForkThread {
        thread_id: String,
        last_turn_id: Option<String>,
    },
}

impl Call {
    /// Its name in the JavaScript API.
    pub fn name(&self) -> &'static str {
        match self {
            Call::ReadAccount => "readAccount",
            Call::ListModels { .. } => "listModels",
            Call::ListThreads { .. } => "listThreads",
            Call::ReadThread { .. } => "readThread",
            Call::ForkThread { .. } => "forkThread",
        }
    }
}

/// A validated call.
#[derive(Debug)]
pub struct CallOptions {
    pub call: Call,
    /// Which Codex, where (`cwd` defaults to a neutral directory), with which environment.
    pub target: Target,
    pub request_timeout: Duration,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
/// Absent fields are `None` (serde's rule for `Option`).
struct RawOptions {
    cwd: Option<String>,
    codex_path: Option<String>,
    locus: Option<Locus>,
    env: Option<BTreeMap<String, String>>,
    request_timeout_ms: Option<u64>,
    include_hidden: Option<bool>,
    limit: Option<u32>,
    cursor: Option<String>,
    archived: Option<bool>,
    include_turns: Option<bool>,
    last_turn_id: Option<String>,
}

impl RawOptions {
    /// The call-specific options that were given, by name.
    fn given(&self) -> Vec<&'static str> {
        [
            ("includeHidden", self.include_hidden.is_some()),
            ("limit", self.limit.is_some()),
            ("cursor", self.cursor.is_some()),
            ("archived", self.archived.is_some()),
            ("includeTurns", self.include_turns.is_some()),
            ("lastTurnId", self.last_turn_id.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }
}

/// Parses the options of call `name` (`readAccount`, `listModels`, `listThreads`,
/// `readThread`, `forkThread`); `thread_id` is the thread argument of the last two.
pub fn parse(name: &str, thread_id: Option<String>, options_json: Option<&str>) -> Result<CallOptions, OptionsError> {
    let raw: RawOptions = match options_json {
        Some(json) => from_json(json)?,
        None => RawOptions::default(),
    };
    let thread = || match &thread_id {
        Some(id) if !id.is_empty() => Ok(id.clone()),
        _ => Err(invalid("threadId must be a non-empty string")),
    };
    let (call, own): (Call, &[&str]) = match name {
        "readAccount" => (Call::ReadAccount, &[]),
        "listModels" => (Call::ListModels { include_hidden: raw.include_hidden == Some(true) }, &["includeHidden"]),
        "listThreads" => (
            Call::ListThreads {
                limit: raw.limit,
                cursor: raw.cursor.clone(),
                archived: raw.archived,
                cwd: raw.cwd.is_some(),
            },
            &["limit", "cursor", "archived"],
        ),
        "readThread" => {
            (Call::ReadThread { thread_id: thread()?, include_turns: raw.include_turns }, &["includeTurns"])
        }
        "forkThread" => {
            (Call::ForkThread { thread_id: thread()?, last_turn_id: raw.last_turn_id.clone() }, &["lastTurnId"])
        }
        other => return Err(invalid(format!("{other} is not a call"))),
    };
    if let Some(stray) = raw.given().into_iter().find(|option| !own.contains(option)) {
        return Err(invalid(format!("options.{stray} is not an option of {name}")));
    }
    if raw.limit == Some(0) {
        return Err(invalid("options.limit must be greater than 0"));
    }
    if matches!(&raw.last_turn_id, Some(id) if id.is_empty()) {
        return Err(invalid("options.lastTurnId must be a non-empty string"));
    }
    if raw.request_timeout_ms == Some(0) {
        return Err(invalid("options.requestTimeoutMs must be greater than 0"));
    }
    // Calls need no project: without `cwd` the child starts where any helper of the package does.
    let cwd = raw.cwd.unwrap_or_else(|| crate::process::launch::neutral_dir().to_string_lossy().into_owned());
    let target = Target::parse(cwd, raw.codex_path, raw.locus, raw.env)?;
    let request_timeout = raw.request_timeout_ms.map(Duration::from_millis).unwrap_or(DEFAULT_REQUEST_TIMEOUT);
    Ok(CallOptions { call, target, request_timeout })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TMP: &str = if cfg!(windows) { r"C:\tmp" } else { "/tmp" };

    fn err(name: &str, thread: Option<&str>, json: &str) -> String {
        parse(name, thread.map(str::to_string), Some(json)).unwrap_err().0
    }

    #[test]
    fn defaults_and_call_options() {
        let o = parse("readAccount", None, None).unwrap();
        assert_eq!(o.call, Call::ReadAccount);
        assert_eq!(o.request_timeout, DEFAULT_REQUEST_TIMEOUT);
        assert!(std::path::Path::new(&o.target.cwd).is_absolute());
        let o = parse("listModels", None, Some(r#"{"includeHidden":true,"requestTimeoutMs":5}"#)).unwrap();
        assert_eq!(o.call, Call::ListModels { include_hidden: true });
        assert_eq!(o.request_timeout, Duration::from_millis(5));
        let json = serde_json::json!({"cwd": TMP, "limit": 3, "cursor": null, "archived": false}).to_string();
        let o = parse("listThreads", None, Some(&json)).unwrap();
        assert_eq!(o.call, Call::ListThreads { limit: Some(3), cursor: None, archived: Some(false), cwd: true });
        assert_eq!(o.target.thread_cwd, TMP);
        let o = parse("forkThread", Some("th".into()), Some(r#"{"lastTurnId":"tu"}"#)).unwrap();
        assert_eq!(o.call, Call::ForkThread { thread_id: "th".into(), last_turn_id: Some("tu".into()) });
    }

    #[test]
    fn errors_name_the_option() {
        assert_eq!(
            err("readAccount", None, r#"{"includeHidden":true}"#),
            "options.includeHidden is not an option of readAccount"
        );
        assert_eq!(err("listModels", None, r#"{"limit":2}"#), "options.limit is not an option of listModels");
        assert!(err("listModels", None, r#"{"includeHidden":1}"#).starts_with("options.includeHidden:"));
        assert!(err("listThreads", None, r#"{"limit":-1}"#).starts_with("options.limit:"));
        assert_eq!(err("listThreads", None, r#"{"limit":0}"#), "options.limit must be greater than 0");
        assert!(err("listThreads", None, r#"{"cwd":"rel"}"#).starts_with("options.cwd must be an absolute path"));
        assert!(err("readAccount", None, r#"{"model":"x"}"#).contains("model"));
        assert_eq!(err("readThread", Some(""), "{}"), "threadId must be a non-empty string");
        assert_eq!(err("forkThread", None, "{}"), "threadId must be a non-empty string");
        assert_eq!(
            err("forkThread", Some("t"), r#"{"lastTurnId":""}"#),
            "options.lastTurnId must be a non-empty string"
        );
        assert_eq!(
            err("readAccount", None, r#"{"requestTimeoutMs":0}"#),
            "options.requestTimeoutMs must be greater than 0"
        );
        assert!(err("readAccount", None, r#"{"env":{"A":1}}"#).starts_with("options.env.A:"));
    }
}
