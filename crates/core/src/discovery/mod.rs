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

use crate::locus::{Locus, Wsl};
use crate::process::Launch;
use env::{Env, Os};
use futures_util::stream::{FuturesUnordered, StreamExt};
use host::{Host, HostEnv, LoginPath, Request};
use locations::{FileInfo, Plan};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use version::{MAX_TESTED_VERSION, MIN_SUPPORTED_VERSION};

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

#[derive(Clone, Debug, Default)]
pub struct DiscoverOptions {
    pub locus: Option<Wsl>,
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
    launch: Launch,
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

#[derive(Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    os: Os,
    locus: Option<Wsl>,
    env: Env,
}

/// One discovery run, shared by everyone who waits for it.
struct Run {
    result: tokio::sync::watch::Sender<Option<Arc<Discovery>>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    waiters: AtomicUsize,
}

enum Slot {
    Running(Arc<Run>),
    /// A usable Codex was found; `selected` is still that file while its size and modification
    /// time are unchanged. "Not found" is never kept: a Codex installed meanwhile is found.
    Found {
        discovery: Arc<Discovery>,
        selected: Option<FileStamp>,
    },
}

fn cache() -> &'static Mutex<HashMap<CacheKey, Slot>> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Slot>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// What identifies a file cheaply: it exists, with this size and modification time.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    fn of(path: &Path) -> Option<FileStamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileStamp { len: meta.len(), modified: meta.modified().ok() })
    }
}

/// The file a cached discovery selected, as this machine sees it (a WSL path is not looked at).
fn selected_file(discovery: &Discovery, locus: &Option<Wsl>) -> Option<PathBuf> {
    let selected = discovery.selected.as_ref()?;
    locus.is_none().then(|| PathBuf::from(&selected.path))
}

/// [`join`] with the whole environment given and the platform rules to apply (tests run the
/// macOS rules on Linux).
pub(crate) fn join_in(env: Env, locus: Option<Wsl>, refresh: bool, os: Os) -> Waiter {
    let key = CacheKey { os, locus: locus.clone(), env: env.clone() };
    let mut slots = cache().lock().unwrap_or_else(|e| e.into_inner());
    match slots.get(&key) {
        Some(Slot::Found { discovery, selected }) if !refresh => {
            let unchanged = selected_file(discovery, &locus).map(|p| FileStamp::of(&p)) == selected.clone().map(Some);
            if unchanged {
                return Waiter::ready(discovery.clone());
            }
            tracing::debug!("the Codex discovery selected changed on disk: discovering again");
        }
        Some(Slot::Running(run)) if !refresh => {
            run.waiters.fetch_add(1, Ordering::SeqCst);
            return Waiter { run: Some(run.clone()), key: Some(key), ready: None, left: false };
        }
        _ => {}
    }
    let (result, _) = tokio::sync::watch::channel(None);
    let run = Arc::new(Run { result, task: Mutex::new(None), waiters: AtomicUsize::new(1) });
    slots.insert(key.clone(), Slot::Running(run.clone()));
    let task = {
        let (run, key) = (run.clone(), key.clone());
        tokio::spawn(async move {
            let discovery = Arc::new(self::run(env, locus.clone(), os).await);
            let mut slots = cache().lock().unwrap_or_else(|e| e.into_inner());
            if matches!(slots.get(&key), Some(Slot::Running(current)) if Arc::ptr_eq(current, &run)) {
                if discovery.available {
                    let selected = selected_file(&discovery, &locus).and_then(|p| FileStamp::of(&p));
                    slots.insert(key, Slot::Found { discovery: discovery.clone(), selected });
                } else {
                    slots.remove(&key);
                }
            }
            drop(slots);
            run.result.send_replace(Some(discovery));
        })
    };
    *run.task.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
    Waiter { run: Some(run), key: Some(key), ready: None, left: false }
}

/// A caller's wait for a discovery. When the last waiter leaves before the discovery finished,
/// it is stopped, and every process it started is gone before [`Waiter::leave`] returns.
pub struct Waiter {
    run: Option<Arc<Run>>,
    key: Option<CacheKey>,
    ready: Option<Arc<Discovery>>,
    left: bool,
}

impl Waiter {
    fn ready(discovery: Arc<Discovery>) -> Waiter {
        Waiter { run: None, key: None, ready: Some(discovery), left: true }
    }

    pub async fn result(&self) -> Arc<Discovery> {
        if let Some(ready) = &self.ready {
            return ready.clone();
        }
        let run = self.run.as_ref().expect("a waiter without a result has a run");
        let mut receiver = run.result.subscribe();
        // The sender lives in the run, which this waiter holds: waiting cannot fail.
        let result = receiver.wait_for(Option::is_some).await.map(|r| r.clone());
        result.ok().flatten().expect("a discovery run ends with its result")
    }

    /// Stops waiting. The last to leave a discovery that has not finished stops it and waits
    /// until the processes it started are gone.
    pub async fn leave(mut self) {
        if let Some(task) = self.depart() {
            // The run's future is dropped before the handle completes: every probe child's
            // `Drop` has ended its tree by then.
            let _ = task.await;
        }
    }

    /// The task to wait for, if this was the last waiter of an unfinished run.
    fn depart(&mut self) -> Option<tokio::task::JoinHandle<()>> {
        if std::mem::replace(&mut self.left, true) {
            return None;
        }
        let run = self.run.as_ref()?;
        if run.waiters.fetch_sub(1, Ordering::SeqCst) != 1 || run.result.borrow().is_some() {
            return None;
        }
        let mut slots = cache().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(key) = &self.key {
            if matches!(slots.get(key), Some(Slot::Running(current)) if Arc::ptr_eq(current, run)) {
                slots.remove(key);
            }
        }
        drop(slots);
        let task = run.task.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        task.abort();
        Some(task)
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // Nobody can wait for the processes here; `leave` is the way to.
        self.depart();
    }
}

/// [`discover`] for tests, with the whole environment and platform rules given.
#[cfg(all(test, unix))]
pub(crate) async fn discover_in(env: Env, locus: Option<Wsl>, refresh: bool, os: Os) -> Arc<Discovery> {
    join_in(env, locus, refresh, os).result().await
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

async fn run(env: Env, locus: Option<Wsl>, os: Os) -> Discovery {
    // Every probe (and the login shell) is a child: without the host-death guard none may
    // start. Said once here rather than as every candidate's reason; holding the ticket keeps
    // one guard running for all of them.
    let _guarded = match crate::process::guard::ticket() {
        Ok(ticket) => ticket,
        Err(why) => return Discovery::unavailable(Vec::new(), format!("no candidate was probed: {why}")),
    };
    let timeouts = Timeouts::from_env(&env);
    let host = match locus {
        None => Host::Native { os },
        Some(target) => match wsl::wsl_exe(&env, os, &|p| Path::new(p).is_file()) {
            Some(exe) => Host::Wsl { exe, distro: target.distro },
            None => return Discovery::unavailable(Vec::new(), wsl::not_found(&target.distro)),
        },
    };
    let ctx = Arc::new(Context { host, env, timeouts });
    let host_env = match ctx.host.environment(&ctx.env, ctx.timeouts.wsl).await {
        Ok(host_env) => Arc::new(host_env),
        Err(reason) => return Discovery::unavailable(Vec::new(), reason),
    };
    let os = ctx.host.os();

    // The login shell can take a while: ask it while the other candidates are probed.
    let mut work = {
        let (ctx, host_env) = (ctx.clone(), host_env.clone());
        Work::new(Box::pin(async move { ctx.host.login_path(&host_env, &ctx.env, ctx.timeouts.login_shell).await }))
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
    requests.extend(
        locations::bundle_paths(os, &host_env.env)
            .into_iter()
            .map(|p| (Source::DesktopBundle, Request::OptionalFile(p))),
    );
    // Nothing under the Codex home is looked at (its PATH helper directory included).
    requests.retain(|(_, request)| match request {
        Request::File(p) | Request::OptionalFile(p) | Request::Dir(p) => !in_codex_home(p),
    });

    // Nor is anything that only links into it.
    let outside = |(_, info): &(Source, FileInfo)| !info.canonical.as_deref().is_some_and(in_codex_home);
    let mut found: Vec<_> =
        work.alongside(examine(&ctx, &host_env, &requests)).await.into_iter().filter(outside).collect();
    let start_probes = |found: &[(Source, FileInfo)], work: &mut Work| {
        for (_, info) in found {
            let key = info.key(os);
            if work.started.insert(key.clone()) {
                let (ctx, host_env, info) = (ctx.clone(), host_env.clone(), info.clone());
                work.probes.push(Box::pin(async move { (key, probe_file(&ctx, &host_env, &info).await) }));
            }
        }
    };
    start_probes(&found, &mut work);

    let login = work.login().await;
    let login_note = match &login {
        LoginPath::Found(path) => {
            let dirs = env::split_path_list(path, os);
            let login_requests: Vec<(Source, Request)> = dirs
                .iter()
                .filter(|d| !in_codex_home(d))
                .map(|d| (Source::LoginShellPath, Request::Dir(d.clone())))
                .collect();
            let login_found: Vec<_> =
                work.alongside(examine(&ctx, &host_env, &login_requests)).await.into_iter().filter(outside).collect();
            start_probes(&login_found, &mut work);
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

    let mut outcomes = work.finish().await;
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
        let outcome = match outcomes.remove(&key) {
            Some(outcome) => outcome,
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

type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// What a discovery does at the same time: ask the login shell and probe candidates. All of it
/// is driven by the run's own future, never by tasks of its own, so that a run that is dropped
/// (nobody waits for it any more) drops every probe at once, and with them their children.
struct Work {
    /// The login shell's answer while it is awaited.
    login: Option<Boxed<LoginPath>>,
    login_path: Option<LoginPath>,
    probes: FuturesUnordered<Boxed<(String, Outcome)>>,
    started: HashSet<String>,
    outcomes: HashMap<String, Outcome>,
}

impl Work {
    fn new(login: Boxed<LoginPath>) -> Work {
        Work {
            login: Some(login),
            login_path: None,
            probes: FuturesUnordered::new(),
            started: HashSet::new(),
            outcomes: HashMap::new(),
        }
    }

    /// Awaits `step` while the login shell and the probes go on.
    async fn alongside<T>(&mut self, step: impl Future<Output = T>) -> T {
        tokio::pin!(step);
        loop {
            tokio::select! {
                biased;
                value = &mut step => return value,
                () = self.next(), if !self.idle() => {}
            }
        }
    }

    fn idle(&self) -> bool {
        self.login.is_none() && self.probes.is_empty()
    }

    /// Makes progress on whatever finishes first.
    async fn next(&mut self) {
        let login = async {
            match &mut self.login {
                Some(login) => login.await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            path = login => {
                self.login = None;
                self.login_path = Some(path);
            }
            Some((key, outcome)) = self.probes.next(), if !self.probes.is_empty() => {
                self.outcomes.insert(key, outcome);
            }
        }
    }

    async fn login(&mut self) -> LoginPath {
        while self.login.is_some() {
            self.next().await;
        }
        self.login_path.take().unwrap_or_else(|| LoginPath::Unavailable("the login shell was asked once".into()))
    }

    async fn finish(mut self) -> HashMap<String, Outcome> {
        while !self.probes.is_empty() {
            self.next().await;
        }
        self.outcomes
    }
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
    Launch::new(path, std::iter::empty::<OsString>())
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
        Plan::Vendored(exe) => vec![exe],
        Plan::Rejected(reason) => return rejected(&info.path, reason),
    };
    let launch = ctx.host.command(&argv);
    let launcher = (launch.program != Path::new(&info.path) || !launch.prefix_args.is_empty()).then(|| launch.argv());
    let mut outcome = Outcome { launch: launch.clone(), launcher, version: None, usable: false, reason: None };

    let stdout = match probe::version(&launch, &ctx.env, ctx.timeouts.version).await {
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
        tracing::info!(
            "{}: codex-cli {version} is newer than {MAX_TESTED_VERSION}, the newest version tested",
            info.path
        );
    }
    match probe::handshake(&launch, &ctx.env, ctx.timeouts.handshake).await {
        Ok(user_agent) => {
            tracing::debug!("{}: app-server answered initialize as {user_agent}", info.path);
            outcome.usable = true;
        }
        Err(reason) => outcome.reason = Some(reason),
    }
    outcome
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOptions {
    #[serde(default)]
    locus: Option<Locus>,
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
        Some(json) => crate::input::from_json(json).map_err(|e| e.0)?,
    };
    let locus = match raw.locus {
        Some(locus) if locus.wsl.distro.trim().is_empty() => {
            return Err("options.locus.wsl.distro must be a non-empty string".into())
        }
        Some(locus) => Some(locus.wsl),
        None => None,
    };
    let env = raw.env.unwrap_or_default();
    crate::input::check_env(&env).map_err(|e| e.0)?;
    Ok(DiscoverOptions { locus, env: env.into_iter().collect(), refresh: raw.refresh.unwrap_or(false) })
}
