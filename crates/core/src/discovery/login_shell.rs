//! Asking the user's login shell for its PATH: an app started from a desktop launcher often
//! has a shorter PATH than the user's terminal, and a Codex installed through a version
//! manager is only on the latter. What the shell runs, the flags that make it an interactive
//! login shell, and reading the PATH out of whatever else it prints.

use super::env::{Env, Os};
use super::probe;
use crate::process::{Launch, Scope};
use std::time::Duration;

/// The answer to a login-shell PATH query.
#[derive(Debug, PartialEq, Eq)]
pub enum LoginPath {
    Found(String),
    /// Not asked or no answer; why (for the report when nothing is found).
    Unavailable(String),
}

/// Runs `cmd`, a login shell told to run [`login_command`] for `nonce`, and reads its answer.
/// It may stay after printing (a lingering exit): the end marker is enough.
pub async fn ask(cmd: &Launch, env: &Env, timeout: Duration, nonce: &str) -> LoginPath {
    let end = end_marker(nonce);
    match probe::collect(cmd, env, timeout, Scope::Session, Some(end.as_bytes())).await {
        Err(e) => {
            LoginPath::Unavailable(format!("the login shell {} could not be started: {e}", cmd.program.display()))
        }
        Ok(run) => match parse_login_output(&String::from_utf8_lossy(&run.stdout), nonce) {
            Some(path) => LoginPath::Found(path),
            None if run.timed_out => {
                LoginPath::Unavailable(format!("the login shell did not answer within {} ms", timeout.as_millis()))
            }
            None => LoginPath::Unavailable("the login shell printed no PATH".into()),
        },
    }
}

pub fn nonce() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("{}_{}_{nanos}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

fn begin_marker(nonce: &str) -> String {
    format!("__RENNET_PATH_BEGIN_{nonce}__")
}

fn end_marker(nonce: &str) -> String {
    format!("__RENNET_PATH_END_{nonce}__")
}

/// The command the login shell runs: PATH between two markers. Each marker is printed in two
/// pieces, so a shell that echoes its input cannot produce a marker by echoing the command.
pub fn login_command(nonce: &str) -> String {
    format!(
        "printf '%s%s\\n' __RENNET_PATH_ 'BEGIN_{nonce}__'; printenv PATH; printf '%s%s\\n' __RENNET_PATH_ 'END_{nonce}__'"
    )
}

/// Arguments that make `shell` an interactive login shell running `command` (interactive so
/// that PATH set in `.zshrc`/`.bashrc` counts). tcsh accepts `-l` only on its own.
pub fn login_shell_args(shell: &str, command: &str) -> Vec<String> {
    let name = Os::Unix.file_name(shell);
    let flags: &[&str] = match name {
        "csh" | "tcsh" => &["-i", "-c"],
        _ => &["-l", "-i", "-c"],
    };
    flags.iter().map(|f| f.to_string()).chain([command.to_string()]).collect()
}

/// PATH from a login shell's output: the last non-empty line between the markers; banners,
/// prompts and escape sequences around them are ignored.
pub fn parse_login_output(stdout: &str, nonce: &str) -> Option<String> {
    let begin = begin_marker(nonce);
    let end = end_marker(nonce);
    let start = stdout.find(&begin)? + begin.len();
    let stop = start + stdout[start..].find(&end)?;
    stdout[start..stop]
        .lines()
        .map(|l| l.trim_matches(|c: char| c.is_whitespace() || c.is_control()))
        .rfind(|l| !l.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_output_between_markers() {
        let n = "1_2_3";
        let out = format!("Welcome!\n\x1b[?2004h{}\n/a/bin:/usr/bin\r\n{}\nbye\n", begin_marker(n), end_marker(n));
        assert_eq!(parse_login_output(&out, n).as_deref(), Some("/a/bin:/usr/bin"));
        // A banner inside the block: the PATH is the last line.
        let out = format!("{}\nnoise\n/x:/y\n{}", begin_marker(n), end_marker(n));
        assert_eq!(parse_login_output(&out, n).as_deref(), Some("/x:/y"));
        assert_eq!(parse_login_output(&format!("{}\n/x", begin_marker(n)), n), None);
        assert_eq!(parse_login_output("nothing", n), None);
        assert_eq!(parse_login_output(&format!("{}\n\n{}", begin_marker(n), end_marker(n)), n), None);
        // The command text does not contain the markers.
        let cmd = login_command(n);
        assert!(!cmd.contains(&begin_marker(n)) && !cmd.contains(&end_marker(n)));
    }

    #[test]
    fn login_shell_flags() {
        assert_eq!(login_shell_args("/bin/zsh", "x"), vec!["-l", "-i", "-c", "x"]);
        assert_eq!(login_shell_args("/usr/bin/fish", "x"), vec!["-l", "-i", "-c", "x"]);
        assert_eq!(login_shell_args("/bin/tcsh", "x"), vec!["-i", "-c", "x"]);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_login_command_works_in_sh() {
        let n = nonce();
        let env = Env::from_pairs([("PATH", "/usr/bin:/bin")], Os::Unix);
        let shell = Launch::new("/bin/sh", ["-c", &login_command(&n)]);
        assert_eq!(ask(&shell, &env, Duration::from_secs(5), &n).await, LoginPath::Found("/usr/bin:/bin".into()));
    }
}
