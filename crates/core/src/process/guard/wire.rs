//! The line protocol from the host to the guard, one line per message:
//!
//! - `+<pid> <start> t|g[ f]`: a child started (`<start>`: its start time, `-` if unknown; `t`:
//!   end its tree, `g`: its group only; `f`: a copy of its stdin comes with the line);
//! - `=<pid>`: the host is about to close the child's stdin, the guard lets its copy go;
//! - `-<pid>`: the child is gone;
//! - `bye`: the host has no child left, the guard leaves.
//!
//! The host writes it (`client`), the guard reads it (crates/guard); a line the guard cannot
//! read is skipped.

/// How the guard ends a registered child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Its process group, its descendants and everything carrying the host's marker.
    Tree,
    /// Its process group only (a login shell: what it daemonised is the user's).
    Group,
}

/// One line of the host-to-guard protocol.
#[derive(Debug, PartialEq, Eq)]
pub enum Message {
    /// A child started; `stdin`: a copy of its stdin's writing end comes with the line.
    Add {
        pid: i32,
        start: Option<u64>,
        kind: Kind,
        stdin: bool,
    },
    /// The host is about to close the child's stdin: the guard lets its copy go.
    Release {
        pid: i32,
    },
    /// The child is gone.
    Remove {
        pid: i32,
    },
    Bye,
}

impl Message {
    /// The line, with its newline.
    pub fn line(&self) -> String {
        match self {
            Message::Add { pid, start, kind, stdin } => {
                let kind = if *kind == Kind::Tree { 't' } else { 'g' };
                let start = start.map_or("-".to_string(), |s| s.to_string());
                format!("+{pid} {start} {kind}{}\n", if *stdin { " f" } else { "" })
            }
            Message::Release { pid } => format!("={pid}\n"),
            Message::Remove { pid } => format!("-{pid}\n"),
            Message::Bye => "bye\n".to_string(),
        }
    }

    /// A line without its newline; `None` for anything else.
    pub fn parse(line: &str) -> Option<Message> {
        if line == "bye" {
            return Some(Message::Bye);
        }
        if let Some(pid) = line.strip_prefix('-') {
            return Some(Message::Remove { pid: pid.parse().ok()? });
        }
        if let Some(pid) = line.strip_prefix('=') {
            return Some(Message::Release { pid: pid.parse().ok()? });
        }
        let mut parts = line.strip_prefix('+')?.split(' ');
        let pid = parts.next()?.parse().ok()?;
        let start = match parts.next()? {
            "-" => None,
            start => Some(start.parse().ok()?),
        };
        let kind = match parts.next()? {
            "t" => Kind::Tree,
            "g" => Kind::Group,
            _ => return None,
        };
        let stdin = match parts.next() {
            None => false,
            Some("f") => true,
            Some(_) => return None,
        };
        parts.next().is_none().then_some(Message::Add { pid, start, kind, stdin })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_lines_round_trip() {
        for message in [
            Message::Add { pid: 42, start: Some(1234), kind: Kind::Tree, stdin: true },
            Message::Add { pid: 7, start: None, kind: Kind::Group, stdin: false },
            Message::Release { pid: 42 },
            Message::Remove { pid: 42 },
            Message::Bye,
        ] {
            let line = message.line();
            assert!(line.ends_with('\n'));
            assert_eq!(Message::parse(line.trim_end()), Some(message));
        }
        for junk in ["", "+", "+1", "+1 2", "+1 2 x", "+a 2 t", "+1 2 t x", "+1 2 t f f", "-x", "=", "byebye"] {
            assert_eq!(Message::parse(junk), None, "{junk:?}");
        }
    }
}
