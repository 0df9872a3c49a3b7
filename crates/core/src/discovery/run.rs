//! One discovery run: the candidates in rank order, each distinct file probed once and all
//! in parallel (while the login shell is asked for its PATH), then the report.

use super::env::{self, Env, Os};
use super::file::{FileInfo, Request};
use super::launch::{self, Plan};
use super::locations;
use super::login_shell::LoginPath;
use super::machine::{Machine, MachineEnv};
use super::report::{CodexCandidate, Discovery, Source};
use super::{probe, version, wsl};
use super::{CODEX_BIN_VAR, HANDSHAKE_TIMEOUT_VAR, LOGIN_SHELL_TIMEOUT_VAR, MAX_TESTED_VERSION, TIMEOUT_VAR};
use super::{DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_LOGIN_SHELL_TIMEOUT, DEFAULT_VERSION_TIMEOUT, DEFAULT_WSL_TIMEOUT};
use crate::options::locus::Wsl;
use crate::process::Launch;
use futures_util::stream::{FuturesUnordered, StreamExt};
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

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
            handshake: ms(HANDSHAKE_TIMEOUT_VAR).or(probe).unwrap_or(DEFAULT_HANDSHAKE_TIMEOUT),
            login_shell: ms(LOGIN_SHELL_TIMEOUT_VAR).unwrap_or(DEFAULT_LOGIN_SHELL_TIMEOUT),
            wsl: probe.unwrap_or(DEFAULT_WSL_TIMEOUT),
        }
    }
}

struct Context {
    machine: Machine,
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

pub(super) async fn run(env: Env, locus: Option<Wsl>, os: Os) -> Discovery {
    // Every probe (and the login shell) is a child: without the host-death guard none may
    // start. Said once here rather than as every candidate's reason; holding the ticket keeps
    // one guard running for all of them.
    let _guarded = match crate::process::guard::ticket() {
        Ok(ticket) => ticket,
        Err(why) => return Discovery::unavailable(Vec::new(), format!("no candidate was probed: {why}")),
    };
    let timeouts = Timeouts::from_env(&env);
    let machine = match locus {
        None => Machine::Local { os },
        Some(target) => match wsl::wsl_exe(&env, os, &|p| Path::new(p).is_file()) {
            Some(exe) => Machine::Wsl { exe, distro: target.distro },
            None => return Discovery::unavailable(Vec::new(), wsl::not_found(&target.distro)),
        },
    };
    let ctx = Arc::new(Context { machine, env, timeouts });
    let machine_env = match ctx.machine.environment(&ctx.env, ctx.timeouts.wsl).await {
        Ok(machine_env) => Arc::new(machine_env),
        Err(reason) => return Discovery::unavailable(Vec::new(), reason),
    };
    let os = ctx.machine.os();

    // The login shell can take a while: ask it while the other candidates are probed.
    let mut work = {
        let (ctx, machine_env) = (ctx.clone(), machine_env.clone());
        Work::new(Box::pin(
            async move { ctx.machine.login_path(&machine_env, &ctx.env, ctx.timeouts.login_shell).await },
        ))
    };

    let mut requests: Vec<(Source, Request)> = Vec::new();
    let codex_home = locations::codex_home(os, &machine_env.env);
    let in_codex_home = |path: &str| codex_home.as_deref().is_some_and(|home| locations::is_inside(os, path, home));
    let mut invalid_bin = None;
    match machine_env.env.get(CODEX_BIN_VAR) {
        Some(bin) if !os.is_absolute(bin) => {
            invalid_bin = Some((bin.to_string(), format!("{CODEX_BIN_VAR} must be an absolute path")))
        }
        Some(bin) if in_codex_home(bin) => {
            invalid_bin = Some((bin.to_string(), "is inside the Codex home, which discovery does not touch".into()))
        }
        Some(bin) => requests.push((Source::Env, Request::File(bin.to_string()))),
        None => {}
    }
    let path_dirs = machine_env.env.path_dirs(os);
    requests.extend(path_dirs.iter().map(|d| (Source::ProcessPath, Request::Dir(d.clone()))));
    let known = locations::known_dirs(os, &machine_env.env);
    requests.extend(known.iter().map(|d| (Source::KnownDir, Request::Dir(d.clone()))));
    requests.extend(
        locations::bundle_paths(os, &machine_env.env)
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
        work.alongside(examine(&ctx, &machine_env, &requests)).await.into_iter().filter(outside).collect();
    let start_probes = |found: &[(Source, FileInfo)], work: &mut Work| {
        for (_, info) in found {
            let key = info.key(os);
            if work.started.insert(key.clone()) {
                let (ctx, machine_env, info) = (ctx.clone(), machine_env.clone(), info.clone());
                work.probes.push(Box::pin(async move { (key, probe_file(&ctx, &machine_env, &info).await) }));
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
            let login_found: Vec<_> = work
                .alongside(examine(&ctx, &machine_env, &login_requests))
                .await
                .into_iter()
                .filter(outside)
                .collect();
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

    let looked =
        format!("{login_note}; {} directories on PATH; {} known install directories", path_dirs.len(), known.len());
    report(&ctx.machine, candidates, &looked)
}

/// The report over the candidates in rank order; `looked` says where discovery looked, for the
/// reason when nothing was found.
fn report(machine: &Machine, candidates: Vec<CodexCandidate>, looked: &str) -> Discovery {
    let selected = candidates.iter().find(|c| c.usable).cloned();
    let reason = match &selected {
        Some(_) => None,
        None if candidates.is_empty() => Some(format!(
            "no Codex CLI was found: {CODEX_BIN_VAR} is not set; {looked}{}",
            match machine {
                Machine::Wsl { distro, .. } => format!(" (inside the WSL distribution {distro:?})"),
                Machine::Local { .. } => String::new(),
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
async fn examine(ctx: &Context, machine_env: &MachineEnv, requests: &[(Source, Request)]) -> Vec<(Source, FileInfo)> {
    let plain: Vec<Request> = requests.iter().map(|(_, r)| r.clone()).collect();
    let mut found = ctx.machine.examine(machine_env, &ctx.env, &plain, ctx.timeouts.wsl).await;
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
async fn probe_file(ctx: &Context, machine_env: &MachineEnv, info: &FileInfo) -> Outcome {
    let os = ctx.machine.os();
    let plan = launch::plan(os, info, &|c| ctx.machine.resolve(machine_env, c), &|p| ctx.machine.exists(p));
    let argv = match plan {
        Plan::Direct => vec![info.path.clone()],
        Plan::Node { node, script } => vec![node, script],
        Plan::Vendored(exe) => vec![exe],
        Plan::Rejected(reason) => return rejected(&info.path, reason),
    };
    let launch = ctx.machine.command(&argv);
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
