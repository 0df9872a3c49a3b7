// What /proc says about processes (Linux), for everything that checks what outlived whom: the
// test suites (__test__/support/procs.ts), the bench and the Windows lane. One reading of
// /proc/<pid>/stat, environ and cmdline, so that a change of how a process is recognised is
// made once.

import { readdirSync, readFileSync } from 'node:fs'

/**
 * The path of `/proc/<rest>`, on Linux only. Elsewhere these helpers refuse rather than answer
 * wrongly: macOS has no `/proc` (every process would read as gone, and every "nothing left"
 * check would pass), and a Windows Node under Wine reads the Linux host's `/proc` through the
 * drive Z:, whose pids and process groups are not Windows pids (a check through it matches an
 * unrelated process by chance). The checks there use the system's own answers (`isAlive`
 * below, `psProcesses` and `windowsProcesses` of the suites).
 */
function proc(rest) {
  if (process.platform !== 'linux') throw new Error(`/proc/${rest}: Linux's process table, and this is ${process.platform}; use the system's own process check`)
  return `/proc/${rest}`
}

/** `/proc/<pid>/stat` as the fields the checks use; null once the process is gone. */
export function statOf(pid) {
  const path = proc(`${pid}/stat`)
  try {
    const text = readFileSync(path, 'utf8')
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ')
    // `start`: field 22, clock ticks since boot; a pid reused by another process has another.
    return { pid, state: rest[0], ppid: Number(rest[1]), pgrp: Number(rest[2]), session: Number(rest[3]), start: rest[19] }
  } catch {
    return null
  }
}

/** Every process of the table. */
export function processTable() {
  const out = []
  for (const name of readdirSync(proc(''))) {
    if (!/^\d+$/.test(name)) continue
    const stat = statOf(Number(name))
    if (stat) out.push(stat)
  }
  return out
}

/**
 * Whether `pid` exists, by signal 0, on every system: on Windows libuv opens the process and
 * checks that it has not exited; on Unix a zombie still answers.
 */
export function exists(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it exists, as another user's process.
    return e.code === 'EPERM'
  }
}

/**
 * Whether `pid` exists and is not a zombie (elsewhere than Linux: whether it exists, a zombie
 * counted as alive, so that a leftover check errs on its side).
 */
export function isAlive(pid) {
  if (process.platform !== 'linux') return exists(pid)
  const stat = statOf(pid)
  return stat !== null && stat.state !== 'Z'
}

/** The environment a process was started with (empty once it is gone or not ours to read). */
export function environOf(pid) {
  const path = proc(`${pid}/environ`)
  try {
    const entries = readFileSync(path, 'latin1').split('\0').filter(Boolean)
    return new Map(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]))
  } catch {
    return new Map()
  }
}

/**
 * The command line and the environment of every process, as the raw text `/proc` gives
 * (arguments and entries separated by NUL): what a secret check scans. `environ` is '' where
 * the process is not ours to read; a process that ended meanwhile is left out.
 */
export function rawProcessTexts() {
  const out = []
  for (const name of readdirSync(proc(''))) {
    if (!/^\d+$/.test(name)) continue
    let cmdline
    try {
      cmdline = readFileSync(proc(`${name}/cmdline`), 'latin1')
    } catch {
      continue
    }
    let environ = ''
    try {
      environ = readFileSync(proc(`${name}/environ`), 'latin1')
    } catch {
      // another user's process
    }
    out.push({ pid: Number(name), cmdline, environ })
  }
  return out
}

/**
 * Live processes whose environment holds `NAME=value` (`entry`), or, with `prefix`, an entry
 * that starts with it: the way a marker given to a child finds everything it started.
 */
export function liveWithEnvironment(entry, { prefix = false } = {}) {
  const name = entry.slice(0, entry.indexOf('='))
  const value = entry.slice(entry.indexOf('=') + 1)
  return processTable()
    .filter((p) => p.state !== 'Z')
    .filter((p) => {
      const found = environOf(p.pid).get(name)
      return found !== undefined && (prefix ? found.startsWith(value) : found === value)
    })
    .map((p) => p.pid)
}

/** The command line of a process, as `pid: argv` for a report. */
export function describeProcess(pid) {
  const path = proc(`${pid}/cmdline`)
  try {
    return `${pid}: ${readFileSync(path, 'utf8').split('\0').join(' ').trim()}`
  } catch {
    return `${pid}: (gone)`
  }
}
