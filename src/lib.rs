//! The N-API surface: option parsing errors become `InvalidArg` (a `TypeError` in index.js),
//! a turn runs on napi's tokio runtime, and its events cross into JavaScript in batches
//! (the text of [`rennet_codex::batch`]).

mod discovery;
mod logging;
mod mcp;

use rennet_codex::events::{Failure, FailureSource, Terminal};
use rennet_codex::stream::EventStream;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use std::sync::Arc;

/// A running turn, as the JavaScript `Turn` wrapper sees it.
#[napi]
pub struct NativeTurn {
    stream: Arc<EventStream>,
}

/// Validates the options (JSON text of the options object without `signal`) and starts the
/// turn in the background. Invalid options throw `InvalidArg` with a message naming the option.
#[napi(catch_unwind)]
pub fn start_turn(options_json: String) -> Result<NativeTurn> {
    let options = rennet_codex::options::parse(&options_json).map_err(|e| Error::new(Status::InvalidArg, e.0))?;
    let stream = Arc::new(EventStream::new());
    let supervised = stream.clone();
    napi::bindgen_prelude::spawn(async move {
        let task = tokio::spawn(rennet_codex::turn::run(options, supervised.clone()));
        if let Err(e) = task.await {
            // A defect inside the runner: the child was killed when its handle dropped during
            // unwinding; the caller still gets its one terminal event.
            let message = if e.is_panic() { panic_text(e.into_panic()) } else { e.to_string() };
            supervised.finish(Terminal::failed(Failure::new(FailureSource::Internal, "INTERNAL_ERROR", message)));
        }
    });
    Ok(NativeTurn { stream })
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "the turn runner panicked".to_string())
}

#[napi]
impl NativeTurn {
    /// The queued events as the text of one batch, or `null` when none are queued (then
    /// `waitBatch`). A ready batch crosses without a promise.
    #[napi]
    pub fn take_batch(&self) -> Option<String> {
        self.stream.try_take()
    }

    /// Like `takeBatch`, but when nothing is queued `onBatch` is kept and called with the next
    /// batch as soon as it is queued, or with `null` once the terminal event has been taken.
    /// It is called from the runner's thread (a thread-safe function), so a quiet stream's
    /// event reaches JavaScript without a hop through a runtime task.
    #[napi(ts_args_type = "onBatch: (batch: string | null) => void")]
    pub fn wait_batch(&self, on_batch: ThreadsafeFunction<Option<String>, (), Option<String>, Status, false>) -> Option<String> {
        self.stream.pull(Box::new(move |batch| {
            on_batch.call(batch, ThreadsafeFunctionCallMode::NonBlocking);
        }))
    }

    /// The terminal event as JSON text.
    #[napi]
    pub async fn outcome(&self) -> String {
        self.stream.outcome().await
    }

    /// The caller awaits only the outcome: the turn must not wait for a reader.
    #[napi]
    pub fn unbound(&self) {
        self.stream.unbound();
    }

    /// Idempotent: interrupts the turn (or kills the child if the turn has no id yet).
    #[napi]
    pub fn abort(&self) {
        self.stream.request_abort();
    }

    /// The consumer left: queued and future events are dropped; the outcome still resolves.
    #[napi]
    pub fn detach(&self) {
        self.stream.detach();
    }
}

impl Drop for NativeTurn {
    fn drop(&mut self) {
        // Garbage-collected without being drained: nobody can read the events any more, so
        // they must not hold the turn back.
        self.stream.detach();
    }
}
