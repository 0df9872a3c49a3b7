//! The `.cmd` shims npm and pnpm write for a package's command on Windows: which script they
//! run with Node, as a path of its own.

/// The script an npm (or pnpm) `.cmd` shim runs with Node, relative to the shim's directory:
/// `"%dp0%\node_modules\@openai\codex\bin\codex.js"` → `node_modules\@openai\codex\bin\codex.js`.
pub fn parse_npm_cmd_shim(text: &str) -> Option<String> {
    const PREFIXES: &[&str] = &["\"%dp0%\\", "\"%~dp0\\", "\"%dp0%", "\"%~dp0"];
    let mut rest = text;
    while let Some(start) = rest.find("\"%") {
        let tail = &rest[start..];
        if let Some(prefix) = PREFIXES.iter().find(|p| tail.starts_with(**p)) {
            let body = &tail[prefix.len()..];
            if let Some(end) = body.find('"') {
                let rel = body[..end].trim_start_matches(['\\', '/']);
                let lower = rel.to_ascii_lowercase();
                let is_node = lower == "node.exe" || lower == "node";
                if !rel.is_empty() && !is_node {
                    return Some(rel.to_string());
                }
            }
        }
        rest = &tail[2..];
    }
    None
}

/// A Windows path with `.` and `..` resolved lexically and `/` turned into `\`.
pub fn normalize_windows(path: &str) -> String {
    let path = path.replace('/', "\\");
    let (prefix, rest) = if let Some(unc) = path.strip_prefix("\\\\") {
        // \\server\share is the root of a UNC path.
        let mut parts = unc.splitn(3, '\\');
        let server = parts.next().unwrap_or("");
        let share = parts.next().unwrap_or("");
        (format!("\\\\{server}\\{share}"), parts.next().unwrap_or("").to_string())
    } else if path.len() >= 2 && path.as_bytes()[1] == b':' {
        (path[..2].to_string(), path[2..].to_string())
    } else {
        (String::new(), path.clone())
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('\\') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("{prefix}\\{}", parts.join("\\"))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::discovery::launch) const NPM_SHIM: &str = "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n\r\nIF EXIST \"%dp0%\\node.exe\" (\r\n  SET \"_prog=%dp0%\\node.exe\"\r\n) ELSE (\r\n  SET \"_prog=node\"\r\n  SET PATHEXT=%PATHEXT:;.JS;=;%\r\n)\r\n\r\nendLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & \"%_prog%\"  \"%dp0%\\node_modules\\@openai\\codex\\bin\\codex.js\" %*\r\n";
    const PNPM_SHIM: &str = "@SETLOCAL\r\n@IF NOT DEFINED NODE_PATH (\r\n  @SET \"NODE_PATH=C:\\x\"\r\n)\r\n@IF EXIST \"%~dp0\\node.exe\" (\r\n  \"%~dp0\\node.exe\"  \"%~dp0\\global\\5\\node_modules\\@openai\\codex\\bin\\codex.js\" %*\r\n) ELSE (\r\n  @SET PATHEXT=%PATHEXT:;.JS;=;%\r\n  node  \"%~dp0\\global\\5\\node_modules\\@openai\\codex\\bin\\codex.js\" %*\r\n)\r\n";

    #[test]
    fn npm_and_pnpm_shims() {
        assert_eq!(parse_npm_cmd_shim(NPM_SHIM).as_deref(), Some("node_modules\\@openai\\codex\\bin\\codex.js"));
        assert_eq!(
            parse_npm_cmd_shim(PNPM_SHIM).as_deref(),
            Some("global\\5\\node_modules\\@openai\\codex\\bin\\codex.js")
        );
        assert_eq!(parse_npm_cmd_shim("@echo off\r\npowershell -File codex.ps1 %*\r\n"), None);
        assert_eq!(parse_npm_cmd_shim("\"%~dp0..\\lib\\codex.js\" %*"), Some("..\\lib\\codex.js".into()));
    }

    #[test]
    fn normalizes_windows_paths() {
        assert_eq!(normalize_windows("C:\\npm\\..\\lib\\.\\codex.js"), "C:\\lib\\codex.js");
        assert_eq!(normalize_windows("C:/a//b/"), "C:\\a\\b");
        assert_eq!(normalize_windows("\\\\srv\\share\\a\\..\\..\\b"), "\\\\srv\\share\\b");
    }
}
