//! What the caller asks of a running turn, beside reading its events: abort it (politely:
//! `turn/interrupt`, then kill after the grace) or kill it (no grace: nobody is left to see
//! the end). The binding raises these; the runner waits on them.

use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;

/// A running turn's two ends at its caller: where its events go, and what the caller asks.
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    pub events: &'a crate::stream::EventStream,
    pub control: &'a Control,
}

#[derive(Default)]
pub struct Control {
    abort: Signal,
    kill: Signal,
}

impl Control {
    pub fn new() -> Control {
        Control::default()
    }

    pub fn request_abort(&self) {
        self.abort.raise();
    }

    pub fn abort_requested(&self) -> bool {
        self.abort.is_raised()
    }

    /// Resolves when an abort has been requested.
    pub async fn aborted(&self) {
        self.abort.wait().await
    }

    /// An abort that waits for nothing, not even an interrupt's grace: whoever could see the
    /// turn's end is gone (its JavaScript environment is being torn down).
    pub fn request_kill(&self) {
        self.kill.raise();
        self.abort.raise();
    }

    pub fn kill_requested(&self) -> bool {
        self.kill.is_raised()
    }

    /// Resolves when a kill has been requested.
    pub async fn killed(&self) {
        self.kill.wait().await
    }
}

/// A flag that is raised once and never lowered, and that tasks can wait for.
#[derive(Default)]
struct Signal {
    raised: AtomicBool,
    notify: Notify,
}

impl Signal {
    fn raise(&self) {
        self.raised.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    fn is_raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }

    async fn wait(&self) {
        // Registered before the flag is read, so a raise in between is not missed.
        let notified = self.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if !self.is_raised() {
            notified.await;
        }
    }
}
