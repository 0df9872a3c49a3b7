//! The host's side: one guard per host while it has children of the package, a [`Ticket`] per
//! child (taken before the child starts, so that the guard already runs when it does), and the
//! lines of [`super::wire`] that tell the guard about each; and whether the next child would be
//! guarded, as `discoverCodex()` reports it.

use super::locate::program;
use super::marker::host_marker;
use super::unavailable::Unavailable;
use super::wire::{Kind, Message};
use super::SWITCH_VAR;
use crate::process::platform::{self, GuardLink};
use crate::process::tracking::Tracking;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// The running guard, as the host holds it.
struct Running {
    child: std::process::Child,
    program: PathBuf,
    link: GuardLink,
}

impl Running {
    fn send(&mut self, message: &Message, fd: Option<i32>) -> std::io::Result<()> {
        self.link.send(message.line().as_bytes(), fd)
    }
}

#[derive(Default)]
struct Client {
    guard: Option<Running>,
    /// Tickets out: children started or about to be.
    tickets: usize,
    /// That the guard is switched off, said once.
    said_off: bool,
}

fn client() -> &'static Mutex<Client> {
    static CLIENT: OnceLock<Mutex<Client>> = OnceLock::new();
    CLIENT.get_or_init(Default::default)
}

/// The guard executable of the guard that runs now, if one does.
fn running_program() -> Option<PathBuf> {
    client().lock().unwrap_or_else(|e| e.into_inner()).guard.as_ref().map(|running| running.program.clone())
}

/// Whether children are guarded, as `discoverCodex()` reports it (`hostGuard`).
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// A guard runs, or its executable is in place: turns may start.
    pub available: bool,
    /// The guard executable (`null` where none is needed or none was looked for).
    pub path: Option<String>,
    /// Why it is not available: what [`Unavailable`] says, or that it was switched off.
    pub reason: Option<String>,
}

/// The guard as the next child would find it. Where it is not needed (Windows), available
/// without a path.
pub fn status() -> Status {
    if !platform::GUARD_NEEDED {
        return Status { available: true, path: None, reason: None };
    }
    if let Some(program) = running_program() {
        return Status { available: true, path: Some(program.display().to_string()), reason: None };
    }
    match program() {
        Ok(Some(program)) => Status { available: true, path: Some(program.display().to_string()), reason: None },
        Ok(None) => Status {
            available: false,
            path: None,
            reason: Some(format!("switched off ({SWITCH_VAR}=off): children run without host-death protection")),
        },
        Err(why) => Status {
            available: false,
            path: why.path.as_ref().map(|p| p.display().to_string()),
            reason: Some(why.message()),
        },
    }
}

/// A child's place under the guard: taken before the child starts, so that the guard already
/// runs when it does; dropping it says the child is gone. A ticket never registered holds the
/// guard for what is about to start (a turn's discovery, inventory and child).
pub struct Ticket {
    pid: Option<i32>,
    /// A guard ran when it was taken (not switched off, nor needless on this platform).
    guarded: bool,
}

/// Takes a ticket, starting the guard if none runs. Fails where the guard is needed but cannot
/// be found or started: then nothing may start.
pub fn ticket() -> Result<Ticket, Unavailable> {
    let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(running) = &mut client.guard {
        // One that died by itself (or was killed) is replaced rather than trusted.
        if !matches!(running.child.try_wait(), Ok(None)) {
            tracing::warn!("the host-death guard had exited; starting another");
            if let Some(running) = client.guard.take() {
                reap(running.child);
            }
        }
    }
    if client.guard.is_none() {
        match start()? {
            Some(running) => client.guard = Some(running),
            None if platform::GUARD_NEEDED && !client.said_off => {
                client.said_off = true;
                tracing::info!("{SWITCH_VAR}=off: children run without the host-death guard");
            }
            None => {}
        }
    }
    client.tickets += 1;
    Ok(Ticket { pid: None, guarded: client.guard.is_some() })
}

impl Ticket {
    /// Registers the started child (its start time tells it from a later process with its pid).
    /// `stdin`: the writing end of the child's stdin pipe, of which the guard keeps a copy until
    /// [`StdinRelease`] says the host is closing it. Fails when the guard that the ticket was
    /// taken under stopped reading: the child is not watched, and must not run.
    pub fn register(
        &mut self,
        pid: u32,
        start: Option<u64>,
        kind: Kind,
        stdin: Option<i32>,
    ) -> Result<Option<StdinRelease>, Unavailable> {
        let pid = pid as i32;
        self.pid = Some(pid);
        if !self.guarded {
            return Ok(None);
        }
        match send(&Message::Add { pid, start, kind, stdin: stdin.is_some() }, stdin) {
            Ok(()) => Ok(stdin.is_some().then_some(StdinRelease { pid })),
            Err(why) => Err(Unavailable::new(
                None,
                format!("the guard stopped reading before the child was registered ({why})"),
            )),
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(pid) = self.pid.filter(|_| self.guarded) {
            let _ = send(&Message::Remove { pid }, None);
        }
        let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
        client.tickets -= 1;
        if client.tickets == 0 {
            if let Some(mut running) = client.guard.take() {
                let _ = running.send(&Message::Bye, None);
                reap(running.child);
            }
        }
    }
}

/// Lets the guard's copy of a child's stdin go; dropped just before the host's own copy closes,
/// so that the child sees end-of-file when the host closes its stdin.
pub struct StdinRelease {
    pid: i32,
}

impl Drop for StdinRelease {
    fn drop(&mut self) {
        let _ = send(&Message::Release { pid: self.pid }, None);
    }
}

/// Hands the message to the running guard.
fn send(message: &Message, fd: Option<i32>) -> Result<(), String> {
    let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
    let Some(running) = &mut client.guard else {
        return Err("no guard runs".to_string());
    };
    running.send(message, fd).map_err(|e| {
        // The guard died: the next ticket starts another. Children it watched are not watched
        // any more; that much can only be said.
        tracing::warn!("the host-death guard stopped reading: {e}");
        if let Some(running) = client.guard.take() {
            reap(running.child);
        }
        e.to_string()
    })
}

/// Starts the guard, where one is needed and not switched off.
fn start() -> Result<Option<Running>, Unavailable> {
    // Windows needs no guard: every child is in a Job Object that ends with the host.
    if !platform::GUARD_NEEDED {
        return Ok(None);
    }
    let Some(program) = program()? else {
        return Ok(None);
    };
    let (child, link) = platform::start_guard(&program, host_marker(), Tracking::current()).map_err(|e| {
        Unavailable::new(Some(program.clone()), format!("{} could not be started: {e}", program.display()))
    })?;
    tracing::debug!(pid = child.id(), "host-death guard started");
    Ok(Some(Running { child, program, link }))
}

/// Waits for a guard that was told to go, off the caller's thread.
fn reap(mut child: std::process::Child) {
    let wait = move || {
        let _ = child.wait();
    };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(wait)),
        Err(_) => drop(std::thread::spawn(wait)),
    }
}

// Only Unix has a guard to miss: on Windows every ticket is granted.
#[cfg(all(test, unix))]
mod tests {
    use super::super::locate::{testing, Located};
    use super::super::status;
    use super::*;
    use crate::failure::{Code, FailureSource};
    use serde_json::json;

    /// Whether the tests below may rely on this process's environment not naming a guard.
    fn switch_unset() -> bool {
        let unset = std::env::var_os(SWITCH_VAR).is_none_or(|v| v.is_empty());
        if !unset {
            eprintln!("{SWITCH_VAR} is set for this run: the tests that read it themselves are left out");
        }
        unset
    }

    #[test]
    fn a_missing_guard_gives_no_ticket_and_reports_where_it_looked() {
        if !switch_unset() {
            return;
        }
        let missing = PathBuf::from("/nonexistent/rennet-codex-guard");
        let _using = testing::using(Located::At(missing.clone()));
        let Err(why) = ticket() else { panic!("a ticket without a guard") };
        assert_eq!(why.path.as_deref(), Some(missing.as_path()));
        assert_eq!(why.reason, "/nonexistent/rennet-codex-guard (next to the native addon) does not exist");
        let failure = why.failure();
        assert_eq!((failure.source, failure.code), (FailureSource::Spawn, Code::HostGuardUnavailable));
        assert!(failure.message.contains("/nonexistent/rennet-codex-guard"), "{}", failure.message);
        assert_eq!(failure.detail["path"], "/nonexistent/rennet-codex-guard");
        assert_eq!(failure.detail["switch"], SWITCH_VAR);
        let now = status();
        assert_eq!((now.available, now.path.as_deref()), (false, Some("/nonexistent/rennet-codex-guard")), "{now:?}");
        assert!(now.reason.as_deref().unwrap().contains("does not exist"), "{now:?}");
        drop(_using);
        let _using = testing::using(Located::Unknown);
        let Err(why) = ticket() else { panic!("a ticket without a location") };
        assert_eq!(why.path, None);
        assert_eq!(status().path, None);
        assert!(!status().available);
        drop(_using);
        let _using = testing::using(Located::Off);
        let now = status();
        assert!(!now.available && now.path.is_none(), "{now:?}");
        assert!(now.reason.as_deref().unwrap().contains("switched off"), "{now:?}");
        drop(ticket().expect("switched off, a child may start"));
    }

    /// Through the production entry: nothing of the turn starts, and its one terminal says why.
    #[tokio::test]
    async fn a_turn_without_its_guard_fails_at_once_and_starts_nothing() {
        if !switch_unset() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("rennet-guard-turn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let started = dir.join("started");
        let codex = dir.join("codex");
        std::fs::write(&codex, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", started.display())).unwrap();
        std::fs::set_permissions(&codex, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let cases = [
            ("missing", Located::At(dir.join("rennet-codex-guard")), Some(json!({"codexPath": codex}))),
            ("location unknown", Located::Unknown, Some(json!({"codexPath": codex}))),
            // Without codexPath: discovery would run probes; it is not even started.
            ("missing, with discovery", Located::At(dir.join("rennet-codex-guard")), None),
        ];
        for (what, located, extra) in cases {
            let _using = testing::using(located);
            let mut options = json!({"prompt": "hi", "cwd": dir, "env": {"RENNET_CODEX_BIN": codex, "PATH": dir}});
            if let Some(extra) = extra {
                options.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            }
            let options = crate::options::parse(&options.to_string()).unwrap();
            let (turn, work) = crate::turn::start(options, false);
            work.await;
            let stream = turn.stream;
            let mut events = Vec::new();
            while let Some(batch) = stream.next_batch().await {
                events.extend(crate::batch::decode(&batch).unwrap());
            }
            assert_eq!(events.len(), 1, "{what}: {events:#?}");
            let terminal = &events[0];
            assert_eq!(terminal["type"], "terminal", "{what}");
            assert_eq!(terminal["status"], "failed", "{what}");
            assert_eq!(terminal["failure"]["source"], "spawn", "{what}");
            assert_eq!(terminal["failure"]["code"], "HOST_GUARD_UNAVAILABLE", "{what}");
            assert!(terminal["failure"]["message"].as_str().unwrap().starts_with("no host-death guard: "), "{what}");
            assert!(!started.exists(), "{what}: the Codex stand-in was started");
        }
        // The control: switched off, the same stand-in does start (and fails as it should).
        let _using = testing::using(Located::Off);
        let options = json!({"prompt": "hi", "cwd": dir, "codexPath": codex});
        let (turn, work) = crate::turn::start(crate::options::parse(&options.to_string()).unwrap(), false);
        work.await;
        let stream = turn.stream;
        let mut events = Vec::new();
        while let Some(batch) = stream.next_batch().await {
            events.extend(crate::batch::decode(&batch).unwrap());
        }
        assert_ne!(events.last().unwrap()["failure"]["code"], "HOST_GUARD_UNAVAILABLE", "{events:#?}");
        assert!(started.exists(), "the control never started the stand-in");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
