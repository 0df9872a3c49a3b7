//! Cancellation, as every run of a child has it (a turn, a call around turns, a login): an
//! abort (end politely where the run knows how: a turn interrupts, a call has nothing to
//! interrupt) and a kill (no grace at all: nobody is left to see the end). The caller raises
//! them; the run waits on them. What else a run takes from its caller (a turn's steers, a
//! prepared turn's input) is the run's own ([`crate::turn::Controls`]).

use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;

#[derive(Default)]
pub struct Cancel {
    abort: Signal,
    kill: Signal,
}

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    pub fn request_abort(&self) {
        self.abort.raise();
    }

    pub fn abort_requested(&self) -> bool {
        self.abort.is_raised()
    }

    /// Resolves when an abort (or a kill) has been requested.
    pub async fn aborted(&self) {
        self.abort.wait().await
    }

    /// An abort that waits for nothing, not even an interrupt's grace: whoever could see the
    /// run's end is gone (its JavaScript environment is being torn down).
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
