//! Discovery against fake candidates: shell scripts in temporary directories that answer
//! `--version` and, for `app-server`, read the `initialize` line and answer it (or not).
//! Every environment input is given explicitly (nothing comes from this machine), and
//! system-wide directories live under `RENNET_DISCOVERY_ROOT` inside the sandbox.

use super::env::{Env, Os};
use super::locations::ROOT_VAR;
use super::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    fn new(name: &str) -> Sandbox {
        static N: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "rennet-discovery-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home")).unwrap();
        Sandbox { root }
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).to_string_lossy().into_owned()
    }

    fn dir(&self, rel: &str) -> String {
        let dir = self.root.join(rel);
        std::fs::create_dir_all(&dir).unwrap();
        dir.to_string_lossy().into_owned()
    }

    /// Writes an executable file.
    fn script(&self, rel: &str, body: &str) -> String {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        chmod(&path, 0o755);
        path.to_string_lossy().into_owned()
    }

    fn codex(&self, rel: &str, fake: Fake) -> String {
        self.script(rel, &fake.render(&self.path("calls.log")))
    }

    /// Lines of the call log that mention `path`.
    fn calls(&self, path: &str) -> Vec<String> {
        std::fs::read_to_string(self.root.join("calls.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with(&format!("{path} ")))
            .map(str::to_string)
            .collect()
    }

    /// A directory holding only `printenv` (what the login-shell query runs), so that a fake
    /// login PATH need not include the system's bin directories.
    fn tools(&self) -> String {
        let dir = self.dir("tools");
        let link = self.root.join("tools/printenv");
        if !link.exists() {
            let printenv =
                ["/usr/bin/printenv", "/bin/printenv"].into_iter().find(|p| Path::new(p).exists()).expect("printenv");
            std::os::unix::fs::symlink(printenv, &link).unwrap();
        }
        dir
    }

    /// The environment: HOME in the sandbox, the system root in the sandbox, short timeouts,
    /// and whatever the test adds.
    fn env(&self, extra: &[(&str, String)]) -> Env {
        let mut pairs: Vec<(String, String)> = vec![
            ("HOME".into(), self.path("home")),
            (ROOT_VAR.into(), self.path("sys")),
            (TIMEOUT_VAR.into(), "3000".into()),
            (LOGIN_SHELL_TIMEOUT_VAR.into(), "3000".into()),
        ];
        pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
        Env::from_pairs(pairs, Os::Unix)
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

const AGENT: &str = r#"{"id":1,"result":{"userAgent":"rennet/0.171.0 (fake)","codexHome":"/nowhere","platformFamily":"unix","platformOs":"linux"}}"#;

/// How a fake Codex behaves.
#[derive(Clone)]
struct Fake {
    version_output: String,
    /// Shell code run after the version was printed.
    after_version: String,
    /// Shell code run after the initialize line was read.
    handshake: String,
}

impl Fake {
    fn good() -> Fake {
        Fake::version("codex-cli 0.171.0")
    }

    fn version(output: &str) -> Fake {
        Fake {
            version_output: output.into(),
            after_version: "exit 0".into(),
            handshake: format!("printf '%s\\n' '{AGENT}'"),
        }
    }

    fn after_version(mut self, code: &str) -> Fake {
        self.after_version = code.into();
        self
    }

    fn handshake(mut self, code: &str) -> Fake {
        self.handshake = code.into();
        self
    }

    fn render(&self, log: &str) -> String {
        format!(
            r#"#!/bin/sh
PATH=/usr/bin:/bin
export PATH
me=$0
case "$1" in
  --version)
    echo "$me --version" >> '{log}'
    printf '%s\n' '{version}'
    {after_version} ;;
  app-server)
    echo "$me app-server $$" >> '{log}'
    IFS= read -r line || exit 3
    case "$line" in
      *'"method":"initialize"'*'"name":"rennet"'*) ;;
      *) echo "unexpected first line: $line" >&2; exit 4 ;;
    esac
    {handshake}
    while IFS= read -r line; do :; done
    exit 0 ;;
esac
echo "unexpected arguments: $*" >&2
exit 2
"#,
            log = log,
            version = self.version_output,
            after_version = self.after_version,
            handshake = self.handshake,
        )
    }
}

/// A login shell that prints noise, then runs the command it was given with PATH set to
/// `path`, then more noise. Its arguments go to `<sandbox>/shell.args`.
fn fake_shell(sb: &Sandbox, path: &str) -> String {
    sb.script(
        "shell/fakesh",
        &format!(
            r#"#!/bin/sh
echo "$@" > '{args}'
echo "Welcome to the fake shell"
printf '\033[?2004h\033]0;title\007'
for a; do last=$a; done
PATH='{path}:{tools}'
export PATH
/bin/sh -c "$last"
echo "bye"
"#,
            args = sb.path("shell.args"),
            tools = sb.tools(),
        ),
    )
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(')').map(|(_, rest)| !rest.trim_start().starts_with('Z')).unwrap_or(false),
        Err(_) => false,
    }
}

/// Live processes whose process group is `pgid`.
fn live_in_group(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
            let state = fields.next()?;
            let pgrp: i32 = fields.nth(1)?.parse().ok()?;
            (pgrp == pgid && state != "Z").then_some(pid)
        })
        .collect()
}

fn sources(d: &Discovery) -> Vec<Source> {
    d.candidates.iter().map(|c| c.source).collect()
}

fn candidate<'a>(d: &'a Discovery, path: &str) -> &'a CodexCandidate {
    d.candidates.iter().find(|c| c.path == path).unwrap_or_else(|| panic!("no candidate {path} in {d:#?}"))
}

async fn discover_env(env: Env) -> Arc<Discovery> {
    discover_in(env, None, false, Os::Unix).await
}

#[tokio::test]
async fn ranks_env_then_login_path_then_process_path_then_known_dirs_then_bundle() {
    let sb = Sandbox::new("rank");
    let env_bin = sb.codex("explicit/codex", Fake::good());
    let login_bin = sb.codex("login/codex", Fake::good());
    let process_bin = sb.codex("process/codex", Fake::good());
    let known_bin = sb.codex("home/.local/bin/codex", Fake::good());
    let bundle = sb.codex("sys/Applications/ChatGPT.app/Contents/Resources/codex", Fake::good());
    let shell = fake_shell(&sb, &sb.path("login"));
    let env = sb.env(&[(CODEX_BIN_VAR, env_bin.clone()), ("SHELL", shell), ("PATH", sb.path("process"))]);
    // The macOS rules (the bundle is a candidate), run here.
    let d = discover_in(env, None, false, Os::MacOs).await;
    assert_eq!(
        sources(&d),
        vec![Source::Env, Source::LoginShellPath, Source::ProcessPath, Source::KnownDir, Source::DesktopBundle],
        "{d:#?}"
    );
    let paths: Vec<&str> = d.candidates.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, vec![env_bin.as_str(), &login_bin, &process_bin, &known_bin, &bundle]);
    assert!(
        d.candidates.iter().all(|c| c.usable && c.reason.is_none() && c.version.as_deref() == Some("0.171.0")),
        "{d:#?}"
    );
    assert!(d.available);
    assert_eq!(d.reason, None);
    let selected = d.selected.as_ref().unwrap();
    assert_eq!(selected.path, env_bin);
    assert_eq!(selected.launcher, None);
    assert_eq!(selected.launch().argv(), vec![env_bin.clone()]);
    // The login shell was asked as an interactive login shell.
    let args = std::fs::read_to_string(sb.path("shell.args")).unwrap();
    assert!(args.starts_with("-l -i -c "), "{args}");

    // The JSON shape of the contract.
    let json: serde_json::Value = serde_json::to_value(&*d).unwrap();
    assert_eq!(json["selected"]["source"], "env");
    assert_eq!(json["candidates"][1]["source"], "loginShellPath");
    assert_eq!(json["candidates"][4]["source"], "desktopBundle");
    let keys: Vec<&String> = json["candidates"][0].as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["launcher", "path", "reason", "source", "usable", "version"]);
}

#[tokio::test]
async fn the_bundle_ranks_below_a_user_cli_even_when_linked_on_path() {
    let sb = Sandbox::new("bundle");
    let bundle = sb.codex("sys/Applications/ChatGPT.app/Contents/Resources/codex", Fake::good());
    sb.dir("linked");
    std::os::unix::fs::symlink(&bundle, sb.path("linked/codex")).unwrap();
    let user_cli = sb.codex("home/.bun/bin/codex", Fake::good());
    let d = discover_in(sb.env(&[("PATH", sb.path("linked"))]), None, false, Os::MacOs).await;
    let found: Vec<(Source, &str)> = d.candidates.iter().map(|c| (c.source, c.path.as_str())).collect();
    assert_eq!(found, vec![(Source::KnownDir, user_cli.as_str()), (Source::DesktopBundle, &sb.path("linked/codex"))]);
    assert_eq!(d.selected.as_ref().unwrap().path, user_cli);
}

#[tokio::test]
async fn the_codex_app_bundles_are_candidates_below_a_user_cli_and_above_chatgpt() {
    let sb = Sandbox::new("codexapp");
    let chatgpt = sb.codex("sys/Applications/ChatGPT.app/Contents/Resources/codex", Fake::good());
    let codex_app = sb.codex("sys/Applications/Codex.app/Contents/Resources/codex", Fake::good());
    let user_codex_app = sb.codex("home/Applications/Codex.app/Contents/Resources/codex", Fake::good());
    let user_cli = sb.codex("home/.local/bin/codex", Fake::good());
    let d = discover_in(sb.env(&[]), None, false, Os::MacOs).await;
    let found: Vec<(Source, &str)> = d.candidates.iter().map(|c| (c.source, c.path.as_str())).collect();
    assert_eq!(
        found,
        vec![
            (Source::KnownDir, user_cli.as_str()),
            (Source::DesktopBundle, &codex_app),
            (Source::DesktopBundle, &user_codex_app),
            (Source::DesktopBundle, &chatgpt),
        ]
    );
    assert_eq!(d.selected.as_ref().unwrap().path, user_cli);
    // Without the user's CLI, the Codex app's own CLI is the one used.
    std::fs::remove_file(&user_cli).unwrap();
    let d = discover_in(sb.env(&[]), None, true, Os::MacOs).await;
    assert_eq!(d.selected.as_ref().unwrap().path, codex_app);
    assert_eq!(d.selected.as_ref().unwrap().source, Source::DesktopBundle);
}

#[tokio::test]
async fn nothing_inside_the_codex_home_is_touched() {
    let sb = Sandbox::new("codexhome");
    let helper = sb.codex("home/.codex/tmp/path/codex", Fake::good());
    let other = sb.codex("custom-home/bin/codex", Fake::good());
    sb.dir("links");
    std::os::unix::fs::symlink(&helper, sb.path("links/codex")).unwrap();
    let env = sb.env(&[("PATH", format!("{}:{}", sb.path("home/.codex/tmp/path"), sb.path("links")))]);
    let d = discover_env(env).await;
    assert!(d.candidates.is_empty(), "{d:#?}");
    assert!(sb.calls(&helper).is_empty());
    let env = sb.env(&[
        ("CODEX_HOME", sb.path("custom-home")),
        (CODEX_BIN_VAR, other.clone()),
        ("PATH", format!("{}:{}", sb.path("custom-home/bin"), sb.path("home/.codex/tmp/path"))),
    ]);
    let d = discover_env(env).await;
    assert_eq!(d.candidates.len(), 2, "{d:#?}");
    assert_eq!(d.candidates[0].path, other);
    assert!(d.candidates[0].reason.as_deref().unwrap().contains("inside the Codex home"));
    assert!(sb.calls(&other).is_empty());
    assert_eq!(d.selected.as_ref().unwrap().path, helper, "~/.codex is not the Codex home any more");
}

#[tokio::test]
async fn a_failing_env_candidate_is_reported_and_discovery_goes_on() {
    let sb = Sandbox::new("envfail");
    let env_bin = sb.codex("explicit/codex", Fake::version("codex-cli 0.100.0"));
    let login_bin = sb.codex("login/codex", Fake::good());
    let process_bin = sb.codex("process/codex", Fake::good());
    let env = sb.env(&[
        (CODEX_BIN_VAR, env_bin.clone()),
        ("SHELL", fake_shell(&sb, &sb.path("login"))),
        ("PATH", sb.path("process")),
    ]);
    let d = discover_env(env).await;
    let rejected = candidate(&d, &env_bin);
    assert_eq!(rejected.source, Source::Env);
    assert!(!rejected.usable);
    assert_eq!(rejected.version.as_deref(), Some("0.100.0"));
    assert!(rejected.reason.as_deref().unwrap().contains("older than 0.150.0"), "{rejected:?}");
    assert_eq!(d.selected.as_ref().unwrap().path, login_bin);
    assert!(candidate(&d, &process_bin).usable);

    // Missing, and relative.
    let env = sb.env(&[(CODEX_BIN_VAR, sb.path("nope/codex")), ("PATH", sb.path("process"))]);
    let d = discover_env(env).await;
    assert_eq!(d.candidates[0].reason.as_deref(), Some("does not exist"));
    assert_eq!(d.selected.as_ref().unwrap().path, process_bin);
    let env = sb.env(&[(CODEX_BIN_VAR, "codex".into()), ("PATH", sb.path("process"))]);
    let d = discover_env(env).await;
    assert_eq!(d.candidates[0].path, "codex");
    assert!(d.candidates[0].reason.as_deref().unwrap().contains("absolute"));
    assert_eq!(d.selected.as_ref().unwrap().path, process_bin);
}

#[tokio::test]
async fn each_probe_failure_has_its_reason() {
    let sb = Sandbox::new("failures");
    let not_exec = sb.codex("p1/codex", Fake::good());
    chmod(Path::new(&not_exec), 0o644);
    let garbage_version = sb.codex("p2/codex", Fake::version("hello there"));
    let too_old = sb.codex("p3/codex", Fake::version("codex-cli 0.149.9"));
    let hangs = sb.codex("p4/codex", Fake::good().handshake(&format!("echo $$ > '{}'; sleep 30", sb.path("hang.pid"))));
    let garbage_exit = sb.codex("p5/codex", Fake::good().handshake("echo 'this is not json'; echo 'boom' >&2; exit 7"));
    let garbage_stays = sb.codex("p6/codex", Fake::good().handshake("echo 'still not json'"));
    let no_agent = sb.codex("p7/codex", Fake::good().handshake(r#"printf '%s\n' '{"id":1,"result":{}}'"#));
    let rpc_error = sb.codex(
        "p8/codex",
        Fake::good().handshake(r#"printf '%s\n' '{"id":1,"error":{"code":-32600,"message":"Not today"}}'"#),
    );
    let directory = sb.dir("p9/codex");
    let good = sb.codex("p10/codex", Fake::good());
    let path = (1..=10).map(|i| sb.path(&format!("p{i}"))).collect::<Vec<_>>().join(":");
    let mut env = sb.env(&[("PATH", path)]);
    env.set(TIMEOUT_VAR.into(), "1000".into());

    let started = Instant::now();
    let d = discover_env(env).await;
    let elapsed = started.elapsed();
    let reason = |p: &str| candidate(&d, p).reason.clone().unwrap_or_default();
    assert!(reason(&not_exec).contains("not executable"), "{}", reason(&not_exec));
    assert!(reason(&garbage_version).contains("printed no version: hello there"), "{}", reason(&garbage_version));
    assert!(reason(&too_old).contains("0.149.9 is older than 0.150.0"), "{}", reason(&too_old));
    assert_eq!(candidate(&d, &too_old).version.as_deref(), Some("0.149.9"));
    assert!(reason(&hangs).contains("did not answer `initialize` within 1000 ms"), "{}", reason(&hangs));
    assert!(
        reason(&garbage_exit).contains("`app-server` exited with code 7 without answering `initialize`"),
        "{}",
        reason(&garbage_exit)
    );
    assert!(reason(&garbage_exit).contains("this is not json"), "{}", reason(&garbage_exit));
    assert!(reason(&garbage_exit).contains("stderr: boom"), "{}", reason(&garbage_exit));
    assert!(reason(&garbage_stays).contains("did not answer") && reason(&garbage_stays).contains("still not json"));
    assert!(reason(&no_agent).contains("without a userAgent"), "{}", reason(&no_agent));
    assert!(reason(&rpc_error).contains("Not today"), "{}", reason(&rpc_error));
    assert!(reason(&directory).contains("not a file"), "{}", reason(&directory));
    for p in [
        &not_exec,
        &garbage_version,
        &too_old,
        &hangs,
        &garbage_exit,
        &garbage_stays,
        &no_agent,
        &rpc_error,
        &directory,
    ] {
        assert!(!candidate(&d, p).usable, "{p}");
    }
    assert_eq!(candidate(&d, &garbage_version).version, None);
    // The non-executable file was never run.
    assert!(sb.calls(&not_exec).is_empty());
    // The too-old one never got a handshake.
    assert_eq!(sb.calls(&too_old).len(), 1);
    assert!(candidate(&d, &good).usable);
    assert_eq!(d.selected.as_ref().unwrap().path, good);
    // Timeouts ran in parallel: one timeout plus the kill, not several.
    assert!(elapsed < std::time::Duration::from_millis(2900), "{elapsed:?}");
    // The hanging probe (and its `sleep`) is gone.
    let pid: i32 = std::fs::read_to_string(sb.path("hang.pid")).unwrap().trim().parse().unwrap();
    assert!(!alive(pid), "the hanging probe {pid} survived");
    assert_eq!(live_in_group(pid), Vec::<i32>::new(), "its `sleep` survived");

    // Nothing usable: unavailable, with every reason.
    let env = sb.env(&[("PATH", format!("{}:{}", sb.path("p2"), sb.path("p3")))]);
    let d = discover_env(env).await;
    assert!(!d.available);
    assert!(d.selected.is_none());
    let why = d.reason.as_deref().unwrap();
    assert!(why.contains(&garbage_version) && why.contains(&too_old) && why.contains("older than"), "{why}");
}

/// A candidate that dies by a signal while probed, and one that is alive but never answers,
/// are told apart: a crash is not a refusal, and silence is not a crash.
#[tokio::test]
async fn a_candidate_killed_while_probed_is_told_from_one_that_never_answered() {
    let sb = Sandbox::new("signals");
    let killed_in_handshake = sb.codex("s1/codex", Fake::good().handshake("kill -KILL $$"));
    let killed_in_version = sb.codex("s2/codex", Fake::good().after_version("kill -SEGV $$"));
    let silent = sb.codex("s3/codex", Fake::good().handshake("sleep 30"));
    let left_quietly = sb.codex("s4/codex", Fake::good().handshake("exit 0"));
    let mute = sb.codex("s5/codex", Fake::good().handshake("exec >&-; sleep 30"));
    let path = (1..=5).map(|i| sb.path(&format!("s{i}"))).collect::<Vec<_>>().join(":");
    let mut env = sb.env(&[("PATH", path)]);
    env.set(TIMEOUT_VAR.into(), "1000".into());
    let d = discover_env(env).await;
    let reason = |p: &str| candidate(&d, p).reason.clone().unwrap_or_default();
    let expected = [
        (&killed_in_handshake, "`app-server` was killed by signal 9 (SIGKILL) before answering `initialize`"),
        (&killed_in_version, "`--version` was killed by signal 11 (SIGSEGV) while probed"),
        (&silent, "`app-server` did not answer `initialize` within 1000 ms"),
        (&left_quietly, "`app-server` exited with code 0 without answering `initialize`"),
        (&mute, "`app-server` closed its output without answering `initialize` and did not exit"),
    ];
    for (path, text) in expected {
        assert!(reason(path).starts_with(text), "{path}: {}", reason(path));
        assert!(!candidate(&d, path).usable, "{path}");
    }
    // Every reason is its own.
    let mut reasons: Vec<String> = expected.iter().map(|(p, _)| reason(p)).collect();
    reasons.sort();
    reasons.dedup();
    assert_eq!(reasons.len(), expected.len(), "{reasons:#?}");
    // The killed `--version` never got a handshake.
    assert_eq!(sb.calls(&killed_in_version).len(), 1);
    assert!(!d.available);
}

#[tokio::test]
async fn nothing_found_is_unavailable_with_what_was_searched() {
    let sb = Sandbox::new("empty");
    let d = discover_env(sb.env(&[("PATH", sb.dir("empty"))])).await;
    assert!(!d.available);
    assert!(d.candidates.is_empty());
    let why = d.reason.as_deref().unwrap();
    assert!(why.starts_with("no Codex CLI was found"), "{why}");
    assert!(why.contains("SHELL is not set") && why.contains("1 directories on PATH"), "{why}");
}

#[tokio::test]
async fn a_hanging_login_shell_does_not_break_discovery() {
    let sb = Sandbox::new("hangshell");
    let process_bin = sb.codex("process/codex", Fake::good());
    let shell = sb.script(
        "shell/hangsh",
        &format!("#!/bin/sh\necho $$ > '{}'\necho 'loading…'\nexec /bin/sleep 30\n", sb.path("shell.pid")),
    );
    let mut env = sb.env(&[("SHELL", shell), ("PATH", sb.path("process"))]);
    env.set(LOGIN_SHELL_TIMEOUT_VAR.into(), "300".into());
    let started = Instant::now();
    let d = discover_env(env).await;
    assert!(started.elapsed() < std::time::Duration::from_millis(2500), "{:?}", started.elapsed());
    assert_eq!(sources(&d), vec![Source::ProcessPath]);
    assert_eq!(d.selected.as_ref().unwrap().path, process_bin);
    let pid: i32 = std::fs::read_to_string(sb.path("shell.pid")).unwrap().trim().parse().unwrap();
    assert!(!alive(pid), "the login shell {pid} survived");
}

#[tokio::test]
async fn a_login_shell_with_banners_and_a_lingering_exit() {
    let sb = Sandbox::new("noisyshell");
    let login_bin = sb.codex("login/codex", Fake::good());
    // Prints the PATH block among banners, then hangs instead of exiting: the block counts.
    let shell = sb.script(
        "shell/noisy",
        &format!(
            "#!/bin/sh\necho 'Last login: today'\nprintf '\\033[?2004h'\nfor a; do last=$a; done\nPATH='{}:{}' /bin/sh -c \"$last\"\necho 'oh-my-fakeshell'\nexec /bin/sleep 30\n",
            sb.path("login"),
            sb.tools()
        ),
    );
    let env = sb.env(&[("SHELL", shell), ("PATH", sb.dir("empty"))]);
    let started = Instant::now();
    let d = discover_env(env).await;
    assert!(started.elapsed() < std::time::Duration::from_millis(2500), "{:?}", started.elapsed());
    assert_eq!(sources(&d), vec![Source::LoginShellPath], "{d:#?}");
    assert_eq!(d.selected.as_ref().unwrap().path, login_bin);
}

/// A fake `node` that runs its script with sh (the fake launcher is a shell script after its
/// `#!/usr/bin/env node` line).
const FAKE_NODE: &str = "#!/bin/sh\nscript=$1\nshift\nexec /bin/sh \"$script\" \"$@\"\n";

#[tokio::test]
async fn a_launcher_without_node_on_path_runs_through_the_node_beside_it() {
    let sb = Sandbox::new("launcher");
    // npm under nvm, not on the (GUI) process PATH: bin/codex links to the package's
    // script; node sits in bin/.
    let prefix = "home/.nvm/versions/node/v22.0.0";
    let body = Fake::good().render(&sb.path("calls.log")).replacen("#!/bin/sh", "#!/usr/bin/env node", 1);
    let script = sb.script(&format!("{prefix}/lib/node_modules/@openai/codex/bin/codex.js"), &body);
    let bin = sb.dir(&format!("{prefix}/bin"));
    std::os::unix::fs::symlink(&script, format!("{bin}/codex")).unwrap();
    let node = sb.script(&format!("{prefix}/bin/node"), FAKE_NODE);
    // And a launcher on the process PATH with no node anywhere near it.
    let lonely = sb.script("lonely/codex", &body);
    let env = sb.env(&[("PATH", sb.path("lonely"))]);
    let d = discover_env(env).await;

    let launcher = candidate(&d, &format!("{bin}/codex"));
    assert_eq!(launcher.source, Source::KnownDir);
    assert!(launcher.usable, "{launcher:?}");
    assert_eq!(launcher.launcher, Some(vec![node.clone(), script.clone()]));
    assert_eq!(launcher.launch().argv(), vec![node.clone(), script.clone()]);
    assert_eq!(d.selected.as_ref().unwrap().path, format!("{bin}/codex"));
    let lonely = candidate(&d, &lonely);
    assert!(!lonely.usable);
    assert!(lonely.reason.as_deref().unwrap().contains("no `node` on PATH"), "{lonely:?}");

    // With node on PATH both launchers run directly.
    let env = sb.env(&[("PATH", format!("{}:{bin}", sb.path("lonely")))]);
    let d = discover_env(env).await;
    assert_eq!(d.candidates.len(), 2);
    assert!(d.candidates.iter().all(|c| c.usable && c.launcher.is_none()), "{d:#?}");
}

#[tokio::test]
async fn the_same_file_is_probed_once() {
    let sb = Sandbox::new("dedup");
    let real = sb.codex("process/codex", Fake::good());
    sb.dir("home/.local/bin");
    std::os::unix::fs::symlink(&real, sb.path("home/.local/bin/codex")).unwrap();
    std::os::unix::fs::symlink(sb.path("process"), sb.path("alias")).unwrap();
    let env = sb.env(&[("PATH", format!("{}:{}:{}", sb.path("process"), sb.path("alias"), sb.path("process")))]);
    let d = discover_env(env).await;
    assert_eq!(d.candidates.len(), 1, "{d:#?}");
    assert_eq!(d.candidates[0].path, real);
    assert_eq!(d.candidates[0].source, Source::ProcessPath);
    assert_eq!(sb.calls(&real).len(), 2, "one --version and one app-server: {:?}", sb.calls(&real));
}

#[tokio::test]
async fn results_are_cached_per_environment_until_refreshed() {
    let sb = Sandbox::new("cache");
    let bin = sb.codex("process/codex", Fake::good());
    let env = sb.env(&[("PATH", sb.path("process"))]);
    let first = discover_env(env.clone()).await;
    assert_eq!(sb.calls(&bin).len(), 2);
    let again = discover_env(env.clone()).await;
    assert!(Arc::ptr_eq(&first, &again));
    assert_eq!(sb.calls(&bin).len(), 2, "answered from the cache");

    // Concurrent callers share one run.
    let mut other = env.clone();
    other.set("SOME_VAR".into(), "1".into());
    let (a, b) = tokio::join!(discover_env(other.clone()), discover_env(other.clone()));
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(sb.calls(&bin).len(), 4, "a different environment is discovered again, once");

    let refreshed = discover_in(env.clone(), None, true, Os::Unix).await;
    assert!(!Arc::ptr_eq(&first, &refreshed));
    assert_eq!(sb.calls(&bin).len(), 6);
    // The refreshed result is what the cache answers from now on.
    assert!(Arc::ptr_eq(&refreshed, &discover_env(env).await));
}

#[tokio::test]
async fn eight_slow_handshakes_run_in_parallel() {
    let sb = Sandbox::new("parallel");
    let begun = sb.path("begun.log");
    // A barrier serial probing could never pass (the first handshake would time out), then
    // 300 ms each.
    let slow = Fake::good().handshake(&format!(
        "echo $$ >> '{begun}'\nwhile [ \"$(wc -l < '{begun}')\" -lt 8 ]; do sleep 0.02; done\nsleep 0.3; printf '%s\\n' '{AGENT}'"
    ));
    let dirs: Vec<String> = (0..8)
        .map(|i| {
            sb.codex(&format!("p{i}/codex"), slow.clone());
            sb.path(&format!("p{i}"))
        })
        .collect();
    let env = sb.env(&[("PATH", dirs.join(":"))]);
    let started = Instant::now();
    let d = discover_env(env).await;
    let elapsed = started.elapsed();
    assert_eq!(d.candidates.len(), 8);
    assert!(d.candidates.iter().all(|c| c.usable), "{d:#?}");
    // One after another, the 300 ms alone would add up to 2.4 s.
    assert!(elapsed < std::time::Duration::from_millis(2400), "took {elapsed:?}");
}

#[tokio::test]
async fn installed_node_versions_rank_newest_first() {
    let sb = Sandbox::new("nvm");
    let old = sb.codex("home/.nvm/versions/node/v9.11.2/bin/codex", Fake::good());
    let new = sb.codex("home/.nvm/versions/node/v22.1.0/bin/codex", Fake::good());
    let mid = sb.codex("home/.nvm/versions/node/v20.10.0/bin/codex", Fake::good());
    let d = discover_env(sb.env(&[("PATH", sb.dir("empty"))])).await;
    let paths: Vec<&str> = d.candidates.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, vec![new.as_str(), &mid, &old]);
    assert!(d.candidates.iter().all(|c| c.source == Source::KnownDir));
}

#[tokio::test]
async fn wsl_discovery_and_launch_go_through_wsl_exe() {
    let sb = Sandbox::new("wsl");
    let log = sb.path("wsl.log");
    let stand_in = sb.script(
        "win/wsl.exe",
        &format!(
            r#"#!/bin/sh
# One short write per call, so that concurrent calls cannot interleave in the log.
line="$1 $2 $3 $4"
case $5 in *'
'*) line="$line <script>" ;; *) line="$line $5" ;; esac
printf '%s\n' "$line" >> '{log}'
[ "$1" = -d ] || {{ echo "wsl.exe: expected -d" >&2; exit 90; }}
[ "$3" = --exec ] || {{ echo "wsl.exe: expected --exec" >&2; exit 91; }}
shift 3
exec "$@"
"#
        ),
    );
    let login_bin = sb.codex("distro/login/codex", Fake::good());
    let process_bin = sb.codex("distro/usr/bin/codex", Fake::good());
    let env = sb.env(&[
        (wsl::WSL_EXE_VAR, stand_in.clone()),
        ("SHELL", fake_shell(&sb, &sb.path("distro/login"))),
        ("PATH", sb.path("distro/usr/bin")),
    ]);
    let d = discover_in(env, Some(Wsl { distro: "Ubuntu".into() }), false, Os::Unix).await;
    assert!(d.available, "{d:#?}");
    assert_eq!(sources(&d), vec![Source::LoginShellPath, Source::ProcessPath]);
    let selected = d.selected.as_ref().unwrap();
    assert_eq!(selected.path, login_bin);
    assert_eq!(
        selected.launcher.as_deref(),
        Some(&[stand_in.clone(), "-d".into(), "Ubuntu".into(), "--exec".into(), login_bin.clone()][..])
    );
    let launch = selected.launch();
    assert_eq!(launch.program, PathBuf::from(&stand_in));
    assert_eq!(launch.prefix_args, ["-d", "Ubuntu", "--exec", login_bin.as_str()].map(std::ffi::OsString::from));
    assert!(candidate(&d, &process_bin).usable);
    // Every process went through wsl.exe: the environment, the login shell, the file
    // inspection, and both probes of both candidates.
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.lines().all(|l| l.starts_with("-d Ubuntu --exec ")), "{calls}");
    assert_eq!(calls.lines().filter(|l| l.starts_with("-d Ubuntu --exec /bin/sh -c")).count(), 4, "{calls}");
    assert!(calls.contains(&format!("--exec {login_bin} --version")));
    assert!(calls.contains(&format!("--exec {login_bin} app-server")));
    assert!(calls.contains(&format!("--exec {process_bin} app-server")));

    // A missing wsl.exe makes discovery unavailable with the reason.
    let env = sb.env(&[(wsl::WSL_EXE_VAR, String::new()), ("PATH", sb.dir("empty"))]);
    let d = discover_in(env, Some(Wsl { distro: "Ubuntu".into() }), false, Os::Unix).await;
    assert!(!d.available);
    assert!(d.reason.as_deref().unwrap().contains("wsl.exe was not found"));
    // A failing distribution too.
    let failing = sb
        .script("win/failing.exe", "#!/bin/sh\necho 'There is no distribution with the supplied name.' >&2\nexit 1\n");
    let env = sb.env(&[(wsl::WSL_EXE_VAR, failing)]);
    let d = discover_in(env, Some(Wsl { distro: "Nope".into() }), false, Os::Unix).await;
    assert!(!d.available);
    assert!(d.reason.as_deref().unwrap().contains("no distribution with the supplied name"), "{d:?}");
}

#[tokio::test]
async fn wsl_launcher_through_the_node_beside_it() {
    let sb = Sandbox::new("wslnode");
    let stand_in = sb.script("win/wsl.exe", "#!/bin/sh\nshift 3\nexec \"$@\"\n");
    let body = Fake::good().render(&sb.path("calls.log")).replacen("#!/bin/sh", "#!/usr/bin/env node", 1);
    let script = sb.script("distro/asdf/installs/nodejs/22/bin/codex", &body);
    let node = sb.script("distro/asdf/installs/nodejs/22/bin/node", FAKE_NODE);
    let env = sb.env(&[(wsl::WSL_EXE_VAR, stand_in.clone()), ("PATH", sb.path("distro/asdf/installs/nodejs/22/bin"))]);
    // node is on that PATH: direct.
    let d = discover_in(env, Some(Wsl { distro: "Ubuntu".into() }), false, Os::Unix).await;
    assert_eq!(d.selected.as_ref().unwrap().launcher.as_ref().unwrap()[3..], ["--exec".to_string(), script.clone()]);
    // Found through RENNET_CODEX_BIN with node not on PATH: through the node beside it.
    let env =
        sb.env(&[(wsl::WSL_EXE_VAR, stand_in.clone()), (CODEX_BIN_VAR, script.clone()), ("PATH", sb.dir("empty"))]);
    let d = discover_in(env, Some(Wsl { distro: "Ubuntu".into() }), false, Os::Unix).await;
    let selected = d.selected.as_ref().unwrap_or_else(|| panic!("{d:#?}"));
    assert_eq!(selected.launcher.as_ref().unwrap()[3..], ["--exec".to_string(), node, script]);
}

/// The pinned `@openai/codex` binary from node_modules (resolved the way Node would).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn pinned_codex() -> Option<String> {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let script = "const path = require('path');\
        const launcher = path.dirname(require.resolve('@openai/codex/package.json'));\
        const platform = path.dirname(require.resolve('@openai/codex-linux-x64/package.json', { paths: [launcher] }));\
        process.stdout.write(path.join(platform, 'vendor/x86_64-unknown-linux-musl/bin/codex'));";
    let out = std::process::Command::new("node").arg("-e").arg(script).current_dir(manifest).output().ok()?;
    let path = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && Path::new(&path).is_file()).then_some(path)
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[tokio::test]
async fn the_pinned_codex_passes_every_probe() {
    let Some(codex) = pinned_codex() else {
        assert!(
            !Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/node_modules/@openai/codex")).exists(),
            "@openai/codex is installed but its binary could not be resolved"
        );
        eprintln!("skipped: @openai/codex is not installed");
        return;
    };
    let sb = Sandbox::new("real");
    let home = sb.dir("codex-home");
    let env = sb.env(&[
        (CODEX_BIN_VAR, codex.clone()),
        ("HOME", sb.path("home")),
        ("CODEX_HOME", home),
        ("PATH", "/usr/bin:/bin".into()),
        (TIMEOUT_VAR, "20000".into()),
    ]);
    let d = discover_env(env).await;
    let selected = d.selected.as_ref().unwrap_or_else(|| panic!("{d:#?}"));
    assert_eq!(selected.path, codex);
    assert_eq!(selected.source, Source::Env);
    assert_eq!(selected.version.as_deref(), Some(MAX_TESTED_VERSION));
    assert!(selected.usable && selected.reason.is_none());
    assert_eq!(selected.launch().program, PathBuf::from(&codex));
    // No probe child of it is left.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let exe = std::fs::read_link(e.path().join("exe")).ok()?;
            let environ = std::fs::read(e.path().join("environ")).ok()?;
            (exe == Path::new(&codex) && String::from_utf8_lossy(&environ).contains(&sb.path("codex-home")))
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    assert!(survivors.is_empty(), "probe children survived: {survivors:?}");
}

#[test]
fn options_from_json() {
    let o = parse_options(None).unwrap();
    assert!(o.locus.is_none() && o.env.is_empty() && !o.refresh);
    let o = parse_options(Some("null")).unwrap();
    assert!(o.locus.is_none());
    let o = parse_options(Some(r#"{"locus":{"wsl":{"distro":"Ubuntu"}},"env":{"A":"1"},"refresh":true}"#)).unwrap();
    assert_eq!(o.locus, Some(Wsl { distro: "Ubuntu".into() }));
    assert_eq!(o.env, vec![("A".to_string(), "1".to_string())]);
    assert!(o.refresh);
    let err = |json: &str| parse_options(Some(json)).unwrap_err();
    assert!(err(r#"{"env":{"A":1}}"#).starts_with("options.env.A:"), "{}", err(r#"{"env":{"A":1}}"#));
    assert!(err(r#"{"refresh":"yes"}"#).starts_with("options.refresh:"));
    assert!(err(r#"{"locus":{"wsl":{}}}"#).starts_with("options.locus.wsl"), "{}", err(r#"{"locus":{"wsl":{}}}"#));
    assert!(err(r#"{"locus":{"wsl":{"distro":""}}}"#).starts_with("options.locus.wsl.distro"));
    assert!(err(r#"{"locus":{"docker":{}}}"#).starts_with("options.locus"));
    assert!(err(r#"{"refesh":true}"#).contains("refesh"));
    assert!(err(r#"{"env":{"A=B":"1"}}"#).starts_with("options.env"));
    assert!(err("[1]").starts_with("options"));
}

/// Polls (bounded, generously) until `done`; whether it came.
async fn until(done: impl Fn() -> bool) -> bool {
    for _ in 0..1000 {
        if done() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    done()
}

fn pid_in(path: &str) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[tokio::test]
async fn the_last_waiter_to_leave_stops_discovery_and_its_processes_are_gone_when_it_returns() {
    let sb = Sandbox::new("leave");
    // A login shell and a handshake that never answer, each leaving a pid file and a
    // background writer behind in its group; neither may run once `leave` returned.
    let shell = sb.script(
        "shell/slowsh",
        &format!(
            "#!/bin/sh\necho $$ > '{}'\n(while :; do echo x >> '{}'; sleep 0.01; done) &\nexec /bin/sleep 30\n",
            sb.path("shell.pid"),
            sb.path("shell.writes")
        ),
    );
    let bin = sb.codex(
        "process/codex",
        Fake::good().handshake(&format!("echo $$ > '{}'\nexec /bin/sleep 30", sb.path("handshake.pid"))),
    );
    let env = sb.env(&[
        ("SHELL", shell),
        ("PATH", sb.path("process")),
        (TIMEOUT_VAR, "20000".into()),
        (LOGIN_SHELL_TIMEOUT_VAR, "20000".into()),
    ]);
    let first = join_in(env.clone(), None, false, Os::Unix);
    let second = join_in(env.clone(), None, false, Os::Unix);
    assert!(until(|| pid_in(&sb.path("shell.pid")).is_some() && pid_in(&sb.path("handshake.pid")).is_some()).await);
    let (shell_pid, probe_pid) = (pid_in(&sb.path("shell.pid")).unwrap(), pid_in(&sb.path("handshake.pid")).unwrap());

    // Another waiter remains: the discovery goes on.
    first.leave().await;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(alive(shell_pid) && alive(probe_pid));

    second.leave().await;
    assert!(!alive(shell_pid), "the login shell survived its discovery");
    assert!(!alive(probe_pid), "the handshake probe survived its discovery");
    assert!(live_in_group(shell_pid).is_empty() && live_in_group(probe_pid).is_empty());
    // Nothing writes into the directory any more.
    let writes = std::fs::metadata(sb.path("shell.writes")).map(|m| m.len()).unwrap_or(0);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(std::fs::metadata(sb.path("shell.writes")).map(|m| m.len()).unwrap_or(0), writes);

    // The stopped run was not cached: the next caller discovers again.
    let calls = sb.calls(&bin).len();
    let again = join_in(env, None, false, Os::Unix);
    assert!(until(|| sb.calls(&bin).len() > calls).await, "a stopped discovery must not answer later callers");
    again.leave().await;
}

#[tokio::test]
async fn not_found_is_not_cached_and_a_changed_selection_is_discovered_again() {
    let sb = Sandbox::new("recache");
    let env = sb.env(&[("PATH", sb.path("process"))]);
    let none = discover_env(env.clone()).await;
    assert!(!none.available);
    // Installed while the app runs: found by the next call.
    let bin = sb.codex("process/codex", Fake::good());
    let found = discover_env(env.clone()).await;
    assert_eq!(found.selected.as_ref().map(|s| s.path.as_str()), Some(bin.as_str()));
    assert!(Arc::ptr_eq(&found, &discover_env(env.clone()).await), "a selection is cached");
    let calls = sb.calls(&bin).len();
    // Replaced by another version (size and modification time differ): probed again.
    sb.codex("process/codex", Fake::version("codex-cli 0.171.1 (replaced)"));
    let replaced = discover_env(env.clone()).await;
    assert!(!Arc::ptr_eq(&found, &replaced));
    assert!(sb.calls(&bin).len() > calls);
    assert_eq!(replaced.selected.as_ref().and_then(|s| s.version.as_deref()), Some("0.171.1"));
    // Removed: discovered again, and not found.
    std::fs::remove_file(&bin).unwrap();
    assert!(!discover_env(env).await.available);
}
