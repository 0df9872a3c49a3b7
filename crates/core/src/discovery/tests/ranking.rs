//! Which files are candidates and in what order: the sources by rank, the desktop bundles
//! below every CLI the user installed, nothing from the Codex home, one candidate a file,
//! installed Node versions newest first, and what the report says when there is none.

use super::*;

#[tokio::test]
async fn ranks_env_then_login_path_then_process_path_then_known_dirs_then_bundle() {
    let sb = Sandbox::new("rank");
    let env_bin = sb.codex("explicit/codex", Fake::good());
    let login_bin = sb.codex("login/codex", Fake::good());
    let process_bin = sb.codex("process/codex", Fake::good());
    let known_bin = sb.codex("home/.local/bin/codex", Fake::good());
    let bundle = sb.codex("sys/Applications/ChatGPT.app/Contents/Resources/codex", Fake::good());
    let shell = fake_shell(&sb, &sb.path("login"));
    let env = sb.env(&[(CODEX_BIN_VAR, env_bin.clone()), ("SHELL", shell), ("PATH", sb.path("process"))]);
    // The macOS rules (the bundle is a candidate), run here.
    let d = discover_in(env, None, false, Os::MacOs).await;
    assert_eq!(
        sources(&d),
        vec![Source::Env, Source::LoginShellPath, Source::ProcessPath, Source::KnownDir, Source::DesktopBundle],
        "{d:#?}"
    );
    let paths: Vec<&str> = d.candidates.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, vec![env_bin.as_str(), &login_bin, &process_bin, &known_bin, &bundle]);
    assert!(
        d.candidates.iter().all(|c| c.usable && c.reason.is_none() && c.version.as_deref() == Some("0.171.0")),
        "{d:#?}"
    );
    assert!(d.available);
    assert_eq!(d.reason, None);
    let selected = d.selected.as_ref().unwrap();
    assert_eq!(selected.path, env_bin);
    assert_eq!(selected.launcher, None);
    assert_eq!(selected.launch().argv(), vec![env_bin.clone()]);
    // The login shell was asked as an interactive login shell.
    let args = std::fs::read_to_string(sb.path("shell.args")).unwrap();
    assert!(args.starts_with("-l -i -c "), "{args}");

    // The JSON shape of the contract.
    let json: serde_json::Value = serde_json::to_value(&*d).unwrap();
    assert_eq!(json["selected"]["source"], "env");
    assert_eq!(json["candidates"][1]["source"], "loginShellPath");
    assert_eq!(json["candidates"][4]["source"], "desktopBundle");
    let keys: Vec<&String> = json["candidates"][0].as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["launcher", "path", "reason", "source", "usable", "version"]);
}

#[tokio::test]
async fn the_bundle_ranks_below_a_user_cli_even_when_linked_on_path() {
    let sb = Sandbox::new("bundle");
    let bundle = sb.codex("sys/Applications/ChatGPT.app/Contents/Resources/codex", Fake::good());
    sb.dir("linked");
    std::os::unix::fs::symlink(&bundle, sb.path("linked/codex")).unwrap();
    let user_cli = sb.codex("home/.bun/bin/codex", Fake::good());
    let d = discover_in(sb.env(&[("PATH", sb.path("linked"))]), None, false, Os::MacOs).await;
    let found: Vec<(Source, &str)> = d.candidates.iter().map(|c| (c.source, c.path.as_str())).collect();
    assert_eq!(found, vec![(Source::KnownDir, user_cli.as_str()), (Source::DesktopBundle, &sb.path("linked/codex"))]);
    assert_eq!(d.selected.as_ref().unwrap().path, user_cli);
}

#[tokio::test]
async fn the_codex_app_bundles_are_candidates_below_a_user_cli_and_above_chatgpt() {
    let sb = Sandbox::new("codexapp");
    let chatgpt = sb.codex("sys/Applications/ChatGPT.app/Contents/Resources/codex", Fake::good());
    let codex_app = sb.codex("sys/Applications/Codex.app/Contents/Resources/codex", Fake::good());
    let user_codex_app = sb.codex("home/Applications/Codex.app/Contents/Resources/codex", Fake::good());
    let user_cli = sb.codex("home/.local/bin/codex", Fake::good());
    let d = discover_in(sb.env(&[]), None, false, Os::MacOs).await;
    let found: Vec<(Source, &str)> = d.candidates.iter().map(|c| (c.source, c.path.as_str())).collect();
    assert_eq!(
        found,
        vec![
            (Source::KnownDir, user_cli.as_str()),
            (Source::DesktopBundle, &codex_app),
            (Source::DesktopBundle, &user_codex_app),
            (Source::DesktopBundle, &chatgpt),
        ]
    );
    assert_eq!(d.selected.as_ref().unwrap().path, user_cli);
    // Without the user's CLI, the Codex app's own CLI is the one used.
    std::fs::remove_file(&user_cli).unwrap();
    let d = discover_in(sb.env(&[]), None, true, Os::MacOs).await;
    assert_eq!(d.selected.as_ref().unwrap().path, codex_app);
    assert_eq!(d.selected.as_ref().unwrap().source, Source::DesktopBundle);
}

#[tokio::test]
async fn nothing_inside_the_codex_home_is_touched() {
    let sb = Sandbox::new("codexhome");
    let helper = sb.codex("home/.codex/tmp/path/codex", Fake::good());
    let other = sb.codex("custom-home/bin/codex", Fake::good());
    sb.dir("links");
    std::os::unix::fs::symlink(&helper, sb.path("links/codex")).unwrap();
    let env = sb.env(&[("PATH", format!("{}:{}", sb.path("home/.codex/tmp/path"), sb.path("links")))]);
    let d = discover_env(env).await;
    assert!(d.candidates.is_empty(), "{d:#?}");
    assert!(sb.calls(&helper).is_empty());
    let env = sb.env(&[
        ("CODEX_HOME", sb.path("custom-home")),
        (CODEX_BIN_VAR, other.clone()),
        ("PATH", format!("{}:{}", sb.path("custom-home/bin"), sb.path("home/.codex/tmp/path"))),
    ]);
    let d = discover_env(env).await;
    assert_eq!(d.candidates.len(), 2, "{d:#?}");
    assert_eq!(d.candidates[0].path, other);
    assert!(d.candidates[0].reason.as_deref().unwrap().contains("inside the Codex home"));
    assert!(sb.calls(&other).is_empty());
    assert_eq!(d.selected.as_ref().unwrap().path, helper, "~/.codex is not the Codex home any more");
}

#[tokio::test]
async fn nothing_found_is_unavailable_with_what_was_searched() {
    let sb = Sandbox::new("empty");
    let d = discover_env(sb.env(&[("PATH", sb.dir("empty"))])).await;
    assert!(!d.available);
    assert!(d.candidates.is_empty());
    let why = d.reason.as_deref().unwrap();
    assert!(why.starts_with("no Codex CLI was found"), "{why}");
    assert!(why.contains("SHELL is not set") && why.contains("1 directories on PATH"), "{why}");
}

#[tokio::test]
async fn the_same_file_is_probed_once() {
    let sb = Sandbox::new("dedup");
    let real = sb.codex("process/codex", Fake::good());
    sb.dir("home/.local/bin");
    std::os::unix::fs::symlink(&real, sb.path("home/.local/bin/codex")).unwrap();
    std::os::unix::fs::symlink(sb.path("process"), sb.path("alias")).unwrap();
    let env = sb.env(&[("PATH", format!("{}:{}:{}", sb.path("process"), sb.path("alias"), sb.path("process")))]);
    let d = discover_env(env).await;
    assert_eq!(d.candidates.len(), 1, "{d:#?}");
    assert_eq!(d.candidates[0].path, real);
    assert_eq!(d.candidates[0].source, Source::ProcessPath);
    assert_eq!(sb.calls(&real).len(), 2, "one --version and one app-server: {:?}", sb.calls(&real));
}

#[tokio::test]
async fn installed_node_versions_rank_newest_first() {
    let sb = Sandbox::new("nvm");
    let old = sb.codex("home/.nvm/versions/node/v9.11.2/bin/codex", Fake::good());
    let new = sb.codex("home/.nvm/versions/node/v22.1.0/bin/codex", Fake::good());
    let mid = sb.codex("home/.nvm/versions/node/v20.10.0/bin/codex", Fake::good());
    let d = discover_env(sb.env(&[("PATH", sb.dir("empty"))])).await;
    let paths: Vec<&str> = d.candidates.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, vec![new.as_str(), &mid, &old]);
    assert!(d.candidates.iter().all(|c| c.source == Source::KnownDir));
}
