//! A call's options as JavaScript passes them (JSON), validated; every error names the option
//! or argument it is about, and none shows a value (an API key is one).

use super::json::{from_json, from_json_as, invalid, present, OptionsError};
use super::locus::Locus;
use super::target::Target;
use serde::Deserialize;
use serde_json::Value;
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
        search_term: Option<String>,
        sort_key: Option<String>,
        source_kinds: Option<Vec<String>>,
    },
    ReadThread {
        thread_id: String,
        include_turns: Option<bool>,
    },
    ForkThread {
        thread_id: String,
        last_turn_id: Option<String>,
    },
    /// Stores the key as the user's login (`auth.json`).
    LoginWithApiKey {
        api_key: Secret,
    },
    Logout,
    RenameThread {
        thread_id: String,
        name: String,
    },
    ArchiveThread {
        thread_id: String,
    },
    UnarchiveThread {
        thread_id: String,
    },
    DeleteThread {
        thread_id: String,
    },
    RevertThread {
        thread_id: String,
        before_turn_id: String,
    },
    CompactThread {
        thread_id: String,
    },
    ReadGoal {
        thread_id: String,
    },
    SetGoal {
        thread_id: String,
        goal: GoalChange,
    },
    ClearGoal {
        thread_id: String,
    },
    /// The skills for the target's directory.
    ListSkills,
    /// `connect`: let Codex start the servers to ask them; else nothing is started.
    ListMcpServers {
        connect: bool,
    },
    /// A ChatGPT login with a handle of its own ([`super::login`]): it lives until the login
    /// completes, is cancelled or `timeout` passed.
    StartLogin {
        kind: LoginKind,
        timeout: Duration,
    },
    /// Any other client method, its params as given.
    Request {
        method: &'static str,
        params: Value,
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
            Call::LoginWithApiKey { .. } => "loginWithApiKey",
            Call::Logout => "logout",
            Call::RenameThread { .. } => "renameThread",
            Call::ArchiveThread { .. } => "archiveThread",
            Call::UnarchiveThread { .. } => "unarchiveThread",
            Call::DeleteThread { .. } => "deleteThread",
            Call::RevertThread { .. } => "revertThread",
            Call::CompactThread { .. } => "compactThread",
            Call::ReadGoal { .. } => "readGoal",
            Call::SetGoal { .. } => "setGoal",
            Call::ClearGoal { .. } => "clearGoal",
            Call::ListSkills => "listSkills",
            Call::ListMcpServers { .. } => "listMcpServers",
            Call::StartLogin { .. } => "startLogin",
            Call::Request { .. } => "request",
        }
    }
}

/// Which ChatGPT login `startLogin` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LoginKind {
    /// In the browser (a callback on 127.0.0.1: port 1455 when free, else the one `authUrl` names).
    Chatgpt,
    /// A code the user enters on another device.
    ChatgptDeviceCode,
}

/// How long a login may wait for the user by default.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(600);

/// A credential: sent where it belongs, shown nowhere (`Debug` included).
#[derive(Clone, PartialEq)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// What `setGoal` changes; what is absent stays as it is.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GoalChange {
    pub objective: Option<String>,
    pub status: Option<String>,
    /// `Some(None)`: `null` (no budget).
    #[serde(default, deserialize_with = "present")]
    pub token_budget: Option<Option<i64>>,
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
    search_term: Option<String>,
    sort_key: Option<String>,
    source_kinds: Option<Vec<String>>,
    include_turns: Option<bool>,
    last_turn_id: Option<String>,
    before_turn_id: Option<String>,
    connect: Option<bool>,
    #[serde(rename = "type")]
    kind: Option<LoginKind>,
    timeout_ms: Option<u64>,
}

impl RawOptions {
    /// The call-specific options that were given, by name.
    fn given(&self) -> Vec<&'static str> {
        [
            ("includeHidden", self.include_hidden.is_some()),
            ("limit", self.limit.is_some()),
            ("cursor", self.cursor.is_some()),
            ("archived", self.archived.is_some()),
            ("searchTerm", self.search_term.is_some()),
            ("sortKey", self.sort_key.is_some()),
            ("sourceKinds", self.source_kinds.is_some()),
            ("includeTurns", self.include_turns.is_some()),
            ("lastTurnId", self.last_turn_id.is_some()),
            ("beforeTurnId", self.before_turn_id.is_some()),
            ("connect", self.connect.is_some()),
            ("type", self.kind.is_some()),
            ("timeoutMs", self.timeout_ms.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }
}

/// The arguments a call takes besides its thread and its options (`renameThread`'s `name`,
/// `setGoal`'s `goal`, `loginWithApiKey`'s `apiKey`, `request`'s `method` and `params`), as
/// JavaScript passes them: a JSON object of them by name.
#[derive(Default)]
struct Args(BTreeMap<String, Value>);

impl Args {
    fn parse(json: Option<&str>) -> Result<Args, OptionsError> {
        match json {
            Some(json) => from_json_as(json, "arguments").map(Args),
            None => Ok(Args::default()),
        }
    }

    /// Argument `name` as `T`; errors name it (`goal.status: invalid type: …`) without its value.
    fn take<T: serde::de::DeserializeOwned>(&mut self, name: &str) -> Result<Option<T>, OptionsError> {
        match self.0.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => from_json_as(&value.to_string(), name).map(Some),
        }
    }

    fn string(&mut self, name: &str) -> Result<String, OptionsError> {
        match self.take::<String>(name)? {
            Some(value) if !value.trim().is_empty() => Ok(value),
            _ => Err(invalid(format!("{name} must be a non-empty string"))),
        }
    }

    /// Whatever is left was not an argument of call `call`.
    fn done(self, call: &str) -> Result<(), OptionsError> {
        match self.0.keys().next() {
            Some(stray) => Err(invalid(format!("{stray} is not an argument of {call}"))),
            None => Ok(()),
        }
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

/// The longest method name `request()` takes.
const MAX_METHOD_LEN: usize = 128;

/// `request()`'s method as the connection keeps it: `&'static`, as every method it waits for.
/// The package's own methods are its table's; another name is kept once per distinct name
/// (bounded by what an app asks, in practice the protocol's own few hundred names).
fn method_name(method: String) -> Result<&'static str, OptionsError> {
    let well_formed = !method.is_empty()
        && method.len() <= MAX_METHOD_LEN
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

/// Parses call `name`: `thread_id` is the thread argument of the thread calls, `args_json` the
/// other arguments (by name), `options_json` the options.
pub fn parse(
    name: &str,
    thread_id: Option<String>,
    args_json: Option<&str>,
    options_json: Option<&str>,
) -> Result<CallOptions, OptionsError> {
    let raw: RawOptions = match options_json {
        Some(json) => from_json(json)?,
        None => RawOptions::default(),
    };
    let mut args = Args::parse(args_json)?;
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
                search_term: raw.search_term.clone(),
                sort_key: raw.sort_key.clone(),
                source_kinds: raw.source_kinds.clone(),
            },
            &["limit", "cursor", "archived", "searchTerm", "sortKey", "sourceKinds"],
        ),
        "readThread" => {
            (Call::ReadThread { thread_id: thread()?, include_turns: raw.include_turns }, &["includeTurns"])
        }
        "forkThread" => {
            (Call::ForkThread { thread_id: thread()?, last_turn_id: raw.last_turn_id.clone() }, &["lastTurnId"])
        }
        "loginWithApiKey" => (Call::LoginWithApiKey { api_key: api_key(args.take("apiKey")?)? }, &[]),
        "logout" => (Call::Logout, &[]),
        "renameThread" => (Call::RenameThread { thread_id: thread()?, name: args.string("name")? }, &[]),
        "archiveThread" => (Call::ArchiveThread { thread_id: thread()? }, &[]),
        "unarchiveThread" => (Call::UnarchiveThread { thread_id: thread()? }, &[]),
        "deleteThread" => (Call::DeleteThread { thread_id: thread()? }, &[]),
        "revertThread" => {
            let before_turn_id = match &raw.before_turn_id {
                Some(id) if !id.is_empty() => id.clone(),
                _ => return Err(invalid("options.beforeTurnId must be a non-empty string (the first turn to remove)")),
            };
            (Call::RevertThread { thread_id: thread()?, before_turn_id }, &["beforeTurnId"])
        }
        "compactThread" => (Call::CompactThread { thread_id: thread()? }, &[]),
        "readGoal" => (Call::ReadGoal { thread_id: thread()? }, &[]),
        "setGoal" => {
            let goal: GoalChange = args.take("goal")?.ok_or_else(|| invalid("goal must be an object"))?;
            check_goal(&goal)?;
            (Call::SetGoal { thread_id: thread()?, goal }, &[])
        }
        "clearGoal" => (Call::ClearGoal { thread_id: thread()? }, &[]),
        "listSkills" => (Call::ListSkills, &[]),
        "listMcpServers" => (Call::ListMcpServers { connect: raw.connect == Some(true) }, &["connect"]),
        "startLogin" => {
            if raw.timeout_ms == Some(0) {
                return Err(invalid("options.timeoutMs must be greater than 0"));
            }
            let kind = raw.kind.unwrap_or(LoginKind::Chatgpt);
            let timeout = raw.timeout_ms.map(Duration::from_millis).unwrap_or(DEFAULT_LOGIN_TIMEOUT);
            (Call::StartLogin { kind, timeout }, &["type", "timeoutMs"])
        }
        "request" => {
            let method = method_name(args.string("method")?)?;
            let params = args.take::<Value>("params")?.unwrap_or_else(|| Value::Object(Default::default()));
            (Call::Request { method, params }, &[])
        }
        other => return Err(invalid(format!("{other} is not a call"))),
    };
    args.done(name)?;
    if let Some(stray) = raw.given().into_iter().find(|option| !own.contains(option)) {
        return Err(invalid(format!("options.{stray} is not an option of {name}")));
    }
    if raw.limit == Some(0) {
        return Err(invalid("options.limit must be greater than 0"));
    }
    for (option, value) in [
        ("cursor", &raw.cursor),
        ("lastTurnId", &raw.last_turn_id),
        ("searchTerm", &raw.search_term),
        ("sortKey", &raw.sort_key),
    ] {
        if matches!(value, Some(v) if v.is_empty()) {
            return Err(invalid(format!("options.{option} must be a non-empty string")));
        }
    }
    if let Some(i) = raw.source_kinds.iter().flatten().position(String::is_empty) {
        return Err(invalid(format!("options.sourceKinds[{i}] must be a non-empty string")));
    }
    // Calls need no project: without `cwd` the child starts where any helper of the package does.
    let cwd = raw.cwd.unwrap_or_else(|| crate::process::launch::neutral_dir().to_string_lossy().into_owned());
    let target = Target::parse(cwd, raw.codex_path, raw.locus, raw.env)?;
    let request_timeout = super::json::request_timeout(raw.request_timeout_ms)?;
    Ok(CallOptions { call, target, request_timeout })
}

/// `loginWithApiKey`'s key, as a key that can work: Codex stores whatever it is given, and a
/// key with whitespace or a control character (a pasted newline, a NUL) fails every request
/// later, or cannot be sent in a header at all. The error never shows the key.
fn api_key(key: Option<String>) -> Result<Secret, OptionsError> {
    match key {
        Some(key) if !key.is_empty() && !key.chars().any(|c| c.is_whitespace() || c.is_control()) => Ok(Secret(key)),
        _ => Err(invalid("apiKey must be a non-empty string without whitespace or control characters")),
    }
}

/// A goal change changes something, in the protocol's terms.
fn check_goal(goal: &GoalChange) -> Result<(), OptionsError> {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TMP: &str = if cfg!(windows) { r"C:\tmp" } else { "/tmp" };

    fn err(name: &str, thread: Option<&str>, json: &str) -> String {
        parse(name, thread.map(str::to_string), None, Some(json)).unwrap_err().0
    }

    fn with_args(name: &str, thread: Option<&str>, args: Value) -> Result<Call, String> {
        parse(name, thread.map(str::to_string), Some(&args.to_string()), None).map(|o| o.call).map_err(|e| e.0)
    }

    #[test]
    fn defaults_and_call_options() {
        let o = parse("readAccount", None, None, None).unwrap();
        assert_eq!(o.call, Call::ReadAccount);
        assert_eq!(o.request_timeout, crate::options::json::DEFAULT_REQUEST_TIMEOUT);
        assert!(std::path::Path::new(&o.target.cwd).is_absolute());
        let o = parse("listModels", None, None, Some(r#"{"includeHidden":true,"requestTimeoutMs":5}"#)).unwrap();
        assert_eq!(o.call, Call::ListModels { include_hidden: true });
        assert_eq!(o.request_timeout, Duration::from_millis(5));
        let json = serde_json::json!({"cwd": TMP, "limit": 3, "cursor": null, "archived": false, "searchTerm": "fix",
            "sortKey": "updated_at", "sourceKinds": ["appServer", "subAgent"]})
        .to_string();
        let o = parse("listThreads", None, None, Some(&json)).unwrap();
        assert_eq!(
            o.call,
            Call::ListThreads {
                limit: Some(3),
                cursor: None,
                archived: Some(false),
                cwd: true,
                search_term: Some("fix".into()),
                sort_key: Some("updated_at".into()),
                source_kinds: Some(vec!["appServer".into(), "subAgent".into()]),
            }
        );
        assert_eq!(o.target.thread_cwd, TMP);
        let o = parse("forkThread", Some("th".into()), None, Some(r#"{"lastTurnId":"tu"}"#)).unwrap();
        assert_eq!(o.call, Call::ForkThread { thread_id: "th".into(), last_turn_id: Some("tu".into()) });
        let o = parse("revertThread", Some("th".into()), None, Some(r#"{"beforeTurnId":"tu"}"#)).unwrap();
        assert_eq!(o.call, Call::RevertThread { thread_id: "th".into(), before_turn_id: "tu".into() });
        let o = parse("listMcpServers", None, None, Some(r#"{"connect":true}"#)).unwrap();
        assert_eq!(o.call, Call::ListMcpServers { connect: true });
        for (name, call) in [
            ("archiveThread", Call::ArchiveThread { thread_id: "t".into() }),
            ("unarchiveThread", Call::UnarchiveThread { thread_id: "t".into() }),
            ("deleteThread", Call::DeleteThread { thread_id: "t".into() }),
            ("compactThread", Call::CompactThread { thread_id: "t".into() }),
            ("readGoal", Call::ReadGoal { thread_id: "t".into() }),
            ("clearGoal", Call::ClearGoal { thread_id: "t".into() }),
        ] {
            assert_eq!(parse(name, Some("t".into()), None, None).unwrap().call, call);
            assert_eq!(call.name(), name);
        }
        assert_eq!(parse("logout", None, None, None).unwrap().call, Call::Logout);
        assert_eq!(parse("listSkills", None, None, None).unwrap().call, Call::ListSkills);
    }

    #[test]
    fn the_arguments_of_each_call() {
        assert_eq!(
            with_args("renameThread", Some("t"), serde_json::json!({"name": "Sidebar title"})),
            Ok(Call::RenameThread { thread_id: "t".into(), name: "Sidebar title".into() })
        );
        assert_eq!(
            with_args("renameThread", Some("t"), serde_json::json!({"name": " "})),
            Err("name must be a non-empty string".into())
        );
        let goal =
            with_args("setGoal", Some("t"), serde_json::json!({"goal": {"objective": "Ship it", "tokenBudget": null}}));
        assert_eq!(
            goal,
            Ok(Call::SetGoal {
                thread_id: "t".into(),
                goal: GoalChange { objective: Some("Ship it".into()), status: None, token_budget: Some(None) }
            })
        );
        let paused = with_args("setGoal", Some("t"), serde_json::json!({"goal": {"status": "paused"}})).unwrap();
        assert!(matches!(paused, Call::SetGoal { goal: GoalChange { token_budget: None, .. }, .. }));
        assert_eq!(
            with_args("setGoal", Some("t"), serde_json::json!({"goal": {}})),
            Err("goal must set at least one of objective, status and tokenBudget".into())
        );
        let stray = with_args("setGoal", Some("t"), serde_json::json!({"goal": {"colour": "red"}})).unwrap_err();
        assert!(stray.starts_with("goal") && stray.contains("unknown field `colour`"), "{stray}");
        assert_eq!(
            with_args("setGoal", Some("t"), serde_json::json!({"goal": {"tokenBudget": 0}})),
            Err("goal.tokenBudget must be a positive integer, or null for none".into())
        );
        assert_eq!(with_args("setGoal", Some("t"), serde_json::json!({})), Err("goal must be an object".into()));
        let request =
            with_args("request", None, serde_json::json!({"method": "thread/loaded/list", "params": {"limit": 2}}));
        assert_eq!(
            request,
            Ok(Call::Request { method: "thread/loaded/list", params: serde_json::json!({"limit": 2}) })
        );
        // Without params: an empty object, as the package sends every request's.
        let bare = with_args("request", None, serde_json::json!({"method": "account/logout"})).unwrap();
        assert_eq!(bare, Call::Request { method: "account/logout", params: serde_json::json!({}) });
        assert_eq!(
            with_args("logout", None, serde_json::json!({"name": "x"})),
            Err("name is not an argument of logout".into())
        );
    }

    #[test]
    fn an_api_key_is_never_shown() {
        let key = "sk-proj-0123456789abcdef";
        let call = with_args("loginWithApiKey", None, serde_json::json!({"apiKey": key})).unwrap();
        assert!(matches!(&call, Call::LoginWithApiKey { api_key } if api_key.expose() == key));
        assert!(!format!("{call:?}").contains(key), "{call:?}");
        assert_eq!(
            with_args("loginWithApiKey", None, serde_json::json!({"apiKey": ""})),
            Err("apiKey must be a non-empty string without whitespace or control characters".into())
        );
        // A key that cannot work (HTTP would refuse it, or cut it): refused before anything is
        // stored, without showing it.
        for bad in ["sk-a\nb", "sk-a\0b", "sk-a b", " sk-ab", "sk-ab\t", "sk-a\u{7f}b", "sk-a\u{a0}b", "sk-a\u{2028}b"]
        {
            let refused = with_args("loginWithApiKey", None, serde_json::json!({"apiKey": bad})).unwrap_err();
            assert_eq!(
                refused, "apiKey must be a non-empty string without whitespace or control characters",
                "{bad:?}"
            );
        }
        // A key of the wrong type: its kind, not its value.
        let wrong = with_args("loginWithApiKey", None, serde_json::json!({"apiKey": [key]})).unwrap_err();
        assert!(!wrong.contains(key), "{wrong}");
        assert!(wrong.starts_with("apiKey: invalid type: sequence"), "{wrong}");
    }

    #[test]
    fn request_refuses_the_methods_of_a_turn_and_names_what_to_use() {
        let refused = |method: &str| with_args("request", None, serde_json::json!({"method": method})).unwrap_err();
        assert_eq!(refused("initialize"), "request() does not send initialize: every call sends it itself, once");
        assert!(refused("turn/start").ends_with("use runTurn") || refused("turn/start").contains("runTurn"));
        assert!(refused("turn/steer").contains("Turn.steer()"));
        assert!(refused("turn/interrupt").contains("Turn.abort()"));
        assert!(refused("turn/anythingNew").contains("runTurn"));
        assert!(refused("thread/start").contains("runTurn"));
        assert!(refused("thread/resume").contains("runTurn"));
        assert!(refused("review/start").contains("runReview"));
        assert!(refused("").starts_with("method must be a non-empty string"));
        assert!(refused("a b").starts_with("method must be a method name"));
        // The same name twice is kept once.
        let first = with_args("request", None, serde_json::json!({"method": "x/custom"})).unwrap();
        let again = with_args("request", None, serde_json::json!({"method": "x/custom"})).unwrap();
        match (first, again) {
            (Call::Request { method: a, .. }, Call::Request { method: b, .. }) => assert!(std::ptr::eq(a, b)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            with_args("request", None, serde_json::json!({"method": "thread/list"})),
            Ok(Call::Request { method: "thread/list", .. })
        ));
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
        assert!(err("listThreads", None, r#"{"sourceKinds":"subAgent"}"#).starts_with("options.sourceKinds:"));
        assert_eq!(err("listThreads", None, r#"{"sortKey":""}"#), "options.sortKey must be a non-empty string");
        // An empty cursor is no page of the list: Codex would start again from the first.
        assert_eq!(err("listThreads", None, r#"{"cursor":""}"#), "options.cursor must be a non-empty string");
        assert_eq!(
            err("listThreads", None, r#"{"sourceKinds":["cli",""]}"#),
            "options.sourceKinds[1] must be a non-empty string"
        );
        assert!(err("readAccount", None, r#"{"model":"x"}"#).contains("model"));
        assert_eq!(err("readThread", Some(""), "{}"), "threadId must be a non-empty string");
        assert_eq!(err("forkThread", None, "{}"), "threadId must be a non-empty string");
        assert_eq!(
            err("forkThread", Some("t"), r#"{"lastTurnId":""}"#),
            "options.lastTurnId must be a non-empty string"
        );
        assert_eq!(
            err("revertThread", Some("t"), "{}"),
            "options.beforeTurnId must be a non-empty string (the first turn to remove)"
        );
        assert_eq!(err("setGoal", Some("t"), r#"{"connect":true}"#), "goal must be an object");
        assert_eq!(err("listSkills", None, r#"{"connect":true}"#), "options.connect is not an option of listSkills");
        assert_eq!(
            err("readAccount", None, r#"{"requestTimeoutMs":0}"#),
            "options.requestTimeoutMs must be an integer number of milliseconds from 1 to 2147483647"
        );
        // The calls' bound is the turns': a timer cannot hold more.
        assert!(err("readAccount", None, r#"{"requestTimeoutMs":2147483648}"#)
            .starts_with("options.requestTimeoutMs must be"));
        assert!(err("readAccount", None, r#"{"env":{"A":1}}"#).starts_with("options.env.A:"));
        assert_eq!(err("nope", None, "{}"), "nope is not a call");
    }
}
