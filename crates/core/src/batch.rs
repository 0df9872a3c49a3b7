//! The text a batch of events crosses into JavaScript as.
//!
//! A batch is one string of records, read back by the `BatchReader` of index.js. Deltas, the
//! bulk of every stream, carry their text as it is, so that JavaScript builds their events from
//! slices of the batch instead of parsing JSON (which costs V8 several times more per event and
//! interns every short string it meets). Every other event is its JSON text.
//!
//! ```text
//! record   = "J" string                      any event, as JSON
//!          | "m" item string                 messageDelta {itemId, delta}
//!          | "c" item string                 commandOutput {itemId, delta}
//!          | "s" item string string          reasoningDelta {itemId, delta, index}, part "summary"
//!          | "t" item string string          reasoningDelta {itemId, delta, index}, part "text"
//! item     = "=" | string                    "=": the item id of the batch's previous delta
//! string   = length ":" text                 length in UTF-16 code units, decimal
//! ```
//!
//! Lengths count UTF-16 code units because that is how JavaScript indexes strings; the text
//! itself is UTF-8 until it becomes a JavaScript string.

use crate::events::{DeltaEvent, HarnessEvent, ReasoningDeltaEvent, ReasoningPart};
use serde_json::Value;
use std::ops::Range;

pub struct Batch {
    text: String,
    events: usize,
    /// Where the item id of the last delta record sits in `text`.
    last_item: Option<Range<usize>>,
    /// The JSON of an event before it gets its length prefix.
    scratch: Vec<u8>,
}

impl Batch {
    pub fn with_capacity(capacity: usize) -> Batch {
        Batch { text: String::with_capacity(capacity), events: 0, last_item: None, scratch: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events == 0
    }

    pub fn events(&self) -> usize {
        self.events
    }

    /// Appends one event; returns how many bytes it added.
    pub fn push(&mut self, event: &HarnessEvent) -> usize {
        let before = self.text.len();
        match event {
            // A delta that replaces what streamed is rare: it goes as JSON, with its `replace`.
            HarnessEvent::MessageDelta(DeltaEvent { item_id, delta, replace: false }) => {
                self.delta('m', item_id, delta)
            }
            HarnessEvent::CommandOutput(DeltaEvent { item_id, delta, replace: false }) => {
                self.delta('c', item_id, delta)
            }
            HarnessEvent::ReasoningDelta(ReasoningDeltaEvent { item_id, delta, part, index, replace: false }) => {
                let kind = match part {
                    ReasoningPart::Summary => 's',
                    ReasoningPart::Text => 't',
                };
                self.delta(kind, item_id, delta);
                write_string(&mut self.text, itoa::Buffer::new().format(*index));
            }
            event => {
                self.scratch.clear();
                serde_json::to_writer(&mut self.scratch, event).expect("harness events always serialize");
                // serde_json writes UTF-8 only.
                let json = std::str::from_utf8(&self.scratch).expect("serialized JSON is UTF-8");
                self.text.push('J');
                write_string(&mut self.text, json);
            }
        }
        self.events += 1;
        self.text.len() - before
    }

    fn delta(&mut self, kind: char, item_id: &str, delta: &str) {
        self.text.push(kind);
        match &self.last_item {
            Some(range) if &self.text[range.clone()] == item_id => self.text.push('='),
            _ => {
                let range = write_string(&mut self.text, item_id);
                self.last_item = Some(range);
            }
        }
        write_string(&mut self.text, delta);
    }

    pub fn into_string(self) -> String {
        self.text
    }
}

/// Writes `s` with its length prefix; returns where `s` itself sits.
fn write_string(text: &mut String, s: &str) -> Range<usize> {
    text.push_str(itoa::Buffer::new().format(utf16_len(s)));
    text.push(':');
    let start = text.len();
    text.push_str(s);
    start..text.len()
}

fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().map(char::len_utf16).sum()
    }
}

/// Reads a batch back into the events' JSON values, as index.js does: the reference for the
/// format, used by the tests.
pub fn decode(text: &str) -> Result<Vec<Value>, String> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut reader = Reader { units: &units, pos: 0, item: None };
    let mut events = Vec::new();
    while reader.pos < units.len() {
        events.push(reader.record()?);
    }
    Ok(events)
}

struct Reader<'a> {
    units: &'a [u16],
    pos: usize,
    item: Option<String>,
}

impl Reader<'_> {
    fn record(&mut self) -> Result<Value, String> {
        let kind = self.unit()?;
        let (kind, part) = match kind {
            b'J' => {
                let json = self.string()?;
                return serde_json::from_str(&json).map_err(|e| format!("record at {}: {e}", self.pos));
            }
            b'm' => ("messageDelta", None),
            b'c' => ("commandOutput", None),
            b's' => ("reasoningDelta", Some("summary")),
            b't' => ("reasoningDelta", Some("text")),
            other => return Err(format!("unknown record kind {:?} at {}", other as char, self.pos - 1)),
        };
        let item = if self.units.get(self.pos) == Some(&u16::from(b'=')) {
            self.pos += 1;
            self.item.clone().ok_or("\"=\" before any item id")?
        } else {
            let item = self.string()?;
            self.item = Some(item.clone());
            item
        };
        let delta = self.string()?;
        let mut event = serde_json::json!({"type": kind, "itemId": item, "delta": delta});
        if let Some(part) = part {
            let index: i64 = self.string()?.parse().map_err(|e| format!("reasoning index: {e}"))?;
            event["part"] = part.into();
            event["index"] = index.into();
        }
        Ok(event)
    }

    fn unit(&mut self) -> Result<u8, String> {
        let unit = *self.units.get(self.pos).ok_or("truncated batch")?;
        self.pos += 1;
        u8::try_from(unit).map_err(|_| format!("unexpected code unit {unit:#x} at {}", self.pos - 1))
    }

    fn string(&mut self) -> Result<String, String> {
        let mut len = 0usize;
        loop {
            match self.unit()? {
                b':' => break,
                d @ b'0'..=b'9' => len = len * 10 + usize::from(d - b'0'),
                other => return Err(format!("unexpected {:?} in a length at {}", other as char, self.pos - 1)),
            }
        }
        let end = self.pos + len;
        let units = self.units.get(self.pos..end).ok_or("a string runs past the end of the batch")?;
        self.pos = end;
        String::from_utf16(units).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{DiagnosticEvent, DiagnosticSource, Failure, FailureSource, Terminal};
    use proptest::prelude::*;

    fn roundtrip(events: &[HarnessEvent]) {
        let mut batch = Batch::with_capacity(0);
        for event in events {
            batch.push(event);
        }
        assert_eq!(batch.events(), events.len());
        let decoded = decode(&batch.into_string()).unwrap();
        let expected: Vec<Value> = events.iter().map(|e| serde_json::to_value(e).unwrap()).collect();
        assert_eq!(decoded, expected);
    }

    fn message(item: &str, delta: &str) -> HarnessEvent {
        HarnessEvent::MessageDelta(DeltaEvent { item_id: item.into(), delta: delta.into(), replace: false })
    }

    #[test]
    fn deltas_carry_their_text_as_is_and_repeat_no_item_id() {
        let mut batch = Batch::with_capacity(0);
        batch.push(&message("msg_1", "Hel"));
        batch.push(&message("msg_1", "lo"));
        batch.push(&HarnessEvent::CommandOutput(DeltaEvent {
            item_id: "cmd".into(),
            delta: "a\"\n".into(),
            replace: false,
        }));
        batch.push(&HarnessEvent::ReasoningDelta(ReasoningDeltaEvent {
            item_id: "cmd".into(),
            delta: "é🙂".into(),
            part: ReasoningPart::Summary,
            index: 2,
            replace: false,
        }));
        assert_eq!(batch.into_string(), "m5:msg_13:Helm=2:loc3:cmd3:a\"\ns=3:é🙂1:2");
    }

    #[test]
    fn every_kind_of_event_round_trips() {
        roundtrip(&[
            message("msg_1", ""),
            message("msg_1", "12:34"),
            message("msg_2", "=:J"),
            HarnessEvent::Diagnostic(DiagnosticEvent {
                source: DiagnosticSource::Stderr,
                line: "ünïcode \u{0} 🙂".into(),
            }),
            HarnessEvent::ReasoningDelta(ReasoningDeltaEvent {
                item_id: "r".into(),
                delta: "x".into(),
                part: ReasoningPart::Text,
                index: -1,
                replace: false,
            }),
            HarnessEvent::CommandOutput(DeltaEvent {
                item_id: "msg_2".into(),
                delta: "\u{1b}[0m\r\n".into(),
                replace: false,
            }),
            // A delta that replaces what streamed, between two of the same item.
            HarnessEvent::CommandOutput(DeltaEvent { item_id: "msg_2".into(), delta: "whole".into(), replace: true }),
            HarnessEvent::CommandOutput(DeltaEvent { item_id: "msg_2".into(), delta: "more".into(), replace: false }),
            HarnessEvent::MessageDelta(DeltaEvent { item_id: "msg_2".into(), delta: "m".into(), replace: true }),
            HarnessEvent::ReasoningDelta(ReasoningDeltaEvent {
                item_id: "r".into(),
                delta: "y".into(),
                part: ReasoningPart::Summary,
                index: 1,
                replace: true,
            }),
            HarnessEvent::Terminal(Terminal::failed(Failure::new(
                FailureSource::Spawn,
                crate::failure::Code::SpawnFailed,
                "m",
            ))),
        ]);
    }

    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![any::<String>(), "[a-z0-9=:J ]{0,12}"]
    }

    fn any_event() -> impl Strategy<Value = HarnessEvent> {
        let item = prop_oneof![Just("a".to_string()), Just("b".to_string()), any_text()];
        prop_oneof![
            (item.clone(), any_text()).prop_map(|(i, d)| message(&i, &d)),
            (item.clone(), any_text(), any::<bool>()).prop_map(
                |(item_id, delta, replace)| HarnessEvent::CommandOutput(DeltaEvent { item_id, delta, replace })
            ),
            (item, any_text(), any::<bool>(), any::<i64>(), any::<bool>()).prop_map(
                |(item_id, delta, summary, index, replace)| {
                    let part = if summary { ReasoningPart::Summary } else { ReasoningPart::Text };
                    HarnessEvent::ReasoningDelta(ReasoningDeltaEvent { item_id, delta, part, index, replace })
                }
            ),
            any_text().prop_map(|line| HarnessEvent::Diagnostic(DiagnosticEvent {
                source: DiagnosticSource::Preamble,
                line
            })),
        ]
    }

    proptest! {
        #[test]
        fn any_sequence_of_events_round_trips(events in proptest::collection::vec(any_event(), 0..40)) {
            roundtrip(&events);
        }
    }
}
