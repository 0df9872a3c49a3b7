// Canaries: values of the child's environment, bearer-token variables and HTTP headers never
// appear in an event, a terminal failure or a TypeError the addon produces, on any path; what
// the child itself prints on stderr is redacted for credential-named variables.
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { runTurn } from '../../index.js'
import type { RunTurnOptions } from '../../index.js'
import { PROMPT, cleanupFakes, collect, fakeCodexPath, fakeRun, scenarios, tempDir, writeFake } from '../support/fake.js'
import type { ScenarioName } from '../support/fake.js'
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
    ['no-turn-start-response', 'no-turn-start-response', { requestTimeoutMs: 300 }],
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
      // not loopback, with a credential in the query
      { url: `http://example.com/mcp?key=${header}`, httpHeaders: { 'X-Key': header } },
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
