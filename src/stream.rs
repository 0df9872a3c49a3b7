//! The queue between a running turn and its consumer.
//!
//! Events are serialized when they are produced (on a runtime thread, not the JS thread),
//! straight into the batch that will carry them: a batch is the text of one JSON array, so
//! handing it over is a move, and JavaScript parses it with one `JSON.parse`. The queue is
//! bounded: when it is full the runner stops reading the child's stdout, so the pipe pushes
//! back on the child, while the runner stays free to interrupt and kill. Pushing itself never
//! blocks.

use crate::events::{HarnessEvent, Terminal};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tokio::sync::{watch, Notify};

/// Reading from the child pauses above either bound.
pub const MAX_QUEUED_EVENTS: usize = 4096;
pub const MAX_QUEUED_BYTES: usize = 8 * 1024 * 1024;
/// One crossing carries at most this much (a batch always carries at least one event).
pub const MAX_BATCH_BYTES: usize = 64 * 1024;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// A consumer pulls batches: bounded.
    Pulled,
    /// Only the outcome is awaited and nobody has pulled yet: keep everything, never pause.
    Unbounded,
    /// The consumer left (`break`, GC): events are dropped, the outcome still resolves.
    Discard,
}

/// Events serialized back to back as the text of a JSON array, still open at the end.
struct Batch {
    json: Vec<u8>,
    events: usize,
}

impl Batch {
    fn with_capacity(capacity: usize) -> Batch {
        let mut json = Vec::with_capacity(capacity);
        json.push(b'[');
        Batch { json, events: 0 }
    }
}

struct Queue {
    /// Oldest first; only the last one is still being filled.
    batches: VecDeque<Batch>,
    events: usize,
    bytes: usize,
    /// Capacity for the next batch: the size the last one reached, so that a steady stream
    /// does not regrow its buffer from nothing on every crossing.
    next_capacity: usize,
    mode: Mode,
    consumer_seen: bool,
    /// The terminal event has been queued: nothing may follow it.
    closed: bool,
}

impl Queue {
    /// Serializes `event` onto the last batch, opening a new one when it is full.
    fn append(&mut self, event: &HarnessEvent) -> usize {
        let open = self.batches.back().is_some_and(|b| b.json.len() < MAX_BATCH_BYTES);
        if !open {
            self.batches.push_back(Batch::with_capacity(self.next_capacity));
        }
        let batch = self.batches.back_mut().expect("a batch is open");
        let before = batch.json.len();
        if batch.events > 0 {
            batch.json.push(b',');
        }
        serde_json::to_writer(&mut batch.json, event).expect("harness events always serialize");
        batch.events += 1;
        let added = batch.json.len() - before;
        self.events += 1;
        self.bytes += added;
        added
    }

    fn take(&mut self) -> Option<String> {
        let mut batch = self.batches.pop_front()?;
        self.events -= batch.events;
        self.bytes -= batch.json.len() - 1;
        self.next_capacity = (batch.json.len() + 1).clamp(INITIAL_BATCH_CAPACITY, MAX_BATCH_BYTES + 64 * 1024);
        batch.json.push(b']');
        // serde_json writes UTF-8 only, and the brackets and commas around it are ASCII.
        Some(String::from_utf8(batch.json).expect("serialized JSON is UTF-8"))
    }
}

const INITIAL_BATCH_CAPACITY: usize = 4 * 1024;

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
                batches: VecDeque::new(),
                events: 0,
                bytes: 0,
                next_capacity: INITIAL_BATCH_CAPACITY,
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
        let mut q = self.lock();
        if q.closed || q.mode == Mode::Discard {
            return;
        }
        // Serializing under the lock costs the consumer at most one event's worth of waiting
        // and saves a copy of every event.
        let was_empty = q.events == 0;
        q.append(event);
        drop(q);
        // A consumer can only be waiting when the queue was empty.
        if was_empty {
            self.readable.notify_one();
        }
    }

    /// Queues the terminal event, closes the stream and resolves the outcome.
    pub fn finish(&self, terminal: Terminal) {
        let event = HarnessEvent::Terminal(terminal);
        let json = serde_json::to_string(&event).expect("terminal serializes");
        let mut q = self.lock();
        if q.closed {
            return;
        }
        q.closed = true;
        if q.mode != Mode::Discard {
            q.append(&event);
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
        q.mode != Mode::Pulled || (q.events < MAX_QUEUED_EVENTS && q.bytes < MAX_QUEUED_BYTES)
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
                if let Some(batch) = q.take() {
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
        q.batches.clear();
        q.events = 0;
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
    async fn large_backlogs_cross_in_bounded_batches_in_order() {
        let s = EventStream::new();
        s.unbound();
        let big = "x".repeat(300 * 1024);
        let count = 20;
        for i in 0..count {
            s.push(&HarnessEvent::Diagnostic { source: DiagnosticSource::Stderr, line: format!("{i} {big}") });
        }
        s.finish(Terminal::failed(Failure::new(FailureSource::Spawn, "X", "m")));
        let mut seen = Vec::new();
        let mut batches = 0;
        while let Some(batch) = s.next_batch().await {
            batches += 1;
            let v: serde_json::Value = serde_json::from_str(&batch).unwrap();
            let events = v.as_array().unwrap();
            // A batch ends with the first event that takes it past the bound.
            let without_last = batch.len() - serde_json::to_string(events.last().unwrap()).unwrap().len();
            assert!(events.len() == 1 || without_last <= MAX_BATCH_BYTES, "{} bytes", batch.len());
            seen.extend(events.iter().cloned());
        }
        assert!(batches > 1);
        assert_eq!(seen.len(), count + 1);
        for (i, event) in seen[..count].iter().enumerate() {
            assert!(event["line"].as_str().unwrap().starts_with(&format!("{i} ")));
        }
        assert_eq!(seen[count]["type"], "terminal");
        assert!(s.has_room());
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
