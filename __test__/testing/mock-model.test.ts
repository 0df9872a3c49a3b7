// `@rennet/codex/testing`: the loopback mock model with the real pinned Codex CLI, as an app's
// own tests would use it.
import { existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { runTurn, runUtility } from '../../index.js'
import type { HarnessEvent } from '../../index.js'
import { codexBinaryPath, createGitCwd, execCommandResponse, hang, jsonMessageResponse, messageResponse, startMockModel, usage } from '../../testing/index.js'
import type { GitCwd, MockModel } from '../../testing/index.js'
import { BOUND_MS, eventually, liveInGroup } from '../support/procs.js'

const open: Array<MockModel | GitCwd> = []
afterEach(async () => {
  for (const item of open.splice(0)) 'close' in item ? await item.close() : item.cleanup()
})

async function model(...args: Parameters<typeof startMockModel>) {
  const m = await startMockModel(...args)
  open.push(m)
  return m
}

function gitCwd() {
  const cwd = createGitCwd()
  open.push(cwd)
  return cwd.path
}

/** Every event of a turn, and a check that the child's process group is gone. */
async function drain(turn: AsyncIterable<HarnessEvent>) {
  const events: HarnessEvent[] = []
  for await (const event of turn) events.push(event)
  const started = events.find((e) => e.type === 'started')
  if (started) expect(await eventually(() => liveInGroup(started.pid).length === 0, BOUND_MS)).toBe(true)
  return events
}

describe('startMockModel with the real Codex CLI', () => {
  it('answers a turn, records what the model was sent, and close() removes everything', async () => {
    const mock = await model([
      execCommandResponse('echo from-the-shell', { usage: usage({ input: 200, output: 20 }) }),
      messageResponse(['The shell ', 'said hi.'], { usage: usage({ input: 300, output: 5 }) }),
    ])
    const cwd = gitCwd()
    const events = await drain(runTurn({ prompt: 'Run echo.', cwd, codexPath: codexBinaryPath(), env: mock.env }))
    const terminal = events.at(-1)
    expect(terminal).toMatchObject({ type: 'terminal', status: 'completed', finalMessage: 'The shell said hi.' })
    expect(mock.requests).toHaveLength(2)
    expect(JSON.stringify(mock.requests[0].body.input)).toContain('Run echo.')
    const output = mock.requests[1].body.input.find((i: { type: string }) => i.type === 'function_call_output')
    expect(output.output).toContain('from-the-shell')
    expect(readFileSync(mock.configPath, 'utf8')).toContain(mock.url)
    expect(mock.env.CODEX_HOME).toBe(mock.codexHome)

    const { codexHome, port } = mock
    await mock.close()
    expect(existsSync(codexHome)).toBe(false)
    // The port is free again: nothing listens there any more.
    const probe = createServer()
    await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(port, '127.0.0.1', () => resolve()))
    await new Promise<void>((resolve) => probe.close(() => resolve()))
  })

  it('serves structured output to runUtility with a zod schema, sent in strict mode', async () => {
    const mock = await model([jsonMessageResponse({ language: 'Rust', confidence: 0.9 })])
    const Language = z.object({ language: z.string(), confidence: z.number().min(0).max(1) })
    const { output } = await runUtility({ prompt: 'Main language?', cwd: gitCwd(), codexPath: codexBinaryPath(), env: mock.env, outputSchema: Language })
    expect(output).toEqual({ language: 'Rust', confidence: 0.9 })
    expect(mock.requests[0].body.text.format).toMatchObject({ type: 'json_schema', strict: true })
    expect(mock.requests[0].body.text.format.schema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { language: { type: 'string' }, confidence: { type: 'number', minimum: 0, maximum: 1 } },
      required: ['language', 'confidence'],
      additionalProperties: false,
    })
  })

  it('push() adds responses; a hang is stopped by an abort with its reason', async () => {
    const mock = await model()
    mock.push(hang())
    const controller = new AbortController()
    const turn = runTurn({ prompt: 'x', cwd: gitCwd(), codexPath: codexBinaryPath(), env: mock.env, signal: controller.signal, interruptGraceMs: 3000 })
    const stop = eventually(() => mock.requests.length > 0, 15_000).then(() => controller.abort('stopped by the test'))
    const events = await drain(turn)
    await stop
    expect(events.at(-1)).toMatchObject({ type: 'terminal', status: 'cancelled', abortReason: 'stopped by the test' })
  })
})
