//! The rules an option or an argument keeps, as types: each one's `Deserialize` refuses what
//! breaks its rule in words that name the rule (`must be a non-empty string`), which
//! [`super::json`] puts after the option's path (`options.cursor must be a non-empty string`);
//! each one's TypeScript type is what JavaScript passes for it. A rule is written here once:
//! JavaScript does not check it again.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::fmt;
use std::time::Duration;

/// The most milliseconds an option may name: what a JavaScript timer takes (2^31 − 1).
pub const MAX_MILLIS: u64 = (1 << 31) - 1;

/// What a rule's message starts with inside serde's error (see [`rule`]).
pub(super) const RULE: char = '\u{1}';

/// A rule an option breaks, as a `Deserialize` says it: words that read after the option's path
/// (`must be a non-empty string`: `options.cursor must be a non-empty string`), where serde's own
/// errors read after a colon (`options.limit: invalid type: …`). Never with the value.
pub fn rule<E: serde::de::Error>(text: impl std::fmt::Display) -> E {
    E::custom(format_args!("{RULE}{text}"))
}

/// `$ty` reads as `$ts` in the generated TypeScript, inline wherever a field has it.
macro_rules! ts_as {
    ($($ty:ty => $ts:literal),* $(,)?) => {$(
        impl ts_rs::TS for $ty {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;
            fn name(_: &ts_rs::Config) -> String {
                String::from($ts)
            }
            fn inline(cfg: &ts_rs::Config) -> String {
                <Self as ts_rs::TS>::name(cfg)
            }
        }
    )*};
}
pub(crate) use ts_as;

/// A string that is not empty (an id, a cursor, a path as given).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct NonEmpty(pub String);

impl NonEmpty {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for NonEmpty {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        match String::deserialize(de)? {
            text if text.is_empty() => Err(rule("must be a non-empty string")),
            text => Ok(NonEmpty(text)),
        }
    }
}

/// Milliseconds as a JavaScript timer takes them: an integer from `MIN` to 2^31 − 1. Anything
/// else — a negative or fractional number, one too large, `null` where it is given — is refused
/// with the range, as the option's own rule.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Millis<const MIN: u64>(pub u64);

impl<const MIN: u64> Millis<MIN> {
    pub fn duration(self) -> Duration {
        Duration::from_millis(self.0)
    }
}

fn out_of_range<E: de::Error>(min: u64) -> E {
    rule(format!("must be an integer number of milliseconds from {min} to {MAX_MILLIS}"))
}

impl<'de, const MIN: u64> Deserialize<'de> for Millis<MIN> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Ms<const MIN: u64>;
        impl<const MIN: u64> Visitor<'_> for Ms<MIN> {
            type Value = Millis<MIN>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "an integer number of milliseconds from {MIN} to {MAX_MILLIS}")
            }
            fn visit_u64<E: de::Error>(self, ms: u64) -> Result<Self::Value, E> {
                match ms {
                    ms if (MIN..=MAX_MILLIS).contains(&ms) => Ok(Millis(ms)),
                    _ => Err(out_of_range(MIN)),
                }
            }
            fn visit_i64<E: de::Error>(self, ms: i64) -> Result<Self::Value, E> {
                u64::try_from(ms).map_err(|_| out_of_range(MIN)).and_then(|ms| self.visit_u64(ms))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Err(out_of_range(MIN))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Err(out_of_range(MIN))
            }
        }
        de.deserialize_any(Ms::<MIN>)
    }
}

/// A count that is at least 1 (`limit`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Positive(pub u32);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        match u32::deserialize(de)? {
            0 => Err(rule("must be greater than 0")),
            n => Ok(Positive(n)),
        }
    }
}

/// `true` or `false`, nothing else standing for one (`"yes"`, `1`, `null`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Flag(pub bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Bool;
        impl Visitor<'_> for Bool {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a boolean")
            }
            fn visit_bool<E: de::Error>(self, value: bool) -> Result<Flag, E> {
                Ok(Flag(value))
            }
        }
        de.deserialize_any(Bool).map_err(|_: D::Error| rule("must be a boolean"))
    }
}

/// A credential: sent where it belongs, shown nowhere (`Debug` included).
#[derive(Clone, PartialEq)]
pub struct Secret(pub(crate) String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// An option only JavaScript holds (a signal, a callback): declared here so that its type is
/// declared once, never read from the JSON the core is given.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct JsOnly;

ts_as! {
    NonEmpty => "string",
    Millis<0> => "number",
    Millis<1> => "number",
    Positive => "number",
    Flag => "boolean",
    Secret => "string",
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::json::from_json;

    #[derive(serde::Deserialize, Debug)]
    #[serde(rename_all = "camelCase")]
    struct Given {
        #[serde(default, deserialize_with = "crate::options::json::given")]
        timeout_ms: Option<Millis<1>>,
        #[serde(default)]
        cursor: Option<NonEmpty>,
        #[serde(default)]
        limit: Option<Positive>,
    }

    fn err(json: &str) -> String {
        from_json::<Given>(json).unwrap_err().0
    }

    #[test]
    fn each_rule_is_named_after_the_option() {
        let range = "options.timeoutMs must be an integer number of milliseconds from 1 to 2147483647";
        for bad in ["0", "-1", "1.5", "2147483648", "null", "9007199254740993"] {
            assert_eq!(err(&format!(r#"{{"timeoutMs":{bad}}}"#)), range, "{bad}");
        }
        assert!(err(r#"{"timeoutMs":"soon"}"#).starts_with("options.timeoutMs: invalid type: string"));
        let ok: Given = from_json(r#"{"timeoutMs":2147483647,"cursor":"c","limit":1}"#).unwrap();
        assert_eq!(ok.timeout_ms, Some(Millis(2_147_483_647)));
        assert_eq!((ok.cursor, ok.limit), (Some(NonEmpty("c".into())), Some(Positive(1))));
        assert_eq!(err(r#"{"cursor":""}"#), "options.cursor must be a non-empty string");
        assert!(err(r#"{"cursor":7}"#).starts_with("options.cursor: invalid type: integer"));
        assert_eq!(err(r#"{"limit":0}"#), "options.limit must be greater than 0");
        assert!(err(r#"{"limit":1.5}"#).starts_with("options.limit: invalid type: floating"));
        // Absent is absent; only a given value is held to the rule.
        assert_eq!(from_json::<Given>("{}").unwrap().timeout_ms, None);
    }
}
