//! The entry points that run a turn — `runTurn`, `prepareTurn`, `runReview` and a prepared
//! turn's `start()` — their options declared once (the TypeScript is generated from these
//! declarations, their doc comments its docs) and read into the runner's [`TurnOptions`]. Every
//! error names the option it is about.

use super::input::InputItem;
use super::json::{from_json, given, invalid, stray, OptionsError, Unknown};
use super::locus::Locus;
use super::rules::{Millis, NonEmpty};
use super::turn::{build, turn_options, Mode, TurnInput, TurnOptions, TurnOptionsOf, DEFAULT_IDLE_TIMEOUT};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use ts_rs::TS;

/// What a review looks at: the protocol's `ReviewTarget`.
#[derive(Deserialize, Serialize, TS, Debug, Clone, PartialEq)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum ReviewTarget {
    UncommittedChanges,
    BaseBranch {
        /// The branch the changes are compared with.
        branch: String,
    },
    Commit {
        /// The commit to review.
        sha: String,
        /// Its title, where the app shows one (non-empty).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        title: Option<String>,
    },
    Custom {
        /// What to review, in the user's words.
        instructions: String,
    },
}

turn_options! {
    /// What `runTurn` takes: the turn's input (exactly one of `prompt` and `input`) and how it
    /// runs.
    pub struct RunTurnOptions runs {
        /// The prompt; exactly one of `prompt` and `input`.
        #[ts(optional)]
        pub prompt: Option<String>,
        /// Text and images, in order; exactly one of `prompt` and `input`.
        #[ts(optional)]
        pub input: Option<Vec<InputItem>>,
        /// The reasoning effort (`low`, `medium`, `high`, … as the model offers them).
        #[ts(optional)]
        pub effort: Option<NonEmpty>,
        /// Structured output: a JSON Schema (draft-07, 2019-09 or 2020-12 by its `$schema`,
        /// 2020-12 without one) or a Standard Schema that can write itself as JSON Schema (zod 4,
        /// arktype, valibot through `toStandardJsonSchema`). Codex sends it with strict mode on,
        /// so a schema strict mode would refuse is a TypeError naming its path.
        /// `terminal.structuredOutput` is the parsed final message; `runUtility` also validates
        /// it.
        #[ts(optional, type = "object")]
        pub output_schema: Option<Box<RawValue>>,
        /// Codex's collaboration mode for this turn (`plan`: it plans and may ask questions);
        /// `default` switches a thread left in plan mode back.
        #[ts(optional, inline)]
        pub mode: Option<Mode>,
        /// The app's own functions, offered to the model on this thread (Codex's dynamic tools;
        /// docs/app-tools.md): by name (`^[a-zA-Z0-9_-]+$`, at most 128 characters, not one of
        /// Codex's own tools), each `{ description, inputSchema, execute, timeoutMs? }`. The
        /// arguments are checked against `inputSchema` before `execute` runs; each call has a
        /// deadline (`timeoutMs`, 1 … 2^31 − 1 ms; default 120000) and the turn's abort. A thread
        /// keeps the tools it was started with: given with `threadId`, they answer its calls, and a
        /// call of a stored tool not given here gets a failure text. Not with `readOnly`.
        #[serde(default)]
        #[ts(optional, type = "Record<string, AppTool>")]
        pub tools: Option<super::tools::ToolSpecs>,
    }

    /// What `prepareTurn` takes: `runTurn`'s options without the turn's own input
    /// (`PreparedTurn.start` gives it), and how long the prepared turn waits for it.
    pub struct PrepareTurnOptions runs {
        /// Codex's collaboration mode for the turn (`plan`: it plans and may ask questions).
        #[ts(optional, inline)]
        pub mode: Option<Mode>,
        /// A prepared turn not started within this ends its child (its Turn is then cancelled):
        /// 1 … 2^31 − 1 ms; default 300000.
        #[serde(default, deserialize_with = "given")]
        #[ts(optional)]
        pub idle_timeout_ms: Option<Millis<1>>,
        /// The app's own functions, offered to the model on this thread (Codex's dynamic tools;
        /// docs/app-tools.md): by name (`^[a-zA-Z0-9_-]+$`, at most 128 characters, not one of
        /// Codex's own tools), each `{ description, inputSchema, execute, timeoutMs? }`. The
        /// arguments are checked against `inputSchema` before `execute` runs; each call has a
        /// deadline (`timeoutMs`, 1 … 2^31 − 1 ms; default 120000) and the turn's abort. A thread
        /// keeps the tools it was started with: given with `threadId`, they answer its calls, and a
        /// call of a stored tool not given here gets a failure text. Not with `readOnly`.
        #[serde(default)]
        #[ts(optional, type = "Record<string, AppTool>")]
        pub tools: Option<super::tools::ToolSpecs>,
    }

    /// What `runReview` takes: a turn's options with a `target` instead of the turn's input.
    pub struct ReviewOptions runs {
        /// What to review: the uncommitted changes, a branch's, a commit's, or what the user
        /// says.
        #[ts(type = "ReviewTarget")]
        pub target: Option<ReviewTarget>,
        /// Taken as a turn's options take it, and not sent: `review/start` has no effort (the
        /// review runs at the thread's).
        #[ts(optional)]
        pub effort: Option<NonEmpty>,
    }
}

/// What `PreparedTurn.start` takes besides a bare prompt or item list: the turn's input
/// (exactly one of `prompt` and `input`) and how the answer is to come back.
#[derive(Deserialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartFields {
    /// The prompt; exactly one of `prompt` and `input`.
    #[ts(optional)]
    pub prompt: Option<String>,
    /// Text and images, in order; exactly one of `prompt` and `input`.
    #[ts(optional)]
    pub input: Option<Vec<InputItem>>,
    /// Structured output, as `runTurn`'s `outputSchema`.
    #[ts(optional, type = "object")]
    pub output_schema: Option<Box<RawValue>>,
    /// The reasoning effort for this turn.
    #[ts(optional)]
    pub effort: Option<NonEmpty>,
    /// The model for this turn (`turn/start` carries it); else the prepared turn's.
    #[ts(optional)]
    pub model: Option<String>,
    #[serde(flatten)]
    #[ts(skip)]
    pub unknown: Unknown,
}

/// `PreparedTurn.start`'s argument, as JSON text: `{ prompt? , input?, outputSchema?, effort?, model? }`
/// (exactly one of `prompt` and `input`). `locus` is the prepared turn's.
pub fn parse_start(json: &str, locus: Option<&Locus>) -> Result<TurnInput, OptionsError> {
    let raw: TurnStartFields = from_json(json)?;
    stray(&raw.unknown, "start()", &[])?;
    let mut input = TurnInput::parse(raw.prompt, raw.input, raw.output_schema, raw.effort, locus)?;
    // An empty model is the options' (an empty one is an error on the wire).
    input.model = raw.model.filter(|m| !m.is_empty());
    Ok(input)
}

/// What `target` means beside an entry point that has none.
const TARGET_IS_REVIEWS: (&str, &str) = ("target", "belongs to runReview");

/// What a prepared turn's options may not hold: `start()` gives them.
const START_GIVES: &str = "belongs to start(): a prepared turn is given its input when it starts";

/// What a review's options may not hold: its target says what to do.
const TARGET_SAYS: &str = "is not an option of runReview: the review's target says what to do";

/// Parses and validates the JSON text of a `runTurn` options object.
pub fn parse(json: &str) -> Result<TurnOptions, OptionsError> {
    let mut o: RunTurnOptions = from_json(json)?;
    stray(&o.unknown, "runTurn", &[TARGET_IS_REVIEWS])?;
    let common = o.common();
    let turn = TurnInput::parse(o.prompt, o.input, o.output_schema, o.effort, common.locus.as_ref())?;
    build(common, Some(turn), None, o.mode, o.ephemeral, None, o.tools)
}

/// The options of `prepareTurn`: those of `runTurn` without the turn's input, which `start`
/// gives, and how long it waits for it.
pub fn parse_prepared(json: &str) -> Result<TurnOptions, OptionsError> {
    let mut o: PrepareTurnOptions = from_json(json)?;
    let given_at_start = [
        ("prompt", START_GIVES),
        ("input", START_GIVES),
        ("outputSchema", START_GIVES),
        ("effort", START_GIVES),
        TARGET_IS_REVIEWS,
    ];
    stray(&o.unknown, "prepareTurn", &given_at_start)?;
    let idle_timeout = o.idle_timeout_ms.map_or(DEFAULT_IDLE_TIMEOUT, Millis::duration);
    let tools = o.tools.take();
    build(o.common(), None, None, o.mode, o.ephemeral, Some(idle_timeout), tools)
}

/// The options of `runReview`: those of `runTurn` with a `target` instead of the turn's input.
pub fn parse_review(json: &str) -> Result<TurnOptions, OptionsError> {
    let mut o: ReviewOptions = from_json(json)?;
    let said_by_target =
        [("prompt", TARGET_SAYS), ("input", TARGET_SAYS), ("outputSchema", TARGET_SAYS), ("mode", TARGET_SAYS)];
    stray(&o.unknown, "runReview", &said_by_target)?;
    let Some(target) = o.target.take() else {
        return Err(invalid("options.target is required: what to review"));
    };
    let named = match &target {
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
    let wire = serde_json::value::to_raw_value(&target).map_err(|e| invalid(format!("options.target: {e}")))?;
    build(o.common(), None, Some(wire), None, o.ephemeral, None, None)
}
