//! The server requests of a turn: each one the app's to answer when it has a handler (within its
//! time), else the fixed policy's (`turn/policy.rs`) at once; a late answer dropped, an answer
//! that does not fit replaced by the method's refusal (never by a policy that may grant), and whatever is still asked answered "cancelled"
//! when the turn ends. Each answer sent is told as a `serverRequest` event.
//!
//! App tools (`tools`) ride the same path: an `item/tool/call` of one of them goes to
//! JavaScript (`tool: true`, with the tool's deadline) whatever handler there is; past its
//! deadline, or when the turn is aborted or ends, the core answers it itself with a failure text
//! and tells JavaScript to abort that call (`{cancel: key, why}`); a call of a tool the app did
//! not give (a resumed thread's stored one) gets a failure text rather than a method error,
//! whose words Codex would drop.

use super::{Asked, Session};
use crate::events::{AgentRef, HarnessEvent, ReplyKind, ServerRequestEvent};
use crate::exchange::{Input, Output, Wire};
use crate::protocol::params_of;
use crate::turn::controls::AppAnswer;
use crate::turn::policy;
use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;
use tokio::time::Instant;

impl Session<'_> {
    /// A server request: the app's to answer when it has a handler (within its time), else the
    /// fixed policy's at once.
    pub(super) async fn server_request<R: Input, W: Output>(
        &mut self,
        id: serde_json::Value,
        method: String,
        line: String,
        wire: &mut Wire<'_, R, W>,
    ) {
        let params = params_of(&line).unwrap_or_else(|| RawValue::from_string("null".into()).expect("null is JSON"));
        let agent = thread_of(&params).and_then(|thread| self.state.agent_of(&thread));
        let ending = wire.abort_seen() || self.state.is_completed();
        if let Some(tool) = self.own_tool(&method, &params) {
            if ending {
                let answer = tool_failure(ReplyKind::Cancelled, format!("{CANCELLED_BEFORE}: {}", tool.name));
                return self.reply(wire, id, method, params, agent, answer, None).await;
            }
            let key = self.next_key;
            self.next_key += 1;
            let timeout_ms = tool.timeout.as_millis() as u64;
            let request = json!({"key": key, "method": method, "id": id, "params": params, "agent": agent,
                "tool": true, "timeoutMs": timeout_ms});
            if self.answers.is_some() && self.controls.ask_app(request.to_string()) {
                tracing::debug!(tool = %tool.name, key, "app tool call handed to the app");
                let deadline = Instant::now() + tool.timeout;
                let tool = Some(AskedTool { name: tool.name, timeout_ms });
                self.asked.insert(key, Asked { id, method, params, agent, deadline, tool });
                return;
            }
        }
        if self.options.app_answers && self.answers.is_some() && !ending {
            let key = self.next_key;
            self.next_key += 1;
            let request = json!({"key": key, "method": method, "id": id, "params": params, "agent": agent});
            if self.controls.ask_app(request.to_string()) {
                let deadline = Instant::now() + self.options.server_request_timeout;
                tracing::debug!(method = %method, key, "server request handed to the app");
                self.asked.insert(key, Asked { id, method, params, agent, deadline, tool: None });
                return;
            }
        }
        let answer = self.fixed_answer(&method, &params);
        self.reply(wire, id, method, params, agent, answer, None).await;
    }

    /// The tool of an `item/tool/call` that is one of the app's (`tools`): a top-level function
    /// of that name.
    fn own_tool(&self, method: &str, params: &RawValue) -> Option<OwnTool> {
        if method != TOOL_CALL {
            return None;
        }
        let call = tool_call(params)?;
        let tool = self.options.tools.as_ref()?.iter().find(|t| call.namespace.is_none() && t.name == call.tool)?;
        Some(OwnTool { name: tool.name.clone(), timeout: tool.timeout })
    }

    /// The fixed answer to `method` when the app gives none: the policy's, but for a tool call
    /// on a turn given app tools, which is a tool the app does not offer now (a resumed thread's
    /// stored one): a failure text the model can read, where a method error's words would be
    /// dropped by Codex.
    fn fixed_answer(&self, method: &str, params: &RawValue) -> policy::Answer {
        if method == TOOL_CALL && self.options.tools.is_some() {
            let name = tool_call(params).map(|c| c.qualified()).unwrap_or_default();
            return tool_failure(
                ReplyKind::Failed,
                format!(
                    "the app does not offer the tool {name} now: it is stored with this thread, but this turn was not given it; do not call it again"
                ),
            );
        }
        policy::answer(method, self.options.access)
    }

    /// Tells JavaScript to abort the running call `key` (`why`: `timedOut`, `aborted`, `ended`).
    fn cancel_tool(&self, key: u64, why: &str) {
        self.controls.ask_app(json!({"cancel": key, "why": why}).to_string());
    }

    /// Sends `answer` to request `id` and tells the app how it was answered; `unfit`: why the
    /// app's answer was not sent (its event says so).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn reply<R: Input, W: Output>(
        &mut self,
        wire: &mut Wire<'_, R, W>,
        id: serde_json::Value,
        method: String,
        params: Box<RawValue>,
        agent: Option<AgentRef>,
        answer: policy::Answer,
        unfit: Option<String>,
    ) {
        tracing::debug!(method = %method, reply = json!(answer.kind).as_str(), "server request answered");
        wire.reply(&id, answer.reply()).await;
        let event = ServerRequestEvent { method, id, params, agent, reply: answer.kind, unfit };
        self.stream.push(&HarnessEvent::ServerRequest(event));
    }

    /// The app's word on request `key` (dropped when the request was answered already).
    pub(super) async fn app_answered<R: Input, W: Output>(
        &mut self,
        key: u64,
        said: AppAnswer,
        wire: &mut Wire<'_, R, W>,
    ) {
        let Some(asked) = self.asked.remove(&key) else {
            tracing::debug!(key, "a late answer of the app dropped");
            return;
        };
        let (answer, why) = match said {
            // An app tool's answer, made in JavaScript (its reply kind with it).
            AppAnswer::Tool(result, kind) if asked.tool.is_some() => {
                (policy::Answer { kind, result: Some(result), error: None }, None)
            }
            AppAnswer::Tool(..) | AppAnswer::Pass if asked.tool.is_some() => {
                let name = asked.tool.as_ref().map(|t| t.name.as_str()).unwrap_or_default();
                (tool_failure(ReplyKind::Failed, format!("the app's tool {name} gave no answer")), None)
            }
            AppAnswer::Tool(result, _) | AppAnswer::Reply(result) => {
                (policy::Answer { kind: ReplyKind::App, result: Some(result), error: None }, None)
            }
            AppAnswer::Pass => (self.fixed_answer(&asked.method, &asked.params), None),
            AppAnswer::Unfit(why) => {
                // Never the fixed policy's reply, which may grant: the app meant something else.
                let mut answer = policy::refused(&asked.method);
                let sent = json!(answer.kind);
                answer.kind = ReplyKind::Unfit;
                let why = format!(
                    "the app's answer to {} does not fit its response type ({why}); it was not sent, the method's refusal ({}) was",
                    asked.method,
                    sent.as_str().unwrap_or_default()
                );
                // The turn's own target, wherever in the turn this is written.
                tracing::warn!(target: "rennet_codex::turn", method = %asked.method, "{why}");
                (answer, Some(why))
            }
        };
        self.reply(wire, asked.id, asked.method, asked.params, asked.agent, answer, why).await;
    }

    /// Every request the app has not answered yet is answered "cancelled" (the turn is ending);
    /// an app tool's call with a failure text, and its `execute` is told to abort: `aborted` when
    /// the turn was, else `ended` (the run ended otherwise: the child's end, a failure).
    pub(super) async fn cancel_asked<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) {
        let why = if wire.abort_seen() { "aborted" } else { "ended" };
        let mut asked: Vec<_> = self.asked.drain().collect();
        asked.sort_by_key(|(key, _)| *key);
        for (key, asked) in asked {
            let answer = match &asked.tool {
                Some(tool) => {
                    self.cancel_tool(key, why);
                    tool_failure(ReplyKind::Cancelled, format!("{CANCELLED}: {}", tool.name))
                }
                None => policy::cancelled(&asked.method),
            };
            self.reply(wire, asked.id, asked.method, asked.params, asked.agent, answer, None).await;
        }
    }

    /// A request the app did not answer in time: the fixed policy's reply (`timedOut`); an app
    /// tool's call is told it timed out, and its `execute` to abort.
    pub(super) async fn time_out<R: Input, W: Output>(&mut self, key: u64, asked: Asked, wire: &mut Wire<'_, R, W>) {
        let answer = match &asked.tool {
            Some(tool) => {
                self.cancel_tool(key, "timedOut");
                let text =
                    format!("the app's tool {} timed out after {} ms and was stopped", tool.name, tool.timeout_ms);
                tool_failure(ReplyKind::TimedOut, text)
            }
            None => {
                let mut answer = self.fixed_answer(&asked.method, &asked.params);
                answer.kind = ReplyKind::TimedOut;
                answer
            }
        };
        self.reply(wire, asked.id, asked.method, asked.params, asked.agent, answer, None).await;
    }
}

/// The server request of a dynamic tool call.
const TOOL_CALL: &str = "item/tool/call";

/// What the model is told of a call the turn's abort (or end) cancelled.
const CANCELLED: &str = "the turn was stopped before the app's tool answered; the call was cancelled";
/// … and of one that came when the turn was already ending.
const CANCELLED_BEFORE: &str = "the turn was stopping; the call was not run";

/// An app tool a call is for.
struct OwnTool {
    name: String,
    timeout: std::time::Duration,
}

/// What the session keeps of an app tool's call the app is running.
pub(super) struct AskedTool {
    name: String,
    timeout_ms: u64,
}

/// The params of `item/tool/call` the routing reads.
#[derive(Deserialize)]
struct ToolCall {
    tool: String,
    #[serde(default)]
    namespace: Option<String>,
}

impl ToolCall {
    /// As the model called it: `namespace.tool`, or the tool's name.
    fn qualified(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}.{}", self.tool),
            None => self.tool.clone(),
        }
    }
}

fn tool_call(params: &RawValue) -> Option<ToolCall> {
    serde_json::from_str(params.get()).ok()
}

/// A tool call's answer that failed, in words the model reads (Codex passes on the text, never
/// `success`, and drops a JSON-RPC error's words).
fn tool_failure(kind: ReplyKind, text: String) -> policy::Answer {
    let result = json!({"contentItems": [{"type": "inputText", "text": text}], "success": false});
    policy::Answer { kind, result: Some(result), error: None }
}

/// The thread a server request is about (`params.threadId`, or a legacy request's `conversationId`).
fn thread_of(params: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Scope {
        #[serde(default)]
        thread_id: Option<String>,
        #[serde(default)]
        conversation_id: Option<String>,
    }
    serde_json::from_str::<Scope>(params.get()).ok().and_then(|s| s.thread_id.or(s.conversation_id))
}
