//! The options of a turn — `runTurn`, `prepareTurn`, `runReview` and a prepared turn's
//! `start()` — as JavaScript passes them (JSON), validated into what the runner uses. Every
//! error names the option it is about.

use super::input::{self, InputItem};
use super::json::{from_json, invalid, millis, present, OptionsError};
use super::locus::Locus;
use super::mcp::McpPolicy;
use super::target::Target;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::time::Duration;

pub const DEFAULT_INTERRUPT_GRACE: Duration = Duration::from_millis(2000);
pub use super::json::DEFAULT_REQUEST_TIMEOUT;
/// With `until: 'idle'`, the goal continuation turns the run waits for at most. A continuation
/// is a model request or more that Codex makes on its own; a goal the model keeps working on for
/// twenty turns without completing, blocking or pausing it is stuck rather than busy.
pub const DEFAULT_MAX_CONTINUATIONS: u32 = 20;
/// With `until: 'idle'`, how long the run waits at most after the user's turn completed: half
/// an hour, longer than sub-agents and continuations take for one prompt, short enough that a
/// forgotten run does not go on for the rest of the day.
pub const DEFAULT_IDLE_WAIT: Duration = Duration::from_millis(1_800_000);

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub enum Access {
    /// Seed 000: everything granted (approval never, full access for the turn).
    #[default]
    Full,
    /// Seed 003: nothing granted, every MCP server off, confirmed by the server.
    ReadOnly,
    /// The workspace writable and Codex asking before it escalates; the app answers
    /// (`onServerRequest`, required).
    Ask,
}

/// When the run ends.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub enum Until {
    /// With the turn's `turn/completed` (seed 000).
    #[default]
    TurnCompleted,
    /// Once the thread and every sub-agent it started are idle and no goal continuation is due.
    Idle,
}

/// Codex's collaboration mode for the turn.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    Default,
    /// The model plans, and may ask the user questions (`item/tool/requestUserInput`).
    Plan,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::Plan => "plan",
        }
    }
}

/// What a review looks at: the protocol's `ReviewTarget`.
#[derive(Deserialize, Debug)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase", deny_unknown_fields)]
enum ReviewTarget {
    UncommittedChanges,
    BaseBranch {
        branch: String,
    },
    Commit {
        sha: String,
        #[serde(default)]
        title: Option<String>,
    },
    Custom {
        instructions: String,
    },
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawOptions {
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    input: Option<Vec<InputItem>>,
    cwd: String,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    access: Option<Access>,
    #[serde(default)]
    effort: Option<String>,
    #[serde(default)]
    output_schema: Option<Box<RawValue>>,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    mcp: Option<McpPolicy>,
    #[serde(default)]
    codex_path: Option<String>,
    #[serde(default)]
    locus: Option<Locus>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    interrupt_grace_ms: Option<u64>,
    #[serde(default)]
    request_timeout_ms: Option<u64>,
    #[serde(default)]
    until: Option<Until>,
    /// `Some(None)`: given as `null`, which is no number.
    #[serde(default, deserialize_with = "present")]
    max_continuations: Option<Option<u32>>,
    #[serde(default, deserialize_with = "present")]
    idle_wait_ms: Option<Option<u64>>,
    #[serde(default)]
    mode: Option<Mode>,
    /// `true` where the app gave an `onServerRequest` handler (JavaScript keeps the function).
    #[serde(default)]
    on_server_request: Option<bool>,
    #[serde(default)]
    server_request_timeout_ms: Option<u64>,
    #[serde(default)]
    ephemeral: Option<bool>,
    /// `runReview`'s: what to review.
    #[serde(default)]
    target: Option<Box<RawValue>>,
}

/// Validated options of one turn. `Debug` shows variable names of `env`, never their values.
pub struct TurnOptions {
    /// What `turn/start` carries; `None` for a prepared turn, which is given it at its start.
    pub turn: Option<TurnInput>,
    /// Which Codex, where, with which environment.
    pub target: Target,
    /// `None` when absent or empty: an empty model is an error on the wire.
    pub model: Option<String>,
    pub access: Access,
    pub thread_id: Option<String>,
    pub mcp: Option<McpPolicy>,
    pub interrupt_grace: Duration,
    pub request_timeout: Duration,
    pub until: Until,
    /// With `until: 'idle'`: the bounds of the wait (see [`IdleBounds`]).
    pub idle: IdleBounds,
    pub mode: Option<Mode>,
    /// The app answers server requests (its handler); else the fixed policy does.
    pub app_answers: bool,
    /// How long the app's handler has for an answer before the fixed policy's reply goes.
    pub server_request_timeout: Duration,
    /// The thread is not stored (`thread/start`'s `ephemeral`).
    pub ephemeral: bool,
    /// A review instead of a turn: the protocol's `ReviewTarget`, checked.
    pub review: Option<Box<RawValue>>,
}

/// What bounds the wait of `until: 'idle'` once the user's turn completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleBounds {
    /// Goal continuation turns waited for at most (`maxContinuations`).
    pub max_continuations: u32,
    /// How long the wait lasts at most, from the user's turn's `turn/completed` (`idleWaitMs`).
    pub idle_wait: Duration,
}

impl Default for IdleBounds {
    fn default() -> Self {
        IdleBounds { max_continuations: DEFAULT_MAX_CONTINUATIONS, idle_wait: DEFAULT_IDLE_WAIT }
    }
}

/// How long an app's answer to a server request may take by default: ten minutes.
pub const DEFAULT_SERVER_REQUEST_TIMEOUT: Duration = Duration::from_millis(600_000);

impl std::fmt::Debug for TurnOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnOptions")
            .field("turn", &self.turn)
            .field("target", &self.target)
            .field("model", &self.model)
            .field("access", &self.access)
            .field("thread_id", &self.thread_id)
            .field("mcp", &self.mcp)
            .field("interrupt_grace", &self.interrupt_grace)
            .field("request_timeout", &self.request_timeout)
            .field("until", &self.until)
            .field("idle", &self.idle)
            .field("mode", &self.mode)
            .field("app_answers", &self.app_answers)
            .field("server_request_timeout", &self.server_request_timeout)
            .field("ephemeral", &self.ephemeral)
            .field("review", &self.review.is_some())
            .finish()
    }
}

/// The input of one turn: what the user says, and how the answer is to come back.
#[derive(Debug)]
pub struct TurnInput {
    /// The prompt or the input items, in order.
    pub input: Vec<InputItem>,
    pub output_schema: Option<Box<RawValue>>,
    pub effort: Option<String>,
    /// A prepared turn's start may name the model (`turn/start`'s); else the options' one.
    pub model: Option<String>,
}

impl TurnInput {
    /// Checks the fields; errors name them as `{at}.<field>` (`options.prompt`).
    fn parse(
        prompt: Option<String>,
        input: Option<Vec<InputItem>>,
        output_schema: Option<Box<RawValue>>,
        effort: Option<String>,
        locus: Option<&Locus>,
    ) -> Result<TurnInput, OptionsError> {
        if let Some(schema) = &output_schema {
            if !schema.get().trim_start().starts_with('{') {
                return Err(invalid("options.outputSchema must be a JSON Schema object"));
            }
        }
        if matches!(&effort, Some(e) if e.is_empty()) {
            return Err(invalid("options.effort must be a non-empty string"));
        }
        Ok(TurnInput { input: input::from_options(prompt, input, locus)?, output_schema, effort, model: None })
    }
}

/// `PreparedTurn.start`'s argument, as JSON text: `{ prompt? , input?, outputSchema?, effort?, model? }`
/// (exactly one of `prompt` and `input`). `locus` is the prepared turn's.
pub fn parse_start(json: &str, locus: Option<&Locus>) -> Result<TurnInput, OptionsError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct RawStart {
        #[serde(default)]
        prompt: Option<String>,
        #[serde(default)]
        input: Option<Vec<InputItem>>,
        #[serde(default)]
        output_schema: Option<Box<RawValue>>,
        #[serde(default)]
        effort: Option<String>,
        #[serde(default)]
        model: Option<String>,
    }
    let raw: RawStart = from_json(json)?;
    let mut input = TurnInput::parse(raw.prompt, raw.input, raw.output_schema, raw.effort, locus)?;
    // An empty model is the options' (an empty one is an error on the wire).
    input.model = raw.model.filter(|m| !m.is_empty());
    Ok(input)
}

/// What the options are for: the function they were given to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Turn,
    Prepared,
    Review,
}

/// Parses and validates the JSON text of a `runTurn` options object.
pub fn parse(json: &str) -> Result<TurnOptions, OptionsError> {
    parse_as(json, Kind::Turn)
}

/// The options of `prepareTurn`: those of `runTurn` without the turn's input, which `start`
/// gives.
pub fn parse_prepared(json: &str) -> Result<TurnOptions, OptionsError> {
    parse_as(json, Kind::Prepared)
}

/// The options of `runReview`: those of `runTurn` with a `target` instead of the turn's input.
pub fn parse_review(json: &str) -> Result<TurnOptions, OptionsError> {
    parse_as(json, Kind::Review)
}

fn parse_as(json: &str, kind: Kind) -> Result<TurnOptions, OptionsError> {
    let raw: RawOptions = from_json(json)?;
    let access = raw.access.unwrap_or_default();
    let app_answers = raw.on_server_request == Some(true);
    match (access, app_answers) {
        (Access::Ask, false) => {
            return Err(invalid(
                "options.onServerRequest is required with access 'ask': Codex asks before it escalates, and the app answers",
            ))
        }
        (Access::ReadOnly, true) => {
            return Err(invalid(
                "options.onServerRequest cannot be used with access 'readOnly': a read-only turn refuses every server request",
            ))
        }
        _ => {}
    }
    let server_request_timeout =
        millis("serverRequestTimeoutMs", raw.server_request_timeout_ms, 1)?.unwrap_or(DEFAULT_SERVER_REQUEST_TIMEOUT);
    let review = match (kind, raw.target) {
        (Kind::Review, Some(target)) => {
            let named = match crate::options::json::from_json_as::<ReviewTarget>(target.get(), "options.target")? {
                ReviewTarget::UncommittedChanges => None,
                ReviewTarget::BaseBranch { branch } => Some(("branch", branch)),
                ReviewTarget::Commit { sha, title } => {
                    if title.as_deref() == Some("") {
                        return Err(invalid("options.target.title must be a non-empty string when given"));
                    }
                    Some(("sha", sha))
                }
                ReviewTarget::Custom { instructions } => Some(("instructions", instructions)),
            };
            if let Some((field, value)) = named {
                if value.trim().is_empty() {
                    return Err(invalid(format!("options.target.{field} must be a non-empty string")));
                }
            }
            Some(target)
        }
        (Kind::Review, None) => return Err(invalid("options.target is required: what to review")),
        (_, Some(_)) => return Err(invalid("options.target belongs to runReview")),
        (_, None) => None,
    };
    if kind == Kind::Review {
        let given = [
            ("prompt", raw.prompt.is_some()),
            ("input", raw.input.is_some()),
            ("outputSchema", raw.output_schema.is_some()),
            ("mode", raw.mode.is_some()),
        ];
        if let Some((name, _)) = given.iter().find(|(_, given)| *given) {
            return Err(invalid(format!(
                "options.{name} is not an option of runReview: the review's target says what to do"
            )));
        }
    }

    if matches!(&raw.thread_id, Some(id) if id.is_empty()) {
        return Err(invalid("options.threadId must be a non-empty string"));
    }
    let interrupt_grace = millis("interruptGraceMs", raw.interrupt_grace_ms, 0)?.unwrap_or(DEFAULT_INTERRUPT_GRACE);
    let request_timeout = super::json::request_timeout(raw.request_timeout_ms)?;
    let until = raw.until.unwrap_or_default();
    let idle = idle_bounds(until, raw.max_continuations, raw.idle_wait_ms)?;
    if raw.access == Some(Access::ReadOnly) && raw.mcp.as_ref().is_some_and(|p| !p.servers.is_empty()) {
        return Err(invalid(
            "options.mcp.servers must be empty with access 'readOnly': a read-only turn runs with every MCP server \
             disabled (and Codex refuses MCP tool calls in a read-only sandbox under approval 'never'); use access 'full' \
             for MCP servers",
        ));
    }
    let turn = if kind == Kind::Review {
        None
    } else if kind == Kind::Prepared {
        let given = [
            ("prompt", raw.prompt.is_some()),
            ("input", raw.input.is_some()),
            ("outputSchema", raw.output_schema.is_some()),
            ("effort", raw.effort.is_some()),
        ];
        if let Some((name, _)) = given.iter().find(|(_, given)| *given) {
            return Err(invalid(format!(
                "options.{name} belongs to start(): a prepared turn is given its input when it starts"
            )));
        }
        None
    } else {
        Some(TurnInput::parse(raw.prompt, raw.input, raw.output_schema, raw.effort, raw.locus.as_ref())?)
    };
    let target = Target::parse(raw.cwd, raw.codex_path, raw.locus, raw.env)?;

    Ok(TurnOptions {
        turn,
        target,
        model: raw.model.filter(|m| !m.is_empty()),
        access,
        thread_id: raw.thread_id,
        mcp: raw.mcp,
        interrupt_grace,
        request_timeout,
        until,
        idle,
        mode: raw.mode,
        app_answers,
        server_request_timeout,
        ephemeral: raw.ephemeral == Some(true),
        review,
    })
}

/// `maxContinuations` and `idleWaitMs`: only with `until: 'idle'`, which they bound; `null` is
/// a value given, and no number.
fn idle_bounds(
    until: Until,
    max_continuations: Option<Option<u32>>,
    idle_wait_ms: Option<Option<u64>>,
) -> Result<IdleBounds, OptionsError> {
    let given = [("maxContinuations", max_continuations.is_some()), ("idleWaitMs", idle_wait_ms.is_some())];
    if until != Until::Idle {
        if let Some((name, _)) = given.iter().find(|(_, given)| *given) {
            return Err(invalid(format!(
                "options.{name} bounds the wait of until: 'idle' and means nothing without it (until is 'turnCompleted')"
            )));
        }
    }
    let max_continuations = match max_continuations {
        Some(None) => {
            return Err(invalid("options.maxContinuations must be an integer from 0 to 4294967295, not null"))
        }
        Some(Some(n)) => n,
        None => DEFAULT_MAX_CONTINUATIONS,
    };
    let idle_wait = match idle_wait_ms {
        Some(None) => {
            return Err(invalid(format!(
                "options.idleWaitMs must be an integer number of milliseconds from 1 to {}, not null",
                super::json::MAX_MILLIS
            )))
        }
        given => millis("idleWaitMs", given.flatten(), 1)?.unwrap_or(DEFAULT_IDLE_WAIT),
    };
    Ok(IdleBounds { max_continuations, idle_wait })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An absolute path on this platform, where the options below say `"/tmp`.
    const TMP: &str = if cfg!(windows) { r"C:\tmp" } else { "/tmp" };

    fn parse(json: &str) -> Result<TurnOptions, OptionsError> {
        let tmp = serde_json::to_string(TMP).unwrap();
        super::parse(&json.replace(r#""/tmp"#, tmp.trim_end_matches('"')))
    }

    fn err(json: &str) -> String {
        parse(json).unwrap_err().0
    }

    #[test]
    fn accepts_minimal_and_defaults() {
        let o = parse(r#"{"prompt":"hi","cwd":"/tmp","model":""}"#).unwrap();
        assert_eq!(o.access, Access::Full);
        assert_eq!(o.model, None);
        assert_eq!(o.interrupt_grace, DEFAULT_INTERRUPT_GRACE);
        assert_eq!(o.request_timeout, DEFAULT_REQUEST_TIMEOUT);
        assert_eq!(o.idle, IdleBounds { max_continuations: 20, idle_wait: Duration::from_secs(30 * 60) });
        let o = parse(r#"{"prompt":"hi","cwd":"/tmp","until":"idle","maxContinuations":0,"idleWaitMs":1}"#).unwrap();
        assert_eq!(o.idle, IdleBounds { max_continuations: 0, idle_wait: Duration::from_millis(1) });
    }

    #[test]
    fn errors_name_the_option() {
        assert!(err(r#"{"cwd":"/tmp"}"#).contains("prompt"));
        assert!(err(r#"{"prompt":"","cwd":"/tmp"}"#).starts_with("options.prompt"));
        assert!(err(r#"{"prompt":"x","cwd":"rel"}"#).starts_with("options.cwd"));
        assert!(err(r#"{"prompt":"x","cwd":"/tmp","interruptGraceMs":"x"}"#).starts_with("options.interruptGraceMs:"));
        assert!(err(r#"{"prompt":"x","cwd":"/tmp","access":"write"}"#).starts_with("options.access:"));
        assert!(err(r#"{"prompt":"x","cwd":"/tmp","promt":"x"}"#).contains("promt"));
        assert!(err(r#"{"prompt":"x","cwd":"/tmp","outputSchema":[1]}"#).starts_with("options.outputSchema"));
        assert!(err(r#"{"prompt":"x","cwd":"/tmp","env":{"A":1}}"#).starts_with("options.env.A:"));
        assert!(err(r#"{"prompt":"x","cwd":"/tmp","mcp":{"servers":{"a":{}}}}"#).starts_with("options.mcp.servers.a"));
        assert!(err(r#"{"prompt":"x","cwd":"/tmp","requestTimeoutMs":0}"#).starts_with("options.requestTimeoutMs"));
        assert_eq!(
            err(r#"{"prompt":"x","cwd":"/tmp","interruptGraceMs":2147483648}"#),
            "options.interruptGraceMs must be an integer number of milliseconds from 0 to 2147483647"
        );
        assert!(parse(r#"{"prompt":"x","cwd":"/tmp","interruptGraceMs":2147483647}"#).is_ok());
        let read_only_mcp =
            r#"{"prompt":"x","cwd":"/tmp","access":"readOnly","mcp":{"servers":{"t":{"url":"http://127.0.0.1:1/"}}}}"#;
        assert!(err(read_only_mcp).starts_with("options.mcp.servers must be empty with access 'readOnly'"));
        assert!(parse(r#"{"prompt":"x","cwd":"/tmp","access":"readOnly","mcp":{"servers":{}}}"#).is_ok());
        // Half of a surrogate pair (a string cut through an emoji): named plainly.
        for json in [r#"{"prompt":"x","cwd":"/tmp\ud83d"}"#, r#"{"prompt":"x","cwd":"/tmp","env":{"A":"\ude00x"}}"#] {
            let e = err(json);
            assert!(e.contains("unpaired UTF-16 surrogate") && !e.contains("hex escape"), "{e}");
            assert!(e.starts_with("options.cwd:") || e.starts_with("options.env.A:"), "{e}");
        }
    }

    #[test]
    fn a_wsl_locus_translates_the_cwd_for_codex() {
        let parse_in = |cwd: &str| {
            parse(&serde_json::json!({"prompt": "x", "cwd": cwd, "locus": {"wsl": {"distro": "Ubuntu"}}}).to_string())
        };
        let o = parse_in(r"C:\Users\a\repo").unwrap();
        assert_eq!((o.target.cwd.as_str(), o.target.thread_cwd.as_str()), (r"C:\Users\a\repo", "/mnt/c/Users/a/repo"));
        assert_eq!(parse_in(r"\\wsl.localhost\Ubuntu\home\a\repo").unwrap().target.thread_cwd, "/home/a/repo");
        assert_eq!(parse_in("/home/a/repo").unwrap().target.thread_cwd, "/home/a/repo");
        let e = parse_in(r"\\wsl$\Debian\home\a").unwrap_err().0;
        assert!(
            e.starts_with(
                r#"options.cwd "\\\\wsl$\\Debian\\home\\a" has no path inside the WSL distribution "Ubuntu""#
            ),
            "{e}"
        );
        assert!(parse_in("repo").is_err());
        let o = parse(r#"{"prompt":"x","cwd":"/tmp"}"#).unwrap();
        assert_eq!(o.target.thread_cwd, TMP);
    }

    #[test]
    fn errors_and_debug_never_show_values() {
        let canary = "canary-7f3a9";
        let wrong_places = [
            format!(r#"{{"prompt":"x","cwd":"/tmp","env":"A={canary}"}}"#),
            format!(r#"{{"prompt":"x","cwd":"/tmp","env":{{"A":["{canary}"]}}}}"#),
            format!(
                r#"{{"prompt":"x","cwd":"/tmp","mcp":{{"servers":{{"s":{{"url":"http://127.0.0.1/","httpHeaders":"X: {canary}"}}}}}}}}"#
            ),
            format!(
                r#"{{"prompt":"x","cwd":"/tmp","mcp":{{"servers":{{"s":{{"url":"http://127.0.0.1/","httpHeaders":{{"X":7}},"bearerTokenEnvVar":"{canary}"}}}}}}}}"#
            ),
            format!(r#"{{"prompt":"x","cwd":"/tmp","mcp":{{"servers":{{"s":"{canary}"}}}}}}"#),
            format!(r#"{{"prompt":"x","cwd":"/tmp","interruptGraceMs":"{canary}"}}"#),
            format!(r#"{{"prompt":"x","cwd":"/tmp","env":{{"TOKEN={canary}":"x"}}}}"#),
        ];
        for json in &wrong_places {
            let message = err(json);
            assert!(message.starts_with("options."), "{message}");
            assert!(!message.contains(canary), "{message}");
        }
        assert_eq!(
            err(r#"{"prompt":"x","cwd":"/tmp","env":"A=secret"}"#),
            "options.env: invalid type: string, expected a map"
        );

        let parsed = parse(&format!(
            r#"{{"prompt":"x","cwd":"/tmp","env":{{"TOKEN":"{canary}"}},
                "mcp":{{"servers":{{"s":{{"url":"http://127.0.0.1/{canary}","httpHeaders":{{"X-Key":"{canary}"}}}}}}}}}}"#
        ))
        .unwrap();
        let debug = format!("{parsed:?}");
        assert!(!debug.contains(canary), "{debug}");
        assert!(debug.contains("TOKEN") && debug.contains("X-Key"), "{debug}");
    }
}
