//! Discovery inside a WSL distribution, through a stand-in `wsl.exe`.

use super::*;
use crate::discovery::wsl::WSL_EXE_VAR;

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
        (WSL_EXE_VAR, stand_in.clone()),
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
    let env = sb.env(&[(WSL_EXE_VAR, String::new()), ("PATH", sb.dir("empty"))]);
    let d = discover_in(env, Some(Wsl { distro: "Ubuntu".into() }), false, Os::Unix).await;
    assert!(!d.available);
    assert!(d.reason.as_deref().unwrap().contains("wsl.exe was not found"));
    // A failing distribution too.
    let failing = sb
        .script("win/failing.exe", "#!/bin/sh\necho 'There is no distribution with the supplied name.' >&2\nexit 1\n");
    let env = sb.env(&[(WSL_EXE_VAR, failing)]);
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
    let env = sb.env(&[(WSL_EXE_VAR, stand_in.clone()), ("PATH", sb.path("distro/asdf/installs/nodejs/22/bin"))]);
    // node is on that PATH: direct.
    let d = discover_in(env, Some(Wsl { distro: "Ubuntu".into() }), false, Os::Unix).await;
    assert_eq!(d.selected.as_ref().unwrap().launcher.as_ref().unwrap()[3..], ["--exec".to_string(), script.clone()]);
    // Found through RENNET_CODEX_BIN with node not on PATH: through the node beside it.
    let env = sb.env(&[(WSL_EXE_VAR, stand_in.clone()), (CODEX_BIN_VAR, script.clone()), ("PATH", sb.dir("empty"))]);
    let d = discover_in(env, Some(Wsl { distro: "Ubuntu".into() }), false, Os::Unix).await;
    let selected = d.selected.as_ref().unwrap_or_else(|| panic!("{d:#?}"));
    assert_eq!(selected.launcher.as_ref().unwrap()[3..], ["--exec".to_string(), node, script]);
}
