//! A launcher script whose `#!/usr/bin/env node` finds no `node` on PATH runs through the
//! Node installed beside it.

use super::*;

#[tokio::test]
async fn a_launcher_without_node_on_path_runs_through_the_node_beside_it() {
    let sb = Sandbox::new("launcher");
    // npm under nvm, not on the (GUI) process PATH: bin/codex links to the package's
    // script; node sits in bin/.
    let prefix = "home/.nvm/versions/node/v22.0.0";
    let body = Fake::good().render(&sb.path("calls.log")).replacen("#!/bin/sh", "#!/usr/bin/env node", 1);
    let script = sb.script(&format!("{prefix}/lib/node_modules/@openai/codex/bin/codex.js"), &body);
    let bin = sb.dir(&format!("{prefix}/bin"));
    std::os::unix::fs::symlink(&script, format!("{bin}/codex")).unwrap();
    let node = sb.script(&format!("{prefix}/bin/node"), FAKE_NODE);
    // And a launcher on the process PATH with no node anywhere near it.
    let lonely = sb.script("lonely/codex", &body);
    let env = sb.env(&[("PATH", sb.path("lonely"))]);
    let d = discover_env(env).await;

    let launcher = candidate(&d, &format!("{bin}/codex"));
    assert_eq!(launcher.source, Source::KnownDir);
    assert!(launcher.usable, "{launcher:?}");
    assert_eq!(launcher.launcher, Some(vec![node.clone(), script.clone()]));
    assert_eq!(launcher.launch().argv(), vec![node.clone(), script.clone()]);
    assert_eq!(d.selected.as_ref().unwrap().path, format!("{bin}/codex"));
    let lonely = candidate(&d, &lonely);
    assert!(!lonely.usable);
    assert!(lonely.reason.as_deref().unwrap().contains("no `node` on PATH"), "{lonely:?}");

    // With node on PATH both launchers run directly.
    let env = sb.env(&[("PATH", format!("{}:{bin}", sb.path("lonely")))]);
    let d = discover_env(env).await;
    assert_eq!(d.candidates.len(), 2);
    assert!(d.candidates.iter().all(|c| c.usable && c.launcher.is_none()), "{d:#?}");
}
