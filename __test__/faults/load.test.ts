// Load: many turns one after another must not grow the host's memory or file descriptors, and
// many turns at once must each get their own events and nothing else.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, describe, expect, it } from 'vitest'
import { runTurn } from '../../index.js'
import type { HarnessEvent, TerminalEvent } from '../../index.js'
import { PROMPT, scenarios } from '../support/fake.js'
import { writeFakeCodex } from '../../testing/index.js'
import { BOUND_MS, allProcesses, eventually, liveWithMarker, openFds } from '../support/procs.js'

setFlagsFromString('--expose-gc')
const gc: () => void = runInNewContext('gc')

const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-load-')))
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

/** One turn against a fake answering `text` (written beside the others, outside this process), drained. */
async function turn(text: string): Promise<{ events: HarnessEvent[]; terminal: TerminalEvent }> {
  const events: HarnessEvent[] = []
  const codexPath = writeFakeCodex(scenarios.minimal(text), { dir: cwd })
  for await (const e of runTurn({ prompt: PROMPT, cwd, codexPath })) events.push(e)
  return { events, terminal: events[events.length - 1] as TerminalEvent }
}

/** RSS after a full collection, and open fds once the last child's pipes are closed. */
async function footprint(): Promise<{ rss: number; fds: number }> {
  for (let i = 0; i < 3; i++) {
    gc()
    await new Promise((r) => setTimeout(r, 20))
  }
  return { rss: process.memoryUsage().rss, fds: openFds() }
}

/** Children of this process still running. */
function ourChildrenLeft(): number[] {
  return allProcesses()
    .filter((p) => p.ppid === process.pid && p.state !== 'Z')
    .map((p) => p.pid)
}

const SEQUENTIAL = Number(process.env.RENNET_LOAD_TURNS ?? 1000)

describe('load', () => {
  it(
    `${SEQUENTIAL} sequential turns: RSS and open fds flat from turn 100 on`,
    async () => {
      let at100 = { rss: 0, fds: 0 }
      const t0 = Date.now()
      for (let i = 1; i <= SEQUENTIAL; i++) {
        const { terminal } = await turn(`answer ${i}`)
        if (terminal.status !== 'completed' || terminal.finalMessage !== `answer ${i}`) {
          throw new Error(`turn ${i} ended ${JSON.stringify(terminal)}`)
        }
        if (i === 100) at100 = await footprint()
      }
      const atEnd = await footprint()
      const perTurnMs = (Date.now() - t0) / SEQUENTIAL
      console.log(
        `load: ${SEQUENTIAL} turns, ${perTurnMs.toFixed(1)} ms/turn; rss ${(at100.rss / 2 ** 20).toFixed(1)} → ` +
          `${(atEnd.rss / 2 ** 20).toFixed(1)} MiB; fds ${at100.fds} → ${atEnd.fds}`,
      )
      expect(atEnd.fds).toBeLessThanOrEqual(at100.fds)
      expect(atEnd.rss).toBeLessThanOrEqual(at100.rss * 1.05)
      expect(ourChildrenLeft()).toEqual([])
    },
    30 * 60_000,
  )

  it('32 concurrent turns: each ends correctly with only its own events', async () => {
    const n = 32
    const texts = Array.from({ length: n }, (_, i) => `concurrent answer number ${i} ${'·'.repeat(i)}`)
    const results = await Promise.all(texts.map((t) => turn(t)))
    const pids = new Set<number>()
    results.forEach(({ events, terminal }, i) => {
      expect(events.filter((e) => e.type === 'terminal')).toHaveLength(1)
      expect(terminal).toMatchObject({ status: 'completed', finalMessage: texts[i], failure: null })
      const deltas = events.filter((e) => e.type === 'messageDelta').map((e) => (e as { delta: string }).delta)
      expect(deltas.join('')).toBe(texts[i])
      const completed = events.filter((e) => e.type === 'itemCompleted').map((e) => (e as { item: { text?: string } }).item.text)
      expect(completed).toEqual([texts[i]])
      const started = events.find((e) => e.type === 'started') as { pid: number }
      pids.add(started.pid)
    })
    // 32 distinct children, all gone, and nothing carries a marker of this process (the
    // addon's markers start with the host's pid).
    expect(pids.size).toBe(n)
    expect(await eventually(() => ourChildrenLeft().length === 0, BOUND_MS)).toBe(true)
    expect(liveWithMarker(`${process.pid}-`, { prefix: true }).length).toBe(0)
  })
})
