// Compiled, never run (`pnpm test:types`): the test kit's agent-loop additions from ESM, through
// the package's own `exports` (`@rennet/codex/testing`).
import { runTurn } from '@rennet/codex'
import {
  applyPatchCommand,
  byThread,
  createLoggedOutHome,
  execCommandResponse,
  messageResponse,
  spawnAgentResponse,
  spawnedAgents,
  startMockModel,
  waitAgentResponse,
  writeFakeCodex,
} from '@rennet/codex/testing'
import type { FakeAgentLoopStep, FakeCodexScript, LoggedOutHome, ThreadChooser } from '@rennet/codex/testing'

const steps: FakeAgentLoopStep[] = [
  { type: 'agent', threadId: 'child', spawn: 'activity', early: true, detach: true, steps: [{ type: 'message', text: 'hi' }, { type: 'hang' }] },
  { type: 'goal', objective: 'ship', status: 'active' },
  { type: 'plan', text: ['1. ', 'do it'] },
  { type: 'question', questions: [{ id: 'q', question: 'Which?', options: ['a', { label: 'b', description: 'B' }] }] },
  { type: 'approval', command: 'touch /x', justification: 'why' },
  { type: 'terminal', command: 'python3 -i', stdin: ['1\n'] },
]
// @ts-expect-error an agent needs its thread
export const noThread: FakeAgentLoopStep = { type: 'agent', steps: [] }
// @ts-expect-error a goal status Codex does not have
export const badGoal: FakeAgentLoopStep = { type: 'goal', status: 'done' }

const script: FakeCodexScript = { steps, continuations: [[{ type: 'goal', status: 'complete' }]], review: { review: 'Fine.', steps: [] } }
export const codexPath: string = writeFakeCodex(script)

export async function helper(cwd: string): Promise<string[]> {
  const chooser: ThreadChooser = byThread(
    [spawnAgentResponse('Count.'), (request) => waitAgentResponse(spawnedAgents(request.body).map((a) => a.agent_id)), messageResponse('Done.')],
    [execCommandResponse(applyPatchCommand({ add: { 'a.txt': 'a\n' }, remove: ['b.txt'] })), messageResponse('Edited.')],
  )
  const model = await startMockModel([chooser], { extraConfig: '[features]\nmulti_agent_v2 = true\n' })
  try {
    const terminal = await runTurn({ prompt: 'p', cwd, env: model.env, until: 'idle' }).outcome
    return [...chooser.threads, ...terminal.agents.map((a) => a.status), String(model.requests[0]?.thread?.index)]
  } finally {
    await model.close()
  }
}

export const home: LoggedOutHome = createLoggedOutHome({ config: '' })
