//! The login shell's PATH: one that hangs, and one that prints around it and lingers.

use super::*;

#[tokio::test]
async fn a_hanging_login_shell_does_not_break_discovery() {
    let sb = Sandbox::new("hangshell");
    let process_bin = sb.codex("process/codex", Fake::good());
    // Were it left to end by itself, it would leave `shell.late` behind: ended at its
    // timeout, it cannot.
    let shell = sb.script(
        "shell/hangsh",
        &format!(
            "#!/bin/sh\necho $$ > '{}'\necho 'loading…'\n/bin/sleep 30\necho late > '{}'\n",
            sb.path("shell.pid"),
            sb.path("shell.late")
        ),
    );
    let mut env = sb.env(&[("SHELL", shell), ("PATH", sb.path("process"))]);
    env.set(LOGIN_SHELL_TIMEOUT_VAR.into(), "300".into());
    let d = discover_env(env.clone()).await;
    assert_eq!(sources(&d), vec![Source::ProcessPath]);
    assert_eq!(d.selected.as_ref().unwrap().path, process_bin);
    let pid: i32 = std::fs::read_to_string(sb.path("shell.pid")).unwrap().trim().parse().unwrap();
    assert!(!alive(pid), "the login shell {pid} survived");
    assert!(!Path::new(&sb.path("shell.late")).exists(), "discovery waited for the login shell to end");
    // With nothing found, the reason says so.
    env.set("PATH".into(), sb.dir("empty"));
    let d = discover_env(env).await;
    let why = d.reason.as_deref().unwrap_or_default();
    assert!(why.contains("the login shell did not answer within 300 ms"), "{why}");
}

#[tokio::test]
async fn a_login_shell_with_banners_and_a_lingering_exit() {
    let sb = Sandbox::new("noisyshell");
    let login_bin = sb.codex("login/codex", Fake::good());
    // Prints the PATH block among banners, then lingers instead of exiting: the block counts,
    // and the shell is ended once it came. Waited for until it left by itself (its timeout is
    // longer than its lingering), it would leave `shell.late` behind.
    let shell = sb.script(
        "shell/noisy",
        &format!(
            "#!/bin/sh\necho $$ > '{pid}'\necho 'Last login: today'\nprintf '\\033[?2004h'\nfor a; do last=$a; done\nPATH='{}:{}' /bin/sh -c \"$last\"\necho 'oh-my-fakeshell'\n/bin/sleep 30\necho late > '{late}'\n",
            sb.path("login"),
            sb.tools(),
            pid = sb.path("shell.pid"),
            late = sb.path("shell.late"),
        ),
    );
    let env = sb.env(&[("SHELL", shell), ("PATH", sb.dir("empty")), (LOGIN_SHELL_TIMEOUT_VAR, "60000".into())]);
    let d = discover_env(env).await;
    assert_eq!(sources(&d), vec![Source::LoginShellPath], "{d:#?}");
    assert_eq!(d.selected.as_ref().unwrap().path, login_bin);
    let pid: i32 = std::fs::read_to_string(sb.path("shell.pid")).unwrap().trim().parse().unwrap();
    assert!(!alive(pid), "the login shell {pid} survived");
    assert!(!Path::new(&sb.path("shell.late")).exists(), "discovery waited for the login shell to end");
}
