//! `setLogger`'s options, declared here so that their type is declared once (the binding reads
//! the filter itself: `tracing`'s filter syntax is the binding's logging layer's).

use serde::Deserialize;
use ts_rs::TS;

/// What `setLogger` takes besides the logger.
#[derive(Deserialize, TS, Default, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoggerOptions {
    /// `RENNET_LOG` syntax, e.g. `rennet_codex=debug`; default: `RENNET_LOG`, else
    /// `rennet_codex=info`.
    #[serde(default)]
    #[ts(optional)]
    pub filter: Option<String>,
}
