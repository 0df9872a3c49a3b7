//! What a child of the package is given on Windows, asked of the child itself: the test binary
//! starts itself through [`spawn`] and an ignored test answers from inside the Job Object and
//! the console it got. process-wrap once dropped both the job's kill-on-close and the
//! creation flags silently (its wrappers were gone before its hooks read them); only running a
//! child shows it.

use super::{spawn, End, Launch, Spec};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use windows::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
use windows::Win32::System::Console::{GetConsoleProcessList, GetConsoleWindow};
use windows::Win32::System::JobObjects::IsProcessInJob;
use windows::Win32::System::Threading::{
    GetCurrentProcess, GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// Which role the test binary plays when started by these tests.
const ROLE_VAR: &str = "RENNET_TEST_WINDOWS_ROLE";
const ROLE_TEST: &str = "process::windows_tests::role";

/// Run as a child by the tests below; does nothing when run by the harness.
#[tokio::test]
#[ignore = "run as a child by the Windows process tests"]
async fn role() {
    match std::env::var(ROLE_VAR).as_deref() {
        Ok("report") => {
            let mut in_job = windows::core::BOOL(0);
            // SAFETY: queries about this process, into values owned here.
            unsafe { IsProcessInJob(GetCurrentProcess(), None, &mut in_job) }.unwrap();
            let window = unsafe { GetConsoleWindow() };
            let mut pids = [0u32; 64];
            let on_console = unsafe { GetConsoleProcessList(&mut pids) };
            say(&format!(
                "in_job={} console_window={} console_processes={on_console}",
                in_job.as_bool(),
                !window.is_invalid()
            ));
        }
        // Starts a sleeper through the package's spawn, says its pid, and waits to be killed.
        Ok("host") => {
            let mut child = spawn(&self_as("sleep"), None).unwrap();
            say(&format!("sleeper={}", child.pid()));
            tokio::time::sleep(Duration::from_secs(600)).await;
            child.end(End::Kill).await;
        }
        Ok("sleep") => std::thread::sleep(Duration::from_secs(600)),
        _ => {}
    }
}

fn say(report: &str) {
    println!("windows-role {report}");
}

/// The test binary in `role`, as the package would start it.
fn self_as(role: &str) -> Spec {
    let exe = std::env::current_exe().unwrap();
    let args = ["--ignored", "--exact", "--nocapture", "--test-threads=1", ROLE_TEST];
    let mut launch = Launch::new(exe, args);
    launch.env.push((ROLE_VAR.to_string(), role.to_string()));
    launch.spec(std::iter::empty::<&str>())
}

/// Reads the child's stdout up to its report, and returns the report's `name=value` fields.
async fn report_of(stdout: tokio::process::ChildStdout) -> Vec<(String, String)> {
    let mut lines = BufReader::new(stdout).lines();
    let read = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            // The harness prints the test's name before the report, on the same line.
            if let Some((_, report)) = line.split_once("windows-role ") {
                return report
                    .split(' ')
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect();
            }
        }
        panic!("the child ended without a report");
    };
    tokio::time::timeout(Duration::from_secs(60), read).await.expect("the child reports")
}

fn field<'a>(report: &'a [(String, String)], name: &str) -> &'a str {
    report.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("{name} in {report:?}"))
}

fn is_running(pid: u32) -> bool {
    // SAFETY: a handle opened and closed here.
    let Ok(handle) = (unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid) }) else {
        return false;
    };
    let mut code = 0u32;
    let queried = unsafe { GetExitCodeProcess(handle, &mut code) };
    let _ = unsafe { CloseHandle(handle) };
    queried.is_ok() && code == STILL_ACTIVE.0 as u32
}

#[tokio::test]
async fn a_child_has_its_own_job_and_a_console_without_a_window() {
    let mut child = spawn(&self_as("report"), None).unwrap();
    let report = report_of(child.stdout.take().unwrap()).await;
    child.end(End::Polite(Duration::from_secs(5))).await;
    assert_eq!(field(&report, "in_job"), "true", "the child is in a Job Object");
    // CREATE_NO_WINDOW: a console of its own, never shown, not one shared with this process.
    assert_eq!(field(&report, "console_window"), "false", "the child's console has no window");
    assert_eq!(field(&report, "console_processes"), "1", "processes attached to the child's console");
}

#[tokio::test]
async fn the_job_ends_with_the_host_that_started_it() {
    // The host is started plainly (no job of ours), as an app's Node process is.
    let mut host = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "--nocapture", "--test-threads=1", ROLE_TEST])
        .env(ROLE_VAR, "host")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let report = report_of(host.stdout.take().unwrap()).await;
    let sleeper: u32 = field(&report, "sleeper").parse().unwrap();
    assert!(is_running(sleeper), "the sleeper runs while its host does");
    // As Task Manager or a supervisor ends an app: nothing of the host runs after it, and the
    // kernel closes its handles, the job's among them.
    let host_pid = host.id().unwrap().to_string();
    let killed = std::process::Command::new("taskkill").args(["/F", "/PID", &host_pid]).output().unwrap();
    assert!(killed.status.success(), "taskkill: {}", String::from_utf8_lossy(&killed.stderr));
    host.wait().await.unwrap();
    let gone = Instant::now() + Duration::from_secs(20);
    while is_running(sleeper) && Instant::now() < gone {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let left = is_running(sleeper);
    if left {
        // Whatever the verdict, nothing of the test stays.
        // SAFETY: a handle opened and closed here.
        if let Ok(h) = unsafe { OpenProcess(windows::Win32::System::Threading::PROCESS_TERMINATE, false, sleeper) } {
            let _ = unsafe { windows::Win32::System::Threading::TerminateProcess(h, 1) };
            let _ = unsafe { CloseHandle(h) };
        }
    }
    assert!(!left, "the job's kill-on-close ended the sleeper with its host");
}
