// The reference the benchmarks measure `runTurn()` against: the plain Node client a careful
// TypeScript engineer would write without a native core. `child_process.spawn`, `readline`
// over stdout, `JSON.parse` per line, the same handshake, the same routing (the owned thread
// and turn; foreign frames set aside as `passthrough`), the same event shapes and the same
// abort (turn/interrupt, then kill after the grace), yielded from an async generator.
//
// It drives the fake server of the fake suite and the real `codex app-server` of the real
// suite alike, and covers what a turn of the benchmarks exercises. Deliberate
// simplifications, none of which a benchmark turn touches: no read-only isolation checks, no
// MCP policy, no request timeouts, no frame size limit, and only its own child is ended (not
// what the child started).

import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'

/** The notification methods the pinned schema lists: `native`; any other, `unknownNotification`. */
const LISTED = new Set(JSON.parse(readFileSync(new URL('../types/codex/notification-methods.json', import.meta.url), 'utf8')).methods)

/** Turns this client started, for their keys (`t1`, `t2`, …). */
let turns = 0

const CLIENT = { name: 'rennet', title: null, version: '0.1.0' }
const MAX_STDERR_EVENTS = 200
const MAX_PREAMBLE_LINES = 20

const FULL_ACCESS_REPLIES = {
  'item/commandExecution/requestApproval': ['accepted', { decision: 'accept' }],
  'item/fileChange/requestApproval': ['accepted', { decision: 'accept' }],
  'item/permissions/requestApproval': ['grantedEmpty', { permissions: {} }],
  execCommandApproval: ['accepted', { decision: 'approved' }],
  applyPatchApproval: ['accepted', { decision: 'approved' }],
  'mcpServer/elicitation/request': ['declined', { action: 'decline' }],
}

const toUsage = (b) => ({
  input: b.inputTokens ?? 0,
  cacheRead: b.cachedInputTokens ?? 0,
  output: b.outputTokens ?? 0,
  reasoning: b.reasoningOutputTokens ?? 0,
  total: b.totalTokens ?? 0,
})
const minus = (a, b) => ({
  input: a.input - b.input,
  cacheRead: a.cacheRead - b.cacheRead,
  output: a.output - b.output,
  reasoning: a.reasoning - b.reasoning,
  total: a.total - b.total,
})
const ZERO = { input: 0, cacheRead: 0, output: 0, reasoning: 0, total: 0 }

/** Decides ownership and builds events; the generator below does the I/O. */
class Router {
  threadId = null
  turnId = null
  turnRequested = false
  turnAnnounced = false
  held = []
  messages = [] // [itemId, text, isFinal]
  streaming = null // [itemId, text]
  usageBaseline = ZERO
  usageTotal = null
  completion = null
  lastError = null

  setThread(id, out) {
    this.threadId = id
    this.#replay(out)
  }

  setTurn(id, out) {
    if (this.turnId !== null) return
    this.turnId = id
    this.#announce(out)
    this.#replay(out)
  }

  #announce(out) {
    if (!this.turnAnnounced && this.threadId !== null && this.turnId !== null) {
      this.turnAnnounced = true
      out.push({ type: 'turnStarted', threadId: this.threadId, turnId: this.turnId })
    }
  }

  #replay(out) {
    const held = this.held
    this.held = []
    for (const msg of held) this.notification(msg, out)
  }

  #owner(method, params) {
    const thread = params?.threadId ?? params?.thread?.id
    if (thread != null) {
      if (this.threadId === null) return 'undecided'
      if (thread !== this.threadId) return 'foreignThread'
    }
    const turn = params?.turnId ?? params?.turn?.id
    if (turn != null) {
      if (this.turnId !== null) return turn === this.turnId ? 'owned' : 'foreignTurn'
      if (this.turnRequested) {
        return method === 'turn/started' || method === 'turn/completed' ? 'owned' : 'undecided'
      }
      return 'foreignTurn'
    }
    return 'owned'
  }

  notification(msg, out) {
    const { method, params } = msg
    const owner = this.#owner(method, params)
    if (owner === 'undecided') {
      this.held.push(msg)
      return
    }
    if (owner !== 'owned') {
      if (owner === 'foreignTurn' && method === 'thread/tokenUsage/updated' && this.usageTotal === null && params?.tokenUsage?.total) {
        this.usageBaseline = toUsage(params.tokenUsage.total)
      }
      out.push({ type: 'passthrough', reason: owner, message: msg })
      return
    }
    switch (method) {
      case 'item/agentMessage/delta':
        if (this.streaming && this.streaming[0] === params.itemId) this.streaming[1] += params.delta
        out.push({ type: 'messageDelta', itemId: params.itemId, delta: params.delta })
        return
      case 'item/reasoning/summaryTextDelta':
        out.push({ type: 'reasoningDelta', itemId: params.itemId, delta: params.delta, part: 'summary', index: params.summaryIndex ?? 0 })
        return
      case 'item/reasoning/textDelta':
        out.push({ type: 'reasoningDelta', itemId: params.itemId, delta: params.delta, part: 'text', index: params.contentIndex ?? 0 })
        return
      case 'item/commandExecution/outputDelta':
        out.push({ type: 'commandOutput', itemId: params.itemId, delta: params.delta })
        return
      case 'item/started':
      case 'item/completed': {
        const item = params.item
        if (item?.type === 'agentMessage') {
          this.messages = this.messages.filter(([id]) => id !== item.id)
          if (method === 'item/started') this.streaming = [item.id, '']
          else this.messages.push([item.id, item.text ?? '', item.phase === 'final_answer'])
        }
        out.push({ type: method === 'item/started' ? 'itemStarted' : 'itemCompleted', item })
        return
      }
      case 'turn/started':
        if (this.turnId === null) this.setTurn(params.turn.id, out)
        return
      case 'turn/completed':
        if (this.turnId === null) this.setTurn(params.turn.id, out)
        this.completion = params.turn
        return
      case 'thread/tokenUsage/updated': {
        const total = toUsage(params.tokenUsage.total)
        if (this.usageTotal === null && params.tokenUsage.last) this.usageBaseline = minus(total, toUsage(params.tokenUsage.last))
        this.usageTotal = total
        out.push({ type: 'usage', turn: minus(total, this.usageBaseline), thread: total, contextWindow: params.tokenUsage.modelContextWindow ?? null })
        return
      }
      case 'error':
        if (params.willRetry) {
          out.push({ type: 'retrying', message: params.error.message, codexErrorInfo: params.error.codexErrorInfo ?? null })
          return
        }
        this.lastError = params.error
        break
    }
    out.push({ type: LISTED.has(method) ? 'native' : 'unknownNotification', method, params: params ?? null })
  }

  finalMessage() {
    const final = this.messages.findLast(([, , isFinal]) => isFinal) ?? this.messages.at(-1)
    if (final) return final[1]
    const item = (this.completion?.items ?? []).findLast((i) => i?.type === 'agentMessage')
    return item?.text ?? this.streaming?.[1] ?? null
  }

  usage() {
    return this.usageTotal === null ? null : minus(this.usageTotal, this.usageBaseline)
  }
}

function terminal(router, fields) {
  return {
    type: 'terminal',
    status: 'failed',
    threadId: router.threadId,
    turnId: router.turnId,
    finalMessage: null,
    // The bench's streams carry no plan item (plan mode's proposed plan).
    proposedPlan: null,
    usage: router.usage(),
    failure: null,
    // The plain client follows one turn: no sub-agents, nothing left running.
    agents: [],
    totalUsage: router.usage(),
    cutOff: [],
    ...fields,
  }
}

/** What a turn the server completed amounts to. */
function completedFields(router) {
  const completion = router.completion
  if (completion.status === 'completed') return { status: 'completed', finalMessage: router.finalMessage() }
  if (completion.status === 'interrupted') return { status: 'cancelled', cancellation: 'interrupted' }
  const error = completion.error ?? router.lastError
  const message = error?.message ?? `the turn ended with status ${completion.status}`
  return {
    failure: failure('turn', 'TURN_FAILED', message, { status: completion.status, codexErrorInfo: error?.codexErrorInfo ?? null, additionalDetails: error?.additionalDetails ?? null }),
  }
}

const failure = (source, code, message, detail) => ({ source, message, code, ...(detail === undefined ? {} : { detail }) })

/** Close stdin, give the process 1.5 s to exit, then SIGTERM its group, then SIGKILL. */
async function endChild(child, exited, trace) {
  child.stdin.end()
  trace('stdinClosed')
  if (child.exitCode !== null || child.signalCode !== null) return
  const within = (ms) => {
    let timer
    const late = new Promise((resolve) => (timer = setTimeout(resolve, ms, false)))
    return Promise.race([exited.then(() => true), late]).finally(() => clearTimeout(timer))
  }
  if (await within(1500)) return
  try {
    process.kill(-child.pid, 'SIGTERM')
  } catch {}
  if (await within(1000)) return
  try {
    process.kill(-child.pid, 'SIGKILL')
  } catch {}
  await exited
}

/** `codex app-server` as a child in its own process group, so that the whole tree can be ended. */
async function spawnAppServer(codexPath, options) {
  const child = spawn(codexPath, ['app-server'], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  })
  const spawnError = await new Promise((resolve) => {
    child.once('spawn', () => resolve(null))
    child.once('error', resolve)
  })
  return { child, spawnError }
}

/**
 * What `account/read` right after the handshake costs: `initialize`, `initialized`, then
 * `account/read`, each round trip timed from the write to the answer read (ms, on `clock`);
 * then the child is ended as after a turn.
 * @param {{cwd: string, codexPath: string, env?: Record<string,string>, clock: () => number}} options
 */
export async function accountReadRoundTrip(options) {
  const { child, spawnError } = await spawnAppServer(options.codexPath, options)
  if (spawnError) throw spawnError
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.stdin.on('error', () => {})
  child.stderr.resume()
  const send = (message) => child.stdin.write(JSON.stringify(message) + '\n')
  const lines = createInterface({ input: child.stdout, crlfDelay: Infinity })[Symbol.asyncIterator]()
  const answer = async (id) => {
    for (let next = await lines.next(); !next.done; next = await lines.next()) {
      const msg = JSON.parse(next.value)
      if (msg.id === id && msg.method === undefined) return msg
    }
    throw new Error(`codex app-server ended before answering request ${id}`)
  }
  try {
    let t0 = options.clock()
    send({ id: 1, method: 'initialize', params: { clientInfo: CLIENT } })
    await answer(1)
    const initializeMs = options.clock() - t0
    send({ method: 'initialized' })
    t0 = options.clock()
    send({ id: 2, method: 'account/read', params: {} })
    const reply = await answer(2)
    const accountReadMs = options.clock() - t0
    return { initializeMs, accountReadMs, account: reply.result ?? null, error: reply.error ?? null }
  } finally {
    await endChild(child, exited, () => {})
  }
}

/**
 * Runs one turn and yields its events; the last one is the terminal event. `trace`, for
 * measurements, is told when the turn goes through its steps: 'turnStartSent' (turn/start
 * written), 'turnCompleted' (the server's turn/completed was read), 'stdinClosed', 'exited'
 * (the child's exit was seen). `beforeTurnStart`, when given, makes the turn a prepared one:
 * once the thread is started (and its events yielded) the client awaits it before turn/start.
 * @param {{prompt: string, cwd: string, codexPath?: string, env?: Record<string,string>,
 *          signal?: AbortSignal, interruptGraceMs?: number, beforeTurnStart?: () => Promise<void>,
 *          trace?: (step: 'turnStartSent' | 'turnCompleted' | 'stdinClosed' | 'exited') => void}} options
 */
export async function* baselineTurn(options) {
  const codexPath = options.codexPath ?? 'codex'
  const trace = options.trace ?? (() => {})
  const router = new Router()
  const { child, spawnError } = await spawnAppServer(codexPath, options)
  if (spawnError) {
    const code = spawnError.code === 'ENOENT' ? 'CODEX_NOT_FOUND' : 'SPAWN_FAILED'
    yield terminal(router, { failure: failure('spawn', code, spawnError.message, { codexPath }) })
    return
  }
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      trace('exited')
      resolve({ code, signal })
    }),
  )
  child.stdin.on('error', () => {}) // EPIPE once the server is gone; stdout tells how it ended

  const diagnostics = []
  let stderrLines = 0
  createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (line) => {
    if (stderrLines++ < MAX_STDERR_EVENTS) diagnostics.push({ type: 'diagnostic', source: 'stderr', line })
  })

  let nextId = 1
  const pending = new Map()
  const send = (message) => child.stdin.write(JSON.stringify(message) + '\n')
  const request = (method, params) => {
    const id = nextId++
    pending.set(id, method)
    send({ id, method, params })
  }

  let killed = false
  let interruptTimer = null
  const onAbort = () => {
    if (router.completion) return
    if (router.threadId !== null && router.turnId !== null) {
      request('turn/interrupt', { threadId: router.threadId, turnId: router.turnId })
      interruptTimer = setTimeout(() => {
        killed = true
        endChild(child, exited, trace)
      }, options.interruptGraceMs ?? 2000)
    } else {
      killed = true
      endChild(child, exited, trace)
    }
  }
  if (options.signal?.aborted) onAbort()
  else options.signal?.addEventListener('abort', onAbort, { once: true })

  const startTurn = (threadId) => {
    trace('turnStartSent')
    request('turn/start', {
      threadId,
      input: [{ type: 'text', text: options.prompt, text_elements: [] }],
      cwd: options.cwd,
      approvalPolicy: 'never',
      sandboxPolicy: { type: 'dangerFullAccess' },
    })
  }
  let waitingThread = null

  request('initialize', { clientInfo: CLIENT })
  let seenFrame = false
  let preamble = 0
  let ending = null
  const out = []
  try {
    for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) {
      if (!line.trim()) continue
      let msg
      try {
        msg = JSON.parse(line)
        if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) throw new Error('not a JSON object')
      } catch (error) {
        if (!seenFrame && ++preamble <= MAX_PREAMBLE_LINES) {
          yield { type: 'diagnostic', source: 'preamble', line }
          continue
        }
        ending = { failure: failure('parse', 'MALFORMED_FRAME', `a line from codex app-server is not a JSON-RPC message: ${error.message}`, { line: line.slice(0, 1024) }) }
        break
      }
      seenFrame = true
      if (msg.method !== undefined && msg.id !== undefined) {
        const [reply, result] = FULL_ACCESS_REPLIES[msg.method] ?? ['methodError', null]
        if (result) send({ id: msg.id, result })
        else send({ id: msg.id, error: { code: -32601, message: `${msg.method} is not supported by this client` } })
        out.push({ type: 'serverRequest', method: msg.method, id: msg.id, params: msg.params ?? null, agent: null, reply })
      } else if (msg.method !== undefined) {
        router.notification(msg, out)
      } else if (pending.has(msg.id)) {
        const method = pending.get(msg.id)
        pending.delete(msg.id)
        if (msg.error && method !== 'turn/interrupt') {
          ending = { failure: failure('jsonrpc', 'REQUEST_FAILED', msg.error.message, { method, code: msg.error.code, data: msg.error.data }) }
          break
        }
        if (method === 'initialize') {
          const userAgent = msg.result.userAgent
          const version = userAgent.split(/\s+/)[0].split('/')[1] || null
          out.push({ type: 'started', turnKey: `t${++turns}`, pid: child.pid, codexPath, codexVersion: version, userAgent })
          send({ method: 'initialized' })
          request('thread/start', { cwd: options.cwd, approvalPolicy: 'never', sandbox: 'read-only' })
        } else if (method === 'thread/start') {
          const threadId = msg.result.thread.id
          out.push({ type: 'threadStarted', threadId, resumed: false })
          router.setThread(threadId, out)
          router.turnRequested = true
          if (options.beforeTurnStart) waitingThread = threadId
          else startTurn(threadId)
        } else if (method === 'turn/start' && msg.result.turn?.id) {
          router.setTurn(msg.result.turn.id, out)
        }
      } else {
        out.push({ type: 'passthrough', reason: 'unknownResponse', message: msg })
      }
      if (diagnostics.length) yield* diagnostics.splice(0)
      for (const event of out) yield event
      out.length = 0
      if (waitingThread !== null) {
        // A prepared turn: what the preparation produced is out; turn/start waits for the app.
        const threadId = waitingThread
        waitingThread = null
        await options.beforeTurnStart()
        if (killed || options.signal?.aborted) break
        startTurn(threadId)
      }
      if (router.completion) {
        trace('turnCompleted')
        // The outcome now; the terminal repeats it once the child is gone.
        if (!ending) yield { ...terminal(router, completedFields(router)), type: 'turnCompleted' }
        break
      }
    }
  } finally {
    clearTimeout(interruptTimer)
    options.signal?.removeEventListener('abort', onAbort)
    await endChild(child, exited, trace)
  }
  if (diagnostics.length) yield* diagnostics.splice(0)

  if (ending) {
    yield terminal(router, ending)
  } else if (router.completion) {
    yield terminal(router, completedFields(router))
  } else if (killed || options.signal?.aborted) {
    yield terminal(router, { status: 'cancelled', cancellation: 'killed' })
  } else {
    const { code, signal } = await exited
    const message = code !== null ? `codex app-server exited with code ${code} before the turn completed` : `codex app-server was killed by signal ${signal} before the turn completed`
    yield terminal(router, { failure: failure('exit', 'PROCESS_EXITED', message, { exitCode: code, signal }) })
  }
}
