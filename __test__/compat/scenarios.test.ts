// The compatibility suite: the turn scenarios the package's users rely on, run against the real
// `codex app-server` under test (RENNET_TEST_CODEX_BIN, else the pinned CLI) and the loopback
// mock Responses API. `pnpm compat` (scripts/compat.mjs) runs this file once per codex-cli
// version of the matrix and prints a version × scenario table: the column of a test is its
// title up to the colon.
//
// The assertions are the package's contract (events, terminal, usage, what reached the model,
// what never ran), not one version's wording. What every turn must keep (one terminal event,
// last; the started event names the binary under test and its version; nothing of the turn
// left running; config.toml untouched; the `rennet` originator) is checked by the harness.
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { startHttpMcpServer } from '../../scripts/mcp-fixture/mcp-servers.mjs'
import { codexUnderTest } from '../../testing/codex-home.js'
import { writeFakeCodex } from '../../testing/index.js'
import {
  execCommandResponse,
  functionCallOutputs,
  hangingMessage,
  jsonMessageResponse,
  mcpToolCallItem,
  messageResponse,
  offeredTools,
  response,
  usage,
} from '../../testing/mock-responses.js'
import { eventually } from '../support/procs.js'
import { runRealTurn, usageOf } from '../real/harness.js'

const STDIO_SERVER = resolve(__dirname, '../../scripts/mcp-fixture/stdio-server.mjs')

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/**
 * An MCP server the user has configured (the fixture stdio server): it appends a line to the
 * marker file if it is ever started. Returns the config.toml table and the recorded starts.
 */
function ambientServer(name: string) {
  const dir = mkdtempSync(join(tmpdir(), 'rennet-compat-mcp-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const marker = join(dir, 'starts.jsonl')
  const toml = [
    `[mcp_servers.${name}]`,
    `command = ${JSON.stringify(process.execPath)}`,
    `args = ${JSON.stringify([STDIO_SERVER, marker, name])}`,
    '',
  ].join('\n')
  const starts = (): string[] =>
    existsSync(marker)
      ? readFileSync(marker, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line).name)
      : []
  return { toml, starts }
}

describe(`compatibility scenarios (codex-cli ${codexUnderTest().version})`, () => {
  it('answer: a plain answer streams its deltas and reports the turn usage', async () => {
    const r = await runRealTurn({
      prompt: 'Say hello to the world.',
      scenario: [
        messageResponse(['Hello ', 'world'], { itemId: 'msg_1', usage: usage({ input: 100, cached: 20, output: 50, reasoning: 10, total: 150 }) }),
      ],
    })
    const t = r.terminal
    expect(t).toMatchObject({ status: 'completed', failure: null, finalMessage: 'Hello world' })
    const [thread] = r.of('threadStarted')
    expect(thread).toMatchObject({ resumed: false, threadId: t.threadId })
    expect(r.of('turnStarted')).toEqual([{ type: 'turnStarted', threadId: t.threadId, turnId: t.turnId }])
    expect(r.of('messageDelta').map((d) => d.delta)).toEqual(['Hello ', 'world'])
    expect(r.of('itemCompleted').filter((e) => e.item.type === 'agentMessage').map((e) => e.item)).toMatchObject([{ id: 'msg_1', text: 'Hello world' }])
    const expected = usageOf({ input: 100, cacheRead: 20, output: 50, reasoning: 10, total: 150 })
    expect(t.usage).toEqual(expected)
    expect(r.of('usage').at(-1)).toMatchObject({ turn: expected, thread: expected })
    expect(JSON.stringify(r.mock.requests[0].body.input)).toContain('Say hello to the world.')
  })

  it('shell: a shell command runs, streams its output and reports its exit code', async () => {
    const r = await runRealTurn({
      prompt: 'Run the command.',
      scenario: [
        execCommandResponse('sleep 0.2; echo out-line; echo err-line >&2; exit 3', { callId: 'call_1', usage: usage({ input: 200, output: 20 }) }),
        messageResponse('Done.', { usage: usage({ input: 300, cached: 100, output: 5 }) }),
      ],
    })
    const t = r.terminal
    expect(t).toMatchObject({ status: 'completed', finalMessage: 'Done.' })
    const streamed = r
      .of('commandOutput')
      .filter((o) => o.itemId === 'call_1')
      .map((o) => o.delta)
      .join('')
    expect(streamed).toContain('out-line\n')
    expect(streamed).toContain('err-line\n')
    const done = r.of('itemCompleted').find((e) => e.item.type === 'commandExecution')?.item
    expect(done).toMatchObject({ id: 'call_1', exitCode: 3 })
    expect(String(done?.type === 'commandExecution' ? done.aggregatedOutput : '')).toContain('out-line')
    expect(r.mock.requests).toHaveLength(2)
    const [output] = functionCallOutputs(r.mock.requests[1].body)
    expect(output).toMatchObject({ call_id: 'call_1' })
    expect(String(output.output)).toContain('out-line')
    expect(t.usage).toEqual(usageOf({ input: 500, cacheRead: 100, output: 25, total: 525 }))
  })

  it('structured: an output schema reaches the model and the answer comes back parsed', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false }
    const r = await runRealTurn({
      outputSchema: schema,
      scenario: [jsonMessageResponse({ answer: '42' }, { usage: usage({ input: 30, output: 5 }) })],
    })
    expect(r.mock.requests[0].body.text?.format).toMatchObject({ type: 'json_schema', strict: true, schema })
    expect(r.terminal).toMatchObject({ status: 'completed', failure: null, finalMessage: '{"answer":"42"}', structuredOutput: { answer: '42' } })
    expect(r.terminal.usage).toEqual(usageOf({ input: 30, output: 5, total: 35 }))
  })

  it('abort: an abort while the model streams interrupts the turn, and Codex honours it', async () => {
    const r = await runRealTurn({
      scenario: [hangingMessage()],
      // Generous: the interrupt must be honoured, not replaced by a kill on a loaded machine.
      interruptGraceMs: 15_000,
      watchdogMs: 30_000,
      onEvent: (ev, ctx) => {
        if (ev.type === 'messageDelta') ctx.abort()
      },
      inspect: async (res) => {
        const dropped = await eventually(() => res.mock.requests[0]?.clientClosed === true, 10_000)
        expect(dropped, 'Codex closed the hanging model request').toBe(true)
      },
    })
    const t = r.terminal
    expect(t).toMatchObject({ status: 'cancelled', cancellation: 'interrupted', failure: null })
    expect(t.turnId).not.toBeNull()
    expect(t.turnId).toBe(r.of('turnStarted')[0]?.turnId)
    expect(r.mock.requests).toHaveLength(1)
  })

  it('resume: a second turn resumes the stored thread with its history and its own usage', async () => {
    const first = await runRealTurn({
      prompt: 'first question',
      scenario: [messageResponse('First answer.', { usage: usage({ input: 100, output: 10 }) })],
      keep: true,
    })
    cleanups.push(() => first.dispose())
    expect(first.terminal).toMatchObject({ status: 'completed', usage: usageOf({ input: 100, output: 10, total: 110 }) })
    const threadId = first.terminal.threadId!
    const second = await runRealTurn({
      within: first,
      prompt: 'second question',
      scenario: [messageResponse('Second answer.', { usage: usage({ input: 250, output: 20 }) })],
      extra: { threadId },
    })
    expect(second.of('threadStarted')).toEqual([{ type: 'threadStarted', threadId, resumed: true }])
    expect(second.terminal).toMatchObject({ status: 'completed', threadId, finalMessage: 'Second answer.' })
    expect(second.terminal.usage).toEqual(usageOf({ input: 250, output: 20, total: 270 }))
    expect(second.mock.requests).toHaveLength(2)
    const history = JSON.stringify(second.mock.requests[1].body.input)
    for (const text of ['first question', 'First answer.', 'second question']) expect(history).toContain(text)
  })

  it('read-only: a read-only turn starts only after the isolation is confirmed, and cannot write', async () => {
    const user = ambientServer('user_tools')
    const project = ambientServer('project_tools')
    const r = await runRealTurn({
      prompt: 'Write a file.',
      codexConfig: user.toml,
      projectConfig: project.toml,
      extra: { access: 'readOnly' },
      scenario: [execCommandResponse('echo data > written.txt', { callId: 'call_w' }), messageResponse('Could not write.')],
      inspect: (res) => {
        expect(existsSync(join(res.cwd.path, 'written.txt')), 'the read-only sandbox let a file be written').toBe(false)
      },
    })
    expect(r.terminal.failure, JSON.stringify(r.terminal.failure)).toBeNull()
    expect(r.terminal).toMatchObject({ status: 'completed', finalMessage: 'Could not write.' })
    // The write failed inside the sandbox, and the model was told so.
    const output = String(functionCallOutputs(r.mock.requests[1]?.body)[0]?.output)
    expect(output).toMatch(/exit(ed with)? code [1-9]/)
    // No MCP server of the user or of the trusted project was offered or started.
    expect(offeredTools(r.mock.requests[0].body).filter((n) => n.startsWith('mcp__'))).toEqual([])
    expect(user.starts()).toEqual([])
    expect(project.starts()).toEqual([])
    // Nothing was granted.
    expect(r.of('serverRequest').filter((e) => e.reply !== 'methodError')).toEqual([])
  })

  it('read-only: a Codex that does not disable the servers for the thread fails closed before the turn (the control)', async () => {
    const user = ambientServer('user_tools')
    const project = ambientServer('project_tools')
    const r = await runRealTurn({
      prompt: 'Write a file.',
      codexConfig: user.toml,
      projectConfig: project.toml,
      extra: { access: 'readOnly' },
      // Stands in for a Codex that does not apply the thread's configuration: the MCP servers the
      // client disabled for the thread start anyway, which the isolation must notice.
      wrapper: writeFakeCodex({ relay: { codexPath: codexUnderTest().path, dropThreadConfig: true } }),
      scenario: [messageResponse('never asked')],
    })
    expect(r.terminal).toMatchObject({ status: 'failed', failure: { source: 'jsonrpc', code: 'ISOLATION_NOT_CONFIRMED' } })
    const report = (r.terminal.failure?.detail as { report: { notDisabled: { name: string }[] } }).report
    expect(report.notDisabled.map((s) => s.name).sort()).toEqual(['project_tools', 'user_tools'])
    // The turn never started: the model was never asked.
    expect(r.mock.requests).toEqual([])
    expect(r.of('turnStarted')).toEqual([])
  })

  it('mcp-policy: only the requested loopback MCP server runs; the one the user configured never starts', async () => {
    const ambient = ambientServer('user_tools')
    const requested = await startHttpMcpServer({ name: 'rennet_loop', bearerToken: 'compat-token' })
    cleanups.push(() => requested.close())
    const r = await runRealTurn({
      prompt: 'Call the echo tool.',
      codexConfig: ambient.toml,
      env: { RENNET_COMPAT_TOKEN: 'compat-token' },
      extra: { mcp: { servers: { rennet_loop: { url: requested.url, bearerTokenEnvVar: 'RENNET_COMPAT_TOKEN' } } } },
      scenario: [
        response({ id: 'resp_call', items: [mcpToolCallItem({ callId: 'call_mcp', namespace: 'mcp__rennet_loop', name: 'echo', args: { text: 'hi' } })] }),
        messageResponse('The tool answered.'),
      ],
    })
    expect(r.terminal.failure, JSON.stringify(r.terminal.failure)).toBeNull()
    expect(r.terminal).toMatchObject({ status: 'completed', finalMessage: 'The tool answered.' })
    expect(offeredTools(r.mock.requests[0].body).filter((n) => n.startsWith('mcp__'))).toEqual(['mcp__rennet_loop'])
    expect(requested.calls).toEqual([{ tool: 'echo', args: { text: 'hi' } }])
    const [output] = functionCallOutputs(r.mock.requests[1]?.body)
    expect(JSON.stringify(output?.output)).toContain('rennet_loop echo: hi')
    expect(r.of('itemCompleted').find((e) => e.item.type === 'mcpToolCall')?.item).toMatchObject({ server: 'rennet_loop', tool: 'echo', status: 'completed' })
    expect(ambient.starts()).toEqual([])
  })
})
