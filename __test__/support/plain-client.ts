// A plain client of `codex app-server` for the tests that check the wire itself, the same way
// against the test kit's fake and the real CLI: it spawns the server in a process group of its
// own, writes one JSON object per line, reads the frames it sends, and ends it (stdin closed,
// then the group killed if it lingers), checking that nothing of it is left.
import { spawn } from 'node:child_process'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { afterEach, expect } from 'vitest'
import { eventually, liveInGroup } from './procs.js'

// Loose JSON shapes of wire messages.
export type Frame = any // eslint-disable-line @typescript-eslint/no-explicit-any

export interface PlainClientOptions {
  env?: Record<string, string>
  cwd?: string
  /** Arguments after the program (default `['app-server']`). */
  args?: string[]
}

const WAIT_MS = 60_000

export class PlainClient {
  readonly child: ChildProcessWithoutNullStreams
  /** Every frame the server sent, in order. */
  readonly frames: Frame[] = []
  stderr = ''
  #nextId = 1
  #waiters = new Set<() => void>()
  #exited: Promise<void>

  constructor(program: string, options: PlainClientOptions = {}) {
    this.child = spawn(program, options.args ?? ['app-server'], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    })
    this.#exited = new Promise((resolve) => this.child.once('exit', () => resolve()))
    let buffered = ''
    this.child.stdout.setEncoding('utf8')
    this.child.stdout.on('data', (chunk: string) => {
      buffered += chunk
      let newline
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        if (line.trim()) this.frames.push(JSON.parse(line))
      }
      for (const wake of [...this.#waiters]) wake()
    })
    this.child.stderr.setEncoding('utf8')
    this.child.stderr.on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-20_000)))
    // A server that is gone must not end the test run with an EPIPE of ours.
    this.child.stdin.on('error', () => {})
  }

  send(frame: Frame): void {
    this.child.stdin.write(JSON.stringify(frame) + '\n')
  }

  /** Sends a request; resolves with its response frame (`result` or `error`). */
  async request(method: string, params: Frame = {}): Promise<Frame> {
    const id = this.#nextId++
    this.send({ id, method, params })
    return this.waitFor((f) => f.id === id && !('method' in f), `the response to ${method}`)
  }

  /** Answers the server request `id` with `answer` (`{ result }` or `{ error }`). */
  answer(id: number | string, answer: { result?: unknown; error?: unknown }): void {
    this.send({ id, ...answer })
  }

  /** `initialize` (with the experimentalApi capability when asked), then `initialized`. */
  async initialize(experimentalApi: boolean): Promise<Frame> {
    const response = await this.request('initialize', {
      clientInfo: { name: 'plain-test-client', version: '1.0.0' },
      ...(experimentalApi ? { capabilities: { experimentalApi: true } } : {}),
    })
    this.send({ method: 'initialized' })
    return response
  }

  /** The first frame from index `from` on that `match`es, as soon as it comes. */
  waitFor(match: (frame: Frame) => boolean, what = 'a frame', from = 0): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const look = () => {
        const found = this.frames.slice(from).find(match)
        if (found === undefined) return false
        done()
        resolve(found)
        return true
      }
      const timer = setTimeout(() => {
        done()
        const last = this.frames.slice(-8).map((f) => JSON.stringify(f).slice(0, 300))
        reject(new Error(`no ${what} within ${WAIT_MS} ms; last frames:\n${last.join('\n')}\nstderr:\n${this.stderr.slice(-2000)}`))
      }, WAIT_MS)
      const done = () => {
        clearTimeout(timer)
        this.#waiters.delete(look)
      }
      if (!look()) this.#waiters.add(look)
    })
  }

  /** Every frame with this method (notifications and server requests). */
  methods(method: string): Frame[] {
    return this.frames.filter((f) => f.method === method)
  }

  /** Closes stdin and waits for the server to end (the group killed after 15 s); checks nothing of it is left. */
  async close(): Promise<void> {
    this.child.stdin.end()
    const pid = this.child.pid!
    const ended = await Promise.race([this.#exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000))])
    if (!ended) {
      try {
        process.kill(-pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
      await this.#exited
    }
    expect(ended, `the server ended when its stdin closed; stderr:\n${this.stderr.slice(-2000)}`).toBe(true)
    expect(await eventually(() => liveInGroup(pid).length === 0, 10_000), `nothing left in group ${pid}`).toBe(true)
  }
}

/**
 * Registers, for the calling file, the end of every client a test opened (also when it failed),
 * and returns the opener.
 */
export function plainClientsOfThisFile(): (program: string, options?: PlainClientOptions) => PlainClient {
  const open: PlainClient[] = []
  afterEach(async () => {
    const errors: unknown[] = []
    for (const client of open.splice(0)) {
      try {
        await client.close()
      } catch (error) {
        errors.push(error)
      }
    }
    if (errors.length) throw errors[0]
  })
  return (program, options) => {
    const client = new PlainClient(program, options)
    open.push(client)
    return client
  }
}
