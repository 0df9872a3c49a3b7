// `@rennet/codex/testing` for the agent loop: the fake's new steps refused when wrong, the mock's
// per-thread queues (`byThread`), response ids of their own, `extraConfig` merged into the kit's
// tables, a logged-out home, a file edit through `apply_patch`; and the examples of the kit in
// docs/agent-loop.md, run here as written there (the regions between `docs:` markers are compared
// with the page's code blocks, verbatim).
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { readAccount, runTurn } from '../../index.js'
import type { FakeCodexScript } from '../../testing/index.js'
import {
  applyPatchCommand,
  byThread,
  codexBinaryPath,
  createGitCwd,
  createLoggedOutHome,
  execCommandResponse,
  fakeCodexRuns,
  messageResponse,
  offeredTools,
  removeFakeCodexes,
  spawnAgentResponse,
  spawnedAgents,
  startMockModel,
  startMockResponses,
  waitAgentResponse,
  writeFakeCodex,
} from '../../testing/index.js'
import type { GitCwd, MockModel, MockServer } from '../../testing/index.js'
import { BOUND_MS, eventually, liveInGroup } from '../support/procs.js'

const open: Array<MockModel | MockServer | GitCwd | { cleanup(): void }> = []
afterEach(async () => {
  for (const item of open.splice(0).reverse()) 'close' in item ? await item.close() : item.cleanup()
  removeFakeCodexes()
})

/** Nothing of a fake's runs is left running. */
async function fakeGone(codexPath: string) {
  for (const run of fakeCodexRuns(codexPath)) expect(await eventually(() => liveInGroup(run.pid).length === 0, BOUND_MS)).toBe(true)
}

describe('the fake: agent-loop steps', () => {
  it('refuses a step or field it cannot play, naming it', () => {
    const wrong: Array<[unknown, RegExp]> = [
      [{ steps: [{ type: 'agent', steps: [] }] }, /script\.steps\[0\]\.threadId must be a string/],
      [{ steps: [{ type: 'agent', threadId: 't', steps: [{ type: 'mesage' }] }] }, /script\.steps\[0\]\.steps\[0\]\.type must be one of/],
      [{ steps: [{ type: 'agent', threadId: 't', steps: [], spawn: 'magic' }] }, /script\.steps\[0\]\.spawn must be one of collab, activity, rootTurnId/],
      [{ steps: [{ type: 'goal', status: 'done' }] }, /script\.steps\[0\]\.status must be one of active, /],
      [{ steps: [{ type: 'question', questions: [{ id: 'q' }] }] }, /script\.steps\[0\]\.questions\[0\] must be \{ id, question/],
      [{ steps: [{ type: 'approval' }] }, /script\.steps\[0\]\.command must be a string/],
      [{ steps: [{ type: 'plan' }] }, /script\.steps\[0\]\.text must be a string or an array of strings/],
      [{ continuations: [{ type: 'message', text: 'x' }] }, /script\.continuations\[0\] must be an array of steps/],
      [{ review: { steps: [{ type: 'nope' }] } }, /script\.review\.steps\[0\]\.type must be one of/],
    ]
    for (const [script, message] of wrong) expect(() => writeFakeCodex(script as FakeCodexScript)).toThrow(message)
  })

  it("an approval answered 'cancel' leaves its item declined and ends the turn interrupted, as Codex does", async () => {
    const cwd = createGitCwd()
    open.push(cwd)
    const codexPath = writeFakeCodex({ steps: [{ type: 'approval', command: 'touch x' }, { type: 'message', text: 'not played' }] })
    const events = []
    const turn = runTurn({ prompt: 'go', cwd: cwd.path, codexPath, access: 'ask', onServerRequest: () => ({ decision: 'cancel' }) })
    for await (const event of turn) events.push(event)
    const terminal = events.at(-1)
    expect(terminal?.type === 'terminal' && [terminal.status, terminal.cancellation]).toEqual(['cancelled', 'interrupted'])
    const items = events.flatMap((e) => (e.type === 'itemCompleted' ? [e.item] : []))
    expect(items.filter((i) => i.type === 'commandExecution').map((i) => (i as { status: string }).status)).toEqual(['declined'])
    expect(items.some((i) => i.type === 'agentMessage')).toBe(false)
    await fakeGone(codexPath)
  })

  it('docs example: a sub-agent that outlives the turn, waited for with until: idle', async () => {
    // docs:begin fake-agent
    const codexPath = writeFakeCodex({
      steps: [
        // A helper Codex spawns; `detach`: the parent's turn goes on (and ends) while it works.
        { type: 'agent', threadId: 'helper-thread', detach: true, steps: [{ type: 'delay', ms: 100 }, { type: 'message', text: 'Found 3 files.' }, { type: 'usage', input: 40, output: 10 }] },
        { type: 'message', text: 'I asked a helper.' },
      ],
    })
    const turn = runTurn({ prompt: 'Count the files', cwd: process.cwd(), codexPath, until: 'idle' })
    const helper: string[] = []
    for await (const event of turn) if (event.type === 'agent') helper.push(event.event.type)
    const terminal = await turn.outcome
    expect(helper).toContain('turnCompleted')
    expect(terminal.finalMessage).toBe('I asked a helper.')
    expect(terminal.agents).toEqual([
      { threadId: 'helper-thread', nickname: null, status: 'completed', usage: { input: 40, cacheRead: 0, output: 10, reasoning: 0, total: 50 } },
    ])
    // docs:end
    await fakeGone(codexPath)
  })

  it('docs example: a plan-mode question answered by the app', async () => {
    // docs:begin fake-question
    const codexPath = writeFakeCodex({
      steps: [
        { type: 'question', questions: [{ id: 'db', question: 'Which database?', options: ['Postgres', 'SQLite'] }] },
        { type: 'plan', text: ['1. Add ', 'SQLite'] },
        { type: 'message', text: 'Planned.' },
      ],
    })
    const turn = runTurn({
      prompt: 'Plan the storage layer',
      cwd: process.cwd(),
      codexPath,
      mode: 'plan',
      onServerRequest: (request) => (request.method === 'item/tool/requestUserInput' ? { answers: { db: { answers: ['SQLite'] } } } : undefined),
    })
    let plan = ''
    for await (const event of turn) if (event.type === 'planDelta') plan += event.delta
    expect(plan).toBe('1. Add SQLite')
    // What Codex was answered, as the fake noted it.
    const [run] = fakeCodexRuns(codexPath)
    expect(run.events.find((e) => e.event === 'question-answered')?.reply.result).toEqual({ answers: { db: { answers: ['SQLite'] } } })
    // docs:end
    await fakeGone(codexPath)
  })

  it('docs example: a goal Codex keeps working on', async () => {
    // docs:begin fake-goal
    const codexPath = writeFakeCodex({
      steps: [{ type: 'goal', objective: 'Fix the build' }, { type: 'message', text: 'Looking into it.' }],
      // Turns Codex starts by itself while the goal is active.
      continuations: [[{ type: 'message', text: 'Fixed.' }, { type: 'goal', status: 'complete' }]],
    })
    const followed = await runTurn({ prompt: 'Fix the build', cwd: process.cwd(), codexPath, until: 'idle' }).outcome
    expect(followed.finalMessage).toBe('Fixed.')
    const cut = await runTurn({ prompt: 'Fix the build', cwd: process.cwd(), codexPath }).outcome
    expect(cut.finalMessage).toBe('Looking into it.')
    expect(cut.cutOff).toEqual([{ kind: 'goal', objective: 'Fix the build', status: 'active', reason: 'turnCompleted' }])
    // docs:end
    await fakeGone(codexPath)
  })
})

describe('the mock model: byThread', () => {
  async function post(server: MockServer, thread: string | null) {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (thread) headers['thread-id'] = thread
    const res = await fetch(`${server.url}/responses`, { method: 'POST', headers, body: '{}' })
    return { status: res.status, text: await res.text() }
  }

  it('answers each thread from its own queue, in the order the threads first asked', async () => {
    const chooser = byThread([messageResponse('parent 1'), messageResponse('parent 2')], [(req) => messageResponse(`child of ${req.headers['thread-id']}`)])
    const server = await startMockResponses([messageResponse('before'), chooser])
    open.push(server)
    expect((await post(server, 'P')).text).toContain('before')
    expect((await post(server, 'P')).text).toContain('parent 1')
    expect((await post(server, 'C')).text).toContain('child of C')
    expect((await post(server, 'P')).text).toContain('parent 2')
    const beyond = await post(server, 'C')
    expect(beyond.status).toBe(400)
    expect(beyond.text).toContain('no scripted response for request #2 of thread #2 (C)')
    expect(chooser.threads).toEqual(['P', 'C'])
    expect(server.requests.map((r) => r.thread)).toEqual([
      undefined,
      { id: 'P', index: 0, request: 0 },
      { id: 'C', index: 1, request: 0 },
      { id: 'P', index: 0, request: 1 },
      { id: 'C', index: 1, request: 1 },
    ])
  })

  it('gives every response built without ids ids of its own', () => {
    const item = (events: ReturnType<typeof messageResponse>) => (events.find((e) => e.type === 'response.output_item.done') as { item: { id: string } }).item.id
    const [a, b] = [messageResponse('one'), messageResponse('two')]
    expect(item(a)).not.toBe(item(b))
    expect(a[0]).not.toEqual(b[0])
    expect(item(messageResponse('three', { id: 'resp_x' }))).toBe('msg_resp_x')
  })
})

describe('the mock model with the real Codex CLI', { timeout: 120_000 }, () => {
  it('docs example: a sub-agent answered on its own thread', async () => {
    const repo = createGitCwd()
    open.push(repo)
    // docs:begin mock-agent
    const model = await startMockModel([
      byThread(
        // The user's thread: spawn a helper, wait for it, answer.
        [
          spawnAgentResponse('Count the files.'),
          (request) => waitAgentResponse(spawnedAgents(request.body).map((agent) => agent.agent_id)),
          messageResponse('The helper counted 1 file.'),
        ],
        // The helper's thread.
        [messageResponse('1 file.')],
      ),
    ])
    try {
      const terminal = await runTurn({ prompt: 'Use a helper', cwd: repo.path, codexPath: codexBinaryPath(), env: model.env }).outcome
      expect(terminal.finalMessage).toBe('The helper counted 1 file.')
      expect(terminal.agents.map((agent) => agent.status)).toEqual(['completed'])
    } finally {
      await model.close()
    }
    // docs:end
  })

  it('docs example: extraConfig merges into the kit tables; a file edit through apply_patch', async () => {
    const repo = createGitCwd()
    open.push(repo)
    // docs:begin mock-config-edit
    const model = await startMockModel(
      [execCommandResponse(applyPatchCommand({ add: { 'notes/todo.md': '- ship it\n' } })), messageResponse('Wrote the note.')],
      // Goes into the kit's own [features] table: one table, which Codex reads.
      { extraConfig: '[features]\nmulti_agent_v2 = true\n' },
    )
    try {
      const terminal = await runTurn({ prompt: 'Write a note', cwd: repo.path, codexPath: codexBinaryPath(), env: model.env }).outcome
      expect(terminal.status).toBe('completed')
      expect(readFileSync(join(repo.path, 'notes/todo.md'), 'utf8')).toBe('- ship it\n')
      expect(readFileSync(model.configPath, 'utf8').match(/^\[features\]$/gm)).toHaveLength(1)
      // multi_agent_v2 took effect: the sub-agent tools are the `collaboration` namespace.
      expect(offeredTools(model.requests[0].body)).toContain('collaboration')
    } finally {
      await model.close()
    }
    // docs:end
    expect(offeredTools(model.requests[0].body)).not.toContain('multi_agent_v1')
  })

  it('extraConfig that is not TOML is refused before anything starts', async () => {
    await expect(startMockModel([], { extraConfig: '[features\nx = 1' })).rejects.toThrow(/extraConfig is not valid TOML/)
  })

  it('docs example: a home nobody is logged in to', async () => {
    // docs:begin logged-out
    const home = createLoggedOutHome()
    try {
      expect(existsSync(home.codexHome)).toBe(true)
      const account = await readAccount({ codexPath: codexBinaryPath(), env: home.env })
      expect(account).toMatchObject({ account: null, requiresOpenaiAuth: true })
    } finally {
      home.cleanup()
    }
    // docs:end
  })
})

describe('docs/agent-loop.md', () => {
  it('holds the examples of this file verbatim', () => {
    const page = readFileSync(join(__dirname, '..', '..', 'docs', 'agent-loop.md'), 'utf8')
    const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
    const source = readFileSync(__filename, 'utf8')
    const regions = [...source.matchAll(/\n( *)\/\/ docs:begin ([\w-]+)\n([\s\S]*?)\n *\/\/ docs:end/g)]
    expect(regions.map((r) => r[2])).toEqual(['fake-agent', 'fake-question', 'fake-goal', 'mock-agent', 'mock-config-edit', 'logged-out'])
    for (const [, indent, name, body] of regions) {
      const code = body
        .split('\n')
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
        .join('\n')
      expect(
        blocks.some((b) => b.includes(code)),
        `docs/agent-loop.md has the ${name} example`,
      ).toBe(true)
    }
  })
})
