//! Why no guard can watch the children, said once for a turn's failure, a call's rejection and
//! `discoverCodex()`'s report.

use super::SWITCH_VAR;
use crate::failure::{Code, Failure, FailureSource};
use serde_json::json;
use std::path::PathBuf;

/// Why no guard can watch the children: no child may start then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    /// Where the guard was looked for, when anywhere.
    pub path: Option<PathBuf>,
    /// What was found there (or why nowhere was looked at).
    pub reason: String,
}

impl Unavailable {
    pub(super) fn new(path: Option<PathBuf>, reason: impl Into<String>) -> Unavailable {
        Unavailable { path, reason: reason.into() }
    }

    /// The whole sentence: what is missing, what it costs, and the way out.
    pub fn message(&self) -> String {
        format!(
            "no host-death guard: {}; without it a child could outlive this process if it dies, so none was started \
             ({SWITCH_VAR}=off runs without host-death protection)",
            self.reason
        )
    }

    /// The terminal failure of a turn that could not start for it.
    pub fn failure(&self) -> Failure {
        Failure::new(FailureSource::Spawn, Code::HostGuardUnavailable, self.message()).with_detail(json!({
            "path": self.path.as_ref().map(|p| p.display().to_string()),
            "reason": self.reason,
            "switch": SWITCH_VAR,
        }))
    }
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}
