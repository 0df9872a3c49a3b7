use super::inventory::{self, ConfiguredServer, TransportKind};
use super::loopback::{self, NotLoopback};
use super::*;
use crate::failure::Code;
use crate::process::Launch;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The inventory's deadline in these tests (a turn's default `requestTimeoutMs`).
const DEADLINE: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn server(url: &str) -> McpServer {
    McpServer { url: url.to_string(), bearer_token_env_var: None, http_headers: None }
}

/// `program prefix…` in `cwd` with `env`, as a turn would launch its child.
fn child_launch(program: &Path, prefix: &[std::ffi::OsString], cwd: &Path, env: &[(String, String)]) -> Launch {
    let mut launch = Launch::new(program, prefix);
    launch.cwd = cwd.to_path_buf();
    launch.env = env.to_vec();
    launch
}

fn policy(servers: Vec<(&str, McpServer)>) -> McpPolicy {
    McpPolicy { servers: servers.into_iter().map(|(n, s)| (n.to_string(), s)).collect() }
}

fn configured(name: &str, enabled: bool, transport: TransportKind) -> ConfiguredServer {
    ConfiguredServer { name: name.to_string(), enabled, transport }
}

/// Parses `mcp_servers=<inline>` back with the `toml` crate.
fn parse_table_arg(arg: &std::ffi::OsStr) -> toml::Table {
    let text = arg.to_str().unwrap();
    let inline = text.strip_prefix("mcp_servers=").expect("mcp_servers= prefix");
    let doc: toml::Table = format!("v = {inline}").parse().expect("rendered table parses as TOML");
    doc["v"].as_table().unwrap().clone()
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rennet-mcp-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir.canonicalize().unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------------------
// Loopback
// ---------------------------------------------------------------------------------------

#[test]
fn loopback_accepts_plain_loopback_urls() {
    for url in [
        "http://127.0.0.1:8080/mcp",
        "http://127.0.0.1/mcp",
        "https://127.0.0.1:8443/mcp",
        "http://127.255.255.254:1/",
        "http://127.1.2.3:9000/a/b?x=1#frag",
        "http://localhost:3000",
        "http://localhost:3000/mcp",
        "http://LOCALHOST:3000/mcp",
        "HTTP://localhost/mcp",
        "http://[::1]:8080/mcp",
        "http://[::1]/",
        "http://localhost:/mcp",
    ] {
        assert!(loopback::check(url).is_ok(), "{url} should be accepted: {:?}", loopback::check(url).err());
    }
}

#[test]
fn loopback_rejects_hostile_urls() {
    use NotLoopback::*;
    let cases: &[(&str, NotLoopback)] = &[
        // Look-alike names.
        ("http://localhost.example.com/mcp", NotLoopbackHost),
        ("http://127.0.0.1.nip.io/mcp", NotLoopbackHost),
        ("http://localhost./mcp", NotLoopbackHost),
        ("http://127.0.0.1./mcp", NonCanonicalHost),
        ("http://localhos/mcp", NotLoopbackHost),
        ("http://xn--localhost-/mcp", Unparsable),
        ("http://evil.com/127.0.0.1", NotLoopbackHost),
        ("http://evil.com#@127.0.0.1/", NotLoopbackHost),
        ("http://evil.com?@127.0.0.1/", NotLoopbackHost),
        // Userinfo tricks.
        ("http://127.0.0.1@evil.com/mcp", Userinfo),
        ("http://localhost:80@evil.com/mcp", Userinfo),
        ("http://user:pass@127.0.0.1/mcp", Userinfo),
        ("http://@127.0.0.1/mcp", Userinfo),
        ("http://127.0.0.1%2f@evil.com/", Userinfo),
        // Other schemes and shapes.
        ("ftp://127.0.0.1/mcp", Scheme),
        ("ws://127.0.0.1/mcp", Scheme),
        ("file://localhost/etc/passwd", Scheme),
        ("unix:///tmp/mcp.sock", Scheme),
        ("javascript:alert(1)", Scheme),
        ("http:127.0.0.1/mcp", NoAuthority),
        ("http:/127.0.0.1/mcp", NoAuthority),
        ("http:///127.0.0.1/mcp", NonCanonicalHost),
        ("127.0.0.1:8080/mcp", Unparsable),
        ("localhost:8080", Scheme),
        ("", Unparsable),
        ("http://", Unparsable),
        // Not loopback at all.
        ("http://0.0.0.0:8080/mcp", NotLoopbackHost),
        ("http://10.0.0.1/mcp", NotLoopbackHost),
        ("http://192.168.1.1/mcp", NotLoopbackHost),
        ("http://128.0.0.1/mcp", NotLoopbackHost),
        ("http://example.com/mcp", NotLoopbackHost),
        ("http://[::]/mcp", NotLoopbackHost),
        ("http://[fe80::1]/mcp", NotLoopbackHost),
        // IPv4-mapped and -compatible IPv6.
        ("http://[::ffff:127.0.0.1]/mcp", NotLoopbackHost),
        ("http://[::ffff:7f00:1]/mcp", NotLoopbackHost),
        ("http://[::127.0.0.1]/mcp", NotLoopbackHost),
        ("http://[0:0:0:0:0:ffff:127.0.0.1]/mcp", NotLoopbackHost),
        // Other spellings of ::1.
        ("http://[0:0:0:0:0:0:0:1]/mcp", NonCanonicalHost),
        ("http://[0::1]/mcp", NonCanonicalHost),
        // Decimal, octal, hex and short IPv4 forms of 127.0.0.1.
        ("http://2130706433/mcp", NonCanonicalHost),
        ("http://0x7f000001/mcp", NonCanonicalHost),
        ("http://0x7f.0.0.1/mcp", NonCanonicalHost),
        ("http://0177.0.0.1/mcp", NonCanonicalHost),
        ("http://017700000001/mcp", NonCanonicalHost),
        ("http://127.1/mcp", NonCanonicalHost),
        ("http://127.0.1/mcp", NonCanonicalHost),
        ("http://127.0.0.01/mcp", NonCanonicalHost),
        ("http://127.000.000.001/mcp", NonCanonicalHost),
        // Encodings and Unicode look-alikes that the parser maps to loopback.
        ("http://127.0.0.%31/mcp", NonCanonicalHost),
        ("http://%6c%6f%63%61%6c%68%6f%73%74/mcp", NonCanonicalHost),
        ("http://ｌｏｃａｌｈｏｓｔ/mcp", NonCanonicalHost),
        ("http://１２７.０.０.１/mcp", NonCanonicalHost),
        ("http://local\u{AD}host/mcp", NonCanonicalHost),
        ("http://127。0。0。1/mcp", NonCanonicalHost),
        // Whitespace, controls and backslashes.
        (" http://127.0.0.1/mcp", ControlOrSpace),
        ("http://127.0.0.1/mcp ", ControlOrSpace),
        ("http://loc\talhost/mcp", ControlOrSpace),
        ("http://127.0.0.1\n.evil.com/", ControlOrSpace),
        ("http://127.0.0.1\\@evil.com/", Backslash),
        ("http:\\\\127.0.0.1\\mcp", Backslash),
        // More look-alikes: invisible and confusable characters, zone ids, ports, IPv6
        // spellings of 127.0.0.1, and schemes that smuggle a host.
        ("http://local\u{200B}host/mcp", NonCanonicalHost),
        ("http://localhost\u{FEFF}/mcp", NonCanonicalHost),
        ("http://lоcalhost/mcp", NotLoopbackHost),
        ("http://[::1%25lo]/mcp", Unparsable),
        ("http://[::1]x/mcp", Unparsable),
        ("http://127.0.0.1:99999/mcp", Unparsable),
        ("http://127.0.0.1:8080:80/mcp", Unparsable),
        ("http://[::ffff:127.0.0.1]:8080/mcp", NotLoopbackHost),
        ("http://[64:ff9b::127.0.0.1]/mcp", NotLoopbackHost),
        ("http://[::ffff:0:127.0.0.1]/mcp", NotLoopbackHost),
        ("http://0x7f.1/mcp", NonCanonicalHost),
        ("http://0/mcp", NotLoopbackHost),
        ("http://127.0.0.1.:8080/mcp", NonCanonicalHost),
        ("http://localhost.:8080/mcp", NotLoopbackHost),
        ("http://localhost..:8080/mcp", NotLoopbackHost),
        ("http://127.0.0.1%2e/mcp", NonCanonicalHost),
        ("http://:@127.0.0.1/mcp", Userinfo),
        ("http://127.0.0.1:8080@127.0.0.1/mcp", Userinfo),
        ("http://%40@127.0.0.1/mcp", Userinfo),
        ("https://user@localhost/mcp", Userinfo),
        ("wss://127.0.0.1/mcp", Scheme),
        ("data:text/plain,http://127.0.0.1/", Scheme),
        ("blob:http://127.0.0.1/uuid", Scheme),
        ("view-source:http://127.0.0.1/", Scheme),
        ("gopher://127.0.0.1:70/", Scheme),
        ("http+unix://%2Ftmp%2Fs.sock/mcp", Scheme),
    ];
    for (url, want) in cases {
        assert_eq!(loopback::check(url).err(), Some(*want), "{url:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Policy validation
// ---------------------------------------------------------------------------------------

#[test]
fn validation_errors_have_codes_and_name_servers_but_no_values() {
    let secret_var = "SUPER_SECRET_VAR=x";
    let secret_value = "sekr\r\nit-value-42";
    let cases: Vec<(McpPolicy, Code, &str)> = vec![
        (policy(vec![("", server("http://127.0.0.1/"))]), Code::McpPolicyInvalid, "name"),
        (policy(vec![("a\nb", server("http://127.0.0.1/"))]), Code::McpPolicyInvalid, "name"),
        (policy(vec![("ok", server("http://example.com/?token=abc"))]), Code::McpNotLoopback, "url"),
        (
            policy(vec![(
                "ok",
                McpServer { bearer_token_env_var: Some(secret_var.into()), ..server("http://127.0.0.1/") },
            )]),
            Code::McpPolicyInvalid,
            "bearerTokenEnvVar",
        ),
        (
            policy(vec![(
                "ok",
                McpServer { bearer_token_env_var: Some(String::new()), ..server("http://127.0.0.1/") },
            )]),
            Code::McpPolicyInvalid,
            "bearerTokenEnvVar",
        ),
        (
            policy(vec![(
                "ok",
                McpServer {
                    http_headers: Some(BTreeMap::from([("X-Ok".to_string(), secret_value.to_string())])),
                    ..server("http://127.0.0.1/")
                },
            )]),
            Code::McpPolicyInvalid,
            "httpHeaders",
        ),
        (
            policy(vec![(
                "ok",
                McpServer {
                    http_headers: Some(BTreeMap::from([("Bad Header".to_string(), "v".to_string())])),
                    ..server("http://127.0.0.1/")
                },
            )]),
            Code::McpPolicyInvalid,
            "httpHeaders",
        ),
    ];
    for (p, want_code, field) in cases {
        let e = validate(&p).unwrap_err();
        assert_eq!(e.code, want_code, "{e}");
        assert_eq!(e.detail["field"], field, "{e}");
        let all = format!("{e} {}", e.detail);
        for secret in ["SUPER_SECRET", "sekr", "it-value-42", "token=abc", "example.com"] {
            assert!(!all.contains(secret), "{secret:?} leaked into {all}");
        }
    }
    let e = validate(&policy(vec![("srv.x", server("http://0x7f.0.0.1/"))])).unwrap_err();
    assert_eq!(e.code, Code::McpNotLoopback);
    assert_eq!(e.detail["server"], "srv.x");
    assert_eq!(e.detail["reason"], "nonCanonicalHost");
    assert!(e.message.contains("\"srv.x\""));
}

#[test]
fn validation_accepts_headers_with_any_printable_value() {
    let headers = BTreeMap::from([
        ("Authorization".to_string(), "Bearer a\"b'c\\d=e#f]g{h}i".to_string()),
        ("X-Tab".to_string(), "a\tb".to_string()),
        ("X-Unicode".to_string(), "ünïcødé ✓".to_string()),
    ]);
    let p = policy(vec![(
        "n",
        McpServer {
            bearer_token_env_var: Some("MY_TOKEN".into()),
            http_headers: Some(headers),
            ..server("http://127.0.0.1:1/mcp")
        },
    )]);
    validate(&p).unwrap();
}

// ---------------------------------------------------------------------------------------
// Inventory
// ---------------------------------------------------------------------------------------

/// §12.2 of the protocol reference (codex-cli 0.171.0), with a header value that must not leak.
const SAMPLE_INVENTORY: &str = r#"[
  {"name":"http_srv","enabled":true,"disabled_reason":null,
   "transport":{"type":"streamable_http","url":"http://127.0.0.1:18699/mcp","bearer_token_env_var":"MY_TOKEN",
                "http_headers":{"X-Secret":"hdr-secret-value"},"env_http_headers":null,"http_headers_helper":null},
   "startup_timeout_sec":null,"tool_timeout_sec":null,"auth_status":"bearer_token"},
  {"name":"off_srv","enabled":false,"disabled_reason":null,
   "transport":{"type":"stdio","command":"echo","args":["hi"],"env":null,"env_vars":[],"cwd":null},
   "startup_timeout_sec":null,"tool_timeout_sec":null,"auth_status":"unsupported"},
  {"name":"stdio_srv","enabled":true,"disabled_reason":null,
   "transport":{"type":"stdio","command":"python3","args":["mini_mcp.py"],"env":{"FOO":"env-secret"},"env_vars":[],"cwd":null},
   "startup_timeout_sec":10,"tool_timeout_sec":60.5,"auth_status":"unsupported"}
]"#;

#[test]
fn inventory_parses_the_cli_shape() {
    let servers = inventory::parse(SAMPLE_INVENTORY.as_bytes()).unwrap();
    assert_eq!(
        servers,
        vec![
            configured("http_srv", true, TransportKind::StreamableHttp),
            configured("off_srv", false, TransportKind::Stdio),
            configured("stdio_srv", true, TransportKind::Stdio),
        ]
    );
    assert_eq!(inventory::parse(b"[]").unwrap(), vec![]);
    assert_eq!(inventory::parse(b"  []\n").unwrap(), vec![]);
    // Unknown fields are allowed; absent optional fields too.
    let minimal = br#"[{"name":"m","enabled":true,"transport":{"type":"stdio","command":"x"},"future_field":{"a":1}}]"#;
    assert_eq!(inventory::parse(minimal).unwrap(), vec![configured("m", true, TransportKind::Stdio)]);
}

#[test]
fn inventory_rejects_wrong_shapes_without_quoting_values() {
    let base: serde_json::Value = serde_json::from_str(SAMPLE_INVENTORY).unwrap();
    let mutate = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = base.clone();
        f(&mut v);
        serde_json::to_vec(&v).unwrap()
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not json".to_vec(), ""),
        (b"".to_vec(), ""),
        (b"WARNING: banner\n[]".to_vec(), ""),
        (b"{}".to_vec(), ""),
        (b"[1]".to_vec(), ""),
        (mutate(&|v| v[0].as_object_mut().unwrap().remove("name").map(|_| ()).unwrap()), "name"),
        (mutate(&|v| v[0]["name"] = serde_json::json!(7)), "name"),
        (mutate(&|v| v[0]["enabled"] = serde_json::json!("true")), "enabled"),
        (mutate(&|v| v[0].as_object_mut().unwrap().remove("enabled").map(|_| ()).unwrap()), "enabled"),
        (mutate(&|v| v[0]["transport"] = serde_json::json!("stdio")), "transport"),
        (mutate(&|v| v[0]["transport"]["type"] = serde_json::json!("sse")), "transport.type"),
        (mutate(&|v| v[0]["transport"]["type"] = serde_json::json!(null)), "transport.type"),
        (mutate(&|v| v[0]["transport"]["url"] = serde_json::json!(null)), "transport.url"),
        (mutate(&|v| v[0]["transport"]["http_headers"] = serde_json::json!({"X-Secret": 1})), "transport.http_headers"),
        (
            mutate(&|v| v[0]["transport"]["bearer_token_env_var"] = serde_json::json!(["MY_TOKEN"])),
            "transport.bearer_token_env_var",
        ),
        (mutate(&|v| v[2]["transport"]["args"] = serde_json::json!([1])), "transport.args"),
        (mutate(&|v| v[2]["transport"]["env"] = serde_json::json!({"FOO": false})), "transport.env"),
        (
            mutate(&|v| v[2]["transport"].as_object_mut().unwrap().remove("command").map(|_| ()).unwrap()),
            "transport.command",
        ),
        (mutate(&|v| v[2]["startup_timeout_sec"] = serde_json::json!("10")), "startup_timeout_sec"),
        (mutate(&|v| v[2]["name"] = serde_json::json!("http_srv")), "name"),
    ];
    for (stdout, field) in cases {
        let e = inventory::parse(&stdout).unwrap_err();
        assert_eq!(e.code, Code::McpInventoryInvalid, "{e}");
        assert_eq!(e.detail["field"], field, "{e}");
        let all = format!("{e} {}", e.detail);
        for secret in ["hdr-secret-value", "env-secret", "MY_TOKEN", "mini_mcp", "18699"] {
            assert!(!all.contains(secret), "{secret:?} leaked into {all}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Collisions and rendering
// ---------------------------------------------------------------------------------------

#[test]
fn collision_names_every_clashing_server() {
    let inventory = vec![
        configured("a", true, TransportKind::Stdio),
        configured("b", false, TransportKind::StreamableHttp),
        configured("c", true, TransportKind::Stdio),
    ];
    let p = policy(vec![
        ("a", McpServer { bearer_token_env_var: Some("TOKEN_VAR".into()), ..server("http://127.0.0.1/") }),
        ("b", server("http://127.0.0.1/")),
        ("new", server("http://127.0.0.1/")),
    ]);
    let e = args_for(&p, &inventory).unwrap_err();
    assert_eq!(e.code, Code::McpNameCollision);
    assert_eq!(e.detail, serde_json::json!({"servers": ["a", "b"]}));
    assert!(e.message.contains("\"a\"") && e.message.contains("\"b\""));
    assert!(!e.message.contains("TOKEN_VAR"));
}

#[test]
fn empty_policy_disables_every_configured_server() {
    let inventory = vec![
        configured("http_srv", true, TransportKind::StreamableHttp),
        configured("off_srv", false, TransportKind::Stdio),
        configured("stdio_srv", true, TransportKind::Stdio),
    ];
    let launch = args_for(&policy(vec![]), &inventory).unwrap();
    assert!(launch.env.is_empty());
    let args = launch.args;
    assert_eq!(&args[..3], &["--disable", "plugins", "-c"].map(std::ffi::OsString::from));
    assert_eq!(
        args[3].to_str().unwrap(),
        "mcp_servers={ http_srv = { enabled = false }, off_srv = { enabled = false }, stdio_srv = { enabled = false } }"
    );
    let table = parse_table_arg(&args[3]);
    for (_, entry) in table {
        assert_eq!(entry.as_table().unwrap().len(), 1, "a placeholder has no transport keys");
        assert_eq!(entry["enabled"].as_bool(), Some(false));
    }
    // Nothing configured: an empty table (harmless; Codex deep-merges it).
    assert_eq!(args_for(&policy(vec![]), &[]).unwrap().args[3].to_str().unwrap(), "mcp_servers={}");
}

fn awkward_names() -> Vec<&'static str> {
    vec![
        "plain",
        "dotted.name",
        "with space",
        "quote\"inside",
        "single'quote",
        "back\\slash",
        "ünïcødé-服务器",
        "emoji 🚀",
        "=eq=",
        "#hash",
        "[bracket]",
        "{brace}",
        "mcp_servers.other",
        "123",
        "true",
        "-dash",
    ]
}

fn awkward_headers() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("Authorization".into(), "Bearer x\"y'z\\w".into()),
        ("X-Equals".into(), "a=b; c=d, e".into()),
        ("X-Toml".into(), "} ] { [ # ''' \"\"\" \\u0041".into()),
        ("X-Unicode".into(), "ünïcødé ✓ 🚀".into()),
        ("X-Tab".into(), "a\tb".into()),
        ("X-Empty".into(), String::new()),
        ("x-lower.dots_and~marks!".into(), "v".into()),
    ])
}

#[test]
fn rendering_round_trips_awkward_names_and_header_values() {
    let mut servers = Vec::new();
    for (i, name) in awkward_names().into_iter().enumerate() {
        servers.push((
            name,
            McpServer {
                url: format!("http://127.0.0.1:{}/mcp?x=1&y=%22", 40000 + i),
                bearer_token_env_var: Some(format!("TOKEN_{i}")),
                http_headers: Some(awkward_headers()),
            },
        ));
    }
    let inventory = vec![
        configured("user.dotted", true, TransportKind::Stdio),
        configured("user \"quoted\"", false, TransportKind::StreamableHttp),
        configured("ユーザー", true, TransportKind::Stdio),
    ];
    let p = policy(servers);
    validate(&p).unwrap();
    let launch = args_for(&p, &inventory).unwrap();
    let args = &launch.args;
    let table = parse_table_arg(&args[3]);
    assert_eq!(table.len(), awkward_names().len() + inventory.len());
    // Header values are in the environment only, never in the argv.
    for value in awkward_headers().values().filter(|v| v.len() > 3) {
        assert!(args.iter().all(|a| !a.to_string_lossy().contains(value.as_str())), "{value:?} in argv");
    }
    let env: BTreeMap<&str, &str> = launch.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(env.len(), awkward_names().len() * awkward_headers().len());
    for c in &inventory {
        assert_eq!(table[&c.name], render::placeholder(), "{}", c.name);
    }
    for (i, name) in awkward_names().into_iter().enumerate() {
        let entry = table[name].as_table().unwrap();
        assert_eq!(entry["url"].as_str().unwrap(), format!("http://127.0.0.1:{}/mcp?x=1&y=%22", 40000 + i));
        assert_eq!(entry["bearer_token_env_var"].as_str().unwrap(), format!("TOKEN_{i}"));
        assert_eq!(entry["enabled"].as_bool(), Some(true));
        assert!(!entry.contains_key("http_headers"));
        let headers: BTreeMap<String, String> = entry["env_http_headers"]
            .as_table()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), env[v.as_str().unwrap()].to_string()))
            .collect();
        assert_eq!(headers, awkward_headers());
    }
    // One line: the value of a `-c key=value` flag.
    assert!(!args[3].to_str().unwrap().contains('\n'));
}

// ---------------------------------------------------------------------------------------
// Against processes: launcher prefix, failures, and the real CLI
// ---------------------------------------------------------------------------------------

/// `sh -c SCRIPT sh` as the program plus launcher prefix: the policy's own arguments
/// (`--disable plugins mcp list --json`) become `$1…`.
async fn prepare_with_script(script: &str, p: &McpPolicy) -> Result<Vec<std::ffi::OsString>, Failure> {
    let dir = TempDir::new("script");
    prepare_within(script, p, DEADLINE, &dir).await
}

/// [`prepare_with_script`] in `dir`, with the inventory's deadline `timeout`.
async fn prepare_within(
    script: &str,
    p: &McpPolicy,
    timeout: Duration,
    dir: &TempDir,
) -> Result<Vec<std::ffi::OsString>, Failure> {
    let prefix = ["-c", script, "sh"].map(std::ffi::OsString::from);
    prepare(&child_launch(Path::new("/bin/sh"), &prefix, &dir.0, &[("RENNET_T".into(), "from-env".into())]), p, timeout)
        .await
        .map(|launch| launch.args)
}

#[tokio::test]
#[cfg_attr(not(unix), ignore = "the inventory is played by a /bin/sh script")]
async fn prepare_runs_the_list_with_prefix_env_and_cwd() {
    // The script checks what it was given, then prints an inventory.
    let script = r#"[ "$*" = "--disable plugins mcp list --json" ] || { echo "args: $*" >&2; exit 9; }
[ "$RENNET_T" = from-env ] || { echo "env missing" >&2; exit 9; }
case "$PWD" in */rennet-mcp-script-*) ;; *) echo "cwd: $PWD" >&2; exit 9;; esac
echo '[{"name":"u","enabled":true,"transport":{"type":"stdio","command":"x"}}]'"#;
    let args = prepare_with_script(script, &policy(vec![("r", server("http://127.0.0.1:1/mcp"))])).await.unwrap();
    let table = parse_table_arg(&args[3]);
    assert_eq!(table["u"], render::placeholder());
    assert_eq!(table["r"]["url"].as_str(), Some("http://127.0.0.1:1/mcp"));
}

#[tokio::test]
#[cfg_attr(not(unix), ignore = "the inventory is played by a /bin/sh script")]
async fn prepare_reports_a_failing_list_with_its_stderr() {
    let script = "echo 'WARNING: noise' >&2; printf 'Error: failed to load bootstrap configuration\\n\\nCaused by:\\n    invalid transport\\n    in `mcp_servers.ghost`\\n\\nStack backtrace:\\n   0: <unknown>\\n' >&2; exit 1";
    let e = prepare_with_script(script, &policy(vec![])).await.unwrap_err();
    assert_eq!(e.code, Code::McpInventoryFailed);
    assert_eq!(e.detail["exitCode"], 1);
    assert!(e.message.contains("exited with code 1"), "{e}");
    assert!(e.message.contains("failed to load bootstrap configuration"), "{e}");
    assert!(e.message.contains("invalid transport in `mcp_servers.ghost`"), "{e}");
    let stderr: Vec<String> = serde_json::from_value(e.detail["stderr"].clone()).unwrap();
    assert!(stderr.iter().any(|l| l.contains("WARNING: noise")));
    assert!(!stderr.iter().any(|l| l.contains("<unknown>")), "backtrace dropped: {stderr:?}");
}

#[tokio::test]
#[cfg_attr(not(unix), ignore = "the inventory is played by a /bin/sh script")]
async fn prepare_reports_bad_output_and_a_missing_program() {
    let e = prepare_with_script("echo '{\"servers\":[]}'", &policy(vec![])).await.unwrap_err();
    assert_eq!(e.code, Code::McpInventoryInvalid);
    let dir = TempDir::new("missing");
    let e = prepare(&child_launch(&dir.0.join("no-such-codex"), &[], &dir.0, &[]), &policy(vec![]), DEADLINE)
        .await
        .unwrap_err();
    assert_eq!(e.code, Code::McpInventoryFailed);
}

/// Whether `pid` still runs (or is an unreaped zombie).
#[cfg(unix)]
fn running(pid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[cfg(unix)]
#[tokio::test]
async fn prepare_stops_an_endless_list_at_its_output_bound() {
    let dir = TempDir::new("endless");
    let pid_file = dir.0.join("pid");
    // A wrong binary that prints without end, never a JSON document.
    let script = format!(
        "echo $$ > '{}'; while :; do echo '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['; done",
        pid_file.display()
    );
    let e = prepare_with_script(&script, &policy(vec![])).await.unwrap_err();
    assert_eq!(e.code.as_str(), "MCP_INVENTORY_TOO_LARGE", "{e}");
    assert_eq!(e.detail["limitBytes"], 4 * 1024 * 1024, "{e}");
    assert!(e.message.contains("4 MiB"), "{e}");
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(!running(pid), "the list command was left running");
}

#[cfg(unix)]
#[tokio::test]
async fn prepare_ends_a_list_that_never_finishes_at_the_deadline() {
    let dir = TempDir::new("silent");
    let pid_file = dir.0.join("pid");
    let script = format!("echo $$ > '{}'; exec sleep 600", pid_file.display());
    let e = prepare_within(&script, &policy(vec![]), Duration::from_millis(300), &dir).await.unwrap_err();
    assert_eq!((e.code, e.source), (Code::RequestTimeout, crate::failure::FailureSource::Spawn), "{e}");
    assert!(e.retryable);
    assert_eq!(e.detail["timeoutMs"], 300, "{e}");
    assert_eq!(e.detail["command"], "codex mcp list --json", "{e}");
    assert!(e.message.contains("did not finish within 300 ms"), "{e}");
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(!running(pid), "the list command was left running");
}

#[tokio::test]
async fn prepare_validates_before_running_anything() {
    // The script would fail the test by succeeding with a collision-free inventory.
    let e = prepare_with_script("exit 99", &policy(vec![("x", server("http://10.0.0.1/"))])).await.unwrap_err();
    assert_eq!(e.code, Code::McpNotLoopback);
}

#[tokio::test]
#[cfg_attr(not(unix), ignore = "the inventory is played by a /bin/sh script")]
async fn prepare_rejects_a_requested_name_already_configured() {
    let script = r#"echo '[{"name":"taken","enabled":false,"transport":{"type":"streamable_http","url":"http://127.0.0.1:9/"}}]'"#;
    let e = prepare_with_script(script, &policy(vec![("taken", server("http://127.0.0.1:1/"))])).await.unwrap_err();
    assert_eq!(e.code, Code::McpNameCollision);
    assert_eq!(e.detail["servers"][0], "taken");
}

/// The pinned CLI from the `@openai/codex` devDependency (or `RENNET_CODEX_BIN`).
fn real_codex() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("RENNET_CODEX_BIN") {
        return Some(PathBuf::from(bin));
    }
    let launcher = Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/@openai/codex").canonicalize().ok()?;
    let (pkg, triple) = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => ("codex-linux-x64", "x86_64-unknown-linux-musl"),
        ("linux", "aarch64") => ("codex-linux-arm64", "aarch64-unknown-linux-musl"),
        ("macos", "x86_64") => ("codex-darwin-x64", "x86_64-apple-darwin"),
        ("macos", "aarch64") => ("codex-darwin-arm64", "aarch64-apple-darwin"),
        _ => return None,
    };
    let bin = launcher.parent()?.join(pkg).join("vendor").join(triple).join("bin/codex");
    bin.is_file().then_some(bin)
}

/// A fresh HOME and CODEX_HOME whose config.toml holds a stdio server, an HTTP server with a
/// bearer-token variable and a header, and a disabled server, with names that need quoting.
fn fixture_home(dir: &Path) -> Vec<(String, String)> {
    let home = dir.join("home");
    let codex_home = dir.join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        r#"[features]
plugins = false

[mcp_servers."user.stdio srv"]
command = "/bin/true"
args = ["--never-run"]

[mcp_servers."user-http-ü"]
url = "http://127.0.0.1:9/mcp"
bearer_token_env_var = "FIXTURE_TOKEN"
http_headers = { "X-Fixture" = "hdr-secret-value" }

[mcp_servers.user_off]
command = "/bin/true"
enabled = false
"#,
    )
    .unwrap();
    vec![
        ("HOME".into(), home.display().to_string()),
        ("CODEX_HOME".into(), codex_home.display().to_string()),
        ("RUST_BACKTRACE".into(), "0".into()),
    ]
}

async fn real_list(
    codex: &Path,
    args: &[std::ffi::OsString],
    cwd: &Path,
    env: &[(String, String)],
) -> serde_json::Value {
    let out = tokio::process::Command::new(codex)
        .args(args)
        .args(["mcp", "list", "--json"])
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "codex mcp list failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn real_cli_accepts_the_rendered_table() {
    let Some(codex) = real_codex() else {
        eprintln!("skipped: the pinned codex CLI is not installed (pnpm install) and RENNET_CODEX_BIN is unset");
        return;
    };
    let dir = TempDir::new("real");
    let env = fixture_home(&dir.0);
    let cwd = dir.0.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();

    // The inventory as the policy reads it.
    let inventory = inventory::read(&child_launch(&codex, &[], &cwd, &env), DEADLINE).await.unwrap();
    assert_eq!(
        inventory,
        vec![
            configured("user-http-ü", true, TransportKind::StreamableHttp),
            configured("user.stdio srv", true, TransportKind::Stdio),
            configured("user_off", false, TransportKind::Stdio),
        ]
    );

    // Empty policy: every configured server disabled, transports kept.
    let launch = prepare(&child_launch(&codex, &[], &cwd, &env), &policy(vec![]), DEADLINE).await.unwrap();
    let listed = real_list(&codex, &launch.args, &cwd, &env).await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 3);
    for entry in listed {
        assert_eq!(entry["enabled"], false, "{}", entry["name"]);
    }
    let http = listed.iter().find(|e| e["name"] == "user-http-ü").unwrap();
    assert_eq!(http["transport"]["url"], "http://127.0.0.1:9/mcp");

    // Requested servers with names that need quoting, and awkward header values.
    let mut requested = Vec::new();
    for (i, name) in awkward_names().into_iter().enumerate() {
        requested.push((
            name,
            McpServer {
                url: format!("http://127.0.0.1:{}/mcp", 41000 + i),
                bearer_token_env_var: Some(format!("TOKEN_{i}")),
                http_headers: Some(awkward_headers()),
            },
        ));
    }
    let launch = prepare(&child_launch(&codex, &[], &cwd, &env), &policy(requested), DEADLINE).await.unwrap();
    let child_env: Vec<(String, String)> = env.iter().chain(&launch.env).cloned().collect();
    let listed = real_list(&codex, &launch.args, &cwd, &child_env).await;
    let values: BTreeMap<&str, &str> = launch.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 3 + awkward_names().len());
    for entry in listed {
        let name = entry["name"].as_str().unwrap();
        match awkward_names().iter().position(|n| *n == name) {
            Some(i) => {
                assert_eq!(entry["enabled"], true, "{name}");
                assert_eq!(entry["transport"]["type"], "streamable_http", "{name}");
                assert_eq!(entry["transport"]["url"], format!("http://127.0.0.1:{}/mcp", 41000 + i), "{name}");
                assert_eq!(entry["transport"]["bearer_token_env_var"], format!("TOKEN_{i}"), "{name}");
                // The CLI reports the header names with the variables that hold their values.
                let headers: BTreeMap<String, String> =
                    serde_json::from_value(entry["transport"]["env_http_headers"].clone()).unwrap();
                let headers: BTreeMap<String, String> =
                    headers.into_iter().map(|(h, var)| (h, values[var.as_str()].to_string())).collect();
                assert_eq!(headers, awkward_headers(), "{name}");
            }
            None => assert_eq!(entry["enabled"], false, "{name}"),
        }
    }

    // A requested name that exists in the user's table.
    let e = prepare(
        &child_launch(&codex, &[], &cwd, &env),
        &policy(vec![("user.stdio srv", server("http://127.0.0.1:1/"))]),
        DEADLINE,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, Code::McpNameCollision);
}

#[tokio::test]
async fn real_cli_failure_is_inventory_failed() {
    let Some(codex) = real_codex() else {
        eprintln!("skipped: the pinned codex CLI is not installed (pnpm install) and RENNET_CODEX_BIN is unset");
        return;
    };
    let dir = TempDir::new("real-broken");
    let env = fixture_home(&dir.0);
    // A configuration Codex refuses: a url on a stdio server.
    let config = dir.0.join("codex-home/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[mcp_servers.broken]\ncommand = \"/bin/true\"\nurl = \"http://127.0.0.1:1/\"\n");
    std::fs::write(&config, text).unwrap();
    let e = prepare(&child_launch(&codex, &[], &dir.0, &env), &policy(vec![]), DEADLINE).await.unwrap_err();
    assert_eq!(e.code, Code::McpInventoryFailed, "{e}");
    assert!(e.message.contains("mcp_servers.broken"), "{e}");
    assert!(!format!("{e} {}", e.detail).contains("hdr-secret-value"));
}

/// Why the placeholder is `{ enabled = false }` and nothing else (render::placeholder): the
/// alternatives break the whole configuration with codex-cli 0.171.0.
#[tokio::test]
async fn real_cli_rejects_other_placeholder_forms() {
    let Some(codex) = real_codex() else {
        eprintln!("skipped: the pinned codex CLI is not installed (pnpm install) and RENNET_CODEX_BIN is unset");
        return;
    };
    let dir = TempDir::new("real-placeholders");
    let env = fixture_home(&dir.0);
    let cases = [
        (r#"{"user.stdio srv"={url="http://127.0.0.1:1/mcp",enabled=false}}"#, "url is not supported for stdio"),
        (r#"{"user-http-ü"={command="true",enabled=false}}"#, "url is not supported for stdio"),
        (r#"{not_configured={enabled=false}}"#, "invalid transport"),
    ];
    for (table, why) in cases {
        let out = tokio::process::Command::new(&codex)
            .args(["--disable", "plugins", "-c", &format!("mcp_servers={table}"), "mcp", "list", "--json"])
            .current_dir(&dir.0)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{table} was accepted");
        assert!(stderr.contains(why), "{table}: {stderr}");
    }
}
