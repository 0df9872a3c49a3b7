//! One discovery per locus and environment for the life of the process: callers that ask
//! while one runs join it, later ones get its answer until the selected file changes; a run
//! that nobody waits for any more stops.

use super::env::{Env, Os};
use super::report::Discovery;
use crate::options::locus::Wsl;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    os: Os,
    locus: Option<Wsl>,
    env: Env,
}

/// One discovery run, shared by everyone who waits for it.
struct Run {
    result: tokio::sync::watch::Sender<Option<Arc<Discovery>>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    waiters: AtomicUsize,
}

enum Slot {
    Running(Arc<Run>),
    /// A usable Codex was found; `selected` is still that file while its size and modification
    /// time are unchanged. "Not found" is never kept: a Codex installed meanwhile is found.
    Found {
        discovery: Arc<Discovery>,
        selected: Option<FileStamp>,
    },
}

fn cache() -> &'static Mutex<HashMap<CacheKey, Slot>> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Slot>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// What identifies a file cheaply: it exists, with this size and modification time.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    fn of(path: &Path) -> Option<FileStamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileStamp { len: meta.len(), modified: meta.modified().ok() })
    }
}

/// The file a cached discovery selected, as this machine sees it (a WSL path is not looked at).
fn selected_file(discovery: &Discovery, locus: &Option<Wsl>) -> Option<PathBuf> {
    let selected = discovery.selected.as_ref()?;
    locus.is_none().then(|| PathBuf::from(&selected.path))
}

/// [`join`] with the whole environment given and the platform rules to apply (tests run the
/// macOS rules on Linux).
pub(crate) fn join_in(env: Env, locus: Option<Wsl>, refresh: bool, os: Os) -> Waiter {
    let key = CacheKey { os, locus: locus.clone(), env: env.clone() };
    let mut slots = cache().lock().unwrap_or_else(|e| e.into_inner());
    match slots.get(&key) {
        Some(Slot::Found { discovery, selected }) if !refresh => {
            let unchanged = selected_file(discovery, &locus).map(|p| FileStamp::of(&p)) == selected.clone().map(Some);
            if unchanged {
                return Waiter::ready(discovery.clone());
            }
            tracing::debug!("the Codex discovery selected changed on disk: discovering again");
        }
        Some(Slot::Running(run)) if !refresh => {
            run.waiters.fetch_add(1, Ordering::SeqCst);
            return Waiter { run: Some(run.clone()), key: Some(key), ready: None, left: false };
        }
        _ => {}
    }
    let (result, _) = tokio::sync::watch::channel(None);
    let run = Arc::new(Run { result, task: Mutex::new(None), waiters: AtomicUsize::new(1) });
    slots.insert(key.clone(), Slot::Running(run.clone()));
    let task = {
        let (run, key) = (run.clone(), key.clone());
        tokio::spawn(async move {
            let discovery = Arc::new(super::run::run(env, locus.clone(), os).await);
            let mut slots = cache().lock().unwrap_or_else(|e| e.into_inner());
            if matches!(slots.get(&key), Some(Slot::Running(current)) if Arc::ptr_eq(current, &run)) {
                if discovery.available {
                    let selected = selected_file(&discovery, &locus).and_then(|p| FileStamp::of(&p));
                    slots.insert(key, Slot::Found { discovery: discovery.clone(), selected });
                } else {
                    slots.remove(&key);
                }
            }
            drop(slots);
            run.result.send_replace(Some(discovery));
        })
    };
    *run.task.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
    Waiter { run: Some(run), key: Some(key), ready: None, left: false }
}

/// A caller's wait for a discovery. When the last waiter leaves before the discovery finished,
/// it is stopped, and every process it started is gone before [`Waiter::leave`] returns.
pub struct Waiter {
    run: Option<Arc<Run>>,
    key: Option<CacheKey>,
    ready: Option<Arc<Discovery>>,
    left: bool,
}

impl Waiter {
    fn ready(discovery: Arc<Discovery>) -> Waiter {
        Waiter { run: None, key: None, ready: Some(discovery), left: true }
    }

    pub async fn result(&self) -> Arc<Discovery> {
        if let Some(ready) = &self.ready {
            return ready.clone();
        }
        let run = self.run.as_ref().expect("a waiter without a result has a run");
        let mut receiver = run.result.subscribe();
        // The sender lives in the run, which this waiter holds: waiting cannot fail.
        let result = receiver.wait_for(Option::is_some).await.map(|r| r.clone());
        result.ok().flatten().expect("a discovery run ends with its result")
    }

    /// Stops waiting. The last to leave a discovery that has not finished stops it and waits
    /// until the processes it started are gone.
    pub async fn leave(mut self) {
        if let Some(task) = self.depart() {
            // The run's future is dropped before the handle completes: every probe child's
            // `Drop` has ended its tree by then.
            let _ = task.await;
        }
    }

    /// The task to wait for, if this was the last waiter of an unfinished run.
    fn depart(&mut self) -> Option<tokio::task::JoinHandle<()>> {
        if std::mem::replace(&mut self.left, true) {
            return None;
        }
        let run = self.run.as_ref()?;
        if run.waiters.fetch_sub(1, Ordering::SeqCst) != 1 || run.result.borrow().is_some() {
            return None;
        }
        let mut slots = cache().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(key) = &self.key {
            if matches!(slots.get(key), Some(Slot::Running(current)) if Arc::ptr_eq(current, run)) {
                slots.remove(key);
            }
        }
        drop(slots);
        let task = run.task.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        task.abort();
        Some(task)
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // Nobody can wait for the processes here; `leave` is the way to.
        self.depart();
    }
}

/// [`discover`] for tests, with the whole environment and platform rules given.
#[cfg(all(test, unix))]
pub(crate) async fn discover_in(env: Env, locus: Option<Wsl>, refresh: bool, os: Os) -> Arc<Discovery> {
    join_in(env, locus, refresh, os).result().await
}
