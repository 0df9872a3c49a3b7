//! What the runner of a turn uses ([`TurnOptions`]), and what every entry point that runs turns
//! shares in its options: the fields ([`turn_options!`], which declares each entry point's options
//! with them), their rules, and how they become the runner's ([`build`]). The entry points' own
//! declarations are [`super::run_turn`]'s and [`super::conversation`]'s.

use super::input::{self, InputItem};
use super::json::{invalid, OptionsError};
use super::locus::Locus;
use super::mcp::McpPolicy;
use super::rules::{Millis, NonEmpty};
use super::target::Target;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::time::Duration;
use ts_rs::TS;

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
/// How long a prepared turn waits for `start()` by default: five minutes, then its child ends.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_millis(300_000);

/// How much the turn may do: `full` (default), `readOnly` or `ask`.
#[derive(Deserialize, TS, Debug, Clone, Copy, PartialEq, Eq, Default)]
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

/// When the run ends: `turnCompleted` (default) or `idle`.
#[derive(Deserialize, TS, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub enum Until {
    /// With the turn's `turn/completed` (seed 000).
    #[default]
    TurnCompleted,
    /// Once the thread and every sub-agent it started are idle and no goal continuation is due.
    Idle,
}

/// Codex's collaboration mode for the turn: `default` or `plan`.
#[derive(Deserialize, TS, Debug, Clone, Copy, PartialEq, Eq)]
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

/// What every turn's options share, taken out of them once read.
pub(super) struct Common {
    pub(super) cwd: String,
    pub(super) model: Option<String>,
    pub(super) access: Option<Access>,
    pub(super) thread_id: Option<NonEmpty>,
    pub(super) mcp: Option<McpPolicy>,
    pub(super) codex_path: Option<NonEmpty>,
    pub(super) locus: Option<Locus>,
    pub(super) env: Option<BTreeMap<String, String>>,
    pub(super) interrupt_grace_ms: Option<Millis<0>>,
    pub(super) request_timeout_ms: Option<Millis<1>>,
    pub(super) until: Option<Until>,
    pub(super) max_continuations: Option<Option<u32>>,
    pub(super) idle_wait_ms: Option<Option<u64>>,
    pub(super) on_server_request: Option<bool>,
    pub(super) server_request_timeout_ms: Option<Millis<1>>,
}

/// The options of an entry point that runs a turn (declared by [`turn_options!`]).
pub(super) trait TurnOptionsOf {
    fn common(&mut self) -> Common;
}

/// Declares the options of an entry point that runs turns: the fields every turn shares, then
/// its own (and, for one the caller runs itself — `pub struct X runs { … }` — its signal and
/// `ephemeral`). Shared as written here rather than through `#[serde(flatten)]`, which would lose the
/// path of an error in a shared field.
macro_rules! turn_options {
    (@emit $(#[$meta:meta])* $name:ident { $($fields:tt)* }) => {
        $(#[$meta])*
        #[derive(::serde::Deserialize, ::ts_rs::TS, Debug)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            /// Absolute path of the working directory (a Windows path with a WSL `locus`).
            pub cwd: String,
            /// The model (Codex's default without it; an empty one is none).
            #[ts(optional)]
            pub model: Option<String>,
            /// `full` (default): full access; command and file-change approvals are granted, a
            /// permission request gets an empty profile, an elicitation is declined, a question or
            /// any other request a method error (docs/agent-loop.md). `readOnly`: nothing is
            /// granted, every MCP server is off, confirmed by the server. `ask`: the user's own
            /// workspace-write sandbox for `cwd` (`sandbox_workspace_write` as `config/read`
            /// reports it), where Codex asks before it escalates; `onServerRequest` is required and
            /// answers.
            #[ts(optional, inline)]
            pub access: Option<$crate::options::turn::Access>,
            /// Resume this stored thread (`thread/resume`); without it a new thread starts.
            #[ts(optional)]
            pub thread_id: Option<$crate::options::rules::NonEmpty>,
            /// Only these MCP servers, each on loopback (docs/mcp-and-isolation.md).
            #[ts(optional)]
            pub mcp: Option<$crate::options::mcp::McpPolicy>,
            /// Use this Codex executable as given instead of discovering one (inside the
            /// distribution with `locus`).
            #[ts(optional)]
            pub codex_path: Option<$crate::options::rules::NonEmpty>,
            /// Run discovery and the child inside a WSL distribution; `cwd` may be a Windows path.
            #[ts(optional)]
            pub locus: Option<$crate::options::locus::Locus>,
            /// Merged over the inherited environment for the child.
            #[ts(optional, type = "Record<string, string>")]
            pub env: Option<std::collections::BTreeMap<String, String>>,
            /// How long an interrupted turn has to end before its child is killed: 0 … 2^31 − 1
            /// ms; default 2000.
            #[serde(default, deserialize_with = "crate::options::json::given")]
            #[ts(optional)]
            pub interrupt_grace_ms: Option<$crate::options::rules::Millis<0>>,
            /// Per request (initialize, thread/*, turn/start…) and for the `mcp` inventory, 1 …
            /// 2^31 − 1 ms; default 30000.
            #[serde(default, deserialize_with = "crate::options::json::given")]
            #[ts(optional)]
            pub request_timeout_ms: Option<$crate::options::rules::Millis<1>>,
            /// `turnCompleted` (default): the run ends with the turn's `turn/completed`; whatever
            /// Codex was still doing for it is named in `terminal.cutOff`. `idle`: the run also
            /// waits for every sub-agent the turn started and every goal continuation Codex runs
            /// on its own.
            #[ts(optional, inline)]
            pub until: Option<$crate::options::turn::Until>,
            /// With `until: 'idle'` only: the goal continuation turns the run waits for at most
            /// (0 … 2^32 − 1; default 20). Reached, the run ends `completed` and `cutOff` names
            /// the goal (`maxContinuations`).
            #[serde(default, deserialize_with = "crate::options::json::present")]
            #[ts(optional, type = "number")]
            pub max_continuations: Option<Option<u32>>,
            /// With `until: 'idle'` only: how long the run waits at most after the user's turn
            /// completed (1 … 2^31 − 1 ms; default 1800000, half an hour). Reached, what still
            /// runs is interrupted (killed after `interruptGraceMs`), the run ends `completed`, and
            /// `cutOff` names it (`idleWaitMs`).
            #[serde(default, deserialize_with = "crate::options::json::present")]
            #[ts(optional, type = "number")]
            pub idle_wait_ms: Option<Option<u64>>,
            /// The app answers server requests (approvals, plan mode's questions, permissions, MCP
            /// elicitations, dynamic tool calls) with the method's response type. `undefined` or a
            /// throw: the fixed policy's reply. An answer that does not fit the method's response
            /// type is not sent: the method's refusal goes (under `full` too), and the event says
            /// `unfit` and why. Not with `readOnly`.
            // JavaScript keeps the function; the core is told one was given (`true`).
            #[ts(optional, type = "OnServerRequest")]
            pub on_server_request: Option<bool>,
            /// How long `onServerRequest` has for an answer before the fixed policy's reply goes
            /// (`timedOut`): 1 … 2^31 − 1 ms; default 600000.
            #[serde(default, deserialize_with = "crate::options::json::given")]
            #[ts(optional)]
            pub server_request_timeout_ms: Option<$crate::options::rules::Millis<1>>,
            $($fields)*
            #[serde(flatten)]
            #[ts(skip)]
            pub unknown: $crate::options::json::Unknown,
        }

        impl $crate::options::turn::TurnOptionsOf for $name {
            fn common(&mut self) -> $crate::options::turn::Common {
                $crate::options::turn::Common {
                    cwd: std::mem::take(&mut self.cwd),
                    model: self.model.take(),
                    access: self.access.take(),
                    thread_id: self.thread_id.take(),
                    mcp: self.mcp.take(),
                    codex_path: self.codex_path.take(),
                    locus: self.locus.take(),
                    env: self.env.take(),
                    interrupt_grace_ms: self.interrupt_grace_ms.take(),
                    request_timeout_ms: self.request_timeout_ms.take(),
                    until: self.until.take(),
                    max_continuations: self.max_continuations.take(),
                    idle_wait_ms: self.idle_wait_ms.take(),
                    on_server_request: self.on_server_request.take(),
                    server_request_timeout_ms: self.server_request_timeout_ms.take(),
                }
            }
        }
    };
    // What the caller runs itself: also aborted by a signal, and its thread maybe not stored.
    ($(#[$meta:meta])* pub struct $name:ident runs { $($own:tt)* } $($rest:tt)*) => {
        turn_options!(@emit $(#[$meta])* $name {
            $($own)*
            /// Aborts it: before a prepared turn's `start()` it is disposed; a running turn is
            /// interrupted (killed after `interruptGraceMs`), its terminal's `abortReason` the
            /// signal's reason.
            #[serde(skip_deserializing)]
            #[ts(optional, type = "AbortSignal")]
            pub signal: $crate::options::rules::JsOnly,
            /// The thread is not stored: not listed, not resumable (`thread/start`'s
            /// `ephemeral`). `runUtility` defaults to true.
            #[ts(optional)]
            pub ephemeral: Option<bool>,
        });
        turn_options!($($rest)*);
    };
    ($(#[$meta:meta])* pub struct $name:ident { $($own:tt)* } $($rest:tt)*) => {
        turn_options!(@emit $(#[$meta])* $name { $($own)* });
        turn_options!($($rest)*);
    };
    () => {};
}
pub(super) use turn_options;

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
    /// A prepared turn not started within this ends (`idleTimeoutMs`); `None` for the others.
    pub idle_timeout: Option<Duration>,
    /// The app's tools (`tools`), offered on a thread this turn starts and answered by the app;
    /// `None` when not given (the turn sends what it sent before app tools existed).
    pub tools: Option<Vec<super::tools::AppTool>>,
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
            .field("idle_timeout", &self.idle_timeout)
            .field("tools", &self.tools.as_ref().map(|t| t.iter().map(|t| t.name.as_str()).collect::<Vec<_>>()))
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
    /// Checks the fields; errors name them as `options.<field>` (`options.prompt`).
    pub(super) fn parse(
        prompt: Option<String>,
        input: Option<Vec<InputItem>>,
        output_schema: Option<Box<RawValue>>,
        effort: Option<NonEmpty>,
        locus: Option<&Locus>,
    ) -> Result<TurnInput, OptionsError> {
        if let Some(schema) = &output_schema {
            if !schema.get().trim_start().starts_with('{') {
                return Err(invalid("options.outputSchema must be a JSON Schema object"));
            }
        }
        let input = input::from_options(prompt, input, locus)?;
        Ok(TurnInput { input, output_schema, effort: effort.map(|e| e.0), model: None })
    }
}

/// The runner's options from what every entry point's options share, and what is its own.
pub(super) fn build(
    c: Common,
    turn: Option<TurnInput>,
    review: Option<Box<RawValue>>,
    mode: Option<Mode>,
    ephemeral: Option<bool>,
    idle_timeout: Option<Duration>,
    tools: Option<super::tools::ToolSpecs>,
) -> Result<TurnOptions, OptionsError> {
    let access = c.access.unwrap_or_default();
    let app_answers = c.on_server_request == Some(true);
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
    let until = c.until.unwrap_or_default();
    let idle = idle_bounds(until, c.max_continuations, c.idle_wait_ms)?;
    if access == Access::ReadOnly && c.mcp.as_ref().is_some_and(|p| !p.servers.is_empty()) {
        return Err(invalid(
            "options.mcp.servers must be empty with access 'readOnly': a read-only turn runs with every MCP server \
             disabled (and Codex refuses MCP tool calls in a read-only sandbox under approval 'never'); use access 'full' \
             for MCP servers",
        ));
    }
    // `tools: {}` is no tools: the turn sends what a turn without them sends (an app writing
    // `cond ? { … } : {}` asks for nothing new).
    let tools = tools.filter(|specs| !specs.is_empty());
    if access == Access::ReadOnly && tools.is_some() {
        return Err(invalid(
            "options.tools cannot be used with access 'readOnly': a read-only turn answers nothing from the app, and its \
             tool calls would all be refused; use access 'full' or 'ask' for app tools",
        ));
    }
    let tools = tools.map(super::tools::check).transpose()?;
    let target = Target::parse(c.cwd, c.codex_path.map(|p| p.0), c.locus, c.env)?;
    Ok(TurnOptions {
        turn,
        target,
        model: c.model.filter(|m| !m.is_empty()),
        access,
        thread_id: c.thread_id.map(|id| id.0),
        mcp: c.mcp,
        interrupt_grace: c.interrupt_grace_ms.map_or(DEFAULT_INTERRUPT_GRACE, Millis::duration),
        request_timeout: super::json::request_timeout(c.request_timeout_ms),
        until,
        idle,
        mode,
        app_answers,
        server_request_timeout: c.server_request_timeout_ms.map_or(DEFAULT_SERVER_REQUEST_TIMEOUT, Millis::duration),
        ephemeral: ephemeral == Some(true),
        review,
        idle_timeout,
        tools,
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
    let max_ms = super::rules::MAX_MILLIS;
    let idle_wait = match idle_wait_ms {
        Some(None) => {
            return Err(invalid(format!(
                "options.idleWaitMs must be an integer number of milliseconds from 1 to {max_ms}, not null"
            )))
        }
        Some(Some(ms)) if !(1..=max_ms).contains(&ms) => {
            return Err(invalid(format!(
                "options.idleWaitMs must be an integer number of milliseconds from 1 to {max_ms}"
            )))
        }
        Some(Some(ms)) => Duration::from_millis(ms),
        None => DEFAULT_IDLE_WAIT,
    };
    Ok(IdleBounds { max_continuations, idle_wait })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::run_turn::{parse_prepared, parse_review};

    /// An absolute path on this platform, where the options below say `"/tmp`.
    const TMP: &str = if cfg!(windows) { r"C:\tmp" } else { "/tmp" };

    fn parse(json: &str) -> Result<TurnOptions, OptionsError> {
        let tmp = serde_json::to_string(TMP).unwrap();
        crate::options::parse(&json.replace(r#""/tmp"#, tmp.trim_end_matches('"')))
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
    fn each_entry_point_says_whose_an_option_is() {
        let with = |json: serde_json::Value| json.to_string().replace("/tmp", &TMP.replace('\\', "\\\\"));
        let prepared = parse_prepared(&with(serde_json::json!({"cwd": "/tmp", "idleTimeoutMs": 200}))).unwrap();
        assert_eq!(prepared.idle_timeout, Some(Duration::from_millis(200)));
        let default = parse_prepared(&with(serde_json::json!({"cwd": "/tmp"}))).unwrap();
        assert_eq!(default.idle_timeout, Some(DEFAULT_IDLE_TIMEOUT));
        assert_eq!(parse(r#"{"prompt":"x","cwd":"/tmp"}"#).unwrap().idle_timeout, None);
        let prompt = parse_prepared(&with(serde_json::json!({"cwd": "/tmp", "prompt": "x"}))).unwrap_err().0;
        assert!(prompt.starts_with("options.prompt belongs to start()"), "{prompt}");
        for bad in [serde_json::json!(0), serde_json::json!(2147483648u64), serde_json::json!(null)] {
            let idle = parse_prepared(&with(serde_json::json!({"cwd": "/tmp", "idleTimeoutMs": bad}))).unwrap_err().0;
            assert_eq!(idle, "options.idleTimeoutMs must be an integer number of milliseconds from 1 to 2147483647");
        }
        assert_eq!(
            err(r#"{"prompt":"x","cwd":"/tmp","idleTimeoutMs":5}"#),
            "options.idleTimeoutMs is not an option of runTurn"
        );
        let mode = parse_review(&with(
            serde_json::json!({"cwd": "/tmp", "mode": "plan", "target": {"type": "uncommittedChanges"}}),
        ));
        assert!(mode.unwrap_err().0.starts_with("options.mode is not an option of runReview"));
        let review =
            parse_review(&with(serde_json::json!({"cwd": "/tmp", "target": {"type": "commit", "sha": "abc"}})))
                .unwrap();
        assert_eq!(review.review.unwrap().get(), r#"{"type":"commit","sha":"abc"}"#);
        // The JS-only values never come as JSON: a `signal` that does is no option.
        assert_eq!(err(r#"{"prompt":"x","cwd":"/tmp","signal":{}}"#), "options.signal is not an option of runTurn");
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
