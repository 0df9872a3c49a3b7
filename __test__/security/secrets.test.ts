// Canaries: values of the child's environment, bearer-token variables and HTTP headers never
// appear in an event, a terminal failure or a TypeError the addon produces, on any path; what
// the child itself prints on stderr is redacted for credential-named variables; and no
// secret-bearing option reaches a command line, which every local user can read: a watch reads
// every process's `/proc/<pid>/cmdline` again and again while a turn and a call run (the real
// binary's turn and call: codex-home.test.ts).
import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { loginWithApiKey, runTurn } from '../../index.js'
import type { RunTurnOptions } from '../../index.js'
import { PROMPT, cleanupFakes, collect, fakeCodexPath, fakeRun, fakeTurn, scenarios, tempDir, writeFake } from '../support/fake.js'
import type { ScenarioName } from '../support/fake.js'
import { FIRING_MS, eventually, watchForSecrets } from '../support/procs.js'
import type { FakeCodexScript } from '../../testing/index.js'

afterEach(cleanupFakes)

const canary = (what: string) => `canary-${what}-${randomBytes(6).toString('hex')}`

function expectNoCanary(value: unknown, canaries: string[]) {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  for (const c of canaries) expect(text.includes(c), `canary ${c} in ${text.slice(0, 300)}`).toBe(false)
}

describe('no canary in events or failures, whatever ends the turn', () => {
  // Each scenario ends a different way: completed, turn failure, exit with a stderr tail,
  // parse failure with the offending line, request timeout, interrupt.
  const endings: Array<[string, ScenarioName | FakeCodexScript, Partial<RunTurnOptions>]> = [
    ['happy', 'happy', {}],
    ['turn-failed', 'turn-failed', {}],
    ['crash', 'crash', {}],
    ['malformed-mid-stream', 'malformed-mid-stream', {}],
    // Room for the fake's start-up (it applies to initialize too): the child must get its env.
    ['no-turn-start-response', 'no-turn-start-response', { requestTimeoutMs: FIRING_MS }],
    ['close-stdout mid-stream', scenarios.fault('close-stdout', 'mid-stream'), {}],
  ]
  for (const [name, scenario, extra] of endings) {
    it(name, async () => {
      const secrets = [canary('env'), canary('token')]
      const { events, terminal, log } = await fakeRun(scenario, {
        ...extra,
        env: { RENNET_CANARY_ENV: secrets[0], RENNET_CANARY_TOKEN: secrets[1] },
      })
      // The child did get them (not vacuous).
      expect(log.start()).toBeTruthy()
      expectNoCanary(events, secrets)
      expectNoCanary(terminal, secrets)
    })
  }

  it('a child that prints credential-named variables on stderr: redacted in diagnostics and the tail', async () => {
    const token = canary('token')
    const plain = canary('plain')
    const { events, terminal } = await fakeRun('crash', {
      fake: { echoEnv: ['RENNET_CANARY_TOKEN', 'RENNET_PLAIN_SETTING'] },
      env: { RENNET_CANARY_TOKEN: token, RENNET_PLAIN_SETTING: plain },
    })
    const lines = events.flatMap((e) => (e.type === 'diagnostic' ? [e.line] : []))
    expect(lines).toContain('config: RENNET_CANARY_TOKEN=<redacted>')
    // A variable whose name does not say it is a credential is passed on as printed.
    expect(lines).toContain(`config: RENNET_PLAIN_SETTING=${plain}`)
    expect(terminal.failure?.code).toBe('PROCESS_EXITED')
    expect((terminal.failure?.detail as { stderrTail: string[] }).stderrTail).toContain('config: RENNET_CANARY_TOKEN=<redacted>')
    expectNoCanary(events, [token])
  })

  it('spawn failures name the program, not the environment', async () => {
    const secret = canary('env')
    for (const codexPath of ['/nonexistent/codex', tempDir()]) {
      const turn = runTurn({ prompt: PROMPT, cwd: tempDir(), codexPath, env: { RENNET_CANARY_ENV: secret } })
      const events = await collect(turn)
      expect(events.map((e) => e.type)).toEqual(['terminal'])
      expect((await turn.outcome).failure?.source).toBe('spawn')
      expectNoCanary(events, [secret])
    }
  })

  it('MCP policy failures name the server, never its header, token variable or URL secrets', async () => {
    const header = canary('header')
    const token = canary('token')
    const policies = [
      // not loopback, with a credential in a header
      { url: 'http://example.com/mcp', httpHeaders: { 'X-Key': header } },
      // a header name that is not a token, with the value next to it
      { url: 'http://127.0.0.1:9/mcp', httpHeaders: { 'Bad Header': header } },
      // a header value with a newline
      { url: 'http://127.0.0.1:9/mcp', httpHeaders: { 'X-Key': `${header}\r\nInjected: 1` } },
      // an invalid bearer-token variable name (it is secret-adjacent: not echoed either)
      { url: 'http://127.0.0.1:9/mcp', bearerTokenEnvVar: `${token}=x` },
    ]
    for (const server of policies) {
      const turn = runTurn({
        prompt: PROMPT,
        cwd: tempDir(),
        codexPath: fakeCodexPath(tempDir()),
        env: { RENNET_CANARY_TOKEN: token },
        mcp: { servers: { probe: server } },
      })
      const events = await collect(turn)
      const outcome = await turn.outcome
      expect(outcome.failure?.code).toMatch(/^MCP_/)
      expect(outcome.failure?.message).toContain('probe')
      expectNoCanary(events, [header, token])
    }
  })
})

describe('wrong options are a TypeError naming the option, without its value', () => {
  const secret = canary('value')
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['env as a string', { env: `TOKEN=${secret}` }, /options\.env/],
    ['env value not a string', { env: { TOKEN: [secret] } }, /options\.env\.TOKEN/],
    ['env name with =', { env: { [`A=${secret}`]: 'x' } }, /options\.env/],
    ['httpHeaders as a string', { mcp: { servers: { s: { url: 'http://127.0.0.1:1/', httpHeaders: `X: ${secret}` } } } }, /options\.mcp\.servers\.s\.httpHeaders/],
    ['header value not a string', { mcp: { servers: { s: { url: 'http://127.0.0.1:1/', httpHeaders: { X: { v: secret } } } } } }, /options\.mcp\.servers\.s\.httpHeaders\.X/],
    ['server as a string', { mcp: { servers: { s: secret } } }, /options\.mcp\.servers\.s/],
    // A URL is written into the child's command line: nothing in it may be a secret.
    ['MCP url with a query string', { mcp: { servers: { s: { url: `http://127.0.0.1:1/mcp?api_key=${secret}` } } } }, /^options\.mcp\.servers\.s\.url: .*query string.*bearerTokenEnvVar/],
    ['MCP url with a fragment', { mcp: { servers: { s: { url: `http://127.0.0.1:1/mcp#${secret}` } } } }, /^options\.mcp\.servers\.s\.url: .*fragment/],
    ['MCP url with userinfo', { mcp: { servers: { s: { url: `http://user:${secret}@127.0.0.1:1/mcp` } } } }, /^options\.mcp\.servers\.s\.url: .*userinfo/],
    ['prompt as an object', { prompt: { text: secret } }, /options\.prompt/],
    ['model as a number', { model: 5 }, /options\.model/],
    ['threadId as an array', { threadId: [secret] }, /options\.threadId/],
    ['interruptGraceMs negative', { interruptGraceMs: -1 }, /options\.interruptGraceMs/],
    ['requestTimeoutMs as a string', { requestTimeoutMs: secret }, /options\.requestTimeoutMs/],
    ['access unknown', { access: 'root' }, /options\.access/],
    ['unknown option', { promptt: 'x' }, /promptt/],
    ['signal not an AbortSignal', { signal: { aborted: false } }, /options\.signal/],
  ]
  for (const [name, bad, names] of cases) {
    it(name, async () => {
      const dir = tempDir()
      const { codexPath, log } = writeFake('minimal', {}, dir)
      let thrown: unknown
      try {
        runTurn({ prompt: PROMPT, cwd: dir, codexPath, ...bad } as RunTurnOptions)
      } catch (e) {
        thrown = e
      }
      expect(thrown).toBeInstanceOf(TypeError)
      const message = (thrown as TypeError).message
      expect(message).toMatch(names)
      expect(message.includes(secret), message).toBe(false)
      // Nothing was started.
      await new Promise((r) => setTimeout(r, 100))
      expect(log.runs()).toEqual([])
    })
  }
})

describe('no secret-bearing option reaches a command line (every process polled while it runs)', () => {
  /** An environment entry that marks the processes under test, for the watch to find them by. */
  const marker = () => ({ name: 'RENNET_CANARY_RUN', value: randomUUID() })

  it('a turn with an MCP policy, header values, a bearer-token variable, env values and OPENAI_API_KEY', async () => {
    const secrets = { env: canary('env'), apiKey: `sk-${canary('openai')}`, token: canary('token'), header: canary('header'), url: canary('url') }
    const mark = marker()
    // The control: a process of the test's own with a canary in its argv, which the watch must see.
    const control = canary('control')
    const controlProcess = spawn('/bin/sh', ['-c', 'sleep 300; :', control], { stdio: 'ignore', detached: true })
    const watch = watchForSecrets({ argv: { ...secrets, control }, mark: `${mark.name}=${mark.value}` })
    let seen
    try {
      // A URL cannot carry one: it would be written into the child's argv, so it is refused
      // before anything starts.
      const inUrl = { tools: { url: `http://127.0.0.1:9/mcp?api_key=${secrets.url}` } }
      expect(() => runTurn({ prompt: PROMPT, cwd: tempDir(), codexPath: fakeCodexPath(tempDir()), mcp: { servers: inUrl } })).toThrow(TypeError)
      const { turn, log } = fakeTurn(
        { steps: [{ type: 'approval', id: 'call_hold', command: 'touch /outside/x' }, { type: 'message', text: 'done' }] },
        {
          env: { [mark.name]: mark.value, RENNET_CANARY_ENV: secrets.env, OPENAI_API_KEY: secrets.apiKey, TOOLS_TOKEN: secrets.token },
          mcp: { servers: { tools: { url: 'http://127.0.0.1:9/mcp', bearerTokenEnvVar: 'TOOLS_TOKEN', httpHeaders: { 'X-Canary': secrets.header } } } },
          access: 'ask',
          // The turn waits here until the watch has read the child's command line many times.
          onServerRequest: async () => {
            await eventually(() => watch.marked() >= 20, 30_000)
            return { decision: 'decline' }
          },
        },
      )
      const events = await collect(turn)
      expect(events.at(-1)).toMatchObject({ type: 'terminal', status: 'completed' })
      // The policy reached Codex (so its values were there to leak): `mcp list`, then the app-server.
      expect(log.runs().map((r) => r.argv.slice(-3).join(' '))).toContain('mcp list --json')
    } finally {
      seen = await watch.stop()
      process.kill(-controlProcess.pid!, 'SIGKILL')
    }
    expect(seen.marked, "the watch saw the turn's processes").toBeGreaterThanOrEqual(20)
    expect(seen.hits).toEqual([`control in the command line of ${controlProcess.pid}: /bin/sh -c sleep 300; : ${control}`])
  })

  it('loginWithApiKey: the key is in no command line and no environment', async () => {
    const key = `sk-${canary('login')}`
    const mark = marker()
    const watch = watchForSecrets({ argv: { key }, environ: { key }, mark: `${mark.name}=${mark.value}` })
    const { codexPath } = writeFake(
      { account: { account: { type: 'apiKey' }, requiresOpenaiAuth: true }, calls: {
          'account/login/start': {
            result: { type: 'apiKey' },
            delayMs: 100,
            notifications: [{ method: 'account/login/completed', params: { loginId: null, success: true, error: null } }],
          },
        },
      },
      {},
      tempDir(),
    )
    let seen
    try {
      // A call's child lives for a moment: calls until the watch has seen some of them.
      for (let calls = 0; calls < 50 && watch.marked() < 5; calls++) {
        await loginWithApiKey(key, { codexPath, env: { [mark.name]: mark.value, OPENAI_API_KEY: '', CODEX_API_KEY: '' } })
      }
    } finally {
      seen = await watch.stop()
    }
    expect(seen.marked, "the watch saw the calls' processes").toBeGreaterThanOrEqual(5)
    expect(seen.hits).toEqual([])
  })
})
