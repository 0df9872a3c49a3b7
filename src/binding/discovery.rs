//! `discoverCodex`: finds the user's Codex CLI and reports every candidate considered.

// The module is private and its export is registered by `#[napi]` only outside `cfg(test)`.
#![cfg_attr(test, allow(dead_code))]

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Finds the user's Codex CLI. `optionsJson` is the JSON text of
/// `{locus?: {wsl: {distro}}, env?: Record<string, string>, refresh?: boolean}`; the answer is
/// the JSON text of the `Discovery` report. Results are cached per locus and environment
/// for the life of the process; `refresh: true` probes again. Invalid options reject with
/// `InvalidArg` and a message naming the option.
#[napi(catch_unwind)]
pub async fn discover_codex(options_json: Option<String>) -> Result<String> {
    let options =
        crate::discovery::parse_options(options_json.as_deref()).map_err(|m| Error::new(Status::InvalidArg, m))?;
    let discovery = crate::discovery::discover(&options).await;
    serde_json::to_string(&*discovery).map_err(|e| Error::from_reason(format!("the discovery report could not be serialised: {e}")))
}
