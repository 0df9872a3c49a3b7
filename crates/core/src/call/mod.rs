//! Calls around turns — who is logged in, logging in and out, which models there are, the
//! stored threads and what an app does to them, goals, skills, MCP status, and any other
//! method — each one short-lived `codex app-server` child: started, ended and described as a
//! turn's is ([`crate::app_server`]), speaking over the same exchange ([`crate::exchange`]):
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

use crate::app_server::{self, NotStarted, Started};
use crate::cancel::Cancel;
use crate::exchange::{failures, handshake, Exchange, Input, Output, Owner, Stop};
use crate::failure::{Code, Failure, FailureSource};
use crate::process::{Child, ServerProcess, Spec};
use crate::protocol::{method, AccountRateLimitsRead, AccountRead, ApprovalPolicy, ThreadLoad, ThreadSandbox};
use crate::resolve::{Resolved, Target};
use crate::rpc::Connection;
use crate::transport::FrameReader;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tracing::field::Empty;
use tracing::Instrument;

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
    start_with(options, aborted, run)
}

/// [`start`] with the runner given (a test's can fail as production's must not).
fn start_with<F, Fut>(
    options: ParsedCall,
    aborted: bool,
    runner: F,
) -> (Running, impl Future<Output = ()> + Send + 'static)
where
    F: FnOnce(ParsedCall, Arc<Cancel>) -> Fut + Send + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    let cancel = Arc::new(Cancel::new());
    if aborted {
        cancel.request_kill();
    }
    let (settle, outcome) = oneshot::channel();
    let work = {
        let cancel = cancel.clone();
        async move {
            let outcome = crate::supervise::catching(runner(options, cancel)).await.and_then(|outcome| outcome);
            let _ = settle.send(crate::envelope::to_json(&outcome));
        }
    };
    (Running { cancel, outcome: Mutex::new(Some(outcome)) }, work)
}

/// Starts the child, plays the call, ends the child; then the outcome.
pub async fn run(options: ParsedCall, cancel: Arc<Cancel>) -> Outcome {
    let span = tracing::info_span!("call", call = options.call.name(), pid = Empty);
    async move {
        let outcome = start_and_drive(&options, &cancel).await;
        let code = outcome.as_ref().err().map(|failure| failure.code.as_str());
        tracing::info!(code, "call ended");
        outcome
    }
    .instrument(span)
    .await
}

async fn start_and_drive(options: &ParsedCall, cancel: &Cancel) -> Outcome {
    let mut child = start_child(options, cancel).await?;
    let (stdout, stdin) = child.pipes();
    drive(stdout, stdin, child, options, cancel).await
}

/// The `codex app-server` child of a call (a login's included), started where its target says.
async fn start_child(options: &ParsedCall, cancel: &Cancel) -> Result<Child, Failure> {
    let prepare = |resolved: Resolved| async move {
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
        Ok::<_, Failure>(spec)
    };
    match app_server::start(&options.target, cancel, prepare, None).await {
        Ok(Started { child, .. }) => Ok(child),
        Err(NotStarted::Aborted) => Err(cancelled(&options.call)),
        Err(NotStarted::Failed(failure)) => Err(failure),
    }
}

/// Plays one call over an established connection and ends the process before it answers.
pub async fn drive<R: Input, W: Output, P: ServerProcess>(
    reader: R,
    writer: W,
    process: P,
    options: &ParsedCall,
    cancel: &Cancel,
) -> Outcome {
    let conn = Connection::new(FrameReader::new(reader), writer);
    let mut exchange = Exchange::new(conn, cancel, options.request_timeout);
    let played = table::play(&mut exchange, options).await;
    finish(played, exchange, process, &options.call, cancel).await
}

/// Ends the child of a call that played (`played`) and says how the call went.
async fn finish<R: Input, W: Output, P: ServerProcess>(
    played: Result<Value, Stop>,
    mut exchange: Exchange<'_, R, W>,
    mut process: P,
    call: &Call,
    cancel: &Cancel,
) -> Outcome {
    let leaving = played.as_ref().err().map_or(app_server::Leaving::Done, Stop::leaving);
    let gone = app_server::end(&mut process, exchange.close(), leaving, cancel).await;
    match played {
        // An abort while the child was being ended still wins: the caller is not waiting any more.
        Ok(_) if cancel.abort_requested() => Err(cancelled(call)),
        Ok(value) => Ok(value),
        Err(Stop::Cancelled | Stop::Done) => Err(cancelled(call)),
        Err(Stop::Eof { waiting }) => {
            let before = format!("it answered {}", waiting.unwrap_or("the call"));
            Err(app_server::exited(&before, &gone, process.stderr_tail()))
        }
        Err(Stop::Failed(failure)) => Err(app_server::with_stderr_tail(failure, || process.stderr_tail())),
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
