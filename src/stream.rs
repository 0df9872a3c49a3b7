//! The queue between a running turn and its consumer.
//!
//! Events are serialized when they are produced (on a runtime thread, not the JS thread) and
//! handed over in batches: one JSON array per crossing. The queue is bounded: when it is full
//! the runner stops reading the child's stdout, so the pipe pushes back on the child, while the
//! runner stays free to interrupt and kill. Pushing itself never blocks.

use crate::events::{HarnessEvent, Terminal};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tokio::sync::{watch, Notify};

/// Reading from the child pauses above either bound.
pub const MAX_QUEUED_EVENTS: usize = 4096;
pub const MAX_QUEUED_BYTES: usize = 8 * 1024 * 1024;
/// One crossing carries at most this much (a batch always carries at least one event).
pub const MAX_BATCH_BYTES: usize = 2 * 1024 * 1024;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// A consumer pulls batches: bounded.
    Pulled,
    /// Only the outcome is awaited and nobody has pulled yet: keep everything, never pause.
    Unbounded,
    /// The consumer left (`break`, GC): events are dropped, the outcome still resolves.
    Discard,
}

struct Queue {
    events: VecDeque<String>,
    bytes: usize,
    mode: Mode,
    consumer_seen: bool,
    /// The terminal event has been queued: nothing may follow it.
    closed: bool,
}

pub struct EventStream {
    queue: Mutex<Queue>,
    readable: Notify,
    writable: Notify,
    outcome: watch::Sender<Option<String>>,
    abort_requested: AtomicBool,
    abort: Notify,
}

impl Default for EventStream {
    fn default() -> Self {
        Self::new()
    }
}

impl EventStream {
    pub fn new() -> Self {
        EventStream {
            queue: Mutex::new(Queue {
                events: VecDeque::new(),
                bytes: 0,
                mode: Mode::Pulled,
                consumer_seen: false,
                closed: false,
            }),
            readable: Notify::new(),
            writable: Notify::new(),
            outcome: watch::channel(None).0,
            abort_requested: AtomicBool::new(false),
            abort: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // A panic while holding the lock cannot leave the queue inconsistent (each critical
        // section is a few field updates), so a poisoned lock is still usable.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues one event; ignored once the terminal event is queued.
    pub fn push(&self, event: &HarnessEvent) {
        let json = serde_json::to_string(event).expect("harness events always serialize");
        let mut q = self.lock();
        if q.closed || q.mode == Mode::Discard {
            return;
        }
        q.bytes += json.len();
        q.events.push_back(json);
        drop(q);
        self.readable.notify_one();
    }

    /// Queues the terminal event, closes the stream and resolves the outcome.
    pub fn finish(&self, terminal: Terminal) {
        let json = serde_json::to_string(&HarnessEvent::Terminal(terminal)).expect("terminal serializes");
        let mut q = self.lock();
        if q.closed {
            return;
        }
        q.closed = true;
        if q.mode != Mode::Discard {
            q.bytes += json.len();
            q.events.push_back(json.clone());
        }
        drop(q);
        self.outcome.send_replace(Some(json));
        self.readable.notify_one();
    }

    pub fn is_finished(&self) -> bool {
        self.lock().closed
    }

    /// Whether the runner may read another frame from the child.
    pub fn has_room(&self) -> bool {
        let q = self.lock();
        q.mode != Mode::Pulled || (q.events.len() < MAX_QUEUED_EVENTS && q.bytes < MAX_QUEUED_BYTES)
    }

    /// Resolves once `has_room()` may have become true.
    pub async fn room(&self) {
        let notified = self.writable.notified();
        if self.has_room() {
            return;
        }
        notified.await;
    }

    /// The next batch as a JSON array, or `None` once the terminal event has been taken.
    pub async fn next_batch(&self) -> Option<String> {
        loop {
            let notified = self.readable.notified();
            {
                let mut q = self.lock();
                if !q.consumer_seen {
                    q.consumer_seen = true;
                    if q.mode == Mode::Unbounded {
                        q.mode = Mode::Pulled;
                    }
                }
                if !q.events.is_empty() {
                    let batch = take_batch(&mut q);
                    drop(q);
                    self.writable.notify_one();
                    return Some(batch);
                }
                if q.closed {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Nobody pulls yet but the caller awaits the outcome: stop pausing the child for want of
    /// a reader, keeping every event for a consumer that may still come.
    pub fn unbound(&self) {
        {
            let mut q = self.lock();
            if !q.consumer_seen && q.mode == Mode::Pulled {
                q.mode = Mode::Unbounded;
            }
        }
        self.writable.notify_one();
    }

    /// The terminal event as JSON.
    pub async fn outcome(&self) -> String {
        let mut rx = self.outcome.subscribe();
        loop {
            if let Some(json) = rx.borrow_and_update().clone() {
                return json;
            }
            if rx.changed().await.is_err() {
                // The sender lives in `self`, so this cannot happen while we are borrowed.
                unreachable!("outcome sender dropped while the stream is alive");
            }
        }
    }

    /// The consumer is gone: drop what is queued and whatever comes later.
    pub fn detach(&self) {
        let mut q = self.lock();
        q.mode = Mode::Discard;
        q.events.clear();
        q.bytes = 0;
        drop(q);
        self.writable.notify_one();
        self.readable.notify_one();
    }

    pub fn request_abort(&self) {
        self.abort_requested.store(true, Ordering::SeqCst);
        self.abort.notify_one();
    }

    pub fn abort_requested(&self) -> bool {
        self.abort_requested.load(Ordering::SeqCst)
    }

    /// Resolves when an abort has been requested.
    pub async fn aborted(&self) {
        loop {
            if self.abort_requested() {
                return;
            }
            self.abort.notified().await;
        }
    }
}

fn take_batch(q: &mut Queue) -> String {
    let mut out = String::with_capacity(q.bytes.min(MAX_BATCH_BYTES) + 2);
    out.push('[');
    while let Some(front) = q.events.front() {
        if out.len() > 1 && out.len() + front.len() > MAX_BATCH_BYTES {
            break;
        }
        let event = q.events.pop_front().expect("front exists");
        q.bytes -= event.len();
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&event);
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{DiagnosticSource, Failure, FailureSource};
    use std::sync::Arc;

    fn diag(i: usize) -> HarnessEvent {
        HarnessEvent::Diagnostic { source: DiagnosticSource::Stderr, line: format!("line {i}") }
    }

    #[tokio::test]
    async fn batches_in_order_and_ends_after_terminal() {
        let s = EventStream::new();
        s.push(&diag(1));
        s.push(&diag(2));
        s.finish(Terminal::failed(Failure::new(FailureSource::Spawn, "X", "m")));
        s.push(&diag(3));
        let batch = s.next_batch().await.unwrap();
        let v: serde_json::Value = serde_json::from_str(&batch).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 3);
        assert_eq!(v[0]["line"], "line 1");
        assert_eq!(v[2]["type"], "terminal");
        assert_eq!(s.next_batch().await, None);
    }

    #[tokio::test]
    async fn full_queue_pauses_reading_until_pulled() {
        let s = EventStream::new();
        for i in 0..MAX_QUEUED_EVENTS {
            s.push(&diag(i));
        }
        assert!(!s.has_room());
        s.next_batch().await.unwrap();
        assert!(s.has_room());
    }

    #[tokio::test]
    async fn awaiting_only_the_outcome_unbounds_the_queue() {
        let s = Arc::new(EventStream::new());
        for i in 0..MAX_QUEUED_EVENTS {
            s.push(&diag(i));
        }
        s.unbound();
        let waiter = tokio::spawn({
            let s = s.clone();
            async move { s.outcome().await }
        });
        tokio::time::timeout(std::time::Duration::from_secs(1), s.room()).await.unwrap();
        assert!(s.has_room());
        s.finish(Terminal::failed(Failure::new(FailureSource::Spawn, "X", "m")));
        assert!(waiter.await.unwrap().contains("\"terminal\""));
    }

    #[tokio::test]
    async fn detach_discards_but_outcome_resolves() {
        let s = EventStream::new();
        s.push(&diag(1));
        s.detach();
        assert!(s.has_room());
        s.finish(Terminal::failed(Failure::new(FailureSource::Spawn, "X", "m")));
        assert!(s.outcome().await.contains("\"failed\""));
        assert_eq!(s.next_batch().await, None);
    }
}
