// Every terminal failure source the fake can provoke: jsonrpc, parse, exit, spawn.
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runTurn } from '../../index.js'
import {
  ANSWER_TYPES,
  THREAD_ID,
  TURN_ID,
  assertOneTerminalLast,
  banner,
  cleanupFakes,
  collect,
  writeFake,
  fakeRun,
  tempDir,
  terminalOf,
  types,
  withoutStderr,
  within,
} from '../support/fake.js'
import { BOUND_MS, FIRING_MS } from '../support/procs.js'

afterEach(cleanupFakes)

describe('jsonrpc failures', () => {
  it('fails with REQUEST_FAILED and the server message verbatim on an error response to thread/start', async () => {
    const { events, terminal, log } = await fakeRun('thread-start-error')
    const error = log.sentResponse(log.request('thread/start').id).error
    expect(types(events)).toEqual(['started', 'terminal'])
    expect(terminal).toEqual(terminalOf({
      status: 'failed',
      threadId: null,
      turnId: null,
      failure: {
        source: 'jsonrpc',
        code: 'REQUEST_FAILED',
        message: error.message,
        detail: { method: 'thread/start', code: -32600, data: { hint: 'fake' } },
        retryable: false,
      },
    }))
    expect(error.message).toBe('failed to load configuration: url is not supported for stdio\nin `mcp_servers.stdio_srv`\n')
    expect(log.methods()).not.toContain('turn/start')
  })

  it('fails with REQUEST_TIMEOUT when initialize gets no answer within requestTimeoutMs', async () => {
    const t0 = Date.now()
    // Room for the fake to start and read `initialize` (it must have, below) before the limit fires.
    const { events, terminal, log } = await fakeRun('no-init-response', { requestTimeoutMs: FIRING_MS })
    const elapsed = Date.now() - t0
    expect(types(events)).toEqual(['terminal'])
    expect(terminal).toEqual(terminalOf({
      status: 'failed',
      threadId: null,
      turnId: null,
      failure: {
        source: 'jsonrpc',
        code: 'REQUEST_TIMEOUT',
        message: expect.any(String),
        detail: { method: 'initialize', timeoutMs: FIRING_MS },
        retryable: true,
      },
    }))
    // The limit given, not another: it fired no sooner (the detail names it).
    expect(elapsed).toBeGreaterThanOrEqual(FIRING_MS - 10)
    expect(log.methods()).toEqual(['initialize'])
  })

  it('fails with REQUEST_TIMEOUT naming turn/start when the turn is never acknowledged', async () => {
    // It applies to initialize too: room for the fake's start-up.
    const { events, terminal, log } = await fakeRun('no-turn-start-response', { requestTimeoutMs: FIRING_MS })
    expect(types(events)).toEqual(['started', 'threadStarted', 'terminal'])
    expect(terminal).toEqual(terminalOf({
      status: 'failed',
      turnId: null,
      failure: {
        source: 'jsonrpc',
        code: 'REQUEST_TIMEOUT',
        message: expect.any(String),
        detail: expect.objectContaining({ method: 'turn/start' }),
        retryable: true,
      },
    }))
    // No turn id was ever known, so there is nothing to interrupt.
    expect(log.methods()).not.toContain('turn/interrupt')
  })
})

describe('preamble and parse failures', () => {
  const preambleEvents = (n: number, total = n) =>
    banner(total)
      .slice(0, n)
      .map((line) => ({ type: 'diagnostic', source: 'preamble', line }))

  it('surfaces banner lines before the first frame as diagnostics and runs the turn', async () => {
    const { events, terminal } = await fakeRun('minimal', { fake: { preamble: banner(3) } })
    expect(events.slice(0, 3)).toEqual(preambleEvents(3))
    expect(types(events)).toEqual([
      'diagnostic',
      'diagnostic',
      'diagnostic',
      'started',
      'threadStarted',
      'turnStarted',
      ...ANSWER_TYPES,
    ])
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe('Hello world')
  })

  it('tolerates exactly 20 preamble lines', async () => {
    const { events, terminal } = await fakeRun('minimal', { fake: { preamble: banner(20) } })
    expect(events.filter((e) => e.type === 'diagnostic')).toEqual(preambleEvents(20))
    expect(terminal.status).toBe('completed')
  })

  for (const n of [21, 50]) {
    it(`fails with PREAMBLE_TOO_LONG on ${n} preamble lines`, async () => {
      const { events, terminal, log } = await fakeRun('minimal', { fake: { preamble: banner(n) } })
      expect(events).toEqual([...preambleEvents(20, n), terminal])
      expect(terminal).toEqual(terminalOf({ status: 'failed', threadId: null, turnId: null, failure: expect.objectContaining({ source: 'parse', code: 'PREAMBLE_TOO_LONG', message: expect.any(String) }) }))
      expect(log.methods()).not.toContain('thread/start')
    })
  }

  for (const [scenario, code] of [
    ['malformed-mid-stream', 'MALFORMED_FRAME'],
    ['text-mid-stream', 'MALFORMED_FRAME'],
    ['invalid-utf8', 'INVALID_UTF8'],
  ] as const) {
    it(`fails with ${code} on a bad line after the first frame (${scenario})`, async () => {
      const { events, terminal } = await fakeRun(scenario)
      // Nothing after the bad line is taken in.
      expect(types(withoutStderr(events))).toEqual(['started', 'threadStarted', 'turnStarted', 'terminal'])
      expect(terminal).toEqual(terminalOf({ status: 'failed', failure: expect.objectContaining({ source: 'parse', code, message: expect.any(String) }) }))
    })
  }
})

describe('process exit', () => {
  it('fails with PROCESS_EXITED, the exit code and the stderr tail when the child dies mid-turn', async () => {
    const { events, terminal } = await fakeRun('crash')
    const line = 'thread panicked: fake crash for the test'
    assertOneTerminalLast(events)
    // The message Codex started and never completed is closed for the app before the end.
    expect(types(withoutStderr(events))).toEqual(['started', 'threadStarted', 'turnStarted', 'itemStarted', 'messageDelta', 'itemDropped', 'terminal'])
    expect(events).toContainEqual({ type: 'diagnostic', source: 'stderr', line })
    expect(terminal).toEqual(terminalOf({
      status: 'failed',
      finalMessage: expect.toBeOneOf([null, 'partial']),
      failure: {
        source: 'exit',
        code: 'PROCESS_EXITED',
        message: expect.any(String),
        detail: expect.objectContaining({ exitCode: 3, signal: null, stderrTail: expect.arrayContaining([line]) }),
        retryable: false,
      },
    }))
  })
})

describe('spawn failures', () => {
  const expectSpawnFailure = (terminal: unknown, code: string) =>
    expect(terminal).toEqual(terminalOf({ status: 'failed', threadId: null, turnId: null, failure: expect.objectContaining({ source: 'spawn', code, message: expect.any(String) }) }))

  it('reports CODEX_NOT_FOUND for a missing binary, as the only event', async () => {
    const dir = tempDir()
    const turn = runTurn({ prompt: 'hi', cwd: dir, codexPath: join(dir, 'no-such-codex') })
    const events = await within(collect(turn), BOUND_MS, 'events')
    expect(events).toHaveLength(1)
    expectSpawnFailure(events[0], 'CODEX_NOT_FOUND')
    expect(await within(turn.outcome, BOUND_MS, 'outcome')).toEqual(events[0])
  })

  it('reports CODEX_NOT_EXECUTABLE for a file without the exec bit', async () => {
    const dir = tempDir()
    const path = join(dir, 'codex')
    writeFileSync(path, '#!/bin/sh\necho never\n')
    chmodSync(path, 0o644)
    const turn = runTurn({ prompt: 'hi', cwd: dir, codexPath: path })
    const events = await within(collect(turn), BOUND_MS, 'events')
    expect(events).toHaveLength(1)
    expectSpawnFailure(events[0], 'CODEX_NOT_EXECUTABLE')
  })

  it('reports CWD_NOT_FOUND for a missing working directory, without starting the child', async () => {
    const dir = tempDir()
    const { codexPath, log } = writeFake('minimal', {}, dir)
    const turn = runTurn({ prompt: 'hi', cwd: join(dir, 'does', 'not', 'exist'), codexPath })
    const terminal = await within(turn.outcome, BOUND_MS, 'outcome')
    expectSpawnFailure(terminal, 'CWD_NOT_FOUND')
    expect(log.runs()).toEqual([])
  })

  it('resolves outcome without anyone iterating', async () => {
    const dir = tempDir()
    const turn = runTurn({ prompt: 'hi', cwd: dir, codexPath: join(dir, 'missing') })
    const terminal = await within(turn.outcome, BOUND_MS, 'outcome')
    expectSpawnFailure(terminal, 'CODEX_NOT_FOUND')
  })
})
