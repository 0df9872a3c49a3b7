//! WSL: finding `wsl.exe`, and the small POSIX `sh` scripts that discovery runs inside a distribution (through
//! `wsl.exe -d <distro> --exec /bin/sh -c …`) to read its environment, ask its login shell
//! for PATH, and look at candidate files.

use super::env::{Env, Os};
use super::file::{FileInfo, FileState};
use super::local;

/// Overrides the `wsl.exe` to run (tests use a stand-in that records its arguments).
pub const WSL_EXE_VAR: &str = "RENNET_WSL_EXE";

/// Why a distribution cannot be reached when [`wsl_exe`] found no `wsl.exe`: for discovery's
/// report and a turn's terminal alike.
pub fn not_found(distro: &str) -> String {
    format!("wsl.exe was not found, so the WSL distribution {distro:?} cannot be reached")
}

/// The `wsl.exe` to run: [`WSL_EXE_VAR`], else `%SystemRoot%\System32\wsl.exe` on Windows
/// (`exists` says whether a file is there), else `wsl.exe` on this machine's PATH.
pub fn wsl_exe(env: &Env, os: Os, exists: &dyn Fn(&str) -> bool) -> Option<String> {
    choose_wsl_exe(env, os, exists, &|name| local::resolve(os, env, name))
}

/// [`wsl_exe`]'s order, with the PATH lookup given.
fn choose_wsl_exe(
    env: &Env,
    os: Os,
    exists: &dyn Fn(&str) -> bool,
    on_path: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if let Some(exe) = env.get(WSL_EXE_VAR) {
        return Some(exe.to_string());
    }
    if os.is_windows() {
        let root = env.get("SystemRoot").or_else(|| env.get("windir")).unwrap_or("C:\\Windows");
        let system = os.join(&os.join(root, "System32"), "wsl.exe");
        if exists(&system) {
            return Some(system);
        }
    }
    on_path("wsl.exe")
}

/// Prints `E\t<name>\t<value>` for each variable named in the arguments, then
/// `N\t<path of node on PATH>`.
pub const ENV_SCRIPT: &str = r#"for v in "$@"; do
  eval "x=\${$v-}"
  printf 'E\t%s\t%s\n' "$v" "$x"
done
n=$(command -v node 2>/dev/null) || n=
printf 'N\t%s\n' "$n"
"#;

/// Runs the user's login shell (`$SHELL`, else the passwd entry, else /bin/sh) with the
/// command in `$1`, under `timeout` (`$2` seconds) when the distribution has it.
pub const LOGIN_SCRIPT: &str = r#"h=/usr/bin:/bin
cmd=$1
secs=$2
s=${SHELL-}
[ -n "$s" ] || s=$(PATH=$h; getent passwd "$(id -u)" 2>/dev/null | cut -d: -f7)
[ -n "$s" ] || s=/bin/sh
t=$(PATH="$PATH:$h"; command -v timeout 2>/dev/null) || t=
case ${s##*/} in
  csh|tcsh) set -- "$s" -i -c "$cmd" ;;
  *) set -- "$s" -l -i -c "$cmd" ;;
esac
if [ -n "$t" ]; then exec "$t" -s KILL "$secs" "$@" </dev/null; fi
exec "$@" </dev/null
"#;

/// For each argument (`f:<file>`, `o:<file if it exists>`, `d:<dir pattern>` for the
/// `codex` in every directory the pattern matches) prints one line per file:
/// `R\t<argument index>\t<path>\t<file|other|missing>\t<1 if executable>\t<canonical>\t<node beside>\t<first line>`.
pub const EXAMINE_SCRIPT: &str = r#"PATH="$PATH:/usr/bin:/bin"
nl='
'
i=0
report() {
  p=$1
  if [ -e "$p" ]; then
    if [ -f "$p" ]; then s=file; else s=other; fi
  else
    s=missing
  fi
  if [ -x "$p" ]; then x=1; else x=0; fi
  c=$(readlink -f "$p" 2>/dev/null) || c=
  nb=
  for n in "${p%/*}/node" ${c:+"${c%/*}/node"}; do
    if [ -f "$n" ] && [ -x "$n" ]; then nb=$n; break; fi
  done
  h=
  if [ "$s" = file ] && [ -r "$p" ]; then
    h=$(head -c 256 "$p" 2>/dev/null | head -n 1 | tr -d '\t\r\000')
  fi
  printf 'R\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$p" "$s" "$x" "$c" "$nb" "$h"
}
for r in "$@"; do
  a=${r#?:}
  case $r in
    f:*) report "$a" ;;
    o:*) if [ -e "$a" ] || [ -L "$a" ]; then report "$a"; fi ;;
    d:*)
      IFS=$nl
      for d in $a; do
        unset IFS
        p=${d%/}/codex
        if [ -e "$p" ] || [ -L "$p" ]; then report "$p"; fi
      done
      unset IFS ;;
  esac
  i=$((i + 1))
done
"#;

/// The variables and the `node` on PATH printed by [`ENV_SCRIPT`].
pub fn parse_env_report(text: &str) -> (Env, Option<String>) {
    let mut pairs = Vec::new();
    let mut node = None;
    for line in text.lines() {
        let mut fields = line.splitn(3, '\t');
        match (fields.next(), fields.next(), fields.next()) {
            (Some("E"), Some(name), Some(value)) => pairs.push((name.to_string(), value.to_string())),
            (Some("N"), Some(path), None) if !path.is_empty() => node = Some(path.to_string()),
            _ => {}
        }
    }
    (Env::from_pairs(pairs, Os::Unix), node)
}

/// The files reported by [`EXAMINE_SCRIPT`], each with the index of its argument.
pub fn parse_examine_report(text: &str) -> Vec<(usize, FileInfo)> {
    let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_string());
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.splitn(8, '\t').collect();
            if f.len() != 8 || f[0] != "R" || f[2].is_empty() {
                return None;
            }
            let index = f[1].parse().ok()?;
            let state = match f[3] {
                "file" => FileState::File { executable: f[4] == "1" },
                "other" => FileState::NotFile,
                _ => FileState::Missing,
            };
            Some((
                index,
                FileInfo {
                    path: f[2].to_string(),
                    state,
                    canonical: nonempty(f[5]),
                    node_beside: nonempty(f[6]),
                    head: f[7].to_string(),
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_wsl_exe() {
        let env = Env::from_pairs([(WSL_EXE_VAR, "/stand/in/wsl.exe")], Os::Unix);
        assert_eq!(wsl_exe(&env, Os::Unix, &|_| false).as_deref(), Some("/stand/in/wsl.exe"));
        // On Windows the system's own first, then the PATH's.
        let env = Env::from_pairs([("SystemRoot", "C:\\Windows"), ("Path", "C:\\Tools")], Os::Windows);
        let tools = |name: &str| Some(format!("C:\\Tools\\{name}"));
        let system = choose_wsl_exe(&env, Os::Windows, &|p| p == "C:\\Windows\\System32\\wsl.exe", &tools);
        assert_eq!(system.as_deref(), Some("C:\\Windows\\System32\\wsl.exe"));
        assert_eq!(choose_wsl_exe(&env, Os::Windows, &|_| false, &tools).as_deref(), Some("C:\\Tools\\wsl.exe"));
        assert_eq!(choose_wsl_exe(&env, Os::Windows, &|_| false, &|_| None), None);
        // Elsewhere (Linux inside WSL, through interop) only the PATH's.
        let env = Env::from_pairs([("PATH", "/usr/bin:/mnt/c/Windows/System32")], Os::Unix);
        let interop = |name: &str| Some(format!("/mnt/c/Windows/System32/{name}"));
        assert_eq!(
            choose_wsl_exe(&env, Os::Unix, &|_| true, &interop).as_deref(),
            Some("/mnt/c/Windows/System32/wsl.exe")
        );
        assert_eq!(choose_wsl_exe(&env, Os::Unix, &|_| true, &|_| None), None);
    }

    #[test]
    fn parses_reports() {
        let (env, node) = parse_env_report("E\tHOME\t/home/a\nE\tSHELL\t\nnoise\nN\t/usr/bin/node\n");
        assert_eq!(env.get("HOME"), Some("/home/a"));
        assert_eq!(env.get("SHELL"), None);
        assert_eq!(node.as_deref(), Some("/usr/bin/node"));
        assert_eq!(parse_env_report("N\t\n").1, None);

        let found = parse_examine_report(
            "R\t0\t/x/codex\tfile\t1\t/x/codex.js\t/x/node\t#!/usr/bin/env node\nbanner\nR\t2\t/y/codex\tmissing\t0\t\t\t\nR\tx\t/z\tfile\n",
        );
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].0, 0);
        assert_eq!(found[0].1.path, "/x/codex");
        assert_eq!(found[0].1.state, FileState::File { executable: true });
        assert_eq!(found[0].1.canonical.as_deref(), Some("/x/codex.js"));
        assert_eq!(found[0].1.node_beside.as_deref(), Some("/x/node"));
        assert_eq!(found[0].1.head, "#!/usr/bin/env node");
        assert_eq!(found[1].1.state, FileState::Missing);
        assert_eq!(found[1].1.canonical, None);
    }
}
