//! A conversation's options, declared once and checked here: `openConversation`'s (every turn's
//! options without the turn's own input, and what the conversation adds), `send()`'s and
//! `fork()`'s. A conversation runs its turns through `runTurn` and `prepareTurn`, in JavaScript;
//! this is where what it is given is held to the rules, before anything starts.

use super::json::{from_json, invalid, stray, OptionsError};
use super::rules::{Flag, Millis, NonEmpty};
use super::turn::{build, turn_options, Mode, TurnOptionsOf};
use serde::{Deserialize, Deserializer};
use ts_rs::TS;

turn_options! {
    /// What `openConversation` takes: the options of every turn of the conversation (`runTurn`'s
    /// without the turn's own input, and without `signal`: `close()` ends what it runs), and the
    /// conversation's own.
    pub struct ConversationOptions {
        /// The reasoning effort of the turns (a send may change it for the turns after it).
        #[ts(optional)]
        pub effort: Option<NonEmpty>,
        /// Codex's collaboration mode of the turns (`plan`: they plan and may ask questions).
        #[ts(optional, inline)]
        pub mode: Option<Mode>,
        /// Default true: the next turn's child is started (up to `thread/resume`) as soon as the
        /// previous turn ended, and waits for the next send, as `prepareTurn` does.
        #[serde(default, deserialize_with = "crate::options::json::given")]
        #[ts(optional)]
        pub prepare_next: Option<Flag>,
        /// How long a prepared child waits for the next send before it is ended, counted from
        /// when it is prepared (`prepareTurn`'s `idleTimeoutMs`: 1 … 2^31 − 1 ms; default 300000,
        /// 5 minutes). A send after that starts a child of its own on the thread, as a send with
        /// `prepareNext: false` does.
        #[serde(default, deserialize_with = "crate::options::json::given")]
        #[ts(optional)]
        pub idle_timeout_ms: Option<Millis<1>>,
        /// Called with every Turn the conversation starts for the app's input, as soon as it
        /// exists: the one a send returns, a queued one, and the one an input becomes when it was
        /// too late to steer it into the running turn (that turn had ended, or Codex refused the
        /// steer).
        // JavaScript keeps the function; the core is told one was given (`true`).
        #[ts(optional, type = "(turn: Turn) => void")]
        pub on_turn: Option<bool>,
        /// Not an option of a conversation: one child per turn, and an ephemeral thread ends with
        /// its child (a TypeError).
        #[ts(optional, type = "false")]
        pub ephemeral: Option<bool>,
        /// The app's own functions, offered to the model on the conversation's thread (every send and fork passes them on) (Codex's dynamic tools;
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
}

/// While a turn runs, what a send does with its input.
#[derive(TS, Clone, Copy, Debug, PartialEq, Eq)]
#[ts(type = "'steer' | 'queue' | 'reject'")]
pub enum WhileRunning {
    Steer,
    Queue,
    Reject,
}

impl<'de> Deserialize<'de> for WhileRunning {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let refused = || super::rules::rule("must be one of 'steer', 'queue', 'reject'");
        match String::deserialize(de).map_err(|_: D::Error| refused())?.as_str() {
            "steer" => Ok(WhileRunning::Steer),
            "queue" => Ok(WhileRunning::Queue),
            "reject" => Ok(WhileRunning::Reject),
            _ => Err(refused()),
        }
    }
}

/// What `Conversation.send` takes besides the input.
#[derive(Deserialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct SendOptions {
    /// While a turn runs: `steer` (default) adds the input to it (`turn/steer`) and returns that
    /// Turn; `queue` returns a Turn that starts when the running one (and those queued before it)
    /// ended; `reject` throws a CodexError `TURN_RUNNING`.
    #[ts(optional, inline)]
    pub while_running: Option<WhileRunning>,
    /// The model for this turn and the ones after it (`turn/start` carries it; Codex keeps it for
    /// the thread).
    #[ts(optional)]
    pub model: Option<String>,
    /// The reasoning effort for this turn and the ones after it.
    #[ts(optional)]
    pub effort: Option<String>,
    #[serde(flatten)]
    #[ts(skip)]
    pub unknown: super::json::Unknown,
}

/// What `Conversation.fork` takes.
#[derive(Deserialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ConversationForkOptions {
    /// The last turn the fork keeps (inclusive); without it, the whole history.
    #[ts(optional)]
    pub last_turn_id: Option<NonEmpty>,
    /// The new conversation's `onTurn` (default: this one's).
    #[ts(optional, type = "(turn: Turn) => void")]
    pub on_turn: Option<bool>,
    #[serde(flatten)]
    #[ts(skip)]
    pub unknown: super::json::Unknown,
}

/// Why the options of a turn's input are none of a conversation's.
const SEND_GIVES: &str = "is not an option of a conversation: the input is what send() takes";

/// Checks the options of a conversation's entry point `entry` (`openConversation`, `send`,
/// `fork`), as JSON text: JavaScript's own values (`onTurn`, `onServerRequest`, `signal`) are
/// `true` where the caller gave one. Nothing is started.
pub fn check(entry: &str, json: &str) -> Result<(), OptionsError> {
    match entry {
        "openConversation" => {
            let mut o: ConversationOptions = from_json(json)?;
            let not_a_conversations = [
                ("prompt", SEND_GIVES),
                ("input", SEND_GIVES),
                ("outputSchema", "is not an option of a conversation: a conversation's turns answer in text"),
                (
                    "signal",
                    "is not an option of a conversation: close() ends what the conversation runs; abort a Turn to stop it",
                ),
                ("target", "belongs to runReview"),
            ];
            stray(&o.unknown, "a conversation", &not_a_conversations)?;
            if o.ephemeral == Some(true) {
                return Err(invalid(
                    "options.ephemeral: a conversation's thread outlives each turn's child, and an ephemeral thread ends \
                     with the child that started it",
                ));
            }
            // Every option its turns share, held to a turn's rules.
            let tools = o.tools.take();
            build(o.common(), None, None, o.mode, o.ephemeral, None, tools).map(drop)
        }
        "send" => {
            let o: SendOptions = from_json(json)?;
            stray(&o.unknown, "send(): whileRunning, model, effort", &[])
        }
        "fork" => {
            let o: ConversationForkOptions = from_json(json)?;
            stray(&o.unknown, "fork(): lastTurnId, onTurn", &[])
        }
        other => Err(invalid(format!("{other} has no options the core checks"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CWD: &str = if cfg!(windows) { r"C:\tmp" } else { "/tmp" };

    fn err(entry: &str, options: serde_json::Value) -> String {
        check(entry, &options.to_string()).unwrap_err().0
    }

    #[test]
    fn a_conversations_options_are_a_turns_and_its_own() {
        let open = |extra: serde_json::Value| {
            let mut o = json!({"cwd": CWD});
            o.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            o
        };
        assert!(check(
            "openConversation",
            &open(json!({"threadId": "t", "model": "m", "prepareNext": false, "idleTimeoutMs": 5, "onTurn": true}))
                .to_string()
        )
        .is_ok());
        assert!(err("openConversation", open(json!({"prompt": "hi"})))
            .starts_with("options.prompt is not an option of a conversation"));
        assert!(err("openConversation", open(json!({"signal": true})))
            .starts_with("options.signal is not an option of a conversation"));
        assert_eq!(
            err("openConversation", open(json!({"prepareNext": "yes"}))),
            "options.prepareNext must be a boolean"
        );
        assert!(err("openConversation", open(json!({"ephemeral": true}))).starts_with("options.ephemeral: "));
        assert_eq!(
            err("openConversation", open(json!({"threadId": ""}))),
            "options.threadId must be a non-empty string"
        );
        for bad in [json!(0), json!(2147483648u64), json!(null)] {
            assert!(err("openConversation", open(json!({"idleTimeoutMs": bad})))
                .starts_with("options.idleTimeoutMs must be an integer number of milliseconds from 1 to "));
        }
        assert!(err("openConversation", open(json!({"access": "readOnly", "onServerRequest": true})))
            .contains("onServerRequest"));
        assert!(err("openConversation", json!({"cwd": "relative"})).starts_with("options.cwd"));
    }

    #[test]
    fn send_and_fork_take_their_own() {
        assert!(check("send", r#"{"whileRunning":"queue","model":"m"}"#).is_ok());
        assert_eq!(
            err("send", json!({"whileRunning": "later"})),
            "options.whileRunning must be one of 'steer', 'queue', 'reject'"
        );
        assert_eq!(
            err("send", json!({"prompt": "x"})),
            "options.prompt is not an option of send(): whileRunning, model, effort"
        );
        assert!(err("send", json!({"model": 42})).starts_with("options.model"));
        assert_eq!(err("fork", json!({"lastTurnId": ""})), "options.lastTurnId must be a non-empty string");
        assert_eq!(err("fork", json!({"cwd": "/"})), "options.cwd is not an option of fork(): lastTurnId, onTurn");
    }
}
