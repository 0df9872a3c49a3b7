//! A script's `#!` line: which interpreter it names, and the command `env` would look up.

use crate::discovery::env::Os;

/// A `#!` line: the interpreter, and for `#!/usr/bin/env [-S] cmd …` the command env looks up.
#[derive(Debug, PartialEq, Eq)]
pub struct Shebang {
    pub line: String,
    pub interpreter: String,
    pub env_command: Option<String>,
}

pub fn parse_shebang(head: &str) -> Option<Shebang> {
    let line = head.lines().next()?.trim_end();
    let body = line.strip_prefix("#!")?.trim();
    let mut words = body.split_whitespace();
    let interpreter = words.next()?.to_string();
    let env_command = if Os::Unix.file_name(&interpreter) == "env" {
        // `env -S node --flag`, `env -Snode`, `env VAR=1 node`: the first word that is
        // neither an option nor an assignment.
        words
            .flat_map(|w| match w.strip_prefix("-S") {
                Some(glued) if !glued.is_empty() => vec![glued],
                _ => vec![w],
            })
            .find(|w| !w.starts_with('-') && !w.contains('='))
            .map(str::to_string)
    } else {
        None
    };
    Some(Shebang { line: line.to_string(), interpreter, env_command })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shebangs() {
        let s = parse_shebang("#!/usr/bin/env VAR=1 -S node --x\nrest").unwrap();
        assert_eq!(s.env_command.as_deref(), Some("node"));
        assert_eq!(parse_shebang("#! /bin/sh -e").unwrap().interpreter, "/bin/sh");
        assert_eq!(parse_shebang("#!/usr/bin/env -Snode").unwrap().env_command.as_deref(), Some("node"));
        assert_eq!(parse_shebang("\x7fELF"), None);
        assert_eq!(parse_shebang("#!"), None);
    }
}
