// How events cross from the native queue into the async iterator: batches taken at once when
// ready, waited for otherwise, handed out one by one, in order, whatever the caller does.
import { afterEach, describe, expect, it } from 'vitest'
import type { HarnessEvent } from '../../index.js'
import { assertOneTerminalLast, cleanupFakes, fakeTurn, scenarios, within } from '../support/fake.js'

afterEach(cleanupFakes)

describe('batch hand-over', () => {
  it('keeps order when next() is called many times without waiting', async () => {
    const n = 5_000
    const { turn } = fakeTurn(scenarios.burst(n))
    const it = turn[Symbol.asyncIterator]()
    const events: HarnessEvent[] = []
    for (;;) {
      // Ten calls in flight at once, some answered from the current batch, some waiting.
      const results = await within(Promise.all(Array.from({ length: 10 }, () => it.next())), 15_000, 'next()')
      for (const r of results) if (!r.done) events.push(r.value)
      if (results.some((r) => r.done)) {
        // Once done, every later call is done too.
        expect(results.findIndex((r) => r.done)).toBe(results.filter((r) => !r.done).length)
        break
      }
    }
    const deltas = events.filter((e) => e.type === 'messageDelta').map((e) => (e as { delta: string }).delta)
    expect(deltas).toEqual(Array.from({ length: n }, (_, i) => String(i)))
    expect(assertOneTerminalLast(events).status).toBe('completed')
    expect((await it.next()).done).toBe(true)
  })

  it('answers a next() that waits on an empty queue with the terminal of an abort', async () => {
    const { turn } = fakeTurn('hang', { fake: { interrupt: 'ignore' }, interruptGraceMs: 200 })
    const it = turn[Symbol.asyncIterator]()
    for (;;) {
      const r = await within(it.next(), 10_000, 'next()')
      expect(r.done).toBe(false)
      if (!r.done && r.value.type === 'turnStarted') break
    }
    // Nothing more comes from the server: this call waits for the native side to hand over.
    const waiting = it.next()
    turn.abort()
    const r = await within(waiting, 10_000, 'the waiting next()')
    expect(r.done).toBe(false)
    expect(r.value).toMatchObject({ type: 'terminal', status: 'cancelled', cancellation: 'killed' })
    expect((await within(it.next(), 10_000, 'next() after the terminal')).done).toBe(true)
  })
})

describe('delta texts', () => {
  // Deltas cross as slices of the batch text, with lengths in UTF-16 code units: every kind of
  // character, and texts that look like the batch's own punctuation, must arrive unchanged.
  const texts = [
    '',
    'plain',
    '12:34',
    '=',
    ':',
    'J5:{}',
    'é',
    'ü and ß',
    '🙂',
    'a🙂b𝄞c',
    '\u{0}\u{1}\u{1f}',
    '\r\n\t',
    '"quoted" \\ backslash',
    '\u{2028}\u{2029}',
    '\u{feff}bom',
    '中文字符',
    'x'.repeat(70_000),
    '🙂'.repeat(20_000),
  ]
  const methods = [
    ['item/agentMessage/delta', 'messageDelta'],
    ['item/commandExecution/outputDelta', 'commandOutput'],
    ['item/reasoning/summaryTextDelta', 'reasoningDelta', 'summary'],
    ['item/reasoning/textDelta', 'reasoningDelta', 'text'],
  ] as const

  it('arrive unchanged, in order, with their item ids and indexes', async () => {
    const wire: Array<[string, string, string, number]> = []
    const expected: HarnessEvent[] = []
    texts.forEach((delta, i) => {
      for (const [m, [method, type, part]] of methods.entries()) {
        // Item ids repeat and change, including ids that look like batch text.
        const itemId = [`item_${m}`, '=', '3:abc', '🙂id'][(i + m) % 4]
        wire.push([method, itemId, delta, i])
        expected.push(part ? ({ type, itemId, delta, part, index: i } as HarnessEvent) : ({ type, itemId, delta } as HarnessEvent))
      }
    })
    const events: HarnessEvent[] = []
    for await (const e of fakeTurn(scenarios.deltas(wire)).turn) events.push(e)
    const deltas = events.filter((e) => ['messageDelta', 'commandOutput', 'reasoningDelta'].includes(e.type))
    expect(deltas.length).toBe(expected.length)
    deltas.forEach((e, i) => expect(e, `event ${i}`).toStrictEqual(expected[i]))
    expect(assertOneTerminalLast(events).status).toBe('completed')
  })
})
