//! Finding the user's Codex CLI ("discovery").
//!
//! Candidates, in rank order: `RENNET_CODEX_BIN`; `codex` on the PATH of the user's login
//! shell; on the process PATH; in the directories installers commonly use; on macOS, the
//! binary inside the ChatGPT desktop app. Each distinct file (by canonical path) is probed
//! once, all of them in parallel: it must be executable, `--version` must name a supported
//! version, and `app-server` must complete the `initialize` handshake. The highest-ranked
//! candidate that passes is selected; the report lists every candidate with why it was
//! rejected. Results are cached per locus and environment for the life of the process.
//!
//! Every input comes from the environment given (merged over the process environment):
//! `HOME`, `PATH`, `SHELL`, `RENNET_CODEX_BIN`, the installers' variables, and for tests
//! [`locations::ROOT_VAR`] (a prefix for system-wide directories), [`TIMEOUT_VAR`],
//! [`LOGIN_SHELL_TIMEOUT_VAR`] and [`wsl::WSL_EXE_VAR`]. Discovery reads no file under the
//! Codex home.
//!
//! With a WSL locus everything happens inside the distribution, through
//! `wsl.exe -d <distro> --exec …`, and the selected candidate launches the same way.

pub mod env;
mod host;
pub mod locations;
mod probe;
pub mod version;
pub mod wsl;

#[cfg(all(test, unix))]
mod tests;

use env::{Env, Os};
use host::{Host, HostEnv, LoginPath, Request};
use locations::{FileInfo, Plan};
use serde::{Deserialize, Serialize};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use version::{MAX_TESTED_VERSION, MIN_SUPPORTED_VERSION};
pub use wsl::wsl_path;

/// An explicit Codex executable; it wins when it passes the probes.
pub const CODEX_BIN_VAR: &str = "RENNET_CODEX_BIN";
/// Milliseconds each probe step (`--version`, the handshake, a WSL helper) may take.
pub const TIMEOUT_VAR: &str = "RENNET_DISCOVERY_TIMEOUT_MS";
/// Milliseconds the login shell may take to print its PATH.
pub const LOGIN_SHELL_TIMEOUT_VAR: &str = "RENNET_LOGIN_SHELL_TIMEOUT_MS";

pub const DEFAULT_VERSION_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(15);
pub const DEFAULT_LOGIN_SHELL_TIMEOUT: Duration = Duration::from_secs(5);
/// A WSL helper call; the first one may have to boot the distribution's VM.
pub const DEFAULT_WSL_TIMEOUT: Duration = Duration::from_secs(30);

/// Run discovery and the child inside this WSL distribution.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WslTarget {
    pub distro: String,
}

impl From<&crate::options::Locus> for WslTarget {
    fn from(locus: &crate::options::Locus) -> Self {
        WslTarget { distro: locus.wsl.distro.clone() }
    }
}

#[derive(Clone, Debug, Default)]
pub struct DiscoverOptions {
    pub locus: Option<WslTarget>,
    /// Merged over the process environment.
    pub env: Vec<(String, String)>,
    /// Probe again instead of answering from the cache.
    pub refresh: bool,
}

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

/// How to start a candidate: `program`, then `prefix_args`, then the Codex arguments
/// (`app-server`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub program: PathBuf,
    pub prefix_args: Vec<OsString>,
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
    #[serde(skip)]
    launch: Launch,
}

impl CodexCandidate {
    /// The argv prefix that starts this candidate.
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
    fn new(selected: Option<CodexCandidate>, candidates: Vec<CodexCandidate>, reason: Option<String>) -> Discovery {
        Discovery {
            available: selected.is_some(),
            selected,
            candidates,
            reason,
            supported_versions: SupportedVersions::CURRENT,
        }
    }

    fn unavailable(candidates: Vec<CodexCandidate>, reason: String) -> Discovery {
        Discovery::new(None, candidates, Some(reason))
    }
}

#[derive(Clone, Copy, Debug)]
struct Timeouts {
    version: Duration,
    handshake: Duration,
    login_shell: Duration,
    wsl: Duration,
}

impl Timeouts {
    fn from_env(env: &Env) -> Timeouts {
        let ms = |name: &str| {
            env.get(name).and_then(|v| v.trim().parse::<u64>().ok()).filter(|&ms| ms > 0).map(Duration::from_millis)
        };
        let probe = ms(TIMEOUT_VAR);
        Timeouts {
            version: probe.unwrap_or(DEFAULT_VERSION_TIMEOUT),
            handshake: probe.unwrap_or(DEFAULT_HANDSHAKE_TIMEOUT),
            login_shell: ms(LOGIN_SHELL_TIMEOUT_VAR).unwrap_or(DEFAULT_LOGIN_SHELL_TIMEOUT),
            wsl: probe.unwrap_or(DEFAULT_WSL_TIMEOUT),
        }
    }
}

/// Finds the user's Codex (cached per locus and environment; `refresh` probes again).
pub async fn discover(options: &DiscoverOptions) -> Arc<Discovery> {
    let os = Os::current();
    discover_in(Env::from_process(&options.env, os), options.locus.clone(), options.refresh, os).await
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    os: Os,
    locus: Option<WslTarget>,
    env: Env,
}

type Cell = Arc<tokio::sync::OnceCell<Arc<Discovery>>>;

fn cache() -> &'static Mutex<HashMap<CacheKey, Cell>> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Cell>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// [`discover`] with the whole environment given and the platform rules to apply (tests run
/// the macOS rules on Linux). Concurrent calls with the same key share one run.
pub(crate) async fn discover_in(env: Env, locus: Option<WslTarget>, refresh: bool, os: Os) -> Arc<Discovery> {
    let key = CacheKey { os, locus: locus.clone(), env: env.clone() };
    let cell = {
        let mut map = cache().lock().unwrap_or_else(|e| e.into_inner());
        if refresh {
            let fresh = Cell::default();
            map.insert(key, fresh.clone());
            fresh
        } else {
            map.entry(key).or_default().clone()
        }
    };
    cell.get_or_init(|| async move { Arc::new(run(env, locus, os).await) }).await.clone()
}

struct Context {
    host: Host,
    /// The environment the probe children (or wsl.exe) are started with.
    env: Env,
    timeouts: Timeouts,
}

/// What probing one file found.
#[derive(Clone, Debug)]
struct Outcome {
    launch: Launch,
    launcher: Option<Vec<String>>,
    version: Option<String>,
    usable: bool,
    reason: Option<String>,
}

async fn run(env: Env, locus: Option<WslTarget>, os: Os) -> Discovery {
    let timeouts = Timeouts::from_env(&env);
    let host = match locus {
        None => Host::Native { os },
        Some(target) => match wsl::wsl_exe(&env, os, &|p| Path::new(p).is_file()) {
            Some(exe) => Host::Wsl { exe, distro: target.distro },
            None => {
                return Discovery::unavailable(
                    Vec::new(),
                    format!("wsl.exe was not found, so the WSL distribution {:?} cannot be reached", target.distro),
                )
            }
        },
    };
    let ctx = Arc::new(Context { host, env, timeouts });
    let host_env = match ctx.host.environment(&ctx.env, ctx.timeouts.wsl).await {
        Ok(host_env) => Arc::new(host_env),
        Err(reason) => return Discovery::unavailable(Vec::new(), reason),
    };
    let os = ctx.host.os();

    // The login shell can take a while: ask it while the other candidates are probed.
    let login = {
        let (ctx, host_env) = (ctx.clone(), host_env.clone());
        tokio::spawn(async move { ctx.host.login_path(&host_env, &ctx.env, ctx.timeouts.login_shell).await })
    };

    let mut requests: Vec<(Source, Request)> = Vec::new();
    let codex_home = locations::codex_home(os, &host_env.env);
    let in_codex_home = |path: &str| codex_home.as_deref().is_some_and(|home| locations::is_inside(os, path, home));
    let mut invalid_bin = None;
    match host_env.env.get(CODEX_BIN_VAR) {
        Some(bin) if !os.is_absolute(bin) => {
            invalid_bin = Some((bin.to_string(), format!("{CODEX_BIN_VAR} must be an absolute path")))
        }
        Some(bin) if in_codex_home(bin) => {
            invalid_bin = Some((bin.to_string(), "is inside the Codex home, which discovery does not touch".into()))
        }
        Some(bin) => requests.push((Source::Env, Request::File(bin.to_string()))),
        None => {}
    }
    let path_dirs = host_env.env.path_dirs(os);
    requests.extend(path_dirs.iter().map(|d| (Source::ProcessPath, Request::Dir(d.clone()))));
    let known = locations::known_dirs(os, &host_env.env);
    requests.extend(known.iter().map(|d| (Source::KnownDir, Request::Dir(d.clone()))));
    requests.extend(locations::bundle_paths(os, &host_env.env).into_iter().map(|p| (Source::DesktopBundle, Request::OptionalFile(p))));
    // Nothing under the Codex home is looked at (its PATH helper directory included).
    requests.retain(|(_, request)| match request {
        Request::File(p) | Request::OptionalFile(p) | Request::Dir(p) => !in_codex_home(p),
    });

    // Nor is anything that only links into it.
    let outside = |(_, info): &(Source, FileInfo)| !info.canonical.as_deref().is_some_and(in_codex_home);
    let mut found: Vec<_> = examine(&ctx, &host_env, &requests).await.into_iter().filter(outside).collect();
    let mut probes: HashMap<String, tokio::task::JoinHandle<Outcome>> = HashMap::new();
    let start_probes = |found: &[(Source, FileInfo)], probes: &mut HashMap<String, tokio::task::JoinHandle<Outcome>>| {
        for (_, info) in found {
            if let Entry::Vacant(slot) = probes.entry(info.key(os)) {
                let (ctx, host_env, info) = (ctx.clone(), host_env.clone(), info.clone());
                slot.insert(tokio::spawn(async move { probe_file(&ctx, &host_env, &info).await }));
            }
        }
    };
    start_probes(&found, &mut probes);

    let login = login.await.unwrap_or_else(|e| LoginPath::Unavailable(format!("the login shell query failed: {e}")));
    let login_note = match &login {
        LoginPath::Found(path) => {
            let dirs = env::split_path_list(path, os);
            let login_requests: Vec<(Source, Request)> = dirs
                .iter()
                .filter(|d| !in_codex_home(d))
                .map(|d| (Source::LoginShellPath, Request::Dir(d.clone())))
                .collect();
            let login_found: Vec<_> =
                examine(&ctx, &host_env, &login_requests).await.into_iter().filter(outside).collect();
            start_probes(&login_found, &mut probes);
            found.extend(login_found);
            format!("{} directories on the login shell's PATH", dirs.len())
        }
        LoginPath::Unavailable(why) => {
            tracing::debug!("no login-shell PATH: {why}");
            format!("no login-shell PATH ({why})")
        }
    };
    for (source, info) in &mut found {
        if locations::is_desktop_bundle(info.canonical.as_deref().unwrap_or(&info.path)) {
            *source = Source::DesktopBundle;
        }
    }
    // Stable: within a source, the order found.
    found.sort_by_key(|(source, _)| *source);

    let mut candidates = Vec::new();
    if let Some((bin, reason)) = invalid_bin {
        candidates.push(CodexCandidate {
            launch: direct_launch(&bin),
            path: bin,
            source: Source::Env,
            launcher: None,
            version: None,
            usable: false,
            reason: Some(reason),
        });
    }
    let mut seen = HashSet::new();
    for (source, info) in found {
        let key = info.key(os);
        if !seen.insert(key.clone()) {
            continue;
        }
        let outcome = match probes.remove(&key) {
            Some(task) => match task.await {
                Ok(outcome) => outcome,
                Err(e) => rejected(&info.path, format!("the probe failed: {e}")),
            },
            None => rejected(&info.path, "the probe was not started".into()),
        };
        candidates.push(CodexCandidate {
            path: info.path,
            source,
            launcher: outcome.launcher,
            version: outcome.version,
            usable: outcome.usable,
            reason: outcome.reason,
            launch: outcome.launch,
        });
    }

    let selected = candidates.iter().find(|c| c.usable).cloned();
    let reason = match &selected {
        Some(_) => None,
        None if candidates.is_empty() => Some(format!(
            "no Codex CLI was found: {CODEX_BIN_VAR} is not set; {login_note}; {} directories on PATH; {} known install directories{}",
            path_dirs.len(),
            known.len(),
            match &ctx.host {
                Host::Wsl { distro, .. } => format!(" (inside the WSL distribution {distro:?})"),
                Host::Native { .. } => String::new(),
            }
        )),
        None => Some(format!(
            "no Codex candidate passed the probes: {}",
            candidates
                .iter()
                .map(|c| format!("{}: {}", c.path, c.reason.as_deref().unwrap_or("rejected")))
                .collect::<Vec<_>>()
                .join("; ")
        )),
    };
    Discovery::new(selected, candidates, reason)
}

/// Examines the requests and pairs each file with its source; the directories matched by a
/// `*` pattern come newest version first.
async fn examine(ctx: &Context, host_env: &HostEnv, requests: &[(Source, Request)]) -> Vec<(Source, FileInfo)> {
    let plain: Vec<Request> = requests.iter().map(|(_, r)| r.clone()).collect();
    let mut found = ctx.host.examine(host_env, &ctx.env, &plain, ctx.timeouts.wsl).await;
    let globbed = |i: usize| matches!(plain.get(i), Some(Request::Dir(d)) if d.contains('*'));
    found.sort_by(|(a, fa), (b, fb)| {
        a.cmp(b).then_with(|| {
            if globbed(*a) {
                locations::version_key(&fb.path).cmp(&locations::version_key(&fa.path))
            } else {
                std::cmp::Ordering::Equal
            }
        })
    });
    found.into_iter().filter_map(|(i, info)| requests.get(i).map(|(source, _)| (*source, info))).collect()
}

fn direct_launch(path: &str) -> Launch {
    Launch { program: PathBuf::from(path), prefix_args: Vec::new() }
}

fn rejected(path: &str, reason: String) -> Outcome {
    Outcome { launch: direct_launch(path), launcher: None, version: None, usable: false, reason: Some(reason) }
}

/// The three probes of one file: it can be started, `--version`, the handshake.
async fn probe_file(ctx: &Context, host_env: &HostEnv, info: &FileInfo) -> Outcome {
    let os = ctx.host.os();
    let plan = locations::plan(os, info, &|c| ctx.host.resolve(host_env, c), &|p| ctx.host.exists(p));
    let argv = match plan {
        Plan::Direct => vec![info.path.clone()],
        Plan::Node { node, script } => vec![node, script],
        Plan::Rejected(reason) => return rejected(&info.path, reason),
    };
    let cmd = ctx.host.command(&argv);
    let launch = Launch {
        program: PathBuf::from(&cmd.program),
        prefix_args: cmd.args.iter().map(OsString::from).collect(),
    };
    let launcher = (cmd.program != info.path || !cmd.args.is_empty())
        .then(|| std::iter::once(cmd.program.clone()).chain(cmd.args.iter().cloned()).collect());
    let mut outcome = Outcome { launch, launcher, version: None, usable: false, reason: None };

    let stdout = match probe::version(&cmd, &ctx.env, ctx.timeouts.version).await {
        Ok(stdout) => stdout,
        Err(reason) => {
            outcome.reason = Some(reason);
            return outcome;
        }
    };
    let Some(version) = version::parse_version_output(&stdout) else {
        let printed = probe::last_lines(&stdout, 3);
        outcome.reason = Some(if printed.is_empty() {
            "`--version` printed nothing".to_string()
        } else {
            format!("`--version` printed no version: {printed}")
        });
        return outcome;
    };
    outcome.version = Some(version.to_string());
    if let Some(reason) = version::unsupported_reason(&version) {
        outcome.reason = Some(reason);
        return outcome;
    }
    if version > version::Version::max_tested() {
        tracing::info!("{}: codex-cli {version} is newer than {MAX_TESTED_VERSION}, the newest version tested", info.path);
    }
    match probe::handshake(&cmd, &ctx.env, ctx.timeouts.handshake).await {
        Ok(user_agent) => {
            tracing::debug!("{}: app-server answered initialize as {user_agent}", info.path);
            outcome.usable = true;
        }
        Err(reason) => outcome.reason = Some(reason),
    }
    outcome
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWsl {
    distro: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLocus {
    wsl: RawWsl,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOptions {
    #[serde(default)]
    locus: Option<RawLocus>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    refresh: Option<bool>,
}

/// Parses the JSON text of `discoverCodex` options. Errors name the option
/// (`options.env.A: invalid type …`).
pub fn parse_options(json: Option<&str>) -> Result<DiscoverOptions, String> {
    let json = json.map(str::trim).filter(|j| !j.is_empty() && *j != "null" && *j != "undefined");
    let raw: RawOptions = match json {
        None => RawOptions::default(),
        Some(json) => crate::options::from_json(json).map_err(|e| e.0)?,
    };
    let locus = match raw.locus {
        Some(locus) if locus.wsl.distro.trim().is_empty() => {
            return Err("options.locus.wsl.distro must be a non-empty string".into())
        }
        Some(locus) => Some(WslTarget { distro: locus.wsl.distro }),
        None => None,
    };
    let env = raw.env.unwrap_or_default();
    crate::options::check_env(&env).map_err(|e| e.0)?;
    Ok(DiscoverOptions { locus, env: env.into_iter().collect(), refresh: raw.refresh.unwrap_or(false) })
}
