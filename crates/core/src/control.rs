//! What the caller asks of a running turn, beside reading its events: start it (a prepared
//! turn waits for its input), abort it (politely: `turn/interrupt`, then kill after the grace),
//! kill it (no grace: nobody is left to see the end), or steer it (more input for the running
//! turn); and what the runner tells before the events do: that a prepared turn is ready. The
//! binding raises these; the runner waits on them.

use crate::failure::Failure;
use crate::options::TurnInput;
use crate::protocol::RpcError;
use crate::user_input::InputItem;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tokio::sync::{mpsc, oneshot, Notify};

/// More input for the running turn, and who waits for the server's word on it.
pub struct Steer {
    pub input: Vec<InputItem>,
    /// `Ok`: the server took it; `Err`: it refused (its error verbatim). Dropped unanswered:
    /// the turn ended (or is ending) first.
    pub answer: oneshot::Sender<Result<(), RpcError>>,
}

/// How a steer ended for the caller: `None` when the server took it, else the JSON text of
/// `{code, message, detail}` (`TURN_NOT_STEERABLE` with the server's error verbatim, or
/// `TURN_ENDED`).
pub fn steer_refusal(answer: Result<Result<(), RpcError>, oneshot::error::RecvError>) -> Option<String> {
    let refusal = match answer {
        Ok(Ok(())) => return None,
        Ok(Err(error)) => serde_json::json!({
            "code": "TURN_NOT_STEERABLE",
            "message": error.message,
            "detail": {"code": error.code, "message": error.message, "data": error.data},
        }),
        Err(_) => serde_json::json!({
            "code": "TURN_ENDED",
            "message": "the turn has ended (or is ending): the input was not sent",
        }),
    };
    Some(refusal.to_string())
}

/// The steers on their way to the runner: open until the turn ends.
struct Steering {
    sender: Option<mpsc::UnboundedSender<Steer>>,
    receiver: Option<mpsc::UnboundedReceiver<Steer>>,
}

/// A running turn's two ends at its caller: where its events go, and what the caller asks.
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    pub events: &'a crate::stream::EventStream,
    pub control: &'a Control,
}

pub struct Control {
    abort: Signal,
    kill: Signal,
    steering: Mutex<Steering>,
    start: Mutex<Start>,
    readiness: tokio::sync::watch::Sender<Option<Readiness>>,
}

/// A prepared turn's input, on its way to the runner (once).
struct Start {
    sender: Option<oneshot::Sender<TurnInput>>,
    receiver: Option<oneshot::Receiver<TurnInput>>,
}

/// How a prepared turn's preparation ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Readiness {
    /// Everything up to `turn/start` is done: the thread is open (and its isolation confirmed).
    Ready { thread_id: String },
    /// It ended first: the failure its terminal carries.
    Failed(Failure),
}

impl Default for Control {
    fn default() -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        let (start, started) = oneshot::channel();
        Control {
            abort: Signal::default(),
            kill: Signal::default(),
            steering: Mutex::new(Steering { sender: Some(sender), receiver: Some(receiver) }),
            start: Mutex::new(Start { sender: Some(start), receiver: Some(started) }),
            readiness: tokio::sync::watch::channel(None).0,
        }
    }
}

impl Control {
    pub fn new() -> Control {
        Control::default()
    }

    fn steering(&self) -> std::sync::MutexGuard<'_, Steering> {
        self.steering.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Gives a prepared turn its input; `false` when it was given one already.
    pub fn start(&self, input: TurnInput) -> bool {
        let sender = self.start.lock().unwrap_or_else(|e| e.into_inner()).sender.take();
        // A runner that is gone drops it: the turn's terminal says why.
        sender.map(|sender| sender.send(input)).is_some()
    }

    /// Whether `start` gave the input already.
    pub fn started(&self) -> bool {
        self.start.lock().unwrap_or_else(|e| e.into_inner()).sender.is_none()
    }

    /// The prepared turn's input, for the runner; `None` once taken.
    pub fn take_start(&self) -> Option<oneshot::Receiver<TurnInput>> {
        self.start.lock().unwrap_or_else(|e| e.into_inner()).receiver.take()
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
        let said = rx.wait_for(Option::is_some).await.expect("the readiness sender lives in the control");
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

    /// The turn is over: every steer waiting, and every later one, is answered "ended".
    pub fn end_steering(&self) {
        let mut steering = self.steering();
        steering.sender = None;
        steering.receiver = None;
    }

    pub fn request_abort(&self) {
        self.abort.raise();
    }

    pub fn abort_requested(&self) -> bool {
        self.abort.is_raised()
    }

    /// Resolves when an abort has been requested.
    pub async fn aborted(&self) {
        self.abort.wait().await
    }

    /// An abort that waits for nothing, not even an interrupt's grace: whoever could see the
    /// turn's end is gone (its JavaScript environment is being torn down).
    pub fn request_kill(&self) {
        self.kill.raise();
        self.abort.raise();
    }

    pub fn kill_requested(&self) -> bool {
        self.kill.is_raised()
    }

    /// Resolves when a kill has been requested.
    pub async fn killed(&self) {
        self.kill.wait().await
    }
}

/// A flag that is raised once and never lowered, and that tasks can wait for.
#[derive(Default)]
struct Signal {
    raised: AtomicBool,
    notify: Notify,
}

impl Signal {
    fn raise(&self) {
        self.raised.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    fn is_raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }

    async fn wait(&self) {
        // Registered before the flag is read, so a raise in between is not missed.
        let notified = self.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if !self.is_raised() {
            notified.await;
        }
    }
}
