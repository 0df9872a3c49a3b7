'use strict'
// The scripted fake `codex app-server` of `@rennet/codex/testing`, run by the executable that
// `writeFakeCodex()` writes. It speaks the stdio wire of codex-cli 0.171.0 (one JSON object per
// line without a `jsonrpc` member, `emittedAtMs` on notifications, server request ids from 0),
// answers the handshake, and plays the script's steps as one turn. It also answers
// `--version` and `mcp list --json` (an empty list), the read-only isolation queries, and the
// calls around turns the script names (`calls`).
// Every message it receives is appended to the call log next to the executable.

const { appendFileSync, readFileSync } = require('node:fs')

const THREAD_ID = '019a0000-0000-7000-8000-00000000f00d'
const TURN_ID = '019a0000-0000-7000-8000-0000000071e5'

const nowMs = () => Date.now()
const nowS = () => Math.floor(Date.now() / 1000)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const forever = () => new Promise(() => {})

/** Runs the fake with the configuration file `writeFakeCodex()` wrote. */
function run(configPath) {
  const { script, log } = JSON.parse(readFileSync(configPath, 'utf8'))
  new FakeCodex(script, log, process.argv.slice(2)).main()
}

class FakeCodex {
  constructor(script, logPath, argv) {
    this.script = script
    this.logPath = logPath
    this.argv = argv
    this.version = script.version ?? '0.171.0'
    this.threadId = null
    this.turn = null
    this.turnDone = false
    this.nextRequestId = 0
    this.pending = new Map()
    this.counters = {}
    this.lastMessage = null
    this.threadUsage = { totalTokens: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 0, reasoningOutputTokens: 0 }
  }

  log(entry) {
    try {
      appendFileSync(this.logPath, JSON.stringify({ pid: process.pid, ...entry }) + '\n')
    } catch {
      // the test may have removed the directory already
    }
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
    this.log({ event: 'start', argv: this.argv, cwd: process.cwd() })
    if (command === 'mcp' && sub === 'list') {
      process.stdout.write('[]\n')
      return
    }
    if (command !== 'app-server') {
      process.stderr.write(`error: unrecognized subcommand '${command ?? ''}'\n`)
      process.exitCode = 2
      return
    }
    process.stdout.on('error', () => {})
    let buffered = ''
    process.stdin.setEncoding('utf8')
    process.stdin.on('data', (chunk) => {
      buffered += chunk
      let newline
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim()
        buffered = buffered.slice(newline + 1)
        if (line) this.receive(line)
      }
    })
    // Like Codex: stdin closed means the client is gone.
    process.stdin.on('end', () => this.exit(0))
  }

  async exit(code) {
    await new Promise((resolve) => process.stdout.write('', resolve))
    await new Promise((resolve) => process.stderr.write('', resolve))
    this.log({ event: 'exit', code })
    process.exit(code)
  }

  // -------------------------------------------------------------------------------------------
  // wire

  send(frame) {
    process.stdout.write(JSON.stringify(frame) + '\n')
  }

  notify(method, params) {
    this.send({ method, params, emittedAtMs: nowMs() })
  }

  receive(line) {
    let message
    try {
      message = JSON.parse(line)
    } catch {
      this.log({ receivedText: line })
      return
    }
    this.log({ received: message })
    if (message === null || typeof message !== 'object' || Array.isArray(message)) return
    if (!('method' in message)) {
      const resolve = this.pending.get(message.id)
      if (resolve) {
        this.pending.delete(message.id)
        resolve(message)
      }
      return
    }
    if (message.id === undefined) return // a notification (`initialized`)
    this.request(message)
  }

  /** Answers a handshake request as the script says: the result, an error, or never. */
  answer(method, id, result) {
    const scripted = this.script.answer?.[method]
    if (scripted === 'never') return false
    if (scripted && scripted.error) {
      const { code = -32600, message = `${method} failed`, data } = scripted.error
      this.send({ error: data === undefined ? { code, message } : { code, message, data }, id })
      return false
    }
    this.send({ id, result })
    return true
  }

  request({ method, id, params = {} }) {
    switch (method) {
      case 'initialize': {
        const name = params.clientInfo?.name ?? 'client'
        const clientVersion = params.clientInfo?.version ?? '0'
        this.answer(method, id, {
          userAgent: `${name}/${this.version} (fake; ${process.platform}) (${name}; ${clientVersion})`,
          codexHome: process.env.CODEX_HOME ?? '',
          platformFamily: process.platform === 'win32' ? 'windows' : 'unix',
          platformOs: process.platform,
        })
        return
      }
      case 'thread/start':
        this.threadId = this.script.threadId ?? THREAD_ID
        if (this.answer(method, id, this.threadResult(params))) this.notify('thread/started', { thread: this.thread(params) })
        return
      case 'thread/resume':
        this.threadId = params.threadId
        this.answer(method, id, this.threadResult(params))
        return
      case 'config/read':
        this.send({ id, result: { config: { mcp_servers: {} }, origins: {} } })
        return
      case 'experimentalFeature/list': {
        // Every feature the client switched off (`-c features.<name>=false`), reported off.
        const off = []
        for (let i = 0; i + 1 < this.argv.length; i++) {
          const match = this.argv[i] === '-c' && /^features\.([\w.-]+)=false$/.exec(this.argv[i + 1])
          if (match) off.push(match[1])
        }
        const data = off.map((name) => ({ name, stage: 'stable', enabled: false, defaultEnabled: true }))
        this.send({ id, result: { data, nextCursor: null } })
        return
      }
      case 'mcpServerStatus/list':
        this.send({ id, result: { data: [], nextCursor: null } })
        return
      case 'turn/start':
        if (params.threadId !== this.threadId) {
          this.send({ error: { code: -32600, message: `thread not found: ${params.threadId}` }, id })
          return
        }
        this.turn = { threadId: this.threadId, turnId: this.script.turnId ?? TURN_ID, cwd: params.cwd ?? process.cwd(), input: params.input }
        if (this.answer(method, id, { turn: this.turnObject('inProgress', { started: false }) })) {
          this.play().catch((error) => this.log({ event: 'script-error', message: String(error && error.stack) }))
        }
        return
      case 'turn/interrupt': {
        if (!this.turn || this.turnDone || params.turnId !== this.turn.turnId) {
          this.send({ error: { code: -32600, message: 'no active turn to interrupt' }, id })
          return
        }
        const mode = this.script.interrupt ?? 'honour'
        if (mode === 'exit') return void this.exit(0)
        this.send({ id, result: {} })
        if (mode === 'honour') {
          this.status({ type: 'idle' })
          this.complete('interrupted', [], null)
        }
        return
      }
      default:
        if (this.script.calls?.[method] !== undefined) return void this.call(method, id, params)
        this.send({ error: { code: -32600, message: `Invalid request: unknown variant \`${method}\`` }, id })
    }
  }

  /** Answers a call around turns (`account/read`, `model/list`, …) as `script.calls` says. */
  call(method, id, params) {
    const scripted = this.script.calls[method]
    if (scripted === 'never') return
    if (scripted.exit) {
      if (scripted.exit.stderr) process.stderr.write(`${scripted.exit.stderr}\n`)
      return void this.exit(scripted.exit.code ?? 1)
    }
    if (scripted.error) {
      const { code = -32600, message = `${method} failed`, data } = scripted.error
      return void this.send({ error: data === undefined ? { code, message } : { code, message, data }, id })
    }
    if (scripted.pages) {
      // The page a cursor names is its index: the first page has none, the last gives none.
      const at = params.cursor ? Number(params.cursor) : 0
      const nextCursor = at + 1 < scripted.pages.length ? String(at + 1) : null
      return void this.send({ id, result: { data: scripted.pages[at] ?? [], nextCursor } })
    }
    this.send({ id, result: scripted.result })
  }

  // -------------------------------------------------------------------------------------------
  // wire shapes (as codex-cli 0.171.0 sends them)

  thread(params) {
    const t = nowS()
    const cwd = params.cwd ?? process.cwd()
    return {
      id: this.threadId,
      sessionId: this.threadId,
      preview: '',
      ephemeral: false,
      modelProvider: 'openai',
      model: params.model ?? 'gpt-fake',
      createdAt: t,
      updatedAt: t,
      status: { type: 'idle' },
      path: null,
      cwd,
      cliVersion: this.version,
      source: 'vscode',
      turns: [],
    }
  }

  threadResult(params) {
    const cwd = params.cwd ?? process.cwd()
    const sandbox = { 'read-only': { type: 'readOnly', networkAccess: false }, 'workspace-write': { type: 'workspaceWrite' }, 'danger-full-access': { type: 'dangerFullAccess' } }
    return {
      thread: this.thread(params),
      model: params.model ?? 'gpt-fake',
      modelProvider: 'openai',
      cwd,
      approvalPolicy: params.approvalPolicy ?? 'on-request',
      approvalsReviewer: 'user',
      sandbox: sandbox[params.sandbox] ?? sandbox['read-only'],
      reasoningEffort: null,
    }
  }

  turnObject(status, { items = [], error = null, started = true } = {}) {
    const done = status !== 'inProgress'
    return {
      id: this.turn.turnId,
      rootTurnId: this.turn.turnId,
      items,
      itemsView: items.length ? 'summary' : 'notLoaded',
      status,
      error,
      startedAt: started ? nowS() : null,
      completedAt: done ? nowS() : null,
      durationMs: done ? 1 : null,
    }
  }

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
    this.notify('turn/completed', { threadId: this.turn.threadId, turn: this.turnObject(status, { items, error }) })
  }

  // -------------------------------------------------------------------------------------------
  // the turn

  async play() {
    this.status({ type: 'active', activeFlags: [] })
    this.notify('turn/started', { threadId: this.turn.threadId, turn: this.turnObject('inProgress') })
    const text = (this.turn.input ?? []).filter((i) => i && i.type === 'text').map((i) => i.text).join('\n')
    const user = { type: 'userMessage', id: this.id('user'), clientId: null, content: [{ type: 'text', text, text_elements: [] }], startedAtMs: nowMs() }
    this.itemStarted(user)
    this.itemCompleted({ ...user, completedAtMs: nowMs() })
    for (const step of this.script.steps ?? []) {
      if (this.turnDone) return
      if ((await this.step(step)) === 'end') return
    }
    if (this.turnDone) return
    this.status({ type: 'idle' })
    this.complete('completed', this.lastMessage ? [this.lastMessage] : [], null)
  }

  /** Plays one step; 'end' when the turn (or the process) ends with it. */
  async step(step) {
    const ids = this.ids()
    switch (step.type) {
      case 'message': {
        const id = this.id('msg', step.id)
        const deltas = typeof step.text === 'string' ? [step.text] : step.text
        const startedAtMs = nowMs()
        const item = (text, completedAtMs = null) => ({
          type: 'agentMessage',
          moderation: null,
          id,
          text,
          phase: step.phase ?? null,
          memoryCitation: null,
          delivery: null,
          questions: null,
          startedAtMs,
          completedAtMs,
        })
        this.itemStarted(item(''))
        for (const delta of deltas) this.notify('item/agentMessage/delta', { ...ids, itemId: id, delta })
        this.lastMessage = item(deltas.join(''), nowMs())
        this.itemCompleted(this.lastMessage)
        return
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
        return
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
          aggregatedOutput: chunks.join(''),
          exitCode,
          durationMs: 1,
          completedAtMs: nowMs(),
        })
        return
      }
      case 'usage': {
        const input = step.input ?? 0
        const output = step.output ?? 0
        const last = {
          totalTokens: step.total ?? input + output,
          inputTokens: input,
          cachedInputTokens: step.cached ?? 0,
          cacheWriteInputTokens: 0,
          outputTokens: output,
          reasoningOutputTokens: step.reasoning ?? 0,
        }
        for (const key of Object.keys(this.threadUsage)) this.threadUsage[key] += last[key]
        const modelContextWindow = step.contextWindow === undefined ? 258400 : step.contextWindow
        this.notify('thread/tokenUsage/updated', { ...ids, tokenUsage: { total: { ...this.threadUsage }, last, modelContextWindow } })
        return
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
        return
      case 'serverRequest': {
        const id = this.nextRequestId++
        const reply = new Promise((resolve) => this.pending.set(id, resolve))
        this.send({ method: step.method, id, params: { ...ids, ...step.params } })
        await reply
        return
      }
      case 'notification':
        this.notify(step.method, step.unscoped ? (step.params ?? {}) : { ...ids, ...step.params })
        return
      case 'stderr':
        process.stderr.write(step.text.endsWith('\n') ? step.text : `${step.text}\n`)
        return
      case 'delay':
        await sleep(step.ms)
        return
      case 'hang':
        await forever()
        return 'end'
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
        if (step.stderr) process.stderr.write(step.stderr.endsWith('\n') ? step.stderr : `${step.stderr}\n`)
        await this.exit(step.code ?? 1)
        return 'end'
      case 'garbage':
        process.stdout.write(`${step.line ?? 'this is not JSON'}\n`)
        await forever()
        return 'end'
      default:
        throw new Error(`unknown step ${JSON.stringify(step.type)}`)
    }
  }
}

module.exports = { run }
