'use strict'
// What the test kit's fake does as a process rather than as a protocol peer: its process group,
// the grandchildren a script asks for (the process trees a runner must end), and closing its
// stdout while it keeps running.

const { spawn, execFileSync } = require('node:child_process')
const { closeSync, openSync, readFileSync } = require('node:fs')

/** This process's group, or null where there is none to report (Windows). */
function ownPgid() {
  if (process.platform === 'win32') return null
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
  } catch {
    try {
      return Number(execFileSync('ps', ['-o', 'pgid=', '-p', String(process.pid)], { encoding: 'utf8' }).trim())
    } catch {
      return null
    }
  }
}

const GRANDCHILD_MODES = ['ignore', 'inherit', 'pgroup', 'session', 'daemon', 'daemon-noenv', 'detached-node']

/** How long the fake waits at most for a grandchild that records itself (a guard, not a pace). */
const RECORD_BOUND_MS = 60_000

/**
 * Starts the grandchildren `modes` (long sleepers) and has each recorded through `log` (or, for
 * those that move away before they settle, has it append its own line to `logPath`, so that a
 * reader never sees it where it no longer is). Resolves once every one is recorded and where it
 * stays: the fake serves nothing before, so that whatever ends the fake (a crash, a kill, its
 * runner) cannot come before a grandchild is in the log — one killed before it wrote its line
 * would pass unseen.
 */
async function startGrandchildren(modes, log, logPath) {
  const selfRecorded = []
  for (const mode of modes) {
    const helper = startGrandchild(mode, log, logPath)
    if (helper) selfRecorded.push(helper)
  }
  if (selfRecorded.length === 0) return
  const line = `{"run":${process.pid},"event":"grandchild",`
  const recorded = () => {
    try {
      return readFileSync(logPath, 'utf8').split('\n').filter((l) => l.startsWith(line)).length
    } catch {
      return 0
    }
  }
  const until = Date.now() + RECORD_BOUND_MS
  for (;;) {
    // A helper that failed records nothing: it is not waited for.
    const failed = selfRecorded.filter((h) => h.failed !== null)
    const settled = selfRecorded.every((h) => h.failed !== null || !h.untilExit || h.exited)
    if (settled && recorded() >= modes.length - failed.length) break
    if (Date.now() > until) {
      log({ event: 'grandchild-unrecorded', waitedMs: RECORD_BOUND_MS })
      break
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  for (const h of selfRecorded.filter((h) => h.failed !== null)) {
    log({ event: 'grandchild-failed', mode: h.mode, why: h.failed })
    process.stderr.write(`fake codex: the ${h.mode} grandchild did not start: ${h.failed}\n`)
  }
}

/**
 * Starts a long-sleeping grandchild of kind `mode`. Those the fake records itself are logged at
 * once (returns null); for one that records itself, returns its helper process's state: whether
 * it failed, and, for a double fork, whether the first process exited (only then has the
 * sleeper its final parent).
 */
function startGrandchild(mode, log, logPath) {
  const quiet = { stdio: 'ignore' }
  const own = (pid) => `{"run":${process.pid},"event":"grandchild","pid":${pid},"mode":"${mode}"}`
  const watch = (helper, untilExit) => {
    const state = { mode, untilExit, exited: false, failed: null }
    helper.on('error', (error) => (state.failed = error.message))
    helper.on('exit', (code, signal) => {
      state.exited = true
      if (code !== 0 && state.failed === null) state.failed = signal ? `killed by ${signal}` : `exited with code ${code}`
    })
    helper.unref()
    return state
  }
  let child
  switch (mode) {
    case 'ignore':
    case 'inherit':
      child = spawn('sleep', ['60'], { stdio: ['ignore', mode, mode] })
      break
    case 'pgroup': {
      // setpgid(0, 0), then the sleep: same session, own group. The helper becomes the sleeper.
      const report = `setpgrp(0, 0) or die; open(my $f, ">>", $ARGV[0]) or die; print $f qq(${own('$$')}\\n); close $f; exec "sleep", "60"`
      return watch(spawn('perl', ['-e', report, logPath], quiet), false)
    }
    case 'session':
      // Node's `detached` is setsid() in the child.
      child = spawn('sleep', ['60'], { ...quiet, detached: true })
      break
    case 'detached-node':
      // Its own session on Unix; on Windows DETACHED_PROCESS: no console, outside cmd.exe's.
      child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { ...quiet, detached: true })
      break
    case 'daemon':
    case 'daemon-noenv': {
      // `setsid -f` forks and its first process exits at once: the sleeper is an orphan from
      // the start and reports its own pid.
      const report = `printf '${own('%s')}\\n' $$ >> "$1"; exec sleep 60`
      const argv = ['setsid', '-f', 'sh', '-c', report, 'sh', logPath]
      const helper = mode === 'daemon-noenv' ? spawn('/usr/bin/env', ['-i', ...argv], { ...quiet, env: {} }) : spawn(argv[0], argv.slice(1), quiet)
      return watch(helper, true)
    }
    default:
      throw new Error(`unknown grandchild mode ${mode}`)
  }
  child.unref()
  log({ event: 'grandchild', pid: child.pid, mode })
  return null
}

/**
 * Closes fd 1 for good: Node never closes it itself (process.stdout.end() leaves it open), and
 * /dev/null takes its place so that no later open() lands on fd 1.
 */
function closeStdout() {
  closeSync(1)
  openSync(process.platform === 'win32' ? 'NUL' : '/dev/null', 'w')
}

module.exports = { ownPgid, startGrandchildren, closeStdout, GRANDCHILD_MODES }
