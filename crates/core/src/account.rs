//! Whether anyone is logged in to Codex, asked before a thread starts: a turn that cannot
//! authenticate would otherwise retry its model request for minutes ("Reconnecting… 5/5")
//! before anything tells the app that the user simply is not logged in.

use crate::discovery::env::Env;
use crate::failure::{Code, Failure, FailureSource};
use serde_json::{json, Value};

/// The variables an API key reaches Codex through instead of a login (`account/read` does not
/// count them: it reports no account while one is set).
pub const API_KEY_VARS: [&str; 2] = ["OPENAI_API_KEY", "CODEX_API_KEY"];

/// `account/read`'s answer says that a login is required and there is none, and the child's
/// environment holds no API key either.
pub fn login_missing(report: &Value, child_env: &Env) -> bool {
    let required = report.get("requiresOpenaiAuth").and_then(Value::as_bool) == Some(true);
    let no_account = report.get("account").is_none_or(Value::is_null);
    let no_key = API_KEY_VARS.iter().all(|var| child_env.get(var).is_none_or(|v| v.trim().is_empty()));
    required && no_account && no_key
}

/// How the child can authenticate, by the rule of [`login_missing`], as `readAccount` reports it
/// (`AccountInfo.auth`): `{ready, via}`, `via` being `account` (someone is logged in),
/// `notRequired` (the provider needs no OpenAI login), `apiKeyEnv` (an API key variable in the
/// child's environment) or `null` (none of them: a turn would fail `AUTH_REQUIRED`).
pub fn auth(report: &Value, child_env: &Env) -> Value {
    let account = report.get("account").is_some_and(|a| !a.is_null());
    let required = report.get("requiresOpenaiAuth").and_then(Value::as_bool) != Some(false);
    let key = API_KEY_VARS.iter().any(|var| child_env.get(var).is_some_and(|v| !v.trim().is_empty()));
    let via = if account {
        Some("account")
    } else if !required {
        Some("notRequired")
    } else if key {
        Some("apiKeyEnv")
    } else {
        None
    };
    json!({"ready": via.is_some(), "via": via})
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
    use crate::discovery::env::Os;

    #[test]
    fn only_a_required_login_without_account_or_key_is_missing() {
        let env = |pairs: &[(&str, &str)]| Env::from_pairs(pairs.iter().copied(), Os::Unix);
        let none = env(&[]);
        let not_logged_in = json!({"account": null, "requiresOpenaiAuth": true});
        assert!(login_missing(&not_logged_in, &none));
        assert!(!login_missing(&json!({"account": null, "requiresOpenaiAuth": false}), &none));
        assert!(!login_missing(&json!({"account": {"type": "apiKey"}, "requiresOpenaiAuth": true}), &none));
        assert!(!login_missing(&not_logged_in, &env(&[("OPENAI_API_KEY", "sk-x")])));
        assert!(login_missing(&not_logged_in, &env(&[("CODEX_API_KEY", " ")])));
        // A report of another shape says nothing: the turn goes on.
        assert!(!login_missing(&json!({}), &none));
    }

    #[test]
    fn auth_says_how_the_child_authenticates_by_the_same_rule() {
        let env = |pairs: &[(&str, &str)]| Env::from_pairs(pairs.iter().copied(), Os::Unix);
        let not_logged_in = json!({"account": null, "requiresOpenaiAuth": true});
        assert_eq!(auth(&not_logged_in, &env(&[])), json!({"ready": false, "via": null}));
        assert_eq!(
            auth(&not_logged_in, &env(&[("OPENAI_API_KEY", "sk-x")])),
            json!({"ready": true, "via": "apiKeyEnv"})
        );
        assert_eq!(auth(&not_logged_in, &env(&[("CODEX_API_KEY", " ")])), json!({"ready": false, "via": null}));
        let logged_in = json!({"account": {"type": "apiKey"}, "requiresOpenaiAuth": true});
        assert_eq!(auth(&logged_in, &env(&[])), json!({"ready": true, "via": "account"}));
        let custom = json!({"account": null, "requiresOpenaiAuth": false});
        assert_eq!(auth(&custom, &env(&[])), json!({"ready": true, "via": "notRequired"}));
    }
}
