//! Discovery against fake candidates: shell scripts in temporary directories that answer
//! `--version` and, for `app-server`, read the `initialize` line and answer it (or not).
//! Every environment input is given explicitly (nothing comes from this machine), and
//! system-wide directories live under `RENNET_DISCOVERY_ROOT` inside the sandbox.

use super::env::{Env, Os};
use super::locations::ROOT_VAR;
use super::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

mod cache;
mod launchers;
mod login_shell;
mod probes;
mod ranking;
mod wsl;

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

/// A fake `node` that runs its script with sh (the fake launcher is a shell script after its
/// `#!/usr/bin/env node` line).
const FAKE_NODE: &str = "#!/bin/sh\nscript=$1\nshift\nexec /bin/sh \"$script\" \"$@\"\n";
