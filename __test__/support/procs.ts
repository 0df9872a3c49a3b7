// Process-tree evidence for tests: which processes are still alive in a process group, or
// below a pid. Reads /proc (Linux), which is where the suites run.
import { readdirSync, readFileSync } from 'node:fs'

interface ProcStat {
  pid: number
  ppid: number
  pgrp: number
  session: number
  state: string
}

function readStat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { pid, state: rest[0], ppid: Number(rest[1]), pgrp: Number(rest[2]), session: Number(rest[3]) }
  } catch {
    return null
  }
}

export function allProcesses(): ProcStat[] {
  const out: ProcStat[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const stat = readStat(Number(name))
    if (stat) out.push(stat)
  }
  return out
}

/** Live (not zombie) processes whose process group is `pgid`. */
export function liveInGroup(pgid: number): number[] {
  return allProcesses()
    .filter((p) => p.pgrp === pgid && p.state !== 'Z')
    .map((p) => p.pid)
}

/** Whether `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  const stat = readStat(pid)
  return stat !== null && stat.state !== 'Z'
}

/** Polls until `check` returns true or `ms` passes; returns the last result. */
export async function eventually(check: () => boolean, ms = 3000, every = 25): Promise<boolean> {
  const until = Date.now() + ms
  for (;;) {
    if (check()) return true
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, every))
  }
}

/**
 * Live processes whose environment holds `RENNET_CODEX_TREE=<marker>`: the marker the addon
 * gives each child (the fake logs it), inherited by everything the child starts unless it
 * replaces its environment.
 */
export function liveWithMarker(marker: string, { prefix = false } = {}): number[] {
  const needle = `RENNET_CODEX_TREE=${marker}`
  const matches = (entry: string) => (prefix ? entry.startsWith(needle) : entry === needle)
  return allProcesses()
    .filter((p) => p.state !== 'Z')
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0').some(matches)
      } catch {
        return false
      }
    })
    .map((p) => p.pid)
}

/** How many file descriptors this process has open. */
export function openFds(): number {
  return readdirSync('/proc/self/fd').length
}
