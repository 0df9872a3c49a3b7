// The README's chat pane example ("A conversation: a chat pane"), verbatim:
// conversation.test.ts checks that it still is, and runs it.
import { openConversation } from '@rennet/codex'
import type { ConversationOptions, HarnessEvent, Turn } from '@rennet/codex'

/** A chat pane on one Codex thread: every event of every turn goes to `show`, one turn after the other. */
export function openChatPane(options: ConversationOptions, show: (event: HarnessEvent) => void) {
  let shown = Promise.resolve()
  const render = (turn: Turn) => {
    shown = shown.then(async () => {
      for await (const event of turn) show(event)
    })
  }
  // The first turn's child starts now; after each turn, the next one's, on the same thread.
  const conversation = openConversation({ ...options, onTurn: render })
  return {
    // While a turn runs, the text is steered into it; too late to steer, it becomes the next turn.
    send: (text: string, model?: string) => conversation.send(text, model === undefined ? {} : { model }),
    stop: () => conversation.running?.abort(new Error('stopped by the user')),
    shown: () => shown,
    threadId: () => conversation.threadId, // keep it: openChatPane({ ...options, threadId }) goes on
    close: () => conversation.close(), // nothing the pane started is left running
  }
}
