#!/usr/bin/env node
// The Windows lane's host death from Linux: a Windows host (__test__/fixtures/windows-host.mjs,
// run by the Windows node under Wine) starts a turn whose child stays; once that child runs
// its turn, the host's Wine process gets SIGKILL from here — no TerminateProcess, no exit of
// Wine's own, the way a crash or the OOM killer ends it — and every process of the turn must
// then be gone: the Job Object's kill-on-close, which Wine's server applies when it closes
// the dead host's handles (Windows' kernel does the same).
//
//   WINEPREFIX=<prefix> node scripts/windows/host-kill.mjs <node.exe> <stage>
//
// Two turns: the test kit's fake behind codex.cmd (cmd.exe, the fake's Node, a detached Node
// grandchild; the fake ignores the interrupt and stdin EOF), and the real codex.exe running
// `ping -n 600 127.0.0.1` through cmd.exe against the loopback mock. What runs is read from
// /proc: Wine's processes are Linux processes carrying WINEPREFIX in their environment, so
// everything of the prefix but Wine's own services and the host is the turn's. The bounds only
// stop a broken run; nothing here is timed. The host also runs a ping of its own outside any
// job, which must outlive it: the control, without which the turn's processes going could be
// Wine ending everything of a dead process rather than the job. Whatever is left is killed from
// Linux; what the turn left fails the run. Exit status 0 when both turns left nothing.
//
// Only the processes are looked at: which Windows mechanism ended them is not visible from
// here, the control and the Windows tests (a child in its job, the job's kill-on-close) say
// which.
import { spawn } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isAlive } from '../processes.mjs'
import { prefixProcesses } from './prefix.mjs'

const [nodeExe, stage] = process.argv.slice(2)
const prefix = process.env.WINEPREFIX
if (!nodeExe || !stage || !prefix) throw new Error('usage: WINEPREFIX=<prefix> node host-kill.mjs <node.exe> <stage>')

/** Up to the host saying its turn's child runs: Wine starts slowly, the real Codex more so. */
const RUNNING_BOUND_MS = 240_000
/** Up to the turn's processes being gone after the kill. */
const GONE_BOUND_MS = 30_000

const log = (text) => console.log(`host-kill: ${text}`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(check, ms, every = 100) {
  const end = Date.now() + ms
  for (;;) {
    const value = check()
    if (value) return value
    if (Date.now() > end) return null
    await sleep(every)
  }
}

/** The JSON lines the host wrote so far. */
function linesOf(path) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line)
      } catch {
        return { unparsed: line }
      }
    })
}

/** The host's own ping, outside any job. */
const CONTROL = /^\d+: \S*\bping(\.exe)?"? +-n +602/i

/** What each mode's turn must have running before the kill, by command line. */
const EXPECTED = {
  fake: [/cmd\.exe.*codex\.cmd/i, /codex\.cjs/i, /setTimeout/],
  // ping.exe itself, not the cmd.exe whose command line names it.
  real: [/codex\.exe/i, /^\d+: \S*\bping(\.exe)?"? +-n +600/i],
}

/**
 * One host, killed once its turn's child runs. Returns null when it passed, 'retry' when the
 * turn never got going (Wine's cmd.exe now and then fails to start a .cmd's command: the
 * Windows lane's retry), else what went wrong.
 */
async function once(mode) {
  const dir = mkdtempSync(join(tmpdir(), 'rennet-host-kill-'))
  const output = join(dir, 'host.jsonl')
  const out = openSync(output, 'w')
  // Z: is the Linux root in a Wine prefix.
  const windowsDir = `Z:${dir.replaceAll('/', '\\')}`
  const before = new Set(prefixProcesses(prefix).map((p) => p.pid))
  const host = spawn('wine', [nodeExe, '__test__/fixtures/windows-host.mjs', mode], {
    cwd: stage,
    env: { ...process.env, HOST_DIR: windowsDir },
    // The Windows node cannot use a Unix pipe as its stdout: a file.
    stdio: ['ignore', out, out],
  })
  closeSync(out)
  const exited = new Promise((resolve) => host.once('exit', (code, signal) => resolve(signal ?? code)))
  let hostGone = false
  void exited.then(() => (hostGone = true))
  let tree = []
  let outside = []
  try {
    const running = await until(() => {
      const lines = linesOf(output)
      if (hostGone || lines.some((l) => l.type === 'terminal')) return { ended: lines }
      return lines.find((l) => l.host === 'running')
    }, RUNNING_BOUND_MS)
    if (!running || running.ended) {
      const lines = running?.ended ?? linesOf(output)
      const said = lines.map((l) => l.type ?? l.host ?? l.unparsed).join(', ')
      if (running?.ended && mode === 'fake') return 'retry'
      return `the host's turn never ran (${said || 'nothing said'})`
    }
    // The turn's processes: everything new in the prefix but the host (wine execs into it,
    // so its Linux pid is the one spawned here).
    const found = await until(() => {
      const now = prefixProcesses(prefix).filter((p) => p.pid !== host.pid && !before.has(p.pid))
      return [...EXPECTED[mode], CONTROL].every((re) => now.some((p) => re.test(p.line))) && now
    }, RUNNING_BOUND_MS, 250)
    if (!found) {
      const now = prefixProcesses(prefix).map((p) => p.line)
      return `the turn's processes never all ran (want ${EXPECTED[mode].join(', ')}; the prefix has:\n  ${now.join('\n  ')})`
    }
    // The control and the cmd.exe running it are the host's own, not the turn's.
    const control = found.filter((p) => CONTROL.test(p.line) || /cmd\.exe.* -n 602/i.test(p.line))
    outside = control
    tree = found.filter((p) => !control.includes(p))
    log(`${mode}: the turn runs (${tree.length} processes: ${tree.map((p) => p.line.replace(/\s+/g, ' ').slice(0, 80)).join(' | ')}); SIGKILL to the host ${host.pid}`)
    process.kill(host.pid, 'SIGKILL')
    await exited
    const gone = await until(() => tree.every((p) => !isAlive(p.pid)), GONE_BOUND_MS)
    if (!gone) {
      const left = tree.filter((p) => isAlive(p.pid))
      return `${left.length} process(es) of the turn outlived the host:\n  ${left.map((p) => p.line).join('\n  ')}`
    }
    if (!control.some((p) => CONTROL.test(p.line) && isAlive(p.pid))) {
      return "the host's own ping outside any job did not outlive it either: this check cannot tell the job's kill-on-close from Wine ending everything"
    }
    log(`${mode}: every process of the turn is gone; the host's own ping outside any job still runs (the control), now ended`)
    return null
  } finally {
    // Whatever the verdict, nothing of it stays.
    if (!hostGone) host.kill('SIGKILL')
    for (const p of [...tree, ...outside].filter((p) => isAlive(p.pid))) {
      try {
        process.kill(p.pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
    await exited
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
  }
}

let failed = false
for (const mode of ['fake', 'real']) {
  let verdict = await once(mode)
  if (verdict === 'retry') {
    log(`${mode}: the turn's child did not start (Wine's cmd.exe); once more`)
    verdict = await once(mode)
  }
  if (verdict) {
    failed = true
    console.error(`host-kill: ${mode}: ${verdict === 'retry' ? "the turn's child did not start, twice" : verdict}`)
  }
}
process.exit(failed ? 1 : 0)
