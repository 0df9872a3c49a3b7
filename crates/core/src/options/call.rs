//! What the calls around turns take, declared once: the options every call shares
//! ([`CallOptions`]) and each call's own (`ListThreadsOptions`, …), and the arguments a call takes
//! before its options (`threadId`, `name`, `apiKey`, `goal`, `method`, `params`), each a type that
//! reads itself from JSON and names itself in its errors. The TypeScript of each is generated from
//! these declarations (their doc comments are its docs); the calls themselves are the rows of
//! `call/table.rs`. No error shows a value (an API key is one).

use super::json::{from_json, from_json_as, given, invalid, present, stray, OptionsError, Unknown};
use super::locus::Locus;
use super::rules::{JsOnly, Millis, NonEmpty, Positive, Secret};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use ts_rs::TS;

/// What every options type of a call shares, taken out of it once it is read.
#[derive(Default)]
pub struct Shared {
    pub cwd: Option<String>,
    pub codex_path: Option<String>,
    pub locus: Option<Locus>,
    pub env: Option<BTreeMap<String, String>>,
    pub request_timeout_ms: Option<Millis<1>>,
}

/// The options every call takes, as JavaScript names them (`signal` aside: JavaScript's own).
pub const SHARED: &[&str] = &["cwd", "codexPath", "locus", "env", "requestTimeoutMs"];

/// The options of one call (a type declared by [`call_options!`]).
pub trait CallOptionsOf: serde::de::DeserializeOwned + TS + Default {
    /// `options` cannot be left out: a field is required.
    const REQUIRED: bool;
    /// The keys given that are no option of this call.
    fn unknown(&self) -> &Unknown;
    /// The options every call shares, taken out (an `env` value is no business of anyone after);
    /// `cwd` stays (`listThreads` filters by it).
    fn take_shared(&mut self) -> Shared;
    /// The call's own rules beyond each field's.
    fn check(&self) -> Result<(), OptionsError>;
}

/// Declares the options of a call: the fields every call shares, then the call's own. Shared as
/// written here rather than through `#[serde(flatten)]`, which would lose the path of an error in
/// a shared field (`options: invalid type …` instead of `options.requestTimeoutMs: …`).
macro_rules! call_options {
    ($(
        $(#[$meta:meta])*
        pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)* }
        $(required $required:literal;)?
        $(check |$o:ident| $check:block)?
    )*) => {$(
        $(#[$meta])*
        #[derive(Deserialize, TS, Default, Debug)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            /// Absolute; where the child runs (default: a neutral directory such as the temp dir).
            /// `listThreads` also filters by it, `listSkills` and `listMcpServers` look there.
            #[ts(optional)]
            pub cwd: Option<String>,
            /// Use this Codex executable as given instead of discovering one (inside the
            /// distribution with `locus`).
            #[ts(optional)]
            pub codex_path: Option<NonEmpty>,
            /// Run discovery and the child inside a WSL distribution.
            #[ts(optional)]
            pub locus: Option<Locus>,
            /// Merged over the inherited environment for the child (e.g. `CODEX_HOME`).
            #[ts(optional, type = "Record<string, string>")]
            pub env: Option<BTreeMap<String, String>>,
            /// Ends the child at once; the call rejects with `CANCELLED` and the signal's reason
            /// as `cause`.
            #[serde(skip_deserializing)]
            #[ts(optional, type = "AbortSignal")]
            pub signal: JsOnly,
            /// Per request (`initialize` and the call's own), 1 … 2^31 − 1 ms; default 30000.
            #[serde(default, deserialize_with = "given")]
            #[ts(optional)]
            pub request_timeout_ms: Option<Millis<1>>,
            $($(#[$fmeta])* pub $field: $ty,)*
            #[serde(flatten)]
            #[ts(skip)]
            pub unknown: Unknown,
        }

        impl CallOptionsOf for $name {
            const REQUIRED: bool = false $(|| $required)?;
            fn unknown(&self) -> &Unknown {
                &self.unknown
            }
            fn take_shared(&mut self) -> Shared {
                Shared {
                    cwd: self.cwd.clone(),
                    codex_path: self.codex_path.take().map(|path| path.0),
                    locus: self.locus.take(),
                    env: self.env.take(),
                    request_timeout_ms: self.request_timeout_ms.take(),
                }
            }
            #[allow(unreachable_code)]
            fn check(&self) -> Result<(), OptionsError> {
                $({
                    let $o = self;
                    return $check;
                })?
                Ok(())
            }
        }
    )*};
}

call_options! {
    /// What every call around turns takes. Each call is one short-lived `codex app-server` child,
    /// found and started as a turn's is and ended (with everything it started) before the promise
    /// settles.
    pub struct CallOptions {}

    /// What `listModels` takes.
    pub struct ListModelsOptions {
        /// Hidden models too (left out by default, even where Codex lists them).
        #[ts(optional)]
        pub include_hidden: Option<bool>,
    }

    /// What `listThreads` takes: which page of which threads.
    pub struct ListThreadsOptions {
        /// At most this many threads (1 or more; Codex's default without it).
        #[ts(optional)]
        pub limit: Option<Positive>,
        /// `nextCursor` of the page before (non-empty); `null` or none: the first page.
        #[ts(optional = nullable)]
        pub cursor: Option<NonEmpty>,
        /// `true`: only archived threads; otherwise only threads not archived.
        #[ts(optional)]
        pub archived: Option<bool>,
        /// Only threads whose title contains this.
        #[ts(optional)]
        pub search_term: Option<NonEmpty>,
        /// `created_at` (Codex's default), `updated_at`, `recency_at`, `section_position`; newest
        /// first.
        #[ts(optional, type = "ThreadSortKey")]
        pub sort_key: Option<NonEmpty>,
        /// Only threads of these sources. Codex's default is the interactive ones (app-server and
        /// CLI sessions): threads of sub-agents (`subAgent`, `subAgentThreadSpawn`, …) and of
        /// `codex exec` (`exec`) are listed only when asked for here.
        #[ts(optional, type = "ThreadSourceKind[]")]
        pub source_kinds: Option<Vec<NonEmpty>>,
    }

    /// What `readThread` takes.
    pub struct ReadThreadOptions {
        /// The thread's turns and their items too.
        #[ts(optional)]
        pub include_turns: Option<bool>,
    }

    /// What `forkThread` takes.
    pub struct ForkThreadOptions {
        /// The last turn the fork keeps (inclusive); without it, the whole history.
        #[ts(optional)]
        pub last_turn_id: Option<NonEmpty>,
    }

    /// What `revertThread` takes: the turn from which on the history goes.
    pub struct RevertThreadOptions {
        /// The first turn to remove: it and every later turn leave the thread's history.
        #[ts(type = "string")]
        pub before_turn_id: Option<NonEmpty>,
    }
    required true;
    check |o| {
        match o.before_turn_id {
            Some(_) => Ok(()),
            None => Err(invalid("options.beforeTurnId must be a non-empty string (the first turn to remove)")),
        }
    }

    /// What `listMcpServers` takes.
    pub struct ListMcpServersOptions {
        /// Let Codex start every enabled server to ask it (stdio commands run, remote servers are
        /// contacted); without it, none is started.
        #[ts(optional)]
        pub connect: Option<bool>,
    }

    /// What `startLogin` takes: which ChatGPT login, and how long it may wait for the user.
    pub struct StartLoginOptions {
        /// `'chatgpt'` (default): in the browser; `'chatgptDeviceCode'`: a code entered on another
        /// device.
        #[serde(rename = "type")]
        #[ts(optional, inline)]
        pub kind: Option<LoginKind>,
        /// How long the login may wait for the user, from when `started` resolves, before it is
        /// cancelled (`REQUEST_TIMEOUT`); 1 … 2^31 − 1 ms, default 600000.
        #[serde(default, deserialize_with = "given")]
        #[ts(optional)]
        pub timeout_ms: Option<Millis<1>>,
    }
}

/// Reads the options of call `entry` (absent: none given), held to their rules.
pub fn read<T: CallOptionsOf>(json: Option<&str>, entry: &str) -> Result<T, OptionsError> {
    let options: T = match json {
        Some(json) => from_json(json)?,
        None => T::default(),
    };
    stray(options.unknown(), entry, &[])?;
    options.check()?;
    Ok(options)
}

/// Which ChatGPT login `startLogin` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum LoginKind {
    /// In the browser (a callback on 127.0.0.1: port 1455 when free, else the one `authUrl` names).
    Chatgpt,
    /// A code the user enters on another device.
    ChatgptDeviceCode,
}

/// How long a login may wait for the user by default.
pub const DEFAULT_LOGIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// An argument a call takes before its options, read from the JSON value JavaScript passed
/// (`null` when it passed none): it names itself in its errors.
pub trait Argument: Sized + TS {
    /// Its name in the JavaScript API.
    const NAME: &'static str;
    fn read(value: Value) -> Result<Self, OptionsError>;
}

/// A string argument that must hold something: `Err` names the rule.
fn string_argument(value: Value, name: &str, blank_is_empty: bool) -> Result<String, OptionsError> {
    let empty = |text: &str| if blank_is_empty { text.trim().is_empty() } else { text.is_empty() };
    match value {
        Value::String(text) if !empty(&text) => Ok(text),
        _ => Err(invalid(format!("{name} must be a non-empty string"))),
    }
}

/// The stored thread a call is about.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ThreadId(pub String);

impl Argument for ThreadId {
    const NAME: &'static str = "threadId";
    fn read(value: Value) -> Result<Self, OptionsError> {
        string_argument(value, Self::NAME, false).map(ThreadId)
    }
}

/// `renameThread`'s new name: something a sidebar can show.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ThreadName(pub String);

impl Argument for ThreadName {
    const NAME: &'static str = "name";
    fn read(value: Value) -> Result<Self, OptionsError> {
        string_argument(value, Self::NAME, true).map(ThreadName)
    }
}

/// `loginWithApiKey`'s key, as a key that can work: Codex stores whatever it is given, and a key
/// with whitespace or a control character (a pasted newline, a NUL) fails every request later,
/// or cannot be sent in a header at all. The error never shows the key.
#[derive(Clone, PartialEq, Debug)]
pub struct ApiKey(pub Secret);

impl Argument for ApiKey {
    const NAME: &'static str = "apiKey";
    fn read(value: Value) -> Result<Self, OptionsError> {
        match value {
            Value::String(key) if !key.is_empty() && !key.chars().any(|c| c.is_whitespace() || c.is_control()) => {
                Ok(ApiKey(Secret(key)))
            }
            _ => Err(invalid("apiKey must be a non-empty string without whitespace or control characters")),
        }
    }
}

/// What `setGoal` changes; what is absent stays as it is.
#[derive(Debug, Clone, PartialEq, Deserialize, Default, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GoalChange {
    /// What the thread works toward (non-empty).
    #[ts(optional)]
    pub objective: Option<String>,
    /// `active`, `paused`, …: the protocol's `ThreadGoalStatus`.
    #[ts(optional, type = "ThreadGoalStatus")]
    pub status: Option<String>,
    /// The tokens the goal may spend (a positive integer); `null`: no budget.
    // Given as `null`: `Some(None)`.
    #[serde(default, deserialize_with = "present")]
    #[ts(optional, type = "number | null")]
    pub token_budget: Option<Option<i64>>,
}

impl Argument for GoalChange {
    const NAME: &'static str = "goal";
    fn read(value: Value) -> Result<Self, OptionsError> {
        if !value.is_object() {
            return Err(invalid("goal must be an object { objective?, status?, tokenBudget? }"));
        }
        let goal: GoalChange = from_json_as(&value.to_string(), Self::NAME)?;
        if goal.objective.is_none() && goal.status.is_none() && goal.token_budget.is_none() {
            return Err(invalid("goal must set at least one of objective, status and tokenBudget"));
        }
        if matches!(&goal.objective, Some(o) if o.trim().is_empty()) {
            return Err(invalid("goal.objective must be a non-empty string"));
        }
        if matches!(&goal.status, Some(s) if s.is_empty()) {
            return Err(invalid("goal.status must be a non-empty string"));
        }
        if matches!(goal.token_budget, Some(Some(budget)) if budget <= 0) {
            return Err(invalid("goal.tokenBudget must be a positive integer, or null for none"));
        }
        Ok(goal)
    }
}

/// `updateThreadMetadata`'s patch of the Git facts Codex keeps for a thread (`gitInfo`: `sha`,
/// `branch`, `originUrl`), sent as given: what is absent stays, `null` clears (`gitInfo: null`
/// goes as each of them `null`).
#[derive(Clone, PartialEq, Debug)]
pub struct ThreadMetadata(pub Value);

impl Argument for ThreadMetadata {
    const NAME: &'static str = "metadata";
    fn read(value: Value) -> Result<Self, OptionsError> {
        // Read for their rules only: the patch goes as it was given.
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        #[allow(dead_code)]
        struct Patch {
            #[serde(default, deserialize_with = "present")]
            git_info: Option<Option<GitInfo>>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        #[allow(dead_code)]
        struct GitInfo {
            #[serde(default, deserialize_with = "present")]
            sha: Option<Option<NonEmpty>>,
            #[serde(default, deserialize_with = "present")]
            branch: Option<Option<NonEmpty>>,
            #[serde(default, deserialize_with = "present")]
            origin_url: Option<Option<NonEmpty>>,
        }
        if !value.is_object() {
            return Err(invalid("metadata must be an object { gitInfo }"));
        }
        let patch: Patch = from_json_as(&value.to_string(), Self::NAME)?;
        match patch.git_info {
            None => Err(invalid("metadata must set gitInfo (null clears it)")),
            // Codex refuses `gitInfo: null` ("must include at least one field"): clearing them
            // all is each of them cleared.
            Some(None) => Ok(ThreadMetadata(json!({"gitInfo": {"sha": null, "branch": null, "originUrl": null}}))),
            // Codex refuses a patch of no fact too ("gitInfo must include at least one field").
            Some(Some(GitInfo { sha: None, branch: None, origin_url: None })) => Err(invalid(
                "metadata.gitInfo must set at least one of sha, branch and originUrl (null clears one; gitInfo: null clears them all)",
            )),
            Some(Some(_)) => Ok(ThreadMetadata(value)),
        }
    }
}

/// A client method `request()` sends, as the connection keeps it: `&'static`, as every method it
/// waits for. Well-formed, and none of a turn's ([`refused_method`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Method(pub &'static str);

/// The longest method name `request()` takes.
const MAX_METHOD_LEN: usize = 128;

impl Argument for Method {
    const NAME: &'static str = "method";
    fn read(value: Value) -> Result<Self, OptionsError> {
        method_name(string_argument(value, Self::NAME, false)?).map(Method)
    }
}

/// The methods `request()` does not send, and what to use instead: each belongs to a turn (or
/// to every call's handshake), which one child of a call cannot hold.
pub fn refused_method(method: &str) -> Option<&'static str> {
    match method {
        "initialize" => Some("every call sends it itself, once"),
        "thread/start" | "thread/resume" => {
            Some("a thread is started or resumed for a turn: use runTurn (threadId resumes)")
        }
        "review/start" => Some("a review is a turn: use runReview"),
        "turn/steer" => Some("steer a running turn with Turn.steer()"),
        "turn/interrupt" => Some("interrupt a running turn with Turn.abort()"),
        m if m.starts_with("turn/") => Some("a turn runs through runTurn"),
        _ => None,
    }
}

/// `request()`'s method kept for the connection: the package's own methods are its table's;
/// another name is kept once per distinct name (bounded by what an app asks, in practice the
/// protocol's own few hundred names).
fn method_name(method: String) -> Result<&'static str, OptionsError> {
    let well_formed = method.len() <= MAX_METHOD_LEN
        && method.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '.'));
    if !well_formed {
        return Err(invalid(format!(
            "method must be a method name of the protocol (letters, digits, '/', '_', '-' or '.', at most {MAX_METHOD_LEN})"
        )));
    }
    if let Some(why) = refused_method(&method) {
        return Err(invalid(format!("request() does not send {method}: {why}")));
    }
    if let Some(known) = crate::protocol::methods::TABLE.iter().find(|m| m.name == method) {
        return Ok(known.name);
    }
    static NAMES: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(name) = names.get(method.as_str()) {
        return Ok(name);
    }
    let name: &'static str = Box::leak(method.into_boxed_str());
    names.insert(name);
    Ok(name)
}

/// `request()`'s params, as given (`{}` when absent, as the package sends every request's).
#[derive(Clone, PartialEq, Debug)]
pub struct Params(pub Value);

impl Argument for Params {
    const NAME: &'static str = "params";
    fn read(value: Value) -> Result<Self, OptionsError> {
        Ok(Params(match value {
            Value::Null => Value::Object(Default::default()),
            value => value,
        }))
    }
}

super::rules::ts_as! {
    ThreadId => "string",
    ThreadName => "string",
    ApiKey => "string",
    Method => "string",
    Params => "unknown",
    ThreadMetadata => "Omit<ClientRequestMap['thread/metadata/update']['params'], 'threadId'>",
}

/// The arguments of a call as JavaScript passes them: a JSON object of them by name.
#[derive(Default)]
pub struct Args(BTreeMap<String, Value>);

impl Args {
    pub fn parse(json: Option<&str>) -> Result<Args, OptionsError> {
        match json {
            Some(json) => from_json_as(json, "arguments").map(Args),
            None => Ok(Args::default()),
        }
    }

    /// Argument `T` of call `call`; its errors start with the call's name
    /// (`renameThread: name must be a non-empty string`).
    pub fn take<T: Argument>(&mut self, call: &str) -> Result<T, OptionsError> {
        let value = self.0.remove(T::NAME).unwrap_or(Value::Null);
        T::read(value).map_err(|e| invalid(format!("{call}: {}", e.0)))
    }

    /// Whatever is left was not an argument of call `call`.
    pub fn done(self, call: &str) -> Result<(), OptionsError> {
        match self.0.keys().next() {
            Some(stray) => Err(invalid(format!("{call}: {stray} is not an argument of {call}"))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn arg<T: Argument>(value: Value) -> Result<T, String> {
        T::read(value).map_err(|e| e.0)
    }

    #[test]
    fn each_argument_names_itself() {
        assert_eq!(arg::<ThreadId>(json!("t")), Ok(ThreadId("t".into())));
        for bad in [json!(""), json!(null), json!(7), json!(["t"])] {
            assert_eq!(arg::<ThreadId>(bad), Err("threadId must be a non-empty string".into()));
        }
        assert_eq!(arg::<ThreadName>(json!(" ")), Err("name must be a non-empty string".into()));
        assert_eq!(arg::<ThreadName>(json!("Sidebar title")), Ok(ThreadName("Sidebar title".into())));
        assert_eq!(arg::<Params>(json!(null)), Ok(Params(json!({}))));
        assert_eq!(arg::<Params>(json!({"limit": 2})), Ok(Params(json!({"limit": 2}))));
    }

    #[test]
    fn a_goal_change_changes_something() {
        let goal = arg::<GoalChange>(json!({"objective": "Ship it", "tokenBudget": null})).unwrap();
        assert_eq!(goal, GoalChange { objective: Some("Ship it".into()), status: None, token_budget: Some(None) });
        let paused = arg::<GoalChange>(json!({"status": "paused"})).unwrap();
        assert_eq!(paused.token_budget, None);
        assert_eq!(
            arg::<GoalChange>(json!({})),
            Err("goal must set at least one of objective, status and tokenBudget".into())
        );
        let stray = arg::<GoalChange>(json!({"colour": "red"})).unwrap_err();
        assert!(stray.starts_with("goal") && stray.contains("unknown field `colour`"), "{stray}");
        assert_eq!(
            arg::<GoalChange>(json!({"tokenBudget": 0})),
            Err("goal.tokenBudget must be a positive integer, or null for none".into())
        );
        for bad in [json!(null), json!("ship"), json!([1])] {
            assert_eq!(
                arg::<GoalChange>(bad),
                Err("goal must be an object { objective?, status?, tokenBudget? }".into())
            );
        }
    }

    #[test]
    fn an_api_key_is_never_shown() {
        let key = "sk-proj-0123456789abcdef";
        let read = arg::<ApiKey>(json!(key)).unwrap();
        assert_eq!(read.0.expose(), key);
        assert!(!format!("{read:?}").contains(key), "{read:?}");
        // A key that cannot work (HTTP would refuse it, or cut it), or none at all: refused
        // before anything is stored, without showing it.
        for bad in
            ["", "sk-a\nb", "sk-a\0b", "sk-a b", " sk-ab", "sk-ab\t", "sk-a\u{7f}b", "sk-a\u{a0}b", "sk-a\u{2028}b"]
        {
            let refused = arg::<ApiKey>(json!(bad)).unwrap_err();
            assert_eq!(
                refused, "apiKey must be a non-empty string without whitespace or control characters",
                "{bad:?}"
            );
        }
        let wrong = arg::<ApiKey>(json!([key])).unwrap_err();
        assert!(!wrong.contains(key), "{wrong}");
        assert_eq!(arg::<ApiKey>(json!(null)).unwrap_err(), wrong);
    }

    #[test]
    fn request_refuses_the_methods_of_a_turn_and_names_what_to_use() {
        let refused = |method: &str| arg::<Method>(json!(method)).unwrap_err();
        assert_eq!(refused("initialize"), "request() does not send initialize: every call sends it itself, once");
        assert!(refused("turn/start").contains("runTurn"));
        assert!(refused("turn/steer").contains("Turn.steer()"));
        assert!(refused("turn/interrupt").contains("Turn.abort()"));
        assert!(refused("turn/anythingNew").contains("runTurn"));
        assert!(refused("thread/start").contains("runTurn"));
        assert!(refused("thread/resume").contains("runTurn"));
        assert!(refused("review/start").contains("runReview"));
        assert_eq!(refused(""), "method must be a non-empty string");
        assert_eq!(arg::<Method>(json!(null)).unwrap_err(), "method must be a non-empty string");
        assert!(refused("a b").starts_with("method must be a method name"));
        // The same name twice is kept once.
        let (a, b) = (arg::<Method>(json!("x/custom")).unwrap(), arg::<Method>(json!("x/custom")).unwrap());
        assert!(std::ptr::eq(a.0, b.0));
        assert_eq!(arg::<Method>(json!("thread/list")).unwrap(), Method("thread/list"));
    }

    #[test]
    fn the_shared_options_are_what_every_call_declares() {
        let values = [json!("/tmp"), json!("codex"), json!({"wsl": {"distro": "U"}}), json!({}), json!(1)];
        let given: serde_json::Map<String, Value> =
            SHARED.iter().zip(values).map(|(name, value)| (name.to_string(), value)).collect();
        let read: CallOptions = from_json(&Value::Object(given).to_string()).unwrap();
        assert!(read.unknown.is_empty(), "{:?}", read.unknown);
        let more: CallOptions = from_json(r#"{"includeHidden":true}"#).unwrap();
        assert_eq!(more.unknown.keys().collect::<Vec<_>>(), ["includeHidden"]);
    }

    #[test]
    fn options_are_each_calls_own() {
        let err = |json: &str| read::<ListThreadsOptions>(Some(json), "listThreads").unwrap_err().0;
        assert_eq!(err(r#"{"connect":true}"#), "options.connect is not an option of listThreads");
        assert_eq!(err(r#"{"limit":0}"#), "options.limit must be greater than 0");
        assert!(err(r#"{"limit":-1}"#).starts_with("options.limit:"));
        assert_eq!(err(r#"{"cursor":""}"#), "options.cursor must be a non-empty string");
        assert_eq!(err(r#"{"sourceKinds":["cli",""]}"#), "options.sourceKinds[1] must be a non-empty string");
        assert!(err(r#"{"sourceKinds":"subAgent"}"#).starts_with("options.sourceKinds:"));
        assert_eq!(
            err(r#"{"requestTimeoutMs":0}"#),
            "options.requestTimeoutMs must be an integer number of milliseconds from 1 to 2147483647"
        );
        assert!(err(r#"{"env":{"A":1}}"#).starts_with("options.env.A:"));
        let page: ListThreadsOptions = read(Some(r#"{"limit":3,"cursor":null}"#), "listThreads").unwrap();
        assert_eq!((page.limit, page.cursor), (Some(Positive(3)), None));
        assert_eq!(
            read::<RevertThreadOptions>(None, "revertThread").unwrap_err().0,
            "options.beforeTurnId must be a non-empty string (the first turn to remove)"
        );
        let mut login: StartLoginOptions =
            read(Some(r#"{"type":"chatgptDeviceCode","env":{"K":"v"}}"#), "startLogin").unwrap();
        assert_eq!(login.kind, Some(LoginKind::ChatgptDeviceCode));
        assert_eq!(login.take_shared().env.unwrap()["K"], "v");
        assert!(login.env.is_none() && !format!("{login:?}").contains("\"v\""));
    }
}
