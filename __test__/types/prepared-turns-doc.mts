// docs/prepared-turns.md's first example ("Prepared turns: the child starts while the user
// types"), compiled with the strictest settings an app may have (tsconfig.json): the lines
// below the marker are the page's block but its import, verbatim (doc-examples.test.ts holds
// them to the page).
import { prepareTurn } from '@rennet/codex'
import type { Turn } from '@rennet/codex'

declare const repo: string
declare function render(turn: Turn): void

export function example() {
  // ---- the page's block

let next = prepareTurn({ cwd: repo })        // when the input box gets the focus: the child starts now

async function send(text: string) {
  const turn = next.start(text)              // turn/start at once: the thread is ready
  render(turn)                               // every event from `started` on, then one terminal
  const { threadId } = await turn.outcome
  next = prepareTurn(threadId === null ? { cwd: repo } : { cwd: repo, threadId })   // the follow-up, ahead again
}
  return send
}
