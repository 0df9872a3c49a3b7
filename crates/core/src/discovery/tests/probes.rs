//! The probes of each candidate: why each failing one was rejected, told apart by how it
//! failed; all of them at once; and the pinned Codex passing every one.

use super::*;

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

    let d = discover_env(env).await;
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

/// The handshake has a limit of its own (`RENNET_DISCOVERY_HANDSHAKE_TIMEOUT_MS`) over the
/// per-step one: a handshake that never answers is given up at it, while a `--version` that
/// takes longer than it still gets its answer in, within the per-step limit.
#[tokio::test]
async fn the_handshake_has_a_limit_of_its_own() {
    let sb = Sandbox::new("handshake-limit");
    let hangs = sb.codex(
        "p1/codex",
        Fake::good()
            .after_version("sleep 1.5; exit 0")
            .handshake(&format!("echo $$ > '{}'; sleep 30", sb.path("hang.pid"))),
    );
    let env = sb.env(&[("PATH", sb.path("p1")), (TIMEOUT_VAR, "20000".into()), (HANDSHAKE_TIMEOUT_VAR, "800".into())]);
    let d = discover_env(env).await;
    let probed = candidate(&d, &hangs);
    assert_eq!(probed.version.as_deref(), Some("0.171.0"), "{probed:?}");
    let reason = probed.reason.as_deref().unwrap_or_default();
    assert!(reason.starts_with("`app-server` did not answer `initialize` within 800 ms"), "{reason}");
    let pid: i32 = std::fs::read_to_string(sb.path("hang.pid")).unwrap().trim().parse().unwrap();
    assert!(!alive(pid), "the hanging probe {pid} survived");
    assert_eq!(live_in_group(pid), Vec::<i32>::new(), "its `sleep` survived");
}

#[tokio::test]
async fn eight_slow_handshakes_run_in_parallel() {
    let sb = Sandbox::new("parallel");
    let begun = sb.path("begun.log");
    // A barrier serial probing could never pass: each handshake answers only once all eight
    // have begun, so one after another the first would time out, and every other after it.
    let slow = Fake::good().handshake(&format!(
        "echo $$ >> '{begun}'\nwhile [ \"$(wc -l < '{begun}')\" -lt 8 ]; do sleep 0.02; done\nprintf '%s\\n' '{AGENT}'"
    ));
    let dirs: Vec<String> = (0..8)
        .map(|i| {
            sb.codex(&format!("p{i}/codex"), slow.clone());
            sb.path(&format!("p{i}"))
        })
        .collect();
    // Time enough for eight children to start on a loaded machine; the barrier, not the
    // clock, tells parallel from serial.
    let env = sb.env(&[("PATH", dirs.join(":")), (TIMEOUT_VAR, "20000".into())]);
    let d = discover_env(env).await;
    assert_eq!(d.candidates.len(), 8);
    assert!(d.candidates.iter().all(|c| c.usable), "{d:#?}");
}

/// The handshake probe speaks the handshake every run speaks (`exchange::handshake`), line for
/// line: `initialize`, and once it is answered, `initialized`.
#[tokio::test]
async fn the_handshake_probe_is_the_handshake_of_a_run() {
    use crate::exchange::{handshake::handshake, Exchange, Owner};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    // What a run writes, to a scripted peer that answers `initialize` as the fakes do.
    struct Run;
    impl Owner for Run {
        type Wake = ();
    }
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let ((our_read, our_write), (their_read, mut their_write)) = (tokio::io::split(ours), tokio::io::split(theirs));
    let cancel = crate::cancel::Cancel::new();
    let conn = crate::rpc::Connection::new(crate::transport::FrameReader::new(our_read), our_write);
    let mut exchange = Exchange::new(conn, &cancel, std::time::Duration::from_secs(60));
    let peer = async {
        let mut lines = BufReader::new(their_read).lines();
        let initialize = lines.next_line().await.unwrap().expect("initialize");
        their_write.write_all(format!("{AGENT}\n").as_bytes()).await.unwrap();
        let next = lines.next_line().await.unwrap().expect("the line after the answer");
        vec![initialize, next]
    };
    let mut owner = Run;
    let (hello, run) = tokio::join!(handshake(&mut exchange, &mut owner, false), peer);
    assert!(hello.is_ok(), "the run's handshake failed");

    // What the probe writes: the fake keeps the `initialize` line it read and the line after.
    let sb = Sandbox::new("handshake");
    let heard = sb.path("heard.log");
    let codex = sb.codex(
        "h/codex",
        Fake::good().handshake(&format!(
            "printf '%s\\n' \"$line\" > '{heard}'\nprintf '%s\\n' '{AGENT}'\nIFS= read -r next\nprintf '%s\\n' \"$next\" >> '{heard}'"
        )),
    );
    // Time enough for the probe's child to start on a loaded machine.
    let env = sb.env(&[("PATH", sb.path("h")), (TIMEOUT_VAR, "60000".into())]);
    let d = discover_env(env).await;
    assert!(candidate(&d, &codex).usable, "{d:#?}");
    let probe: Vec<String> = std::fs::read_to_string(&heard).unwrap().lines().map(str::to_string).collect();
    assert_eq!(probe, run);
}

/// How a handshake that the exchange refused reads: the server's error verbatim, a result
/// without its `userAgent`, a line the protocol does not allow, and talk of anything but the
/// answer.
#[tokio::test]
async fn a_handshake_the_exchange_refused_says_why() {
    let sb = Sandbox::new("refused");
    let rejected = sb.codex(
        "r1/codex",
        Fake::good().handshake(r#"printf '%s\n' '{"id":1,"error":{"code":-32600,"message":"Not today"}}'"#),
    );
    let no_agent = sb.codex("r2/codex", Fake::good().handshake(r#"printf '%s\n' '{"id":1,"result":{}}'"#));
    let too_long = sb.codex(
        "r3/codex",
        Fake::good()
            .handshake(r#"printf '{"id":1,"result":"'; head -c 1100000 /dev/zero | tr '\000' x; printf '"}\n'"#),
    );
    let chatty = sb.codex(
        "r4/codex",
        Fake::good().handshake(
            r#"i=0; while [ $i -le 100 ]; do printf '%s\n' '{"method":"x/said","params":{}}'; i=$((i + 1)); done; sleep 30"#,
        ),
    );
    let path = (1..=4).map(|i| sb.path(&format!("r{i}"))).collect::<Vec<_>>().join(":");
    // Time enough for four children to start on a loaded machine; none of them waits for it.
    let env = sb.env(&[("PATH", path), (TIMEOUT_VAR, "60000".into())]);
    let d = discover_env(env).await;
    let reason = |p: &str| candidate(&d, p).reason.clone().unwrap_or_default();
    let expected = [
        (&rejected, "`app-server` rejected `initialize`: Not today (-32600)"),
        (&no_agent, "`app-server` answered `initialize` without a userAgent: {}"),
        (&too_long, "`app-server` did not answer `initialize`: a line from codex app-server exceeded 1048576 bytes"),
        (&chatty, "`app-server` sent 100 messages but no `initialize` response"),
    ];
    for (path, text) in expected {
        assert!(reason(path).starts_with(text), "{path}: {}", reason(path));
        assert!(!candidate(&d, path).usable, "{path}");
    }
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
