'use strict'
// The scripted fake `codex app-server` of `@rennet/codex/testing`, run by the executable that
// `writeFakeCodex()` writes. It speaks the stdio wire of codex-cli 0.171.0 (one JSON object per
// line without a `jsonrpc` member, `emittedAtMs` on notifications, server request ids from 0),
// answers the handshake, and plays the script's steps as one turn. It also answers
// `--version` and `mcp list --json` (an empty list), the read-only isolation queries, and the
// calls around turns the script names (`calls`).
// What each process is given, receives and does is appended to the call log next to the
// executable, synchronously, so that the log is complete once the process is gone.

const { appendFileSync, readFileSync } = require('node:fs')
const { spawn } = require('node:child_process')
const wire = require('./fake-codex-wire.js')
const { closeStdout, ownPgid, startGrandchildren } = require('./fake-codex-process.js')
const loop = require('./fake-codex-agent-loop.js')
const tools = require('./fake-codex-tools.js')

const { nowMs } = wire

const THREAD_ID = '019a0000-0000-7000-8000-00000000f00d'
const TURN_ID = '019a0000-0000-7000-8000-0000000071e5'
const GARBAGE = 'garbage \u0007 not json {'
/** What codex-cli 0.171.0 prints on stderr for a line it cannot parse. */
const UNPARSABLE = 'ERROR codex_app_server_transport::transport: Failed to deserialize JSONRPCMessage\n'

const sleep = (ms) => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)))
const forever = () => new Promise(() => {})
const withNewline = (text) => (text.endsWith('\n') ? text : `${text}\n`)

/** Runs the fake with the configuration file `writeFakeCodex()` wrote. */
function run(configPath) {
  const { script, log } = JSON.parse(readFileSync(configPath, 'utf8'))
  const fake = new FakeCodex(script, log, process.argv.slice(2))
  if (script.relay) fake.relay()
  else fake.main()
}

/** Whether a `thread/metadata/update` patch sets a field (a Git fact, `null` to clear it, counts). */
function hasField(params) {
  const gitInfo = params?.gitInfo
  return gitInfo !== null && typeof gitInfo === 'object' && Object.values(gitInfo).some((value) => value !== undefined)
}

class FakeCodex {
  constructor(script, logPath, argv) {
    this.script = script
    this.logPath = logPath
    this.argv = argv
    this.version = script.version ?? '0.171.0'
    this.omit = new Set(script.omit ?? [])
    this.threadId = null
    this.threadConfig = null
    this.turn = null
    this.turnDone = false
    this.interrupted = false
    /** Set once the server stops answering (a `hang` or `close-stdout` fault, `deaf`). */
    this.hung = false
    this.faulted = false
    this.nextRequestId = 0
    this.pending = new Map()
    /** Server requests sent without waiting: `{ id, method, reply }`. */
    this.outstanding = []
    this.counters = {}
    /** Agent messages started and not completed yet, by id. */
    this.open = new Map()
    this.lastMessage = null
    /** Frames collected instead of written, inside a `batch` step. */
    this.capture = null
    this.threadUsage = wire.usage(script.threadUsage)
    /** App tools: the capability, each thread's tools, the calls waiting for an answer (fake-codex-tools.js). */
    this.tools = tools.state(script, logPath)
  }

  log(entry) {
    try {
      appendFileSync(this.logPath, JSON.stringify({ run: process.pid, ...entry }) + '\n')
    } catch {
      // the test may have removed the directory already
    }
  }

  logStart() {
    const env = Object.fromEntries((this.script.logEnv ?? []).map((name) => [name, process.env[name] ?? null]))
    this.log({ event: 'start', argv: this.argv, cwd: process.cwd(), pgid: ownPgid(), ppid: process.ppid, env })
  }

  /** The subcommand after the global options (`-c k=v`, `--enable x`, `--disable x`). */
  command() {
    const positional = []
    for (let i = 0; i < this.argv.length; i++) {
      const arg = this.argv[i]
      if (['-c', '--config', '--enable', '--disable', '-p', '--profile'].includes(arg)) i++
      else if (!arg.startsWith('-')) positional.push(arg)
    }
    return positional
  }

  main() {
    if (this.argv.includes('--version')) {
      process.stdout.write(`codex-cli ${this.version}\n`)
      return
    }
    const [command, sub] = this.command()
    this.logStart()
    if (command === 'mcp' && sub === 'list') {
      process.stdout.write('[]\n')
      return
    }
    if (command !== 'app-server') {
      process.stderr.write(`error: unrecognized subcommand '${command ?? ''}'\n`)
      process.exitCode = 2
      return
    }
    // Nothing is read (and so nothing answered) before the process is set up: its
    // grandchildren recorded.
    void this.setUpProcess().then(() =>
      wire.readLines(
        process.stdin,
        (line) => line.trim() && this.receive(line),
        (rest) => this.stdinClosed(rest),
      ),
    )
  }

  /** The process-level parts of the script, before the first frame. */
  async setUpProcess() {
    const script = this.script
    process.on('SIGTERM', () => {
      this.log({ event: 'sigterm' })
      if (script.ignoreSigterm) return
      // Ends by the signal, as a process without a handler does.
      process.removeAllListeners('SIGTERM')
      process.kill(process.pid, 'SIGTERM')
    })
    // A closed stdout must not end the fake with an unhandled EPIPE before it logs what it saw.
    process.stdout.on('error', (error) => this.log({ event: 'stdout-error', code: error.code }))
    process.stderr.on('error', () => {})
    for (const name of script.echoEnv ?? []) process.stderr.write(`config: ${name}=${process.env[name] ?? ''}\n`)
    for (const line of script.preamble ?? []) process.stdout.write(`${line}\n`)
    await startGrandchildren(script.grandchildren ?? [], (entry) => this.log(entry), this.logPath)
  }

  stdinClosed(rest) {
    if (rest.trim()) this.log({ unparsed: rest })
    this.log({ event: 'stdin-closed' })
    // Like Codex: stdin closed means the client is gone (unless the script plays one that stays).
    if (this.script.linger || this.hung) setInterval(() => {}, 1 << 30)
    else void this.exit(0)
  }

  async exit(code) {
    this.hung = true
    await new Promise((resolve) => process.stdout.write('', resolve))
    await new Promise((resolve) => process.stderr.write('', resolve))
    this.log({ event: 'exit', code })
    process.exit(code)
  }

  /** Stands between the client and a real Codex (`script.relay`), changing what it says it does. */
  relay() {
    const { codexPath, dropThreadConfig } = this.script.relay
    if (!this.argv.includes('--version')) this.logStart()
    const child = spawn(codexPath, this.argv, { stdio: ['pipe', 'inherit', 'inherit'] })
    wire.readLines(
      process.stdin,
      (line) => {
        let message = null
        try {
          message = JSON.parse(line)
        } catch {
          // Not JSON: passed on as it is.
        }
        if (message !== null) this.log({ received: message })
        if (dropThreadConfig && message?.params && ['thread/start', 'thread/resume'].includes(message.method)) {
          delete message.params.config
          line = JSON.stringify(message)
        }
        child.stdin.write(`${line}\n`)
      },
      () => child.stdin.end(),
    )
    child.on('exit', (code, signal) => (signal ? process.kill(process.pid, signal) : process.exit(code ?? 1)))
  }

  // -------------------------------------------------------------------------------------------
  // wire

  send(frame) {
    if (this.capture) return void this.capture.push(frame)
    this.log({ sent: frame })
    process.stdout.write(JSON.stringify(frame) + '\n')
  }

  /** Bytes that are not one frame of the wire; only a note of `what` goes to the log. */
  writeRaw(data, what) {
    this.log({ event: 'wrote', what })
    process.stdout.write(data)
  }

  notify(method, params) {
    this.send({ method, params, emittedAtMs: nowMs() })
  }

  receive(line) {
    let message
    try {
      message = JSON.parse(line)
    } catch {
      this.log({ unparsed: line })
      process.stderr.write(UNPARSABLE)
      return
    }
    this.log({ received: message })
    if (this.hung || message === null || typeof message !== 'object' || Array.isArray(message)) return
    if (!('method' in message)) {
      const resolve = this.pending.get(message.id)
      if (resolve) {
        this.pending.delete(message.id)
        resolve(message)
      }
      return
    }
    if (message.id === undefined) return // a notification (`initialized`)
    this.request(message).catch((error) => this.log({ event: 'script-error', message: String(error && error.stack) }))
  }

  /**
   * The fault of the script, if it is due at `phase` (once); true when the normal flow must
   * stop there (it exited, hangs, closed its stdout or was killed).
   */
  faultAt(phase) {
    const fault = this.script.fault
    if (!fault || fault.phase !== phase || this.faulted) return false
    this.faulted = true
    this.log({ event: 'fault', fault: fault.action, phase })
    if (fault.action === 'garbage' || fault.line !== undefined) this.writeRaw(`${fault.line ?? GARBAGE}\n`, 'fault line')
    switch (fault.action) {
      case 'garbage':
        return false
      case 'exit':
        void this.exit(fault.code ?? 1)
        return true
      case 'kill':
        this.hung = true
        process.kill(process.pid, fault.signal ?? 'SIGKILL')
        return true
      case 'close-stdout':
        this.hung = true
        closeStdout()
        return true
      default:
        this.hung = true
        return true
    }
  }

  /** The scripted JSON-RPC error of a request. */
  refuse(method, id, { code = -32600, message = `${method} failed`, data }) {
    this.send({ error: data === undefined ? { code, message } : { code, message, data }, id })
  }

  /** Answers a handshake request as the script says; true when the result was sent. */
  async answer(method, id, result) {
    const scripted = this.script.answer?.[method]
    if (scripted === 'never') return false
    if (scripted?.error) {
      this.refuse(method, id, scripted.error)
      return false
    }
    if (scripted?.delayMs) {
      await sleep(scripted.delayMs)
      if (this.hung) return false
    }
    this.send({ id, result })
    if (scripted === 'twice') this.send({ id, result })
    return true
  }

  /** The notifications the script sends after answering `method`. */
  notifyAfter(method) {
    for (const { method: name, params = {} } of this.script.handshakeNotifications?.[method] ?? []) this.notify(name, params)
  }

  /** One page of a list query (`script.pageSize` entries, default all). */
  page(list, cursor) {
    const start = Number(cursor ?? 0) || 0
    const end = start + (this.script.pageSize ?? list.length)
    return { data: list.slice(start, end), nextCursor: end < list.length ? String(end) : null }
  }

  features() {
    // Every feature the client switched off (`-c features.<name>=false`), reported off.
    const states = new Map()
    for (let i = 0; i + 1 < this.argv.length; i++) {
      const match = this.argv[i] === '-c' && /^features\.([\w.-]+)=false$/.exec(this.argv[i + 1])
      if (match) states.set(match[1], false)
    }
    for (const [name, enabled] of Object.entries(this.script.features ?? {})) states.set(name, enabled)
    return [...states].map(([name, enabled]) => ({ name, stage: 'stable', enabled, defaultEnabled: true }))
  }

  mcpStatuses() {
    return Object.entries(this.script.mcpServers ?? {}).map(([name, server]) => {
      const disabled = this.threadConfig?.mcp_servers?.[name]?.enabled === false
      const runtimeStatus = server.status ?? (disabled ? 'disabled' : 'connected')
      return { name, runtimeStatus, tools: {}, resources: [], resourceTemplates: [], authStatus: 'unsupported' }
    })
  }

  threadResult(params) {
    return wire.threadResult({ id: this.threadId, params, cliVersion: this.version, sandbox: wire.SANDBOXES[this.script.sandbox] })
  }

  async request({ method, id, params = {} }) {
    // A call the script answers comes first (`config/read` and `mcpServerStatus/list` included,
    // which the fake otherwise answers for a read-only turn's isolation).
    if (this.script.calls?.[method] !== undefined) return void this.call(method, id, params)
    switch (method) {
      case 'initialize': {
        if (this.faultAt('before-init')) return
        // What `thread/start.dynamicTools` needs.
        this.tools.experimentalApi = params.capabilities?.experimentalApi === true
        const name = params.clientInfo?.name ?? 'client'
        const clientVersion = params.clientInfo?.version ?? '0'
        const result = {
          userAgent: `${name}/${this.version} (fake; ${process.platform}) (${name}; ${clientVersion})`,
          codexHome: process.env.CODEX_HOME ?? '',
          platformFamily: process.platform === 'win32' ? 'windows' : 'unix',
          platformOs: process.platform,
        }
        if (!(await this.answer(method, id, result))) return
        if (this.faultAt('after-init')) return
        this.notifyAfter(method)
        return
      }
      case 'account/read':
        await this.answer(method, id, this.script.account ?? { account: null, requiresOpenaiAuth: false })
        return
      case 'turn/steer': {
        // As Codex 0.171.0 refuses: no turn running, or not the one expected.
        const active = this.turn && !this.turnDone ? this.turn.turnId : null
        if (active === null) return void this.send({ id, error: { code: -32600, message: 'no active turn to steer' } })
        if (params.expectedTurnId !== active) {
          return void this.send({ id, error: { code: -32600, message: `expected active turn id ${params.expectedTurnId} but found ${active}` } })
        }
        await this.answer(method, id, { turnId: active })
        return
      }
      case 'thread/start':
      case 'thread/resume': {
        // Codex refuses app tools it cannot take before anything else of the thread.
        const refused = method === 'thread/start' && tools.refusal(params.dynamicTools, this.tools.experimentalApi)
        if (refused) return void this.send({ error: { code: -32600, message: refused }, id })
        this.threadId = method === 'thread/start' ? (this.script.threadId ?? THREAD_ID) : params.threadId
        this.threadConfig = params.config ?? null
        const result = this.threadResult(params)
        if (!(await this.answer(method, id, result))) return
        tools.threadOpened(this, method, this.threadId, params)
        if (method === 'thread/start' && !this.omit.has('threadStarted')) this.notify('thread/started', { thread: result.thread })
        if (this.faultAt('after-thread')) return
        this.notifyAfter(method)
        return
      }
      case 'config/read': {
        const servers = Object.entries(this.script.mcpServers ?? {}).map(([name, server]) => [name, server.config ?? {}])
        this.send({ id, result: { config: { mcp_servers: Object.fromEntries(servers) }, origins: {} } })
        return
      }
      case 'experimentalFeature/list':
        this.send({ id, result: this.page(this.features(), params.cursor) })
        return
      case 'mcpServerStatus/list':
        this.send({ id, result: this.page(this.mcpStatuses(), params.cursor) })
        return
      case 'turn/start': {
        if (params.threadId !== this.threadId) {
          this.send({ error: { code: -32600, message: `thread not found: ${params.threadId}` }, id })
          return
        }
        this.turn = { threadId: this.threadId, turnId: this.script.turnId ?? TURN_ID, cwd: params.cwd ?? process.cwd(), input: params.input }
        // What the agent loop's steps read: whether Codex would ask (approvals), plan mode (questions).
        Object.assign(this.turn, { approvalPolicy: params.approvalPolicy ?? null, collaborationMode: params.collaborationMode ?? null })
        if (this.script.earlyTurnStarted) this.turnStarted(this.ids())
        if (await this.answer(method, id, { turn: wire.turn(this.turn.turnId, 'inProgress', { started: false }) })) {
          this.play().catch((error) => this.log({ event: 'script-error', message: String(error && error.stack) }))
        }
        return
      }
      case 'turn/interrupt': {
        // A sub-agent's turn or a goal continuation.
        if (loop.interrupt(this, params, id)) return
        if (!this.turn || this.turnDone || params.turnId !== this.turn.turnId) {
          this.send({ error: { code: -32600, message: 'no active turn to interrupt' }, id })
          return
        }
        const mode = this.script.interrupt ?? 'honour'
        if (mode === 'exit') {
          this.log({ event: 'exit-on-interrupt' })
          return void this.exit(0)
        }
        // Codex fails the turn's app tool calls still waiting before it answers the interrupt.
        if (mode === 'honour') tools.interrupted(this, params.turnId)
        this.send({ id, result: {} })
        if (mode === 'honour') loop.endInterrupted(this)
        return
      }
      case 'review/start':
        loop.review(this, id, params).catch((error) => this.log({ event: 'script-error', message: String(error && error.stack) }))
        return
      default:
        this.send({ error: { code: -32600, message: `Invalid request: unknown variant \`${method}\`` }, id })
    }
  }

  /**
   * Answers a call around turns (`model/list`, `thread/archive`, any method `request()` sends) as
   * `script.calls` says, after `delayMs`; then sends its `notifications` in order (a login's
   * `account/login/completed`, a compaction's turn), each after its own `delayMs`.
   */
  async call(method, id, params) {
    const scripted = this.script.calls[method]
    if (scripted === 'never') return
    if (scripted.delayMs) {
      await sleep(scripted.delayMs)
      if (this.hung) return
    }
    if (scripted.exit) {
      if (scripted.exit.stderr) process.stderr.write(`${scripted.exit.stderr}\n`)
      return void this.exit(scripted.exit.code ?? 1)
    }
    if (scripted.error) this.refuse(method, id, scripted.error)
    else if (method === 'thread/metadata/update' && !hasField(params)) {
      // As Codex 0.171.0 refuses a patch that sets nothing (`gitInfo: null` included).
      this.refuse(method, id, { code: -32600, message: 'thread metadata update must include at least one field' })
    } else if (scripted.pages) {
      // The page a cursor names is its index: the first page has none, the last gives none.
      const at = params.cursor ? Number(params.cursor) : 0
      const nextCursor = at + 1 < scripted.pages.length ? String(at + 1) : null
      this.send({ id, result: { data: scripted.pages[at] ?? [], nextCursor } })
    } else this.send({ id, result: scripted.result })
    // A fork keeps the tools of the thread it forks, as Codex stores them with the thread.
    if (method === 'thread/fork' && scripted.result !== undefined) tools.forked(this, params, scripted.result)
    for (const { method: name, params: sent = {}, delayMs } of scripted.notifications ?? []) {
      if (delayMs) await sleep(delayMs)
      if (this.hung) return
      this.notify(name, sent)
    }
  }

  // -------------------------------------------------------------------------------------------
  // the turn

  ids() {
    return { threadId: this.turn.threadId, turnId: this.turn.turnId }
  }

  id(kind, given) {
    if (given) return given
    this.counters[kind] = (this.counters[kind] ?? 0) + 1
    return `${kind}_${this.counters[kind]}`
  }

  status(status) {
    this.notify('thread/status/changed', { threadId: this.turn.threadId, status })
  }

  turnStarted({ threadId, turnId }) {
    this.notify('turn/started', { threadId, turn: wire.turn(turnId, 'inProgress') })
  }

  itemStarted(item) {
    this.notify('item/started', { item, ...this.ids(), startedAtMs: item.startedAtMs })
  }

  itemCompleted(item) {
    this.notify('item/completed', { item, ...this.ids(), contentTokenCount: null, completedAtMs: nowMs() })
  }

  complete(status, items, error) {
    this.turnDone = true
    for (const resolve of this.pending.values()) resolve(null)
    this.pending.clear()
    this.notify('turn/completed', { threadId: this.turn.threadId, turn: wire.turn(this.turn.turnId, status, { items, error }) })
  }

  async play() {
    if (this.faultAt('after-ack')) return
    if (!this.omit.has('status')) this.status({ type: 'active', activeFlags: [] })
    if (!this.script.earlyTurnStarted && !this.omit.has('turnStarted')) this.turnStarted(this.ids())
    if (!this.omit.has('userMessage')) {
      const text = (this.turn.input ?? []).filter((i) => i && i.type === 'text').map((i) => i.text).join('\n')
      const user = { type: 'userMessage', id: this.id('user'), clientId: null, content: [{ type: 'text', text, text_elements: [] }], startedAtMs: nowMs() }
      this.itemStarted(user)
      this.itemCompleted({ ...user, completedAtMs: nowMs() })
    }
    if ((await this.steps(this.script.steps ?? [])) === 'end' || this.interrupted || this.turnDone) return
    if (!this.omit.has('status')) this.status({ type: 'idle' })
    this.complete('completed', this.lastMessage ? [this.lastMessage] : [], null)
    if (this.faultAt('after-completed')) return
    // An active goal: Codex goes on with continuation turns of its own.
    await loop.afterTurn(this)
  }

  /** Plays steps in order; 'end' when the turn (or the process) ended with one of them. */
  async steps(steps) {
    for (const step of steps) {
      if (this.interrupted) return 'end'
      if ((await this.step(step)) === 'end') return 'end'
    }
    return undefined
  }

  messageItem(message, completedAtMs = null) {
    return wire.agentMessage({ ...message, completedAtMs })
  }

  async step(step) {
    const ids = this.ids()
    switch (step.type) {
      case 'message': {
        let message = this.open.get(step.id)
        if (!message) {
          message = { id: this.id('msg', step.id), text: '', phase: step.phase ?? null, startedAtMs: nowMs() }
          this.open.set(message.id, message)
          this.itemStarted(this.messageItem(message))
        } else if (step.restart) {
          // Codex starts an item over when it retries the model response.
          message.text = ''
          this.itemStarted(this.messageItem(message))
        }
        const deltas = typeof step.text === 'string' ? [step.text] : step.text
        for (const [i, delta] of deltas.entries()) {
          this.notify('item/agentMessage/delta', { ...ids, itemId: message.id, delta })
          message.text += delta
          if (i === 0 && this.faultAt('mid-stream')) return 'end'
        }
        if (step.open) return undefined
        this.open.delete(message.id)
        this.lastMessage = this.messageItem(message, nowMs())
        this.itemCompleted(this.lastMessage)
        return undefined
      }
      case 'reasoning': {
        const id = this.id('rs', step.id)
        const parts = (list) => (list ?? []).map((p) => (typeof p === 'string' ? [p] : p))
        const summary = parts(step.summary)
        const raw = parts(step.text)
        const startedAtMs = nowMs()
        this.itemStarted({ type: 'reasoning', id, summary: [], content: [], startedAtMs, completedAtMs: null })
        summary.forEach((deltas, summaryIndex) => {
          this.notify('item/reasoning/summaryPartAdded', { ...ids, itemId: id, summaryIndex })
          for (const delta of deltas) this.notify('item/reasoning/summaryTextDelta', { ...ids, itemId: id, delta, summaryIndex })
        })
        raw.forEach((deltas, contentIndex) => {
          for (const delta of deltas) this.notify('item/reasoning/textDelta', { ...ids, itemId: id, delta, contentIndex })
        })
        this.itemCompleted({
          type: 'reasoning',
          id,
          summary: summary.map((d) => d.join('')),
          content: raw.map((d) => d.join('')),
          startedAtMs,
          completedAtMs: nowMs(),
        })
        return undefined
      }
      case 'command': {
        const id = this.id('call', step.id)
        const chunks = step.output === undefined ? [] : typeof step.output === 'string' ? [step.output] : step.output
        const exitCode = step.exitCode ?? 0
        const started = {
          type: 'commandExecution',
          id,
          pluginId: null,
          scriptPath: null,
          command: step.command,
          cwd: step.cwd ?? this.turn.cwd,
          processId: String(process.pid),
          source: 'unifiedExecStartup',
          status: 'inProgress',
          commandActions: [{ type: 'unknown', command: step.command }],
          aggregatedOutput: null,
          exitCode: null,
          durationMs: null,
          startedAtMs: nowMs(),
          completedAtMs: null,
        }
        this.itemStarted(started)
        for (const delta of chunks) this.notify('item/commandExecution/outputDelta', { ...ids, itemId: id, delta })
        this.itemCompleted({
          ...started,
          status: exitCode === 0 ? 'completed' : 'failed',
          aggregatedOutput: step.aggregatedOutput ?? chunks.join(''),
          exitCode,
          durationMs: 1,
          completedAtMs: nowMs(),
        })
        return undefined
      }
      case 'usage': {
        const last = wire.usage(step)
        for (const key of Object.keys(this.threadUsage)) this.threadUsage[key] += last[key]
        const modelContextWindow = step.contextWindow === undefined ? 258400 : step.contextWindow
        this.notify('thread/tokenUsage/updated', { ...ids, tokenUsage: { total: { ...this.threadUsage }, last, modelContextWindow } })
        return undefined
      }
      case 'retry':
        this.notify('error', {
          error: {
            message: step.message ?? 'Reconnecting... 1/5',
            codexErrorInfo: step.codexErrorInfo ?? { responseStreamDisconnected: { httpStatusCode: null } },
            additionalDetails: step.additionalDetails ?? null,
            misalignment: null,
          },
          willRetry: true,
          ...ids,
        })
        return undefined
      case 'serverRequest':
        return this.serverRequest(step, ids)
      case 'replies':
        return this.replies(step)
      case 'notification':
        this.notify(step.method, step.unscoped ? (step.params ?? {}) : { ...ids, ...step.params })
        return undefined
      case 'notifications': {
        // One write, as a busy server's pipe delivers them.
        const at = nowMs()
        const lines = step.notifications.map(({ method, params = {}, unscoped }) =>
          JSON.stringify({ method, params: unscoped ? params : { ...ids, ...params }, emittedAtMs: at }),
        )
        this.writeRaw(lines.join('\n') + '\n', `${lines.length} notifications`)
        return undefined
      }
      case 'stream':
        return this.stream(step, ids)
      case 'stderr':
        process.stderr.write(withNewline(step.text))
        return undefined
      case 'stderrFlood':
        return this.stderrFlood(step, ids)
      case 'delay':
        await sleep(step.ms)
        return undefined
      case 'hang':
        await forever()
        return 'end'
      case 'deaf':
        // Reads nothing more: whatever the client writes fills the pipe, and its writes block.
        process.stdin.pause()
        this.hung = true
        this.log({ event: 'deaf' })
        return undefined
      case 'fail': {
        const error = {
          message: step.message,
          codexErrorInfo: step.codexErrorInfo === undefined ? 'other' : step.codexErrorInfo,
          additionalDetails: step.additionalDetails ?? null,
          misalignment: null,
        }
        this.status({ type: 'systemError' })
        this.notify('error', { error, willRetry: false, ...ids })
        this.complete('failed', [], error)
        return 'end'
      }
      case 'exit':
        if (step.stderr) process.stderr.write(withNewline(step.stderr))
        await this.exit(step.code ?? 1)
        return 'end'
      case 'garbage':
        this.writeRaw(`${step.line ?? 'this is not JSON'}\n`, 'garbage')
        await forever()
        return 'end'
      case 'raw': {
        const data = step.base64 !== undefined ? Buffer.from(step.base64, 'base64') : Buffer.from(step.text ?? '')
        this.writeRaw(step.newline === false ? data : Buffer.concat([data, Buffer.from('\n')]), 'raw')
        return undefined
      }
      case 'send':
        if (step.newline === false) this.writeRaw(JSON.stringify(step.frame), 'a frame without its newline')
        else this.send(step.frame)
        return undefined
      case 'batch': {
        this.capture = []
        const end = await this.steps(step.steps)
        const frames = this.capture
        this.capture = null
        this.send(frames)
        return end
      }
      case 'hugeLine': {
        const head = `{"method":"item/agentMessage/delta","params":{"threadId":"${ids.threadId}","turnId":"${ids.turnId}","itemId":"msg_huge","delta":"`
        this.writeRaw(head + 'x'.repeat(step.megabytes * 1024 * 1024) + '"},"emittedAtMs":1}\n', `a ${step.megabytes} MB line`)
        return undefined
      }
      case 'turnStarted':
        this.turnStarted({ ...ids, ...pick(step, ['threadId', 'turnId']) })
        return undefined
      case 'turnCompleted':
        return this.turnCompleted(step, ids)
      default:
        // App tools.
        if (tools.STEPS[step.type]) return tools.step(this, step, ids)
        // Sub-agents, goals, plan mode, approvals, terminal sessions.
        if (loop.STEPS[step.type]) return loop.step(this, step, ids)
        throw new Error(`unknown step ${JSON.stringify(step.type)}`)
    }
  }

  async serverRequest(step, ids) {
    const params = step.unscoped ? (step.params ?? {}) : { ...ids, ...step.params }
    const sent = []
    const lines = []
    for (let i = 0; i < (step.count ?? 1); i++) {
      const id = this.nextRequestId++
      sent.push({ id, method: step.method, reply: new Promise((resolve) => this.pending.set(id, resolve)) })
      lines.push({ method: step.method, id, params })
    }
    if (lines.length === 1) this.send(lines[0])
    else this.writeRaw(lines.map((frame) => JSON.stringify(frame)).join('\n') + '\n', `${lines.length} ${step.method} requests`)
    if (step.wait === false) this.outstanding.push(...sent)
    else await Promise.all(sent.map((r) => r.reply))
    return undefined
  }

  /** Waits for the replies to the server requests sent without waiting (up to `timeoutMs`). */
  async replies(step) {
    const waiting = this.outstanding.splice(0)
    await Promise.all(
      waiting.map(({ id, method, reply }) => {
        if (step.timeoutMs === undefined) return reply
        let timer
        const late = new Promise((resolve) => (timer = setTimeout(() => resolve('late'), step.timeoutMs)))
        return Promise.race([reply, late]).then((answer) => {
          clearTimeout(timer)
          if (answer === 'late') this.log({ event: 'server-request-timeout', id, method })
        })
      }),
    )
    return undefined
  }

  /**
   * `count` agent-message deltas (0: until the turn ends), their text the sequence number or
   * the monotonic clock. Pre-serialised, and with no interval written as fast as the pipe
   * takes them: the fast mode of the benchmarks.
   */
  async stream(step, ids) {
    const perMessage = step.perMessage || Infinity
    const base = step.id ?? 'msg'
    const prefix = (n) => `{"method":"item/agentMessage/delta","params":{"threadId":${JSON.stringify(ids.threadId)},"turnId":${JSON.stringify(ids.turnId)},"itemId":${JSON.stringify(`${base}.${n}`)},"delta":"`
    let message = { id: `${base}.0`, text: '', phase: null, startedAtMs: nowMs() }
    let head = prefix(0)
    const itemLine = (method, item, extra) =>
      JSON.stringify({ method, params: { item, ...ids, ...extra }, emittedAtMs: nowMs() })
    const started = () => itemLine('item/started', this.messageItem(message), { startedAtMs: message.startedAtMs })
    // Not the final message of turn/completed's items: a long stream's text would go out twice.
    this.lastMessage = null
    const completed = () => itemLine('item/completed', this.messageItem(message, nowMs()), { contentTokenCount: null, completedAtMs: nowMs() })
    /** The lines of delta `i`, each ending in a newline: its message's start (and the end of the one before) first. */
    const linesOf = (i, text, at) => {
      let lines = ''
      if (i > 0 && i % perMessage === 0) {
        lines += completed() + '\n'
        const n = i / perMessage
        message = { id: `${base}.${n}`, text: '', phase: null, startedAtMs: nowMs() }
        head = prefix(n)
      }
      if (i % perMessage === 0) lines += started() + '\n'
      message.text += text
      return `${lines}${head}${text}"},"emittedAtMs":${at}}\n`
    }
    this.log({ event: 'wrote', what: `a stream of ${step.count || 'unbounded'} deltas` })
    const out = process.stdout
    if (!step.intervalMs && step.count > 0) {
      const chunks = []
      let chunk = ''
      const at = nowMs()
      for (let i = 0; i < step.count; i++) {
        chunk += linesOf(i, String(i), at)
        if (i % 4096 === 4095) {
          chunks.push(Buffer.from(chunk))
          chunk = ''
        }
      }
      chunks.push(Buffer.from(chunk + completed() + '\n'))
      for (const chunk of chunks) {
        if (this.turnDone) return 'end'
        if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve))
      }
      return undefined
    }
    for (let i = 0; step.count === 0 || i < step.count; i++) {
      if (this.turnDone) return 'end'
      const text = step.clock ? process.hrtime.bigint().toString() : String(i)
      out.write(linesOf(i, text, nowMs()))
      await sleep(step.intervalMs ?? 0)
    }
    if (this.turnDone) return 'end'
    out.write(completed() + '\n')
    return undefined
  }

  /** `megabytes` of 1 KiB lines on stderr, each 64 KiB taken by the reader before the next. */
  async stderrFlood(step, ids) {
    const chunk = ('E'.repeat(1023) + '\n').repeat(64)
    const chunks = step.megabytes * 16
    // The open message (if any) gets a delta every 2 MiB: the stream goes on meanwhile.
    const message = [...this.open.values()].at(-1)
    for (let i = 0; i < chunks; i++) {
      await new Promise((resolve) => process.stderr.write(chunk, resolve))
      if (message && i % 32 === 0) {
        const delta = `[${i}]`
        message.text += delta
        this.notify('item/agentMessage/delta', { ...ids, itemId: message.id, delta })
      }
    }
    this.log({ event: 'stderr-written', bytes: chunks * chunk.length })
    return undefined
  }

  /** turn/completed for this turn (which ends it) or, with other ids, for another one. */
  turnCompleted(step, ids) {
    const target = { ...ids, ...pick(step, ['threadId', 'turnId']) }
    const ours = target.threadId === ids.threadId && target.turnId === ids.turnId
    const items =
      step.message !== undefined
        ? [wire.agentMessage({ id: this.id('msg'), text: step.message, completedAtMs: nowMs() })]
        : ours && this.lastMessage
          ? [this.lastMessage]
          : []
    const error = step.error
      ? { message: step.error.message, codexErrorInfo: step.error.codexErrorInfo ?? 'other', additionalDetails: step.error.additionalDetails ?? null, misalignment: null }
      : null
    const frame = { method: 'turn/completed', params: { threadId: target.threadId, turn: wire.turn(target.turnId, step.status ?? 'completed', { items, error }) }, emittedAtMs: nowMs() }
    if (step.newline === false) this.writeRaw(JSON.stringify(frame), 'turn/completed without its newline')
    else this.send(frame)
    if (ours) {
      this.turnDone = true
      for (const resolve of this.pending.values()) resolve(null)
      this.pending.clear()
    }
    return undefined
  }
}

function pick(object, keys) {
  return Object.fromEntries(keys.filter((k) => object[k] !== undefined).map((k) => [k, object[k]]))
}

module.exports = { run }
