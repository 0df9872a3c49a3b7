// Compiled, never run (`pnpm test:types`): the test kit's types from ESM, through the
// package's own `exports` (`@rennet/codex/testing`).
import { runTurn } from '@rennet/codex'
import { codexBinaryPath, fakeCodexRuns, messageResponse, offeredTool, startMockModel, toolCallResponse, toolCallsResponse, toolOutput, writeFakeCodex } from '@rennet/codex/testing'
import type { DynamicToolSpec, FakeCodexScript, FakeStep, MockModel, ToolOutput } from '@rennet/codex/testing'
import kit from '@rennet/codex/testing'

const steps: FakeStep[] = [
  { type: 'message', text: ['Hel', 'lo'] },
  { type: 'command', command: 'ls', output: 'a\n', exitCode: 0 },
  { type: 'serverRequest', method: 'item/commandExecution/requestApproval', params: { itemId: 'call_1' } },
  { type: 'fail', message: 'Quota exceeded.', codexErrorInfo: 'usageLimitExceeded' },
]
// @ts-expect-error a message needs its text
export const noText: FakeStep = { type: 'message' }
// @ts-expect-error a step type that does not exist
export const typo: FakeStep = { type: 'mesage', text: 'x' }

const script: FakeCodexScript = { steps, answer: { 'turn/start': { error: { message: 'no' } } }, interrupt: 'ignore' }
export const codexPath: string = writeFakeCodex(script, { dir: '/tmp' })
// @ts-expect-error only the handshake can be answered differently
writeFakeCodex({ answer: { 'turn/interrupt': 'never' } })

export async function realTurn(cwd: string): Promise<string[]> {
  const mock: MockModel = await startMockModel([messageResponse(['Hi ', 'there'])])
  try {
    const outcome = await runTurn({ prompt: 'p', cwd, codexPath: codexBinaryPath(), env: mock.env }).outcome
    const sent: unknown = mock.requests[0]?.body.input
    return [String(outcome.finalMessage), String(sent)]
  } finally {
    await mock.close()
  }
}

export const argv: string[] = fakeCodexRuns(codexPath)[0].argv
export const same: typeof writeFakeCodex = kit.writeFakeCodex

// App tools: the fake's tool steps, what it noted of each call, and the mock's helpers.
const toolSteps: FakeStep[] = [
  { type: 'toolCall', tool: 'get_weather', arguments: { city: 'Oslo' }, callId: 'call_w' },
  { type: 'toolCalls', calls: [{ tool: 'find_contact', namespace: 'crm' }, { tool: 'get_weather' }] },
  { type: 'agent', threadId: 'child', forkContext: false, steps: [{ type: 'toolCall', tool: 'get_weather' }] },
]
// @ts-expect-error a call names its tool
export const noTool: FakeStep = { type: 'toolCall' }
const tools: DynamicToolSpec[] = [{ type: 'function', name: 'get_weather', description: 'Weather', inputSchema: { type: 'object' } }]
export const withTools: string = writeFakeCodex({ steps: toolSteps, threadTools: { t: tools } })
export const output: ToolOutput = fakeCodexRuns(withTools)[0].toolCalls[0].output
export const modelCalls = [toolCallResponse('get_weather', { city: 'Oslo' }, { callId: 'call_w' }), toolCallsResponse([{ name: 'find_contact', namespace: 'crm' }])]
export const given: ToolOutput | undefined = toolOutput({}, 'call_w')
export const offered: unknown = offeredTool({}, 'get_weather', { namespace: 'crm' })?.parameters
