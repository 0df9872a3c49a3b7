//! App tools (`tools` on `runTurn`, `prepareTurn` and `openConversation`): the app's own
//! functions, offered to the model as Codex's dynamic tools. JavaScript keeps each tool's
//! `execute` and turns a Standard Schema into JSON Schema; what crosses is `{ description,
//! inputSchema, timeoutMs?, execute: true }` per name, and the rules of a definition are held
//! here, once: each break is a TypeError naming the tool (`options.tools.<name>…`).

use super::json::{invalid, OptionsError};
use super::rules::Millis;
use crate::protocol::DynamicToolSpec;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long a call of an app tool may run by default: two minutes. A tool that waits for the
/// user (a dialog) sets more; Codex itself has no deadline, and waits for ever.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_millis(120_000);

/// The longest name the Responses API takes for a function (Codex refuses more).
const MAX_NAME: usize = 128;

/// Names of Codex's own tools, over the versions this package accepts (0.150.0 …): a dynamic
/// tool named like one is accepted by `thread/start` and then silently never offered (the
/// model gets Codex's, and its calls go there). Codex's sub-agent tools (`spawn_agent`, `wait`,
/// …) are not among them: they sit in a namespace of their own (`multi_agent_v1`, or
/// `collaboration` with `multi_agent_v2`) on every accepted version, so a top-level function of
/// the same name is the app's (seen on 0.150.0, 0.160.0 and 0.171.0).
pub const CODEX_TOOLS: &[&str] = &[
    "exec_command",
    "write_stdin",
    "shell",
    "local_shell",
    "apply_patch",
    "request_user_input",
    "view_image",
    "update_plan",
    "get_goal",
    "create_goal",
    "update_goal",
    "web_search",
    "tool_search",
    "multi_agent_v1",
    "list_mcp_resources",
    "list_mcp_resource_templates",
    "read_mcp_resource",
];

/// One tool as JavaScript hands it over (its `execute` kept there).
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolSpec {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    input_schema: Option<Box<RawValue>>,
    #[serde(default, deserialize_with = "super::json::given")]
    timeout_ms: Option<Millis<1>>,
    /// `true` where the app gave a function (JavaScript keeps it), `false` for anything else.
    #[serde(default)]
    execute: Option<bool>,
}

/// The tools as given: by name.
pub type ToolSpecs = BTreeMap<String, ToolSpec>;

/// One app tool, checked.
#[derive(Debug, Clone)]
pub struct AppTool {
    pub name: String,
    pub description: String,
    /// A JSON Schema object (`type: "object"` at its root), sent as it is.
    pub input_schema: Box<RawValue>,
    /// The call's deadline (`timeoutMs`): past it, the model is told the tool timed out.
    pub timeout: Duration,
}

impl AppTool {
    /// Its entry of `thread/start.dynamicTools`: a top-level function under its own name.
    pub fn spec(&self) -> DynamicToolSpec<'_> {
        DynamicToolSpec {
            kind: "function",
            name: &self.name,
            description: &self.description,
            input_schema: &self.input_schema,
        }
    }
}

/// The definitions' rules: a name Codex takes and does not shadow, a description, an object
/// schema, a deadline, a function.
pub(super) fn check(specs: ToolSpecs) -> Result<Vec<AppTool>, OptionsError> {
    let mut tools = Vec::with_capacity(specs.len());
    for (name, spec) in specs {
        let at = format!("options.tools{}", segment(&name));
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            return Err(invalid(format!(
                "{at}: a tool's name must match ^[a-zA-Z0-9_-]+$ (the Responses API's rule for a function name)"
            )));
        }
        if name.len() > MAX_NAME {
            return Err(invalid(format!("{at}: a tool's name must be at most {MAX_NAME} characters")));
        }
        // Codex keeps `mcp` and `mcp__…` for its MCP tools and refuses them at thread/start
        // ("dynamic tool name is reserved"), on function names as on namespaces.
        if name == "mcp" || name.starts_with("mcp__") {
            return Err(invalid(format!(
                "{at}: {name} is reserved by Codex for MCP tools (mcp and mcp__…): choose another name"
            )));
        }
        if CODEX_TOOLS.contains(&name.as_str()) {
            return Err(invalid(format!(
                "{at}: {name} is the name of one of Codex's own tools, which would be offered instead (the app's would never be called): choose another name"
            )));
        }
        if spec.execute != Some(true) {
            return Err(invalid(format!("{at}.execute must be a function")));
        }
        let description = match spec.description {
            Some(d) if !d.trim().is_empty() => d,
            _ => return Err(invalid(format!("{at}.description must be a non-empty string: the model reads it"))),
        };
        let Some(input_schema) = spec.input_schema else {
            return Err(invalid(format!("{at}.inputSchema is required: a JSON Schema object or a Standard Schema")));
        };
        if !object_schema(&input_schema) {
            return Err(invalid(format!(
                "{at}.inputSchema must describe an object (type: \"object\" at the root): a tool's arguments are a JSON object"
            )));
        }
        let timeout = spec.timeout_ms.map_or(DEFAULT_TOOL_TIMEOUT, Millis::duration);
        tools.push(AppTool { name, description, input_schema, timeout });
    }
    Ok(tools)
}

/// Whether `schema` is a JSON Schema object whose root says `type: "object"`.
fn object_schema(schema: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct Root {
        #[serde(rename = "type")]
        kind: Option<serde_json::Value>,
    }
    serde_json::from_str::<Root>(schema.get())
        .is_ok_and(|root| root.kind.as_ref().and_then(|k| k.as_str()) == Some("object"))
}

/// `.name`, or `["odd name"]` for a name that is not an identifier (as JavaScript writes a path).
fn segment(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if plain {
        format!(".{name}")
    } else {
        format!("[{}]", serde_json::to_string(name).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_tools_are_no_tools() {
        // `tools: {}` sends nothing new (no experimental API, no dynamicTools), even read-only.
        for access in ["full", "readOnly"] {
            let cwd = std::env::temp_dir();
            let given = json!({"cwd": cwd, "prompt": "x", "access": access, "tools": {}}).to_string();
            assert!(crate::options::parse(&given).unwrap().tools.is_none(), "{access}");
        }
    }

    fn checked(tools: serde_json::Value) -> Result<Vec<AppTool>, String> {
        let specs: ToolSpecs =
            super::super::json::from_json_as(&tools.to_string(), "options.tools").map_err(|e| e.0)?;
        check(specs).map_err(|e| e.0)
    }

    fn tool() -> serde_json::Value {
        json!({"description": "Weather for a city", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}, "execute": true})
    }

    #[test]
    fn a_good_definition_is_taken_with_its_default_deadline() {
        let tools = checked(json!({"get_weather": tool(), "open-file": tool()})).unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].timeout, Duration::from_millis(120_000));
        let spec = serde_json::to_value(tools[0].spec()).unwrap();
        assert_eq!(spec["type"], "function");
        assert_eq!(spec["name"], "get_weather");
        assert_eq!(spec["inputSchema"]["properties"]["city"]["type"], "string");
        let mut timed = tool();
        timed["timeoutMs"] = json!(5);
        assert_eq!(checked(json!({"t": timed})).unwrap()[0].timeout, Duration::from_millis(5));
        let long = "y".repeat(128);
        assert!(checked(json!({ long: tool() })).is_ok());
    }

    #[test]
    fn each_rule_is_a_type_error_naming_the_tool() {
        let with = |key: &str, value: Option<serde_json::Value>| {
            let mut t = tool();
            match value {
                None => drop(t.as_object_mut().unwrap().remove(key)),
                Some(value) => t[key] = value,
            }
            checked(json!({ "t": t })).unwrap_err()
        };
        let name = |n: &str| checked(json!({ n: tool() })).unwrap_err();
        assert!(
            name("a.b").starts_with(r#"options.tools["a.b"]: a tool's name must match ^[a-zA-Z0-9_-]+$"#),
            "{}",
            name("a.b")
        );
        assert!(name("wetter_\u{fc}").contains("must match"));
        assert!(name("").contains("must match"));
        assert!(name(&"y".repeat(129)).ends_with("must be at most 128 characters"));
        // Codex's sub-agent tools are in a namespace of their own (`multi_agent_v1`, or
        // `collaboration`) on every accepted version: the same names top-level are the app's.
        for free in ["wait", "spawn_agent", "wait_agent", "send_input", "close_agent", "resume_agent"] {
            assert!(checked(json!({ free: tool() })).is_ok(), "{free}");
        }
        for reserved in ["mcp", "mcp__srv__x", "mcp__a"] {
            assert!(
                name(reserved).ends_with("is reserved by Codex for MCP tools (mcp and mcp__…): choose another name")
            );
        }
        assert!(checked(json!({ "mcpx": tool() })).is_ok());
        for own in ["exec_command", "view_image", "update_goal", "apply_patch", "web_search"] {
            let e = name(own);
            assert!(
                e.starts_with(&format!("options.tools.{own}: {own} is the name of one of Codex's own tools")),
                "{e}"
            );
        }
        assert_eq!(with("execute", None), "options.tools.t.execute must be a function");
        assert_eq!(with("execute", Some(json!(false))), "options.tools.t.execute must be a function");
        assert!(with("description", None).starts_with("options.tools.t.description must be a non-empty string"));
        assert!(
            with("description", Some(json!(" "))).starts_with("options.tools.t.description must be a non-empty string")
        );
        assert!(with("description", Some(json!(3))).starts_with("options.tools.t.description"));
        assert!(with("inputSchema", None).starts_with("options.tools.t.inputSchema is required"));
        for schema in [json!({"type": "string"}), json!([]), json!(true), json!({"properties": {}})] {
            assert!(
                with("inputSchema", Some(schema)).starts_with("options.tools.t.inputSchema must describe an object")
            );
        }
        for ms in [json!(0), json!(2147483648u64), json!(null), json!("5")] {
            let e = with("timeoutMs", Some(ms.clone()));
            assert!(e.starts_with("options.tools.t.timeoutMs"), "{ms}: {e}");
        }
        assert!(with("timeoutMs", Some(json!(0))).ends_with("from 1 to 2147483647"));
        assert!(with("strict", Some(json!(true))).contains("strict"));
    }
}
