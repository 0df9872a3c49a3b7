// Real `codex app-server` (pinned @openai/codex) against the loopback mock Responses API: a
// prepared turn's child starts ahead, waits without asking the model anything, and runs its
// one turn when started; disposed, it leaves nothing behind; left waiting by a program that
// runs out of work, it does not keep that program alive and ends with it.
import { afterEach, describe, expect, it } from 'vitest'

import { prepareTurn, runTurn } from '../../index.js'
import type { HarnessEvent, PreparedTurn, Turn } from '../../index.js'
import { codexBinaryPath, createGitCwd, messageResponse, startMockModel } from '../../testing/index.js'
import type { MockModel } from '../../testing/index.js'
import { BOUND_MS, allProcesses, eventually, liveInGroup, liveWithMarker } from '../support/procs.js'
import { Host, argvOf } from '../lifecycle/host.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setup(responses: ReturnType<typeof messageResponse>[]) {
  const model = await startMockModel(responses)
  const cwd = createGitCwd()
  cleanups.push(() => model.close(), () => cwd.cleanup())
  return { model, cwd: cwd.path, options: { cwd: cwd.path, codexPath: codexBinaryPath(), env: model.env } }
}

/** Every event of the turn, and that its child's group is gone once it ended. */
async function drain(turn: Turn): Promise<HarnessEvent[]> {
  const events: HarnessEvent[] = []
  const watchdog = setTimeout(() => turn.abort(new Error('watchdog')), 20_000)
  try {
    for await (const event of turn) events.push(event)
  } finally {
    clearTimeout(watchdog)
  }
  const started = events.find((e) => e.type === 'started')
  if (started?.type === 'started') {
    expect(await eventually(() => liveInGroup(started.pid).length === 0, BOUND_MS), 'the child group is gone').toBe(true)
  }
  return events
}

/** Ends a prepared turn that a failing test left unstarted. */
function disposeAfter(prepared: PreparedTurn) {
  cleanups.push(() => prepared.dispose('test ended'))
  return prepared
}

describe('real codex app-server: prepared turns', () => {
  it('waits with its thread open and no model request, then runs its one turn when started', async () => {
    const { model, options } = await setup([messageResponse(['Ready ', 'now'], { id: 'resp_1', itemId: 'msg_1' })])
    const prepared = disposeAfter(prepareTurn(options))
    const ready = await prepared.ready
    expect(ready, JSON.stringify(ready)).toHaveProperty('threadId')
    // Ready means everything up to turn/start: the model has been asked nothing.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(model.requests).toHaveLength(0)

    const events = await drain(prepared.start('What is ready?'))
    const terminal = events.at(-1)
    expect(terminal).toMatchObject({ type: 'terminal', status: 'completed', finalMessage: 'Ready now', failure: null })
    // From `started` on: the preparation's events come first.
    expect(events.filter((e) => e.type !== 'diagnostic')[0]?.type).toBe('started')
    expect(events.find((e) => e.type === 'threadStarted')).toMatchObject({ threadId: (ready as { threadId: string }).threadId })
    expect(model.requests).toHaveLength(1)
    expect(JSON.stringify(model.requests[0].body.input)).toContain('What is ready?')
    expect(() => prepared.start('again')).toThrow(/once/)
  })

  it('prepares the follow-up of a turn on its thread: the history reaches the model', async () => {
    const { model, options } = await setup([
      messageResponse(['First'], { id: 'resp_1', itemId: 'msg_1' }),
      messageResponse(['Second'], { id: 'resp_2', itemId: 'msg_2' }),
    ])
    const first = await runTurn({ ...options, prompt: 'Remember the word kiwi.' }).outcome
    expect(first.status, JSON.stringify(first.failure)).toBe('completed')
    const prepared = disposeAfter(prepareTurn({ ...options, threadId: first.threadId! }))
    expect(await prepared.ready).toEqual({ threadId: first.threadId })
    const events = await drain(prepared.start({ input: [{ type: 'text', text: 'Which word?' }] }))
    expect(events.find((e) => e.type === 'threadStarted')).toMatchObject({ resumed: true })
    expect(events.at(-1)).toMatchObject({ status: 'completed', finalMessage: 'Second' })
    const input = JSON.stringify(model.requests[1].body.input)
    expect(input).toContain('Remember the word kiwi.')
    expect(input).toContain('Which word?')
  })

  it('disposed before start: the waiting child ends at once, and its Turn says cancelled with the reason', async () => {
    const { model, options } = await setup([])
    const prepared = prepareTurn(options)
    await prepared.ready
    prepared.dispose('the user closed the tab')
    const events = await drain(prepared.start('never sent'))
    expect(events.at(-1)).toMatchObject({ type: 'terminal', status: 'cancelled', abortReason: 'the user closed the tab' })
    expect(events.some((e) => e.type === 'turnStarted')).toBe(false)
    expect(model.requests).toHaveLength(0)
  })

  it.skipIf(process.platform !== 'linux')('left waiting by a program that runs out of work: the program ends by itself, and the child with it', async () => {
    const { model, options } = await setup([])
    const host = new Host('none', options as never, { HOST_PREPARED: '1' })
    cleanups.push(() => host.dispose())
    await host.until((e) => (e as { type: string }).type === 'ready', 60_000)
    expect(host.events.find((e) => (e as { type: string }).type === 'ready')).toHaveProperty('threadId')
    let timer: NodeJS.Timeout | undefined
    const late = new Promise((resolve) => (timer = setTimeout(() => resolve('still running'), 20_000)))
    expect(await Promise.race([host.exited, late]).finally(() => clearTimeout(timer)), 'how the program ended').toBe(0)
    // Nothing of it runs: nothing with the program's marker (Codex and whatever it started), no guard.
    const left = () => [
      ...liveWithMarker(`${host.pid}-`, { prefix: true }),
      ...allProcesses().filter((p) => p.state !== 'Z' && argvOf(p.pid)[1]?.startsWith(`${host.pid}-`)).map((p) => p.pid),
    ]
    expect(await eventually(() => left().length === 0, 15_000), `left running: ${left()}`).toBe(true)
    expect(await host.dispose(), 'what the clean-up had to kill').toEqual([])
    expect(model.requests).toHaveLength(0)
  })
})
