//! The calls around turns (`readAccount`, `listThreads`, `renameThread`, `request`, …): each
//! runs one short-lived child in the background ([`rennet_codex::call`]), and a ChatGPT login
//! with a handle of its own ([`rennet_codex::call::login`]). Bad options throw `InvalidArg` at
//! once (a `TypeError` in JavaScript); how the call went crosses as JSON text, from which
//! lib/errors.js builds the `CallError` (an async export cannot carry a code of its own:
//! napi-notes §5).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rennet_codex::call::login::Login;
use rennet_codex::call::Running;

/// A running call, as JavaScript sees it.
#[napi]
pub struct NativeCall {
    running: Running,
}

/// Validates the arguments and options of call `name` (a row of the core's call table) and starts
/// it. `argsJson`: JSON text of the call's arguments before its options, by name (`threadId`,
/// `name`, `goal`, `apiKey`, `method`, `params`); `optionsJson`: JSON text of the options object
/// without `signal`. `aborted`: the signal was aborted already, so nothing is started.
#[napi(catch_unwind)]
pub fn start_call(
    env: Env,
    name: String,
    args_json: Option<String>,
    options_json: Option<String>,
    aborted: Option<bool>,
) -> Result<NativeCall> {
    let options = rennet_codex::call::parse(&name, args_json.as_deref(), options_json.as_deref())
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

/// A running ChatGPT login, as JavaScript's `LoginHandle` sees it.
#[napi]
pub struct NativeLogin {
    login: Login,
}

/// Validates the options (JSON text without `signal`: `type`, `timeoutMs` and the call options)
/// and starts the login. `aborted`: the signal was aborted already, so nothing is started.
#[napi(catch_unwind)]
pub fn start_login(env: Env, options_json: Option<String>, aborted: Option<bool>) -> Result<NativeLogin> {
    let options = rennet_codex::call::parse("startLogin", None, options_json.as_deref())
        .map_err(|e| Error::new(Status::InvalidArg, e.0))?;
    crate::locate_guard();
    let (login, work) = rennet_codex::call::login::start(options, aborted == Some(true));
    crate::end_with_environment(&env, login.cancel_handle())?;
    napi::bindgen_prelude::spawn(work);
    Ok(NativeLogin { login })
}

#[napi]
impl NativeLogin {
    /// Idempotent: `account/login/cancel`, then the child ends; `completed` then is a
    /// `CANCELLED` failure. Nothing once the login completed.
    #[napi]
    pub fn cancel(&self) {
        self.login.cancel();
    }

    /// What to show the user, as the JSON text of an envelope: `{ok: {loginId, authUrl,
    /// verificationUrl, userCode}}`, or `{failure}` when the login ended before.
    #[napi]
    pub async fn started(&self) -> String {
        self.login.started().await
    }

    /// How the login ended, once its child is gone: `{ok: AccountInfo}` or `{failure}`.
    #[napi]
    pub async fn completed(&self) -> String {
        self.login.completed().await
    }
}
