//! The MCP policy a turn is given (`mcp: { servers }`), and the options of the policy's own entry
//! points (what `runTurn` would add for `mcp`, and the configured inventory), which the
//! installed-CLI proof and the tests call: `{ cwd, codexPath?, launcher?, locus?, env?, mcp?,
//! requestTimeoutMs? }` (the inventory's deadline, as a turn's).
//! `launcher` (an argv prefix such as `[node, codex.js]`) stands in for `codexPath` where the
//! proof runs a launcher script directly.

use super::json::given;
use super::json::{from_json, invalid, OptionsError};
use super::locus::Locus;
use super::rules::Millis;
use super::target::Target;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::time::Duration;
use ts_rs::TS;

/// One MCP server a turn may use: Streamable HTTP on loopback.
// `Debug` shows header names, never their values.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServer {
    /// An `http(s)` URL on loopback. It reaches Codex on its command line, which every local
    /// user can read: one with userinfo, a query string or a fragment is a `TypeError`. Secrets
    /// go in `bearerTokenEnvVar` or `httpHeaders`, which never reach a command line.
    #[serde(deserialize_with = "url_without_secrets")]
    pub url: String,
    /// The variable of the child's environment that holds the bearer token (its name, not the
    /// token).
    #[serde(default)]
    #[ts(optional)]
    pub bearer_token_env_var: Option<String>,
    /// Headers sent with every request to the server; their values reach Codex through its
    /// environment, never its command line.
    #[serde(default)]
    #[ts(optional, type = "Record<string, string>")]
    pub http_headers: Option<BTreeMap<String, String>>,
}

/// The part of a server URL that can carry a secret, if it has one: userinfo
/// (`user:password@` before the host), a query string or a fragment. The URL is written into
/// the child's command line (`-c mcp_servers=…`), which every local user can read
/// (`/proc/<pid>/cmdline`, `ps`), so none of them is accepted, whatever it holds. Read from the
/// text as written and as the `url` crate parses it, so that neither reading lets one through.
fn secret_part(url: &str) -> Option<&'static str> {
    // The authority as written: after `//`, up to the first character that ends it (a
    // backslash too, which the parser reads as `/` in http(s) URLs).
    let authority = url.split_once("//").map_or("", |(_, rest)| rest.split(['/', '\\', '?', '#']).next().unwrap_or(""));
    let parsed = url::Url::parse(url).ok();
    if authority.contains('@') || parsed.as_ref().is_some_and(|u| !u.username().is_empty() || u.password().is_some()) {
        Some("userinfo (user:password@ before the host)")
    } else if url.contains('?') {
        Some("a query string")
    } else if url.contains('#') {
        Some("a fragment")
    } else {
        None
    }
}

/// `url` as given, or an error (the path names the server) that says which part is refused and
/// where secrets go instead — never the URL itself.
fn url_without_secrets<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let url = String::deserialize(deserializer)?;
    match secret_part(&url) {
        None => Ok(url),
        Some(part) => Err(serde::de::Error::custom(format!(
            "has {part}, and a server URL reaches Codex on its command line, which every local user can read; \
             secrets go in bearerTokenEnvVar or httpHeaders, which never reach a command line"
        ))),
    }
}

/// The explicit MCP policy of a turn: these servers, by name, and no other.
#[derive(Deserialize, TS, Debug)]
#[serde(deny_unknown_fields)]
pub struct McpPolicy {
    /// The servers the turn may use, by the name Codex gives their tools.
    #[ts(type = "Record<string, McpServer>")]
    pub servers: BTreeMap<String, McpServer>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("url", &"<redacted>")
            .field("bearer_token_env_var", &self.bearer_token_env_var)
            .field("http_headers", &self.http_headers.as_ref().map(|h| h.keys().collect::<Vec<_>>()))
            .finish()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawRequest {
    cwd: String,
    #[serde(default)]
    codex_path: Option<String>,
    #[serde(default)]
    launcher: Option<Vec<String>>,
    #[serde(default)]
    locus: Option<Locus>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    mcp: Option<McpPolicy>,
    #[serde(default, deserialize_with = "given")]
    request_timeout_ms: Option<Millis<1>>,
}

pub struct PolicyRequest {
    pub target: Target,
    /// An argv prefix (`[node, codex.js]`) used instead of `codexPath`.
    pub launcher: Option<Vec<String>>,
    pub policy: Option<McpPolicy>,
    /// How long the inventory may take, as a turn's `requestTimeoutMs`.
    pub request_timeout: Duration,
}

impl PolicyRequest {
    pub fn parse(json: &str) -> Result<PolicyRequest, OptionsError> {
        let raw: RawRequest = from_json(json)?;
        if raw.launcher.as_ref().is_some_and(|l| l.first().is_none_or(String::is_empty)) {
            return Err(invalid("options.launcher must name a program"));
        }
        if raw.launcher.is_some() && raw.locus.is_some() {
            return Err(invalid("options.launcher cannot be combined with options.locus"));
        }
        let request_timeout = super::json::request_timeout(raw.request_timeout_ms);
        let target = Target::parse(raw.cwd, raw.codex_path, raw.locus, raw.env)?;
        Ok(PolicyRequest { target, launcher: raw.launcher, policy: raw.mcp, request_timeout })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An absolute directory on this platform.
    const CWD: &str = if cfg!(windows) { r"C:\work" } else { "/work" };

    /// The error of a turn's options and of the policy's own entry point given `url` for the
    /// server `name` (both must refuse alike), or `None` when both accept it.
    fn refusal(name: &str, url: &str) -> Option<String> {
        let servers = json!({ name: {"url": url, "bearerTokenEnvVar": "T", "httpHeaders": {"X-A": "v"}} });
        let turn = crate::options::parse(&json!({"prompt": "x", "cwd": CWD, "mcp": {"servers": servers}}).to_string());
        let proof = PolicyRequest::parse(&json!({"cwd": CWD, "mcp": {"servers": servers}}).to_string());
        match (turn, proof) {
            (Ok(_), Ok(_)) => None,
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "{url}: both entry points say the same");
                Some(a.0)
            }
            (turn, proof) => panic!("{url}: runTurn {:?}, the proof {:?}", turn.err(), proof.err()),
        }
    }

    #[test]
    fn a_url_that_can_carry_a_secret_is_refused_naming_the_server() {
        let secret = "SEKRIT-9d1";
        for (url, part) in [
            (format!("http://127.0.0.1:9/mcp?api_key={secret}"), "a query string"),
            (format!("http://127.0.0.1:9/mcp?{secret}"), "a query string"),
            ("http://127.0.0.1:9/mcp?".to_string(), "a query string"),
            (format!("http://127.0.0.1:9/mcp#{secret}"), "a fragment"),
            ("http://localhost/mcp#".to_string(), "a fragment"),
            (format!("http://user:{secret}@127.0.0.1:9/mcp"), "userinfo"),
            (format!("http://{secret}@127.0.0.1:9/mcp"), "userinfo"),
            ("http://@127.0.0.1:9/mcp".to_string(), "userinfo"),
            (format!("http://127.0.0.1:9@{secret}.example/mcp"), "userinfo"),
            (format!("HTTP://[::1]:9/mcp?token={secret}#x"), "a query string"),
        ] {
            let e = refusal("my.srv", &url).unwrap_or_else(|| panic!("{url} was accepted"));
            assert!(e.starts_with("options.mcp.servers.my.srv.url: has "), "{url}: {e}");
            assert!(e.contains(part), "{url}: {e}");
            assert!(e.contains("bearerTokenEnvVar") && e.contains("httpHeaders"), "{url}: {e}");
            assert!(!e.contains(secret) && !e.contains("127.0.0.1"), "{url}: {e}");
        }
        // A path is not a secret's place by this rule: `@` and encoded `?`/`#` in it are plain.
        for url in ["http://127.0.0.1:9/mcp", "http://localhost/a/@b/%3Fc%23d", "https://[::1]/"] {
            assert_eq!(refusal("s", url), None, "{url}");
        }
    }
}
