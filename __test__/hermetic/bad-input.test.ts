// Bad input fails closed: options are read as given (not as JSON.stringify leaves them), a
// signal or a logger cannot hurt the app, and a hostile abort reason is kept verbatim.
import { afterEach, describe, expect, it } from 'vitest'
import { CodexError, listThreads, loginWithApiKey, openConversation, prepareTurn, readAccount, runTurn, runUtility, setLogger } from '../../index.js'
import type { RunTurnOptions } from '../../index.js'
import { fakeCodexRuns } from '../../testing/index.js'
import { cleanupFakes, collect, tempDir, writeFake } from '../support/fake.js'

afterEach(async () => {
  setLogger(null)
  await cleanupFakes()
})

/** A fake Codex (that must never be started) and the options of a turn on it. */
function base() {
  const dir = tempDir()
  const { codexPath } = writeFake('minimal', {}, dir)
  return { codexPath, options: { prompt: 'hi', cwd: dir, codexPath } }
}

function thrownBy(run: () => unknown): Error {
  try {
    run()
  } catch (error) {
    return error as Error
  }
  throw new Error('nothing was thrown')
}

const cyclic = () => {
  const env: Record<string, unknown> = { A: 'x' }
  env.loop = env
  return env
}
const deep = (levels: number) => {
  const root: Record<string, unknown> = {}
  let at = root
  for (let i = 0; i < levels; i++) at = (at.x = {}) as Record<string, unknown>
  return root
}
const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

describe('options are checked as given: what JSON would drop or change is a TypeError naming it', () => {
  const cases: Array<[what: string, extra: Record<string, unknown>, message: RegExp]> = [
    ['a symbol for access (would run with full access)', { access: Symbol('readOnly') }, /^options\.access is a symbol/],
    ['NaN for mcp (would apply no MCP policy)', { mcp: NaN }, /^options\.mcp must be a finite number/],
    ['a Map of MCP servers (would be an empty policy)', { mcp: { servers: new Map([['tools', { url: 'http://127.0.0.1:9/mcp' }]]) } }, /^options\.mcp\.servers must be a plain object, not a Map/],
    ['a function for codexPath (would fall back to discovery)', { codexPath: () => '/x' }, /^options\.codexPath is a function/],
    ['NaN for threadId (would start a new thread)', { threadId: NaN }, /^options\.threadId must be a finite number/],
    ['a BigInt model', { model: 10n }, /^options\.model is a BigInt/],
    ['a cyclic env', { env: cyclic() }, /^options\.env\.loop refers back/],
    ['an env nested 20,000 deep', { env: deep(20_000) }, /^options\.env(\.x)+ is nested more than 100 levels deep/],
    ['a toJSON that would replace the options', { toJSON: () => ({ prompt: 'y' }) }, /^options\.toJSON: options are read as given/],
    ['a revoked Proxy', { env: revoked() }, /^options\.env is a revoked Proxy/],
    ['a Proxy of a Map', { mcp: { servers: new Proxy(new Map(), {}) } }, /^options\.mcp\.servers must be a plain object, not a Map/],
    ['a class instance', { env: new (class Env { A = 'x' })() }, /^options\.env must be a plain object, not an Env/],
    ['a Date', { locus: new Date() }, /^options\.locus must be a plain object, not a Date/],
    ['a symbol key', { env: { [Symbol('k')]: 'v' } }, /^options\.env has symbol keys/],
    ['an undefined input item', { prompt: undefined, input: [{ type: 'text', text: 'a' }, undefined] }, /^options\.input\[1\] is missing/],
    ['an idle timeout past 2^31 - 1 (prepareTurn)', { idleTimeoutMs: 2 ** 31 }, /^options\.idleTimeoutMs must be an integer number of milliseconds from 1 to 2147483647/],
  ]
  for (const [what, extra, message] of cases) {
    it(what, () => {
      const { codexPath, options } = base()
      const prepare = 'idleTimeoutMs' in extra
      const given = { ...options, ...extra } as RunTurnOptions
      if (prepare) delete (given as Partial<RunTurnOptions>).prompt
      const error = thrownBy(() => (prepare ? prepareTurn(given) : runTurn(given)))
      expect(error).toBeInstanceOf(TypeError)
      expect(error.message).toMatch(message)
      expect(fakeCodexRuns(codexPath)).toEqual([])
    })
  }

  it('a getter that throws is named', () => {
    const { codexPath, options } = base()
    const given = Object.defineProperty({ ...options }, 'model', { enumerable: true, get: () => { throw new Error('no') } })
    expect(thrownBy(() => runTurn(given)).message).toMatch(/^options\.model could not be read: its getter threw/)
    const env = Object.defineProperty({}, 'A', { enumerable: true, get: () => { throw new Error('no') } })
    expect(thrownBy(() => runTurn({ ...options, env })).message).toMatch(/^options\.env\.A could not be read: its getter threw/)
    expect(fakeCodexRuns(codexPath)).toEqual([])
  })

  it('a key named __proto__ stays a key: no prototype is touched', () => {
    const { codexPath, options } = base()
    const env = JSON.parse('{"__proto__": {"polluted": "yes"}}')
    const error = thrownBy(() => runTurn({ ...options, env }))
    expect(error.message).toMatch(/^options\.env\.__proto__: invalid type: map, expected a string/)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(fakeCodexRuns(codexPath)).toEqual([])
  })

  it('an outputSchema that is cyclic or too deep is a TypeError naming it (runTurn throws, runUtility rejects)', async () => {
    const { codexPath, options } = base()
    const schema: Record<string, unknown> = { type: 'object', properties: {} }
    ;(schema.properties as Record<string, unknown>).self = schema
    expect(thrownBy(() => runTurn({ ...options, outputSchema: schema })).message).toMatch(/^options\.outputSchema\.properties\.self refers back/)
    const tooDeep = { type: 'object', properties: deep(5_000) }
    expect(thrownBy(() => runTurn({ ...options, outputSchema: tooDeep }))).toBeInstanceOf(TypeError)
    await expect(runUtility({ ...options, outputSchema: schema })).rejects.toThrow(TypeError)
    await expect(runUtility({ ...options, outputSchema: tooDeep })).rejects.toThrow(/^options\.outputSchema(\.\w+)+ is nested more than 100 levels deep/)
    expect(fakeCodexRuns(codexPath)).toEqual([])
  })

  it('a call rejects (never throws) with the TypeError', async () => {
    let result: Promise<unknown> | undefined
    expect(() => (result = readAccount({ env: cyclic() as never }))).not.toThrow()
    await expect(result).rejects.toThrow(/^options\.env\.loop refers back/)
  })

  it('a second start() is a CodexError with a code', async () => {
    const dir = tempDir()
    const { codexPath } = writeFake('minimal', {}, dir)
    const prepared = prepareTurn({ cwd: dir, codexPath })
    const turn = prepared.start('hi')
    const error = thrownBy(() => prepared.start('again'))
    expect(error).toBeInstanceOf(CodexError)
    expect(error).toMatchObject({ code: 'ALREADY_STARTED', retryable: false })
    expect((await turn.outcome).status).toBe('completed')
  })
})

describe('a Proxy of plain data is read once, through its traps, as the data it is', () => {
  /** A Proxy of `target` that counts each trap it runs, by trap and key. */
  function counted<T extends object>(target: T) {
    const reads: string[] = []
    const handler: ProxyHandler<T> = {}
    for (const trap of ['get', 'getOwnPropertyDescriptor', 'ownKeys', 'getPrototypeOf', 'has'] as const) {
      ;(handler as Record<string, unknown>)[trap] = (...args: unknown[]) => {
        if (trap === 'get' || trap === 'getOwnPropertyDescriptor' || trap === 'has') reads.push(`${trap} ${String(args[1])}`)
        return (Reflect[trap] as (...a: unknown[]) => unknown)(...args)
      }
    }
    return { proxy: new Proxy(target, handler), reads }
  }
  const items = () => [{ type: 'text' as const, text: 'From a proxy.' }]
  const sent = (log: { request(m: string): { params: { input: unknown } } }, method = 'turn/start') => log.request(method).params.input

  it('runTurn, prepared.start() and conversation.send() take a Proxy of an input array', async () => {
    const cwd = tempDir()
    const { codexPath, log } = writeFake('minimal', {}, cwd)
    const { proxy, reads } = counted(items())
    expect((await runTurn({ prompt: undefined, input: proxy, cwd, codexPath }).outcome).status).toBe('completed')
    expect(sent(log)).toEqual([{ type: 'text', text: 'From a proxy.', text_elements: [] }])
    // Each element and the length once: what is sent is what was read.
    expect(reads.filter((r) => r.startsWith('get ')).sort()).toEqual(['get 0', 'get length'])

    const prepared = writeFake('minimal', {}, tempDir())
    expect((await prepareTurn({ cwd, codexPath: prepared.codexPath }).start(new Proxy(items(), {})).outcome).status).toBe('completed')
    expect(sent(prepared.log)).toEqual([{ type: 'text', text: 'From a proxy.', text_elements: [] }])

    const chat = writeFake('minimal', {}, tempDir())
    const conversation = openConversation({ cwd, codexPath: chat.codexPath, prepareNext: false })
    try {
      expect((await conversation.send(new Proxy(items(), {})).outcome).status).toBe('completed')
      expect(sent(chat.log)).toEqual([{ type: 'text', text: 'From a proxy.', text_elements: [] }])
    } finally {
      await conversation.close()
    }
  })

  it('turn.steer() takes a Proxy of an input array', async () => {
    const cwd = tempDir()
    const { codexPath, log } = writeFake({ steps: [{ type: 'delay', ms: 200 }, { type: 'message', text: 'Steered.' }] }, {}, cwd)
    const turn = runTurn({ prompt: 'hi', cwd, codexPath })
    const steered = turn.steer(new Proxy(items(), {}))
    await collect(turn)
    await expect(steered).resolves.toBeUndefined()
    expect(sent(log, 'turn/steer')).toEqual([{ type: 'text', text: 'From a proxy.', text_elements: [] }])
  })

  it('a Proxy of an options object, and of a nested object, is read as the object', async () => {
    const { codexPath, options } = base()
    const { proxy: env, reads } = counted({ RENNET_FROM_PROXY: 'yes' })
    const given = new Proxy({ ...options, env }, {})
    expect((await runTurn(given).outcome).status).toBe('completed')
    expect(reads.filter((r) => r.startsWith('get ')).sort()).toEqual(['get RENNET_FROM_PROXY'])
    expect(fakeCodexRuns(codexPath)).toHaveLength(1)
  })

  it('what a Proxy cannot give is a TypeError naming its path, before anything starts', () => {
    const { codexPath, options } = base()
    const throwing = new Proxy([{ type: 'text', text: 'x' }], {
      get(target, key) {
        if (key === '0') throw new Error('no')
        return Reflect.get(target, key)
      },
    })
    expect(thrownBy(() => runTurn({ ...options, prompt: undefined, input: throwing } as never)).message).toMatch(/^options\.input\[0\] could not be read: its Proxy threw/)
    const noKeys = new Proxy({}, { ownKeys: () => { throw new Error('no') } })
    expect(thrownBy(() => runTurn({ ...options, env: noKeys } as never)).message).toMatch(/^options\.env could not be read: its Proxy threw/)
    expect(thrownBy(() => runTurn(revoked() as never)).message).toMatch(/^runTurn: options is a revoked Proxy/)
    // Through a Proxy, a value that is not plain data is named as what it is.
    expect(thrownBy(() => runTurn({ ...options, prompt: undefined, input: new Proxy(new Set(), {}) } as never)).message).toMatch(
      /^options\.input must be a plain object, not a Set/,
    )
    expect(fakeCodexRuns(codexPath)).toEqual([])
  })
})

describe('inputs that cannot work are refused before anything starts', () => {
  it('an API key with whitespace or a control character, an empty cursor: a TypeError naming it, never showing it', async () => {
    const { codexPath } = base()
    for (const key of ['sk-a\nb', 'sk-a\u0000b', 'sk-a b', ' sk-ab', 'sk-ab\t', 'sk-a\u007fb', 'sk-a\u00a0b']) {
      const error = await loginWithApiKey(key, { codexPath }).then(() => undefined, (e: Error) => e)
      expect(error, JSON.stringify(key)).toBeInstanceOf(TypeError)
      expect(error?.message).toMatch(/^loginWithApiKey: apiKey must be a non-empty string without whitespace or control characters$/)
    }
    await expect(listThreads({ codexPath, cursor: '' })).rejects.toThrow(new TypeError('options.cursor must be a non-empty string'))
    expect(fakeCodexRuns(codexPath)).toEqual([])
  })
})

describe('signals that cannot hurt the app', () => {
  /** An AbortSignal whose `method` throws. */
  function hostileSignal(method: 'addEventListener' | 'removeEventListener') {
    const signal = new AbortController().signal
    Object.defineProperty(signal, method, {
      value() {
        throw new Error(`${method} refused`)
      },
    })
    return signal
  }

  it('an addEventListener that throws fails the call before any child exists', async () => {
    const { codexPath, options } = base()
    const signal = hostileSignal('addEventListener')
    expect(thrownBy(() => runTurn({ ...options, signal })).message).toBe('addEventListener refused')
    expect(thrownBy(() => prepareTurn({ cwd: options.cwd, codexPath, signal })).message).toBe('addEventListener refused')
    await expect(readAccount({ codexPath, signal })).rejects.toThrow('addEventListener refused')
    expect(fakeCodexRuns(codexPath)).toEqual([])
  })

  it('a removeEventListener that throws changes no result and rejects nothing', async () => {
    const { codexPath, options } = base()
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const signal = hostileSignal('removeEventListener')
      const terminal = await runTurn({ ...options, signal }).outcome
      expect(terminal.status).toBe('completed')
      const prepared = prepareTurn({ cwd: options.cwd, codexPath, signal })
      expect((await prepared.start('hi').outcome).status).toBe('completed')
      await expect(readAccount({ codexPath, signal })).resolves.toMatchObject({ requiresOpenaiAuth: false })
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })
})

describe('hostile abort reasons are kept verbatim as cause', () => {
  const hostile: Array<[string, () => unknown]> = [
    ['a revoked Proxy', revoked],
    ['an Error whose message getter throws', () => Object.defineProperty(new Error('x'), 'message', { get: () => { throw new Error('no message') } })],
  ]
  for (const [what, make] of hostile) {
    it(`${what}: runUtility and readAccount reject CANCELLED with it as cause`, async () => {
      const dir = tempDir()
      const { codexPath } = writeFake({ steps: [{ type: 'hang' }], calls: { 'account/rateLimits/read': 'never' } }, {}, dir)
      const reason = make()
      const utility = runUtility({ prompt: 'hi', cwd: dir, codexPath, outputSchema: { type: 'object', properties: {}, required: [], additionalProperties: false }, signal: AbortSignal.abort(reason) })
      // (A revoked Proxy cannot be awaited itself: a promise reads its `then`.)
      let error: Error | undefined
      await utility.catch((e: Error) => void (error = e))
      expect(error).toBeInstanceOf(CodexError)
      expect([error!.name, (error as CodexError).code, error!.cause === reason]).toEqual(['UtilityError', 'CANCELLED', true])
      const controller = new AbortController()
      const call = readAccount({ codexPath, signal: controller.signal })
      setTimeout(() => controller.abort(reason), 20)
      error = undefined
      await call.catch((e: Error) => void (error = e))
      expect([error!.name, (error as CodexError).code, error!.cause === reason]).toEqual(['CallError', 'CANCELLED', true])
    })
  }
})

describe('loggers that cannot hurt the app', () => {
  it('a logger that throws a hostile value is contained and reported once', async () => {
    const { options } = base()
    const warnings: string[] = []
    const onWarning = (w: Error) => warnings.push(w.message)
    process.on('warning', onWarning)
    try {
      setLogger(() => {
        throw revoked()
      }, { filter: 'rennet_codex=debug' })
      const terminal = await runTurn(options).outcome
      expect(terminal.status).toBe('completed')
      await new Promise((resolve) => setTimeout(resolve, 50))
      const ours = warnings.filter((w) => w.startsWith('@rennet/codex: the logger threw'))
      expect(ours.length).toBeLessThanOrEqual(1)
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('a slow logger never holds back events: records reach it between events, the rest dropped and counted', async () => {
    const dir = tempDir()
    const { codexPath } = writeFake({ steps: [{ type: 'message', id: 'msg_1', text: Array.from({ length: 3000 }, (_, i) => `d${i} `) }] }, {}, dir)
    const records: Array<{ dropped?: number }> = []
    setLogger((record) => {
      records.push(record)
      const until = Date.now() + 5
      while (Date.now() < until) {
        // a logger that takes its time
      }
    }, { filter: 'rennet_codex=trace' })
    let seenAtFirstEvent = -1
    let events = 0
    for await (const event of runTurn({ prompt: 'hi', cwd: dir, codexPath })) {
      if (seenAtFirstEvent < 0) seenAtFirstEvent = records.length
      events++
      if (event.type === 'terminal') expect(event.status).toBe('completed')
    }
    // The trace records of the start were queued first; the first event did not wait for them.
    expect(seenAtFirstEvent).toBeLessThan(5)
    expect(events).toBeGreaterThan(3000)
    setLogger(null)
  })
})
