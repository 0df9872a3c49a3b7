//! Whether anyone is logged in to Codex, asked before a thread starts: a turn that cannot
//! authenticate would otherwise retry its model request for minutes ("Reconnecting… 5/5")
//! before anything tells the app that the user simply is not logged in.

use crate::failure::{Code, Failure, FailureSource};
use serde_json::{json, Value};

/// The variables an API key reaches Codex through instead of a login (`account/read` does not
/// count them: it reports no account while one is set).
pub const API_KEY_VARS: [&str; 2] = ["OPENAI_API_KEY", "CODEX_API_KEY"];

/// `account/read`'s answer says that a login is required and there is none, and `child_env`
/// (the child's value of a variable) holds no API key either.
pub fn login_missing(report: &Value, child_env: impl Fn(&str) -> Option<String>) -> bool {
    let required = report.get("requiresOpenaiAuth").and_then(Value::as_bool) == Some(true);
    let no_account = report.get("account").is_none_or(Value::is_null);
    let no_key = API_KEY_VARS.iter().all(|var| child_env(var).is_none_or(|v| v.trim().is_empty()));
    required && no_account && no_key
}

/// The turn's failure when no one is logged in; `report` is `account/read`'s answer.
pub fn auth_required(report: Value) -> Failure {
    Failure::new(
        FailureSource::Jsonrpc,
        Code::AuthRequired,
        "Codex is not logged in: run `codex login` (or give the child an OPENAI_API_KEY), then try again",
    )
    .with_detail(json!({"report": report}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_required_login_without_account_or_key_is_missing() {
        let none = |_: &str| None;
        let not_logged_in = json!({"account": null, "requiresOpenaiAuth": true});
        assert!(login_missing(&not_logged_in, none));
        assert!(!login_missing(&json!({"account": null, "requiresOpenaiAuth": false}), none));
        assert!(!login_missing(&json!({"account": {"type": "apiKey"}, "requiresOpenaiAuth": true}), none));
        assert!(!login_missing(&not_logged_in, |v| (v == "OPENAI_API_KEY").then(|| "sk-x".to_string())));
        assert!(login_missing(&not_logged_in, |v| (v == "CODEX_API_KEY").then(|| " ".to_string())));
        // A report of another shape says nothing: the turn goes on.
        assert!(!login_missing(&json!({}), none));
    }
}
