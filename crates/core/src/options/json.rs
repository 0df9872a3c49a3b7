//! Reading options that JavaScript passes as JSON text: every error names the option it is
//! about (`options.env.A: invalid type: integer, expected a string`) and never shows a value,
//! since values can be credentials.

use std::collections::BTreeMap;

#[derive(Debug, PartialEq)]
pub struct OptionsError(pub String);

impl std::fmt::Display for OptionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OptionsError {}

pub(crate) fn invalid(message: impl Into<String>) -> OptionsError {
    OptionsError(message.into())
}

/// serde names the offending value (`invalid type: string "Bearer …", expected a map`): an
/// `env` or header value in the wrong place would be echoed into the error. Keeps the kind only.
fn without_value(message: &str) -> String {
    // serde_json's words for half of a surrogate pair, which a UTF-16 string sliced through a
    // character holds.
    if message.contains("surrogate") || message.contains("end of hex escape") {
        return "contains an unpaired UTF-16 surrogate (a string cut through a character)".to_string();
    }
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some(at) = rest.rfind(", expected ") {
                let kind = rest[..at].split([' ', '`']).next().unwrap_or("");
                return format!("{prefix}{kind}{}", &rest[at..]);
            }
        }
    }
    message.to_string()
}

/// Deserializes the JSON text of an options object; errors name the option
/// (`options.env.A: invalid type: integer, expected a string`) and never a value.
pub fn from_json<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, OptionsError> {
    from_json_as(json, "options")
}

/// [`from_json`] for a value the caller calls `root` (`input` for a steer's items:
/// `input[1].url: …`).
pub fn from_json_as<T: serde::de::DeserializeOwned>(json: &str, root: &str) -> Result<T, OptionsError> {
    let de = &mut serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // serde_json appends the position in our own JSON text, which means nothing to callers.
        let inner = inner.split(" at line ").next().unwrap_or(&inner);
        // A rule reads after the path; serde's own words after a colon.
        let (sep, inner) = match inner.strip_prefix(super::rules::RULE) {
            Some(rule) => (" ", rule.to_string()),
            None => (": ", without_value(inner)),
        };
        let at = match path.as_str() {
            "." => root.to_string(),
            path if path.starts_with('[') => format!("{root}{path}"),
            path => format!("{root}.{path}"),
        };
        invalid(format!("{at}{sep}{inner}"))
    })
}

/// A field whose `null` is given, not absent: present as `Some(None)`, absent as `None` (serde
/// reads both as `None` otherwise). For `#[serde(default, deserialize_with = "present")]`.
pub fn present<'de, D: serde::Deserializer<'de>, T: serde::Deserialize<'de>>(
    de: D,
) -> Result<Option<Option<T>>, D::Error> {
    <Option<T> as serde::Deserialize>::deserialize(de).map(Some)
}

/// A field whose `null` is held to its type's rule rather than read as absent (serde reads a
/// given `null` as `None`). For `#[serde(default, deserialize_with = "given")]`.
pub fn given<'de, D: serde::Deserializer<'de>, T: serde::Deserialize<'de>>(de: D) -> Result<Option<T>, D::Error> {
    T::deserialize(de).map(Some)
}

/// The keys of an options object that are none of its fields, kept (`#[serde(flatten)]`) so
/// that the error can say whose option each one is not, rather than serde's list of fields.
pub type Unknown = BTreeMap<String, serde_json::Value>;

/// `options.<key> is not an option of <entry>` for the first unknown key, or what `why` says
/// about it (`options.prompt belongs to start(): …`) when it names that key. A key given as
/// `null` is absent, as serde reads an absent option.
pub fn stray(unknown: &Unknown, entry: &str, why: &[(&str, &str)]) -> Result<(), OptionsError> {
    match unknown.iter().find(|(_, value)| !value.is_null()).map(|(key, _)| key) {
        None => Ok(()),
        Some(key) => match why.iter().find(|(name, _)| name == key) {
            Some((_, why)) => Err(invalid(format!("options.{key} {why}"))),
            None => Err(invalid(format!("options.{key} is not an option of {entry}"))),
        },
    }
}

/// Variable names and values a child environment can hold.
pub fn check_env(env: &BTreeMap<String, String>) -> Result<(), OptionsError> {
    for (key, value) in env {
        if key.is_empty() || key.contains('=') || key.contains('\0') {
            // Only what precedes a `=` or NUL: `"TOKEN=value"` passed as a name holds a value.
            let shown = key.split(['=', '\0']).next().unwrap_or("");
            return Err(invalid(format!(
                "options.env has an invalid variable name starting {shown:?} (names must be non-empty, without '=' or NUL)"
            )));
        }
        if value.contains('\0') {
            return Err(invalid(format!("options.env.{key} contains a NUL character")));
        }
    }
    Ok(())
}

/// How long one request may take when `requestTimeoutMs` is not given, for every entry point.
pub const DEFAULT_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(30_000);

/// `requestTimeoutMs`, as every entry point reads it (its rule is [`Millis`]'s: 1 … 2^31 − 1
/// ms): by default [`DEFAULT_REQUEST_TIMEOUT`].
///
/// [`Millis`]: super::rules::Millis
pub fn request_timeout(value: Option<super::rules::Millis<1>>) -> std::time::Duration {
    value.map_or(DEFAULT_REQUEST_TIMEOUT, super::rules::Millis::duration)
}
