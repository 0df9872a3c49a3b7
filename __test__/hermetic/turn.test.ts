// Turn flow through the addon against the fake app-server: the happy path and its wire, routing
// of early/missing turn/started, structured output, retries, turn failure, foreign frames, bursts.
import { afterEach, describe, expect, it } from 'vitest'
import type { HarnessEvent } from '../../index.js'
import {
  ANSWER_TYPES,
  OTHER_THREAD_ID,
  OTHER_TURN_ID,
  PROMPT,
  SUB_THREAD_ID,
  THREAD_ID,
  TURN_ID,
  assertOneTerminalLast,
  cleanupFakes,
  completedThen,
  fakeRun,
  fakeTurn,
  nativeOf,
  scenarios,
  terminalOf,
  types,
  usageOf,
  within,
} from '../support/fake.js'
import { BOUND_MS, eventually } from '../support/procs.js'

afterEach(cleanupFakes)

const messageText = (events: HarnessEvent[]) =>
  events
    .filter((e) => e.type === 'messageDelta')
    .map((e) => (e as { delta: string }).delta)
    .join('')

describe('happy turn', () => {
  it('maps every notification of a plain turn, in order, and ends with one completed terminal', async () => {
    const { events, terminal, log, cwd, options } = await fakeRun('happy')
    const start = log.start()
    const sent = (method: string, i = 0) => log.sentMethod(method)[i]
    const init = log.request('initialize')
    const initResult = log.sentResponse(init.id).result

    const tokens1 = sent('thread/tokenUsage/updated', 0).params.tokenUsage
    const tokens2 = sent('thread/tokenUsage/updated', 1).params.tokenUsage
    // Fresh thread: this turn's share is the thread total.
    const turnUsage1 = usageOf(tokens1.total)
    const turnUsage2 = usageOf(tokens2.total)
    expect(turnUsage2).toEqual({ input: 400, cacheRead: 120, output: 125, reasoning: 30, total: 525 })

    expect(events).toEqual([
      {
        type: 'started',
        turnKey: expect.stringMatching(/^t\d+$/),
        // On Windows the child is cmd.exe running the fake's codex.cmd; the fake is below it.
        pid: process.platform === 'win32' ? expect.any(Number) : start.pid,
        codexPath: options.codexPath,
        codexVersion: expect.toBeOneOf([null, '0.171.0']),
        userAgent: initResult.userAgent,
      },
      nativeOf(sent('remoteControl/status/changed')),
      { type: 'threadStarted', threadId: THREAD_ID, resumed: false },
      nativeOf(sent('thread/started')),
      { type: 'turnStarted', threadId: THREAD_ID, turnId: TURN_ID },
      nativeOf(sent('thread/status/changed', 0)),
      { type: 'itemStarted', item: sent('item/started', 0).params.item },
      { type: 'itemCompleted', item: sent('item/completed', 0).params.item },
      { type: 'itemStarted', item: sent('item/started', 1).params.item },
      nativeOf(sent('item/reasoning/summaryPartAdded', 0)),
      { type: 'reasoningDelta', itemId: 'rs_1', delta: 'Thinking ', part: 'summary', index: 0 },
      { type: 'reasoningDelta', itemId: 'rs_1', delta: 'hard', part: 'summary', index: 0 },
      nativeOf(sent('item/reasoning/summaryPartAdded', 1)),
      { type: 'reasoningDelta', itemId: 'rs_1', delta: 'Second part', part: 'summary', index: 1 },
      { type: 'reasoningDelta', itemId: 'rs_1', delta: 'raw thought', part: 'text', index: 0 },
      { type: 'itemCompleted', item: sent('item/completed', 1).params.item },
      { type: 'usage', turn: turnUsage1, thread: usageOf(tokens1.total), contextWindow: 258400 },
      { type: 'itemStarted', item: sent('item/started', 2).params.item },
      { type: 'messageDelta', itemId: 'msg_1', delta: 'Hello ' },
      { type: 'messageDelta', itemId: 'msg_1', delta: 'world' },
      { type: 'itemCompleted', item: sent('item/completed', 2).params.item },
      { type: 'usage', turn: turnUsage2, thread: usageOf(tokens2.total), contextWindow: 258400 },
      { type: 'rateLimits', rateLimits: sent('account/rateLimits/updated').params.rateLimits },
      nativeOf(sent('thread/status/changed', 1)),
      ...completedThen(terminalOf({ finalMessage: 'Hello world', usage: turnUsage2 })),
    ])
    assertOneTerminalLast(events)
    expect(messageText(events)).toBe(terminal.finalMessage)
    // Items are handed over as Codex sent them, unknown fields included.
    expect((events[6] as { item: { startedAtMs?: number } }).item.startedAtMs).toEqual(expect.any(Number))

    // The child: spawned as `<codexPath> app-server`, leading its own process group.
    expect(start.argv).toEqual(['app-server'])
    // A process group of its own on Unix; on Windows the Job Object holds the tree instead.
    expect(start.pgid).toBe(process.platform === 'win32' ? null : start.pid)

    // The wire, as the fake received it.
    const received = log.received()
    expect(log.methods()).toEqual(['initialize', 'initialized', 'account/read', 'thread/start', 'turn/start'])
    for (const m of received) expect(m).not.toHaveProperty('jsonrpc')
    const requests = received.filter((m) => 'id' in m)
    for (const r of requests) {
      expect(r.id).toEqual(expect.any(Number))
      expect(r.params).toEqual(expect.any(Object))
    }
    expect(new Set(requests.map((r) => r.id)).size).toBe(requests.length)
    expect(log.receivedBad()).toEqual([])

    expect(init.params.clientInfo).toEqual(expect.objectContaining({ name: 'rennet', version: expect.stringMatching(/^\d+\.\d+\.\d+/) }))

    const threadStart = log.request('thread/start').params
    expect(threadStart).toEqual(expect.objectContaining({ cwd, approvalPolicy: 'never', sandbox: 'read-only' }))
    expect(threadStart).not.toHaveProperty('model')

    const turnStart = log.request('turn/start').params
    expect(turnStart).toEqual(
      expect.objectContaining({
        threadId: THREAD_ID,
        cwd,
        approvalPolicy: 'never',
        sandboxPolicy: { type: 'dangerFullAccess' },
      }),
    )
    expect(turnStart.input).toHaveLength(1)
    expect(turnStart.input[0]).toEqual(expect.objectContaining({ type: 'text', text: PROMPT }))
    expect(turnStart).not.toHaveProperty('model')
    expect(turnStart).not.toHaveProperty('effort')
    expect(turnStart).not.toHaveProperty('outputSchema')

    // After the matching turn/completed: stdin closed, no interrupt.
    expect(await eventually(() => log.events('stdin-closed').length === 1, BOUND_MS)).toBe(true)
    expect(log.methods()).not.toContain('turn/interrupt')
  })

  it('passes model and effort through when given', async () => {
    const { terminal, log } = await fakeRun('minimal', { model: 'gpt-5-codex', effort: 'high' })
    expect(terminal.status).toBe('completed')
    expect(log.request('thread/start').params.model).toBe('gpt-5-codex')
    const turnStart = log.request('turn/start').params
    expect(turnStart.model).toBe('gpt-5-codex')
    expect(turnStart.effort).toBe('high')
  })

  it('streams command output as commandOutput events and hands command items over as-is', async () => {
    const { events, terminal, log } = await fakeRun('command')
    const started = log.sentMethod('item/started')
    const completed = log.sentMethod('item/completed')
    expect(events.slice(3)).toEqual([
      { type: 'itemStarted', item: started[0].params.item },
      { type: 'commandOutput', itemId: 'call_1', delta: 'out-line\n' },
      { type: 'commandOutput', itemId: 'call_1', delta: 'err-line\n' },
      { type: 'itemCompleted', item: completed[0].params.item },
      { type: 'itemStarted', item: started[1].params.item },
      { type: 'messageDelta', itemId: 'msg_1', delta: 'Done.' },
      { type: 'itemCompleted', item: completed[1].params.item },
      ...completedThen(terminal),
    ])
    // A failed command is not a failed turn.
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe('Done.')
  })

  it('merges env over the inherited environment for the child', async () => {
    process.env.RENNET_FAKE_INHERITED = 'from-parent'
    process.env.RENNET_FAKE_OVERRIDDEN = 'parent-value'
    try {
      const { terminal, log } = await fakeRun('minimal', { env: { RENNET_FAKE_OVERRIDDEN: 'child-value' } })
      expect(terminal.status).toBe('completed')
      expect(log.start().probe).toEqual({
        inherited: 'from-parent',
        overridden: 'child-value',
      })
    } finally {
      delete process.env.RENNET_FAKE_INHERITED
      delete process.env.RENNET_FAKE_OVERRIDDEN
    }
  })

  it('resumes a thread and reports this turn’s share of the running usage', async () => {
    const { events, terminal, log } = await fakeRun('resume', { threadId: 'thr_resumed' })
    expect(log.methods()).toEqual(['initialize', 'initialized', 'account/read', 'thread/resume', 'turn/start'])
    expect(log.request('thread/resume').params.threadId).toBe('thr_resumed')
    expect(log.request('turn/start').params.threadId).toBe('thr_resumed')

    const usage = events.filter((e) => e.type === 'usage')
    const tokens = log.sentMethod('thread/tokenUsage/updated').map((f) => f.params.tokenUsage)
    // The thread had 1000 tokens before this turn.
    expect(usage).toEqual([
      { type: 'usage', turn: { input: 100, cacheRead: 20, output: 50, reasoning: 10, total: 150 }, thread: usageOf(tokens[0].total), contextWindow: 258400 },
      { type: 'usage', turn: { input: 400, cacheRead: 120, output: 125, reasoning: 30, total: 525 }, thread: usageOf(tokens[1].total), contextWindow: 258400 },
    ])
    expect(types(events)).toEqual([
      'started',
      'threadStarted',
      'turnStarted',
      'usage',
      'itemStarted',
      'messageDelta',
      'messageDelta',
      'itemCompleted',
      'usage',
      'turnCompleted',
      'terminal',
    ])
    expect(events[1]).toEqual({ type: 'threadStarted', threadId: 'thr_resumed', resumed: true })
    expect(terminal).toEqual(terminalOf({ threadId: 'thr_resumed', finalMessage: 'resumed answer', usage: { input: 400, cacheRead: 120, output: 125, reasoning: 30, total: 525 } }))
  })
})

describe('turn/start is an acknowledgement', () => {
  it('accepts turn/started before the turn/start response, and announces the turn once', async () => {
    const { events, terminal } = await fakeRun('early-turn-started')
    expect(types(events)).toEqual(['started', 'threadStarted', 'turnStarted', ...ANSWER_TYPES])
    expect(events[2]).toEqual({ type: 'turnStarted', threadId: THREAD_ID, turnId: TURN_ID })
    expect(terminal).toEqual(terminalOf({ finalMessage: 'early bird' }))
  })

  it('ends on the matching turn/completed without any turn/started; final message from its items', async () => {
    const { events, terminal } = await fakeRun('no-turn-started')
    assertOneTerminalLast(events)
    expect(types(events).filter((t) => t !== 'turnStarted')).toEqual(['started', 'threadStarted', 'turnCompleted', 'terminal'])
    expect(terminal).toEqual(terminalOf({ finalMessage: 'fallback text' }))
  })

  // Interpretation (DESIGN is silent): the turn id is known from the turn/start response, so the
  // caller hears of the turn before its end even if turn/started never comes.
  it('announces the turn (turnStarted) from the turn/start response when turn/started never comes', async () => {
    const { events, terminal } = await fakeRun('no-turn-started')
    expect(events).toEqual([
      expect.objectContaining({ type: 'started' }),
      { type: 'threadStarted', threadId: THREAD_ID, resumed: false },
      { type: 'turnStarted', threadId: THREAD_ID, turnId: TURN_ID },
      ...completedThen(terminal),
    ])
  })
})

describe('structured output', () => {
  const schema = {
    type: 'object',
    properties: { answer: { type: 'string' } },
    required: ['answer'],
    additionalProperties: false,
  }

  it('sends the schema on turn/start and parses a JSON final message', async () => {
    const text = '{"answer":"42"}'
    const { terminal, log } = await fakeRun(scenarios.minimal(text), { outputSchema: schema })
    expect(log.request('turn/start').params.outputSchema).toEqual(schema)
    expect(terminal).toEqual(terminalOf({ finalMessage: text, structuredOutput: { answer: '42' } }))
  })

  it('fails with STRUCTURED_OUTPUT_INVALID when the final message is not JSON', async () => {
    const text = 'The answer is 42.'
    const { events, terminal } = await fakeRun(scenarios.minimal(text), { outputSchema: schema })
    assertOneTerminalLast(events)
    expect(terminal).toEqual(terminalOf({
      status: 'failed',
      finalMessage: text,
      failure: {
        source: 'turn',
        code: 'STRUCTURED_OUTPUT_INVALID',
        message: expect.any(String),
        detail: { text },
        retryable: false,
      },
    }))
    expect(terminal).not.toHaveProperty('structuredOutput', expect.anything())
  })

  it('leaves a JSON-looking message alone without a schema', async () => {
    const { terminal } = await fakeRun(scenarios.minimal('{"answer":"42"}'))
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe('{"answer":"42"}')
    expect(terminal.structuredOutput).toBeUndefined()
  })
})

describe('retries', () => {
  it('turns error{willRetry:true} into a retrying event and restarts a repeated item', async () => {
    const { events, terminal, log } = await fakeRun('retry')
    const error = log.sentMethod('error')[0].params.error
    expect(events.slice(3)).toEqual([
      { type: 'itemStarted', item: log.sentMethod('item/started')[0].params.item },
      { type: 'messageDelta', itemId: 'msg_1', delta: 'Hel' },
      { type: 'messageDelta', itemId: 'msg_1', delta: 'lo wor' },
      { type: 'retrying', message: 'Reconnecting... 1/2', codexErrorInfo: error.codexErrorInfo },
      { type: 'itemStarted', item: log.sentMethod('item/started')[1].params.item },
      { type: 'messageDelta', itemId: 'msg_1', delta: 'Hello ' },
      { type: 'messageDelta', itemId: 'msg_1', delta: 'again' },
      { type: 'itemCompleted', item: log.sentMethod('item/completed')[0].params.item },
      ...completedThen(terminal),
    ])
    expect(terminal).toEqual(terminalOf({ finalMessage: 'Hello again' }))
  })

  // Interpretation: DESIGN names the completed agentMessage and turn/completed items as sources;
  // "a repeated item/started restarts that item's text" is only observable when the streamed text
  // is the fallback after both.
  it('takes the final message from the last attempt when only deltas carry it', async () => {
    const { terminal } = await fakeRun('retry-no-completed')
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe('Hello again')
  })
})

describe('turn failure', () => {
  it('reports turn/completed{failed} as a turn failure with the provider message verbatim', async () => {
    const { events, terminal, log } = await fakeRun('turn-failed')
    const error = log.sentMethod('turn/completed')[0].params.turn.error
    expect(events.slice(1)).toEqual([
      { type: 'threadStarted', threadId: THREAD_ID, resumed: false },
      { type: 'turnStarted', threadId: THREAD_ID, turnId: TURN_ID },
      nativeOf(log.sentMethod('thread/status/changed')[0]),
      nativeOf(log.sentMethod('error')[0]),
      ...completedThen(terminal),
    ])
    expect(terminal).toEqual(terminalOf({
      status: 'failed',
      failure: {
        source: 'turn',
        code: 'TURN_FAILED',
        message: 'unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:18610/v1/responses',
        detail: expect.objectContaining({
          codexErrorInfo: error.codexErrorInfo,
          additionalDetails: 'more detail from the provider',
        }),
        retryable: false,
        reason: 'unauthorized',
      },
    }))
    expect(log.methods()).not.toContain('turn/interrupt')
  })
})

describe('foreign frames', () => {
  it('surfaces other threads, other turns and unknown responses as passthrough and changes nothing', async () => {
    const { events, terminal, log } = await fakeRun('foreign')
    const sent = log.sent()
    const frame = (pred: (f: any) => boolean) => {
      const f = sent.find(pred)
      if (!f) throw new Error('frame not found in the fake log')
      return f
    }
    const otherThreadDelta = frame((f) => f.method === 'item/agentMessage/delta' && f.params.threadId === OTHER_THREAD_ID)
    const otherTurnDelta = frame(
      (f) => f.method === 'item/agentMessage/delta' && f.params.threadId === THREAD_ID && f.params.turnId === OTHER_TURN_ID,
    )
    const subStarted = frame((f) => f.method === 'turn/started' && f.params.threadId === SUB_THREAD_ID)
    const subCompleted = frame((f) => f.method === 'turn/completed' && f.params.threadId === SUB_THREAD_ID)
    const otherTurnCompleted = frame((f) => f.method === 'turn/completed' && f.params.turn.id === OTHER_TURN_ID)
    const unknownResponse = frame((f) => f.id === 9999)
    const unknownMethod = frame((f) => f.method === 'fake/unknownThing')

    expect(events.slice(1)).toEqual([
      { type: 'threadStarted', threadId: THREAD_ID, resumed: false },
      { type: 'turnStarted', threadId: THREAD_ID, turnId: TURN_ID },
      { type: 'itemStarted', item: log.sentMethod('item/started')[0].params.item },
      { type: 'messageDelta', itemId: 'msg_1', delta: 'mine ' },
      { type: 'passthrough', reason: 'foreignThread', message: otherThreadDelta },
      { type: 'passthrough', reason: 'foreignTurn', message: otherTurnDelta },
      { type: 'passthrough', reason: 'foreignThread', message: subStarted },
      { type: 'passthrough', reason: 'foreignThread', message: subCompleted },
      { type: 'passthrough', reason: 'foreignTurn', message: otherTurnCompleted },
      { type: 'passthrough', reason: 'unknownResponse', message: unknownResponse },
      // A method the pinned schema does not list: under its own type, so that `native` narrows by method.
      { type: 'unknownNotification', method: 'fake/unknownThing', params: unknownMethod.params },
      { type: 'messageDelta', itemId: 'msg_1', delta: 'only' },
      { type: 'itemCompleted', item: log.sentMethod('item/completed')[0].params.item },
      ...completedThen(terminal),
    ])
    // The sub-agent's completed turn and the other turn's failure did not end or change ours.
    expect(terminal).toEqual(terminalOf({ finalMessage: 'mine only' }))
    expect(messageText(events)).toBe('mine only')
  })
})

describe('throughput', () => {
  it('delivers a burst of 20,000 deltas complete and in order', async () => {
    const n = 20_000
    const { events, terminal } = await fakeRun(scenarios.burst(n))
    const expected = Array.from({ length: n }, (_, i) => String(i))
    const deltas = events.filter((e) => e.type === 'messageDelta').map((e) => (e as { delta: string }).delta)
    expect(deltas.length).toBe(n)
    expect(deltas).toEqual(expected)
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe(expected.join(''))
    assertOneTerminalLast(events)
  })

  it('resolves outcome for a 20,000-delta turn when nobody iterates', async () => {
    const n = 20_000
    const { turn } = fakeTurn(scenarios.burst(n))
    const terminal = await within(turn.outcome, 15_000, 'turn.outcome')
    expect(terminal.type).toBe('terminal')
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe(Array.from({ length: n }, (_, i) => String(i)).join(''))
  })
})
