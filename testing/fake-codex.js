'use strict'
// `writeFakeCodex(script)`: writes an executable that plays a scripted `codex app-server`
// (fake-codex-server.js, the one fake of this package's own tests, benchmarks and apps alike)
// and returns its path, to pass as `codexPath`. `fakeCodexRuns(path)`
// reads back what each of its processes was started with and received.

const { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { basename, dirname, join } = require('node:path')

const { GRANDCHILD_MODES } = require('./fake-codex-process.js')
const loop = require('./fake-codex-agent-loop.js')
const tools = require('./fake-codex-tools.js')

const SERVER = join(__dirname, 'fake-codex-server.js')
const LOG = 'calls.jsonl'
/** Linux reads at most 127 bytes of a `#!` line before 5.1 (BINPRM_BUF_SIZE); stay below it. */
const MAX_SHEBANG = 127

const HANDSHAKE = ['initialize', 'account/read', 'thread/start', 'thread/resume', 'turn/start', 'turn/steer']
/**
 * What the fake plays itself, which `calls` cannot name (`answer` and `account` change how):
 * the handshake, a turn's requests, its interrupt.
 */
const PLAYED = [...HANDSHAKE, 'turn/interrupt']
const STEPS = {
  message: { text: 'text' },
  reasoning: {},
  command: { command: 'string' },
  usage: {},
  retry: {},
  serverRequest: { method: 'string' },
  replies: {},
  notification: { method: 'string' },
  notifications: { notifications: 'array' },
  stream: { count: 'number' },
  stderr: { text: 'string' },
  stderrFlood: { megabytes: 'number' },
  delay: { ms: 'number' },
  hang: {},
  deaf: {},
  fail: { message: 'string' },
  exit: {},
  garbage: {},
  raw: {},
  send: {},
  batch: { steps: 'array' },
  hugeLine: { megabytes: 'number' },
  turnStarted: {},
  turnCompleted: {},
  // the agent loop (fake-codex-agent-loop.js)
  ...loop.STEPS,
  // app tools (fake-codex-tools.js)
  ...tools.STEPS,
}
const OMITTABLE = ['threadStarted', 'status', 'userMessage', 'turnStarted']
const FAULT_PHASES = ['before-init', 'after-init', 'after-thread', 'after-ack', 'mid-stream', 'after-completed']
const FAULT_ACTIONS = ['exit', 'hang', 'garbage', 'close-stdout', 'kill']
const SANDBOXES = ['read-only', 'workspace-write', 'danger-full-access']

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)
const isStrings = (value) => Array.isArray(value) && value.every((d) => typeof d === 'string')

/** Throws a TypeError naming the first field of `script` that is not what the fake plays. */
function checkScript(script) {
  const fail = (path, what) => {
    throw new TypeError(`writeFakeCodex: script${path} ${what}`)
  }
  const oneOf = (path, value, allowed) => {
    if (value !== undefined && !allowed.includes(value)) fail(path, `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`)
  }
  const checkSteps = (steps, at) => {
    steps.forEach((step, i) => {
      const path = `${at}[${i}]`
      if (!isObject(step)) fail(path, 'must be an object with a type')
      const fields = STEPS[step.type]
      if (!fields) fail(`${path}.type`, `must be one of ${Object.keys(STEPS).join(', ')}, got ${JSON.stringify(step.type)}`)
      for (const [field, kind] of Object.entries(fields)) {
        const value = step[field]
        const ok =
          kind === 'text'
            ? typeof value === 'string' || isStrings(value)
            : kind === 'array'
              ? Array.isArray(value)
              : typeof value === kind && (kind !== 'number' || (Number.isFinite(value) && value >= 0))
        if (!ok) {
          const what = { text: 'a string or an array of strings (the deltas)', array: 'an array', number: 'a non-negative number' }[kind] ?? `a ${kind}`
          fail(`${path}.${field}`, `must be ${what}`)
        }
      }
      if (step.type === 'batch') checkSteps(step.steps, `${path}.steps`)
      loop.checkStep(step, path, fail, checkSteps)
      tools.checkStep(step, path, fail)
    })
  }
  if (!isObject(script)) fail('', 'must be an object')
  if (script.steps !== undefined && !Array.isArray(script.steps)) fail('.steps', 'must be an array')
  checkSteps(script.steps ?? [], '.steps')
  loop.checkScript(script, fail, checkSteps)
  tools.checkScript(script, fail)
  if (script.interrupt !== undefined && !['honour', 'ignore', 'exit'].includes(script.interrupt)) {
    fail('.interrupt', `must be 'honour', 'ignore' or 'exit'`)
  }
  for (const [method, answer] of Object.entries(script.answer ?? {})) {
    if (!HANDSHAKE.includes(method)) fail(`.answer`, `names ${JSON.stringify(method)}; it can answer ${HANDSHAKE.join(', ')}`)
    const ok = answer === 'never' || answer === 'twice' || (isObject(answer) && (isObject(answer.error) || (Number.isFinite(answer.delayMs) && answer.delayMs >= 0)))
    if (!ok) fail(`.answer[${JSON.stringify(method)}]`, `must be 'never' or { error: { code?, message, data? } }, 'twice' or { delayMs }`)
  }
  if (script.account !== undefined && !(isObject(script.account) && typeof script.account.requiresOpenaiAuth === 'boolean')) {
    fail('.account', 'must be what account/read answers: { account, requiresOpenaiAuth: boolean }')
  }
  if (script.calls !== undefined && !isObject(script.calls)) fail('.calls', 'must be an object')
  for (const [method, answer] of Object.entries(script.calls ?? {})) {
    if (!/^[\w./-]+$/.test(method)) fail('.calls', `names ${JSON.stringify(method)}, which is not a method name`)
    if (PLAYED.includes(method)) fail('.calls', `names ${JSON.stringify(method)}, which the fake plays itself (change it with answer or account)`)
    const at = `.calls[${JSON.stringify(method)}]`
    const shaped =
      answer === 'never' ||
      (isObject(answer) &&
        ('result' in answer || (Array.isArray(answer.pages) && answer.pages.every(Array.isArray)) || isObject(answer.error) || isObject(answer.exit)))
    if (!shaped) fail(at, `must be 'never', { result }, { pages: [[…], …] }, { error: { code?, message, data? } } or { exit: { code?, stderr? } }`)
    if (answer.delayMs !== undefined && !(Number.isFinite(answer.delayMs) && answer.delayMs >= 0)) fail(`${at}.delayMs`, 'must be a non-negative number')
    if (answer.notifications !== undefined) {
      if (!Array.isArray(answer.notifications)) fail(`${at}.notifications`, 'must be an array of { method, params?, delayMs? }')
      answer.notifications.forEach((n, i) => {
        if (!isObject(n) || typeof n.method !== 'string' || !n.method) fail(`${at}.notifications[${i}].method`, 'must be a non-empty string')
        if (n.delayMs !== undefined && !(Number.isFinite(n.delayMs) && n.delayMs >= 0)) fail(`${at}.notifications[${i}].delayMs`, 'must be a non-negative number')
      })
    }
  }
  for (const field of ['version', 'threadId', 'turnId']) {
    if (script[field] !== undefined && (typeof script[field] !== 'string' || !script[field])) fail(`.${field}`, 'must be a non-empty string')
  }
  for (const field of ['preamble', 'echoEnv', 'logEnv']) {
    if (script[field] !== undefined && !isStrings(script[field])) fail(`.${field}`, 'must be an array of strings')
  }
  for (const field of ['linger', 'ignoreSigterm', 'earlyTurnStarted']) {
    if (script[field] !== undefined && typeof script[field] !== 'boolean') fail(`.${field}`, 'must be a boolean')
  }
  for (const field of ['threadUsage', 'mcpServers', 'features', 'handshakeNotifications']) {
    if (script[field] !== undefined && !isObject(script[field])) fail(`.${field}`, 'must be an object')
  }
  ;(script.omit ?? []).forEach((frame, i) => oneOf(`.omit[${i}]`, frame, OMITTABLE))
  ;(script.grandchildren ?? []).forEach((mode, i) => oneOf(`.grandchildren[${i}]`, mode, GRANDCHILD_MODES))
  oneOf('.sandbox', script.sandbox, SANDBOXES)
  if (script.pageSize !== undefined && !(Number.isInteger(script.pageSize) && script.pageSize > 0)) fail('.pageSize', 'must be a positive integer')
  if (script.fault !== undefined) {
    if (!isObject(script.fault)) fail('.fault', 'must be an object { phase, action }')
    oneOf('.fault.phase', script.fault.phase ?? null, FAULT_PHASES)
    oneOf('.fault.action', script.fault.action ?? null, FAULT_ACTIONS)
  }
  if (script.relay !== undefined && !(isObject(script.relay) && typeof script.relay.codexPath === 'string' && script.relay.codexPath)) {
    fail('.relay', 'must be { codexPath, dropThreadConfig? }')
  }
  try {
    JSON.stringify(script)
  } catch (error) {
    fail('', `must be JSON: ${error.message}`)
  }
}

const created = new Set()
let cleanupRegistered = false

/** Removes the directories this process created (at exit, or now). */
function removeCreated() {
  // A fake that just ended can hold its directory a moment longer on Windows (EBUSY, seen
  // under Wine): Node's rmSync tries again, with a growing pause, before it gives up.
  for (const dir of created) rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
  created.clear()
}

const shQuote = (text) => `'${text.replaceAll("'", "'\\''")}'`

/**
 * Writes the fake and returns the path to pass as `codexPath`. Unix: an executable whose
 * interpreter is `options.node` (default: the running Node), through `#!` when its path fits
 * in a `#!` line, else a `/bin/sh` script that execs it. Windows: a `.cmd` file.
 */
function writeFakeCodex(script = {}, options = {}) {
  checkScript(script)
  if (options === null || typeof options !== 'object') throw new TypeError('writeFakeCodex: options must be an object')
  const node = options.node ?? process.execPath
  if (typeof node !== 'string' || !node) throw new TypeError('writeFakeCodex: options.node must be the path of a Node executable')
  const platform = options.platform ?? process.platform
  const dir = realpathSync(mkdtempSync(join(options.dir ?? tmpdir(), 'rennet-fake-codex-')))
  if (options.dir === undefined) {
    created.add(dir)
    if (!cleanupRegistered) {
      cleanupRegistered = true
      process.once('exit', removeCreated)
    }
  }
  const config = join(dir, 'script.json')
  writeFileSync(config, JSON.stringify({ script, log: join(dir, LOG) }))
  // The entry is CommonJS whatever `"type"` a package.json above the directory declares.
  writeFileSync(join(dir, 'package.json'), '{ "type": "commonjs" }\n')
  const body = `require(${JSON.stringify(SERVER)}).run(${JSON.stringify(config)})\n`
  if (platform === 'win32') {
    // Spawned as given (no shell of ours): Windows runs a .cmd through cmd.exe.
    writeFileSync(join(dir, 'codex.cjs'), body)
    const path = join(dir, 'codex.cmd')
    writeFileSync(path, `@"${node}" "${join(dir, 'codex.cjs')}" %*\r\n`)
    return path
  }
  const path = join(dir, 'codex')
  const shebang = `#!${node}`
  if (!/\s/.test(node) && Buffer.byteLength(shebang) < MAX_SHEBANG) {
    writeFileSync(path, `${shebang}\n${body}`)
  } else {
    // A #! line cannot hold a path with spaces or one this long: /bin/sh starts Node instead,
    // replacing itself (exec), so the process is still Node's and keeps its pid.
    writeFileSync(join(dir, 'codex.cjs'), body)
    writeFileSync(path, `#!/bin/sh\nexec ${shQuote(node)} ${shQuote(join(dir, 'codex.cjs'))} "$@"\n`)
  }
  chmodSync(path, 0o755)
  return path
}

/**
 * What the processes started from a fake were given and received, oldest first: one entry per
 * process (the app-server of each turn; `mcp list` and other subcommands too).
 */
function fakeCodexRuns(codexPath) {
  if (typeof codexPath !== 'string') throw new TypeError('fakeCodexRuns: codexPath must be the path writeFakeCodex returned')
  const log = join(dirname(codexPath), LOG)
  if (!existsSync(join(dirname(codexPath), 'script.json')) || !/^codex(\.cmd)?$/.test(basename(codexPath))) {
    throw new TypeError(`fakeCodexRuns: ${codexPath} is not a fake writeFakeCodex wrote, or it was removed`)
  }
  if (!existsSync(log)) return []
  const runs = new Map()
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    if (!line.trim()) continue
    let entry
    try {
      entry = JSON.parse(line)
    } catch {
      continue // a line cut by a process that was killed while writing it
    }
    const { run: pid, ...rest } = entry
    let run = runs.get(pid)
    if (!run) {
      run = { pid, launcherPid: pid, argv: [], cwd: '', pgid: null, env: {}, received: [], unparsed: [], sent: [], events: [], toolCalls: [], stdinClosed: false, grandchildren: [], exitCode: null }
      runs.set(pid, run)
    }
    if (rest.event === 'start') {
      // On Windows the fake is a .cmd: what the runner started (and a `started` event names) is
      // cmd.exe, the fake's parent. On Unix the script execs Node, which keeps its pid.
      const launcherPid = process.platform === 'win32' && rest.ppid ? rest.ppid : pid
      Object.assign(run, { launcherPid, argv: rest.argv, cwd: rest.cwd, pgid: rest.pgid ?? null, env: rest.env ?? {} })
    }
    else if ('received' in rest) run.received.push(rest.received)
    else if ('unparsed' in rest) run.unparsed.push(rest.unparsed)
    else if ('sent' in rest) run.sent.push(rest.sent)
    else if (rest.event) {
      run.events.push(rest)
      if (rest.event === 'exit') run.exitCode = rest.code
      if (rest.event === 'stdin-closed') run.stdinClosed = true
      if (rest.event === 'grandchild') run.grandchildren.push({ pid: rest.pid, mode: rest.mode })
      if (rest.event === 'tool-call') {
        const { event, ...call } = rest
        run.toolCalls.push(call)
      }
    }
  }
  return [...runs.values()].map((run) => ({
    ...run,
    requests: (method) => run.received.filter((m) => m.method === method && m.id !== undefined).map((m) => m.params),
  }))
}

module.exports = { writeFakeCodex, fakeCodexRuns, removeFakeCodexes: removeCreated }
