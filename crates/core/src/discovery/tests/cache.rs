//! One discovery shared per locus and environment: kept while its selection stands, never
//! when nothing was found, and stopped with its processes when the last caller leaves.

use super::*;

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
