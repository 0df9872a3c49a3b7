//! The command line a Windows child is started with. Windows hands a program one string, which
//! the program splits into arguments itself; a batch file (`.cmd`, `.bat`: an npm shim, the test
//! kit's fake) is run by `cmd.exe`, which reads that string by other rules. The package starts
//! its children itself on Windows (see `platform/windows/spawn.rs`), so it writes the string
//! itself, to the same rules as Rust's standard library and character for character the same
//! line (the Windows tests compare the two, under Wine in the Windows lane):
//!
//! - a program: the program name in quotes, then each argument, in quotes when it is empty or
//!   has a space or tab, a run of backslashes doubled where a quote follows it, a quote escaped
//!   by a backslash — what `CommandLineToArgvW` and the C runtime split back into the same
//!   arguments ([`split`] does, for the tests);
//! - a batch file: `cmd.exe /e:ON /v:OFF /d /c ""<script>" <arguments>"`, each argument quoted
//!   unless it is made of letters, digits and `#$*+-./:?@\_` only, a quote doubled, `%` written
//!   as `%%cd:~,%` so that `cmd.exe` expands no variable in it, and an argument with a line
//!   break refused (it would end the command).
//!
//! Everything here works on UTF-16 code units and is compiled and tested on every platform.

// Used by the Windows spawn only; tested everywhere.
#![cfg_attr(not(windows), allow(dead_code))]

use std::io;

const QUOTE: u16 = b'"' as u16;
const BACKSLASH: u16 = b'\\' as u16;
const SPACE: u16 = b' ' as u16;
const TAB: u16 = b'\t' as u16;

fn wide(text: &str) -> impl Iterator<Item = u16> + '_ {
    text.encode_utf16()
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what.to_string())
}

/// The command line of `program` (as it was named) with `args`, for a program that splits its
/// command line as the C runtime does.
pub fn program(program: &[u16], args: &[Vec<u16>]) -> io::Result<Vec<u16>> {
    if program.contains(&0) {
        return Err(invalid("the program name contains a NUL character"));
    }
    // Quoted as it is: a file name cannot contain a quote.
    let mut line = vec![QUOTE];
    line.extend_from_slice(program);
    line.push(QUOTE);
    for arg in args {
        line.push(SPACE);
        push_arg(&mut line, arg)?;
    }
    Ok(line)
}

/// Appends one argument, quoted where the C runtime would otherwise split or drop it.
fn push_arg(line: &mut Vec<u16>, arg: &[u16]) -> io::Result<()> {
    if arg.contains(&0) {
        return Err(invalid("an argument contains a NUL character"));
    }
    let quoted = arg.is_empty() || arg.iter().any(|&c| c == SPACE || c == TAB);
    push_escaped(line, arg, quoted, |line, c, backslashes| {
        if c == QUOTE {
            // 2n + 1 backslashes before a literal quote.
            line.extend(std::iter::repeat_n(BACKSLASH, backslashes + 1));
        }
    });
    Ok(())
}

/// Appends `arg`, in quotes when `quoted`; `escape` writes what goes before each character other
/// than a backslash, given the backslashes just before it. Before the closing quote the
/// backslashes are doubled (2n), so that it stays a closing quote.
fn push_escaped(line: &mut Vec<u16>, arg: &[u16], quoted: bool, escape: impl Fn(&mut Vec<u16>, u16, usize)) {
    if quoted {
        line.push(QUOTE);
    }
    let mut backslashes = 0usize;
    for &c in arg {
        if c == BACKSLASH {
            backslashes += 1;
        } else {
            escape(line, c, backslashes);
            backslashes = 0;
        }
        line.push(c);
    }
    if quoted {
        line.extend(std::iter::repeat_n(BACKSLASH, backslashes));
        line.push(QUOTE);
    }
}

/// The command line that has `cmd.exe` run the batch file `script` with `args`.
pub fn batch(script: &[u16], args: &[Vec<u16>]) -> io::Result<Vec<u16>> {
    if script.contains(&QUOTE) || script.contains(&0) || script.last() == Some(&BACKSLASH) {
        return Err(invalid("a batch file name cannot contain a quote or end with a backslash"));
    }
    // The whole command in one more pair of quotes, which `/c` takes off.
    let mut line: Vec<u16> = wide("cmd.exe /e:ON /v:OFF /d /c \"\"").collect();
    line.extend_from_slice(script);
    line.push(QUOTE);
    for arg in args {
        if arg.iter().any(|&c| c == b'\r' as u16 || c == b'\n' as u16 || c == 0) {
            return Err(invalid("a batch file argument cannot contain a line break or NUL character"));
        }
        line.push(SPACE);
        push_batch_arg(&mut line, arg);
    }
    line.push(QUOTE);
    Ok(line)
}

/// Whether `cmd.exe` takes this character of an argument as it is, outside quotes.
fn plain_in_batch(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || "#$*+-./:?@\\_".contains(c)
    } else {
        !c.is_control()
    }
}

fn push_batch_arg(line: &mut Vec<u16>, arg: &[u16]) {
    // A trailing backslash is quoted too: in a script's `"%~1"` it would escape the quote.
    let quoted = arg.is_empty()
        || arg.last() == Some(&BACKSLASH)
        || char::decode_utf16(arg.iter().copied()).any(|c| c.is_ok_and(|c| !plain_in_batch(c)));
    push_escaped(line, arg, quoted, |line, c, backslashes| {
        if c == QUOTE {
            // The backslashes before it doubled, and the quote doubled.
            line.extend(std::iter::repeat_n(BACKSLASH, backslashes));
            line.push(QUOTE);
        } else if c == b'%' as u16 {
            // `%%cd:~,%`: an empty substring of %cd%, which stops `%NAME%` expanding.
            line.extend(wide("%%cd:~,"));
        }
    });
}

/// Splits a command line into arguments as the C runtime does (the program name by its own
/// rule: up to the closing quote, or the first space or tab).
pub fn split(line: &[u16]) -> Vec<Vec<u16>> {
    let mut out = Vec::new();
    let mut i = 0;
    // The program name: no escapes.
    let mut name = Vec::new();
    if line.first() == Some(&QUOTE) {
        i = 1;
        while i < line.len() && line[i] != QUOTE {
            name.push(line[i]);
            i += 1;
        }
        i += 1;
    } else {
        while i < line.len() && line[i] != SPACE && line[i] != TAB {
            name.push(line[i]);
            i += 1;
        }
    }
    out.push(name);
    while i < line.len() && (line[i] == SPACE || line[i] == TAB) {
        i += 1;
    }
    let mut current = Vec::new();
    let mut in_quotes = false;
    let mut pending = false;
    while i < line.len() {
        let c = line[i];
        if (c == SPACE || c == TAB) && !in_quotes {
            out.push(std::mem::take(&mut current));
            pending = false;
            while i < line.len() && (line[i] == SPACE || line[i] == TAB) {
                i += 1;
            }
            continue;
        }
        pending = true;
        if c == BACKSLASH {
            let run = line[i..].iter().take_while(|&&c| c == BACKSLASH).count();
            i += run;
            if line.get(i) == Some(&QUOTE) {
                current.extend(std::iter::repeat_n(BACKSLASH, run / 2));
                if run % 2 == 1 {
                    current.push(QUOTE);
                    i += 1;
                }
            } else {
                current.extend(std::iter::repeat_n(BACKSLASH, run));
            }
            continue;
        }
        if c == QUOTE {
            if in_quotes && line.get(i + 1) == Some(&QUOTE) {
                current.push(QUOTE);
                i += 2;
                continue;
            }
            in_quotes = !in_quotes;
            i += 1;
            continue;
        }
        current.push(c);
        i += 1;
    }
    if pending || in_quotes {
        out.push(current);
    }
    out
}

#[cfg(test)]
/// Arguments that each quoting rule meets: spaces, tabs, quotes, backslashes before quotes and
/// at the end, nothing at all, variables and the characters `cmd.exe` treats specially.
pub const AWKWARD: &[&str] = &[
    "plain",
    "",
    "two words",
    "tab\there",
    r#"say "hi""#,
    r"C:\dir\",
    r"C:\dir with space\",
    r#"a\\"b"#,
    "%PATH%",
    "&|<>^()!",
    "-c",
    r#"mcp_servers.x.command="C:\\n o\\x.exe""#,
    "é ü 日本",
];

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn w(text: &str) -> Vec<u16> {
        text.encode_utf16().collect()
    }

    fn text(line: &[u16]) -> String {
        String::from_utf16(line).unwrap()
    }

    fn args(list: &[&str]) -> Vec<Vec<u16>> {
        list.iter().map(|a| w(a)).collect()
    }

    #[test]
    fn a_program_gets_its_arguments_back() {
        let line = program(&w(r"C:\Program Files\codex\codex.exe"), &args(AWKWARD)).unwrap();
        let back = split(&line);
        assert_eq!(text(&back[0]), r"C:\Program Files\codex\codex.exe");
        assert_eq!(back[1..].iter().map(|a| text(a)).collect::<Vec<_>>(), AWKWARD);
        let expected = r#""C:\Program Files\codex\codex.exe" plain "" "two words" "tab<TAB>here" "say \"hi\"" C:\dir\ "C:\dir with space\\" a\\\\\"b %PATH% &|<>^()! -c "mcp_servers.x.command=\"C:\\n o\\x.exe\"" "é ü 日本""#;
        assert_eq!(text(&line), expected.replace("<TAB>", "\t"));
    }

    #[test]
    fn nul_characters_are_refused() {
        assert!(program(&w("a.exe"), &args(&["x\0y"])).is_err());
        assert!(batch(&w(r"C:\a.cmd"), &args(&["x\0y"])).is_err());
    }

    #[test]
    fn a_batch_file_runs_through_cmd_with_every_special_character_quoted() {
        let line = batch(
            &w(r"C:\fake dir\codex.cmd"),
            &args(&["app-server", "", "a b", r#"x"y"#, "%PATH%", "&|<>^", r"C:\end\", "-c", "ok:/.-_@"]),
        )
        .unwrap();
        assert_eq!(
            text(&line),
            r#"cmd.exe /e:ON /v:OFF /d /c ""C:\fake dir\codex.cmd" app-server "" "a b" "x""y" "%%cd:~,%PATH%%cd:~,%" "&|<>^" "C:\end\\" -c ok:/.-_@""#
        );
    }

    #[test]
    fn a_batch_file_refuses_line_breaks_and_odd_names() {
        assert!(batch(&w(r"C:\a.cmd"), &args(&["a\nb"])).is_err());
        assert!(batch(&w(r"C:\a.cmd"), &args(&["a\rb"])).is_err());
        assert!(batch(&w(r#"C:\a".cmd"#), &[]).is_err());
        assert!(batch(&w(r"C:\dir\"), &[]).is_err());
    }

    proptest! {
        #[test]
        fn any_argument_list_splits_back_into_itself(list in proptest::collection::vec("[a-z \t\"\\\\%&é]{0,8}", 0..6)) {
            let wide_args: Vec<Vec<u16>> = list.iter().map(|a| w(a)).collect();
            let line = program(&w(r"C:\p\prog.exe"), &wide_args).unwrap();
            let back = split(&line);
            prop_assert_eq!(&back[1..], &wide_args[..]);
        }
    }
}
