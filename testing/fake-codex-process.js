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

/**
 * Starts a long-sleeping grandchild of kind `mode` and has it recorded through `log` (or, for
 * those that move away before they settle, has it append its own line to `logPath`, so that a
 * reader never sees it where it no longer is).
 */
function startGrandchild(mode, log, logPath) {
  const quiet = { stdio: 'ignore' }
  const own = (pid) => `{"run":${process.pid},"event":"grandchild","pid":${pid},"mode":"${mode}"}`
  let child
  switch (mode) {
    case 'ignore':
    case 'inherit':
      child = spawn('sleep', ['60'], { stdio: ['ignore', mode, mode] })
      break
    case 'pgroup': {
      // setpgid(0, 0), then the sleep: same session, own group.
      const report = `setpgrp(0, 0) or die; open(my $f, ">>", $ARGV[0]) or die; print $f qq(${own('$$')}\\n); close $f; exec "sleep", "60"`
      spawn('perl', ['-e', report, logPath], quiet).unref()
      return
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
      if (mode === 'daemon-noenv') spawn('/usr/bin/env', ['-i', ...argv], { ...quiet, env: {} })
      else spawn(argv[0], argv.slice(1), quiet)
      return
    }
    default:
      throw new Error(`unknown grandchild mode ${mode}`)
  }
  child.unref()
  log({ event: 'grandchild', pid: child.pid, mode })
}

/**
 * Closes fd 1 for good: Node never closes it itself (process.stdout.end() leaves it open), and
 * /dev/null takes its place so that no later open() lands on fd 1.
 */
function closeStdout() {
  closeSync(1)
  openSync(process.platform === 'win32' ? 'NUL' : '/dev/null', 'w')
}

module.exports = { ownPgid, startGrandchild, closeStdout, GRANDCHILD_MODES }
