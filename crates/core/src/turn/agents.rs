//! The turn's sub-agents: the threads Codex starts for it (`multi_agent` tools), found through
//! the spawn items of the turn's threads (`collabAgentToolCall.receiverThreadIds`,
//! `subAgentActivity.agentThreadId`) or through a turn whose `rootTurnId` is one of the turn's.
//! Each has a ledger of its own; frames of a thread not yet known are held while a spawn of the
//! turn is in flight, since a child's first frames can come before the spawn names it.

use super::ledger::Ledger;
use crate::events::{AgentOutcome, AgentRef, AgentStatus, Usage};
use crate::protocol::Scope;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;

/// A frame of a thread nobody has claimed yet.
pub(super) struct Held {
    pub method: Cow<'static, str>,
    pub scope: Scope,
    pub line: String,
}

pub(super) struct Agent {
    pub reference: AgentRef,
    pub ledger: Ledger,
    /// Its first turn has started.
    pub started: bool,
    /// The last status a collab tool call reported for it (`completed`, `errored`, `shutdown`…).
    pub reported: Option<String>,
}

impl Agent {
    /// Work of it is running, or due to start.
    pub fn busy(&self) -> bool {
        if self.ledger.running() {
            return true;
        }
        if self.started {
            return false;
        }
        // Spawned, no turn seen yet: due, unless Codex said it will not run.
        !matches!(self.reported.as_deref(), Some("errored" | "shutdown" | "notFound" | "completed" | "interrupted"))
    }

    pub fn outcome(&self) -> AgentOutcome {
        let status = if self.busy() {
            AgentStatus::CutOff
        } else {
            match self.ledger.completion().map(|c| c.status.as_str()).or(self.reported.as_deref()) {
                Some("completed") => AgentStatus::Completed,
                Some("interrupted" | "shutdown") => AgentStatus::Interrupted,
                _ => AgentStatus::Failed,
            }
        };
        AgentOutcome {
            thread_id: self.reference.thread_id.clone(),
            nickname: self.reference.nickname.clone(),
            status,
            usage: self.ledger.usage(),
        }
    }
}

/// The parts of a `collabAgentToolCall` item the turn reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CollabCall {
    pub id: String,
    pub tool: String,
    #[serde(default)]
    pub receiver_thread_ids: Vec<String>,
    #[serde(default)]
    pub agents_states: HashMap<String, CollabState>,
}

#[derive(Deserialize)]
pub(super) struct CollabState {
    pub status: String,
}

/// The parts of a `subAgentActivity` item the turn reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SubAgentActivity {
    pub agent_thread_id: String,
    #[serde(default)]
    pub agent_path: Option<String>,
}

#[derive(Default)]
pub(super) struct Agents {
    /// In the order they were found.
    known: Vec<Agent>,
    /// Spawn calls started and not completed.
    in_flight: Vec<String>,
    pub held: Vec<Held>,
}

impl Agents {
    pub fn get(&self, thread_id: &str) -> Option<&Agent> {
        self.known.iter().find(|a| a.reference.thread_id == thread_id)
    }

    pub fn get_mut(&mut self, thread_id: &str) -> Option<&mut Agent> {
        self.known.iter_mut().find(|a| a.reference.thread_id == thread_id)
    }

    pub fn all(&self) -> &[Agent] {
        &self.known
    }

    pub fn all_mut(&mut self) -> impl Iterator<Item = &mut Agent> {
        self.known.iter_mut()
    }

    /// A spawn of the turn is in flight: unknown threads may be its child.
    pub fn spawning(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// Any agent's work runs, or is due.
    pub fn busy(&self) -> bool {
        self.known.iter().any(Agent::busy)
    }

    /// Whether `turn_id` is a turn of one of the agents (their own sub-agents name it as root).
    pub fn has_turn(&self, turn_id: &str) -> bool {
        self.known.iter().any(|a| a.ledger.turn_id() == Some(turn_id))
    }

    /// Registers `thread_id` as an agent `depth` deep, once; `true` when it is new.
    pub fn adopt(&mut self, thread_id: &str, depth: u32, path: Option<String>) -> bool {
        if let Some(agent) = self.get_mut(thread_id) {
            if agent.reference.path.is_none() {
                agent.reference.path = path;
            }
            return false;
        }
        let reference = AgentRef { thread_id: thread_id.to_string(), nickname: None, path, depth };
        self.known.push(Agent { reference, ledger: Ledger::default(), started: false, reported: None });
        true
    }

    /// A collab tool call of one of the turn's threads (`depth`: that thread's; 0 for the
    /// turn's own), started or completed: spawns in flight, new agents, reported statuses.
    /// Returns whether agents were added.
    pub fn collab_call(&mut self, call: CollabCall, depth: u32, completed: bool) -> bool {
        let mut added = false;
        if call.tool == "spawnAgent" {
            if completed || !call.receiver_thread_ids.is_empty() {
                self.in_flight.retain(|id| *id != call.id);
            } else if !self.in_flight.contains(&call.id) {
                self.in_flight.push(call.id.clone());
            }
            for child in &call.receiver_thread_ids {
                added |= self.adopt(child, depth + 1, None);
            }
        }
        for (thread_id, state) in call.agents_states {
            if let Some(agent) = self.get_mut(&thread_id) {
                agent.reported = Some(state.status);
            }
        }
        added
    }

    /// The agents' usage together, where any reported one.
    pub fn usage(&self) -> Option<Usage> {
        self.known.iter().filter_map(|a| a.ledger.usage()).reduce(Usage::plus)
    }

    pub fn outcomes(&self) -> Vec<AgentOutcome> {
        self.known.iter().map(Agent::outcome).collect()
    }
}
