//! What the caller gives a running turn beside cancelling it ([`crate::cancel::Cancel`]):
//! more input (steers), a prepared turn's input (its start); and what the turn tells before
//! its events do: that a prepared turn is ready. The binding raises these; the runner waits on
//! them.

use crate::failure::{Code, Failure, FailureSource};
use crate::options::input::InputItem;
use crate::options::TurnInput;
use crate::protocol::RpcError;
use serde_json::json;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};

/// More input for the running turn, and who waits for the server's word on it.
pub struct Steer {
    pub input: Vec<InputItem>,
    /// `Ok`: the server took it; `Err`: it refused (its error verbatim). Dropped unanswered:
    /// the turn ended (or is ending) first.
    pub answer: oneshot::Sender<Result<(), RpcError>>,
}

/// How a steer ended for the caller: taken by the server, or `TURN_NOT_STEERABLE` with the
/// server's error verbatim, or `TURN_ENDED` (nothing was sent).
pub fn steer_outcome(answer: Result<Result<(), RpcError>, oneshot::error::RecvError>) -> Result<(), Failure> {
    match answer {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(Failure::new(FailureSource::Jsonrpc, Code::TurnNotSteerable, error.message.clone())
            .with_detail(json!({"code": error.code, "message": error.message, "data": error.data}))),
        Err(_) => Err(Failure::new(
            FailureSource::Turn,
            Code::TurnEnded,
            "the turn has ended (or is ending): the input was not sent",
        )),
    }
}

/// The events a prepared turn yields before its turn starts (`type`s of `HarnessEvent`): what a
/// conversation holds back until it is clear the turn runs on that child.
pub const PRELUDE: &[&str] =
    &["started", "threadStarted", "diagnostic", "native", "unknownNotification", "passthrough", "rateLimits"];

/// How a prepared turn's preparation ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Readiness {
    /// Everything up to `turn/start` is done: the thread is open (and its isolation confirmed).
    Ready { thread_id: String },
    /// It ended first: the failure its terminal carries.
    Failed(Failure),
}

impl Readiness {
    /// As the envelope JavaScript reads: `{ok: {threadId}}` or `{failure}`.
    pub fn to_json(&self) -> String {
        match self {
            Readiness::Ready { thread_id } => crate::envelope::to_json(&Ok(json!({ "threadId": thread_id }))),
            Readiness::Failed(failure) => crate::envelope::to_json::<()>(&Err(failure.clone())),
        }
    }
}

pub struct Controls {
    steering: Mutex<Steering>,
    start: Mutex<Start>,
    readiness: watch::Sender<Option<Readiness>>,
    /// Where a server request the app answers goes (the binding sets it before the turn runs).
    app: Mutex<Option<AppHandler>>,
    answers: Mutex<Answers>,
    /// Why a prepared turn ended before `start()`: it waited longer than `idleTimeoutMs`.
    idled: OnceLock<String>,
}

/// Hands the JSON text of `{key, method, id, params, agent}` to the app; for an app tool's call
/// also `tool: true` and its `timeoutMs`, and `{cancel: key, why}` to abort a call's `execute`.
pub type AppHandler = Box<dyn Fn(String) + Send + Sync>;

/// What the app said to a server request.
#[derive(Debug)]
pub enum AppAnswer {
    /// The reply to send (the method's response, checked against its schema by the caller).
    Reply(serde_json::Value),
    /// No answer (`undefined`, or the handler threw): the fixed policy's reply goes.
    Pass,
    /// An app tool's answer (`{contentItems, success}`, made in JavaScript) and how it came
    /// (`app`, `invalidArguments`, `failed`).
    Tool(serde_json::Value, crate::events::ReplyKind),
    /// An answer that does not fit the method's response (why): never sent; the method's
    /// refusal goes, whatever the access mode, and the `serverRequest` event says why.
    Unfit(String),
}

/// The app's answers on their way to the runner, by request key.
struct Answers {
    sender: mpsc::UnboundedSender<(u64, AppAnswer)>,
    receiver: Option<mpsc::UnboundedReceiver<(u64, AppAnswer)>>,
}

/// The steers on their way to the runner: open until the turn ends.
struct Steering {
    sender: Option<mpsc::UnboundedSender<Steer>>,
    receiver: Option<mpsc::UnboundedReceiver<Steer>>,
}

/// A prepared turn's input, on its way to the runner (once).
struct Start {
    sender: Option<oneshot::Sender<TurnInput>>,
    receiver: Option<oneshot::Receiver<TurnInput>>,
}

impl Default for Controls {
    fn default() -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        let (start, started) = oneshot::channel();
        let (answer, answers) = mpsc::unbounded_channel();
        Controls {
            steering: Mutex::new(Steering { sender: Some(sender), receiver: Some(receiver) }),
            start: Mutex::new(Start { sender: Some(start), receiver: Some(started) }),
            readiness: watch::channel(None).0,
            app: Mutex::new(None),
            answers: Mutex::new(Answers { sender: answer, receiver: Some(answers) }),
            idled: OnceLock::new(),
        }
    }
}

impl Controls {
    pub fn new() -> Controls {
        Controls::default()
    }

    fn steering(&self) -> std::sync::MutexGuard<'_, Steering> {
        self.steering.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn start_slot(&self) -> std::sync::MutexGuard<'_, Start> {
        self.start.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Gives a prepared turn its input; `false` when it was given one already.
    pub fn start(&self, input: TurnInput) -> bool {
        let sender = self.start_slot().sender.take();
        // A runner that is gone drops it: the turn's terminal says why.
        sender.map(|sender| sender.send(input)).is_some()
    }

    /// Whether `start` gave the input already.
    pub fn started(&self) -> bool {
        self.start_slot().sender.is_none()
    }

    /// The prepared turn's input, for the runner; `None` once taken.
    pub fn take_start(&self) -> Option<oneshot::Receiver<TurnInput>> {
        self.start_slot().receiver.take()
    }

    /// A prepared turn's idle end: once `timeout` has passed without `start()`, the turn ends as a
    /// disposed one does (`cancel`'s abort) and [`Controls::idled`] says why. Never resolves
    /// otherwise. Holds nothing of the host's: a prepared turn waiting does not keep it alive.
    pub async fn end_idle(&self, timeout: Duration, cancel: &crate::cancel::Cancel) {
        tokio::time::sleep(timeout).await;
        if self.started() || cancel.abort_requested() {
            return std::future::pending().await;
        }
        let ms = timeout.as_millis();
        let _ = self.idled.set(format!("the prepared turn was not started within idleTimeoutMs ({ms} ms)"));
        tracing::info!(idle_timeout_ms = ms as u64, "prepared turn not started in time: ending it");
        cancel.request_abort();
    }

    /// Why the prepared turn ended before it was started, when it waited too long.
    pub fn idled(&self) -> Option<&str> {
        self.idled.get().map(String::as_str)
    }

    /// Tells how the preparation ended; only the first word counts.
    pub fn set_readiness(&self, readiness: Readiness) {
        self.readiness.send_if_modified(|now| {
            let first = now.is_none();
            if first {
                *now = Some(readiness);
            }
            first
        });
    }

    /// Resolves once the preparation ended, ready or not.
    pub async fn readiness(&self) -> Readiness {
        let mut rx = self.readiness.subscribe();
        let said = rx.wait_for(Option::is_some).await.expect("the readiness sender lives in the controls");
        said.clone().expect("waited for a value")
    }

    /// Hands `input` to the runner. The receiver learns whether the server took it; it is
    /// closed unanswered when the turn ended (or is ending) first, and at once after the end.
    pub fn steer(&self, input: Vec<InputItem>) -> oneshot::Receiver<Result<(), RpcError>> {
        let (answer, answered) = oneshot::channel();
        if let Some(sender) = &self.steering().sender {
            // A closed channel drops the steer, and with it `answer`.
            let _ = sender.send(Steer { input, answer });
        }
        answered
    }

    /// The steers for the runner; `None` once taken.
    pub fn take_steers(&self) -> Option<mpsc::UnboundedReceiver<Steer>> {
        self.steering().receiver.take()
    }

    /// Where the turn's server requests go for the app to answer.
    pub fn set_app_handler(&self, handler: AppHandler) {
        *self.app.lock().unwrap_or_else(|e| e.into_inner()) = Some(handler);
    }

    /// Hands a server request to the app; `false` when nobody takes them.
    pub fn ask_app(&self, request: String) -> bool {
        match self.app.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(handler) => {
                handler(request);
                true
            }
            None => false,
        }
    }

    /// The app's answer to request `key`; one that comes too late is dropped by the runner.
    pub fn answer(&self, key: u64, answer: AppAnswer) {
        let _ = self.answers.lock().unwrap_or_else(|e| e.into_inner()).sender.send((key, answer));
    }

    /// The app's answers, for the runner; `None` once taken.
    pub fn take_answers(&self) -> Option<mpsc::UnboundedReceiver<(u64, AppAnswer)>> {
        self.answers.lock().unwrap_or_else(|e| e.into_inner()).receiver.take()
    }

    /// The turn is over: every steer waiting, and every later one, is answered "ended".
    pub fn end_steering(&self) {
        let mut steering = self.steering();
        steering.sender = None;
        steering.receiver = None;
        drop(steering);
        // Nothing more goes to the app (its handler may hold the app's objects).
        self.app.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cancel::Cancel;

    #[tokio::test]
    async fn a_prepared_turn_not_started_in_time_ends_and_says_why() {
        let (controls, cancel) = (Controls::new(), Cancel::new());
        controls.end_idle(Duration::from_millis(20), &cancel).await;
        assert!(cancel.abort_requested());
        assert_eq!(controls.idled(), Some("the prepared turn was not started within idleTimeoutMs (20 ms)"));

        // Started in time: the idle end never comes.
        let (controls, cancel) = (Controls::new(), Cancel::new());
        let input = crate::options::parse_start(r#"{"prompt":"now"}"#, None).unwrap();
        assert!(controls.start(input));
        let waited =
            tokio::time::timeout(Duration::from_millis(200), controls.end_idle(Duration::from_millis(20), &cancel));
        assert!(waited.await.is_err());
        assert!(!cancel.abort_requested() && controls.idled().is_none());
    }
}
