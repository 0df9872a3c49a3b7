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
use rennet_codex::cancel::Cancel;
use rennet_codex::turn::Handle;
use std::sync::{Arc, Weak};

/// A running turn, as the JavaScript `Turn` wrapper sees it.
#[napi]
pub struct NativeTurn {
    handle: Handle,
    /// Where a steer's `localImage` paths are read (inside a WSL distribution, at its path there).
    locus: Option<rennet_codex::options::locus::Locus>,
    /// A prepared turn: it waits for `start`.
    prepared: bool,
}

/// `(requestJson: string) => void`: a server request for the app's handler (the JSON text of
/// `{key, method, id, params, agent}`; an app tool's call also has `tool: true` and its
/// `timeoutMs`, and `{cancel: key, why}` aborts one); its answer comes back through
/// `NativeTurn.answer`.
/// Weak (unreferenced): it lives as long as the turn, and a prepared turn waiting for its
/// `start` must not keep the process alive; a running turn does so through its pending outcome.
type AppRequests = ThreadsafeFunction<String, (), String, Status, false, true>;

/// Validates the options (JSON text of the options object without `signal`) and starts the
/// turn in the background; `aborted`: the signal was aborted already, so nothing is started;
/// `onServerRequest`: where server requests go when the options say the app answers them.
/// Invalid options throw `InvalidArg` with a message naming the option.
#[napi(
    catch_unwind,
    ts_args_type = "optionsJson: string, aborted?: boolean | undefined | null, onServerRequest?: ((requestJson: string) => void) | undefined | null"
)]
pub fn start_turn(
    env: Env,
    options_json: String,
    aborted: Option<bool>,
    on_server_request: Option<AppRequests>,
) -> Result<NativeTurn> {
    run_turn(&env, rennet_codex::options::parse(&options_json), aborted, false, on_server_request)
}

/// `start_turn` for a prepared turn: everything up to `turn/start` now, then it waits for
/// `NativeTurn.start`.
#[napi(
    catch_unwind,
    ts_args_type = "optionsJson: string, aborted?: boolean | undefined | null, onServerRequest?: ((requestJson: string) => void) | undefined | null"
)]
pub fn prepare_turn(
    env: Env,
    options_json: String,
    aborted: Option<bool>,
    on_server_request: Option<AppRequests>,
) -> Result<NativeTurn> {
    run_turn(&env, rennet_codex::options::parse_prepared(&options_json), aborted, true, on_server_request)
}

/// `start_turn` for a review (`review/start`): the options carry its `target`.
#[napi(
    catch_unwind,
    ts_args_type = "optionsJson: string, aborted?: boolean | undefined | null, onServerRequest?: ((requestJson: string) => void) | undefined | null"
)]
pub fn start_review(
    env: Env,
    options_json: String,
    aborted: Option<bool>,
    on_server_request: Option<AppRequests>,
) -> Result<NativeTurn> {
    run_turn(&env, rennet_codex::options::parse_review(&options_json), aborted, false, on_server_request)
}

/// Checks the options of a conversation's entry point (`openConversation`, `send`, `fork`: JSON
/// text, JavaScript's own values given as `true`); nothing is started. Invalid options throw
/// `InvalidArg` naming the option.
#[napi(catch_unwind)]
pub fn check_options(entry: String, options_json: String) -> Result<()> {
    rennet_codex::options::conversation::check(&entry, &options_json).map_err(|e| Error::new(Status::InvalidArg, e.0))
}

/// Starts the turn of `parsed` options (an invalid one throws `InvalidArg` naming it).
fn run_turn(
    env: &Env,
    parsed: std::result::Result<rennet_codex::options::TurnOptions, rennet_codex::options::OptionsError>,
    aborted: Option<bool>,
    prepared: bool,
    on_server_request: Option<AppRequests>,
) -> Result<NativeTurn> {
    let options = parsed.map_err(|e| Error::new(Status::InvalidArg, e.0))?;
    locate_guard();
    let locus = options.target.locus.clone();
    // App tools are answered by JavaScript too, with or without `onServerRequest`.
    let app_answers = options.app_answers || options.tools.is_some();
    let (handle, work) = rennet_codex::turn::start(options, aborted == Some(true));
    if let (true, Some(requests)) = (app_answers, on_server_request) {
        handle.controls.set_app_handler(Box::new(move |request| {
            requests.call(request, ThreadsafeFunctionCallMode::NonBlocking);
        }));
    }
    end_with_environment(env, &handle.cancel)?;
    napi::bindgen_prelude::spawn(work);
    Ok(NativeTurn { handle, locus, prepared })
}

thread_local! {
    /// The turns started from this thread's JavaScript environment (one per thread: the main
    /// thread's or a worker's), and whether its cleanup hook is in place.
    static TURNS: std::cell::RefCell<(Vec<Weak<Cancel>>, bool)> = const { std::cell::RefCell::new((Vec::new(), false)) };
}

/// When the environment is torn down (a worker terminated, the process exiting), nobody can see
/// its turns end any more: they are killed at once rather than interrupted or left to finish.
pub(crate) fn end_with_environment(env: &Env, cancel: &Arc<Cancel>) -> Result<()> {
    TURNS.with(|turns| {
        let mut turns = turns.borrow_mut();
        turns.0.retain(|t| t.strong_count() > 0);
        turns.0.push(Arc::downgrade(cancel));
        if !turns.1 {
            env.add_env_cleanup_hook((), |()| {
                let turns = TURNS.with(|turns| std::mem::take(&mut turns.borrow_mut().0));
                for cancel in turns.iter().filter_map(Weak::upgrade) {
                    cancel.request_kill();
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

#[napi]
impl NativeTurn {
    /// The queued events as the text of one batch, or `null` when none are queued (then
    /// `waitBatch`). A ready batch crosses without a promise.
    #[napi]
    pub fn take_batch(&self) -> Option<String> {
        self.handle.stream.try_take()
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
        self.handle.stream.pull(Box::new(move |batch| {
            on_batch.call(batch, ThreadsafeFunctionCallMode::NonBlocking);
        }))
    }

    /// The terminal event as JSON text. While it is pending it keeps the process alive (napi-rs
    /// settles an async export through a referenced threadsafe function) and keeps this object
    /// from being collected: a running turn is asked for it at once, a prepared one only once
    /// started or disposed.
    #[napi]
    pub async fn outcome(&self) -> String {
        self.handle.stream.outcome().await
    }

    /// Whether the turn ended: its terminal is queued, its child gone. A prepared turn that has
    /// not ended may still be started.
    #[napi]
    pub fn finished(&self) -> bool {
        self.handle.stream.is_finished()
    }

    /// The caller awaits only the outcome: the turn must not wait for a reader.
    #[napi]
    pub fn unbound(&self) {
        self.handle.stream.unbound();
    }

    /// Idempotent: interrupts the turn (or kills the child if the turn has no id yet).
    #[napi]
    pub fn abort(&self) {
        self.handle.cancel.request_abort();
    }

    /// Hands `inputJson` (JSON text of an item array) to the running turn. Invalid items throw
    /// `InvalidArg` naming the item; the promise resolves with the JSON text of the envelope:
    /// `{ok: null}` once the server took it, else `{failure}` (`TURN_NOT_STEERABLE`, `TURN_ENDED`).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn steer<'env>(&self, env: &'env Env, input_json: String) -> Result<PromiseRaw<'env, String>> {
        let input = rennet_codex::options::input::steer_input(&input_json, self.locus.as_ref())
            .map_err(|e| Error::new(Status::InvalidArg, e.0))?;
        let answered = self.handle.controls.steer(input);
        env.spawn_future(async move {
            Ok(rennet_codex::envelope::to_json(&rennet_codex::turn::steer_outcome(answered.await)))
        })
    }

    /// Gives a prepared turn its input (JSON text of `{prompt?, input?, outputSchema?, effort?}`);
    /// `false` when it was started already. Invalid input throws `InvalidArg` naming it.
    #[napi]
    pub fn start(&self, input_json: String) -> Result<bool> {
        let input = rennet_codex::options::parse_start(&input_json, self.locus.as_ref())
            .map_err(|e| Error::new(Status::InvalidArg, e.0))?;
        Ok(self.handle.controls.start(input))
    }

    /// Why a prepared turn ended before `start()` when it waited longer than its `idleTimeoutMs`
    /// (the message of the `TimeoutError` its Turn's `abortReason` is); `null` otherwise.
    #[napi]
    pub fn idled(&self) -> Option<String> {
        self.handle.controls.idled().map(str::to_string)
    }

    /// How the preparation ended, as the JSON text of its envelope: `{ok: {threadId}}` or `{failure}`.
    #[napi]
    pub async fn ready(&self) -> String {
        self.handle.controls.readiness().await.to_json()
    }

    /// The app's answer to server request `key`: `replyJson` the reply (checked against the
    /// method's response type in JavaScript), else none (`unfit`: why the app's did not fit);
    /// the fixed policy's reply then goes. An app tool's answer (`{contentItems, success}`,
    /// made in JavaScript) comes with its `kind`: `app`, `invalidArguments` or `failed`. An
    /// answer after the request was answered is dropped.
    #[napi]
    pub fn answer(&self, key: f64, reply_json: Option<String>, unfit: Option<String>, kind: Option<String>) {
        use rennet_codex::events::ReplyKind;
        let tool_kind = kind.as_deref().map(|kind| match kind {
            "invalidArguments" => ReplyKind::InvalidArguments,
            "failed" => ReplyKind::Failed,
            _ => ReplyKind::App,
        });
        let answer = match (reply_json.map(|json| serde_json::from_str(&json)), unfit) {
            (Some(Ok(reply)), _) if tool_kind.is_some() => {
                rennet_codex::turn::AppAnswer::Tool(reply, tool_kind.unwrap_or(ReplyKind::App))
            }
            (Some(Ok(reply)), _) => rennet_codex::turn::AppAnswer::Reply(reply),
            (Some(Err(e)), _) => rennet_codex::turn::AppAnswer::Unfit(format!("not JSON: {e}")),
            (None, Some(why)) => rennet_codex::turn::AppAnswer::Unfit(why),
            (None, None) => rennet_codex::turn::AppAnswer::Pass,
        };
        // Keys are counters from 1: exact as a JavaScript number.
        self.handle.controls.answer(key as u64, answer);
    }

    /// The consumer left: queued and future events are dropped; the outcome still resolves.
    #[napi]
    pub fn detach(&self) {
        self.handle.stream.detach();
    }
}

impl Drop for NativeTurn {
    fn drop(&mut self) {
        // Garbage-collected without being drained: nobody can read the events any more, so
        // they must not hold the turn back.
        self.handle.stream.detach();
        // Nor can anybody start a prepared turn any more: its waiting child ends now.
        if self.prepared && !self.handle.controls.started() {
            self.handle.cancel.request_abort();
        }
    }
}
