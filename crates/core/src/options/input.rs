//! What the user says to a turn (`prompt`, or `input` items: text, images, skills and mentions,
//! in order), and to a running turn through `steer`: checked here, sent as the protocol's
//! `UserInput`.

use crate::options::json::{invalid, OptionsError};
use crate::options::locus::Locus;
use serde::{Deserialize, Serialize};
use std::path::Path;
use ts_rs::TS;

/// How closely the model looks at an image (the protocol's `ImageDetail`; the model's default
/// when absent).
#[derive(Deserialize, Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum ImageDetail {
    Auto,
    Low,
    High,
    Original,
}

/// One item of a turn's input, in the protocol's own words (`UserInput`), sent in order.
// Read as JavaScript gives it (unknown fields refused) and, once checked, written as the
// protocol's `UserInput` carries it (a `localImage` path as Codex sees it: inside the WSL
// distribution with a WSL locus). `text_elements` (rich-text spans) are none, and not the
// caller's to give.
#[derive(Deserialize, Serialize, TS, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum InputItem {
    Text {
        /// What the user says (non-empty).
        text: String,
        #[serde(skip_deserializing)]
        #[ts(skip)]
        text_elements: [(); 0],
    },
    LocalImage {
        /// A file read by Codex: an absolute path (a Windows path with a WSL `locus`); it must
        /// exist.
        path: String,
        /// How closely the model looks at the image (the model's default when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        detail: Option<ImageDetail>,
    },
    Image {
        /// An `http(s):` or `data:` URL.
        url: String,
        /// How closely the model looks at the image (the model's default when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        detail: Option<ImageDetail>,
    },
    /// A skill `listSkills` named: its `SKILL.md` goes to the model with the input.
    Skill {
        /// The skill's name, as `listSkills` gives it.
        name: String,
        /// Its `SKILL.md`: the file must exist (Codex would leave a missing one out silently).
        path: String,
    },
    /// An @-mention (a file, an app or a plugin, by the path Codex gave it).
    Mention {
        /// What the mention shows.
        name: String,
        /// The path Codex knows it by (a file, or an `app://`/`plugin://` path).
        path: String,
    },
}

impl InputItem {
    pub fn text(text: impl Into<String>) -> InputItem {
        InputItem::Text { text: text.into(), text_elements: [] }
    }
}

/// `prompt` or `input` (exactly one) as the turn's input items.
pub fn from_options(
    prompt: Option<String>,
    input: Option<Vec<InputItem>>,
    locus: Option<&Locus>,
) -> Result<Vec<InputItem>, OptionsError> {
    match (prompt, input) {
        (Some(_), Some(_)) => Err(invalid("options.prompt and options.input: give exactly one of them")),
        (None, None) => Err(invalid("options.prompt (a string) or options.input (an array of items) is required")),
        (Some(prompt), None) if prompt.trim().is_empty() => Err(invalid("options.prompt must be a non-empty string")),
        (Some(prompt), None) => Ok(vec![InputItem::text(prompt)]),
        (None, Some(items)) => items_of(items, "options.input", locus),
    }
}

/// The input of a steer (JSON text of an item array); errors name the item as `input[i]`.
pub fn steer_input(json: &str, locus: Option<&Locus>) -> Result<Vec<InputItem>, OptionsError> {
    let items: Vec<InputItem> = crate::options::json::from_json_as(json, "input")?;
    items_of(items, "input", locus)
}

/// Checks `items`; errors name the item as `{path}[i]`.
pub fn items_of(items: Vec<InputItem>, path: &str, locus: Option<&Locus>) -> Result<Vec<InputItem>, OptionsError> {
    if items.is_empty() {
        return Err(invalid(format!("{path} must hold at least one item")));
    }
    items.into_iter().enumerate().map(|(i, item)| checked(item, &format!("{path}[{i}]"), locus)).collect()
}

/// `item` as it goes on the wire, once it is found good.
fn checked(item: InputItem, at: &str, locus: Option<&Locus>) -> Result<InputItem, OptionsError> {
    match item {
        InputItem::Text { text, .. } if text.is_empty() => {
            Err(invalid(format!("{at}.text must be a non-empty string")))
        }
        InputItem::Text { text, .. } => Ok(InputItem::text(text)),
        InputItem::LocalImage { path, detail } => {
            Ok(InputItem::LocalImage { path: local_file(path, at, locus)?, detail })
        }
        InputItem::Skill { name, path } => {
            // Codex leaves out a skill whose file it cannot read without a word: said here instead.
            let name = named(name, at)?;
            Ok(InputItem::Skill { name, path: local_file(path, at, locus)? })
        }
        InputItem::Mention { name, path } => {
            let name = named(name, at)?;
            if path.trim().is_empty() {
                return Err(invalid(format!("{at}.path must be a non-empty string")));
            }
            Ok(InputItem::Mention { name, path })
        }
        InputItem::Image { url, detail } => {
            let scheme = url.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
            match scheme.as_deref() {
                Some("http" | "https") if url.len() > scheme.as_ref().map_or(0, |s| s.len() + 3) => {
                    Ok(InputItem::Image { url, detail })
                }
                Some("data") => Ok(InputItem::Image { url, detail }),
                // Never the URL itself: a data: URL can be megabytes, a signed URL a credential.
                _ => Err(invalid(format!("{at}.url must be an http(s) or data: URL"))),
            }
        }
    }
}

fn named(name: String, at: &str) -> Result<String, OptionsError> {
    match name.trim().is_empty() {
        true => Err(invalid(format!("{at}.name must be a non-empty string"))),
        false => Ok(name),
    }
}

/// `path` of a file Codex reads itself: absolute, a file here, and inside a WSL distribution at
/// its path there.
fn local_file(path: String, at: &str, locus: Option<&Locus>) -> Result<String, OptionsError> {
    if !Path::new(&path).is_absolute() {
        return Err(invalid(format!("{at}.path must be an absolute path, got {path:?}")));
    }
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(invalid(format!("{at}.path {path:?} is not a file"))),
        Err(e) => return Err(invalid(format!("{at}.path {path:?} cannot be read: {e}"))),
    }
    match locus {
        None => Ok(path),
        Some(locus) => crate::options::locus::wsl_path(&path, &locus.wsl.distro).ok_or_else(|| {
            invalid(format!("{at}.path {path:?} has no path inside the WSL distribution {:?}", locus.wsl.distro))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(input: serde_json::Value) -> Result<Vec<InputItem>, String> {
        let raw: Vec<InputItem> =
            crate::options::json::from_json_as(&input.to_string(), "options.input").map_err(|e| e.0)?;
        items_of(raw, "options.input", None).map_err(|e| e.0)
    }

    #[test]
    fn items_go_on_the_wire_in_order_as_user_input() {
        let png = std::env::current_exe().unwrap();
        let png = png.to_str().unwrap();
        let items = parse(json!([
            {"type": "text", "text": "look"},
            {"type": "localImage", "path": png, "detail": "high"},
            {"type": "image", "url": "https://example.com/a.png"},
            {"type": "image", "url": "data:image/png;base64,AAAA"},
        ]))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&items).unwrap(),
            json!([
                {"type": "text", "text": "look", "text_elements": []},
                {"type": "localImage", "path": png, "detail": "high"},
                {"type": "image", "url": "https://example.com/a.png"},
                {"type": "image", "url": "data:image/png;base64,AAAA"},
            ])
        );
    }

    #[test]
    fn every_bad_item_is_named() {
        let err = |v| parse(v).unwrap_err();
        assert!(err(json!([])).starts_with("options.input must hold at least one item"));
        assert!(err(json!([{"type": "audio", "url": "x"}])).contains("[0]"), "{}", err(json!([{"type": "audio"}])));
        assert!(err(json!([{"type": "text", "text": ""}])).starts_with("options.input[0].text"));
        let rel = err(json!([{"type": "text", "text": "a"}, {"type": "localImage", "path": "a.png"}]));
        assert!(rel.starts_with("options.input[1].path must be an absolute path"), "{rel}");
        let missing = if cfg!(windows) { r"C:\no\such.png" } else { "/no/such.png" };
        let gone = err(json!([{"type": "localImage", "path": missing}]));
        assert!(gone.starts_with("options.input[0].path") && gone.contains("cannot be read"), "{gone}");
        let url = err(json!([{"type": "image", "url": "file:///etc/passwd"}]));
        assert_eq!(url, "options.input[0].url must be an http(s) or data: URL");
        assert!(err(json!([{"type": "image", "url": "https://"}])).ends_with("http(s) or data: URL"));
        assert!(err(json!([{"type": "image", "url": "x", "detail": "ultra"}])).contains("[0]"));
        // The wire's own fields are not the caller's: an item carrying one is refused, by name.
        let spans = err(json!([{"type": "text", "text": "a", "text_elements": []}]));
        assert!(spans.contains("[0]") && spans.contains("text_elements"), "{spans}");
    }

    #[test]
    fn skills_and_mentions_go_as_codex_takes_them() {
        let file = std::env::current_exe().unwrap();
        let file = file.to_str().unwrap();
        let items = parse(json!([
            {"type": "text", "text": "use it"},
            {"type": "skill", "name": "deploy", "path": file},
            {"type": "mention", "name": "Docs", "path": "app://docs"},
        ]))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&items).unwrap(),
            json!([
                {"type": "text", "text": "use it", "text_elements": []},
                {"type": "skill", "name": "deploy", "path": file},
                {"type": "mention", "name": "Docs", "path": "app://docs"},
            ])
        );
        let err = |v| parse(v).unwrap_err();
        let missing = if cfg!(windows) { r"C:\no\SKILL.md" } else { "/no/SKILL.md" };
        let gone = err(json!([{"type": "skill", "name": "deploy", "path": missing}]));
        assert!(gone.starts_with("options.input[0].path") && gone.contains("cannot be read"), "{gone}");
        let relative = err(json!([{"type": "skill", "name": "deploy", "path": "SKILL.md"}]));
        assert!(relative.starts_with("options.input[0].path must be an absolute path"), "{relative}");
        assert_eq!(
            err(json!([{"type": "skill", "name": " ", "path": file}])),
            "options.input[0].name must be a non-empty string"
        );
        assert_eq!(
            err(json!([{"type": "mention", "name": "Docs", "path": ""}])),
            "options.input[0].path must be a non-empty string"
        );
        assert!(err(json!([{"type": "mention", "name": "Docs"}])).starts_with("options.input[0]"));
    }

    #[test]
    fn a_steer_names_its_items() {
        assert_eq!(steer_input(r#"[{"type":"text","text":"more"}]"#, None).unwrap(), vec![InputItem::text("more")]);
        let e = steer_input(r#"[{"type":"text","text":"a"},{"type":"image","url":"ftp://x"}]"#, None).unwrap_err().0;
        assert_eq!(e, "input[1].url must be an http(s) or data: URL");
        let e = steer_input(r#"[{"type":"video"}]"#, None).unwrap_err().0;
        assert!(e.starts_with("input[0]"), "{e}");
        assert!(steer_input("[]", None).unwrap_err().0.starts_with("input must hold"));
    }

    #[test]
    fn exactly_one_of_prompt_and_input() {
        let item = || Some(vec![InputItem::text("a")]);
        assert!(from_options(Some("p".into()), item(), None).unwrap_err().0.contains("exactly one"));
        assert!(from_options(None, None, None).unwrap_err().0.contains("is required"));
        assert!(from_options(Some(" ".into()), None, None).unwrap_err().0.starts_with("options.prompt"));
        assert_eq!(from_options(Some("p".into()), None, None).unwrap(), vec![InputItem::text("p")]);
        assert_eq!(from_options(None, item(), None).unwrap(), vec![InputItem::text("a")]);
    }
}
