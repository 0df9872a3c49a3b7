//! The `codex --version` answer and the range of CLI versions this package supports.
//!
//! The runner needs `thread/start` with the `sandbox` mode string and `turn/start` with
//! `sandboxPolicy`, `approvalPolicy` and `outputSchema`, and a read-only turn needs
//! `mcpServerStatus/list` to report `runtimeStatus`. The range from 0.150.0 to the pinned
//! 0.171.0 is proven by the compatibility suite (`pnpm compat`: every release in it passed every
//! scenario); 0.149.1 and older fail its read-only scenario. Releases newer than the tested one
//! are accepted (app-server keeps its stable surface compatible) and only logged.

use std::cmp::Ordering;
use std::fmt;

/// The oldest codex-cli release discovery accepts: the oldest that passes the whole
/// compatibility suite (`pnpm compat`, every release from here to the pinned one). 0.149.1 and
/// older report no `runtimeStatus` for MCP servers, so a read-only turn cannot confirm its
/// isolation there (it fails closed).
pub const MIN_SUPPORTED_VERSION: &str = "0.150.0";
/// The newest codex-cli release the test suites ran against (the pinned devDependency).
pub const MAX_TESTED_VERSION: &str = "0.171.0";

/// A `major.minor.patch[-pre]` version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    /// The pre-release label after `-`, if any (`alpha.3`).
    pub pre: Option<String>,
}

impl Version {
    /// Parses exactly `major.minor.patch`, optionally followed by `-pre` or `+build`.
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim().trim_start_matches('v');
        let (core, pre) = match text.split_once('-') {
            Some((core, pre)) => (core, Some(pre.split('+').next().unwrap_or(pre).to_string())),
            None => (text.split('+').next().unwrap_or(text), None),
        };
        let mut parts = core.split('.');
        let number = |s: Option<&str>| -> Option<u64> {
            let s = s?;
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
        };
        let major = number(parts.next())?;
        let minor = number(parts.next())?;
        let patch = number(parts.next())?;
        if parts.next().is_some() || matches!(&pre, Some(p) if p.is_empty()) {
            return None;
        }
        Some(Version { major, minor, patch, pre })
    }

    pub fn min_supported() -> Version {
        Version::parse(MIN_SUPPORTED_VERSION).expect("a valid constant")
    }

    pub fn max_tested() -> Version {
        Version::parse(MAX_TESTED_VERSION).expect("a valid constant")
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch)).then_with(|| {
            // A pre-release comes before its release (semver); labels compare as text.
            match (&self.pre, &other.pre) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => a.cmp(b),
            }
        })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some(pre) = &self.pre {
            write!(f, "-{pre}")?;
        }
        Ok(())
    }
}

/// The version in a `codex --version` answer: the line `codex-cli 0.171.0` (launcher noise
/// around it is ignored). `None` when no line has that shape.
pub fn parse_version_output(stdout: &str) -> Option<Version> {
    stdout.lines().find_map(|line| {
        let line = strip_escapes(line);
        let mut words = line.split_whitespace();
        let name = words.next()?;
        if name != "codex-cli" && name != "codex" {
            return None;
        }
        Version::parse(words.next()?)
    })
}

/// `line` without terminal escape sequences (`ESC [ … final`, `ESC ] … BEL`) and other
/// control characters: launcher wrappers colour their output.
fn strip_escapes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    // CSI: parameters, then one final byte in @..~.
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    // OSC: up to BEL or ESC \.
                    while let Some(c) = chars.next() {
                        if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            c if c.is_control() && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// Why a version is not supported, if it is not.
pub fn unsupported_reason(version: &Version) -> Option<String> {
    let min = Version::min_supported();
    (version < &min).then(|| {
        format!("codex-cli {version} is older than {MIN_SUPPORTED_VERSION}, the oldest version @rennet/codex supports")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_cli_answer() {
        assert_eq!(parse_version_output("codex-cli 0.171.0\n").unwrap().to_string(), "0.171.0");
        assert_eq!(
            parse_version_output("Welcome to mise\n\x1b[0mcodex-cli 0.160.2-alpha.3\n").unwrap().to_string(),
            "0.160.2-alpha.3"
        );
        assert_eq!(parse_version_output("codex 1.2.3").unwrap().to_string(), "1.2.3");
        assert_eq!(
            parse_version_output("\x1b]0;title\x07\x1b[1;32mcodex-cli\x1b[0m 0.171.0\r\n").unwrap().to_string(),
            "0.171.0"
        );
        for garbage in [
            "",
            "codex-cli",
            "codex-cli banana",
            "version 0.171.0",
            "codex-cli 0.171",
            "codex-cli 0.171.0.1",
            "codex-cli 0.x.0",
        ] {
            assert_eq!(parse_version_output(garbage), None, "{garbage:?}");
        }
    }

    #[test]
    fn orders_versions() {
        let v = |s| Version::parse(s).unwrap();
        assert!(v("0.150.0") > v("0.149.9"));
        assert!(v("0.150.0") > v("0.150.0-alpha.1"));
        assert!(v("0.150.0-beta") > v("0.150.0-alpha"));
        assert!(v("1.0.0") > v("0.999.999"));
        assert_eq!(v("v0.1.2+build"), v("0.1.2"));
    }

    #[test]
    fn supported_range() {
        assert!(Version::min_supported() <= Version::max_tested());
        assert_eq!(unsupported_reason(&Version::parse(MIN_SUPPORTED_VERSION).unwrap()), None);
        assert_eq!(unsupported_reason(&Version::parse("9.0.0").unwrap()), None);
        let reason = unsupported_reason(&Version::parse("0.149.1").unwrap()).unwrap();
        assert!(reason.contains("0.149.1") && reason.contains(MIN_SUPPORTED_VERSION), "{reason}");
        assert!(unsupported_reason(&Version::parse("0.150.0-alpha.1").unwrap()).is_some());
    }
}
