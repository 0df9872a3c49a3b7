//! The login shell's PATH: one that hangs, and one that prints around it and lingers.

use super::*;

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
