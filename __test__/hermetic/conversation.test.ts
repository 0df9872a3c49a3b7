// A conversation through the addon against the test kit's fake: the thread id kept between
// sends, the next turn's child prepared after each turn and started by the next send (no spawn
// at send time), steer / queue / reject while a turn runs, a model change, a fork, close() in
// the middle of a turn leaving nothing, a send after the prepared child died or idled out
// (idleTimeoutMs), prepareNext: false, bad options, and the README's chat pane as written there.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { CodexError, openConversation } from '../../index.js'
import type { Conversation, ConversationOptions, HarnessEvent, PreparedTurn, TerminalEvent, Turn } from '../../index.js'
import type { FakeCodexScript } from '../../testing/index.js'
import { THREAD_ID, TURN_ID, assertOneTerminalLast, cleanupFakes, collect, scenarios, tempDir, types, writeFake } from '../support/fake.js'
import type { FakeLog, ScenarioName } from '../support/fake.js'
import { eventually, isRunning, leftByFake } from '../support/procs.js'
import { Transcript } from '../testing/docs-transcript.js'
import { openChatPane } from './readme-chat-pane.js'
import { docBlock } from '../support/docs.js'

const opened: Conversation[] = []
afterEach(async () => {
  // What a test opened is closed even when it failed; then nothing of any fake may be left.
  for (const conversation of opened.splice(0)) await conversation.close()
  await cleanupFakes()
})

// The key the tests read a conversation's waiting prepared turn under (not part of the API),
// from the module instance index.js loaded.
const { WAITING } = createRequire(__filename)('../../lib/turn.js') as { WAITING: symbol }

const FORK_ID = '01a22f3f-eeee-7000-8000-000000000005'

interface Opened {
  conversation: Conversation
  log: FakeLog
  codexPath: string
  cwd: string
}

/** A conversation on the fake playing `scenario`, closed after the test. */
function open(scenario: ScenarioName | FakeCodexScript = 'minimal', options: Partial<ConversationOptions> = {}, fake: FakeCodexScript = {}): Opened {
  const cwd = tempDir()
  const { codexPath, log } = writeFake(scenario, fake, cwd)
  const conversation = openConversation({ cwd, codexPath, ...options })
  opened.push(conversation)
  return { conversation, log, codexPath, cwd }
}

/** The prepared turn waiting in `conversation` (what the tests read of its inside), or null. */
const waiting = (conversation: Conversation) => (conversation as unknown as Record<symbol, PreparedTurn | null>)[WAITING]

/** The prepared child, once its thread is open. */
async function ready(conversation: Conversation) {
  const prepared = waiting(conversation)
  expect(prepared, 'a prepared turn waits').not.toBeNull()
  return prepared!.ready
}

const text = (message: { params: { input: Array<{ text?: string }> } }) => message.params.input.map((i) => i.text).join(' ')
const startedOf = (events: HarnessEvent[]) => events.filter((e): e is Extract<HarnessEvent, { type: 'started' }> => e.type === 'started')

/** A long turn that ends only when aborted. */
const HANG: FakeCodexScript = { ...scenarios.minimal(), steps: [{ type: 'hang' }] }

describe('a conversation keeps its thread and prepares the next turn', () => {
  it('the first send starts the thread on the child prepared at open; the next on the child prepared after it, with no spawn at send time', async () => {
    const { conversation, log } = open('minimal')
    expect(conversation.threadId).toBeNull()
    expect(conversation.running).toBeNull()
    expect(await ready(conversation)).toEqual({ threadId: THREAD_ID })
    const before = log.starts().map((s) => s.launcherPid)
    expect(before).toHaveLength(1)

    const first = conversation.send('One.')
    expect(conversation.running).toBe(first)
    const events = await collect(first)
    const terminal = assertOneTerminalLast(events)
    expect(terminal).toMatchObject({ status: 'completed', threadId: THREAD_ID, finalMessage: 'Hello world' })
    expect(types(events)[0]).toBe('started')
    expect(startedOf(events).map((s) => s.pid)).toEqual(before)
    expect(conversation.threadId).toBe(THREAD_ID)
    expect(conversation.running).toBeNull()
    // The next child is being prepared now, on the thread.
    expect(await ready(conversation)).toEqual({ threadId: THREAD_ID })
    const prepared = log.starts().map((s) => s.launcherPid)
    expect(prepared).toHaveLength(2)

    const second = conversation.send([{ type: 'text', text: 'Two.' }])
    expect(log.starts().map((s) => s.launcherPid), 'no child is started at send time').toEqual(prepared)
    const secondEvents = await collect(second)
    expect(assertOneTerminalLast(secondEvents)).toMatchObject({ status: 'completed', threadId: THREAD_ID })
    expect(startedOf(secondEvents).map((s) => s.pid)).toEqual([prepared[1]])

    const [run1, run2] = log.runs()
    expect(run1.requests('thread/start')).toHaveLength(1)
    expect(run1.requests('thread/resume')).toEqual([])
    expect(run2.requests('thread/start')).toEqual([])
    expect(run2.requests('thread/resume').map((p) => p.threadId)).toEqual([THREAD_ID])
    expect(log.requests('turn/start').map(text)).toEqual(['One.', 'Two.'])
    expect(log.requests('turn/start').map((m) => m.params.threadId)).toEqual([THREAD_ID, THREAD_ID])
  })

  it('opened on a stored thread, it prepares on that thread', async () => {
    const { conversation, log } = open('minimal', { threadId: THREAD_ID })
    expect(conversation.threadId).toBe(THREAD_ID)
    expect(await ready(conversation)).toEqual({ threadId: THREAD_ID })
    expect((await conversation.send('Go on.').outcome).status).toBe('completed')
    expect(log.requests('thread/start')).toEqual([])
    expect(log.requests('thread/resume').map((m) => m.params.threadId)).toEqual([THREAD_ID])
  })

  it('a model and effort given to a send go to turn/start and stay for the turns after it', async () => {
    const { conversation, log } = open('minimal', { model: 'model-a', effort: 'low' })
    await ready(conversation)
    expect((await conversation.send('One.').outcome).status).toBe('completed')
    await ready(conversation)
    // The prepared child is started with the new model: no new child for it.
    const starts = log.starts().length
    const second = conversation.send('Two.', { model: 'model-b', effort: 'high' })
    expect(log.starts()).toHaveLength(starts)
    expect((await second.outcome).status).toBe('completed')
    await ready(conversation)
    expect((await conversation.send('Three.').outcome).status).toBe('completed')

    const runs = log.runs()
    expect(runs.map((r) => r.requests('turn/start').map((p) => [p.model, p.effort]))).toEqual([
      [['model-a', 'low']],
      [['model-b', 'high']],
      [['model-b', 'high']],
    ])
    // Each child opens the thread with the model of the turns before it.
    expect(runs[0].requests('thread/start')[0].model).toBe('model-a')
    expect(runs[1].requests('thread/resume')[0].model).toBe('model-a')
    expect(runs[2].requests('thread/resume')[0].model).toBe('model-b')
  })

  it('prepareNext: false starts a child per send only', async () => {
    const { conversation, log } = open('minimal', { prepareNext: false })
    expect(waiting(conversation)).toBeNull()
    const first = await conversation.send('One.').outcome
    expect(first).toMatchObject({ status: 'completed', threadId: THREAD_ID })
    expect(waiting(conversation)).toBeNull()
    expect((await conversation.send('Two.').outcome).status).toBe('completed')
    expect(waiting(conversation)).toBeNull()
    expect(log.starts()).toHaveLength(2)
    expect(log.runs()[1].requests('thread/resume').map((p) => p.threadId)).toEqual([THREAD_ID])
  })
})

describe('a send while a turn runs', () => {
  it("'steer' (the default) adds the input to the running turn and returns it", async () => {
    const { conversation, log } = open(HANG)
    const running = conversation.send('Start.')
    const steered = conversation.send([{ type: 'text', text: 'And this.' }])
    expect(steered).toBe(running)
    expect(await eventually(() => log.requests('turn/steer').length === 1, 10_000)).toBe(true)
    expect(log.request('turn/steer').params).toMatchObject({ threadId: THREAD_ID, expectedTurnId: TURN_ID, input: [{ type: 'text', text: 'And this.' }] })
    expect(log.starts()).toHaveLength(1)
    await conversation.close()
    expect(await running.outcome).toMatchObject({ status: 'cancelled' })
  })

  it("too late to steer (Codex refused it), the input becomes the next turn, handed to onTurn", async () => {
    const turns: Turn[] = []
    const refused = { 'turn/steer': { error: { code: -32600, message: 'no active turn to steer' } } }
    const { conversation, log } = open('minimal', { onTurn: (turn) => turns.push(turn) }, { answer: refused })
    const first = conversation.send('One.')
    expect(turns).toEqual([first])
    expect(conversation.send('Two.')).toBe(first)
    expect((await first.outcome).status).toBe('completed')
    expect(await eventually(() => turns.length === 2, 10_000), 'the refused input got a turn of its own').toBe(true)
    const events = await collect(turns[1])
    expect(assertOneTerminalLast(events)).toMatchObject({ status: 'completed', threadId: THREAD_ID })
    expect(log.requests('turn/start').map(text)).toEqual(['One.', 'Two.'])
  })

  it("'queue' returns a Turn that yields its events once the running one ended, on the thread", async () => {
    const turns: Turn[] = []
    const { conversation, log } = open('minimal', { prepareNext: false, onTurn: (turn) => turns.push(turn) })
    const first = conversation.send('One.')
    const second = conversation.send('Two.', { whileRunning: 'queue' })
    const third = conversation.send('Three.', { whileRunning: 'queue' })
    expect(new Set([first, second, third]).size).toBe(3)
    expect(turns).toEqual([first, second, third])
    expect(conversation.running).toBe(first)
    // Iterated before it started: its events come once it runs, one terminal last.
    const order: string[] = []
    const track = async (turn: Turn, name: string) => {
      const events = await collect(turn)
      order.push(name)
      return events
    }
    const [e1, e2, e3] = await Promise.all([track(first, 'one'), track(second, 'two'), track(third, 'three')])
    expect(order).toEqual(['one', 'two', 'three'])
    for (const events of [e1, e2, e3]) expect(assertOneTerminalLast(events)).toMatchObject({ status: 'completed', threadId: THREAD_ID })
    expect([e1, e2, e3].map((events) => types(events)[0])).toEqual(['started', 'started', 'started'])
    expect(await second.outcome).toEqual(e2.at(-1))
    // One child each, one after the other, on the thread the first one started.
    const runs = log.runs()
    expect(runs.map((r) => r.requests('turn/start').map((p) => p.input[0].text))).toEqual([['One.'], ['Two.'], ['Three.']])
    expect(runs.slice(1).map((r) => r.requests('thread/resume')[0]?.threadId)).toEqual([THREAD_ID, THREAD_ID])
    expect(conversation.running).toBeNull()
  })

  it('a queued Turn aborted before it started ends cancelled with nothing started; steering it is too late', async () => {
    const { conversation, log } = open(HANG, { prepareNext: false })
    const running = conversation.send('One.')
    const queued = conversation.send('Two.', { whileRunning: 'queue' })
    const reason = new Error('changed my mind')
    queued.abort(reason)
    queued.abort('later reasons change nothing')
    const events = await collect(queued)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ type: 'terminal', status: 'cancelled', turnId: null, failure: null })
    expect((events[0] as TerminalEvent).abortReason).toBe(reason)
    expect((await queued.outcome).abortReason).toBe(reason)
    await expect(queued.steer('x')).rejects.toMatchObject({ code: 'TURN_ENDED' })
    expect(conversation.running).toBe(running)
    await collect(running, (event) => (event.type === 'turnStarted' ? running.abort() : undefined))
    expect((await running.outcome).status).toBe('cancelled')
    // The running turn's end started no child for the dropped one.
    expect(conversation.running).toBeNull()
    expect(log.starts()).toHaveLength(1)
  })

  it('a steer of a queued Turn waits until it runs, and goes to its turn', async () => {
    const slow: FakeCodexScript = { ...scenarios.minimal(), steps: [{ type: 'delay', ms: 300 }, { type: 'message', text: 'Done.' }] }
    const { conversation, log } = open(slow, { prepareNext: false })
    const first = conversation.send('One.')
    const queued = conversation.send('Two.', { whileRunning: 'queue' })
    const steered = queued.steer('Two, briefly.')
    await expect(steered).resolves.toBeUndefined()
    expect((await first.outcome).status).toBe('completed')
    expect((await queued.outcome).status).toBe('completed')
    const [run1, run2] = log.runs()
    expect(run1.requests('turn/steer')).toEqual([])
    expect(run2.requests('turn/steer').map((p) => p.input[0].text)).toEqual(['Two, briefly.'])
    await expect(queued.steer([{ type: 'image', url: 'ftp://x' }])).rejects.toThrow(/^input\[0\]\.url/)
  })

  it("'reject' throws a CodexError TURN_RUNNING and changes nothing", async () => {
    const { conversation, log } = open(HANG, { prepareNext: false })
    const running = conversation.send('One.')
    let error: unknown
    try {
      conversation.send('Two.', { whileRunning: 'reject' })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(CodexError)
    expect(error).toMatchObject({ name: 'CodexError', code: 'TURN_RUNNING', source: 'turn', retryable: false })
    expect(conversation.running).toBe(running)
    await collect(running, (event) => (event.type === 'turnStarted' ? void conversation.close() : undefined))
    await conversation.close()
    expect(log.requests('turn/start').map(text)).toEqual(['One.'])
    expect(log.requests('turn/steer')).toEqual([])
  })

  it('a break out of the loop aborts the turn; the conversation goes on', async () => {
    const { conversation } = open(HANG)
    const turn = conversation.send('One.')
    await collect(turn, (event) => (event.type === 'turnStarted' ? 'break' : undefined))
    expect(await turn.outcome).toMatchObject({ status: 'cancelled' })
    expect(conversation.running).toBeNull()
    expect(await ready(conversation)).toEqual({ threadId: THREAD_ID })
  })
})

describe('a prepared child that died', () => {
  it('a send right after it was killed runs on a fresh child: one started, one terminal', async () => {
    const { conversation, log } = open('minimal')
    await ready(conversation)
    const [dead] = log.starts()
    process.kill(dead.pid, 'SIGKILL')
    // At once: the conversation may not have seen the child go yet.
    const events = await collect(conversation.send('Still there?'))
    expect(assertOneTerminalLast(events)).toMatchObject({ status: 'completed', finalMessage: 'Hello world', failure: null })
    const started = startedOf(events)
    expect(started).toHaveLength(1)
    expect(started[0].pid).not.toBe(dead.launcherPid)
    expect(log.requests('turn/start').map(text)).toEqual(['Still there?'])
    // The dead child had opened a new thread of its own: the fresh child starts one too.
    expect(log.runs()[1].requests('thread/start')).toHaveLength(1)
  })

  it('once the conversation saw it go, a send starts a fresh child on the thread', async () => {
    const { conversation, log } = open('minimal', { threadId: THREAD_ID })
    const prepared = waiting(conversation)!
    await prepared.ready
    const [dead] = log.starts()
    process.kill(dead.pid, 'SIGKILL')
    expect(await eventually(() => !isRunning(dead.pid), 10_000)).toBe(true)
    // The prepared turn's own Turn would carry the death; the conversation's does not.
    expect(await eventually(() => !(prepared as unknown as Record<symbol, { waiting: boolean }>)[WAITING].waiting, 10_000)).toBe(true)
    const outcome = await conversation.send('Still there?').outcome
    expect(outcome).toMatchObject({ status: 'completed', threadId: THREAD_ID })
    expect(log.starts()).toHaveLength(2)
    expect(log.runs()[1].requests('thread/resume').map((p) => p.threadId)).toEqual([THREAD_ID])
  })
})

describe('idleTimeoutMs', { timeout: 60_000 }, () => {
  const IDLE_MS = 4000
  it('a prepared child waits that long, then ends; a send after it starts a child of its own on the thread', async () => {
    const { conversation, log } = open('minimal', { threadId: THREAD_ID, idleTimeoutMs: IDLE_MS })
    // The idle time counts from the prepare: long enough for a child to get ready under Wine.
    expect(await ready(conversation)).toEqual({ threadId: THREAD_ID })
    const [idle] = log.starts()
    // Nothing kills it but its own idle time.
    expect(await eventually(() => !isRunning(idle.pid), IDLE_MS + 20_000), 'the idle prepared child ended').toBe(true)
    const events = await collect(conversation.send('Back again'))
    expect(assertOneTerminalLast(events)).toMatchObject({ status: 'completed', threadId: THREAD_ID, failure: null })
    expect(log.starts()).toHaveLength(2)
    expect(log.runs()[1].requests('thread/resume').map((p) => p.threadId)).toEqual([THREAD_ID])
    expect(log.requests('turn/start').map(text)).toEqual(['Back again'])
  })

  it('a fork keeps it', async () => {
    const fake = { calls: { 'thread/fork': { result: { thread: { id: FORK_ID } } } } }
    const { conversation, log } = open('minimal', { threadId: THREAD_ID, idleTimeoutMs: IDLE_MS }, fake)
    const fork = await conversation.fork()
    opened.push(fork)
    expect(await ready(fork)).toEqual({ threadId: FORK_ID })
    const forkRun = log.runs().find((r) => r.requests('thread/resume').some((p) => p.threadId === FORK_ID))!
    // The fork's prepared child ends by itself, as the first's does.
    expect(await eventually(() => !isRunning(forkRun.pid), IDLE_MS + 20_000), "the fork's idle prepared child ended").toBe(true)
  })
})

describe('fork', () => {
  it('a new conversation on the fork, with the same options; the first goes on', async () => {
    const { conversation, log } = open('minimal', { model: 'model-a' }, { calls: { 'thread/fork': { result: { thread: { id: FORK_ID } } } } })
    await ready(conversation)
    const first = await conversation.send('One.').outcome
    expect(first.status).toBe('completed')
    const fork = await conversation.fork({ lastTurnId: TURN_ID })
    opened.push(fork)
    expect(fork.threadId).toBe(FORK_ID)
    expect(conversation.threadId).toBe(THREAD_ID)
    const forked = await fork.send('Other way.').outcome
    expect(forked).toMatchObject({ status: 'completed', threadId: FORK_ID })
    expect(log.requests('thread/fork').map((m) => m.params)).toEqual([
      { threadId: THREAD_ID, lastTurnId: TURN_ID, approvalPolicy: 'never', sandbox: 'read-only' },
    ])
    const forkRun = log.runs().find((r) => r.requests('thread/resume').some((p) => p.threadId === FORK_ID))!
    expect(forkRun.requests('thread/resume')[0].model).toBe('model-a')
    expect((await conversation.send('Same way.').outcome).threadId).toBe(THREAD_ID)
  })

  it('rejects with a TypeError for bad options and CONVERSATION_CLOSED after close()', async () => {
    const { conversation } = open('minimal', { prepareNext: false })
    await expect(conversation.fork({ lastTurnId: '' })).rejects.toThrow(/^options\.lastTurnId must be a non-empty string$/)
    await expect(conversation.fork({ cwd: '/' } as never)).rejects.toThrow(/^options\.cwd is not an option of fork\(\)/)
    // No thread yet: nothing to fork after a turn.
    await expect(conversation.fork({ lastTurnId: TURN_ID })).rejects.toThrow(TypeError)
    await conversation.close()
    await expect(conversation.fork()).rejects.toMatchObject({ name: 'CodexError', code: 'CONVERSATION_CLOSED' })
  })
})

describe('close()', () => {
  it('mid-turn: aborts it and the queued one, says why; nothing is left once it settled', async () => {
    const { conversation, log } = open(HANG)
    await ready(conversation)
    const running = conversation.send('One.')
    const queued = conversation.send('Two.', { whileRunning: 'queue' })
    let closing: Promise<void> | undefined
    const events = await collect(running, (event) => {
      if (event.type === 'turnStarted') closing = conversation.close()
    })
    expect(closing).toBeDefined()
    await closing
    for (const start of log.starts()) expect(leftByFake(start.pid), `group ${start.pid} after close()`).toEqual([])
    const terminal = assertOneTerminalLast(events)
    expect(terminal.status).toBe('cancelled')
    expect(terminal.abortReason).toMatchObject({ name: 'CodexError', code: 'CONVERSATION_CLOSED' })
    expect(await queued.outcome).toMatchObject({ status: 'cancelled', turnId: null })
    expect(conversation.running).toBeNull()
    expect(waiting(conversation), 'no next child is prepared').toBeNull()
    expect(log.requests('turn/start').map(text)).toEqual(['One.'])
    expect(log.starts()).toHaveLength(1)
    // Closed: sends throw, close() again is the same promise.
    expect(() => conversation.send('Three.')).toThrow(expect.objectContaining({ code: 'CONVERSATION_CLOSED' }))
    expect(conversation.close()).toBe(closing)
  })

  it('a prepared child waiting: disposed and gone once close() settled', async () => {
    const { conversation, log } = open('minimal')
    await ready(conversation)
    const [child] = log.starts()
    await conversation.close()
    expect(leftByFake(child.pid)).toEqual([])
    expect(waiting(conversation)).toBeNull()
    expect(log.requests('turn/start')).toEqual([])
  })
})

describe('bad options', () => {
  it('openConversation and send throw a TypeError naming the option, and start nothing', () => {
    const cwd = tempDir()
    const { codexPath, log } = writeFake('minimal', {}, cwd)
    const bad: Array<[object, RegExp]> = [
      [{ prompt: 'hi' }, /^options\.prompt is not an option of a conversation/],
      [{ input: [] }, /^options\.input is not an option of a conversation/],
      [{ outputSchema: {} }, /^options\.outputSchema is not an option of a conversation/],
      [{ signal: AbortSignal.timeout(1000) }, /^options\.signal is not an option of a conversation/],
      [{ prepareNext: 'yes' }, /^options\.prepareNext must be a boolean$/],
      [{ onTurn: 'render' }, /^options\.onTurn must be a function$/],
      [{ ephemeral: true }, /^options\.ephemeral: /],
      [{ threadId: '' }, /^options\.threadId must be a non-empty string$/],
      [{ cwd: 'relative' }, /^options\.cwd/],
      [{ idleTimeoutMs: 0 }, /^options\.idleTimeoutMs must be an integer number of milliseconds from 1 to /],
      [{ idleTimeoutMs: 2 ** 31 }, /^options\.idleTimeoutMs must be an integer number of milliseconds from 1 to /],
      [{ access: 'readOnly', onServerRequest: () => undefined }, /onServerRequest/],
    ]
    for (const [options, message] of bad) {
      expect(() => openConversation({ cwd, codexPath, ...options } as never), JSON.stringify(options)).toThrow(TypeError)
      expect(() => openConversation({ cwd, codexPath, ...options } as never)).toThrow(message)
    }
    expect(() => openConversation(null as never)).toThrow(/^openConversation: options must be an object$/)

    const conversation = openConversation({ cwd, codexPath, prepareNext: false })
    opened.push(conversation)
    const sends: Array<[unknown, unknown, RegExp]> = [
      [42, undefined, /^send: input must be a string or an array of input items$/],
      ['', undefined, /^input must be a non-empty string$/],
      [[], undefined, /^input must hold at least one item$/],
      [[{ type: 'localImage', path: 'shot.png' }], undefined, /^input\[0\]\.path must be an absolute path/],
      [[{ type: 'text', text: 'x', extra: 1n }], undefined, /^input\[0\]\.extra is a BigInt/],
      ['hi', { whileRunning: 'later' }, /^options\.whileRunning must be one of 'steer', 'queue', 'reject'$/],
      ['hi', { prompt: 'x' }, /^options\.prompt is not an option of send\(\)/],
      ['hi', { model: 42 }, /^options\.model/],
      ['hi', 'fast', /^send: options must be an object$/],
    ]
    for (const [input, options, message] of sends) {
      expect(() => conversation.send(input as never, options as never), String(message)).toThrow(TypeError)
      expect(() => conversation.send(input as never, options as never)).toThrow(message)
    }
    expect(conversation.running).toBeNull()
    expect(log.starts()).toEqual([])
  })
})

describe("the README's chat pane", () => {
  it('readme-chat-pane.ts is the README example, verbatim', () => {
    const copy = readFileSync(join(__dirname, 'readme-chat-pane.ts'), 'utf8').split('\n').slice(2).join('\n')
    expect(docBlock('README.md', 'A chat pane', { containing: 'export function openChatPane', lang: 'ts' })).toBe(copy)
  })

  it('runs as written there: a transcript of two turns on one thread, the second on the prepared child', async () => {
    const cwd = tempDir()
    const { codexPath, log } = writeFake('minimal', {}, cwd)
    const transcript = new Transcript()
    const shown: HarnessEvent['type'][] = []
    const pane = openChatPane({ cwd, codexPath }, (event) => {
      shown.push(event.type)
      transcript.apply(event)
    })
    try {
      expect((await pane.send('What does this project do?').outcome).status).toBe('completed')
      expect(pane.threadId()).toBe(THREAD_ID)
      const second = pane.send('And how is it tested?', 'model-b')
      expect((await second.outcome).status).toBe('completed')
      await pane.shown()
      // Both turns, in order, each from `started` to its terminal (the fake's one message has the same id in both).
      expect(shown.filter((t) => t === 'started' || t === 'terminal')).toEqual(['started', 'terminal', 'started', 'terminal'])
      expect(transcript.entries).toEqual([{ kind: 'assistant', id: 'msg_1', text: 'Hello world' }])
      expect(log.requests('turn/start').map((m) => [text(m), m.params.model])).toEqual([
        ['What does this project do?', undefined],
        ['And how is it tested?', 'model-b'],
      ])
      expect(log.requests('thread/resume').map((m) => m.params.threadId)).toEqual([THREAD_ID])
      pane.stop()
    } finally {
      await pane.close()
    }
    for (const start of log.starts()) expect(leftByFake(start.pid)).toEqual([])
  })
})
