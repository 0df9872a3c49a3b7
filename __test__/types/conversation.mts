// Compiled, never run (`pnpm test:types`): a conversation as a chat pane's code uses it.
import { CodexError, openConversation } from '@rennet/codex'
import type { Conversation, ConversationOptions, HarnessEvent, SendOptions, TerminalEvent, Turn } from '@rennet/codex'

export async function chat(cwd: string, render: (event: HarnessEvent) => void): Promise<TerminalEvent> {
  const shown = new Set<Turn>()
  const show = async (turn: Turn) => {
    if (shown.has(turn)) return
    shown.add(turn)
    for await (const event of turn) render(event)
  }
  const options: ConversationOptions = { cwd, model: 'gpt-5.1', access: 'full', onTurn: (turn) => void show(turn) }
  const conversation: Conversation = openConversation(options)
  const first: Turn = conversation.send('Hello')
  conversation.send([{ type: 'text', text: 'and this' }], { whileRunning: 'queue', model: 'gpt-5.1-mini', effort: 'low' })
  try {
    conversation.send('now', { whileRunning: 'reject' })
  } catch (error) {
    if (error instanceof CodexError && error.code === 'TURN_RUNNING') conversation.running?.abort('replaced')
  }
  const how: SendOptions = { whileRunning: 'steer' }
  // @ts-expect-error only steer, queue or reject
  conversation.send('x', { whileRunning: 'drop' })
  // @ts-expect-error the input is send()'s, not the conversation's
  openConversation({ cwd, prompt: 'x' })
  // @ts-expect-error close() ends what a conversation runs: no signal
  openConversation({ cwd, signal: AbortSignal.timeout(1000) })
  // @ts-expect-error an ephemeral thread ends with its child
  openConversation({ cwd, ephemeral: true })
  openConversation({ cwd, threadId: 'abc', prepareNext: false })
  const threadId: string | null = conversation.threadId
  const fork: Conversation = await conversation.fork({ lastTurnId: 'turn-1', onTurn: () => {} })
  await fork.close()
  // @ts-expect-error a fork takes the turn to fork after, not other options
  await conversation.fork({ cwd })
  conversation.send(threadId ?? '', how)
  const closed: void = await conversation.close()
  return closed ?? first.outcome
}
