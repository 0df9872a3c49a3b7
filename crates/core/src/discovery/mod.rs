//! Finding the user's Codex CLI ("discovery").
//!
//! Candidates, in rank order: `RENNET_CODEX_BIN`; `codex` on the PATH of the user's login
//! shell; on the process PATH; in the directories installers commonly use; on macOS, the
//! binary inside the Codex app, then the ChatGPT app. Each distinct file (by canonical path)
//! is probed once, all of them in parallel: it must be executable, `--version` must name a
//! supported version, and `app-server` must complete the `initialize` handshake. The
//! highest-ranked candidate that passes is selected; the report lists every candidate with why
//! it was rejected. Results are cached per locus and environment while the selected file stays
//! the same. docs/finding-codex.md maps the files of this module.
//!
//! Every input comes from the environment given (merged over the process environment):
//! `HOME`, `PATH`, `SHELL`, `RENNET_CODEX_BIN`, the installers' variables, and for tests
//! [`locations::ROOT_VAR`] (a prefix for system-wide directories), [`TIMEOUT_VAR`],
//! [`HANDSHAKE_TIMEOUT_VAR`], [`LOGIN_SHELL_TIMEOUT_VAR`] and [`wsl::WSL_EXE_VAR`]. Discovery
//! reads no file under the Codex home.
//!
//! With a WSL locus everything happens inside the distribution, through
//! `wsl.exe -d <distro> --exec …`, and the selected candidate launches the same way.

mod cache;
pub mod env;
mod file;
mod launch;
mod local;
pub mod locations;
mod login_shell;
mod machine;
mod pathext;
mod probe;
mod report;
mod run;
pub mod version;
pub mod wsl;

#[cfg(not(all(test, unix)))]
use cache::join_in;
pub use cache::Waiter;
#[cfg(all(test, unix))]
pub(crate) use cache::{discover_in, join_in};
pub use report::{CodexCandidate, Discovery, Report, Source, SupportedVersions};

#[cfg(all(test, unix))]
mod tests;

use crate::options::locus::Wsl;
use env::{Env, Os};
use std::sync::Arc;
use std::time::Duration;

pub use version::{MAX_TESTED_VERSION, MIN_SUPPORTED_VERSION};

/// An explicit Codex executable; it wins when it passes the probes.
pub const CODEX_BIN_VAR: &str = "RENNET_CODEX_BIN";
/// Milliseconds each probe step (`--version`, the handshake, a WSL helper) may take.
pub const TIMEOUT_VAR: &str = "RENNET_DISCOVERY_TIMEOUT_MS";
/// Milliseconds the `initialize` handshake may take, over [`TIMEOUT_VAR`]: a handshake that
/// never answers can be given up sooner than a `--version` that is merely slow.
pub const HANDSHAKE_TIMEOUT_VAR: &str = "RENNET_DISCOVERY_HANDSHAKE_TIMEOUT_MS";
/// Milliseconds the login shell may take to print its PATH.
pub const LOGIN_SHELL_TIMEOUT_VAR: &str = "RENNET_LOGIN_SHELL_TIMEOUT_MS";

pub const DEFAULT_VERSION_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(15);
pub const DEFAULT_LOGIN_SHELL_TIMEOUT: Duration = Duration::from_secs(5);
/// A WSL helper call; the first one may have to boot the distribution's VM.
pub const DEFAULT_WSL_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Clone, Debug, Default)]
pub struct DiscoverOptions {
    pub locus: Option<Wsl>,
    /// Merged over the process environment.
    pub env: Vec<(String, String)>,
    /// Probe again instead of answering from the cache.
    pub refresh: bool,
}

/// Finds the user's Codex (cached per locus and environment; `refresh` probes again).
pub async fn discover(options: &DiscoverOptions) -> Arc<Discovery> {
    join(options).result().await
}

/// Starts a discovery, or joins the one already running for the same locus and environment.
/// The caller awaits [`Waiter::result`]; a caller that stops waiting calls [`Waiter::leave`].
pub fn join(options: &DiscoverOptions) -> Waiter {
    let os = Os::current();
    join_in(Env::from_process(&options.env, os), options.locus.clone(), options.refresh, os)
}
