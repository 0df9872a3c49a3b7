//! The native `codex.exe` inside an npm install of `@openai/codex` on Windows.

use crate::discovery::env::Os;

/// The `codex.exe` that `@openai/codex`'s launcher script would start, where the installed
/// package has it: started directly, it saves a Node process per child, and an abort or a
/// kill reaches Codex itself rather than the Node between.
pub fn vendored_codex(script: &str, exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let os = Os::Windows;
    let lower = script.to_ascii_lowercase();
    if !lower.ends_with(r"\@openai\codex\bin\codex.js") {
        return None;
    }
    let (package, triple) = if cfg!(target_arch = "aarch64") {
        ("codex-win32-arm64", "aarch64-pc-windows-msvc")
    } else {
        ("codex-win32-x64", "x86_64-pc-windows-msvc")
    };
    let root = os.parent(&os.parent(script)?)?;
    let scope = os.parent(&root)?;
    // As the launcher looks: the platform package below the package (npm's global install) or
    // beside it (hoisted), then a vendor directory of its own (older releases).
    [os.join(&os.join(&os.join(&root, "node_modules"), "@openai"), package), os.join(&scope, package), root]
        .into_iter()
        .map(|base| os.join(&os.join(&os.join(&os.join(&base, "vendor"), triple), "bin"), "codex.exe"))
        .find(|exe| exists(exe))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_is_looked_for_where_the_launcher_looks() {
        let npm = "C:\\Users\\a\\AppData\\Roaming\\npm";
        let package = format!("{npm}\\node_modules\\@openai\\codex");
        let script = format!("{package}\\bin\\codex.js");
        let (platform, triple) = if cfg!(target_arch = "aarch64") {
            ("codex-win32-arm64", "aarch64-pc-windows-msvc")
        } else {
            ("codex-win32-x64", "x86_64-pc-windows-msvc")
        };
        let nested = format!("{package}\\node_modules\\@openai\\{platform}\\vendor\\{triple}\\bin\\codex.exe");
        let hoisted = format!("{npm}\\node_modules\\@openai\\{platform}\\vendor\\{triple}\\bin\\codex.exe");
        let own = format!("{package}\\vendor\\{triple}\\bin\\codex.exe");
        for exe in [&nested, &hoisted, &own] {
            let only = |p: &str| p == exe.as_str();
            assert_eq!(vendored_codex(&script, &only).as_ref(), Some(exe));
        }
        // In that order, where more than one is there.
        let all = |p: &str| [&nested, &hoisted, &own].iter().any(|e| e.as_str() == p);
        assert_eq!(vendored_codex(&script, &all).as_ref(), Some(&nested));
        assert_eq!(vendored_codex(&script, &|_| false), None);
        // Only Codex's own launcher script.
        assert_eq!(vendored_codex(&format!("{npm}\\node_modules\\other\\cli.js"), &|_| true), None);
    }
}
