//! What discovery answers: every candidate with its source, version and why it was rejected,
//! the selected one, and the versions this package supports.

use super::{MAX_TESTED_VERSION, MIN_SUPPORTED_VERSION};
use crate::process::Launch;
use serde::Serialize;

/// Where a candidate was found. The order is the rank.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    Env,
    LoginShellPath,
    ProcessPath,
    KnownDir,
    DesktopBundle,
}

#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct CodexCandidate {
    pub path: String,
    pub source: Source,
    /// The argv prefix used when it is not the path itself: `[node, script]` for a launcher
    /// script run by the Node beside it, `[wsl.exe, -d, distro, --exec, path]` in WSL.
    pub launcher: Option<Vec<String>>,
    pub version: Option<String>,
    pub usable: bool,
    pub reason: Option<String>,
    /// How it starts: program and argv prefix (its directory and environment are the caller's).
    #[serde(skip)]
    pub(super) launch: Launch,
}

impl CodexCandidate {
    pub fn launch(&self) -> Launch {
        self.launch.clone()
    }
}

#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Discovery {
    pub available: bool,
    /// The highest-ranked usable candidate.
    pub selected: Option<CodexCandidate>,
    /// Every candidate considered, in rank order.
    pub candidates: Vec<CodexCandidate>,
    /// Why Codex is unavailable (`null` when it is available).
    pub reason: Option<String>,
    pub supported_versions: SupportedVersions,
}

/// The codex-cli versions this package accepts: from `minimum`; `newestTested` is the newest
/// one its tests ran against (newer ones are accepted).
#[derive(Serialize, Clone, Copy, Debug)]
#[serde(rename_all = "camelCase")]
pub struct SupportedVersions {
    pub minimum: &'static str,
    pub newest_tested: &'static str,
}

impl SupportedVersions {
    pub const CURRENT: SupportedVersions =
        SupportedVersions { minimum: MIN_SUPPORTED_VERSION, newest_tested: MAX_TESTED_VERSION };
}

impl Discovery {
    pub(super) fn new(
        selected: Option<CodexCandidate>,
        candidates: Vec<CodexCandidate>,
        reason: Option<String>,
    ) -> Discovery {
        Discovery {
            available: selected.is_some(),
            selected,
            candidates,
            reason,
            supported_versions: SupportedVersions::CURRENT,
        }
    }

    pub(super) fn unavailable(candidates: Vec<CodexCandidate>, reason: String) -> Discovery {
        Discovery::new(None, candidates, Some(reason))
    }
}

/// What `discoverCodex()` answers: the discovery, and whether the package's children are
/// watched by the host-death guard (looked at on each call, never cached).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Report<'a> {
    #[serde(flatten)]
    pub discovery: &'a Discovery,
    pub host_guard: crate::process::guard::Status,
}

impl Report<'_> {
    pub fn new(discovery: &Discovery) -> Report<'_> {
        Report { discovery, host_guard: crate::process::guard::status() }
    }
}
