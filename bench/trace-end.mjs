#!/usr/bin/env node
// Where the end of a real turn goes, seen from outside the client: runs turns of the real
// suite (real.mjs) under `perf trace -T -e exit_group,wait4,kill`, whose timestamps are on the
// monotonic clock the mock and the worker stamp their moments with, and splits "the model ended
// its response → the consumer saw the terminal" into:
//
//   response end → last event     Codex finishing the turn (item/completed, usage, status,
//                                 turn/completed) and the client delivering what precedes it
//   last event → Codex exit_group the client's steps before closing stdin (this package: a look
//                                 at /proc) and Codex's shutdown after EOF
//   exit_group → reaped           the kernel ending the process (until wait4 returned it)
//   reaped → terminal             the client's steps after the exit (this package: a look at
//                                 /proc and signalling the group) and the hand-over to the loop
//
// Only three syscalls are traced, so the tracer costs the client next to nothing. Linux with
// `perf` only; not part of `pnpm bench`.
//
//   node bench/trace-end.mjs [runs per client, default 10] [clients, default addon,baseline,sdk]

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from './common.mjs'
import { oneRun } from './real.mjs'

const runs = Number(process.argv[2] ?? 10)
const clients = (process.argv[3] ?? 'addon,baseline,sdk').split(',')

if (spawnSync('perf', ['trace', '-e', 'exit_group', '--', 'true'], { stdio: 'ignore' }).status !== 0) {
  console.error('trace-end: `perf trace` does not run here (Linux perf with syscall tracepoints is needed)')
  process.exit(2)
}

const dir = mkdtempSync(join(tmpdir(), 'rennet-trace-end-'))

/** One perf trace line: entry time, duration (null while unfinished), thread, call, result. */
function parse(line) {
  const m = /^\s*([\d.]+) \(\s*([\d.]*)(?: ms)?\): (.+?)\/(\d+) (.*?)\s*(?:= (.*))?$/.exec(line)
  if (!m) return null
  return { at: Number(m[1]), ms: m[2] ? Number(m[2]) : null, comm: m[3], tid: Number(m[4]), call: m[5], result: m[6] ?? null }
}

/** The moments of the child's end in one trace: exit_group, reaped, first kill after it. */
function endOf(lines, childName) {
  const records = lines.map(parse).filter(Boolean)
  // The client reaps its Codex child: wait4 returning `<pid> (codex)`.
  const reap = records.find((r) => r.call.startsWith('wait4(') && new RegExp(`^\\d+ \\(${childName}\\)$`).test(r.result ?? ''))
  if (!reap) return null
  const pid = Number(reap.result.split(' ')[0])
  // Codex's exit_group, made by its main thread (tid = pid) when its main returns.
  const exit = records.find((r) => r.call.startsWith('exit_group(') && r.tid === pid)
  const reapedAt = reap.at + (reap.ms ?? 0)
  const kill = records.find((r) => r.call.startsWith('kill(') && r.at >= reap.at)
  return { pid, exitAt: exit?.at ?? null, reapedAt, killAt: kill?.at ?? null }
}

const rows = Object.fromEntries(clients.map((c) => [c, []]))
try {
  for (let r = 0; r < runs; r++) {
    const order = [...clients.slice(r % clients.length), ...clients.slice(0, r % clients.length)]
    for (const client of order) {
      const out = join(dir, `${client}-${r}.txt`)
      const run = await oneRun({ client, scenario: 'turn', wrapper: ['perf', 'trace', '-T', '-e', 'exit_group,wait4,kill', '-o', out, '--'] })
      if (run.errors?.length) {
        console.log(`${client} ${r + 1}: ERRORS ${run.errors.join('; ')}`)
        continue
      }
      const completedAt = run.requests[0].sent.find((s) => s.type === 'response.completed').atMs
      // codex exec (the SDK's child) is the same binary.
      const end = endOf(readFileSync(out, 'utf8').split('\n'), 'codex')
      const row = {
        'response end → last event': run.lastEventAt - completedAt,
        'last event → Codex exit_group': end?.exitAt ? end.exitAt - run.lastEventAt : null,
        'exit_group → reaped': end?.exitAt ? end.reapedAt - end.exitAt : null,
        'reaped → group signalled': end?.killAt ? end.killAt - end.reapedAt : null,
        'reaped → terminal': end ? run.terminalAt - end.reapedAt : null,
        'response end → terminal': run.terminalAt - completedAt,
      }
      rows[client].push(row)
      console.log(`${client} ${r + 1}/${runs}: ${Object.entries(row).map(([k, v]) => `${k} ${v === null ? '–' : v.toFixed(1)}`).join(', ')}`)
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}

console.log(`\nwhere the end of a real turn goes: medians (ms) of ${runs} runs per client; for codex-sdk the terminal is the end of its stream`)
const keys = Object.keys(Object.values(rows).find((l) => l.length)?.[0] ?? {})
const table = [['', ...clients], ...keys.map((k) => [k, ...clients.map((c) => median(rows[c].map((x) => x[k]))?.toFixed(1) ?? '–')])]
const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)))
table.forEach((r, i) => {
  console.log(`| ${r.map((c, j) => c.padEnd(widths[j])).join(' | ')} |`)
  if (i === 0) console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
})
