//! The session's script: handshake → login check → thread (started read-only, or resumed) →
//! for a read-only turn the isolation checks → turn (or review). The wait for its end is the
//! session's, as the exchange's owner.

use super::{flush_prelude, user_input, Session, Started};
use crate::account;
use crate::events::{HarnessEvent, StartedEvent, ThreadStartedEvent};
use crate::exchange::{handshake, Exchange, Input, Output, Stop};
use crate::isolation;
use crate::options::{Access, TurnInput};
use crate::protocol::{
    ApprovalPolicy, CollaborationMode, ConfigRead, ExperimentalFeatureList, McpServerStatusList, ModeSettings,
    ReviewStart, SandboxPolicy, ThreadResume, ThreadSandbox, ThreadStart, TurnRef, TurnStart,
};
use crate::sandbox;
use crate::turn::controls::Readiness;
use crate::turn::ending;

impl Session<'_> {
    pub(super) async fn script<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
        started: Started<'_>,
    ) -> Result<(), Stop> {
        // Only what a request needs from the experimental surface makes the package ask for it.
        // App tools (`thread/start.dynamicTools`) are experimental too.
        let experimental = self.options.mode.is_some() || self.options.tools.is_some();
        let hello = handshake::handshake(exchange, self, experimental).await?;
        self.stream.push(&HarnessEvent::Started(StartedEvent {
            turn_key: started.turn_key.to_string(),
            pid: started.pid,
            codex_path: started.codex_path.to_string(),
            codex_version: hello.codex_version,
            user_agent: hello.user_agent,
        }));
        flush_prelude(self.prelude, self.stream);
        self.check_login(exchange).await?;

        let read_only = self.options.access == Access::ReadOnly;
        let (thread_id, configured) = self.open_thread(exchange, read_only).await?;
        if let Some(configured) = configured {
            self.confirm_isolation(exchange, &thread_id, &configured).await.map_err(ending::isolation_doubt)?;
        }
        // Everything up to `turn/start` is done: a prepared turn waits here for its input.
        self.controls.set_readiness(Readiness::Ready { thread_id: thread_id.clone() });
        let turn = match (&self.options.review, self.options.turn.as_ref()) {
            (Some(target), _) => {
                // A review of the thread's changes, inline: a turn of the thread whose items
                // carry the review's turn id, which its acknowledgement names.
                self.state.set_turn_requested();
                let review = ReviewStart { thread_id: &thread_id, target, delivery: "inline" };
                exchange.call(self, &review).await?.turn
            }
            (None, Some(input)) => self.start_turn(exchange, &thread_id, input).await?,
            (None, None) => {
                self.start = self.controls.take_start();
                let input = exchange.pump_until(self, |session, _| session.given.take()).await?;
                self.start_turn(exchange, &thread_id, &input).await?
            }
        };
        if let Some(turn_id) = turn.id {
            self.update_state(|state, out| state.set_turn(turn_id, out));
        }
        // The acknowledgement is not a result: the turn ends on `turn/completed` (or a
        // failure), however long it takes — with `until: 'idle'`, once everything it started is idle.
        exchange.pump_until(self, |_, _| None::<()>).await
    }

    /// Before the thread: a turn nobody can authenticate fails now, rather than retrying its
    /// model request for minutes. A server without `account/read` (older Codex) goes on, as
    /// does one that cannot say.
    async fn check_login<R: Input, W: Output>(&mut self, exchange: &mut Exchange<'_, R, W>) -> Result<(), Stop> {
        let options = self.options;
        match handshake::login(exchange, self, &options.target).await? {
            handshake::Login::Report { ready: true, .. } => Ok(()),
            handshake::Login::Report { report, ready: false } => Err(Stop::Failed(account::auth_required(report))),
            handshake::Login::Unknown(error) => {
                tracing::debug!(code = error.code, "account/read not answered: {}", error.message);
                Ok(())
            }
        }
    }

    /// Starts (or resumes) the thread, always read-only: a writable thread sandbox in a git
    /// directory makes the server mark the project trusted in the user's config.toml. Full
    /// access is granted per turn instead (`sandboxPolicy`). For a read-only turn, also the MCP
    /// servers of the effective configuration, each disabled for the thread; for an `ask` turn,
    /// the user's workspace-write settings its `turn/start` will carry.
    async fn open_thread<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
        read_only: bool,
    ) -> Result<(String, Option<Vec<String>>), Stop> {
        let opts = self.options;
        let read = ConfigRead { cwd: &opts.target.thread_cwd };
        let configured = if read_only {
            // Codex merges configuration layers, so an empty table cannot clear the user's
            // servers: each configured one (project layers included) is disabled by name.
            let config = exchange.call(self, &read).await.map_err(ending::isolation_doubt)?;
            Some(isolation::configured_servers(&config).map_err(Stop::Failed)?)
        } else {
            None
        };
        // A review carries no sandbox (the thread's read-only one holds): nothing to read.
        if opts.access == Access::Ask && opts.review.is_none() {
            // Before the thread, so that a configuration that cannot be read starts nothing.
            let config = exchange.call(self, &read).await?;
            self.workspace_write = Some(sandbox::workspace_write(&config).map_err(Stop::Failed)?);
        }
        let config = configured.as_deref().map(isolation::thread_config);
        let thread = ThreadStart {
            cwd: &opts.target.thread_cwd,
            approval_policy: ApprovalPolicy::Never,
            sandbox: ThreadSandbox::ReadOnly,
            model: opts.model.as_deref(),
            config,
            ephemeral: opts.ephemeral && opts.thread_id.is_none(),
            // Only a new thread is given tools: a resumed one keeps those it was started with.
            dynamic_tools: match &opts.thread_id {
                None => opts.tools.as_ref().map(|tools| tools.iter().map(|t| t.spec()).collect()),
                Some(_) => None,
            },
        };
        let (thread, resumed) = match &opts.thread_id {
            Some(thread_id) => (exchange.call(self, &ThreadResume { thread_id, thread }).await?, true),
            None if thread.dynamic_tools.is_some() => match exchange.ask(self, &thread).await? {
                Ok(thread) => (thread, false),
                Err(error) => {
                    return Err(Stop::Failed(ending::tools_refused(error, exchange.codex_version.as_deref())))
                }
            },
            None => (exchange.call(self, &thread).await?, false),
        };
        if read_only {
            isolation::check_thread(&thread.sandbox, &thread.approval_policy).map_err(Stop::Failed)?;
        }
        let thread_id = thread.thread.id;
        self.thread_model = thread.thread.model;
        tracing::Span::current().record("threadId", thread_id.as_str());
        self.stream.push(&HarnessEvent::ThreadStarted(ThreadStartedEvent { thread_id: thread_id.clone(), resumed }));
        self.update_state(|state, out| state.set_thread(thread_id.clone(), out));
        Ok((thread_id, configured))
    }

    /// Asks the server, for this thread, whether the isolation holds. The turn starts only
    /// after it confirms.
    async fn confirm_isolation<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
        thread_id: &str,
        requested: &[String],
    ) -> Result<(), Stop> {
        let features = exchange.list_all(self, |cursor| ExperimentalFeatureList { thread_id, cursor }).await?;
        let absent = isolation::check_features(&features).map_err(Stop::Failed)?;
        if !absent.is_empty() {
            tracing::debug!(features = ?absent, "features this Codex does not have");
        }
        let servers = exchange
            .list_all(self, |cursor| McpServerStatusList { thread_id, detail: "toolsAndAuthOnly", cursor })
            .await?;
        isolation::check_servers(&servers, requested).map_err(Stop::Failed)
    }

    /// `turn/start` with the access mode's sandbox and approval policy: the turn its
    /// acknowledgement names.
    async fn start_turn<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
        thread_id: &str,
        input: &TurnInput,
    ) -> Result<TurnRef, Stop> {
        let opts = self.options;
        self.structured = input.output_schema.is_some();
        let model = input.model.as_deref().or(opts.model.as_deref());
        let thread_model = self.thread_model.clone();
        let collaboration_mode = opts.mode.map(|mode| CollaborationMode {
            mode: mode.as_str(),
            settings: ModeSettings {
                model: model.or(thread_model.as_deref()).unwrap_or_default(),
                reasoning_effort: None,
                developer_instructions: None,
            },
        });
        let (approval_policy, sandbox_policy) = match opts.access {
            Access::Full => (ApprovalPolicy::Never, SandboxPolicy::DangerFullAccess),
            Access::ReadOnly => (ApprovalPolicy::Never, SandboxPolicy::ReadOnly),
            Access::Ask => {
                // Read with the thread (`open_thread`) for every `ask` turn that gets here.
                let settings = self.workspace_write.clone().expect("an ask turn reads its sandbox before its thread");
                (ApprovalPolicy::OnRequest, SandboxPolicy::WorkspaceWrite(settings))
            }
        };
        let items = user_input(&input.input);
        let turn = TurnStart {
            thread_id,
            input: &items,
            cwd: &opts.target.thread_cwd,
            approval_policy,
            sandbox_policy,
            model,
            effort: input.effort.as_deref(),
            output_schema: input.output_schema.as_deref(),
            collaboration_mode,
        };
        self.state.set_turn_requested();
        Ok(exchange.call(self, &turn).await?.turn)
    }
}
