// No handle of the app in Codex: an app that spawns its own children with pipes (an Electron app
// runs `git` and shells all the time) must see each of them end — 'close' after 'exit' — while
// turns run, whatever Codex is doing. On Windows a child inherits every inheritable handle of
// its parent unless told which ones to take, and Node's own child pipes are inheritable while
// Node sets a child up: a turn's child started at that moment would keep the app's child's pipe
// open for as long as the turn runs, and the app would wait for an end-of-file that never comes.
//
// Here the test's own process is the app: it spawns its own piped children in a loop while turns
// of the test kit's fake start (each turn's child stays until it is aborted), then checks that
// every one of its children closed while every turn's child still ran. Nothing here measures
// time: the bounds only stop a broken run from hanging, and a stall shows as a child that closes
// only once the turns end. Each round's numbers are printed (turns, own children, stalled), so
// that repeated runs (RENNET_HANDLES_ROUNDS) say how often it happens.
//
// It runs everywhere (a descriptor without close-on-exec would do the same on Unix); it is
// written for Windows, where the Windows lane runs it under Wine.
import { spawn, type ChildProcess } from 'node:child_process'
import { describe, expect, it } from 'vitest'

import { runTurn, type HarnessEvent, type Turn } from '../../index.js'
import { fakeCodexRuns, writeFakeCodex } from '../../testing/index.js'
import { collect, within } from '../support/fake.js'
import { eventually, isRunning } from '../support/procs.js'
import { endAfterEach } from './host.js'

/** Generous bounds for a loaded machine under Wine: they only stop a broken test from hanging. */
const BOUND_MS = 60_000
/** Turns started per round, each while the app's own children are being spawned. */
const TURNS = 4
/** Own children of the app alive at once (each a shell that prints a line). */
const IN_FLIGHT = 3
/** Own children spawned after the last turn's child runs, before the spawning stops. */
const AFTER_LAST_TURN = 6
const ROUNDS = Math.max(1, Number(process.env.RENNET_HANDLES_ROUNDS ?? 1) || 1)

const { seen, tempDir: made } = endAfterEach()

/** What the app knows of one of its own children. */
interface Own {
  index: number
  proc: ChildProcess
  exited: boolean
  closed: boolean
  /** Own children spawned when it exited, and when it closed. */
  exitedAt: number
  closedAt: number
  /** Whether every turn's child still ran when it closed. */
  closedWhileTurnsRan: boolean
}

/** The app's own children: a shell printing a line, piped as `git` is when an app runs it. */
class Spawner {
  readonly children: Own[] = []
  /**
   * Spawns the system refused (under Wine on a loaded machine, now and then `spawn UNKNOWN`):
   * children that never started cannot stall, so they are named in the round's line and the
   * loop goes on until enough children did start.
   */
  readonly refused: string[] = []
  private stopped = false
  private wake: (() => void) | null = null
  turnsRunning = false
  readonly done: Promise<void>

  constructor() {
    this.done = this.loop()
  }

  get spawned(): number {
    return this.children.length
  }

  /** Spawns one child; false when the system refused to. */
  private spawnOne(): boolean {
    const [command, args] =
      process.platform === 'win32' ? [process.env.ComSpec ?? 'cmd.exe', ['/d', '/c', 'echo own']] : ['/bin/sh', ['-c', 'echo own']]
    let proc: ChildProcess
    try {
      proc = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true })
    } catch (error) {
      this.refused.push(String(error))
      return false
    }
    const own: Own = { index: this.children.length, proc, exited: false, closed: false, exitedAt: -1, closedAt: -1, closedWhileTurnsRan: false }
    this.children.push(own)
    proc.stdin!.end()
    proc.stdout!.resume()
    proc.stderr!.resume()
    proc.on('error', () => {})
    proc.once('exit', () => {
      own.exited = true
      own.exitedAt = this.spawned
      this.wake?.()
    })
    proc.once('close', () => {
      own.closed = true
      own.closedAt = this.spawned
      own.closedWhileTurnsRan = this.turnsRunning
    })
    return true
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      if (this.children.filter((c) => !c.exited).length >= IN_FLIGHT) {
        await new Promise<void>((resolve) => (this.wake = resolve))
        continue
      }
      const spawned = this.spawnOne()
      // Spawns one after the other, so that one of Node's child pipes is being set up most of
      // the time; a turn of the package started meanwhile is what this is about. After a
      // refusal, a moment for the system.
      await new Promise((resolve) => (spawned ? setImmediate(resolve) : setTimeout(resolve, 50)))
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.wake?.()
    await this.done
  }

  /** Ends whatever of its children is left (a failed run). */
  kill(): void {
    for (const own of this.children.filter((c) => !c.exited)) own.proc.kill()
  }
}

type Started = Extract<HarnessEvent, { type: 'started' }>

/** One turn of a fake that stays in its turn until aborted; resolves once the fake runs it. */
async function hangingTurn(codexPath: string, cwd: string, before: number) {
  const turn: Turn = runTurn({ prompt: 'Say hello.', cwd, codexPath })
  const events: HarnessEvent[] = []
  const done = collect(turn, (e) => void events.push(e))
  const running = () => fakeCodexRuns(codexPath).filter((r) => r.requests('turn/start').length > 0)
  const ok = await eventually(() => running().length > before || events.some((e) => e.type === 'terminal'), BOUND_MS)
  const server = running()[before]
  if (!ok || !server) throw new Error(`the turn's child never ran its turn; events: ${JSON.stringify(events.map((e) => e.type))}`)
  const shim = events.find((e): e is Started => e.type === 'started')?.pid
  seen.push(server.pid, ...(shim ? [shim] : []))
  return { turn, done, server: server.pid }
}

describe('no handle of the app in Codex', () => {
  it(
    "the app's own piped children close right after they exit while turns start and run",
    async () => {
      const totals = { rounds: 0, turns: 0, own: 0, stalled: 0, refused: 0 }
      for (let round = 1; round <= ROUNDS; round++) {
        const dir = made('rennet-handles-')
        const codexPath = writeFakeCodex({ steps: [{ type: 'hang' }] }, { dir })
        const spawner = new Spawner()
        const turns: Awaited<ReturnType<typeof hangingTurn>>[] = []
        try {
          spawner.turnsRunning = true
          for (let i = 0; i < TURNS; i++) turns.push(await hangingTurn(codexPath, dir, i))
          const last = spawner.spawned
          expect(await eventually(() => spawner.spawned >= last + AFTER_LAST_TURN, BOUND_MS), 'own children after the last turn started').toBe(true)
          await spawner.stop()
          expect(await eventually(() => spawner.children.every((c) => c.exited), BOUND_MS), 'every own child exited').toBe(true)
          // Each close comes a moment after its exit; the bound is for a run that stalls.
          await eventually(() => spawner.children.every((c) => c.closed), BOUND_MS, 100)
          const turnChildren = turns.map((t) => t.server)
          expect(turnChildren.filter(isRunning), "every turn's child ran all along").toEqual(turnChildren)
          spawner.turnsRunning = false
          const stalled = spawner.children.filter((c) => !c.closed)
          for (const { turn } of turns) turn.abort()
          const terminals = await within(Promise.all(turns.map((t) => t.done)), BOUND_MS, 'the aborted turns')
          expect(terminals.every((events) => events.at(-1)?.type === 'terminal')).toBe(true)
          // What stalled closes once the turns' children are gone: the turns held its pipe.
          await eventually(() => stalled.every((c) => c.closed), BOUND_MS, 100)
          const lag = Math.max(0, ...spawner.children.filter((c) => c.closedWhileTurnsRan).map((c) => c.closedAt - c.exitedAt))
          console.log(
            `handles round ${round}: ${TURNS} turns, ${spawner.spawned} own children, ${stalled.length} stalled` +
              ` (closed only once the turns ended: ${stalled.filter((c) => c.closed).length}); most own spawns between an exit and its close: ${lag}` +
              (spawner.refused.length ? `; spawns the system refused: ${spawner.refused.length} (${[...new Set(spawner.refused)].join('; ')})` : ''),
          )
          totals.rounds++
          totals.turns += TURNS
          totals.own += spawner.spawned
          totals.stalled += stalled.length
          totals.refused += spawner.refused.length
        } finally {
          await spawner.stop()
          spawner.kill()
          for (const { turn } of turns) turn.abort()
          await Promise.allSettled(turns.map((t) => within(t.done, BOUND_MS, 'an aborted turn')))
        }
      }
      if (ROUNDS > 1) console.log(`handles: ${totals.rounds} rounds, ${totals.turns} turns, ${totals.own} own children, ${totals.stalled} stalled, ${totals.refused} spawns refused`)
      expect(totals.stalled, "own children whose 'close' waited for a turn's child to end").toBe(0)
    },
    (BOUND_MS * 4 + 60_000) * ROUNDS,
  )
})
