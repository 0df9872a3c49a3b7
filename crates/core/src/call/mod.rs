//! Calls around turns — who is logged in, logging in and out, which models there are, the
//! stored threads and what an app does to them, goals, skills, MCP status, and any other
//! method — each one short-lived `codex app-server` child, run in the shell a turn runs in
//! ([`crate::run`]: started, ended and described as a turn's is), over the same exchange:
//! the handshake and the call's request(s), each with its deadline, while an abort or the
//! server's end stops everything at once. Nothing the server asks for is granted. A call is one
//! row of [`table`]; a ChatGPT login has a handle of its own ([`login`]). `drive` is generic
//! over the connection and the process, so `cargo test` plays the server.

mod compact;
pub mod login;
mod mcp;
pub mod table;

pub use crate::options::call::{refused_method, GoalChange, LoginKind};
pub use crate::options::rules::Secret;
pub use table::{parse, Call, ParsedCall};

use crate::app_server::{self, NotStarted};
use crate::cancel::Cancel;
use crate::exchange::{failures, handshake, Exchange, Input, Output, Owner, Stop};
use crate::failure::{Code, Failure, FailureSource};
use crate::options::target::Target;
use crate::process::{ServerProcess, Spec};
use crate::protocol::{method, AccountRateLimitsRead, AccountRead, ApprovalPolicy, ThreadLoad, ThreadSandbox};
use crate::resolve::Resolved;
use crate::run;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tracing::field::Empty;

/// How a call ended: what it resolves with, or why not (`CANCELLED` when it was aborted;
/// nothing is left of the child either way).
pub type Outcome = Result<Value, Failure>;

/// A running call, as its caller holds it.
pub struct Running {
    cancel: Arc<Cancel>,
    outcome: Mutex<Option<oneshot::Receiver<String>>>,
}

impl Running {
    /// Ends the child at once (a call has nothing to interrupt politely); its outcome then
    /// says `CANCELLED`. Idempotent.
    pub fn abort(&self) {
        self.cancel.request_kill();
    }

    pub fn cancel(&self) -> &Arc<Cancel> {
        &self.cancel
    }

    /// How the call went, once its child is gone: the JSON text of its envelope
    /// ([`crate::envelope`]). Once per call.
    pub async fn outcome(&self) -> String {
        let waiting = self.outcome.lock().unwrap_or_else(|e| e.into_inner()).take();
        let answered = match waiting {
            Some(waiting) => waiting.await.ok(),
            None => None,
        };
        answered.unwrap_or_else(|| {
            let failure =
                Failure::new(FailureSource::Internal, Code::InternalError, "the call's outcome was already taken");
            crate::envelope::to_json::<()>(&Err(failure))
        })
    }
}

/// The call, ready to run: its handle, and the work to spawn on the runtime (it settles the
/// handle's outcome however it ends, a defect included). `aborted`: nothing is started.
pub fn start(options: ParsedCall, aborted: bool) -> (Running, impl Future<Output = ()> + Send + 'static) {
    start_with(options, aborted, |call, cancel| async move { run::start_and_drive(call, &cancel).await })
}

/// [`start`] with the work given (a test's can fail as production's must not).
fn start_with<F, Fut>(
    options: ParsedCall,
    aborted: bool,
    work: F,
) -> (Running, impl Future<Output = ()> + Send + 'static)
where
    F: FnOnce(Calling, Arc<Cancel>) -> Fut + Send + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    let cancel = Arc::new(Cancel::new());
    if aborted {
        cancel.request_kill();
    }
    let (settle, outcome) = oneshot::channel();
    let finish = move |outcome: Outcome| {
        let code = outcome.as_ref().err().map(|failure| failure.code.as_str());
        tracing::info!(code, "call ended");
        let _ = settle.send(crate::envelope::to_json(&outcome));
    };
    let work = run::start_with(Calling { options, login: None }, cancel.clone(), finish, work);
    (Running { cancel, outcome: Mutex::new(Some(outcome)) }, work)
}

/// Plays one call (a login, telling `login` what to show the user) over an established
/// connection and ends the process before it answers.
pub async fn drive<R: Input, W: Output, P: ServerProcess>(
    reader: R,
    writer: W,
    process: P,
    options: &ParsedCall,
    cancel: &Cancel,
    login: Option<&login::Started>,
) -> Outcome {
    run::drive(reader, writer, process, cancel, Script { options, login }).await
}

/// A call as the shell runs it, a ChatGPT login ([`login::start`]) included.
struct Calling {
    options: ParsedCall,
    /// A ChatGPT login's own part: who waits for what to show the user, its browser slot.
    login: Option<login::Part>,
}

impl run::Run for Calling {
    type Outcome = Outcome;
    type Script<'a> = Script<'a>;

    fn span(&mut self) -> tracing::Span {
        let call = self.options.call.name();
        match self.login {
            Some(_) => tracing::info_span!("login", call, pid = Empty, loginId = Empty),
            None => tracing::info_span!("call", call, pid = Empty),
        }
    }

    async fn begin(&mut self) -> Result<(), Outcome> {
        match &mut self.login {
            Some(login) => login.begin().await,
            None => Ok(()),
        }
    }

    fn target(&self) -> &Target {
        &self.options.target
    }

    /// `app-server`, with the call's secrets kept out of its stderr.
    async fn prepare(&self, resolved: Resolved) -> Result<Spec, Failure> {
        let options = &self.options;
        let mut args = vec![std::ffi::OsString::from("app-server")];
        // Listing MCP servers without starting them: no plugin or app brings servers of its own.
        if matches!(&options.call, Call::ListMcpServers { options } if options.connect != Some(true)) {
            args.extend(crate::isolation::feature_args());
        }
        let mut spec: Spec = resolved.launch.spec(args);
        spec.stdin = true;
        // Whatever Codex writes to stderr is logged: never a key.
        match &options.call {
            Call::LoginWithApiKey { api_key, .. } => spec.secrets.push(api_key.0.expose().to_string()),
            Call::Request { params, .. } => credentials_in(&params.0, &mut spec.secrets),
            _ => {}
        }
        Ok(spec)
    }

    fn not_started(&self, why: NotStarted) -> Outcome {
        match why {
            NotStarted::Aborted => Err(cancelled(&self.options.call)),
            NotStarted::Failed(failure) => Err(failure),
        }
    }

    fn defect(failure: Failure) -> Outcome {
        Err(failure)
    }

    fn script<'a>(&'a self, _pid: u32, _codex_path: &'a str) -> Script<'a> {
        Script { options: &self.options, login: self.login.as_ref().map(|login| &*login.started) }
    }
}

/// A call's script ([`table::play`]), or a login's ([`login::play`]) telling `login` what to
/// show the user; and how the call went, once the child is gone.
struct Script<'a> {
    options: &'a ParsedCall,
    login: Option<&'a login::Started>,
}

impl run::Script for Script<'_> {
    type Outcome = Outcome;
    type Played = Result<Value, Stop>;

    fn request_timeout(&self) -> Duration {
        self.options.request_timeout
    }

    async fn play<R: Input, W: Output>(&mut self, exchange: &mut Exchange<'_, R, W>) -> Result<Value, Stop> {
        match self.login {
            Some(started) => login::play(exchange, self.options, started).await,
            None => table::play(exchange, self.options).await,
        }
    }

    fn leaving(&self, played: &Result<Value, Stop>) -> app_server::Leaving {
        played.as_ref().err().map_or(app_server::Leaving::Done, Stop::leaving)
    }

    fn outcome(self, played: Result<Value, Stop>, ended: run::Ended<'_>) -> Outcome {
        let call = &self.options.call;
        match played {
            // An abort while the child was being ended still wins: the caller is not waiting any more.
            Ok(_) if ended.cancel.abort_requested() => Err(cancelled(call)),
            Ok(value) => Ok(value),
            Err(Stop::Cancelled | Stop::Done) => Err(cancelled(call)),
            Err(Stop::Eof { waiting }) => {
                let before = format!("it answered {}", waiting.unwrap_or("the call"));
                Err(app_server::exited(&before, &ended.gone, (ended.stderr_tail)()))
            }
            Err(Stop::Failed(failure)) => Err(app_server::with_stderr_tail(failure, ended.stderr_tail)),
        }
    }
}

/// A call around turns, as the owner of its exchange: the exchange's defaults. The call owns no
/// thread: notifications change nothing, and every server request is refused. The calls that
/// wait for something the server announces (a login's completion, a compaction's turn) watch
/// for it with an owner of their own ([`login`], [`compact`]).
pub(crate) struct Caller;

impl Owner for Caller {
    type Wake = std::convert::Infallible;
}

/// `account/read`, then `account/rateLimits/read` on the same child: `AccountInfo`, with how
/// the child can authenticate (`auth`, the rule of a turn's `AUTH_REQUIRED`).
async fn account_info<R: Input, W: Output, O: Owner>(
    exchange: &mut Exchange<'_, R, W>,
    owner: &mut O,
    target: &Target,
) -> Result<Value, Stop> {
    let report = exchange.call(owner, &AccountRead {}).await?;
    let Some(requires) = report.get("requiresOpenaiAuth").and_then(Value::as_bool) else {
        let why = "requiresOpenaiAuth is not a boolean";
        return Err(Stop::Failed(failures::unexpected_result(method::ACCOUNT_READ, why, &report.to_string())));
    };
    // Refused without a ChatGPT login (an API key has no plan), and by a Codex without it.
    let rate_limits = match exchange.ask(owner, &AccountRateLimitsRead {}).await? {
        Ok(limits) => limits,
        Err(error) => {
            tracing::debug!(code = error.code, "account/rateLimits/read refused: {}", error.message);
            Value::Null
        }
    };
    let auth = crate::account::auth(&report, &handshake::child_env(target));
    let account = report.get("account").cloned().unwrap_or(Value::Null);
    Ok(json!({"account": account, "requiresOpenaiAuth": requires, "rateLimits": rate_limits, "auth": auth}))
}

/// Loads a stored thread in this child, as a turn resumes it but without a `cwd` of its own
/// (the thread keeps its directory): read-only, approval `never`, so that nothing is written
/// to the user's configuration.
async fn load_thread<R: Input, W: Output>(exchange: &mut Exchange<'_, R, W>, thread_id: &str) -> Result<(), Stop> {
    let load = ThreadLoad { thread_id, approval_policy: ApprovalPolicy::Never, sandbox: ThreadSandbox::ReadOnly };
    exchange.call(&mut Caller, &load).await.map(drop)
}

/// The values of `params` that are credentials by their name (`apiKey`, `accessToken`,
/// `secretAccessKey`, `sessionToken`…, as `account/login/start` takes them through `request()`).
fn credentials_in(params: &Value, found: &mut Vec<String>) {
    match params {
        Value::Object(fields) => {
            for (name, value) in fields {
                let name = name.to_ascii_lowercase();
                let secret = ["key", "token", "secret", "password"].iter().any(|word| name.contains(word));
                match value {
                    Value::String(text) if secret => found.push(text.clone()),
                    other => credentials_in(other, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| credentials_in(item, found)),
        _ => {}
    }
}

/// What a call that was aborted rejects with; JavaScript adds the abort's reason as `cause`.
fn cancelled(call: &Call) -> Failure {
    let name = call.name();
    Failure::new(FailureSource::Jsonrpc, Code::Cancelled, format!("{name} was cancelled"))
        .with_detail(serde_json::json!({"call": name}))
}

#[cfg(test)]
mod tests;
