//! Every call around turns, one row each: its name in the JavaScript API and its doc, the
//! arguments it takes before its options (each a type that reads and names itself:
//! [`crate::options::call::Argument`]), its options type, what it resolves with (TypeScript), and
//! its body — what it asks of the exchange once the handshake is done. In the manner of Codex's
//! own `client_request_definitions!`, the table yields everything else: the [`Call`] enum and its
//! parser ([`parse`]), the dispatch ([`play`]), the TypeScript declaration of each call
//! (`types/calls.d.ts`) and the rows `lib/calls.js` builds each call function from
//! (`lib/surface.js`). Adding a call is adding a row (CONTRIBUTING.md, "Adding a call").

use super::{account_info, load_thread, Caller};
use crate::exchange::{failures, handshake, Exchange, Input, Output, Stop};
use crate::failure::{Code, Failure, FailureSource};
use crate::options::call::{
    read, ApiKey, Args, Argument, CallOptions, CallOptionsOf, ForkThreadOptions, GoalChange, ListMcpServersOptions,
    ListModelsOptions, ListThreadsOptions, Method, Params, ReadThreadOptions, RevertThreadOptions, Shared,
    StartLoginOptions, ThreadId, ThreadMetadata, ThreadName,
};
use crate::options::json::{invalid, OptionsError};
use crate::protocol::{
    ApprovalPolicy, ModelList, Page, Request, SkillsList, ThreadArchive, ThreadDelete, ThreadFork, ThreadGoalClear,
    ThreadGoalGet, ThreadGoalSet, ThreadList, ThreadMetadataUpdate, ThreadRead, ThreadRevert, ThreadSandbox,
    ThreadSetName, ThreadUnarchive,
};
use crate::resolve::Target;
use serde_json::{json, Value};
use ts_rs::TS;

/// What a row's body is given: the exchange (after the handshake) and where the call runs.
pub(super) struct Ctx<'e, 'x, R, W> {
    pub exchange: &'e mut Exchange<'x, R, W>,
    pub target: &'e Target,
}

impl<R: Input, W: Output> Ctx<'_, '_, R, W> {
    /// `request`, answered: its result, or the call's end. Nothing the server asks meanwhile is
    /// granted ([`Caller`]).
    async fn call<Q: Request>(&mut self, request: &Q) -> Result<Q::Result, Stop> {
        self.exchange.call(&mut Caller, request).await
    }
}

/// What a call that resolves with nothing resolves with.
const DONE: Value = Value::Null;

/// The TypeScript a row's result reads as when the call returns a handle, not a promise.
const HANDLE: &str = "LoginHandle";

/// One row, as `lib/calls.js` builds the call's function from it.
pub struct JsRow {
    pub name: &'static str,
    /// The names of the arguments before the options, in order.
    pub args: Vec<&'static str>,
    /// `value`: a promise of what the core answers; `void`: a promise of nothing; `handle`: a
    /// handle of its own (`startLogin`), which its own module builds.
    pub resolves: &'static str,
}

/// One row's TypeScript declaration.
pub struct TsRow {
    pub name: &'static str,
    pub declaration: String,
}

macro_rules! calls {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $js:ident ( $($arg:ident : $argty:ty),* ) $options:ident -> $result:literal
        $(ts $signature:literal)?
        => |$x:ident, $o:ident| $body:expr;
    )*) => {
        /// A call, parsed: one variant per row, with its arguments and its own options.
        #[derive(Debug)]
        pub enum Call {
            $($variant { $($arg: $argty,)* options: $options },)*
        }

        impl Call {
            /// Its name in the JavaScript API.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Call::$variant { .. } => stringify!($js),)*
                }
            }
        }

        /// Reads call `name`: its arguments (`args`, by name), then its options; the options every
        /// call shares come back apart.
        fn parse_call(name: &str, args: &mut Args, options: Option<&str>) -> Result<(Call, Shared), OptionsError> {
            match name {
                $(stringify!($js) => {
                    $(let $arg = args.take::<$argty>(stringify!($js))?;)*
                    let mut options: $options = read(options, stringify!($js))?;
                    let shared = options.take_shared();
                    Ok((Call::$variant { $($arg,)* options }, shared))
                })*
                other => Err(invalid(format!("{other} is not a call"))),
            }
        }

        /// The call's body, once the handshake is done: what it resolves with.
        async fn dispatch<R: Input, W: Output>(ctx: &mut Ctx<'_, '_, R, W>, call: &Call) -> Result<Value, Stop> {
            match call {
                $(Call::$variant { $($arg,)* options } => {
                    let $o = options;
                    let $x = &mut *ctx;
                    Ok($body)
                })*
            }
        }

        /// The TypeScript declaration of every call, in the table's order.
        pub fn typescript(cfg: &ts_rs::Config) -> Vec<TsRow> {
            vec![$({
                let doc: &[&str] = &[$($doc),*];
                let own: Option<&str> = None $(.or(Some($signature)))?;
                let declaration = own.map(str::to_string).unwrap_or_else(|| {
                    let mut params: Vec<String> = vec![$(format!("{}: {}", <$argty as Argument>::NAME, <$argty as TS>::name(cfg))),*];
                    let optional = if <$options as CallOptionsOf>::REQUIRED { "" } else { "?" };
                    params.push(format!("options{optional}: {}", <$options as TS>::name(cfg)));
                    let returns = if $result == HANDLE { $result.to_string() } else { format!("Promise<{}>", $result) };
                    format!("export function {}({}): {returns}", stringify!($js), params.join(", "))
                });
                TsRow { name: stringify!($js), declaration: format!("{}{declaration}\n", jsdoc(doc)) }
            }),*]
        }

        /// The rows `lib/calls.js` builds the call functions from.
        pub fn js_rows() -> Vec<JsRow> {
            vec![$(JsRow {
                name: stringify!($js),
                args: vec![$(<$argty as Argument>::NAME),*],
                resolves: match $result { "void" => "void", HANDLE => "handle", _ => "value" },
            }),*]
        }
    };
}

calls! {
    /// Who is logged in, and the plan's limits where the server tells them (`account/read`, then
    /// `account/rateLimits/read` on the same child).
    ReadAccount readAccount() CallOptions -> "AccountInfo"
        => |x, _o| account_info(x.exchange, &mut Caller, x.target).await?;

    /// Every page of `model/list`: the models Codex offers, hidden ones only with `includeHidden`.
    ListModels listModels() ListModelsOptions -> "Model[]" => |x, o| {
        // Sent as asked, and applied here too: a Codex that lists hidden models anyway must not
        // put them in a picker.
        let hidden = o.include_hidden == Some(true);
        let page = |cursor| ModelList { cursor, include_hidden: hidden.then_some(true) };
        let models = x.exchange.list_all(&mut Caller, page).await?;
        Value::Array(models.into_iter().filter(|m| hidden || m.get("hidden") != Some(&Value::Bool(true))).collect())
    };

    /// One page of the stored threads, newest first; pass `nextCursor` back as `cursor` for the
    /// next.
    ListThreads listThreads() ListThreadsOptions -> "{ threads: ThreadSummary[]; nextCursor: string | null }" => |x, o| {
        let source_kinds: Option<Vec<String>> = o.source_kinds.as_ref().map(|kinds| kinds.iter().map(|k| k.0.clone()).collect());
        let list = ThreadList {
            limit: o.limit.map(|limit| limit.0),
            cursor: o.cursor.as_ref().map(|c| c.as_str()),
            archived: o.archived,
            // `cwd` given: only the threads of that directory (as Codex sees it).
            cwd: o.cwd.as_ref().map(|_| x.target.thread_cwd.as_str()),
            search_term: o.search_term.as_ref().map(|t| t.as_str()),
            sort_key: o.sort_key.as_ref().map(|k| k.as_str()),
            source_kinds: source_kinds.as_deref(),
        };
        let Page { data, next_cursor } = x.call(&list).await?;
        json!({"threads": data, "nextCursor": next_cursor})
    };

    /// The stored thread (`thread/read`), as the server sent it; with `includeTurns`, its turns
    /// and their items.
    ReadThread readThread(thread_id: ThreadId) ReadThreadOptions -> "ThreadRecord"
        => |x, o| x.call(&ThreadRead { thread_id: &thread_id.0, include_turns: o.include_turns }).await?.thread;

    /// A new thread with this one's history (through `lastTurnId`, inclusive), listed at once; run
    /// a turn on it with `runTurn({ threadId })`.
    ForkThread forkThread(thread_id: ThreadId) ForkThreadOptions -> "{ threadId: string }" => |x, o| {
        let fork = ThreadFork {
            thread_id: &thread_id.0,
            last_turn_id: o.last_turn_id.as_ref().map(|id| id.as_str()),
            approval_policy: ApprovalPolicy::Never,
            sandbox: ThreadSandbox::ReadOnly,
        };
        json!({"threadId": x.call(&fork).await?.thread.id})
    };

    /// Stores `apiKey` as the user's Codex login (Codex writes `auth.json`), then reads the account
    /// as `readAccount` does. The key goes into the request's params and nowhere else: never on a
    /// command line, in a log record, an error or an event. `LOGIN_FAILED` when Codex refuses it; a
    /// key that is empty or holds whitespace or a control character is a `TypeError` naming
    /// `apiKey`.
    LoginWithApiKey loginWithApiKey(api_key: ApiKey) CallOptions -> "AccountInfo"
        => |x, _o| super::login::with_api_key(x.exchange, x.target, &api_key.0).await?;

    /// Starts a ChatGPT login. Never throws: bad options reject `started` and `completed` with a
    /// TypeError.
    StartLogin startLogin() StartLoginOptions -> "LoginHandle"
        => |_x, _o| Err::<Value, _>(internal("startLogin runs with a handle of its own"))?;

    /// Removes the stored login (Codex deletes `auth.json`).
    Logout logout() CallOptions -> "void" => |x, _o| {
        x.call(&crate::protocol::Logout {}).await?;
        DONE
    };

    /// Sets the thread's name (what `ThreadSummary.name` shows).
    RenameThread renameThread(thread_id: ThreadId, name: ThreadName) CallOptions -> "void" => |x, _o| {
        x.call(&ThreadSetName { thread_id: &thread_id.0, name: &name.0 }).await?;
        DONE
    };

    /// Moves the thread out of `listThreads()` into `listThreads({ archived: true })`.
    ArchiveThread archiveThread(thread_id: ThreadId) CallOptions -> "void" => |x, _o| {
        x.call(&ThreadArchive { thread_id: &thread_id.0 }).await?;
        DONE
    };

    /// Moves an archived thread back.
    UnarchiveThread unarchiveThread(thread_id: ThreadId) CallOptions -> "void" => |x, _o| {
        x.call(&ThreadUnarchive { thread_id: &thread_id.0 }).await?;
        DONE
    };

    /// Deletes the thread: gone from both lists, and `readThread` fails.
    DeleteThread deleteThread(thread_id: ThreadId) CallOptions -> "void" => |x, _o| {
        x.call(&ThreadDelete { thread_id: &thread_id.0 }).await?;
        DONE
    };

    /// Patches the Git facts Codex keeps for the thread (`gitInfo`: `sha`, `branch`, `originUrl`;
    /// what is absent stays, `null` clears), without loading it; resolves with the thread as
    /// Codex then has it.
    UpdateThreadMetadata updateThreadMetadata(thread_id: ThreadId, metadata: ThreadMetadata) CallOptions -> "ThreadRecord"
        => |x, _o| x.call(&ThreadMetadataUpdate { thread_id: &thread_id.0, patch: &metadata.0 }).await?.thread;

    /// "Edit and resend": removes `beforeTurnId` and every later turn from the thread's history
    /// (not the changes those turns made to files); then `runTurn({ threadId })` goes on from
    /// there.
    RevertThread revertThread(thread_id: ThreadId) RevertThreadOptions -> "void" => |x, o| {
        // Codex reverts only a thread this child has loaded ("thread not found" otherwise).
        load_thread(x.exchange, &thread_id.0).await?;
        let before_turn_id = o.before_turn_id.as_ref().map_or("", |id| id.as_str());
        x.call(&ThreadRevert { thread_id: &thread_id.0, before_turn_id }).await?;
        DONE
    };

    /// Compacts the thread's context: Codex runs a compaction turn of its own (one model
    /// request); the call ends when it completed, with that turn's usage. `TURN_FAILED` when it
    /// failed.
    CompactThread compactThread(thread_id: ThreadId) CallOptions -> "{ usage: Usage | null }" => |x, _o| {
        load_thread(x.exchange, &thread_id.0).await?;
        super::compact::compact(x.exchange, &thread_id.0).await?
    };

    // The goal calls never load the thread: a loaded idle thread with an active goal starts
    // continuation turns (model requests) on its own.

    /// The thread's goal, or null.
    ReadGoal readGoal(thread_id: ThreadId) CallOptions -> "ThreadGoal | null"
        => |x, _o| x.call(&ThreadGoalGet { thread_id: &thread_id.0 }).await?.goal;

    /// Creates or changes the thread's goal, without loading the thread (a loaded, idle thread with
    /// an active goal starts working toward it at once). The next turn on the thread works toward
    /// an active goal; `until: 'idle'` waits for the continuations Codex starts for it.
    SetGoal setGoal(thread_id: ThreadId, goal: GoalChange) CallOptions -> "ThreadGoal" => |x, _o| {
        let set = ThreadGoalSet {
            thread_id: &thread_id.0,
            objective: goal.objective.as_deref(),
            status: goal.status.as_deref(),
            token_budget: goal.token_budget,
        };
        x.call(&set).await?.goal
    };

    /// Clears the thread's goal.
    ClearGoal clearGoal(thread_id: ThreadId) CallOptions -> "void" => |x, _o| {
        x.call(&ThreadGoalClear { thread_id: &thread_id.0 }).await?;
        DONE
    };

    /// The skills Codex finds for `cwd` (the project's `.agents/skills` and `.codex/skills`, the
    /// user's `$CODEX_HOME/skills`), each as Codex describes it; give one to a turn as
    /// `{ type: 'skill', name, path }`.
    ListSkills listSkills() CallOptions -> "SkillMetadata[]" => |x, _o| {
        let list = SkillsList { cwds: [x.target.thread_cwd.as_str()], force_reload: None };
        skills(x.call(&list).await?.data)
    };

    /// Every MCP server Codex knows for `cwd`, disabled ones included (every page of
    /// `mcpServerStatus/list`). Without `connect`, none is started: each server the configuration
    /// enables reads `runtimeStatus: 'notStarted'` (no tools, no server info), each it disables
    /// `'disabled'`; plugin servers are not listed. With `connect: true`, Codex starts every
    /// enabled server (stdio commands run, remote servers are contacted) to report its tools and
    /// auth status, and the call's child ends them before it settles.
    ListMcpServers listMcpServers() ListMcpServersOptions -> "McpServerStatus[]"
        => |x, o| super::mcp::list(x.exchange, &mut Caller, x.target, o.connect == Some(true)).await?;

    /// Any other client method on one child: `params` as given (`{}` when absent), the server's
    /// result as it sent it; typed by method from the pinned Codex's schema. A method the running
    /// Codex does not have rejects with `METHOD_UNSUPPORTED` (detail: `method`, `codexVersion`).
    /// Whatever the method leaves running (a `command/exec`, an `fs/watch`) ends with the child.
    Request request(method: Method, params: Params) CallOptions -> "unknown"
        ts "export function request<M extends RequestMethod | (string & {})>(
  method: M & (M extends RefusedMethod ? never : unknown),
  params?: RequestParams<M>,
  options?: CallOptions,
): Promise<RequestResult<M>>"
        => |x, _o| {
            let version = x.exchange.codex_version.clone();
            match x.exchange.ask_named(&mut Caller, method.0, &params.0).await? {
                Ok(raw) => failures::parse_result(method.0, &raw).map_err(Stop::Failed)?,
                Err(error) => return Err(Stop::Failed(failures::rpc_failure(method.0, error, version.as_deref()))),
            }
        };
}

/// A call, validated: what is asked, of which Codex, where, and how long each request may take.
#[derive(Debug)]
pub struct ParsedCall {
    pub call: Call,
    /// Which Codex, where (`cwd` defaults to a neutral directory), with which environment.
    pub target: Target,
    pub request_timeout: std::time::Duration,
}

/// Parses call `name` as JavaScript passes it: `args_json` its arguments before the options (a
/// JSON object of them by name), `options_json` its options. Errors name the argument (after the
/// call's name: `renameThread: name must be a non-empty string`) or the option
/// (`options.limit must be greater than 0`), never a value.
pub fn parse(name: &str, args_json: Option<&str>, options_json: Option<&str>) -> Result<ParsedCall, OptionsError> {
    let mut args = Args::parse(args_json)?;
    let (call, shared) = parse_call(name, &mut args, options_json)?;
    args.done(name)?;
    // Calls need no project: without `cwd` the child starts where any helper of the package does.
    let cwd = shared.cwd.unwrap_or_else(|| crate::process::launch::neutral_dir().to_string_lossy().into_owned());
    let target = Target::parse(cwd, shared.codex_path, shared.locus, shared.env)?;
    let request_timeout = crate::options::json::request_timeout(shared.request_timeout_ms);
    Ok(ParsedCall { call, target, request_timeout })
}

/// The handshake, then the call: what it resolves with.
pub(super) async fn play<R: Input, W: Output>(
    exchange: &mut Exchange<'_, R, W>,
    options: &ParsedCall,
) -> Result<Value, Stop> {
    // `thread/revert` is on the protocol's experimental surface before 0.171.0 ("requires
    // experimentalApi capability" on 0.150.0); nothing else of a call is.
    let experimental = matches!(options.call, Call::RevertThread { .. });
    handshake::handshake(exchange, &mut Caller, experimental).await?;
    dispatch(&mut Ctx { exchange, target: &options.target }, &options.call).await
}

/// A defect of the package's own (never expected).
fn internal(message: &str) -> Stop {
    Stop::Failed(Failure::new(FailureSource::Internal, Code::InternalError, message))
}

/// A doc comment's lines (`#[doc]` texts, each with its leading space) as JSDoc.
fn jsdoc(lines: &[&str]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("/**\n");
    for line in lines {
        out.push_str(" *");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(" */\n");
    out
}

/// The skills of the directory asked for (`skills/list` answers one entry per directory), each
/// as the server sent it. A skill Codex could not read is not a skill: its error is logged.
fn skills(entries: Vec<Value>) -> Value {
    let mut found = Vec::new();
    for mut entry in entries {
        if let Some(Value::Array(errors)) = entry.get("errors") {
            if !errors.is_empty() {
                tracing::debug!(count = errors.len(), "skills/list: skills that could not be read");
            }
        }
        if let Some(Value::Array(skills)) = entry.get_mut("skills").map(Value::take) {
            found.extend(skills);
        }
    }
    Value::Array(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::rules::{Millis, NonEmpty, Positive};
    use std::time::Duration;

    const TMP: &str = if cfg!(windows) { r"C:\tmp" } else { "/tmp" };

    fn parsed(name: &str, args: Value, options: Value) -> Result<ParsedCall, String> {
        parse(name, Some(&args.to_string()), Some(&options.to_string())).map_err(|e| e.0)
    }

    fn err(name: &str, args: Value, options: Value) -> String {
        parsed(name, args, options).unwrap_err()
    }

    #[test]
    fn defaults_and_each_calls_options() {
        let o = parse("readAccount", None, None).unwrap();
        assert!(matches!(o.call, Call::ReadAccount { .. }));
        assert_eq!(o.request_timeout, crate::options::json::DEFAULT_REQUEST_TIMEOUT);
        assert!(std::path::Path::new(&o.target.cwd).is_absolute());
        let o = parsed("listModels", json!({}), json!({"includeHidden": true, "requestTimeoutMs": 5})).unwrap();
        assert!(matches!(o.call, Call::ListModels { options: ListModelsOptions { include_hidden: Some(true), .. } }));
        assert_eq!(o.request_timeout, Duration::from_millis(5));
        let options = json!({"cwd": TMP, "limit": 3, "cursor": null, "archived": false, "searchTerm": "fix",
            "sortKey": "updated_at", "sourceKinds": ["appServer", "subAgent"], "env": {"TOKEN": "canary-1"}});
        let o = parsed("listThreads", json!({}), options).unwrap();
        let Call::ListThreads { options } = &o.call else { panic!("{:?}", o.call) };
        assert_eq!((options.limit, options.cursor.as_ref()), (Some(Positive(3)), None));
        assert_eq!(options.source_kinds, Some(vec![NonEmpty("appServer".into()), NonEmpty("subAgent".into())]));
        assert_eq!(options.cwd.as_deref(), Some(TMP));
        assert_eq!(o.target.thread_cwd, TMP);
        // The shared options went into the target: the call holds no env value.
        assert!(!format!("{:?}", o.call).contains("canary-1"));
        let o = parsed("forkThread", json!({"threadId": "th"}), json!({"lastTurnId": "tu"})).unwrap();
        assert!(matches!(&o.call, Call::ForkThread { thread_id, options } if thread_id.0 == "th"
            && options.last_turn_id == Some(NonEmpty("tu".into()))));
        let o = parsed("startLogin", json!({}), json!({"timeoutMs": 5})).unwrap();
        assert!(matches!(&o.call, Call::StartLogin { options } if options.timeout_ms == Some(Millis(5))));
        for name in ["archiveThread", "unarchiveThread", "deleteThread", "compactThread", "readGoal", "clearGoal"] {
            assert_eq!(parsed(name, json!({"threadId": "t"}), json!({})).unwrap().call.name(), name);
        }
        assert_eq!(parse("logout", None, None).unwrap().call.name(), "logout");
    }

    #[test]
    fn errors_name_the_argument_after_the_call_or_the_option() {
        assert_eq!(
            err("readThread", json!({"threadId": ""}), json!({})),
            "readThread: threadId must be a non-empty string"
        );
        assert_eq!(err("forkThread", json!({}), json!({})), "forkThread: threadId must be a non-empty string");
        assert_eq!(
            err("renameThread", json!({"threadId": "t", "name": " "}), json!({})),
            "renameThread: name must be a non-empty string"
        );
        assert_eq!(
            err("setGoal", json!({"threadId": "t"}), json!({})),
            "setGoal: goal must be an object { objective?, status?, tokenBudget? }"
        );
        assert_eq!(err("request", json!({"method": ""}), json!({})), "request: method must be a non-empty string");
        assert_eq!(err("logout", json!({"name": "x"}), json!({})), "logout: name is not an argument of logout");
        assert_eq!(
            err("readAccount", json!({}), json!({"includeHidden": true})),
            "options.includeHidden is not an option of readAccount"
        );
        assert_eq!(err("listModels", json!({}), json!({"limit": 2})), "options.limit is not an option of listModels");
        assert!(err("listModels", json!({}), json!({"includeHidden": 1})).starts_with("options.includeHidden:"));
        assert!(
            err("listThreads", json!({}), json!({"cwd": "rel"})).starts_with("options.cwd must be an absolute path")
        );
        assert_eq!(
            err("forkThread", json!({"threadId": "t"}), json!({"lastTurnId": ""})),
            "options.lastTurnId must be a non-empty string"
        );
        assert_eq!(
            err("revertThread", json!({"threadId": "t"}), json!({})),
            "options.beforeTurnId must be a non-empty string (the first turn to remove)"
        );
        assert_eq!(
            err("listSkills", json!({}), json!({"connect": true})),
            "options.connect is not an option of listSkills"
        );
        assert_eq!(
            err("startLogin", json!({}), json!({"timeoutMs": 0})),
            "options.timeoutMs must be an integer number of milliseconds from 1 to 2147483647"
        );
        assert_eq!(
            err("readAccount", json!({}), json!({"requestTimeoutMs": 2147483648u64})),
            "options.requestTimeoutMs must be an integer number of milliseconds from 1 to 2147483647"
        );
        assert_eq!(err("nope", json!({}), json!({})), "nope is not a call");
    }

    #[test]
    fn every_call_is_declared_and_has_a_row() {
        let cfg = ts_rs::Config::default();
        let declared = typescript(&cfg);
        let rows = js_rows();
        assert_eq!(
            declared.iter().map(|d| d.name).collect::<Vec<_>>(),
            rows.iter().map(|r| r.name).collect::<Vec<_>>()
        );
        let rename = declared.iter().find(|d| d.name == "renameThread").unwrap();
        assert!(rename.declaration.starts_with("/**\n * Sets the thread's name"), "{}", rename.declaration);
        assert!(
            rename.declaration.ends_with(
                "export function renameThread(threadId: string, name: string, options?: CallOptions): Promise<void>\n"
            ),
            "{}",
            rename.declaration
        );
        let revert = declared.iter().find(|d| d.name == "revertThread").unwrap();
        assert!(revert.declaration.contains("options: RevertThreadOptions): Promise<void>"), "{}", revert.declaration);
        let login = rows.iter().find(|r| r.name == "startLogin").unwrap();
        assert_eq!((login.resolves, login.args.len()), ("handle", 0));
        let request = rows.iter().find(|r| r.name == "request").unwrap();
        assert_eq!((request.resolves, request.args.as_slice()), ("value", ["method", "params"].as_slice()));
    }
}
