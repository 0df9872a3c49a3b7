// A property-based sweep of the public API with generated bad (and good) input, against the test
// kit's fake app-server. For every public function, each generated case must end in exactly one
// of the contract's ways: a TypeError naming the option (nothing started), or — for what runs —
// exactly one terminal event last / one settled promise whose rejection is a coded CodexError.
// Nothing is left running, no rejection goes unhandled, no prototype is touched.
//
// Seeded and reproducible: RENNET_SWEEP_SEED (default fixed) and RENNET_SWEEP_RUNS (a multiplier
// of the CI size, default 1; `pnpm sweep` runs 5× and draws a seed of its own, printed by
// fast-check on failure).
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { types } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CodexError,
  discoverCodex,
  forkThread,
  listModels,
  listThreads,
  prepareTurn,
  readAccount,
  readThread,
  runTurn,
  runUtility,
} from '../../index.js'
import type { HarnessEvent, RunTurnOptions, Turn } from '../../index.js'
import { fakeCodexRuns } from '../../testing/index.js'
import { cleanupFakes, tempDir, writeFake } from '../support/fake.js'

const SEED = Number(process.env.RENNET_SWEEP_SEED ?? 20261202)
const SCALE = Number(process.env.RENNET_SWEEP_RUNS ?? 1)
const runs = (n: number) => Math.max(1, Math.round(n * SCALE))
const params = (n: number) => ({ seed: SEED, numRuns: runs(n), endOnFailure: true })

/** Every code a failure can carry (index.d.ts FailureCode). */
const CODES = new Set([...readFileSync(join(__dirname, '..', '..', 'types', 'surface.d.ts'), 'utf8').matchAll(/^\s*\| '([A-Z_]+)'$/gm)].map((m) => m[1]))

/** How a TypeError's message begins: the option's path, or the function's name. */
const NAMED = /^(options|input|steer|start|runTurn|prepareTurn|runUtility|readAccount|listModels|listThreads|readThread|forkThread|discoverCodex)([.[:]| must| is| has| could| refers)/

let dir: string
let codexPath: string
let hanging: string
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
const prototypes = () => [Object.prototype, Array.prototype, Function.prototype, String.prototype].map((p) => Object.getOwnPropertyNames(p).sort().join())
let before: string[]

beforeAll(() => {
  dir = tempDir()
  codexPath = writeFake('minimal', { calls: { 'model/list': { result: { data: [], nextCursor: null } }, 'thread/list': { result: { data: [], nextCursor: null } } } }, dir).codexPath
  hanging = writeFake({ steps: [{ type: 'hang' }] }, {}, tempDir()).codexPath
  process.on('unhandledRejection', onUnhandled)
  before = prototypes()
})

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled)
  await cleanupFakes()
})

const runsSoFar = () => fakeCodexRuns(codexPath).length

/** Cases that started something, per sweep: a sweep that only ever met TypeErrors would prove little. */
const started: Record<string, number> = {}
const count = (what: string) => (started[what] = (started[what] ?? 0) + 1)
/** At least this share of a sweep's cases must run, not just be refused. */
function expectRan(what: string, cases: number, share = 0.1) {
  expect(started[what] ?? 0, `${what}: ${started[what] ?? 0} of ${runs(cases)} cases ran`).toBeGreaterThanOrEqual(Math.floor(runs(cases) * share))
}

// ---------------------------------------------------------------------------------------------
// hostile values: everything JSON would drop or change, and plain wrong types

function revoked() {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}
function cyclic() {
  const o: Record<string, unknown> = { a: 1 }
  o.self = o
  return o
}
function deep(levels: number) {
  const root: Record<string, unknown> = {}
  let at = root
  for (let i = 0; i < levels; i++) at = (at.x = {}) as Record<string, unknown>
  return root
}
const throwingGetter = () => Object.defineProperty({}, 'k', { enumerable: true, get: () => { throw new Error('getter') } })

/**
 * A hostile value is made only when a case runs (`real`): fast-check itself looks into the values
 * it generates (to clone or print them), which a revoked Proxy or a throwing getter would break.
 */
class Lazy {
  constructor(readonly make: () => unknown, readonly name: string) {}
  toString() {
    return `<${this.name}>`
  }
}

/** A Proxy of what `recipe` makes (a store's observable array, a reactive object): read as the data it is. */
const viaProxy = (recipe: unknown) => new Lazy(() => new Proxy(real(recipe) as object, {}), 'a Proxy of it')

/** `value` with every Lazy made: plain objects and arrays rebuilt, everything else as it is. */
function real(value: unknown): unknown {
  if (value instanceof Lazy) return value.make()
  if (Array.isArray(value)) return value.map(real)
  if (value !== null && typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    const copy: Record<string, unknown> = {}
    for (const key of Object.keys(value)) {
      Object.defineProperty(copy, key, { value: real((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true })
    }
    return copy
  }
  return value
}

const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<() => unknown>(
    () => () => 'x',
    () => Symbol('s'),
    () => 10n,
    () => NaN,
    () => Infinity,
    () => -Infinity,
    () => new Map([['a', 1]]),
    () => new Set([1]),
    () => new Date(0),
    () => new (class Instance { a = 1 })(),
    () => new Proxy({}, {}),
    () => new Proxy({ A: 'x' }, {}),
    () => new Proxy({ A: 'x' }, { get: () => { throw new Error('trap') } }),
    () => new Proxy([{ type: 'text', text: 'x' }], { ownKeys: () => { throw new Error('trap') } }),
    () => new Proxy(new Map([['a', 1]]), {}),
    revoked,
    cyclic,
    () => deep(5_000),
    () => ({ toJSON: () => ({}) }),
    throwingGetter,
    () => JSON.parse('{"__proto__": {"polluted": true}}'),
    () => 'x'.repeat(100_000),
    () => '\ud800',
    () => -1,
    () => 1.5,
    () => 2 ** 31,
    () => Number.MAX_SAFE_INTEGER,
    () => null,
    () => [],
    () => [undefined],
    () => '',
  ).map((make) => new Lazy(make, make.toString().slice(0, 40))),
  fc.anything({ maxDepth: 2 }),
)

/**
 * Each key of `valid` either left out, valid, or (one time in `hostility`) hostile; plus now and
 * then a key that is no option. Half the cases are nearly valid, so that what runs is swept too.
 */
function optionsOf(valid: Record<string, fc.Arbitrary<unknown>>, fixed: Record<string, unknown>) {
  return fc.oneof(optionsWith(valid, fixed, 40), optionsWith(valid, fixed, 4))
}

function optionsWith(valid: Record<string, fc.Arbitrary<unknown>>, fixed: Record<string, unknown>, hostility: number) {
  const entries = Object.entries(valid).map(([key, arb]) => [key, fc.option(fc.oneof({ weight: hostility - 1, arbitrary: arb }, { weight: 1, arbitrary: hostile }), { nil: undefined, freq: 2 })] as const)
  return fc
    .tuple(
      fc.record(Object.fromEntries(entries)),
      fc.oneof({ weight: hostility * 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), hostile) }),
    )
    .map(([picked, stray]) => {
      const options: Record<string, unknown> = { ...fixed }
      for (const [key, value] of Object.entries(picked)) if (value !== undefined) options[key] = value
      if (stray && !(stray[0] in options) && stray[0] !== '__proto__') options[stray[0]] = stray[1]
      return options
    })
}

const text = fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.constantFrom('hi', 'say hello', ''))
const item = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constant('text'), text }) },
  fc.record({ type: fc.constant('image'), url: fc.constantFrom('https://example.com/a.png', 'data:image/png;base64,AA==', 'ftp://x') }),
  fc.record({ type: fc.constant('localImage'), path: fc.constantFrom('/nonexistent.png', 'relative.png') }),
  fc.record({ type: fc.constantFrom('video', 'text'), text: hostile }),
) as fc.Arbitrary<unknown>
const signal = fc.constantFrom(
  () => new AbortController().signal,
  () => AbortSignal.abort('no'),
  () => AbortSignal.abort(revoked()),
).map((make) => new Lazy(make, 'signal'))
const millis = (min: number) => fc.oneof(fc.integer({ min, max: 60_000 }), fc.constantFrom(min, 2 ** 31 - 1))
const schema = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }) },
  { weight: 1, arbitrary: fc.constantFrom({ type: 'object' }, { type: 'string' }) },
)

function turnOptions() {
  // Mostly a prompt or input items, now and then both or neither.
  const said = fc.oneof(
    { weight: 8, arbitrary: fc.oneof(text.map((prompt) => ({ prompt })), fc.array(item, { minLength: 1, maxLength: 3 }).map((input) => ({ input }))) },
    { weight: 2, arbitrary: fc.array(item, { minLength: 1, maxLength: 3 }).map((input) => ({ input: viaProxy(input) })) },
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.record({ prompt: text, input: fc.array(item, { maxLength: 2 }) }) },
  )
  return fc.tuple(said, turnRest()).map(([words, rest]) => ({ ...rest, ...words }))
}

function turnRest() {
  return optionsOf(
    {
      model: fc.constantFrom('gpt-x', ''),
      access: fc.constantFrom('full', 'readOnly', 'full', 'full', 'full', 'write'),
      effort: fc.constantFrom('low', 'high', 'low', 'high', 'low', ''),
      threadId: fc.oneof({ weight: 4, arbitrary: fc.constant('0000-thread') }, fc.constant(''), fc.constant(new Lazy(() => 'x'.repeat(100_000), '100 KB'))),
      mcp: fc.constantFrom({ servers: {} }, { servers: {} }, { servers: {} }, { servers: { t: { url: 'http://127.0.0.1:9/mcp' } } }, {}),
      env: fc.dictionary(fc.constantFrom('A', 'B', 'TOKEN'), fc.oneof({ weight: 9, arbitrary: fc.string({ maxLength: 5 }) }, { weight: 1, arbitrary: hostile }), { maxKeys: 2 }),
      interruptGraceMs: millis(0),
      requestTimeoutMs: millis(1),
      signal,
      outputSchema: schema,
    },
    { cwd: dir, codexPath },
  )
}

// ---------------------------------------------------------------------------------------------
// the contract

/** A TypeError naming what was wrong, and no child started for it. */
function expectNamedTypeError(error: unknown, runsBefore: number) {
  expect(error, String(error)).toBeInstanceOf(TypeError)
  expect((error as Error).message).toMatch(NAMED)
  expect(runsSoFar()).toBe(runsBefore)
}

/** What `start` returns; or, where it throws, undefined once the throw is a TypeError naming the option and nothing started. */
function startedOrRefused<T>(start: () => T): T | undefined {
  const runsBefore = runsSoFar()
  try {
    return start()
  } catch (error) {
    expectNamedTypeError(error, runsBefore)
    return undefined
  }
}

/** A coded CodexError of the one family. */
function expectCoded(error: unknown) {
  expect(error).toBeInstanceOf(CodexError)
  const code = (error as CodexError).code
  expect(CODES.has(code), code).toBe(true)
  expect(typeof (error as CodexError).retryable).toBe('boolean')
}

/** Every event of `turn`: exactly one terminal, last. */
async function drain(turn: Turn) {
  const events: HarnessEvent[] = []
  for await (const event of turn) events.push(event)
  const terminals = events.filter((e) => e.type === 'terminal')
  expect(terminals).toHaveLength(1)
  expect(events.at(-1)!.type).toBe('terminal')
  const terminal = terminals[0] as Extract<HarnessEvent, { type: 'terminal' }>
  if (terminal.failure) expect(CODES.has(terminal.failure.code), terminal.failure.code).toBe(true)
}

/** A promise-returning function: never throws; settles; a rejection is a named TypeError or a coded CodexError. */
async function expectSettles(what: string, call: () => Promise<unknown>) {
  const runsBefore = runsSoFar()
  let promise: Promise<unknown> | undefined
  expect(() => (promise = call())).not.toThrow()
  let outcome: unknown = undefined
  await promise!.catch((error) => void (outcome = error))
  if (outcome instanceof TypeError) expectNamedTypeError(outcome, runsBefore)
  else {
    count(what)
    if (outcome !== undefined) expectCoded(outcome)
  }
}

const SWEEP_TIMEOUT = 600_000

describe('the public API swept with generated input', () => {
  it('runTurn: a TypeError naming the option, or one terminal event last', async () => {
    await fc.assert(
      fc.asyncProperty(turnOptions(), async (recipe) => {
        const options = real(recipe)
        const turn = startedOrRefused(() => runTurn(options as unknown as RunTurnOptions))
        if (!turn) return
        count('runTurn')
        await drain(turn)
      }),
      params(300),
    )
    expectRan('runTurn', 300)
  }, SWEEP_TIMEOUT)

  it('prepareTurn and start(): a TypeError naming the option, or one terminal event last', async () => {
    await fc.assert(
      fc.asyncProperty(turnOptions(), fc.oneof(text, fc.array(item, { maxLength: 2 }), fc.record({ prompt: fc.option(text, { nil: undefined }), effort: fc.option(hostile, { nil: undefined }) }), hostile), fc.integer({ min: 1, max: 600_000 }), async (recipe, inputRecipe, idle) => {
        const { prompt: _p, input: _i, outputSchema: _o, effort: _e, ...rest } = real(recipe) as Record<string, unknown>
        const input = real(inputRecipe)
        const prepared = startedOrRefused(() => prepareTurn({ ...rest, idleTimeoutMs: idle } as never))
        if (!prepared) return
        let turn: Turn
        try {
          turn = prepared.start(input as never)
        } catch (error) {
          expect(error).toBeInstanceOf(TypeError)
          expect((error as Error).message).toMatch(NAMED)
          prepared.dispose()
          // Disposed: ready settles, with the thread it had or a coded failure.
          const ready = await prepared.ready
          if ('failure' in ready) expect(CODES.has(ready.failure.code), ready.failure.code).toBe(true)
          else expect(typeof ready.threadId).toBe('string')
          return
        }
        count('prepareTurn')
        await drain(turn)
      }),
      params(100),
    )
    expectRan('prepareTurn', 100)
  }, SWEEP_TIMEOUT)

  it('steer: resolves, or rejects with a named TypeError or a SteerError', async () => {
    const turn = runTurn({ prompt: 'hang', cwd: dir, codexPath: hanging })
    const events = drain(turn)
    await fc.assert(
      fc.asyncProperty(fc.oneof(text, fc.array(item, { maxLength: 3 }), fc.array(item, { minLength: 1, maxLength: 3 }).map(viaProxy), hostile), async (recipe) => {
        const input = real(recipe)
        let promise: Promise<void> | undefined
        expect(() => (promise = turn.steer(input as never))).not.toThrow()
        let outcome: unknown
        await promise!.catch((error) => void (outcome = error))
        if (outcome instanceof TypeError) expect((outcome as Error).message).toMatch(NAMED)
        else if (outcome !== undefined) {
          expectCoded(outcome)
          expect((outcome as Error).name).toBe('SteerError')
        }
      }),
      params(200),
    )
    turn.abort('swept')
    await events
  }, SWEEP_TIMEOUT)

  it('runUtility: settles once, a named TypeError or a coded UtilityError', async () => {
    await fc.assert(
      fc.asyncProperty(turnOptions(), fc.oneof({ weight: 5, arbitrary: schema }, { weight: 1, arbitrary: hostile }), async (recipe, schemaRecipe) => {
        const options = real(recipe) as Record<string, unknown>
        const outputSchema = real(schemaRecipe)
        await expectSettles('runUtility', () => runUtility({ ...options, outputSchema } as never))
      }),
      params(150),
    )
    expectRan('runUtility', 150)
  }, SWEEP_TIMEOUT)

  it('the calls around turns: settle once, a named TypeError or a coded CallError', async () => {
    const common = {
      requestTimeoutMs: millis(1),
      signal,
      env: fc.dictionary(fc.constantFrom('A', 'B'), fc.oneof({ weight: 9, arbitrary: fc.string({ maxLength: 5 }) }, { weight: 1, arbitrary: hostile }), { maxKeys: 2 }),
      cwd: fc.constantFrom(dir, dir, dir, 'relative'),
    }
    // Each call's own options beside the common ones (another call's now and then, through `hostile` keys).
    const own: Array<Record<string, fc.Arbitrary<unknown>>> = [
      {},
      { includeHidden: fc.boolean() },
      { limit: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 5 }) }, { weight: 1, arbitrary: hostile }), archived: fc.boolean() },
      { includeTurns: fc.boolean() },
      { lastTurnId: fc.constantFrom('t', 't', '') },
      {},
    ]
    const calls: Array<(threadId: unknown, options: unknown) => Promise<unknown>> = [
      (_t, o) => readAccount(o as never),
      (_t, o) => listModels(o as never),
      (_t, o) => listThreads(o as never),
      (t, o) => readThread(t as never, o as never),
      (t, o) => forkThread(t as never, o as never),
      // Discovery of a Codex that is not there (a home and PATH of its own): it must say so, not hang.
      (_t, o) => {
        const plainObject = o !== null && typeof o === 'object' && !types.isProxy(o) && Object.getPrototypeOf(o) === Object.prototype
        const contained = { env: { PATH: dir, HOME: dir, SHELL: '/nonexistent/shell' } }
        return discoverCodex((plainObject ? { ...(o as object), ...contained } : o) as never)
      },
    ]
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...calls.keys()).chain((which) => fc.tuple(fc.constant(which), fc.oneof({ weight: 4, arbitrary: fc.constant('0000-thread') }, { weight: 1, arbitrary: hostile }), fc.oneof({ weight: 6, arbitrary: which === 5 ? fc.constant({}) : optionsOf({ ...common, ...own[which] }, { codexPath }) }, { weight: 1, arbitrary: hostile }))), async ([which, threadRecipe, recipe]) => {
        const [threadId, options] = [real(threadRecipe), real(recipe)]
        await expectSettles('calls', () => calls[which](threadId, options))
      }),
      params(200),
    )
    expectRan('calls', 200)
  }, SWEEP_TIMEOUT)

  it('left no prototype touched and no rejection unhandled', async () => {
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(prototypes()).toEqual(before)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(unhandled).toEqual([])
  })
})
