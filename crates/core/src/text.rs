//! Text cut to a bound for a message, a report or an event, and a line as an app shows it:
//! one rule each, everywhere.

/// The first `max_chars` characters of `text`, marked with `…` where it was cut.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// `line` without terminal escape sequences (colours, cursor moves): Codex colours its stderr
/// even on a pipe, and an app shows text.
pub fn plain_line(line: &str) -> String {
    if !line.contains('\u{1b}') {
        return line.to_string();
    }
    strip_ansi_escapes::strip_str(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_without_escapes() {
        assert_eq!(
            plain_line("\u{1b}[2m2026-12-02T05:00:00Z\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m codex: ready"),
            "2026-12-02T05:00:00Z  INFO codex: ready"
        );
        assert_eq!(plain_line("plain"), "plain");
        assert_eq!(plain_line("\u{1b}]0;title\u{7}text"), "text");
    }

    #[test]
    fn cuts_at_a_character_and_says_so() {
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("abcd", 3), "abc…");
        assert_eq!(excerpt("ééé", 2), "éé…");
        assert_eq!(excerpt("", 0), "");
    }
}
