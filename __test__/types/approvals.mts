// Compiled, never run (`pnpm test:types`): the approval handler of docs/agent-loop.md ("Reading an
// approval's command"), verbatim between the markers (docs.test.ts holds it to the page), typed
// by the pinned CLI's schema through `onServerRequest`.
import { runTurn } from '@rennet/codex'

declare const cwd: string
declare function askTheUser(command: string, reason: string | null | undefined): Promise<boolean>

export function approving() {
  // --- docs/agent-loop.md
const turn = runTurn({
  prompt: 'Tidy the build scripts',
  cwd,
  access: 'ask',
  onServerRequest: async (request) => {
    if (request.method !== 'item/commandExecution/requestApproval') return undefined   // the fixed policy
    const actions = request.params.commandActions ?? []
    // Reading, listing and searching go ahead; anything else is the user's call.
    const onlyReads = actions.length > 0 && actions.every((action) => action.type !== 'unknown')
    if (onlyReads) return { decision: 'accept' }
    const shown = actions.map((action) => action.command).join('\n') || (request.params.command ?? '')
    return { decision: (await askTheUser(shown, request.params.reason)) ? 'accept' : 'decline' }
  },
})
  // --- end
  return turn
}
