//! Text cut to a bound for a message, a report or an event: one rule everywhere.

/// The first `max_chars` characters of `text`, marked with `…` where it was cut.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_a_character_and_says_so() {
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("abcd", 3), "abc…");
        assert_eq!(excerpt("ééé", 2), "éé…");
        assert_eq!(excerpt("", 0), "");
    }
}
