// docs/app-tools.md's example, run as written there (the regions between `docs:` markers below
// are the page's code blocks, verbatim) against the pinned Codex CLI and the loopback mock
// model: the zod-schema tool answers, its bad arguments never reach it, its deadline aborts it,
// and the stop button's abort ends the turn cancelled with the tool's signal aborted.
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'

import { runTurn as packageRunTurn } from '../../index.js'
import type { AppTool, RunTurnOptions, TerminalEvent, Turn } from '../../index.js'
import { codexBinaryPath, createGitCwd, messageResponse, startMockModel, toolCallResponse, toolCallsResponse, toolOutput } from '../../testing/index.js'
import type { ScriptedResponse } from '../../testing/index.js'
import { docBlock } from '../support/docs.js'

const PAGE = 'docs/app-tools.md'

/** The lines between `// docs:begin <name>` and `// docs:end` in this file, without their indent. */
function region(name: string): string {
  const source = readFileSync(__filename, 'utf8')
  const match = new RegExp(`\\n( *)// docs:begin ${name}\\n([\\s\\S]*?)\\n *// docs:end`).exec(source)
  if (!match) throw new Error(`no docs region ${name}`)
  const [, indent, body] = match
  return body.split('\n').map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line)).join('\n') + '\n'
}

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** What the example's CI does in a scenario: pass at once, or wait until the signal aborts. */
type Ci = 'passes' | 'waits'

/** The page's example, run against the mock model playing `scenario`; `onWaiting` runs when CI is waited for. */
async function example(scenario: ScriptedResponse[], mode: Ci, change?: (tools: Record<string, { timeoutMs?: number }>) => void, onWaiting?: (stop: () => void) => void) {
  const model = await startMockModel(scenario)
  const repo = createGitCwd()
  cleanups.push(
    () => model.close(),
    () => repo.cleanup(),
  )
  const cwd = repo.path
  const seen: Array<{ branch: unknown; checks: unknown; signal: AbortSignal }> = []
  const stopButton: { onclick: null | (() => void) } = { onclick: null }
  const ci = {
    waitForRun(branch: string, { checks, signal }: { checks: string[]; signal: AbortSignal }) {
      seen.push({ branch, checks, signal })
      if (mode === 'passes') return Promise.resolve({ passed: true, log: '' })
      onWaiting?.(() => stopButton.onclick!())
      return new Promise<{ passed: boolean; log: string }>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))
    },
  }
  // The page's `runTurn`, given the mock model's Codex and home.
  const runTurn = (options: RunTurnOptions): Turn => packageRunTurn({ ...options, codexPath: codexBinaryPath(), env: model.env })

  // docs:begin definition
  const WaitForCi = z.object({
    branch: z.string().describe('The git branch'),
    checks: z.array(z.string()).default([]),
  })

  const tools = {
    wait_for_ci: {
      description: 'Waits for the CI run of a branch to finish and says how it ended.',
      inputSchema: WaitForCi,
      // CI takes a while: up to 20 minutes for this tool (the default is 2).
      timeoutMs: 20 * 60_000,
      async execute({ branch, checks }, { signal }) {
        // The app's own code; it stops when the signal aborts (the deadline, or the turn's abort).
        const run = await ci.waitForRun(branch, { checks, signal })
        if (run.passed) return `CI passed on ${branch}.`
        return { content: [{ type: 'text', text: `CI failed on ${branch}:\n${run.log}` }], isError: true }
      },
    } satisfies AppTool<z.output<typeof WaitForCi>>,
  }
  // docs:end
  change?.(tools)

  // docs:begin run
  const turn = runTurn({ prompt: 'Push my branch and tell me when CI is green.', cwd, tools })
  stopButton.onclick = () => turn.abort()
  const terminal = await turn.outcome
  // docs:end
  return { terminal: terminal as TerminalEvent, model, seen }
}

describe('docs/app-tools.md: the example', { timeout: 120_000 }, () => {
  it('is the page’s, verbatim', () => {
    expect(docBlock(PAGE, 'An example', { containing: 'const tools' })).toBe(region('definition'))
    expect(docBlock(PAGE, 'An example', { containing: 'stopButton' })).toBe(region('run'))
  })

  it("answers with zod's parsed arguments; arguments zod refuses never reach it, and the model is told which", async () => {
    const { terminal, model, seen } = await example(
      [
        toolCallsResponse([
          { name: 'wait_for_ci', args: { branch: 42 }, callId: 'bad' },
          { name: 'wait_for_ci', args: { branch: 'main' }, callId: 'good' },
        ]),
        messageResponse('CI is green.'),
      ],
      'passes',
    )
    expect(terminal.status, JSON.stringify(terminal.failure)).toBe('completed')
    expect(seen.map(({ branch, checks }) => ({ branch, checks }))).toEqual([{ branch: 'main', checks: [] }])
    const next = model.requests[1].body
    expect(toolOutput(next, 'good')).toBe('CI passed on main.')
    expect(JSON.stringify(toolOutput(next, 'bad'))).toContain('branch')
  })

  it('past its deadline the signal aborts with a TimeoutError, and the model is told', async () => {
    const { terminal, model, seen } = await example(
      [toolCallResponse('wait_for_ci', { branch: 'main' }, { callId: 'slow' }), messageResponse('CI is slow.')],
      'waits',
      (tools) => {
        // The same tool with a deadline a test can wait for.
        tools.wait_for_ci.timeoutMs = 300
      },
    )
    expect(terminal.status, JSON.stringify(terminal.failure)).toBe('completed')
    expect(seen).toHaveLength(1)
    expect((seen[0].signal.reason as DOMException).name).toBe('TimeoutError')
    expect(JSON.stringify(toolOutput(model.requests[1].body, 'slow'))).toMatch(/timed out/i)
  })

  it("the stop button aborts the turn: the tool's signal aborts and the turn ends cancelled", async () => {
    const { terminal, model, seen } = await example([toolCallResponse('wait_for_ci', { branch: 'main' }, { callId: 'stopped' })], 'waits', undefined, (stop) => setImmediate(stop))
    expect(terminal.status).toBe('cancelled')
    expect(seen).toHaveLength(1)
    expect(seen[0].signal.aborted).toBe(true)
    expect(model.requests).toHaveLength(1)
  })
})
