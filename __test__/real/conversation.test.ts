// Real `codex app-server` (pinned @openai/codex) against the loopback mock Responses API: a
// conversation's turns on one thread, each on its own child. Codex 0.171.0 refuses a second
// child on a thread another child still holds ("thread … already has an active writer"), so the
// next turn's child is prepared only once the previous turn's terminal says its child is gone:
// every preparation here must find the thread free. Also: the model a send names reaches the
// model request, a fork while the prepared child holds the thread, close() in the middle of a
// turn, and the host killed while the next turn's child waits.
import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { afterEach, describe, expect, it } from 'vitest'

import { openConversation } from '../../index.js'
import type { Conversation, ConversationOptions, HarnessEvent, PreparedTurn, Turn } from '../../index.js'
import { codexBinaryPath, createGitCwd, hangingMessage, messageResponse, startMockModel } from '../../testing/index.js'
import type { ScriptedResponse } from '../../testing/index.js'
import { describeProcess, eventually, isAlive, liveInGroup, liveWithMarker as liveWithTreeMarker } from '../support/procs.js'
import { Host, running } from '../lifecycle/host.js'
import { liveWithMarker } from './harness.js'

const { WAITING } = createRequire(__filename)('../../lib/turn.js') as { WAITING: symbol }

/** Ceilings for a loaded 2-core machine (several Codex children one after another); never asserted on. */
const TEST_MS = 180_000
const SETTLE_MS = 20_000

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

interface Setup {
  options: ConversationOptions
  model: Awaited<ReturnType<typeof startMockModel>>
  /** The environment marker of everything this test's children started. */
  mark: string
}

async function setup(responses: ScriptedResponse[]): Promise<Setup> {
  const model = await startMockModel(responses)
  const cwd = createGitCwd()
  const mark = randomUUID()
  cleanups.push(
    () => model.close(),
    () => cwd.cleanup(),
    async () => {
      // Nothing of the test is left, whatever became of it.
      const left = await eventually(() => liveWithMarker(mark).length === 0, SETTLE_MS)
      expect(left, `processes left:\n${liveWithMarker(mark).map(describeProcess).join('\n')}`).toBe(true)
    },
  )
  const options = { cwd: cwd.path, codexPath: codexBinaryPath(), env: { ...model.env, RENNET_REAL_RUN: mark }, requestTimeoutMs: 60_000 }
  return { options, model, mark }
}

function open(options: ConversationOptions): Conversation {
  const conversation = openConversation(options)
  cleanups.push(() => conversation.close())
  return conversation
}

const waiting = (conversation: Conversation) => (conversation as unknown as Record<symbol, PreparedTurn | null>)[WAITING]

/** The next turn's child, once its thread is open. */
async function ready(conversation: Conversation) {
  const prepared = waiting(conversation)
  expect(prepared, 'a prepared turn waits').not.toBeNull()
  return prepared!.ready
}

/** Every event of the turn (a watchdog aborts one that hangs, and the test then fails). */
async function drain(turn: Turn, onEvent?: (event: HarnessEvent) => void): Promise<HarnessEvent[]> {
  const events: HarnessEvent[] = []
  const watchdog = setTimeout(() => turn.abort(new Error('watchdog')), 60_000)
  try {
    for await (const event of turn) {
      events.push(event)
      onEvent?.(event)
    }
  } finally {
    clearTimeout(watchdog)
  }
  expect(events.at(-1)?.type).toBe('terminal')
  return events
}

const started = (events: HarnessEvent[]) => events.find((e): e is Extract<HarnessEvent, { type: 'started' }> => e.type === 'started')!
const inputOf = (request: { body: { input: unknown } }) => JSON.stringify(request.body.input)

describe('real codex app-server: a conversation', () => {
  it(
    'two sends on one thread: the second on the child prepared after the first, with the first exchange in its model request and the model it names',
    async () => {
      const { options, model, mark } = await setup([
        messageResponse(['The word ', 'is kiwi.'], { id: 'resp_1', itemId: 'msg_1' }),
        messageResponse(['Kiwi.'], { id: 'resp_2', itemId: 'msg_2' }),
      ])
      const conversation = open(options)
      const first = await ready(conversation)
      expect(first, JSON.stringify(first)).toHaveProperty('threadId')
      const beforeFirst = liveWithMarker(mark)
      const one = await drain(conversation.send('Remember the word kiwi.'))
      expect(one.at(-1)).toMatchObject({ status: 'completed', finalMessage: 'The word is kiwi.', failure: null })
      expect(beforeFirst).toContain(started(one).pid)
      const threadId = (first as { threadId: string }).threadId
      expect(conversation.threadId).toBe(threadId)
      expect(liveInGroup(started(one).pid), 'the first child is gone at its terminal').toEqual([])

      // Prepared right after the terminal: the thread is free (no "active writer").
      expect(await ready(conversation)).toEqual({ threadId })
      const beforeSecond = liveWithMarker(mark)
      const two = await drain(conversation.send('Which word?', { model: 'mock-model-2' }))
      expect(two.at(-1)).toMatchObject({ status: 'completed', finalMessage: 'Kiwi.', threadId, failure: null })
      expect(beforeSecond, 'the second turn ran on the child prepared before the send').toContain(started(two).pid)
      expect(two.find((e) => e.type === 'threadStarted')).toMatchObject({ threadId, resumed: true })

      expect(model.requests).toHaveLength(2)
      const history = inputOf(model.requests[1])
      expect(history).toContain('Remember the word kiwi.')
      expect(history).toContain('The word is kiwi.')
      expect(history).toContain('Which word?')
      expect(model.requests[0].body.model).toBe('mock-model')
      expect(model.requests[1].body.model).toBe('mock-model-2')

      // The third child waits on the thread with the model the second turn named.
      expect(await ready(conversation)).toEqual({ threadId })
      await conversation.close()
      expect(liveWithMarker(mark), 'nothing is left once close() settled').toEqual([])
    },
    TEST_MS,
  )

  it(
    'a fork while the prepared child holds the thread: a conversation on the fork with the history, and the first goes on',
    async () => {
      const { options, model } = await setup([
        messageResponse(['First.'], { id: 'resp_1', itemId: 'msg_1' }),
        messageResponse(['On the fork.'], { id: 'resp_2', itemId: 'msg_2' }),
        messageResponse(['On the first.'], { id: 'resp_3', itemId: 'msg_3' }),
      ])
      const conversation = open(options)
      const one = await conversation.send('Remember the word plum.').outcome
      expect(one.status, JSON.stringify(one.failure)).toBe('completed')
      expect(await ready(conversation)).toEqual({ threadId: one.threadId })
      const fork = await conversation.fork({ lastTurnId: one.turnId! })
      cleanups.push(() => fork.close())
      expect(fork.threadId).not.toBe(one.threadId)
      const forked = await drain(fork.send('On the fork, which word?'))
      expect(forked.at(-1)).toMatchObject({ status: 'completed', finalMessage: 'On the fork.', threadId: fork.threadId })
      expect(inputOf(model.requests[1])).toContain('Remember the word plum.')
      const again = await drain(conversation.send('And here?'))
      expect(again.at(-1)).toMatchObject({ status: 'completed', finalMessage: 'On the first.', threadId: one.threadId })
      expect(inputOf(model.requests[2])).not.toContain('On the fork, which word?')
    },
    TEST_MS,
  )

  it(
    'close() in the middle of a turn: the turn ends cancelled, the queued one never starts, nothing is left once it settled',
    async () => {
      const { options, model, mark } = await setup([hangingMessage({ id: 'resp_1', itemId: 'msg_1', delta: 'Thinking' })])
      const conversation = open(options)
      const turn = conversation.send('Take your time.')
      const queued = conversation.send('Then this.', { whileRunning: 'queue' })
      let closing: Promise<void> | undefined
      const events = await drain(turn, (event) => {
        if (event.type === 'messageDelta' && closing === undefined) closing = conversation.close()
      })
      expect(closing, 'the model streamed').toBeDefined()
      await closing
      expect(liveWithMarker(mark), 'nothing is left once close() settled').toEqual([])
      expect(liveInGroup(started(events).pid)).toEqual([])
      expect(events.at(-1)).toMatchObject({ status: 'cancelled', abortReason: { code: 'CONVERSATION_CLOSED' } })
      expect(await queued.outcome).toMatchObject({ status: 'cancelled', turnId: null })
      expect(model.requests).toHaveLength(1)
      expect(conversation.running).toBeNull()
    },
    TEST_MS,
  )
})

describe.skipIf(process.platform !== 'linux')('real codex app-server: the host dies while a conversation waits', () => {
  it(
    "SIGKILL with the next turn's child prepared: the guard ends it",
    async () => {
      const { options } = await setup([messageResponse(['Done.'], { id: 'resp_1', itemId: 'msg_1' })])
      const host = new Host('SIGKILL', { ...options, prompt: 'Say done.' } as never, { HOST_CONVERSATION: '1' })
      cleanups.push(async () => {
        const killed = await host.dispose()
        expect(killed, 'the clean-up had to kill what the test left').toEqual([])
      })
      await host.until((e) => (e as { type: string }).type === 'ready', 120_000)
      expect(host.events.find((e) => e.type === 'terminal')).toMatchObject({ status: 'completed' })
      expect(host.events.at(-1)).toHaveProperty('threadId')
      expect(await eventually(() => host.guard() !== null, SETTLE_MS), 'a guard watches the waiting child').toBe(true)
      const guard = host.guard()!
      const marker = host.marker(guard)
      // What the host's children left running: the prepared child (the first turn's is gone).
      const waitingChildren = liveWithTreeMarker(`${marker}-`, { prefix: true })
      host.track(waitingChildren)
      expect(waitingChildren.length, 'the prepared child runs').toBeGreaterThan(0)
      await host.end()
      expect(await eventually(() => !isAlive(guard), SETTLE_MS), 'the guard left').toBe(true)
      expect(running(waitingChildren)).toEqual([])
      expect(liveWithTreeMarker(`${marker}-`, { prefix: true })).toEqual([])
    },
    TEST_MS,
  )
})
