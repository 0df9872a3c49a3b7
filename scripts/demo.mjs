#!/usr/bin/env node
// pnpm demo "prompt"          one real Codex turn through runTurn(): the pinned codex-cli from
//                             node_modules talking to a small scripted model on 127.0.0.1
//                             (no account, no network). The model thinks, runs `ls` in a
//                             scratch directory, then streams an answer that echoes the prompt.
// pnpm demo --live "prompt"   the same rendering, but your own Codex installation and login
//                             (RENNET_CODEX_BIN, else `codex` on PATH). Spends a real model turn.
//
// Options: --cwd DIR (live only; default: a fresh empty temp dir), --read-only, --verbose
// (also print native/diagnostic events). Ctrl-C aborts the turn (a second Ctrl-C exits).

import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)

// ---------------------------------------------------------------------------------------------
// Arguments

const argv = process.argv.slice(2)
const flags = { live: false, verbose: false, readOnly: false, cwd: null, help: false }
const words = []
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]
  if (a === '--live') flags.live = true
  else if (a === '--verbose' || a === '-v') flags.verbose = true
  else if (a === '--read-only') flags.readOnly = true
  else if (a === '--cwd') flags.cwd = argv[++i]
  else if (a === '--help' || a === '-h') flags.help = true
  else if (a === '--') words.push(...argv.slice(i + 1)), (i = argv.length)
  else words.push(a)
}
if (flags.help) {
  console.log('usage: pnpm demo [--live] [--cwd DIR] [--read-only] [--verbose] "prompt"')
  process.exit(0)
}
const prompt = words.join(' ').trim() || 'What is in this directory?'

// ---------------------------------------------------------------------------------------------
// Rendering helpers

const color = process.stdout.isTTY && !process.env.NO_COLOR
const paint = (code) => (s) => (color ? `\x1b[${code}m${s}\x1b[0m` : s)
const dim = paint('2')
const bold = paint('1')
const italic = paint('3')
const red = paint('31')
const green = paint('32')
const yellow = paint('33')
const cyan = paint('36')
const out = (s) => process.stdout.write(s)

let atLineStart = true
/** Writes streamed text (styled), tracking whether the cursor is at a line start. */
function write(text, style = (x) => x) {
  if (!text) return
  out(style(text))
  atLineStart = text.endsWith('\n')
}
/** Ends the current line if something was written on it. */
function endLine() {
  if (!atLineStart) out('\n')
  atLineStart = true
}
/** Prints `s` on a line of its own. */
function line(s = '') {
  endLine()
  out(`${s}\n`)
}

function fmtUsage(u) {
  if (!u) return 'no usage reported'
  return `input ${u.input} (cache read ${u.cacheRead}) · output ${u.output} (reasoning ${u.reasoning}) · total ${u.total}`
}

// ---------------------------------------------------------------------------------------------
// Mode setup

function loadAddon() {
  try {
    return require(join(root, 'index.js'))
  } catch (err) {
    console.error(red(`cannot load the addon from ${join(root, 'index.js')}: ${err.message}`))
    console.error('build it first: pnpm build:debug')
    process.exit(1)
  }
}

async function setupMock() {
  const mock = await import('../testing/mock-responses.js')
  const { createCodexHome, createGitCwd } = await import('../testing/codex-home.js')
  const cwd = createGitCwd({
    prefix: 'rennet-demo-',
    files: {
      'README.md': '# scratch\nA scratch directory for the rennet demo.\n',
      'notes.txt': 'nothing to see here\n',
      'src/main.rs': 'fn main() { println!("hi"); }\n',
    },
  })
  const pace = { delayMs: 25 }
  const words = (text) => text.match(/\S+\s*/g) ?? [text]
  const server = await mock.start([
    // Model call 1: think, then run `ls`.
    mock.sse(
      mock.response({
        id: 'resp_demo_1',
        items: [
          mock.reasoningItem({
            id: 'rs_demo_1',
            outputIndex: 0,
            summary: [words('The user wants me to look around before answering.'), words('Listing the working directory first.')],
          }),
          mock.execCommandItem({ cmd: 'sleep 0.3; ls -la', callId: 'call_demo_ls', outputIndex: 1 }),
        ],
        usage: mock.usage({ input: 1200, cached: 0, output: 48, reasoning: 24 }),
      }),
      pace,
    ),
    // Model call 2: read the tool output from the request and answer.
    (request) => {
      const [result] = mock.functionCallOutputs(request.body)
      const text = typeof result?.output === 'string' ? result.output : ''
      const listing = text.includes('Output:\n') ? text.slice(text.indexOf('Output:\n') + 8) : text
      const names = listing
        .split('\n')
        .map((l) => l.trim().split(/\s+/).slice(8).join(' '))
        .filter((n) => n && n !== '.' && n !== '..')
      const answer =
        `You asked: "${prompt}".\n\n` +
        `I ran \`ls -la\` in ${cwd.path} and found ${names.length} entries: ${names.join(', ')}.\n` +
        'That command ran for real through codex app-server; only the model is scripted.'
      return mock.sse(
        mock.response({
          id: 'resp_demo_2',
          items: [
            mock.reasoningItem({ id: 'rs_demo_2', outputIndex: 0, summary: [words('The listing is back; summarising it.')] }),
            mock.messageItem({ id: 'msg_demo', outputIndex: 1, deltas: words(answer) }),
          ],
          usage: mock.usage({ input: 1500, cached: 1100, output: 64, reasoning: 12 }),
        }),
        pace,
      )
    },
  ])
  const home = createCodexHome({ baseUrl: server.url, prefix: 'rennet-demo-home-' })
  return {
    banner: [
      `${bold('mode: MOCK')} — pinned codex-cli at ${home.codexPath}`,
      `  scripted model on ${server.url} (loopback only, no account, no network)`,
      `  temp HOME/CODEX_HOME ${home.root}`,
      `  cwd ${cwd.path}`,
    ],
    options: { cwd: cwd.path, codexPath: home.codexPath, env: home.env },
    async cleanup() {
      await server.close()
      home.cleanup()
      cwd.cleanup()
    },
  }
}

async function setupLive() {
  const report = await addon.discoverCodex()
  if (!report.available) {
    console.error(red(`no usable Codex CLI: ${report.reason}`))
    for (const c of report.candidates) console.error(`  ${c.path} (${c.source}): ${c.reason}`)
    process.exit(1)
  }
  const { path: codexPath, source, version } = report.selected
  let cwd = flags.cwd ? resolve(flags.cwd) : null
  let tempCwd = null
  if (!cwd) {
    tempCwd = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-demo-live-')))
    cwd = tempCwd
  }
  return {
    banner: [
      `${bold(yellow('mode: LIVE'))} — your Codex installation and login: ${codexPath} (codex-cli ${version}, found by ${source})`,
      `  this spends a real model turn`,
      `  cwd ${cwd}${tempCwd ? ' (fresh temp dir; pass --cwd DIR to choose)' : ''}`,
    ],
    options: { cwd },
    async cleanup() {
      if (tempCwd) rmSync(tempCwd, { recursive: true, force: true })
    },
  }
}

// ---------------------------------------------------------------------------------------------
// The turn

const addon = loadAddon()
const { runTurn } = addon
const mode = flags.live ? await setupLive() : await setupMock()
for (const l of mode.banner) line(l)
if (flags.readOnly) line('  access: read-only')
line(`${cyan('prompt')} ${prompt}`)
line()

const turn = runTurn({ prompt, ...mode.options, ...(flags.readOnly ? { access: 'readOnly' } : {}) })

let interrupts = 0
process.on('SIGINT', () => {
  interrupts++
  if (interrupts === 1) {
    line(yellow('^C — aborting the turn (Ctrl-C again to exit now)'))
    turn.abort()
  } else {
    process.exit(130)
  }
})

const reasoningAt = new Map() // itemId -> `${part}:${index}` of the last delta
const commandHadOutput = new Set()
let lastUsage = null
let terminal = null
const startedAt = Date.now()

for await (const ev of turn) {
  switch (ev.type) {
    case 'started':
      line(dim(`● codex ${ev.codexVersion ?? '?'} app-server, pid ${ev.pid} (${ev.userAgent})`))
      break
    case 'threadStarted':
      line(dim(`● thread ${ev.threadId}${ev.resumed ? ' (resumed)' : ''}`))
      break
    case 'turnStarted':
      line(dim(`● turn ${ev.turnId}`))
      break
    case 'reasoningDelta': {
      const key = `${ev.part}:${ev.index}`
      const prev = reasoningAt.get(ev.itemId)
      if (prev !== key) {
        // A new summary part (or raw content index) starts on its own line.
        endLine()
        reasoningAt.set(ev.itemId, key)
        write(ev.part === 'summary' ? '✻ ' : '✻ (raw) ', (x) => dim(italic(x)))
      }
      write(ev.delta, (x) => dim(italic(x)))
      break
    }
    case 'itemStarted': {
      const item = ev.item
      if (item.type === 'commandExecution') {
        const actions = Array.isArray(item.commandActions) ? item.commandActions : []
        const shown = actions.map((a) => a?.command).filter(Boolean).join(' && ') || String(item.command ?? '')
        line(`${bold(cyan('$'))} ${bold(shown)}`)
      } else if (item.type === 'fileChange') {
        for (const c of Array.isArray(item.changes) ? item.changes : []) line(`${cyan('✎')} ${c?.kind?.type ?? 'change'} ${c?.path}`)
      } else if (item.type === 'agentMessage') {
        line()
      } else if (item.type === 'mcpToolCall' || item.type === 'webSearch' || item.type === 'dynamicToolCall') {
        line(dim(`● ${item.type} ${item.tool ?? item.query ?? ''}`))
      }
      break
    }
    case 'commandOutput':
      commandHadOutput.add(ev.itemId)
      write(ev.delta.replace(/^(?!$)/gm, '  │ '), dim)
      break
    case 'itemCompleted': {
      const item = ev.item
      if (item.type === 'commandExecution') {
        if (!commandHadOutput.has(item.id) && typeof item.aggregatedOutput === 'string' && item.aggregatedOutput) {
          write(item.aggregatedOutput.replace(/^(?!$)/gm, '  │ '), dim)
        }
        const code = item.exitCode
        const mark = code === 0 ? green(`exit ${code}`) : red(`exit ${code ?? '?'} (${item.status})`)
        line(`  └ ${mark}${typeof item.durationMs === 'number' ? dim(` in ${item.durationMs} ms`) : ''}`)
      } else if (item.type === 'fileChange') {
        line(`  └ ${item.status === 'completed' ? green('applied') : red(String(item.status))}`)
      } else if (item.type === 'agentMessage' || item.type === 'reasoning') {
        endLine()
      }
      break
    }
    case 'messageDelta':
      write(ev.delta)
      break
    case 'usage':
      lastUsage = ev
      break
    case 'retrying':
      line(yellow(`↻ retrying: ${ev.message}`))
      break
    case 'serverRequest':
      line(dim(`● server request ${ev.method} → ${ev.reply}`))
      break
    case 'passthrough':
      if (flags.verbose) line(dim(`● passthrough (${ev.reason}) ${JSON.stringify(ev.message)}`))
      break
    case 'native':
      if (flags.verbose) line(dim(`● ${ev.method} ${JSON.stringify(ev.params)}`))
      break
    case 'diagnostic':
      if (flags.verbose) line(dim(`● ${ev.source}: ${ev.line}`))
      break
    case 'terminal':
      terminal = ev
      break
  }
}
terminal ??= await turn.outcome

line()
line(dim('─'.repeat(60)))
const seconds = ((Date.now() - startedAt) / 1000).toFixed(1)
if (terminal.status === 'completed') {
  line(`${green('✔ completed')} in ${seconds}s`)
} else if (terminal.status === 'cancelled') {
  line(`${yellow('■ cancelled')} (${terminal.cancellation ?? 'unknown'}) after ${seconds}s`)
} else {
  const f = terminal.failure ?? {}
  line(`${red('✖ failed')} after ${seconds}s — ${f.source}${f.code ? ` ${f.code}` : ''}: ${f.message}`)
  if (f.detail !== undefined) line(dim(`  detail: ${JSON.stringify(f.detail)}`))
}
line(`tokens (this turn): ${fmtUsage(terminal.usage)}`)
if (lastUsage?.contextWindow) line(dim(`context window: ${lastUsage.contextWindow}`))
if (terminal.structuredOutput !== undefined) line(`structured output: ${JSON.stringify(terminal.structuredOutput)}`)

await mode.cleanup()
process.exitCode = terminal.status === 'completed' ? 0 : 1
