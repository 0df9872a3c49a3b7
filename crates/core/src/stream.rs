//! The queue between a running turn and its consumer.
//!
//! Events are written when they are produced (on a runtime thread, not the JS thread),
//! straight into the batch that will carry them (see [`crate::batch`] for its text), so
//! handing a batch over is a move. The queue is
//! bounded: when it is full the runner stops reading the child's stdout, so the pipe pushes
//! back on the child, while the runner stays free to interrupt and kill. Pushing itself never
//! blocks.
//!
//! Events coalesce within a window after each hand-over: the first event after a quiet spell
//! crosses at once, and what comes within [`COALESCE`] of a hand-over waits for the window to
//! end (or for [`HOLD_EVENTS`]), so that a busy stream wakes the JavaScript thread once per
//! window instead of once per event. An event that bears latency (a turn's or an item's first
//! delta, `turnStarted`, `turnCompleted`, a server request: [`Begun::bears_latency`]) does not
//! wait for the window: it crosses at once, with whatever waited before it. While the runner
//! still has whole frames buffered (they are parsed in microseconds), the waiting consumer is
//! woken once for all of them, latency-bearing or not: a plain client's line reader hands a
//! read's lines over no sooner either. The rule was chosen by paired runs against the
//! alternatives (BENCHMARKS.md, "The hand-over rule").

use crate::batch::Batch;
use crate::events::{AgentEvent, DeltaEvent, HarnessEvent, ReasoningDeltaEvent, Terminal};
use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::{watch, Notify};

/// Reading from the child pauses above either bound.
pub const MAX_QUEUED_EVENTS: usize = 4096;
pub const MAX_QUEUED_BYTES: usize = 8 * 1024 * 1024;
/// While the reader still has buffered input, a waiting consumer is handed events once this
/// many are queued rather than one by one (see [`EventStream::may_read`]).
pub const HOLD_EVENTS: usize = 256;
/// One crossing carries at most this much (a batch always carries at least one event).
pub const MAX_BATCH_BYTES: usize = 64 * 1024;
/// A consumer handed a batch less than this long ago gets the next one when this much time has
/// passed since (or [`HOLD_EVENTS`] are queued, or the runner stops reading). The runtime's
/// timer has millisecond resolution.
pub const COALESCE: Duration = Duration::from_millis(1);

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
    /// A consumer that found the queue empty and waits to be handed the next batch.
    waiter: Option<BatchWaiter>,
    /// The reader has more whole frames buffered: the consumer gets what comes in one batch.
    buffered: bool,
    /// Within [`COALESCE`] of the last hand-over: what comes waits for the window's end.
    window: bool,
    /// A latency-bearing event is queued: the window holds nothing back.
    latency_bearing: bool,
    begun: Begun,
    /// When a waiting consumer was last handed a batch.
    last_handover: Option<Instant>,
}

/// What the runner may do before its next read (see [`EventStream::may_read`]).
#[derive(Debug, PartialEq, Eq)]
pub struct Reading {
    /// Whether it may read another frame.
    pub room: bool,
    /// When it must call [`EventStream::release`] if it still waits for input then: the end of
    /// the window it holds events in.
    pub release_at: Option<Instant>,
}

/// Receives the next batch, or `None` when there will be none; called on the producing thread.
pub type BatchWaiter = Box<dyn FnOnce(Option<String>) + Send>;

impl Queue {
    /// Serializes `event` onto the last batch, opening a new one when it is full.
    fn append(&mut self, event: &HarnessEvent) -> usize {
        let open = self.batches.back().is_some_and(|b| b.len() < MAX_BATCH_BYTES);
        if !open {
            self.batches.push_back(Batch::with_capacity(self.next_capacity));
        }
        let added = self.batches.back_mut().expect("a batch is open").push(event);
        self.events += 1;
        self.bytes += added;
        added
    }

    fn has_room(&self) -> bool {
        self.mode != Mode::Pulled || (self.events < MAX_QUEUED_EVENTS && self.bytes < MAX_QUEUED_BYTES)
    }

    /// The first pull turns an unbounded queue (kept for a consumer that might come) bounded.
    fn consumer_arrived(&mut self) {
        if !self.consumer_seen {
            self.consumer_seen = true;
            if self.mode == Mode::Unbounded {
                self.mode = Mode::Pulled;
            }
        }
    }

    /// A waiting consumer and what it gets now, if anything is due to it.
    fn due(&mut self) -> Option<(BatchWaiter, Option<String>)> {
        if self.waiter.is_none() || self.held() {
            return None;
        }
        let batch = self.take();
        if batch.is_none() && !self.closed && self.mode != Mode::Discard {
            return None;
        }
        if batch.is_some() {
            self.last_handover = Some(Instant::now());
        }
        self.waiter.take().map(|waiter| (waiter, batch))
    }

    /// The runner is about to hand the queued events over in one batch (see `may_read`).
    fn held(&self) -> bool {
        (self.buffered || (self.window && !self.latency_bearing))
            && self.events < HOLD_EVENTS
            && !self.closed
            && self.mode != Mode::Discard
    }

    fn take(&mut self) -> Option<String> {
        let batch = self.batches.pop_front()?;
        self.events -= batch.events();
        if self.events == 0 {
            self.latency_bearing = false;
        }
        self.bytes -= batch.len();
        self.next_capacity = batch.len().clamp(INITIAL_BATCH_CAPACITY, MAX_BATCH_BYTES + 64 * 1024);
        Some(batch.into_string())
    }
}

const INITIAL_BATCH_CAPACITY: usize = 4 * 1024;

/// The delta streams that have begun (an item's deltas of one kind): the first delta of each
/// bears latency, the rest are bulk.
#[derive(Default)]
struct Begun {
    /// The stream of the last delta queued: a burst's deltas are checked against it alone.
    last: Option<(u8, String)>,
    all: HashSet<(u8, String)>,
}

impl Begun {
    /// Whether `event` bears latency: a turn's or an item's first delta, `turnStarted`,
    /// `turnCompleted` and a server request (the terminal closes the queue, which holds nothing
    /// then). Such an event ends a window's hold; bulk deltas and every other event wait for
    /// the window's end (BENCHMARKS.md, "The hand-over rule").
    fn bears_latency(&mut self, event: &HarnessEvent) -> bool {
        let (kind, item) = match event {
            HarnessEvent::MessageDelta(DeltaEvent { item_id, .. }) => (b'm', item_id),
            HarnessEvent::ReasoningDelta(ReasoningDeltaEvent { item_id, .. }) => (b'r', item_id),
            HarnessEvent::CommandOutput(DeltaEvent { item_id, .. }) => (b'c', item_id),
            HarnessEvent::PlanDelta(DeltaEvent { item_id, .. }) => (b'p', item_id),
            HarnessEvent::Agent(AgentEvent { event, .. }) => return self.bears_latency(event),
            HarnessEvent::TurnStarted(_) | HarnessEvent::TurnCompleted(_) | HarnessEvent::ServerRequest(_) => {
                return true
            }
            _ => return false,
        };
        if self.last.as_ref().is_some_and(|(k, i)| *k == kind && i == item) {
            return false;
        }
        let stream = (kind, item.clone());
        let first = self.all.insert(stream.clone());
        self.last = Some(stream);
        first
    }
}

pub struct EventStream {
    queue: Mutex<Queue>,
    readable: Notify,
    writable: Notify,
    outcome: watch::Sender<Option<String>>,
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
                waiter: None,
                buffered: false,
                window: false,
                latency_bearing: false,
                begun: Begun::default(),
                last_handover: None,
            }),
            readable: Notify::new(),
            writable: Notify::new(),
            outcome: watch::channel(None).0,
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
        if q.begun.bears_latency(event) {
            q.latency_bearing = true;
        }
        q.append(event);
        let due = q.due();
        drop(q);
        self.hand_over(due);
        // A consumer can only be waiting when the queue was empty.
        if was_empty {
            self.readable.notify_one();
        }
    }

    /// Gives a waiting consumer its batch, outside the lock.
    fn hand_over(&self, due: Option<(BatchWaiter, Option<String>)>) {
        if let Some((waiter, batch)) = due {
            let took = batch.is_some();
            waiter(batch);
            if took {
                self.writable.notify_one();
            }
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
        let due = q.due();
        drop(q);
        self.outcome.send_replace(Some(json));
        self.hand_over(due);
        self.readable.notify_one();
    }

    pub fn is_finished(&self) -> bool {
        self.lock().closed
    }

    /// Whether the runner may read another frame from the child.
    pub fn has_room(&self) -> bool {
        let q = self.lock();
        q.has_room()
    }

    /// Called by the runner before each read; whether it may read another frame. While
    /// `input_buffered` (the next frame is already in memory, so reading it will not wait) or
    /// within [`COALESCE`] of the last hand-over, the consumer is handed the events in one
    /// batch when the input runs dry and the window is over (`release_at`), or once
    /// [`HOLD_EVENTS`] are queued, instead of one crossing per event; within the window, a
    /// latency-bearing event ends the wait at once. A quiet stream's frame is alone in the
    /// buffer and comes after a quiet spell, so its event crosses at once.
    pub fn may_read(&self, input_buffered: bool, now: Instant) -> Reading {
        let mut q = self.lock();
        let room = q.has_room();
        let busy_until = q.last_handover.map(|at| at + COALESCE).filter(|&until| until > now);
        q.buffered = room && input_buffered;
        q.window = room && busy_until.is_some();
        let due = q.due();
        drop(q);
        self.hand_over(due);
        Reading { room, release_at: busy_until.filter(|_| room) }
    }

    /// The runner stops reading for now: a waiting consumer gets what was held back.
    pub fn release(&self) {
        let mut q = self.lock();
        q.buffered = false;
        q.window = false;
        let due = q.due();
        drop(q);
        self.hand_over(due);
    }

    /// Resolves once `has_room()` may have become true.
    pub async fn room(&self) {
        let notified = self.writable.notified();
        if self.has_room() {
            return;
        }
        notified.await;
    }

    /// The next batch, or `None` once the terminal event has been taken.
    pub async fn next_batch(&self) -> Option<String> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        match self.pull(Box::new(move |batch| {
            let _ = tx.send(batch);
        })) {
            Some(batch) => Some(batch),
            None => rx.await.ok().flatten(),
        }
    }

    /// The queued events as one batch, if any.
    pub fn try_take(&self) -> Option<String> {
        let mut q = self.lock();
        self.take_from(&mut q)
    }

    /// Takes the queued events as the consumer, waking a runner that waits for room. Within a
    /// window, a consumer that comes back waits for its end too.
    fn take_from(&self, q: &mut Queue) -> Option<String> {
        q.consumer_arrived();
        if q.held() {
            return None;
        }
        let batch = q.take();
        if batch.is_some() {
            self.writable.notify_one();
        }
        batch
    }

    /// The next batch if one is ready. Otherwise `waiter` is kept and called, on the thread
    /// that produces it, with the next batch, or with `None` once there will be none (at once
    /// if that is already so). No runtime task sits between the producer and the consumer,
    /// so a quiet stream's event is handed over as soon as it is queued.
    pub fn pull(&self, waiter: BatchWaiter) -> Option<String> {
        let mut q = self.lock();
        if let Some(batch) = self.take_from(&mut q) {
            return Some(batch);
        }
        // A consumer pulls one batch at a time; a second waiter replaces a stale one.
        q.waiter = Some(waiter);
        let due = q.due();
        drop(q);
        self.hand_over(due);
        None
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
        // The sender lives in `self`, so it cannot be gone while we are borrowed.
        let outcome = rx.wait_for(Option::is_some).await.expect("the outcome sender lives in the stream");
        outcome.clone().expect("waited for a value")
    }

    /// The consumer is gone: drop what is queued and whatever comes later.
    pub fn detach(&self) {
        let mut q = self.lock();
        q.mode = Mode::Discard;
        q.batches.clear();
        q.events = 0;
        q.bytes = 0;
        let due = q.due();
        drop(q);
        self.hand_over(due);
        self.writable.notify_one();
        self.readable.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::decode;
    use crate::events::{
        AgentRef, DiagnosticEvent, DiagnosticSource, Failure, FailureSource, ReplyKind, ServerRequestEvent,
        TurnStartedEvent,
    };
    use std::sync::Arc;

    fn diag(i: usize) -> HarnessEvent {
        HarnessEvent::Diagnostic(DiagnosticEvent { source: DiagnosticSource::Stderr, line: format!("line {i}") })
    }

    #[tokio::test]
    async fn batches_in_order_and_ends_after_terminal() {
        let s = EventStream::new();
        s.push(&diag(1));
        s.push(&diag(2));
        s.finish(Terminal::failed(Failure::new(FailureSource::Spawn, crate::failure::Code::SpawnFailed, "m")));
        s.push(&diag(3));
        let batch = s.next_batch().await.unwrap();
        let v = decode(&batch).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0]["line"], "line 1");
        assert_eq!(v[2]["type"], "terminal");
        assert_eq!(s.next_batch().await, None);
    }

    #[tokio::test]
    async fn large_backlogs_cross_in_bounded_batches_in_order() {
        let s = EventStream::new();
        s.unbound();
        let big = "x".repeat(MAX_BATCH_BYTES / 3);
        let record = big.len() + 100;
        let count = 10;
        for i in 0..count {
            s.push(&HarnessEvent::Diagnostic(DiagnosticEvent {
                source: DiagnosticSource::Stderr,
                line: format!("{i} {big}"),
            }));
        }
        s.finish(Terminal::failed(Failure::new(FailureSource::Spawn, crate::failure::Code::SpawnFailed, "m")));
        let mut seen = Vec::new();
        let mut batches = 0;
        while let Some(batch) = s.next_batch().await {
            batches += 1;
            let events = decode(&batch).unwrap();
            // A batch ends with the first event that takes it past the bound.
            assert!(events.len() == 1 || batch.len() <= MAX_BATCH_BYTES + record, "{} bytes", batch.len());
            seen.extend(events);
        }
        assert!(batches > 1);
        assert_eq!(seen.len(), count + 1);
        for (i, event) in seen[..count].iter().enumerate() {
            assert!(event["line"].as_str().unwrap().starts_with(&format!("{i} ")));
        }
        assert_eq!(seen[count]["type"], "terminal");
        assert!(s.has_room());
    }

    fn recorder() -> (Arc<Mutex<Vec<Option<String>>>>, BatchWaiter) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        (got, Box::new(move |batch| sink.lock().unwrap().push(batch)))
    }

    #[test]
    fn pull_hands_the_next_event_to_a_waiting_consumer_at_once() {
        let s = EventStream::new();
        s.push(&diag(1));
        let (got, waiter) = recorder();
        let ready = s.pull(waiter).unwrap();
        assert!(ready.contains("line 1"));
        assert!(got.lock().unwrap().is_empty(), "a ready batch is returned, not handed to the waiter");

        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        s.push(&diag(2));
        s.push(&diag(3));
        let handed = got.lock().unwrap().clone();
        assert_eq!(handed.len(), 1, "the waiter is called once");
        let first: serde_json::Value = serde_json::Value::Array(decode(handed[0].as_deref().unwrap()).unwrap());
        assert_eq!(first[0]["line"], "line 2");

        s.finish(Terminal::failed(Failure::new(FailureSource::Spawn, crate::failure::Code::SpawnFailed, "m")));
        let (_, waiter) = recorder();
        let rest: serde_json::Value = serde_json::Value::Array(decode(&s.pull(waiter).unwrap()).unwrap());
        assert_eq!(rest[0]["line"], "line 3");
        assert_eq!(rest[1]["type"], "terminal");
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        assert_eq!(*got.lock().unwrap(), vec![None], "after the terminal: told at once that nothing follows");
    }

    fn events_in(batch: &Option<String>) -> usize {
        decode(batch.as_deref().unwrap()).unwrap().len()
    }

    /// A moment after any hand-over's window.
    fn quiet() -> Instant {
        Instant::now() + COALESCE * 2
    }

    #[test]
    fn buffered_input_is_handed_over_in_one_batch_when_it_runs_dry() {
        let s = EventStream::new();
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        assert!(s.may_read(true, quiet()).room);
        s.push(&diag(1));
        s.push(&diag(2));
        assert!(got.lock().unwrap().is_empty(), "held while more input is buffered");
        assert!(s.may_read(false, quiet()).room);
        assert_eq!(events_in(&got.lock().unwrap()[0]), 2);

        // Never more than HOLD_EVENTS wait for the input to run dry.
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        assert!(s.may_read(true, quiet()).room);
        for i in 0..HOLD_EVENTS {
            s.push(&diag(i));
        }
        assert_eq!(got.lock().unwrap().len(), 1);

        // Held events go out when the runner stops reading.
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        assert!(s.may_read(true, quiet()).room);
        s.push(&diag(0));
        assert!(got.lock().unwrap().is_empty());
        s.release();
        assert_eq!(got.lock().unwrap().len(), 1);

        // A quiet stream: nothing else buffered, past the window, the event crosses at once.
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        assert_eq!(s.may_read(false, quiet()), Reading { room: true, release_at: None });
        s.push(&diag(0));
        assert_eq!(got.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_busy_stream_crosses_once_per_window() {
        let s = EventStream::new();
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        assert_eq!(s.may_read(false, Instant::now()).release_at, None, "no hand-over yet: no window");
        // Times taken before a hand-over are within its window, however slow the machine.
        let within = Instant::now();
        s.push(&diag(1));
        assert_eq!(got.lock().unwrap().len(), 1, "the first event crosses at once");

        // Within the window of that hand-over, a waiting consumer waits for the window's end.
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        let release_at = s.may_read(false, within).release_at.expect("within the window of the last hand-over");
        assert!(release_at <= Instant::now() + COALESCE);
        s.push(&diag(2));
        s.push(&diag(3));
        assert!(got.lock().unwrap().is_empty(), "held until the window is over");
        s.release();
        assert_eq!(events_in(&got.lock().unwrap()[0]), 2, "both in one crossing");

        // Past the window the stream is quiet again: at once.
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        assert_eq!(s.may_read(false, quiet()), Reading { room: true, release_at: None });
        let within = Instant::now();
        s.push(&diag(4));
        assert_eq!(got.lock().unwrap().len(), 1);

        // A consumer that comes back within the window waits for it too, then takes all of it.
        assert!(s.may_read(false, within).release_at.is_some());
        s.push(&diag(5));
        assert_eq!(s.try_take(), None, "held: the window is not over");
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        s.push(&diag(6));
        s.release();
        assert_eq!(events_in(&got.lock().unwrap()[0]), 2);

        // HOLD_EVENTS end a window early.
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        assert!(s.may_read(false, within).room);
        for i in 0..HOLD_EVENTS {
            s.push(&diag(i));
        }
        assert_eq!(events_in(&got.lock().unwrap()[0]), HOLD_EVENTS);
    }

    fn delta(item: &str, i: usize) -> HarnessEvent {
        HarnessEvent::MessageDelta(DeltaEvent { item_id: item.into(), delta: i.to_string(), replace: false })
    }

    /// A waiting consumer, inside the window of a hand-over that has just happened (`within`
    /// was taken before it): what it was handed so far.
    fn waiting_within(s: &EventStream, within: Instant) -> Arc<Mutex<Vec<Option<String>>>> {
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        assert!(s.may_read(false, within).release_at.is_some(), "within the window of the last hand-over");
        got
    }

    #[test]
    fn an_items_first_delta_crosses_within_a_window_with_what_waited() {
        let s = EventStream::new();
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        let within = Instant::now();
        // The item starts after a quiet spell: at once; its window opens.
        s.push(&diag(0));
        assert_eq!(got.lock().unwrap().len(), 1);

        // Within that window an event that bears no latency waits, and the item's first delta
        // does not: it goes at once, with what waited before it, in order.
        let got = waiting_within(&s, within);
        s.push(&diag(1));
        assert!(got.lock().unwrap().is_empty(), "held until the window is over");
        s.push(&delta("msg_1", 0));
        let handed = got.lock().unwrap().clone();
        assert_eq!(handed.len(), 1, "the first delta crosses at once");
        let events = decode(handed[0].as_deref().unwrap()).unwrap();
        assert_eq!((events[0]["line"].as_str(), events[1]["delta"].as_str()), (Some("line 1"), Some("0")));

        // The item's later deltas are bulk: they wait for the window.
        let got = waiting_within(&s, within);
        s.push(&delta("msg_1", 1));
        s.push(&delta("msg_1", 2));
        assert!(got.lock().unwrap().is_empty());
        // Another item's first delta (a sub-agent's too) takes them along.
        s.push(&delta("msg_2", 0));
        assert_eq!(events_in(&got.lock().unwrap()[0]), 3);
        let got = waiting_within(&s, within);
        let agent = AgentRef { thread_id: "thr_agent".into(), nickname: None, path: None, depth: 1 };
        s.push(&HarnessEvent::Agent(AgentEvent { agent: agent.clone(), event: Box::new(delta("msg_3", 0)) }));
        assert_eq!(got.lock().unwrap().len(), 1);
        // A delta of an item that had one before is bulk, even after another item's.
        let got = waiting_within(&s, within);
        s.push(&HarnessEvent::Agent(AgentEvent { agent, event: Box::new(delta("msg_3", 1)) }));
        s.push(&delta("msg_1", 3));
        assert!(got.lock().unwrap().is_empty());
        s.release();
        assert_eq!(events_in(&got.lock().unwrap()[0]), 2);
    }

    #[test]
    fn turn_started_turn_completed_and_server_requests_cross_within_a_window() {
        let completed = || {
            HarnessEvent::TurnCompleted(Terminal::failed(Failure::new(
                FailureSource::Turn,
                crate::failure::Code::TurnFailed,
                "m",
            )))
        };
        let request = || {
            HarnessEvent::ServerRequest(ServerRequestEvent {
                method: "item/commandExecution/requestApproval".into(),
                id: serde_json::json!(1),
                params: serde_json::value::RawValue::from_string("{}".into()).unwrap(),
                agent: None,
                reply: ReplyKind::Declined,
                unfit: None,
            })
        };
        let started =
            || HarnessEvent::TurnStarted(TurnStartedEvent { thread_id: "thr".into(), turn_id: "turn".into() });
        for event in [started, request, completed] {
            let s = EventStream::new();
            let (_, waiter) = recorder();
            assert_eq!(s.pull(waiter), None);
            let within = Instant::now();
            s.push(&diag(0));
            let got = waiting_within(&s, within);
            s.push(&diag(1));
            s.push(&event());
            assert_eq!(events_in(&got.lock().unwrap()[0]), 2, "{:?}", event());
        }
    }

    #[test]
    fn a_consumer_back_within_a_window_takes_a_latency_bearing_event_at_once() {
        let s = EventStream::new();
        let (_, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        let within = Instant::now();
        s.push(&diag(0));
        assert!(s.may_read(false, within).release_at.is_some());
        s.push(&diag(1));
        assert_eq!(s.try_take(), None, "held: the window is not over");
        s.push(&delta("msg_1", 0));
        let batch = s.try_take().expect("a first delta is not held");
        assert_eq!(decode(&batch).unwrap().len(), 2);
        // Taken: what comes next within the window waits again.
        s.push(&delta("msg_1", 1));
        assert_eq!(s.try_take(), None);
    }

    #[test]
    fn buffered_input_holds_a_latency_bearing_event_until_it_runs_dry() {
        // The frames after it are read already: it goes with them, in one crossing.
        let s = EventStream::new();
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        assert!(s.may_read(true, quiet()).room);
        s.push(&delta("msg_1", 0));
        assert!(s.may_read(true, quiet()).room);
        s.push(&delta("msg_1", 1));
        assert!(got.lock().unwrap().is_empty());
        assert!(s.may_read(false, quiet()).room);
        assert_eq!(events_in(&got.lock().unwrap()[0]), 2);
    }

    #[test]
    fn a_waiting_consumer_learns_of_the_end_and_of_detach() {
        let s = EventStream::new();
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        s.finish(Terminal::failed(Failure::new(FailureSource::Spawn, crate::failure::Code::SpawnFailed, "m")));
        assert!(got.lock().unwrap()[0].as_deref().unwrap().contains("\"terminal\""));

        let s = EventStream::new();
        let (got, waiter) = recorder();
        assert_eq!(s.pull(waiter), None);
        s.detach();
        assert_eq!(*got.lock().unwrap(), vec![None]);
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
        s.finish(Terminal::failed(Failure::new(FailureSource::Spawn, crate::failure::Code::SpawnFailed, "m")));
        assert!(waiter.await.unwrap().contains("\"terminal\""));
    }

    #[tokio::test]
    async fn detach_discards_but_outcome_resolves() {
        let s = EventStream::new();
        s.push(&diag(1));
        s.detach();
        assert!(s.has_room());
        s.finish(Terminal::failed(Failure::new(FailureSource::Spawn, crate::failure::Code::SpawnFailed, "m")));
        assert!(s.outcome().await.contains("\"failed\""));
        assert_eq!(s.next_batch().await, None);
    }
}
