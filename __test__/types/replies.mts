// Compiled, never run (`pnpm test:types`): the app's answers to server requests are the
// protocol's response types (`ServerReply`, from the pinned CLI's schema), so a misspelt field or
// a decision the method does not have does not compile; by method through `ServerReplyTo`.
import { runTurn } from '@rennet/codex'
import type { ServerReply, ServerReplyTo, ServerRequest } from '@rennet/codex'

declare const cwd: string

export function answering() {
  runTurn({
    prompt: 'p',
    cwd,
    access: 'full',
    // @ts-expect-error a misspelt field is no answer (the handler's type is what fails)
    onServerRequest: (request) => {
      if (request.method === 'item/commandExecution/requestApproval') return { decison: 'accept' }
      return undefined
    },
  })
  runTurn({
    prompt: 'p',
    cwd,
    access: 'ask',
    // @ts-expect-error a misspelt field is no answer, whatever the method
    onServerRequest: () => ({ decison: 'accept' }),
  })
  runTurn({
    prompt: 'p',
    cwd,
    access: 'ask',
    // @ts-expect-error a decision the protocol does not have
    onServerRequest: async () => ({ decision: 'maybe' }),
  })
  return runTurn({
    prompt: 'p',
    cwd,
    access: 'ask',
    onServerRequest: async (request) => {
      if (request.method === 'item/tool/requestUserInput') return { answers: { q: { answers: ['yes'] } } }
      if (request.method === 'item/fileChange/requestApproval') return { decision: 'acceptForSession' }
      return undefined
    },
  })
}

/** A handler per method, typed by the method's own response. */
export function approve(request: Extract<ServerRequest, { method: 'execCommandApproval' }>): ServerReplyTo<'execCommandApproval'> {
  // @ts-expect-error a legacy approval answers with a ReviewDecision, not `accept`
  const wrong: ServerReplyTo<'execCommandApproval'> = { decision: 'accept' }
  return request.params.command.length > 0 ? { decision: 'approved' } : wrong
}

// @ts-expect-error an answer is one of the protocol's responses, not any record
export const any: ServerReply = { whatever: true }
export const elicitation: ServerReplyTo<'mcpServer/elicitation/request'> = { action: 'decline', content: null, _meta: null }
