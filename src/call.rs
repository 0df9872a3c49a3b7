//! The calls around turns (`readAccount`, `listModels`, `listThreads`, `readThread`,
//! `forkThread`): each runs one short-lived child in the background ([`rennet_codex::call`]).
//! Bad options throw `InvalidArg` at once (a `TypeError` in index.js); how the call went
//! crosses as JSON text, from which index.js builds the `CallError` (an async export cannot
//! carry a code of its own: napi-notes §5).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rennet_codex::call::Outcome;
use rennet_codex::control::Control;
use rennet_codex::failure::{Code, Failure, FailureSource};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// A running call, as index.js sees it.
#[napi]
pub struct NativeCall {
    control: Arc<Control>,
    outcome: Mutex<Option<oneshot::Receiver<String>>>,
}

/// Validates the options (JSON text of the options object without `signal`) of call `name`
/// and starts it; `threadId` is `readThread`'s and `forkThread`'s argument. `aborted`: the
/// signal was aborted already, so nothing is started.
#[napi(catch_unwind)]
pub fn start_call(
    env: Env,
    name: String,
    thread_id: Option<String>,
    options_json: Option<String>,
    aborted: Option<bool>,
) -> Result<NativeCall> {
    let options = rennet_codex::call::parse(&name, thread_id, options_json.as_deref())
        .map_err(|e| Error::new(Status::InvalidArg, e.0))?;
    crate::locate_guard();
    let control = Arc::new(Control::new());
    if aborted == Some(true) {
        control.request_kill();
    }
    crate::end_with_environment(&env, &control)?;
    let (settle, outcome) = oneshot::channel();
    let runner = control.clone();
    napi::bindgen_prelude::spawn(async move {
        let outcome = match tokio::spawn(rennet_codex::call::run(options, runner)).await {
            Ok(outcome) => outcome,
            // A defect inside the call: its child was ended when its handle dropped while unwinding.
            Err(e) => {
                let message = if e.is_panic() { crate::panic_text(e.into_panic()) } else { e.to_string() };
                Outcome::Failed(Failure::new(FailureSource::Internal, Code::InternalError, message))
            }
        };
        let _ = settle.send(outcome.to_json());
    });
    Ok(NativeCall { control, outcome: Mutex::new(Some(outcome)) })
}

#[napi]
impl NativeCall {
    /// Idempotent: ends the child at once; the outcome then says `cancelled`.
    #[napi]
    pub fn abort(&self) {
        // A call has nothing to interrupt politely: its end is the child's.
        self.control.request_kill();
    }

    /// How the call went, once its child is gone: the JSON text of `{ok}`, `{failure}` or
    /// `{cancelled: true}`. Once per call.
    #[napi]
    pub async fn outcome(&self) -> String {
        let waiting = self.outcome.lock().unwrap_or_else(|e| e.into_inner()).take();
        let answered = match waiting {
            Some(waiting) => waiting.await.ok(),
            None => None,
        };
        answered.unwrap_or_else(|| {
            let failure =
                Failure::new(FailureSource::Internal, Code::InternalError, "the call's outcome was already taken");
            Outcome::Failed(failure).to_json()
        })
    }
}
