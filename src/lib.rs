//! The N-API surface: option parsing errors become `InvalidArg` (a `TypeError` in index.js),
//! a turn runs on napi's tokio runtime, and its events cross into JavaScript in batches
//! (the text of [`rennet_codex::batch`]).

mod call;
mod discovery;
mod logging;
mod mcp;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use rennet_codex::control::{Control, Readiness};
use rennet_codex::events::Terminal;
use rennet_codex::failure::{Code, Failure, FailureSource};
use rennet_codex::stream::EventStream;
use std::sync::{Arc, Weak};

/// A running turn, as the JavaScript `Turn` wrapper sees it.
#[napi]
pub struct NativeTurn {
    stream: Arc<EventStream>,
    control: Arc<Control>,
    /// Where a steer's `localImage` paths are read (inside a WSL distribution, at its path there).
    locus: Option<rennet_codex::locus::Locus>,
    /// A prepared turn: it waits for `start`.
    prepared: bool,
}

/// Validates the options (JSON text of the options object without `signal`) and starts the
/// turn in the background; `aborted`: the signal was aborted already, so nothing is started.
/// Invalid options throw `InvalidArg` with a message naming the option.
#[napi(catch_unwind)]
pub fn start_turn(env: Env, options_json: String, aborted: Option<bool>) -> Result<NativeTurn> {
    let options = rennet_codex::options::parse(&options_json).map_err(|e| Error::new(Status::InvalidArg, e.0))?;
    run_turn(&env, options, aborted, false)
}

/// `start_turn` for a prepared turn: everything up to `turn/start` now, then it waits for
/// `NativeTurn.start`.
#[napi(catch_unwind)]
pub fn prepare_turn(env: Env, options_json: String, aborted: Option<bool>) -> Result<NativeTurn> {
    let options =
        rennet_codex::options::parse_prepared(&options_json).map_err(|e| Error::new(Status::InvalidArg, e.0))?;
    run_turn(&env, options, aborted, true)
}

fn run_turn(
    env: &Env,
    options: rennet_codex::options::TurnOptions,
    aborted: Option<bool>,
    prepared: bool,
) -> Result<NativeTurn> {
    locate_guard();
    let stream = Arc::new(EventStream::new());
    let control = Arc::new(Control::new());
    let locus = options.target.locus.clone();
    if aborted == Some(true) {
        control.request_abort();
    }
    end_with_environment(env, &control)?;
    let (supervised, controlled, controlled_after) = (stream.clone(), control.clone(), control.clone());
    napi::bindgen_prelude::spawn(async move {
        let task = tokio::spawn(rennet_codex::turn::run(options, supervised.clone(), controlled));
        if let Err(e) = task.await {
            // A defect inside the runner: the child was killed when its handle dropped during
            // unwinding; the caller still gets its one terminal event.
            let message = if e.is_panic() { panic_text(e.into_panic()) } else { e.to_string() };
            let failure = Failure::new(FailureSource::Internal, Code::InternalError, message);
            controlled_after.end_steering();
            controlled_after.set_readiness(Readiness::Failed(failure.clone()));
            supervised.finish(Terminal::failed(failure));
        }
    });
    Ok(NativeTurn { stream, control, locus, prepared })
}

thread_local! {
    /// The turns started from this thread's JavaScript environment (one per thread: the main
    /// thread's or a worker's), and whether its cleanup hook is in place.
    static TURNS: std::cell::RefCell<(Vec<Weak<Control>>, bool)> = const { std::cell::RefCell::new((Vec::new(), false)) };
}

/// When the environment is torn down (a worker terminated, the process exiting), nobody can see
/// its turns end any more: they are killed at once rather than interrupted or left to finish.
pub(crate) fn end_with_environment(env: &Env, control: &Arc<Control>) -> Result<()> {
    TURNS.with(|turns| {
        let mut turns = turns.borrow_mut();
        turns.0.retain(|t| t.strong_count() > 0);
        turns.0.push(Arc::downgrade(control));
        if !turns.1 {
            env.add_env_cleanup_hook((), |()| {
                let turns = TURNS.with(|turns| std::mem::take(&mut turns.borrow_mut().0));
                for control in turns.iter().filter_map(Weak::upgrade) {
                    control.request_kill();
                }
            })?;
            turns.1 = true;
        }
        Ok(())
    })
}

/// The host-death guard is the executable `rennet-codex-guard` beside this addon (in its
/// platform package, or next to a local build).
pub(crate) fn locate_guard() {
    static LOCATED: std::sync::Once = std::sync::Once::new();
    LOCATED.call_once(|| {
        if let Some(dir) = addon_path().as_deref().and_then(std::path::Path::parent) {
            rennet_codex::process::guard::set_executable(dir.join(rennet_codex::process::guard::EXECUTABLE_NAME));
        }
    });
}

/// The file this addon was loaded from.
#[cfg(unix)]
fn addon_path() -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: any address inside this library; dladdr fills `info` and returns non-zero on success.
    let found = unsafe { libc::dladdr(locate_guard as *const std::ffi::c_void, info.as_mut_ptr()) };
    if found == 0 {
        return None;
    }
    // SAFETY: filled by dladdr, as it said.
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated path owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    Some(std::path::PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes())))
}

/// Windows needs no guard (Job Objects end with the host).
#[cfg(not(unix))]
fn addon_path() -> Option<std::path::PathBuf> {
    None
}

pub(crate) fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
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
    pub fn wait_batch(
        &self,
        on_batch: ThreadsafeFunction<Option<String>, (), Option<String>, Status, false>,
    ) -> Option<String> {
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
        self.control.request_abort();
    }

    /// Hands `inputJson` (JSON text of an item array) to the running turn. Invalid items throw
    /// `InvalidArg` naming the item; the promise resolves with `null` once the server took it,
    /// else with the JSON text of the refusal (`TURN_NOT_STEERABLE`, `TURN_ENDED`).
    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn steer<'env>(&self, env: &'env Env, input_json: String) -> Result<PromiseRaw<'env, Option<String>>> {
        let input = rennet_codex::user_input::steer_input(&input_json, self.locus.as_ref())
            .map_err(|e| Error::new(Status::InvalidArg, e.0))?;
        let answered = self.control.steer(input);
        env.spawn_future(async move { Ok(rennet_codex::control::steer_refusal(answered.await)) })
    }

    /// Gives a prepared turn its input (JSON text of `{prompt?, input?, outputSchema?, effort?}`);
    /// `false` when it was started already. Invalid input throws `InvalidArg` naming it.
    #[napi]
    pub fn start(&self, input_json: String) -> Result<bool> {
        let input = rennet_codex::options::parse_start(&input_json, self.locus.as_ref())
            .map_err(|e| Error::new(Status::InvalidArg, e.0))?;
        Ok(self.control.start(input))
    }

    /// How the preparation ended, as JSON text: `{"threadId"}` or `{"failure"}`.
    #[napi]
    pub async fn ready(&self) -> String {
        let readiness = match self.control.readiness().await {
            Readiness::Ready { thread_id } => serde_json::json!({ "threadId": thread_id }),
            Readiness::Failed(failure) => serde_json::json!({ "failure": failure }),
        };
        readiness.to_string()
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
        // Nor can anybody start a prepared turn any more: its waiting child ends now.
        if self.prepared && !self.control.started() {
            self.control.request_abort();
        }
    }
}
