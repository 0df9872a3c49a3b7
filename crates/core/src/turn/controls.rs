//! What the caller gives a running turn beside cancelling it ([`crate::cancel::Cancel`]):
//! more input (steers), a prepared turn's input (its start); and what the turn tells before
//! its events do: that a prepared turn is ready. The binding raises these; the runner waits on
//! them.

use crate::failure::{Code, Failure, FailureSource};
use crate::options::input::InputItem;
use crate::options::TurnInput;
use crate::protocol::RpcError;
use serde_json::json;
use std::sync::Mutex;
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
}

/// Hands the JSON text of `{key, method, id, params, agent}` to the app.
pub type AppHandler = Box<dyn Fn(String) + Send + Sync>;

/// What the app said to a server request.
#[derive(Debug)]
pub enum AppAnswer {
    /// The reply to send (the method's response, checked against its schema by the caller).
    Reply(serde_json::Value),
    /// No answer (`undefined`, or the handler threw): the fixed policy's reply goes.
    Pass,
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
