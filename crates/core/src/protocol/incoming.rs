//! Reading what the server sends: one pass over each line classifies it and reads the scope of
//! a notification (its thread, turn and, for deltas, their fields) without building a tree.

use super::RpcError;
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

/// One message from the server.
#[derive(Debug)]
pub enum Incoming {
    Response { id: Value, outcome: Result<Box<RawValue>, RpcError> },
    Call(ServerCall),
}

/// What the server sends of its own accord (the connection passes it on as it is).
#[derive(Debug)]
pub enum ServerCall {
    Request {
        id: Value,
        method: String,
    },
    /// Only the scope of a notification's params is read here (see [`Scope`]); the params
    /// themselves are read again from the line when a handler needs them ([`params_of`]).
    /// Boxed: a frame passes through half a dozen calls on its way to its owner, and moving
    /// the scope itself (240 bytes) at each was a quarter of the runner's time in a burst of
    /// deltas, several times the allocation (BENCHMARKS.md, "Where the time goes").
    Notification {
        method: Cow<'static, str>,
        scope: Box<Scope>,
    },
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    params: Option<Box<Scope>>,
    /// Present, even as `null` (JSON-RPC 2.0 allows a null result): only an absent one is `None`.
    #[serde(default, deserialize_with = "present")]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<RpcError>,
}

/// A field that is there, whatever its value (`Option`'s own reading takes `null` for absent).
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(deserializer).map(Some)
}

impl Incoming {
    /// Classifies one line. Anything that is not a JSON object carrying a method, a result or
    /// an error is rejected with a reason.
    pub fn parse(line: &str) -> Result<Incoming, String> {
        if !line.trim_start().starts_with('{') {
            return Err("not a JSON object".into());
        }
        let envelope: Envelope = serde_json::from_str(line).map_err(|e| e.to_string())?;
        match (envelope.method, envelope.id) {
            (Some(method), Some(id)) => Ok(Incoming::Call(ServerCall::Request { id, method: method.into_owned() })),
            (Some(method), None) => Ok(Incoming::Call(ServerCall::Notification {
                method: super::methods::known(method),
                scope: envelope.params.unwrap_or_default(),
            })),
            (None, Some(id)) => match (envelope.result, envelope.error) {
                (_, Some(error)) => Ok(Incoming::Response { id, outcome: Err(error) }),
                (Some(result), None) => Ok(Incoming::Response { id, outcome: Ok(result) }),
                (None, None) => Err("a message with an id but no method, result or error".into()),
            },
            (None, None) => Err("a message with neither method nor id".into()),
        }
    }
}

/// The params of a received line, whole.
pub fn params_of(line: &str) -> Option<Box<RawValue>> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(default, borrow)]
        params: Option<&'a RawValue>,
    }
    serde_json::from_str::<Params>(line).ok()?.params.map(|p| p.to_owned())
}

/// A notification's params read from its line as `T`, in one pass; `None` when they are
/// absent or of another shape.
pub fn params<T: serde::de::DeserializeOwned>(line: &str) -> Option<T> {
    #[derive(Deserialize)]
    struct Params<T> {
        params: T,
    }
    serde_json::from_str::<Params<T>>(line).ok().map(|p| p.params)
}

/// The fields of a notification's params that routing needs, read while the line is parsed,
/// together with the fields of the delta notifications (the bulk of a stream), so that a
/// delta is read once. Params of any shape are accepted: a field of an unexpected type is as
/// good as absent, so such params never make the frame unreadable or change where it is
/// routed; a malformed delta only loses its dedicated event (see [`Delta::of`]).
#[derive(Default, Debug)]
pub struct Scope {
    thread_id: Option<String>,
    turn_id: Option<String>,
    /// `turn/started` and `turn/completed` carry the turn object instead of `turnId`.
    turn: Option<String>,
    /// `thread/started` carries the thread object instead of `threadId`.
    thread: Option<String>,
    item_id: Seen,
    delta: Seen,
    summary_index: Seen,
    content_index: Seen,
    /// `item/started` and `item/completed` carry the item: kept raw as it was sent.
    item: Option<Box<RawValue>>,
}

impl Scope {
    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref().or(self.thread.as_deref())
    }

    pub fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref().or(self.turn.as_deref())
    }

    /// The `item` of the params, taken out of the scope.
    pub fn take_item(&mut self) -> Option<Box<RawValue>> {
        self.item.take()
    }
}

/// What a params field held, as far as the scope cares.
#[derive(Default, Debug, PartialEq)]
enum Seen {
    #[default]
    Absent,
    Null,
    Text(String),
    Integer(i64),
    /// An object, with its `id` if that is a string.
    Object(Option<String>),
    Other,
}

impl Seen {
    fn text(self) -> Option<String> {
        match self {
            Seen::Text(text) => Some(text),
            _ => None,
        }
    }

    fn id(self) -> Option<String> {
        match self {
            Seen::Object(id) => id,
            _ => None,
        }
    }

    /// An optional index: absent or null is `Some(None)`, anything but an integer `None`.
    fn index(&self) -> Option<Option<i64>> {
        match self {
            Seen::Absent | Seen::Null => Some(None),
            Seen::Integer(n) => Some(Some(*n)),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Seen {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Seen, D::Error> {
        deserializer.deserialize_any(SeenVisitor)
    }
}

struct SeenVisitor;

impl<'de> Visitor<'de> for SeenVisitor {
    type Value = Seen;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E>(self, v: &str) -> Result<Seen, E> {
        Ok(Seen::Text(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Seen, E> {
        Ok(Seen::Text(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Seen, E> {
        Ok(Seen::Integer(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Seen, E> {
        Ok(i64::try_from(v).map_or(Seen::Other, Seen::Integer))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Seen, E> {
        Ok(Seen::Other)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Seen, E> {
        Ok(Seen::Other)
    }

    fn visit_unit<E>(self) -> Result<Seen, E> {
        Ok(Seen::Null)
    }

    fn visit_none<E>(self) -> Result<Seen, E> {
        Ok(Seen::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Seen, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Seen, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Seen::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Seen, A::Error> {
        let mut id = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Id => id = map.next_value::<Seen>()?.text(),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Seen::Object(id))
    }
}

/// The params keys the scope reads; any other is skipped.
enum Key {
    ThreadId,
    TurnId,
    Turn,
    Thread,
    Id,
    ItemId,
    Delta,
    SummaryIndex,
    ContentIndex,
    Item,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "threadId" => Key::ThreadId,
                    "turnId" => Key::TurnId,
                    "turn" => Key::Turn,
                    "thread" => Key::Thread,
                    "id" => Key::Id,
                    "itemId" => Key::ItemId,
                    "delta" => Key::Delta,
                    "summaryIndex" => Key::SummaryIndex,
                    "contentIndex" => Key::ContentIndex,
                    "item" => Key::Item,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Scope, D::Error> {
        struct ScopeVisitor;
        impl<'de> Visitor<'de> for ScopeVisitor {
            type Value = Scope;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("notification params")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scope, A::Error> {
                let mut scope = Scope::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::ThreadId => scope.thread_id = map.next_value::<Seen>()?.text(),
                        Key::TurnId => scope.turn_id = map.next_value::<Seen>()?.text(),
                        Key::Turn => scope.turn = map.next_value::<Seen>()?.id(),
                        Key::Thread => scope.thread = map.next_value::<Seen>()?.id(),
                        Key::ItemId => scope.item_id = map.next_value()?,
                        Key::Delta => scope.delta = map.next_value()?,
                        Key::SummaryIndex => scope.summary_index = map.next_value()?,
                        Key::ContentIndex => scope.content_index = map.next_value()?,
                        Key::Item => scope.item = Some(map.next_value()?),
                        Key::Id | Key::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(scope)
            }
            // Params that are not an object have no scope.
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scope, A::Error> {
                SeenVisitor.visit_seq(seq).map(|_| Scope::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Scope, E> {
                Ok(Scope::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Scope, E> {
                Ok(Scope::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Scope, E> {
                Ok(Scope::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Scope, E> {
                Ok(Scope::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Scope, E> {
                Ok(Scope::default())
            }
            fn visit_unit<E>(self) -> Result<Scope, E> {
                Ok(Scope::default())
            }
        }
        deserializer.deserialize_any(ScopeVisitor)
    }
}

/// `{threadId, turnId, itemId, delta, summaryIndex?, contentIndex?}` of the delta notifications.
#[derive(Debug, PartialEq)]
pub struct Delta {
    pub item_id: String,
    pub delta: String,
    pub summary_index: Option<i64>,
    pub content_index: Option<i64>,
}

impl Delta {
    /// The delta fields read with the scope, or `None` when one is missing or of the wrong
    /// type. Takes the texts out of the scope.
    pub fn of(scope: &mut Scope) -> Option<Delta> {
        let summary_index = scope.summary_index.index()?;
        let content_index = scope.content_index.index()?;
        if !matches!((&scope.item_id, &scope.delta), (Seen::Text(_), Seen::Text(_))) {
            return None;
        }
        Some(Delta {
            item_id: std::mem::take(&mut scope.item_id).text()?,
            delta: std::mem::take(&mut scope.delta).text()?,
            summary_index,
            content_index,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        assert!(matches!(Incoming::parse(r#"{"id":1,"result":{}}"#), Ok(Incoming::Response { outcome: Ok(_), .. })));
        assert!(matches!(
            Incoming::parse(r#"{"id":1,"error":{"code":-32600,"message":"x"}}"#),
            Ok(Incoming::Response { outcome: Err(_), .. })
        ));
        assert!(matches!(
            Incoming::parse(r#"{"id":0,"method":"item/tool/call","params":{}}"#),
            Ok(Incoming::Call(ServerCall::Request { .. }))
        ));
        assert!(matches!(
            Incoming::parse(r#"{"method":"x","params":{},"emittedAtMs":1}"#),
            Ok(Incoming::Call(ServerCall::Notification { .. }))
        ));
        // JSON-RPC 2.0 allows a null result: it is a success like any other.
        match Incoming::parse(r#"{"id":2,"result":null}"#) {
            Ok(Incoming::Response { outcome: Ok(result), .. }) => assert_eq!(result.get(), "null"),
            other => panic!("a null result is a response: {other:?}"),
        }
        assert!(Incoming::parse(r#"[{"id":1,"result":{}}]"#).is_err());
        assert!(Incoming::parse(r#"{"id":101}"#).is_err());
        assert!(Incoming::parse("42").is_err());
        assert!(Incoming::parse("{nope").is_err());
    }

    fn scope(params: &str) -> Scope {
        match Incoming::parse(&format!(r#"{{"method":"m","params":{params},"emittedAtMs":1}}"#)) {
            Ok(Incoming::Call(ServerCall::Notification { scope, .. })) => *scope,
            other => panic!("not a notification: {other:?}"),
        }
    }

    fn delta(params: &str) -> Option<Delta> {
        Delta::of(&mut scope(params))
    }

    #[test]
    fn reads_scope_and_delta_in_one_pass() {
        let mut s =
            scope(r#"{"threadId":"th","turnId":"t\u0031","itemId":"m","delta":"a\"b","summaryIndex":2,"extra":[1]}"#);
        assert_eq!((s.thread_id(), s.turn_id()), (Some("th"), Some("t1")));
        let d = Delta::of(&mut s).unwrap();
        assert_eq!(
            (d.item_id.as_str(), d.delta.as_str(), d.summary_index, d.content_index),
            ("m", "a\"b", Some(2), None)
        );

        let s = scope(r#"{"thread":{"id":"th","x":{"id":"no"}},"turn":{"items":[{"id":"no"}],"id":"tu"}}"#);
        assert_eq!((s.thread_id(), s.turn_id()), (Some("th"), Some("tu")));
    }

    #[test]
    fn malformed_delta_fields_keep_the_scope() {
        let mut s = scope(r#"{"threadId":"th","turnId":"tu","itemId":"m","delta":5}"#);
        assert_eq!(s.thread_id(), Some("th"));
        assert_eq!(Delta::of(&mut s), None);
        assert_eq!(delta(r#"{"itemId":"m"}"#), None);
        assert_eq!(delta(r#"{"itemId":"m","delta":"x","contentIndex":"0"}"#), None);
        assert_eq!(delta(r#"{"itemId":"m","delta":"x","contentIndex":1.5}"#), None);
        assert_eq!(delta(r#"{"itemId":"m","delta":"x","contentIndex":null}"#).unwrap().content_index, None);
        assert_eq!(delta(r#"{"itemId":"m","delta":{"a":[1,{"b":2}]}}"#), None);
    }

    #[test]
    fn params_of_any_shape_are_read_without_making_the_frame_unreadable() {
        for params in [
            r#"[1,{"threadId":"x"}]"#,
            r#""text""#,
            "5",
            "-1.5",
            "true",
            "null",
            r#"{"threadId":5,"turn":"tu","thread":[]}"#,
        ] {
            let s = scope(params);
            assert_eq!((s.thread_id(), s.turn_id()), (None, None), "{params}");
        }
        assert_eq!(params_of(r#"{"method":"m","params":{"a":[1]},"x":2}"#).unwrap().get(), r#"{"a":[1]}"#);
        assert!(params_of(r#"{"method":"m"}"#).is_none());
    }

    #[test]
    fn handled_notification_names_are_not_copied() {
        match Incoming::parse(r#"{"method":"item/agentMessage/delta","params":{}}"#) {
            Ok(Incoming::Call(ServerCall::Notification { method: Cow::Borrowed(m), .. })) => {
                assert_eq!(m, crate::protocol::method::AGENT_MESSAGE_DELTA)
            }
            other => panic!("{other:?}"),
        }
        match Incoming::parse(r#"{"method":"some/new","params":{}}"#) {
            Ok(Incoming::Call(ServerCall::Notification { method: Cow::Owned(m), .. })) => assert_eq!(m, "some/new"),
            other => panic!("{other:?}"),
        }
    }
}
