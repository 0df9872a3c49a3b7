//! The server requests of a turn: each one the app's to answer when it has a handler (within its
//! time), else the fixed policy's (`turn/policy.rs`) at once; a late answer dropped, an answer
//! that does not fit replaced by the method's refusal (never by a policy that may grant), and whatever is still asked answered "cancelled"
//! when the turn ends. Each answer sent is told as a `serverRequest` event.

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
        if self.answers.is_some() && !wire.abort_seen() && !self.state.is_completed() {
            let key = self.next_key;
            self.next_key += 1;
            let request = json!({"key": key, "method": method, "id": id, "params": params, "agent": agent});
            if self.controls.ask_app(request.to_string()) {
                let deadline = Instant::now() + self.options.server_request_timeout;
                tracing::debug!(method = %method, key, "server request handed to the app");
                self.asked.insert(key, Asked { id, method, params, agent, deadline });
                return;
            }
        }
        let answer = policy::answer(&method, self.options.access);
        self.reply(wire, id, method, params, agent, answer, None).await;
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
            AppAnswer::Reply(result) => {
                (policy::Answer { kind: ReplyKind::App, result: Some(result), error: None }, None)
            }
            AppAnswer::Pass => (policy::answer(&asked.method, self.options.access), None),
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

    /// Every request the app has not answered yet is answered "cancelled" (the turn is ending).
    pub(super) async fn cancel_asked<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) {
        let mut asked: Vec<_> = self.asked.drain().collect();
        asked.sort_by_key(|(key, _)| *key);
        for (_, asked) in asked {
            let answer = policy::cancelled(&asked.method);
            self.reply(wire, asked.id, asked.method, asked.params, asked.agent, answer, None).await;
        }
    }
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
