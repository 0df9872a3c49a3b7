// Real `codex app-server` (the pinned 0.171.0, or RENNET_TEST_CODEX_BIN) against the loopback
// mock: the agent loop. Also a suite of the compat matrix (scripts/compat.mjs): the column of a
// test is its title up to the colon, and an older Codex without a feature must show the
// documented behaviour (docs/agent-loop.md), which the tests tell apart where it differs. A sub-agent's model requests carry its own `thread-id`, so `byThread`
// answers parent and child from queues of their own. What every scenario must keep (one terminal,
// last; nothing of the run left in its process group or carrying its marker; config.toml
// untouched) is checked by the harness, after the terminal.
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { runReview } from '../../index.js'
import type { HarnessEvent, RunTurnOptions, ServerRequest } from '../../index.js'
import {
  byThread,
  createGoalResponse,
  execCommandResponse,
  functionCallOutputs,
  hang,
  jsonMessageResponse,
  messageResponse,
  requestUserInputResponse,
  spawnAgentResponse,
  spawnedAgents,
  updateGoalResponse,
  usage,
  waitAgentResponse,
} from '../../testing/mock-responses.js'
import type { RecordedRequest } from '../../testing/mock-responses.js'
import { eventually } from '../support/procs.js'
import { PINNED_CODEX_VERSION, codexUnderTest } from '../../testing/codex-home.js'
import { runRealTurn, usageOf } from './harness.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

type AgentEvent = Extract<HarnessEvent, { type: 'agent' }>
const agentEvents = (events: HarnessEvent[]) => events.filter((e): e is AgentEvent => e.type === 'agent')

/** The child's thread id, as the spawn's output told the parent's model. */
const childOf = (req: RecordedRequest) => spawnedAgents(req.body).map((a) => a.agent_id)

// Real children on a loaded 2-core machine: each scenario may take a while (no timing is asserted).
describe('real codex app-server: the agent loop', { timeout: 120_000 }, () => {
  it('agents: a spawned sub-agent’s frames are agent events, its usage counted, its end named', async () => {
    const chooser = byThread(
      [
        spawnAgentResponse('Count the files.', { callId: 'call_spawn', usage: usage({ input: 100, output: 10 }) }),
        (req) => waitAgentResponse(childOf(req), { callId: 'call_wait', usage: usage({ input: 120, output: 10 }) }),
        messageResponse('The helper counted 3 files.', { usage: usage({ input: 150, output: 12 }) }),
      ],
      [messageResponse('There are 3 files.', { usage: usage({ input: 50, output: 5 }) })],
    )
    const r = await runRealTurn({ prompt: 'Use a helper to count the files.', scenario: [chooser] })
    const t = r.terminal
    expect(t.status).toBe('completed')
    expect(t.finalMessage).toBe('The helper counted 3 files.')
    expect(chooser.threads).toHaveLength(2)
    const child = chooser.threads[1]
    expect(r.of('passthrough')).toEqual([])
    const nested = agentEvents(r.events)
    expect(nested.length).toBeGreaterThan(0)
    for (const e of nested) expect(e.agent).toMatchObject({ threadId: child, depth: 1 })
    expect(nested.map((e) => e.event)).toContainEqual(expect.objectContaining({ type: 'turnCompleted', status: 'completed', finalMessage: 'There are 3 files.' }))
    // The spawn named the child to the parent's model as to the app.
    expect(childOf(r.mock.requests.find((q) => q.thread?.index === 0 && q.thread.request === 1)!)).toEqual([child])
    expect(t.usage).toEqual(usageOf({ input: 370, output: 32, total: 402 }))
    expect(t.agents).toEqual([{ threadId: child, nickname: null, status: 'completed', usage: usageOf({ input: 50, output: 5, total: 55 }) }])
    expect(t.totalUsage).toEqual(usageOf({ input: 420, output: 37, total: 457 }))
    expect(t.cutOff).toEqual([])
  })

  const spawnThenAnswer = () => [spawnAgentResponse('Look around.', { callId: 'call_spawn' }), messageResponse('I asked a helper.')]

  it('agents: a sub-agent left running is named cutOff with the default until', async () => {
    // The run ends with the parent's turn; the child is still at work.
    const r = await runRealTurn({ prompt: 'Start a helper.', scenario: [byThread(spawnThenAnswer(), [hang([])])] })
    expect(r.terminal.status).toBe('completed')
    expect(r.terminal.finalMessage).toBe('I asked a helper.')
    expect(r.terminal.agents).toHaveLength(1)
    const [agent] = r.terminal.agents
    expect(agent.status).toBe('cutOff')
    expect(r.terminal.cutOff).toEqual([{ kind: 'agent', threadId: agent.threadId, nickname: null, reason: 'turnCompleted' }])
  })

  it("agents: until 'idle' waits for a sub-agent left running to complete", async () => {
    const r = await runRealTurn({
      prompt: 'Start a helper.',
      scenario: [byThread(spawnThenAnswer(), [messageResponse('Looked around.', { usage: usage({ input: 30, output: 3 }) })])],
      extra: { until: 'idle' },
    })
    expect(r.terminal.status).toBe('completed')
    expect(r.terminal.finalMessage).toBe('I asked a helper.')
    expect(r.terminal.agents.map((a) => [a.status, a.usage])).toEqual([['completed', usageOf({ input: 30, output: 3, total: 33 })]])
    expect(r.terminal.cutOff).toEqual([])
    expect(agentEvents(r.events).map((e) => e.event)).toContainEqual(expect.objectContaining({ type: 'turnCompleted', finalMessage: 'Looked around.' }))
  })

  it("agents: abort interrupts the sub-agent's turn too", async () => {
    const r = await runRealTurn({
      prompt: 'Start a helper and wait.',
      scenario: [byThread([spawnAgentResponse('Think hard.', { callId: 'call_spawn' }), (req) => waitAgentResponse(childOf(req), { callId: 'call_wait' })], [hang([])])],
      extra: { until: 'idle' },
      interruptGraceMs: 10_000,
      onEvent: (e, ctx) => {
        if (e.type === 'agent' && e.event.type === 'turnStarted') ctx.abort()
      },
    })
    expect(r.terminal.status).toBe('cancelled')
    expect(r.terminal.agents).toHaveLength(1)
    expect(r.terminal.agents[0].status).toBe('interrupted')
    const childTurn = agentEvents(r.events).find((e) => e.event.type === 'turnCompleted')
    expect(childTurn?.event, 'the child turn ended interrupted before the kill').toMatchObject({ status: 'cancelled' })
  })

  it("agents: until 'idle' sends turnCompleted when the user's turn completes; an abort in the wait is cancelled with its reason", async () => {
    let ownAt = -1
    const r = await runRealTurn({
      prompt: 'Start a helper.',
      scenario: [byThread(spawnThenAnswer(), [hang([])])],
      extra: { until: 'idle' },
      onEvent: (e, ctx) => {
        // The sub-agent still works: the app has the answer and aborts the rest.
        if (e.type === 'turnCompleted' && ownAt < 0) {
          ownAt = ctx.events.length - 1
          ctx.turn.abort('enough')
        }
      },
    })
    const t = r.terminal
    const own = r.events.flatMap((e, i) => (e.type === 'turnCompleted' ? [i] : []))
    expect(own).toEqual([ownAt])
    expect(r.events[ownAt]).toMatchObject({ type: 'turnCompleted', status: 'completed', finalMessage: 'I asked a helper.', cutOff: [] })
    const childEnd = r.events.findIndex((e) => e.type === 'agent' && e.event.type === 'turnCompleted')
    expect(childEnd, "the sub-agent's turn ended after the user's turnCompleted").toBeGreaterThan(ownAt)
    expect(t.status).toBe('cancelled')
    expect(t.cancellation).toBe('interrupted')
    expect(t.abortReason).toBe('enough')
    expect(t.agents.map((a) => a.status)).toEqual(['interrupted'])
    expect(t.cutOff).toEqual([])
  })

  it('agents: after an abort the package waits for each interrupted sub-agent turn: interrupted, eight runs out of eight', { timeout: 400_000 }, async () => {
    const statuses: string[] = []
    for (let run = 0; run < 8; run++) {
      const chooser = byThread([spawnAgentResponse('Think hard.', { callId: 'call_spawn' }), (req) => waitAgentResponse(childOf(req), { callId: 'call_wait' })], [hang([])])
      const r = await runRealTurn({
        prompt: 'Start a helper and wait.',
        scenario: [chooser],
        onEvent: (e, ctx) => {
          // Once the sub-agent's model stream is open (and hangs), abort with the default grace.
          if (e.type === 'agent' && e.event.type === 'turnStarted') {
            void eventually(() => chooser.threads.length >= 2, 15_000).then(() => ctx.turn.abort('stop'))
          }
        },
      })
      const t = r.terminal
      statuses.push([t.status, t.cancellation, t.abortReason, ...t.agents.map((a) => a.status), ...t.cutOff.map((c) => c.kind)].join(' '))
    }
    expect(statuses).toEqual(Array(8).fill('cancelled interrupted stop interrupted'))
  })

  it("goal: until 'idle' follows Codex's continuation until the model completes the goal", async () => {
    const objective = 'Count the files in this repository'
    const r = await runRealTurn({
      prompt: 'Set a goal and work on it.',
      scenario: [
        createGoalResponse(objective, { callId: 'call_goal' }),
        messageResponse('Working on it.'),
        // The continuation Codex starts by itself.
        updateGoalResponse('complete', { callId: 'call_done' }),
        messageResponse('Goal complete: 1 file.'),
      ],
      extra: { until: 'idle' },
    })
    const t = r.terminal
    expect(t.status).toBe('completed')
    const goals = r.of('goal').map((e) => e.goal)
    expect(goals[0]).toMatchObject({ objective, status: 'active' })
    expect(goals.at(-1)).toMatchObject({ objective, status: 'complete' })
    const turns = r.of('turnStarted').map((e) => e.turnId)
    expect(turns.length).toBeGreaterThanOrEqual(2)
    expect(turns[0]).toBe(t.turnId)
    expect(t.finalMessage).toBe('Goal complete: 1 file.')
    expect(t.cutOff).toEqual([])
    // The continuation's request told the model to go on with the goal.
    expect(JSON.stringify(r.mock.requests[2].body.input)).toContain('goal')
    // 0.150.0's continuation names no rootTurnId: it is the turn's own all the same.
    expect(r.of('passthrough')).toEqual([])
  })

  it('goal: the default until names the active goal cutOff', async () => {
    const objective = 'Count the files in this repository'
    const r = await runRealTurn({
      prompt: 'Set a goal.',
      scenario: [createGoalResponse(objective, { callId: 'call_goal' }), messageResponse('Started.'), hang([])],
    })
    expect(r.terminal.status).toBe('completed')
    expect(r.terminal.finalMessage).toBe('Started.')
    expect(r.terminal.cutOff).toEqual([{ kind: 'goal', objective, status: 'active', reason: 'turnCompleted' }])
  })

  it("goal: until 'idle' bounds the continuations of a goal that never completes (maxContinuations)", async () => {
    const objective = 'Count the files in this repository'
    // The model works on and on and never completes the goal.
    const r = await runRealTurn({
      prompt: 'Set a goal and work on it.',
      scenario: [createGoalResponse(objective, { callId: 'call_goal' }), ...Array.from({ length: 10 }, (_, i) => messageResponse(`Still working (${i}).`))],
      extra: { until: 'idle', maxContinuations: 2 },
    })
    const t = r.terminal
    expect(t.status).toBe('completed')
    expect(r.of('turnStarted').map((e) => e.turnId)).toHaveLength(3)
    expect(r.of('turnCompleted')).toHaveLength(1)
    expect(t.cutOff).toEqual([{ kind: 'goal', objective, status: 'active', reason: 'maxContinuations' }])
    // The user's turn (two requests) and two continuations (one each); a third may have asked
    // while the child was being ended, no more.
    expect(r.mock.requests.length).toBeLessThanOrEqual(5)
  })

  it("plan: a request_user_input question answered by onServerRequest reaches the model verbatim", async () => {
    const answer = { answers: { color: { answers: ['Red (Recommended)'] } } }
    const asked: ServerRequest[] = []
    const r = await runRealTurn({
      prompt: 'Plan the paint job.',
      scenario: [
        requestUserInputResponse([{ id: 'color', header: 'Color', question: 'Which color?', options: ['Red (Recommended)', 'Blue'] }], { callId: 'call_ask' }),
        messageResponse('<proposed_plan>\n1. Paint it red.\n</proposed_plan>'),
      ],
      extra: {
        mode: 'plan',
        onServerRequest: (request) => {
          asked.push(request)
          return answer
        },
      },
    })
    expect(r.terminal.status).toBe('completed')
    expect(asked.map((q) => q.method)).toEqual(['item/tool/requestUserInput'])
    expect((asked[0].params as { questions: Array<{ id: string }> }).questions.map((q) => q.id)).toEqual(['color'])
    expect(r.of('serverRequest').map((e) => e.reply)).toEqual(['app'])
    const output = functionCallOutputs(r.mock.requests[1].body).find((o) => o.call_id === 'call_ask')
    expect(output?.output).toBe(JSON.stringify(answer))
    // The proposed plan became a plan item, streamed as planDelta.
    expect(r.of('planDelta').map((e) => e.delta).join('')).toContain('Paint it red')
    expect(r.of('itemCompleted').some((e) => e.item.type === 'plan')).toBe(true)
  })

  it("ask: under access 'ask' an escalation approved runs, one declined does not", async () => {
    const outside = mkdtempSync(join(tmpdir(), 'rennet-ask-'))
    cleanups.push(() => rmSync(outside, { recursive: true, force: true }))
    const approved = join(outside, 'approved.txt')
    const declined = join(outside, 'declined.txt')
    const escalated = (path: string, callId: string) =>
      execCommandResponse(`touch ${path}`, { callId, args: { sandbox_permissions: 'require_escalated', justification: `May I write ${path}?` } })
    const decisions: Record<string, string> = { [approved]: 'accept', [declined]: 'decline' }
    const asked: ServerRequest[] = []
    const r = await runRealTurn({
      prompt: 'Write two files outside the workspace.',
      scenario: [escalated(approved, 'call_yes'), escalated(declined, 'call_no'), messageResponse('One written.')],
      extra: {
        access: 'ask',
        onServerRequest: (request) => {
          asked.push(request)
          const command = String((request.params as { command?: string }).command ?? '')
          const path = Object.keys(decisions).find((p) => command.includes(p))
          return path ? { decision: decisions[path] } : undefined
        },
      },
    })
    expect(r.terminal.status).toBe('completed')
    expect(asked.map((q) => q.method)).toEqual(['item/commandExecution/requestApproval', 'item/commandExecution/requestApproval'])
    // What docs/agent-loop.md says an app reads ("Reading an approval's command"): the command
    // wrapped in the shell, the model's own in commandActions (as 0.171.0 sends them).
    if (codexUnderTest().version === PINNED_CODEX_VERSION) {
      const params = asked[0].params as { command?: string; commandActions?: Array<{ command: string; type: string }> }
      // The user's shell (bash here), as a login shell running the command.
      expect(params.command).toMatch(/^\S+ -lc '/)
      expect(params.command).toContain(`touch ${approved}'`)
      expect(params.commandActions).toEqual([{ type: 'unknown', command: `touch ${approved}` }])
    }
    expect(r.of('serverRequest').map((e) => e.reply)).toEqual(['app', 'app'])
    expect(existsSync(approved)).toBe(true)
    expect(existsSync(declined)).toBe(false)
    const refused = functionCallOutputs(r.mock.requests[2].body).find((o) => o.call_id === 'call_no')
    expect(String(refused?.output)).toMatch(/rejected/i)
  })

  it("ask: the user's workspace-write settings hold: a /tmp write is refused and asked for, a cwd write is not", async () => {
    // The user's config keeps /tmp and $TMPDIR out of the workspace. Plain Codex refuses the
    // write there ("Read-only file system"); an 'ask' turn must be no wider.
    const canary = join('/tmp', `rennet-ask-canary-${randomUUID()}`)
    cleanups.push(() => rmSync(canary, { force: true }))
    const asked: ServerRequest[] = []
    let insideWritten = false
    const r = await runRealTurn({
      prompt: 'Write a file in /tmp, then one here.',
      codexConfig: 'sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n',
      scenario: [
        execCommandResponse(`touch ${canary}`, { callId: 'call_tmp' }),
        execCommandResponse(`touch ${canary}`, {
          callId: 'call_tmp_escalated',
          args: { sandbox_permissions: 'require_escalated', justification: `May I write ${canary}?` },
        }),
        execCommandResponse('touch inside.txt', { callId: 'call_cwd' }),
        messageResponse('Only the workspace was written.'),
      ],
      extra: {
        access: 'ask',
        onServerRequest: (request) => {
          asked.push(request)
          return { decision: 'decline' }
        },
      },
      inspect: ({ cwd }) => {
        insideWritten = existsSync(join(cwd.path, 'inside.txt'))
      },
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    // The sandbox refused the plain write; only the escalation was asked (and declined).
    const tmpOutput = functionCallOutputs(r.mock.requests[1].body).find((o) => o.call_id === 'call_tmp')
    expect(String(tmpOutput?.output)).toMatch(/Read-only file system/)
    expect(asked.map((q) => [q.method, String((q.params as { command?: string }).command ?? '')])).toEqual([
      ['item/commandExecution/requestApproval', expect.stringContaining(canary)],
    ])
    expect(existsSync(canary)).toBe(false)
    // The write inside the cwd ran without a request.
    expect(insideWritten).toBe(true)
  })

  it('review: runReview of uncommittedChanges in a git cwd with a change; the review is the final message', async () => {
    const review = { findings: [], overall_correctness: 'patch is correct', overall_explanation: 'The change only adds a note.', overall_confidence_score: 0.9 }
    const r = await runRealTurn({
      scenario: [jsonMessageResponse(review)],
      beforeTurn: ({ cwd }) => writeFileSync(join(cwd.path, 'NOTE.md'), 'a change to review\n'),
      // Codex prepares the review (its thread, the diff) before it answers review/start: on a
      // loaded machine that took longer than the harness's 15 s once.
      requestTimeoutMs: 60_000,
      watchdogMs: 90_000,
      runner: (options: RunTurnOptions) => {
        const { prompt: _prompt, ...rest } = options
        return runReview({ ...rest, target: { type: 'uncommittedChanges' } })
      },
    })
    const t = r.terminal
    expect(t.status, JSON.stringify(t.failure)).toBe('completed')
    expect(t.finalMessage).toContain('The change only adds a note.')
    const items = r.of('itemCompleted').map((e) => e.item.type)
    expect(items).toContain('enteredReviewMode')
    expect(items).toContain('exitedReviewMode')
    // The reviewer's raw message was never completed by Codex: closed for the app.
    expect(r.of('itemDropped').length).toBeGreaterThanOrEqual(1)
    // The review's inner turn (whose rootTurnId is the review's turn; 0.150.0's names none) is the run's own.
    expect(r.of('passthrough')).toEqual([])
  })

  it('tty: a tty session left open is named in cutOff, and ends with the run', async () => {
    const r = await runRealTurn({
      prompt: 'Start a shell session.',
      scenario: [execCommandResponse('cat', { callId: 'call_tty', yieldTimeMs: 500, args: { tty: true } }), messageResponse('Left it running.')],
    })
    expect(r.terminal.status).toBe('completed')
    expect(r.terminal.finalMessage).toBe('Left it running.')
    expect(r.terminal.cutOff).toEqual([expect.objectContaining({ kind: 'backgroundTerminal', itemId: 'call_tty', command: expect.stringContaining('cat') })])
    expect(r.of('itemDropped').map((e) => e.itemId)).toContain('call_tty')
  })
})
