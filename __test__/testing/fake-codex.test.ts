// `@rennet/codex/testing`: the scripted fake app-server, driven through runTurn/runUtility as
// an app's own tests would drive it.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { runTurn, runUtility } from '../../index.js'
import type { HarnessEvent, RunTurnOptions, TerminalEvent } from '../../index.js'
import { fakeCodexRuns, removeFakeCodexes, writeFakeCodex } from '../../testing/index.js'
import type { FakeCodexScript } from '../../testing/index.js'
import { fakesOfThisFile } from '../support/fakes-of-a-file.js'
import { FIRING_MS, NEVER_MS } from '../support/procs.js'

const scratch: string[] = []

afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

const fake = fakesOfThisFile('their turn')

function scratchDir(name = 'rennet-kit-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), name)))
  scratch.push(dir)
  return dir
}

async function play(script: FakeCodexScript, options: Partial<RunTurnOptions> = {}) {
  const codexPath = fake(script)
  const turn = runTurn({ prompt: 'Say hello.', cwd: scratchDir(), codexPath, ...options })
  const events: HarnessEvent[] = []
  for await (const event of turn) events.push(event)
  const terminal = events.at(-1) as TerminalEvent
  expect(terminal.type).toBe('terminal')
  expect(await turn.outcome).toEqual(terminal)
  return { events, terminal, codexPath, runs: () => fakeCodexRuns(codexPath) }
}

const of = <T extends HarnessEvent['type']>(events: HarnessEvent[], type: T) =>
  events.filter((e): e is Extract<HarnessEvent, { type: T }> => e.type === type)

describe('writeFakeCodex: a scripted turn', () => {
  it('plays reasoning, a command with output, a message as deltas and usage', async () => {
    const { events, terminal, runs } = await play({
      steps: [
        { type: 'reasoning', summary: [['Look', 'ing'], 'Second part'], text: ['raw'] },
        { type: 'command', command: 'ls', output: ['a.txt\n', 'b.txt\n'], exitCode: 0 },
        { type: 'message', text: ['Two ', 'files.'] },
        { type: 'usage', input: 120, cached: 20, output: 30, reasoning: 5 },
        { type: 'usage', input: 10, output: 2, contextWindow: null },
      ],
    })
    expect(of(events, 'reasoningDelta').map((e) => [e.part, e.index, e.delta])).toEqual([
      ['summary', 0, 'Look'],
      ['summary', 0, 'ing'],
      ['summary', 1, 'Second part'],
      ['text', 0, 'raw'],
    ])
    const command = of(events, 'itemCompleted').find((e) => e.item.type === 'commandExecution')!.item
    expect(command).toMatchObject({ type: 'commandExecution', command: 'ls', status: 'completed', exitCode: 0, aggregatedOutput: 'a.txt\nb.txt\n' })
    expect(of(events, 'commandOutput').map((e) => e.delta)).toEqual(['a.txt\n', 'b.txt\n'])
    expect(of(events, 'messageDelta').map((e) => e.delta)).toEqual(['Two ', 'files.'])
    const usage = of(events, 'usage')
    expect(usage[0]).toEqual({
      type: 'usage',
      turn: { input: 120, cacheRead: 20, output: 30, reasoning: 5, total: 150 },
      thread: { input: 120, cacheRead: 20, output: 30, reasoning: 5, total: 150 },
      contextWindow: 258400,
    })
    expect(usage[1].thread.total).toBe(162)
    expect(usage[1].contextWindow).toBeNull()
    expect(terminal).toMatchObject({ status: 'completed', finalMessage: 'Two files.', failure: null })
    expect(terminal.usage).toEqual({ input: 130, cacheRead: 20, output: 32, reasoning: 5, total: 162 })
    const [run] = runs()
    expect(run.argv).toEqual(['app-server'])
    expect(run.requests('turn/start')[0].input[0].text).toBe('Say hello.')
    expect(run.exitCode).toBe(0)
  })

  it('reports the script’s version and ids, a failed command, retries, notifications and stderr lines', async () => {
    const { events, terminal } = await play({
      version: '0.160.0',
      threadId: 'thread-under-test',
      turnId: 'turn-under-test',
      steps: [
        { type: 'command', command: 'make', output: 'error: no rule\n', exitCode: 2, id: 'call_make' },
        { type: 'retry', message: 'Reconnecting... 1/2' },
        { type: 'notification', method: 'turn/diff/updated', params: { diff: 'diff --git a/x b/x' } },
        { type: 'stderr', text: 'WARN something on stderr' },
        { type: 'message', text: 'Done.' },
      ],
    })
    expect(events[0]).toMatchObject({ type: 'started', codexVersion: '0.160.0' })
    expect(terminal).toMatchObject({ status: 'completed', threadId: 'thread-under-test', turnId: 'turn-under-test', finalMessage: 'Done.' })
    expect(of(events, 'itemCompleted').find((e) => e.item.id === 'call_make')!.item).toMatchObject({ status: 'failed', exitCode: 2 })
    expect(of(events, 'retrying')).toEqual([{ type: 'retrying', message: 'Reconnecting... 1/2', codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: null } } }])
    expect(of(events, 'diff')).toEqual([{ type: 'diff', diff: 'diff --git a/x b/x' }])
    expect(of(events, 'diagnostic')).toContainEqual({ type: 'diagnostic', source: 'stderr', line: 'WARN something on stderr' })
  })

  it('sends server requests and records the runner’s replies', async () => {
    const steps: FakeCodexScript['steps'] = [
      { type: 'serverRequest', method: 'item/commandExecution/requestApproval', params: { itemId: 'call_1', command: 'rm -rf build' } },
      { type: 'serverRequest', method: 'item/tool/requestUserInput', params: { itemId: 'call_2', questions: [] } },
      { type: 'message', text: 'ok' },
    ]
    const full = await play({ steps })
    expect(of(full.events, 'serverRequest').map((e) => [e.method, e.id, e.reply])).toEqual([
      ['item/commandExecution/requestApproval', 0, 'accepted'],
      ['item/tool/requestUserInput', 1, 'methodError'],
    ])
    const replies = full.runs()[0].received.filter((m) => !('method' in m))
    expect(replies[0]).toEqual({ id: 0, result: { decision: 'accept' } })
    expect(replies[1]).toMatchObject({ id: 1, error: { code: -32601 } })

    const readOnly = await play({ steps }, { access: 'readOnly' })
    expect(readOnly.terminal.status).toBe('completed')
    expect(of(readOnly.events, 'serverRequest').map((e) => e.reply)).toEqual(['methodError', 'methodError'])
    expect(readOnly.runs()[0].argv).toContain('features.hooks=false')
  })

  it('resumes the thread it is given', async () => {
    const { events, terminal, runs } = await play({ steps: [{ type: 'message', text: 'again' }] }, { threadId: 'stored-thread' })
    expect(of(events, 'threadStarted')).toEqual([{ type: 'threadStarted', threadId: 'stored-thread', resumed: true }])
    expect(terminal.threadId).toBe('stored-thread')
    expect(runs()[0].requests('thread/resume')[0].threadId).toBe('stored-thread')
  })

  it('answers the MCP inventory of an mcp policy', async () => {
    const { terminal, runs } = await play({ steps: [{ type: 'message', text: 'ok' }] }, { mcp: { servers: {} } })
    expect(terminal.status).toBe('completed')
    const [inventory, server] = runs()
    expect(inventory.argv.slice(-3)).toEqual(['mcp', 'list', '--json'])
    expect(server.argv[0]).toBe('app-server')
  })

  it('is a structured reply for runUtility, validated by the schema’s library', async () => {
    const codexPath = fake({ steps: [{ type: 'message', text: ['{"files":', '["a.txt","b.txt"]}'] }] })
    const Files = z.object({ files: z.array(z.string()) })
    const { output } = await runUtility({ prompt: 'List them.', cwd: scratchDir(), codexPath, outputSchema: Files })
    expect(output.files).toEqual(['a.txt', 'b.txt'])
    expect(fakeCodexRuns(codexPath)[0].requests('turn/start')[0].outputSchema).toMatchObject({ type: 'object', additionalProperties: false })
  })
})

describe('writeFakeCodex: each failure source', () => {
  it('turn: Codex fails the turn', async () => {
    const { terminal } = await play({
      steps: [
        { type: 'message', text: 'partial' },
        { type: 'fail', message: 'Quota exceeded. Check your plan and billing details.', codexErrorInfo: 'usageLimitExceeded' },
      ],
    })
    expect(terminal.status).toBe('failed')
    expect(terminal.failure).toMatchObject({
      source: 'turn',
      code: 'TURN_FAILED',
      message: 'Quota exceeded. Check your plan and billing details.',
      detail: { codexErrorInfo: 'usageLimitExceeded' },
    })
  })

  it('jsonrpc: a request answered with an error, and one never answered', async () => {
    const rejected = await play({ answer: { 'thread/start': { error: { code: -32600, message: 'failed to load configuration: bad config.toml' } } } })
    expect(rejected.terminal.failure).toMatchObject({ source: 'jsonrpc', code: 'REQUEST_FAILED', message: 'failed to load configuration: bad config.toml' })

    // Room for the fake's start-up: the limit applies to initialize too.
    const silent = await play({ answer: { 'turn/start': 'never' } }, { requestTimeoutMs: FIRING_MS })
    expect(silent.terminal.failure).toMatchObject({ source: 'jsonrpc', code: 'REQUEST_TIMEOUT', detail: { method: 'turn/start' } })
  })

  it('exit: the process dies mid-turn', async () => {
    const { terminal } = await play({ steps: [{ type: 'message', text: 'partial' }, { type: 'exit', code: 3, stderr: 'thread panicked: out of memory' }] })
    expect(terminal.failure).toMatchObject({ source: 'exit', code: 'PROCESS_EXITED', detail: { exitCode: 3 } })
    expect(JSON.stringify(terminal.failure!.detail)).toContain('thread panicked: out of memory')
  })

  it('parse: stdout that is not the protocol', async () => {
    const { terminal } = await play({ steps: [{ type: 'garbage', line: '\u001b[?2004h not json' }] })
    expect(terminal.failure).toMatchObject({ source: 'parse', code: 'MALFORMED_FRAME' })
  })

  it('spawn: a codexPath that does not exist', async () => {
    const turn = runTurn({ prompt: 'x', cwd: scratchDir(), codexPath: join(scratchDir(), 'no-codex-here') })
    expect((await turn.outcome).failure).toMatchObject({ source: 'spawn', code: 'CODEX_NOT_FOUND' })
  })
})

describe('writeFakeCodex: hangs and interrupts', () => {
  async function stopWhenStarted(script: FakeCodexScript, interruptGraceMs: number) {
    const codexPath = fake(script)
    const controller = new AbortController()
    const turn = runTurn({ prompt: 'x', cwd: scratchDir(), codexPath, signal: controller.signal, interruptGraceMs })
    for await (const event of turn) if (event.type === 'messageDelta') controller.abort(new Error('Stop pressed'))
    return { outcome: await turn.outcome, runs: fakeCodexRuns(codexPath) }
  }

  it('a hang that honours the interrupt ends interrupted', async () => {
    const { outcome, runs } = await stopWhenStarted({ steps: [{ type: 'message', text: 'thinking…' }, { type: 'hang' }] }, NEVER_MS)
    expect(outcome).toMatchObject({ status: 'cancelled', cancellation: 'interrupted' })
    expect((outcome.abortReason as Error).message).toBe('Stop pressed')
    expect(runs[0].requests('turn/interrupt')).toHaveLength(1)
  })

  it('an ignored interrupt is killed after the grace period', async () => {
    const { outcome, runs } = await stopWhenStarted({ interrupt: 'ignore', steps: [{ type: 'message', text: 'busy' }, { type: 'hang' }] }, 200)
    expect(outcome).toMatchObject({ status: 'cancelled', cancellation: 'killed' })
    expect(runs[0].requests('turn/interrupt')).toHaveLength(1)
  })

  it('a delay is interrupted too', async () => {
    const { outcome } = await stopWhenStarted({ steps: [{ type: 'message', text: 'wait' }, { type: 'delay', ms: 60_000 }, { type: 'message', text: 'never' }] }, NEVER_MS)
    // The message completed before the interrupt is still the final one.
    expect(outcome).toMatchObject({ status: 'cancelled', cancellation: 'interrupted', finalMessage: 'wait' })
  })
})

describe('writeFakeCodex: the executable', () => {
  it.skipIf(process.platform === 'win32')('runs under a Node whose path has spaces and one too long for #!, through /bin/sh (Unix)', async () => {
    const dir = scratchDir('rennet kit with spaces ')
    const spaced = join(dir, 'node bin', 'node')
    const long = join(dir, 'x'.repeat(60), 'y'.repeat(60), 'node')
    for (const node of [spaced, long]) {
      mkdirSync(dirname(node), { recursive: true })
      symlinkSync(process.execPath, node)
      const codexPath = fake({ steps: [{ type: 'message', text: 'via sh' }] }, { node })
      expect(readFileSync(codexPath, 'utf8').startsWith('#!/bin/sh\n')).toBe(true)
      const outcome = await runTurn({ prompt: 'x', cwd: dir, codexPath }).outcome
      expect(outcome).toMatchObject({ status: 'completed', finalMessage: 'via sh' })
    }
    const direct = fake({})
    expect(readFileSync(direct, 'utf8').startsWith(`#!${process.execPath}\n`)).toBe(true)
  })

  it('works from a directory with spaces inside an ESM ("type": "module") package', async () => {
    const project = scratchDir('rennet kit esm ')
    writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n')
    const codexPath = fake({ steps: [{ type: 'message', text: 'still CommonJS' }] }, { dir: project })
    expect(codexPath.startsWith(project)).toBe(true)
    const outcome = await runTurn({ prompt: 'x', cwd: project, codexPath }).outcome
    expect(outcome.finalMessage).toBe('still CommonJS')
  })

  it('writes a .cmd for Windows that starts the same entry with the given Node', () => {
    const dir = scratchDir()
    const codexPath = writeFakeCodex({}, { platform: 'win32', node: 'C:\\Program Files\\nodejs\\node.exe', dir })
    expect(codexPath.endsWith('codex.cmd')).toBe(true)
    const entry = join(dirname(codexPath), 'codex.cjs')
    expect(readFileSync(codexPath, 'utf8')).toBe(`@"C:\\Program Files\\nodejs\\node.exe" "${entry}" %*\r\n`)
    expect(readFileSync(entry, 'utf8')).toContain('.run(')
  })

  it('removes what it wrote into the temp directory', () => {
    const codexPath = writeFakeCodex({})
    expect(existsSync(codexPath)).toBe(true)
    removeFakeCodexes()
    expect(existsSync(dirname(codexPath))).toBe(false)
  })

  it('refuses a script it cannot play, naming the field', () => {
    const wrong: Array<[unknown, RegExp]> = [
      [{ steps: [{ type: 'mesage', text: 'x' }] }, /script\.steps\[0\]\.type must be one of message, /],
      [{ steps: [{ type: 'message' }] }, /script\.steps\[0\]\.text must be a string or an array of strings/],
      [{ steps: [{ type: 'delay', ms: -1 }] }, /script\.steps\[0\]\.ms must be a non-negative number/],
      [{ answer: { 'turn/interrupt': 'never' } }, /script\.answer names "turn\/interrupt"/],
      [{ answer: { initialize: { code: 1 } } }, /script\.answer\["initialize"\] must be 'never' or \{ error/],
      [{ interrupt: 'sometimes' }, /script\.interrupt must be 'honour', 'ignore' or 'exit'/],
      [null, /script must be an object/],
    ]
    for (const [script, message] of wrong) expect(() => writeFakeCodex(script as FakeCodexScript)).toThrow(message)
  })
})
