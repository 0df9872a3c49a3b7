//! Logging in: the only calls that write the user's credentials (`auth.json`), because the app
//! asked. `loginWithApiKey` is a call like the others (the key goes into the request's params
//! and nowhere else). A ChatGPT login (`startLogin`) is a handle with two results: `started`
//! (what the app shows the user: the browser URL, or the verification URL and code) and
//! `completed` (the account, once `account/login/completed` said so). Its child lives until the
//! login completes, is cancelled (`account/login/cancel` first, then the child ends), times out
//! (the same, then `REQUEST_TIMEOUT`) or is killed with its JavaScript environment.
//!
//! A browser login makes Codex listen on 127.0.0.1 for the browser's callback: on 1455 when it
//! can. It first asks whatever holds 1455 to cancel (`GET /cancel`), so a second Codex login,
//! in any process, takes the port over and cancels the first; when 1455 stays taken it listens
//! on another port, which `authUrl`'s `redirect_uri` names (observed on 0.171.0). Within this
//! process a second browser login while one runs fails at once (`LOGIN_IN_PROGRESS`), but one
//! started after the first was cancelled waits for its child to end and then starts; a login
//! another program starts ends this one's `completed` with Codex's "Login cancelled"
//! (`LOGIN_FAILED`).

use super::{account_info, Caller, ParsedCall};
use crate::cancel::Cancel;
use crate::exchange::{failures, handshake, Exchange, Frame, Input, Output, Owner, Stop, Wire};
use crate::failure::{Code, Failure, FailureSource};
use crate::options::call::{LoginKind, DEFAULT_LOGIN_TIMEOUT};
use crate::options::rules::Secret;
use crate::protocol::{method, params, LoginCancel, LoginStart, RpcError};
use crate::resolve::Target;
use serde::Deserialize;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// How long Codex has, after `account/login/cancel`, to say the login ended before the child
/// is killed anyway.
const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// `account/login/completed` params.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Completed {
    #[serde(default)]
    login_id: Option<String>,
    success: bool,
    #[serde(default)]
    error: Option<String>,
}

/// Why a login is being ended before it completed.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Ending {
    Cancelled,
    TimedOut,
}

/// The exchange's owner during a login: waits for the login's `account/login/completed`, and
/// turns a cancel (an abort) or the login's deadline into `account/login/cancel`.
struct Watcher {
    login_id: Option<String>,
    completed: Option<Completed>,
    /// The login completed (or never started): an abort now stops at once.
    settled: bool,
    ending: Option<Ending>,
    /// Set once the user is shown what to do: the time to start Codex and ask it is not theirs.
    deadline: Option<Instant>,
    timeout: Duration,
}

impl Watcher {
    fn new(timeout: Option<Duration>) -> Watcher {
        Watcher {
            login_id: None,
            completed: None,
            settled: false,
            ending: None,
            deadline: None,
            timeout: timeout.unwrap_or_default(),
        }
    }

    /// Sends `account/login/cancel` for the running login and gives Codex [`CANCEL_GRACE`] to
    /// say it ended; without a login to cancel, the run stops at once.
    async fn end<R: Input, W: Output>(&mut self, why: Ending, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        self.ending.get_or_insert(why);
        let login_id = match &self.login_id {
            Some(id) if !self.settled && wire.can_write() => id.clone(),
            _ => {
                return Err(match self.ending {
                    Some(Ending::TimedOut) => Stop::Failed(timed_out(self.timeout, self.login_id.as_deref())),
                    _ => Stop::Cancelled,
                })
            }
        };
        tracing::debug!(?why, "login ending: account/login/cancel");
        // Its answer decides nothing: `account/login/completed` (or the grace) does.
        let _ = wire.request(&LoginCancel { login_id: &login_id }, None).await;
        wire.give_grace(Instant::now() + CANCEL_GRACE);
        Ok(())
    }
}

/// The login's deadline passed.
struct Deadline;

impl Owner for Watcher {
    type Wake = Deadline;

    fn wake(&mut self, _reading: bool) -> impl Future<Output = Deadline> + Send {
        let deadline = if self.ending.is_none() && !self.settled { self.deadline } else { None };
        async move {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
            Deadline
        }
    }

    async fn on_wake<R: Input, W: Output>(&mut self, _: Deadline, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        self.end(Ending::TimedOut, wire).await
    }

    async fn on_frame<R: Input, W: Output>(&mut self, frame: Frame, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        match frame {
            Frame::Notification { method, line, .. } if method == method::ACCOUNT_LOGIN_COMPLETED => {
                let Some(completed) = params::<Completed>(&line) else {
                    return Err(Stop::Failed(failures::unexpected_result(
                        method::ACCOUNT_LOGIN_COMPLETED,
                        "not a login completion",
                        &line,
                    )));
                };
                // Another login's end (one this child started and cancelled) is not ours.
                let ours = match (&self.login_id, &completed.login_id) {
                    (Some(ours), Some(theirs)) => ours == theirs,
                    _ => true,
                };
                if ours && !self.settled {
                    self.settled = true;
                    self.completed = Some(completed);
                }
                Ok(())
            }
            frame => Caller.on_frame(frame, wire).await,
        }
    }

    async fn on_abort<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        self.end(Ending::Cancelled, wire).await
    }
}

/// `REQUEST_TIMEOUT` for a login that did not complete within `timeout`.
fn timed_out(timeout: Duration, login_id: Option<&str>) -> Failure {
    let ms = timeout.as_millis();
    Failure::new(FailureSource::Jsonrpc, Code::RequestTimeout, format!("the login did not complete within {ms} ms"))
        .with_detail(json!({"method": method::ACCOUNT_LOGIN_START, "timeoutMs": ms, "loginId": login_id}))
}

/// `account/login/start` refused: `LOGIN_FAILED` in the server's words (a Codex without the
/// method: `METHOD_UNSUPPORTED`).
fn refused(error: RpcError, codex_version: Option<&str>) -> Failure {
    let method = method::ACCOUNT_LOGIN_START;
    if failures::is_unknown_method(method, &error) {
        return failures::rpc_failure(method, error, codex_version);
    }
    Failure::new(FailureSource::Jsonrpc, Code::LoginFailed, error.message)
        .with_detail(json!({"method": method, "code": error.code, "data": error.data}))
}

/// `account/login/completed` with `success: false`: `LOGIN_FAILED` in the server's words.
fn unsuccessful(completed: Completed) -> Failure {
    let message = completed.error.clone().unwrap_or_else(|| "the login did not succeed".to_string());
    Failure::new(FailureSource::Jsonrpc, Code::LoginFailed, message)
        .with_detail(json!({"loginId": completed.login_id, "error": completed.error}))
}

/// `failure` with every occurrence of `secret` replaced, should the server have echoed it.
fn redacted(mut failure: Failure, secret: &str) -> Failure {
    const SHOWN: &str = "<redacted>";
    if failure.message.contains(secret) {
        failure.message = failure.message.replace(secret, SHOWN);
    }
    let detail = failure.detail.to_string();
    if detail.contains(secret) {
        failure.detail = serde_json::from_str(&detail.replace(secret, SHOWN)).unwrap_or(Value::Null);
    }
    failure
}

/// `loginWithApiKey`: stores the key as the user's login, then reads the account as
/// `readAccount` does.
pub(super) async fn with_api_key<R: Input, W: Output>(
    exchange: &mut Exchange<'_, R, W>,
    target: &Target,
    api_key: &Secret,
) -> Result<Value, Stop> {
    let key = api_key.expose();
    let mut watcher = Watcher::new(None);
    let version = exchange.codex_version.clone();
    let answer = exchange.ask(&mut watcher, &LoginStart::ApiKey { api_key: key }).await;
    let answer = answer.map_err(|stop| match stop {
        Stop::Failed(failure) => Stop::Failed(redacted(failure, key)),
        stop => stop,
    })?;
    answer.map_err(|error| Stop::Failed(redacted(refused(error, version.as_deref()), key)))?;
    // The key is stored once the answer came: `account/login/completed` follows, and says
    // otherwise only if the login failed after all.
    let info = account_info(exchange, &mut watcher, target).await?;
    match watcher.completed.take() {
        Some(completed) if !completed.success => Err(Stop::Failed(redacted(unsuccessful(completed), key))),
        _ => Ok(info),
    }
}

/// Which login `call` asks for, and how long it may wait for the user; `None` for another call.
fn asked(call: &super::Call) -> Option<(LoginKind, Duration)> {
    match call {
        super::Call::StartLogin { options } => Some((
            options.kind.unwrap_or(LoginKind::Chatgpt),
            options.timeout_ms.map_or(DEFAULT_LOGIN_TIMEOUT, |ms| ms.duration()),
        )),
        _ => None,
    }
}

/// A login's play: the handshake, `account/login/start` (then `started` is told what to show),
/// and the wait for the login to complete; then the account.
pub(super) async fn play<R: Input, W: Output>(
    exchange: &mut Exchange<'_, R, W>,
    options: &ParsedCall,
    started: &Started,
) -> Result<Value, Stop> {
    let Some((kind, timeout)) = asked(&options.call) else {
        let message = "a login's options name another call";
        return Err(Stop::Failed(Failure::new(FailureSource::Internal, Code::InternalError, message)));
    };
    let mut watcher = Watcher::new(Some(timeout));
    handshake::handshake(exchange, &mut watcher, false).await?;
    let version = exchange.codex_version.clone();
    let request = match kind {
        LoginKind::Chatgpt => LoginStart::Chatgpt,
        LoginKind::ChatgptDeviceCode => LoginStart::ChatgptDeviceCode,
    };
    let began =
        exchange.ask(&mut watcher, &request).await?.map_err(|e| Stop::Failed(refused(e, version.as_deref())))?;
    let Some(login_id) = began.login_id.clone() else {
        let why = format!("a {} login without a loginId", began.kind);
        return Err(Stop::Failed(failures::unexpected_result(method::ACCOUNT_LOGIN_START, why, &began.kind)));
    };
    tracing::Span::current().record("loginId", login_id.as_str());
    watcher.login_id = Some(login_id.clone());
    watcher.deadline = Some(Instant::now() + timeout);
    let shown = json!({
        "loginId": login_id,
        "authUrl": began.auth_url,
        "verificationUrl": began.verification_url,
        "userCode": began.user_code,
    });
    started.send_replace(Some(crate::envelope::to_json(&Ok::<_, Failure>(shown))));
    let completed = match watcher.completed.take() {
        Some(completed) => completed,
        None => match exchange.pump_until(&mut watcher, |w, _| w.completed.take()).await {
            Ok(completed) => completed,
            // Codex did not say the timed-out login ended within the grace: it is killed, and
            // what the app learns is still that it timed out.
            Err(Stop::Cancelled)
                if watcher.ending == Some(Ending::TimedOut) && !exchange.wire.cancel().kill_requested() =>
            {
                return Err(Stop::Failed(timed_out(timeout, Some(&login_id))))
            }
            Err(stop) => return Err(stop),
        },
    };
    match watcher.ending {
        Some(Ending::Cancelled) => return Err(Stop::Done),
        Some(Ending::TimedOut) => return Err(Stop::Failed(timed_out(timeout, Some(&login_id)))),
        None => {}
    }
    if !completed.success {
        return Err(Stop::Failed(unsuccessful(completed)));
    }
    tracing::info!("login completed");
    account_info(exchange, &mut watcher, &options.target).await
}

/// The one browser login of this process at a time (one callback server): the login that holds
/// it now.
static BROWSER_LOGIN: Mutex<Option<Holder>> = Mutex::new(None);

/// The login holding [`BROWSER_LOGIN`]: its cancel (a cancelled holder gives way to the next
/// login) and whether it has let go (its child is gone).
struct Holder {
    cancel: Arc<Cancel>,
    released: watch::Receiver<bool>,
}

/// Holds [`BROWSER_LOGIN`] while a browser login runs. A login started while the holder is
/// cancelled (its child still ending: Codex asked to cancel, then the child ends) takes it over
/// at once, and waits for that child to be gone before it starts its own; a later one is then
/// refused, as beside any running login.
struct BrowserSlot {
    cancel: Arc<Cancel>,
    released: watch::Sender<bool>,
    /// The cancelled login this one took over from.
    after: Option<watch::Receiver<bool>>,
}

impl BrowserSlot {
    fn take(cancel: &Arc<Cancel>) -> Option<BrowserSlot> {
        let mut holder = BROWSER_LOGIN.lock().unwrap_or_else(|e| e.into_inner());
        let after = match holder.as_ref() {
            None => None,
            Some(held) if held.cancel.abort_requested() => Some(held.released.clone()),
            Some(_) => return None,
        };
        let (released, receiver) = watch::channel(false);
        *holder = Some(Holder { cancel: cancel.clone(), released: receiver });
        Some(BrowserSlot { cancel: cancel.clone(), released, after })
    }

    /// Until the login this one took over from is gone (and whatever it waited for): only then
    /// is the callback port free. Not raced with this login's own cancel, so that a login
    /// cancelled while it waits lets go no earlier than the one before it.
    async fn wait_for_predecessor(&mut self) {
        if let Some(mut after) = self.after.take() {
            // A sender dropped without saying so (its work dropped unrun) has let go too.
            let _ = after.wait_for(|gone| *gone).await;
        }
    }
}

impl Drop for BrowserSlot {
    fn drop(&mut self) {
        let mut holder = BROWSER_LOGIN.lock().unwrap_or_else(|e| e.into_inner());
        if holder.as_ref().is_some_and(|held| Arc::ptr_eq(&held.cancel, &self.cancel)) {
            *holder = None;
        }
        drop(holder);
        self.released.send_replace(true);
    }
}

fn in_progress() -> Failure {
    Failure::new(
        FailureSource::Jsonrpc,
        Code::LoginInProgress,
        "another ChatGPT login of this app is still running: Codex serves one browser login at a time; \
         cancel it (a login started after that waits for its child to end) or let it complete first",
    )
    .with_detail(json!({"method": method::ACCOUNT_LOGIN_START}))
}

/// A running login, as its caller holds it.
pub struct Login {
    cancel: Arc<Cancel>,
    started: Arc<watch::Sender<Option<String>>>,
    completed: Arc<watch::Sender<Option<String>>>,
}

impl Login {
    /// Cancels the login: `account/login/cancel`, then the child ends; `completed` rejects
    /// `CANCELLED`. Idempotent; nothing once the login completed.
    pub fn cancel(&self) {
        self.cancel.request_abort();
    }

    pub fn cancel_handle(&self) -> &Arc<Cancel> {
        &self.cancel
    }

    /// What to show the user, as the JSON text of an envelope: `{ok: {loginId, authUrl,
    /// verificationUrl, userCode}}`, or the failure that came first.
    pub async fn started(&self) -> String {
        wait(&self.started).await
    }

    /// How the login ended, once its child is gone: `{ok: AccountInfo}` or `{failure}`.
    pub async fn completed(&self) -> String {
        wait(&self.completed).await
    }
}

async fn wait(said: &watch::Sender<Option<String>>) -> String {
    let mut rx = said.subscribe();
    let value = rx.wait_for(Option::is_some).await.expect("the sender lives in the handle");
    value.clone().expect("waited for a value")
}

/// Who waits for what to show the user: the JSON text of an envelope, once said.
pub type Started = watch::Sender<Option<String>>;

/// The login, ready to run: its handle, and the work to spawn (it settles both results however
/// it ends, a defect included). `aborted`: nothing is started.
pub fn start(options: ParsedCall, aborted: bool) -> (Login, impl Future<Output = ()> + Send + 'static) {
    let cancel = Arc::new(Cancel::new());
    if aborted {
        cancel.request_kill();
    }
    let started = Arc::new(watch::channel(None).0);
    let completed = Arc::new(watch::channel(None).0);
    // Taken now, in the caller's order: of two logins started one after the other, the first
    // wins. One that starts nothing needs no port.
    let slot = match asked(&options.call) {
        Some((LoginKind::Chatgpt, _)) if !aborted => Some(BrowserSlot::take(&cancel)),
        _ => None,
    };
    let finish = {
        let (started, completed) = (started.clone(), completed.clone());
        move |outcome: super::Outcome| {
            let code = outcome.as_ref().err().map(|failure| failure.code.as_str());
            tracing::info!(code, "login ended");
            let json = crate::envelope::to_json(&outcome);
            // A login that never got as far as `started` tells `started` how it ended, too.
            started.send_if_modified(|said| {
                let unsaid = said.is_none();
                if unsaid {
                    *said = Some(json.clone());
                }
                unsaid
            });
            completed.send_replace(Some(json));
        }
    };
    let login = Part { started: started.clone(), slot };
    let work = crate::run::start(super::Calling { options, login: Some(login) }, cancel.clone(), finish);
    (Login { cancel, started, completed }, work)
}

/// A login's own part of its run: who waits for what to show the user, and a browser login's
/// slot (`Some(None)`: another browser login runs), held until its child is gone.
pub(super) struct Part {
    pub(super) started: Arc<Started>,
    slot: Option<Option<BrowserSlot>>,
}

impl Part {
    /// Before anything starts: a browser login beside a running one fails at once; one that
    /// took over from a cancelled one waits for that one's child to be gone.
    pub(super) async fn begin(&mut self) -> Result<(), super::Outcome> {
        match &mut self.slot {
            Some(None) => Err(Err(in_progress())),
            Some(Some(slot)) => {
                slot.wait_for_predecessor().await;
                Ok(())
            }
            None => Ok(()),
        }
    }
}
