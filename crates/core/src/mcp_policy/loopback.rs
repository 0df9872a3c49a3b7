//! Is a requested MCP server URL loopback-only?
//!
//! The `url` crate (the WHATWG parser Codex's own HTTP stack uses) decides what the URL means.
//! On top of that the host must be *written* in its one plain form — `localhost`, a dotted
//! decimal `127.a.b.c`, or `[::1]` — because the parser normalises many spellings (`127.1`,
//! `0x7f.0.0.1`, `2130706433`, `0177.0.0.1`, percent-encoded or full-width letters, soft
//! hyphens…) to the same address. Accepting only the plain form keeps every other reader of
//! the same text (logs, proxies, people) in agreement with what is checked here.
//!
//! Nothing here echoes the URL: it may carry credentials in its query or userinfo.

use std::net::Ipv6Addr;
use url::{Host, Url};

/// Why a URL is not accepted as loopback. `as_str` is a stable reason for `detail.reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotLoopback {
    /// Whitespace or control characters anywhere in the text.
    ControlOrSpace,
    /// A backslash: special-scheme parsers read it as `/`, other readers do not.
    Backslash,
    Unparsable,
    /// Not `http` or `https`.
    Scheme,
    /// No `//authority` right after the scheme (`http:localhost`, `http:///…`).
    NoAuthority,
    /// `user:password@` before the host.
    Userinfo,
    NoHost,
    /// The host is loopback, but not written in its plain form.
    NonCanonicalHost,
    /// The host is not localhost, 127.0.0.0/8 or ::1.
    NotLoopbackHost,
}

impl NotLoopback {
    pub fn as_str(self) -> &'static str {
        match self {
            NotLoopback::ControlOrSpace => "whitespaceOrControl",
            NotLoopback::Backslash => "backslash",
            NotLoopback::Unparsable => "unparsable",
            NotLoopback::Scheme => "scheme",
            NotLoopback::NoAuthority => "noAuthority",
            NotLoopback::Userinfo => "userinfo",
            NotLoopback::NoHost => "noHost",
            NotLoopback::NonCanonicalHost => "nonCanonicalHost",
            NotLoopback::NotLoopbackHost => "notLoopbackHost",
        }
    }

    /// A sentence for the error message (no part of the URL in it).
    pub fn explain(self) -> &'static str {
        match self {
            NotLoopback::ControlOrSpace => "it contains whitespace or control characters",
            NotLoopback::Backslash => "it contains a backslash",
            NotLoopback::Unparsable => "it is not a valid URL",
            NotLoopback::Scheme => "its scheme is not http or https",
            NotLoopback::NoAuthority => "it has no //host part right after the scheme",
            NotLoopback::Userinfo => "it carries userinfo (user:password@) before the host",
            NotLoopback::NoHost => "it has no host",
            NotLoopback::NonCanonicalHost => {
                "its host is not written plainly as localhost, a dotted-decimal 127.x.y.z address or [::1]"
            }
            NotLoopback::NotLoopbackHost => "its host is not localhost, 127.0.0.0/8 or [::1]",
        }
    }
}

/// Accepts `http(s)://` URLs whose host is `localhost`, an address in 127.0.0.0/8 written as
/// dotted decimal, or `[::1]`; returns the parsed URL.
pub fn check(input: &str) -> Result<Url, NotLoopback> {
    if input.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(NotLoopback::ControlOrSpace);
    }
    if input.contains('\\') {
        return Err(NotLoopback::Backslash);
    }
    let url = Url::parse(input).map_err(|_| NotLoopback::Unparsable)?;
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(NotLoopback::Scheme);
    }
    // The parser accepted it, so the text starts with the scheme (in any case) and a colon.
    let rest = input.get(scheme.len()..).ok_or(NotLoopback::Unparsable)?;
    let Some(after_slashes) = rest.strip_prefix("://") else {
        return Err(NotLoopback::NoAuthority);
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err(NotLoopback::Userinfo);
    }
    // The authority as written: up to the first `/`, `?` or `#`. Used only to compare with
    // what the parser made of it, never to decide on its own.
    let authority = after_slashes.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(NotLoopback::Userinfo);
    }
    let written_host = if authority.starts_with('[') {
        match authority.find(']') {
            Some(end) => &authority[..=end],
            None => return Err(NotLoopback::Unparsable),
        }
    } else {
        authority.split(':').next().unwrap_or("")
    };
    match url.host() {
        None => Err(NotLoopback::NoHost),
        Some(Host::Domain(domain)) => {
            if domain != "localhost" {
                Err(NotLoopback::NotLoopbackHost)
            } else if !written_host.eq_ignore_ascii_case("localhost") {
                Err(NotLoopback::NonCanonicalHost)
            } else {
                Ok(url)
            }
        }
        Some(Host::Ipv4(addr)) => {
            if !addr.is_loopback() {
                Err(NotLoopback::NotLoopbackHost)
            } else if written_host != addr.to_string() {
                Err(NotLoopback::NonCanonicalHost)
            } else {
                Ok(url)
            }
        }
        Some(Host::Ipv6(addr)) => {
            // Only ::1 itself: IPv4-mapped (::ffff:127.0.0.1) and IPv4-compatible forms are
            // other addresses to an IPv6 stack.
            if addr != Ipv6Addr::LOCALHOST {
                Err(NotLoopback::NotLoopbackHost)
            } else if written_host != "[::1]" {
                Err(NotLoopback::NonCanonicalHost)
            } else {
                Ok(url)
            }
        }
    }
}
