// The agent loop through the addon against the test kit's fake: sub-agents (nested `agent`
// events, never passthrough; `terminal.agents`, `totalUsage`, `cutOff`), `until: 'idle'` waiting
// for agents and goal continuations, abort reaching every live turn, `onServerRequest` (the
// app's answer, one that does not fit, a handler that fails, a timeout, an abort while it
// waits), `access: 'ask'`, plan mode, a review, and the `goal`, `planDelta` and `itemDropped`
// events. `cleanupFakes` fails a test that leaves any process of its fake running.
import { afterEach, describe, expect, it } from 'vitest'

import { runReview, runTurn, setLogger } from '../../index.js'
import type { HarnessEvent, LogRecord, ServerRequest, TerminalEvent } from '../../index.js'
import type { FakeCodexScript, FakeStep } from '../../testing/index.js'
import {
  PROMPT,
  SUB_THREAD_ID,
  SUB_TURN_ID,
  THREAD_ID,
  TURN_ID,
  assertOneTerminalLast,
  cleanupFakes,
  collect,
  fakeRun,
  fakeTurn,
  tempDir,
  writeFake,
  within,
} from '../support/fake.js'
import type { Json } from '../support/fake.js'
import { eventually, NEVER_MS } from '../support/procs.js'

afterEach(cleanupFakes)

const SECOND_SUB_THREAD_ID = '01a22f3f-eeee-7000-8000-000000000005'

/** A script with the scenarios' ids and without the frames that only become `native` events. */
const script = (steps: FakeStep[], more: FakeCodexScript = {}): FakeCodexScript => ({
  threadId: THREAD_ID,
  turnId: TURN_ID,
  omit: ['threadStarted', 'userMessage'],
  steps,
  ...more,
})

const msg = (text: string, id?: string): FakeStep => ({ type: 'message', text, ...(id ? { id } : {}) })
const usage = (input: number, output: number): FakeStep => ({ type: 'usage', input, output })
const usageOf = (input: number, output: number) => ({ input, cacheRead: 0, output, reasoning: 0, total: input + output })

type AgentEvent = Extract<HarnessEvent, { type: 'agent' }>
const agentEvents = (events: HarnessEvent[]) => events.filter((e): e is AgentEvent => e.type === 'agent')
const inner = (events: HarnessEvent[]) => agentEvents(events).map((e) => e.event)
const ofType = <T extends HarnessEvent['type']>(events: HarnessEvent[], type: T) =>
  events.filter((e): e is Extract<HarnessEvent, { type: T }> => e.type === type)

/** The sub-agent's turn of most scenarios: a message and its usage. */
const CHILD_STEPS: FakeStep[] = [msg('child says hi', 'msg_child'), usage(40, 10)]

describe('sub-agents', () => {
  it('nests the spawned thread as agent events (its early frames too), counts it in agents and totalUsage', async () => {
    const { events, terminal } = await fakeRun(
      script([usage(100, 20), { type: 'agent', threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID, early: true, steps: CHILD_STEPS }, msg('parent done')]),
    )
    assertOneTerminalLast(events)
    expect(ofType(events, 'passthrough')).toEqual([])
    const agent = { threadId: SUB_THREAD_ID, nickname: null, path: null, depth: 1 }
    for (const e of agentEvents(events)) expect(e.agent).toEqual(agent)
    const nested = inner(events)
    // Its status and the warning came before the spawn named the thread: held, then released to it.
    expect(nested.slice(0, 2).map((e) => (e.type === 'native' ? e.method : e.type))).toEqual(['thread/status/changed', 'warning'])
    expect(nested).toContainEqual({ type: 'turnStarted', threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID })
    expect(nested.filter((e) => e.type === 'messageDelta')).toEqual([{ type: 'messageDelta', itemId: 'msg_child', delta: 'child says hi' }])
    expect(nested).toContainEqual(expect.objectContaining({ type: 'usage', turn: usageOf(40, 10) }))
    expect(nested).toContainEqual(expect.objectContaining({ type: 'turnCompleted', threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID, status: 'completed', finalMessage: 'child says hi' }))
    // The parent's own items: the spawn and the wait, not the child's.
    const parentItems = ofType(events, 'itemCompleted').map((e) => e.item)
    expect(parentItems.filter((i) => i.type === 'collabAgentToolCall').map((i) => (i as Json).tool)).toEqual(['spawnAgent', 'wait'])

    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe('parent done')
    expect(terminal.usage).toEqual(usageOf(100, 20))
    expect(terminal.agents).toEqual([{ threadId: SUB_THREAD_ID, nickname: null, status: 'completed', usage: usageOf(40, 10) }])
    expect(terminal.totalUsage).toEqual(usageOf(140, 30))
    expect(terminal.cutOff).toEqual([])
  })

  it.each([
    ['activity', { path: '/root/helper' }],
    ['rootTurnId', { path: null }],
  ] as const)('finds an agent through %s', async (spawn, expected) => {
    const { events, terminal } = await fakeRun(
      script([{ type: 'agent', spawn, threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID, steps: CHILD_STEPS }, msg('parent done')]),
    )
    expect(ofType(events, 'passthrough')).toEqual([])
    expect(agentEvents(events).length).toBeGreaterThan(0)
    expect(agentEvents(events)[0].agent).toEqual({ threadId: SUB_THREAD_ID, nickname: null, path: expected.path, depth: 1 })
    expect(terminal.agents).toEqual([{ threadId: SUB_THREAD_ID, nickname: null, status: 'completed', usage: usageOf(40, 10) }])
  })

  it("an agent's own agent is two deep", async () => {
    const grandchild: FakeStep = { type: 'agent', threadId: SECOND_SUB_THREAD_ID, steps: [msg('grandchild', 'msg_gc'), usage(5, 5)] }
    const { events, terminal } = await fakeRun(script([{ type: 'agent', threadId: SUB_THREAD_ID, steps: [grandchild, ...CHILD_STEPS] }, msg('parent done')]))
    expect(ofType(events, 'passthrough')).toEqual([])
    const deep = agentEvents(events).filter((e) => e.agent.threadId === SECOND_SUB_THREAD_ID)
    expect(deep.length).toBeGreaterThan(0)
    expect(deep[0].agent.depth).toBe(2)
    expect(terminal.agents.map((a) => [a.threadId, a.status])).toEqual([
      [SUB_THREAD_ID, 'completed'],
      [SECOND_SUB_THREAD_ID, 'completed'],
    ])
    expect(terminal.totalUsage).toEqual(usageOf(45, 15))
  })

  it('names an agent still running at the end cutOff (until: turnCompleted, the default)', async () => {
    const { events, terminal } = await fakeRun(
      script([{ type: 'agent', threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID, detach: true, steps: [{ type: 'message', id: 'msg_child', text: 'still ', open: true }, { type: 'hang' }] }, msg('parent done')]),
    )
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe('parent done')
    expect(terminal.agents).toEqual([{ threadId: SUB_THREAD_ID, nickname: null, status: 'cutOff', usage: null }])
    expect(terminal.cutOff).toEqual([{ kind: 'agent', threadId: SUB_THREAD_ID, nickname: null, reason: 'turnCompleted' }])
    // Its open message is closed for the app.
    expect(inner(events)).toContainEqual({ type: 'itemDropped', itemId: 'msg_child' })
  })

  it("until: 'idle' waits for an agent that outlives the parent's turn", async () => {
    const { events, terminal } = await fakeRun(
      script([usage(10, 10), { type: 'agent', threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID, detach: true, steps: [{ type: 'delay', ms: 300 }, ...CHILD_STEPS] }, msg('parent done')]),
      { until: 'idle' },
    )
    assertOneTerminalLast(events)
    const childDone = events.findIndex((e) => e.type === 'agent' && e.event.type === 'turnCompleted')
    expect(childDone).toBeGreaterThan(0)
    expect(terminal.status).toBe('completed')
    expect(terminal.turnId).toBe(TURN_ID)
    expect(terminal.finalMessage).toBe('parent done')
    expect(terminal.agents).toEqual([{ threadId: SUB_THREAD_ID, nickname: null, status: 'completed', usage: usageOf(40, 10) }])
    expect(terminal.totalUsage).toEqual(usageOf(50, 20))
    expect(terminal.cutOff).toEqual([])
  })

  it("abort interrupts the agent's turn as well as the parent's", async () => {
    const run = fakeTurn(
      script([{ type: 'agent', threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID, detach: true, steps: [{ type: 'hang' }] }, { type: 'hang' }]),
      // The fake honours every interrupt: the grace must not be what ends the turns.
      { until: 'idle', interruptGraceMs: NEVER_MS },
    )
    const events = await within(
      collect(run.turn, (e) => {
        if (e.type === 'agent' && e.event.type === 'turnStarted') run.turn.abort('enough')
      }),
      30_000,
      'the aborted turn',
    )
    const terminal = assertOneTerminalLast(events)
    expect(terminal.status).toBe('cancelled')
    expect(terminal.cancellation).toBe('interrupted')
    expect(terminal.abortReason).toBe('enough')
    const interrupts = run.log.requests('turn/interrupt').map((m) => m.params)
    expect(interrupts).toEqual(
      expect.arrayContaining([
        { threadId: THREAD_ID, turnId: TURN_ID },
        { threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID },
      ]),
    )
    expect(terminal.agents).toEqual([{ threadId: SUB_THREAD_ID, nickname: null, status: 'interrupted', usage: null }])
    expect(terminal.cutOff).toEqual([])
  })
})

describe('goals', () => {
  const GOAL = 'Make the tests pass'

  it("until: 'idle' follows the goal's continuation turns; the terminal's message is the last one's", async () => {
    const { events, terminal, log } = await fakeRun(
      script([{ type: 'goal', objective: GOAL }, usage(10, 5), msg('working on it')], {
        continuations: [
          [usage(20, 5), msg('still working')],
          [usage(30, 5), msg('done'), { type: 'goal', status: 'complete' }],
        ],
      }),
      { until: 'idle' },
    )
    assertOneTerminalLast(events)
    const goals = ofType(events, 'goal').map((e) => e.goal)
    expect(goals.map((g) => [g.objective, g.status])).toEqual([
      [GOAL, 'active'],
      [GOAL, 'complete'],
    ])
    // Each continuation is a turn of the thread the app sees start.
    expect(ofType(events, 'turnStarted').map((e) => e.turnId)).toEqual([TURN_ID, `${TURN_ID}:goal-1`, `${TURN_ID}:goal-2`])
    expect(log.events('continuation')).toHaveLength(2)
    expect(terminal.status).toBe('completed')
    expect(terminal.turnId).toBe(TURN_ID)
    expect(terminal.finalMessage).toBe('done')
    expect(terminal.usage).toEqual(usageOf(60, 15))
    expect(terminal.cutOff).toEqual([])
  })

  it('names the active goal cutOff when the run ends with the turn (the default)', async () => {
    const { events, terminal } = await fakeRun(script([{ type: 'goal', objective: GOAL }, msg('working on it')], { continuations: [[msg('never seen')]] }))
    expect(ofType(events, 'goal')).toHaveLength(1)
    expect(terminal.finalMessage).toBe('working on it')
    expect(terminal.cutOff).toEqual([{ kind: 'goal', objective: GOAL, status: 'active', reason: 'turnCompleted' }])
    expect(events.some((e) => e.type === 'messageDelta' && e.delta === 'never seen')).toBe(false)
  })

  it("until: 'idle' gives up on a continuation that does not come, and names the goal cutOff", async () => {
    // Codex would start one ~20 ms after the turn; the run waits a few seconds for it, no more.
    const { events, terminal, log } = await fakeRun(script([{ type: 'goal', objective: GOAL }, msg('working on it')]), { until: 'idle' })
    assertOneTerminalLast(events)
    expect(log.events('continuation')).toEqual([])
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe('working on it')
    expect(terminal.cutOff).toEqual([{ kind: 'goal', objective: GOAL, status: 'active', reason: 'noContinuation' }])
  })

  it('a goal that is no longer active ends the run with the turn', async () => {
    const { terminal } = await fakeRun(script([{ type: 'goal', objective: GOAL }, msg('done'), { type: 'goal', status: 'complete' }]), { until: 'idle' })
    expect(terminal.status).toBe('completed')
    expect(terminal.cutOff).toEqual([])
  })
})

/** The user's turn's own `turnCompleted` (not a sub-agent's, which is nested in an `agent` event). */
const ownCompleted = (events: HarnessEvent[]) => events.flatMap((e, i) => (e.type === 'turnCompleted' ? [i] : []))
const childCompletedAt = (events: HarnessEvent[]) => events.findIndex((e) => e.type === 'agent' && e.event.type === 'turnCompleted')

describe("until: 'idle' at its edges", () => {
  const GOAL = 'Make the tests pass'
  /** A sub-agent that outlives the parent's turn and never ends by itself. */
  const hangingChild: FakeStep = {
    type: 'agent',
    threadId: SUB_THREAD_ID,
    turnId: SUB_TURN_ID,
    detach: true,
    steps: [{ type: 'message', id: 'msg_child', text: 'working ', open: true }, { type: 'hang' }],
  }

  it("turnCompleted goes out when Codex completes the user's turn; an abort in the wait is cancelled, with its reason, naming what it stopped", async () => {
    const run = fakeTurn(script([usage(10, 10), hangingChild, msg('parent done')]), { until: 'idle', interruptGraceMs: NEVER_MS })
    const events = await within(
      collect(run.turn, (e) => {
        // The app re-enables its input here; the sub-agent still works.
        if (e.type === 'turnCompleted') run.turn.abort('enough')
      }),
      30_000,
      'the turn aborted in its idle wait',
    )
    const terminal = assertOneTerminalLast(events)
    const own = ownCompleted(events)
    expect(own).toHaveLength(1)
    expect(own[0]).toBeLessThan(childCompletedAt(events))
    expect(events[own[0]]).toMatchObject({ type: 'turnCompleted', status: 'completed', turnId: TURN_ID, finalMessage: 'parent done', usage: usageOf(10, 10), agents: [], cutOff: [] })
    expect(events[own[0]]).not.toHaveProperty('abortReason')

    expect(terminal.status).toBe('cancelled')
    expect(terminal.cancellation).toBe('interrupted')
    expect(terminal.abortReason).toBe('enough')
    expect(terminal.agents).toEqual([{ threadId: SUB_THREAD_ID, nickname: null, status: 'interrupted', usage: null }])
    expect(terminal.cutOff).toEqual([])
    // Only the sub-agent's turn was running: only it was interrupted.
    expect(run.log.requests('turn/interrupt').map((m) => m.params)).toEqual([{ threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID }])
  })

  it('an abort in the wait with nothing running (a goal continuation due) ends cancelled and killed, naming the goal', async () => {
    // No continuation comes (the script has none): the run would wait seconds for it.
    const run = fakeTurn(script([{ type: 'goal', objective: GOAL }, msg('working on it')]), { until: 'idle' })
    const events = await within(
      collect(run.turn, (e) => {
        if (e.type === 'turnCompleted') run.turn.abort('not now')
      }),
      30_000,
      'the turn aborted in its idle wait',
    )
    const terminal = assertOneTerminalLast(events)
    expect(ownCompleted(events)).toHaveLength(1)
    expect(terminal.status).toBe('cancelled')
    expect(terminal.cancellation).toBe('killed')
    expect(terminal.abortReason).toBe('not now')
    expect(terminal.cutOff).toEqual([{ kind: 'goal', objective: GOAL, status: 'active', reason: 'abort' }])
    expect(run.log.requests('turn/interrupt')).toEqual([])
  })

  it('maxContinuations bounds the continuation turns of a goal that never completes; cutOff names the goal and why', async () => {
    const working = (n: number): FakeStep[] => [usage(10 * n, 1), msg(`still working ${n}`)]
    const { events, terminal } = await fakeRun(
      script([{ type: 'goal', objective: GOAL }, msg('working on it')], { continuations: [1, 2, 3, 4, 5, 6].map(working) }),
      { until: 'idle', maxContinuations: 2 },
    )
    assertOneTerminalLast(events)
    expect(ofType(events, 'turnStarted').map((e) => e.turnId)).toEqual([TURN_ID, `${TURN_ID}:goal-1`, `${TURN_ID}:goal-2`])
    expect(ownCompleted(events)).toHaveLength(1)
    expect(terminal.status).toBe('completed')
    expect(terminal.turnId).toBe(TURN_ID)
    expect(terminal.cutOff).toEqual([{ kind: 'goal', objective: GOAL, status: 'active', reason: 'maxContinuations' }])
  })

  it('maxContinuations: 0 waits for no continuation at all', async () => {
    const { events, terminal, log } = await fakeRun(script([{ type: 'goal', objective: GOAL }, msg('working on it')], { continuations: [[msg('never seen')]] }), {
      until: 'idle',
      maxContinuations: 0,
    })
    expect(ofType(events, 'turnStarted').map((e) => e.turnId)).toEqual([TURN_ID])
    expect(terminal.status).toBe('completed')
    expect(terminal.cutOff).toEqual([{ kind: 'goal', objective: GOAL, status: 'active', reason: 'maxContinuations' }])
    expect(log.requests('turn/interrupt')).toEqual([])
  })

  it('idleWaitMs bounds the wait from the turn\'s completion: what still runs is interrupted, the run ends completed, cutOff says why', async () => {
    const { events, terminal, log } = await fakeRun(script([usage(10, 10), hangingChild, msg('parent done')]), { until: 'idle', idleWaitMs: 300 })
    assertOneTerminalLast(events)
    expect(ownCompleted(events)).toHaveLength(1)
    expect(ownCompleted(events)[0]).toBeLessThan(childCompletedAt(events))
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe('parent done')
    expect(terminal.agents).toEqual([{ threadId: SUB_THREAD_ID, nickname: null, status: 'interrupted', usage: null }])
    expect(terminal.cutOff).toEqual([{ kind: 'agent', threadId: SUB_THREAD_ID, nickname: null, reason: 'idleWaitMs' }])
    expect(log.requests('turn/interrupt').map((m) => m.params)).toEqual([{ threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID }])
  })

  it('the bounds are options of until \'idle\' only, and a value that cannot be used is a TypeError naming it', () => {
    const cwd = tempDir()
    const { codexPath, log } = writeFake('minimal', {}, cwd)
    const start = (extra: object) => () => runTurn({ prompt: PROMPT, cwd, codexPath, ...extra })
    expect(start({ maxContinuations: 3 })).toThrow(/^options\.maxContinuations .*until: 'idle'/)
    expect(start({ until: 'turnCompleted', idleWaitMs: 1000 })).toThrow(/^options\.idleWaitMs .*until: 'idle'/)
    for (const value of [Number.NaN, -1, 1.5, '10', () => 10, null]) {
      expect(start({ until: 'idle', idleWaitMs: value }), String(value)).toThrow(/^options\.idleWaitMs/)
      expect(start({ until: 'idle', maxContinuations: value }), String(value)).toThrow(/^options\.maxContinuations/)
    }
    // The range of the other milliseconds (a timer's), and of a count.
    expect(start({ until: 'idle', idleWaitMs: 0 })).toThrow(/^options\.idleWaitMs/)
    expect(start({ until: 'idle', idleWaitMs: 2 ** 31 })).toThrow(/^options\.idleWaitMs/)
    expect(start({ until: 'idle', maxContinuations: 2 ** 32 })).toThrow(/^options\.maxContinuations/)
    for (const error of [start({ maxContinuations: 3 }), start({ until: 'idle', idleWaitMs: -1 })]) expect(error).toThrow(TypeError)
    expect(log.runs()).toEqual([])
  })
})

describe('sub-agents after an abort', () => {
  it('the package interrupts each running sub-agent turn and waits for it: interrupted, every time (until: turnCompleted)', async () => {
    for (let i = 0; i < 8; i++) {
      const run = fakeTurn(script([{ type: 'agent', threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID, detach: true, steps: [{ type: 'hang' }] }, { type: 'hang' }]), {
        interruptGraceMs: NEVER_MS,
      })
      const events = await within(
        collect(run.turn, (e) => {
          if (e.type === 'agent' && e.event.type === 'turnStarted') run.turn.abort('stop')
        }),
        30_000,
        `aborted run ${i + 1}`,
      )
      const terminal = assertOneTerminalLast(events)
      expect([terminal.status, terminal.cancellation, terminal.abortReason]).toEqual(['cancelled', 'interrupted', 'stop'])
      expect(terminal.agents.map((a) => a.status), `run ${i + 1}`).toEqual(['interrupted'])
      expect(terminal.cutOff).toEqual([])
      // The user's turn ended first: its turnCompleted, once, before the agent's end and the terminal.
      expect(ownCompleted(events)).toHaveLength(1)
      await cleanupFakes()
    }
  })
})

describe('onServerRequest', () => {
  const APPROVAL: FakeStep = { type: 'approval', id: 'call_esc', command: 'touch /outside/x', justification: 'Write outside the workspace?', output: 'ok\n' }

  it("answers an approval under access 'ask': accepted runs the command, declined does not", async () => {
    const seen: ServerRequest[] = []
    const decisions = ['accept', 'decline']
    const steps: FakeStep[] = [APPROVAL, { ...APPROVAL, id: 'call_esc2' }, msg('after')]
    const { events, terminal, log } = await fakeRun(script(steps), {
      access: 'ask',
      onServerRequest: (request) => {
        seen.push(request)
        return { decision: decisions[seen.length - 1] }
      },
    })
    expect(seen.map((r) => [r.method, r.agent, (r.params as Json).command])).toEqual([
      ['item/commandExecution/requestApproval', null, 'touch /outside/x'],
      ['item/commandExecution/requestApproval', null, 'touch /outside/x'],
    ])
    expect(ofType(events, 'serverRequest').map((e) => e.reply)).toEqual(['app', 'app'])
    expect(log.replies().map((r) => r.result)).toEqual([{ decision: 'accept' }, { decision: 'decline' }])
    expect(log.events('approval').map((e) => [e.asked, e.decision])).toEqual([
      [true, 'accept'],
      [true, 'decline'],
    ])
    const commands = ofType(events, 'itemCompleted').map((e) => e.item).filter((i) => i.type === 'commandExecution')
    expect(commands.map((i) => [i.id, (i as Json).status])).toEqual([
      ['call_esc', 'completed'],
      ['call_esc2', 'declined'],
    ])
    // The turn asked for a workspace-write sandbox and on-request approvals.
    const turnStart = log.request('turn/start').params
    expect(turnStart.approvalPolicy).toBe('on-request')
    expect(turnStart.sandboxPolicy.type).toBe('workspaceWrite')
    expect(terminal.finalMessage).toBe('after')
  })

  it("access 'ask' sends the user's effective workspace-write settings from config/read, never a bare default", async () => {
    // As codex-cli 0.171.0 answers config/read for a user with these settings (roots absolute).
    const userSettings = { writable_roots: ['/opt/cache'], network_access: true, exclude_tmpdir_env_var: true, exclude_slash_tmp: true }
    const { terminal, log } = await fakeRun(
      script([msg('done')], { calls: { 'config/read': { result: { config: { sandbox_mode: 'workspace-write', sandbox_workspace_write: userSettings }, origins: {} } } } }),
      { access: 'ask', onServerRequest: () => undefined },
    )
    expect(terminal.status).toBe('completed')
    const cwd = log.request('turn/start').params.cwd
    expect(log.request('config/read').params).toEqual({ cwd })
    // The thread itself is still started read-only; the turn carries the user's settings.
    expect(log.request('thread/start').params).toMatchObject({ sandbox: 'read-only', approvalPolicy: 'never' })
    expect(log.request('turn/start').params).toMatchObject({
      approvalPolicy: 'on-request',
      sandboxPolicy: { type: 'workspaceWrite', writableRoots: ['/opt/cache'], networkAccess: true, excludeTmpdirEnvVar: true, excludeSlashTmp: true },
    })
  })

  it("access 'ask' with no sandbox_workspace_write table sends Codex's defaults, each named", async () => {
    const { terminal, log } = await fakeRun(
      script([msg('done')], { calls: { 'config/read': { result: { config: { sandbox_workspace_write: null }, origins: {} } } } }),
      { access: 'ask', onServerRequest: () => undefined },
    )
    expect(terminal.status).toBe('completed')
    expect(log.request('turn/start').params.sandboxPolicy).toEqual({ type: 'workspaceWrite', writableRoots: [], networkAccess: false, excludeTmpdirEnvVar: false, excludeSlashTmp: false })
  })

  it("access 'ask' fails closed before the thread when config/read fails or answers an unexpected shape", async () => {
    const cases: Array<[string, FakeCodexScript['calls'], string]> = [
      ['an error', { 'config/read': { error: { code: -32603, message: 'invalid configuration: bad sandbox' } } }, 'REQUEST_FAILED'],
      ['a relative root', { 'config/read': { result: { config: { sandbox_workspace_write: { writable_roots: ['rel'] } }, origins: {} } } }, 'UNEXPECTED_RESPONSE'],
      ['a flag that is not a boolean', { 'config/read': { result: { config: { sandbox_workspace_write: { exclude_slash_tmp: 'yes' } }, origins: {} } } }, 'UNEXPECTED_RESPONSE'],
    ]
    for (const [what, calls, code] of cases) {
      const { events, terminal, log } = await fakeRun(script([msg('never')], { calls }), { access: 'ask', onServerRequest: () => undefined })
      assertOneTerminalLast(events)
      expect(terminal.status, what).toBe('failed')
      expect(terminal.failure, what).toMatchObject({ source: 'jsonrpc', code, detail: expect.objectContaining({ method: 'config/read' }) })
      if (code === 'REQUEST_FAILED') expect(terminal.failure?.message).toBe('invalid configuration: bad sandbox')
      expect(log.methods(), what).not.toContain('thread/start')
      expect(log.methods(), what).not.toContain('turn/start')
    }
  })

  it("tells which agent asks", async () => {
    const seen: ServerRequest[] = []
    const { terminal } = await fakeRun(script([{ type: 'agent', threadId: SUB_THREAD_ID, steps: [APPROVAL, msg('child done', 'msg_child')] }, msg('parent done')]), {
      access: 'ask',
      onServerRequest: (request) => {
        seen.push(request)
        return { decision: 'accept' }
      },
    })
    expect(seen.map((r) => r.agent)).toEqual([{ threadId: SUB_THREAD_ID, nickname: null, path: null, depth: 1 }])
    expect(terminal.agents[0].status).toBe('completed')
  })

  it("plan mode: the app's answer to a question reaches Codex verbatim", async () => {
    const answer = { answers: { color: { answers: ['Red (Recommended)', 'and a note: "keep it" ✓'] } } }
    const seen: ServerRequest[] = []
    const { events, terminal, log } = await fakeRun(
      script([
        { type: 'question', questions: [{ id: 'color', header: 'Color', question: 'Pick a color?', options: [{ label: 'Red (Recommended)', description: 'warm' }, 'Blue'] }] },
        { type: 'plan', id: 'plan_1', text: ['1. Paint it ', 'red'] },
        msg('planned'),
      ]),
      {
        mode: 'plan',
        onServerRequest: (request) => {
          seen.push(request)
          return answer
        },
      },
    )
    expect(seen).toHaveLength(1)
    expect(seen[0].method).toBe('item/tool/requestUserInput')
    expect((seen[0].params as Json).questions[0]).toMatchObject({ id: 'color', question: 'Pick a color?', options: [{ label: 'Red (Recommended)' }, { label: 'Blue' }] })
    expect(log.events('question-answered').map((e) => e.reply.result)).toEqual([answer])
    expect(ofType(events, 'serverRequest').map((e) => e.reply)).toEqual(['app'])
    expect(ofType(events, 'planDelta')).toEqual([
      { type: 'planDelta', itemId: 'plan_1', delta: '1. Paint it ' },
      { type: 'planDelta', itemId: 'plan_1', delta: 'red' },
    ])
    // Plan mode asked for the experimental surface; that is the only time the package does.
    expect(log.request('initialize').params.capabilities?.experimentalApi).toBe(true)
    expect(log.request('turn/start').params.collaborationMode).toEqual({ mode: 'plan', settings: { model: 'gpt-fake', reasoning_effort: null, developer_instructions: null } })
    expect(terminal.finalMessage).toBe('planned')
  })

  it("default mode: no experimental surface, no collaboration mode, and Codex asks no question", async () => {
    const { log } = await fakeRun(script([{ type: 'question', questions: [{ id: 'color', question: 'Pick a color?' }] }, msg('done')]), {
      onServerRequest: () => undefined,
    })
    expect(log.request('initialize').params.capabilities?.experimentalApi ?? false).toBe(false)
    expect(log.request('turn/start').params).not.toHaveProperty('collaborationMode')
    expect(log.events('question-unavailable')).toHaveLength(1)
  })

  it("mode 'default' is sent as such (it switches back a thread left in plan mode)", async () => {
    const { log } = await fakeRun(script([msg('done')]), { mode: 'default' })
    expect(log.request('initialize').params.capabilities?.experimentalApi).toBe(true)
    expect(log.request('turn/start').params.collaborationMode.mode).toBe('default')
  })

  /** Why the run's one approval was declined as unfit: its reply on the wire and its event say so. */
  const declinedAsUnfit = ({ events, log }: { events: HarnessEvent[]; log: { replies(): Json[] } }): string => {
    expect(log.replies().map((r) => r.result)).toEqual([{ decision: 'decline' }])
    const [asked] = ofType(events, 'serverRequest')
    expect(asked.reply).toBe('unfit')
    return asked.unfit ?? ''
  }

  it("an answer that does not fit its response type is not sent: the method's refusal goes, the serverRequest event says why", async () => {
    const run = await fakeRun(script([APPROVAL, msg('after')]), { access: 'ask', onServerRequest: () => ({ decision: 'maybe later' }) as never })
    const why = declinedAsUnfit(run)
    expect(why).toContain('item/commandExecution/requestApproval')
    expect(why).toContain('does not fit')
    // Said on the event the app reads, not on a line beside it.
    expect(ofType(run.events, 'diagnostic')).toEqual([])
  })

  it("under access 'full' too: a misspelt approval is declined, never accepted, and logged at warn", async () => {
    const records: LogRecord[] = []
    // Info, so that the turn's span (info) is on and its record names the turn.
    setLogger((r) => records.push(r), { filter: 'rennet_codex=info' })
    try {
      // Full access does not make Codex ask; a request it sends anyway still gets the app's word.
      const approval: FakeStep = {
        type: 'serverRequest',
        method: 'item/commandExecution/requestApproval',
        params: { itemId: 'call_full', command: 'make release', availableDecisions: ['accept', 'decline'] },
      }
      const run = await fakeRun(script([approval, msg('after')]), { onServerRequest: () => ({ decison: 'accept' }) as never })
      // The fixed policy would have accepted; the app meant something else, so it is refused.
      expect(declinedAsUnfit(run)).toContain("must have required property 'decision'")
      expect(run.terminal.status).toBe('completed')
      expect(await eventually(() => records.some((r) => r.level === 'warn' && r.message.includes('does not fit')), 10_000)).toBe(true)
      const warned = records.find((r) => r.level === 'warn' && r.message.includes('does not fit'))
      expect(warned).toMatchObject({ target: 'rennet_codex::turn', fields: { method: 'item/commandExecution/requestApproval' } })
      expect(warned?.fields.turnKey).toMatch(/^t\d+$/)
    } finally {
      setLogger(null)
    }
  })

  it.each([
    ['throws', () => {
      throw new Error('handler bug')
    }],
    ['returns undefined', () => undefined],
    ['rejects', () => Promise.reject(new Error('async handler bug'))],
  ])('a handler that %s leaves the answer to the fixed policy', async (_, handler) => {
    const { events, log, terminal } = await fakeRun(script([APPROVAL, msg('after')]), { access: 'ask', onServerRequest: handler as never })
    expect(log.replies().map((r) => r.result)).toEqual([{ decision: 'decline' }])
    expect(ofType(events, 'serverRequest').map((e) => e.reply)).toEqual(['declined'])
    expect(terminal.status).toBe('completed')
  })

  it('an answer not given within serverRequestTimeoutMs gets the fixed policy reply (timedOut); a late one is dropped', async () => {
    let late: ((reply: object) => void) | null = null
    const { events, log, terminal } = await fakeRun(script([APPROVAL, msg('after')]), {
      access: 'ask',
      serverRequestTimeoutMs: 200,
      onServerRequest: () => new Promise((resolve) => (late = resolve as (reply: object) => void)),
    })
    ;(late as ((reply: object) => void) | null)?.({ decision: 'accept' })
    expect(ofType(events, 'serverRequest').map((e) => e.reply)).toEqual(['timedOut'])
    expect(log.replies().map((r) => r.result)).toEqual([{ decision: 'decline' }])
    expect(terminal.status).toBe('completed')
  })

  it('a request pending when the turn is aborted is answered cancelled before the interrupt', async () => {
    const run = fakeTurn(script([APPROVAL, msg('after')]), {
      access: 'ask',
      onServerRequest: () => {
        setImmediate(() => run.turn.abort('user left'))
        return new Promise(() => {})
      },
    })
    const events = await within(collect(run.turn), 30_000, 'the aborted turn')
    const terminal = assertOneTerminalLast(events)
    expect(terminal.status).toBe('cancelled')
    expect(ofType(events, 'serverRequest').map((e) => e.reply)).toEqual(['cancelled'])
    const received = run.log.received()
    const reply = received.findIndex((m) => !('method' in m) && m.result?.decision === 'cancel')
    const interrupt = received.findIndex((m) => m.method === 'turn/interrupt')
    expect(reply).toBeGreaterThanOrEqual(0)
    // The interrupt went only if the turn was still running; if it did, it came after the answer.
    if (interrupt >= 0) expect(reply).toBeLessThan(interrupt)
  })

  it("access 'ask' without a handler, and readOnly with one, are TypeErrors before anything starts", () => {
    const cwd = tempDir()
    const { codexPath, log } = writeFake('minimal', {}, cwd)
    expect(() => runTurn({ prompt: PROMPT, cwd, codexPath, access: 'ask' })).toThrow(TypeError)
    expect(() => runTurn({ prompt: PROMPT, cwd, codexPath, access: 'readOnly', onServerRequest: () => undefined })).toThrow(TypeError)
    expect(log.runs()).toEqual([])
  })
})

describe('runReview', () => {
  it("reviews through review/start: the formatted review is the final message, the reviewer's raw message is dropped", async () => {
    const cwd = tempDir()
    const review = 'The change is correct.\n\n- [P3] Nit — README.md:1'
    const { codexPath, log } = writeFake(script([], { review: { review } }), {}, cwd)
    const turn = runReview({ cwd, codexPath, target: { type: 'uncommittedChanges' } })
    const events = await within(collect(turn), 30_000, 'the review')
    const terminal = assertOneTerminalLast(events) as TerminalEvent
    expect(log.request('review/start').params).toEqual({ threadId: THREAD_ID, target: { type: 'uncommittedChanges' }, delivery: 'inline' })
    expect(log.requests('turn/start')).toEqual([])
    expect(terminal.status).toBe('completed')
    expect(terminal.turnId).toBe(TURN_ID)
    expect(terminal.finalMessage).toBe(review)
    const items = ofType(events, 'itemCompleted').map((e) => e.item)
    expect(items.filter((i) => i.type === 'enteredReviewMode' || i.type === 'exitedReviewMode').map((i) => [i.type, (i as Json).review])).toEqual([
      ['enteredReviewMode', 'current changes'],
      ['exitedReviewMode', review],
    ])
    // The raw JSON message was started and never completed: closed for the app.
    expect(ofType(events, 'itemDropped')).toHaveLength(1)
    expect(ofType(events, 'turnStarted').map((e) => e.turnId)).toContain(TURN_ID)
    expect(ofType(events, 'passthrough')).toEqual([])
  })
})

describe('items Codex leaves open', () => {
  it('a terminal session left running is named cutOff', async () => {
    const { events, terminal } = await fakeRun(script([{ type: 'terminal', id: 'call_tty', processId: '4242', command: 'python3 -i', output: '>>> ', stdin: ['print(1)\n'] }, msg('left it open')]))
    expect(terminal.cutOff).toEqual([{ kind: 'backgroundTerminal', itemId: 'call_tty', processId: '4242', command: 'python3 -i' }])
    expect(ofType(events, 'commandOutput').map((e) => e.delta)).toEqual(['>>> '])
    expect(ofType(events, 'itemDropped')).toEqual([{ type: 'itemDropped', itemId: 'call_tty' }])
  })

  it('an agent message started and never completed is closed with itemDropped before the terminal', async () => {
    const { events, terminal } = await fakeRun(script([{ type: 'message', id: 'msg_dropped', text: 'half', open: true }, msg('final', 'msg_final')]))
    const dropped = events.findIndex((e) => e.type === 'itemDropped')
    expect(events[dropped]).toEqual({ type: 'itemDropped', itemId: 'msg_dropped' })
    expect(dropped).toBeLessThan(events.length - 1)
    expect(terminal.finalMessage).toBe('final')
  })
})
