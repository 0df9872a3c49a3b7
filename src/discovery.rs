//! `discoverCodex`: finds the user's Codex CLI and reports every candidate considered.

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Finds the user's Codex CLI. `optionsJson` is the JSON text of
/// `{locus?: {wsl: {distro}}, env?: Record<string, string>, refresh?: boolean}`; the answer is
/// the JSON text of the `Discovery` report, with `hostGuard` as things stand now. Results
/// are cached per locus and environment for the life of the process (`hostGuard` never is);
/// `refresh: true` probes again. Invalid options reject with
/// `InvalidArg` and a message naming the option.
#[napi(catch_unwind)]
pub async fn discover_codex(options_json: Option<String>) -> Result<String> {
    let options = rennet_codex::options::discover::parse(options_json.as_deref())
        .map_err(|m| Error::new(Status::InvalidArg, m))?;
    crate::locate_guard();
    let discovery = rennet_codex::discovery::discover(&options).await;
    serde_json::to_string(&rennet_codex::discovery::Report::new(&discovery))
        .map_err(|e| Error::from_reason(format!("the discovery report could not be serialised: {e}")))
}
