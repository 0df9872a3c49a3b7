//! The calls around turns (`readAccount`, `listModels`, `listThreads`, `readThread`,
//! `forkThread`): each runs one short-lived child in the background ([`rennet_codex::call`]).
//! Bad options throw `InvalidArg` at once (a `TypeError` in index.js); how the call went
//! crosses as JSON text, from which index.js builds the `CallError` (an async export cannot
//! carry a code of its own: napi-notes §5).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rennet_codex::call::Running;

/// A running call, as index.js sees it.
#[napi]
pub struct NativeCall {
    running: Running,
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
    let (running, work) = rennet_codex::call::start(options, aborted == Some(true));
    crate::end_with_environment(&env, running.cancel())?;
    napi::bindgen_prelude::spawn(work);
    Ok(NativeCall { running })
}

#[napi]
impl NativeCall {
    /// Idempotent: ends the child at once; the outcome then is a `CANCELLED` failure.
    #[napi]
    pub fn abort(&self) {
        self.running.abort();
    }

    /// How the call went, once its child is gone: the JSON text of its envelope, `{ok}` or
    /// `{failure}`. Once per call.
    #[napi]
    pub async fn outcome(&self) -> String {
        self.running.outcome().await
    }
}
