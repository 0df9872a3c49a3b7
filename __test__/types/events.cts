// Compiled, never run (`pnpm test:types`): the CommonJS view of the same types.
import codex = require('@rennet/codex')

export function finalText(event: codex.HarnessEvent): string | null {
  if (event.type === 'itemCompleted' && event.item.type === 'agentMessage') return event.item.text
  if (event.type === 'terminal') return event.finalMessage
  // @ts-expect-error a thread item is not a string
  const wrong: string = event.type === 'itemStarted' ? event.item : ''
  return wrong || null
}

export const discover: () => Promise<codex.Discovery> = () => codex.discoverCodex()

export async function guarded(): Promise<string | null> {
  const { hostGuard } = await codex.discoverCodex()
  const available: boolean = hostGuard.available
  // @ts-expect-error the guard's path may be null (Windows, switched off, location unknown)
  const path: string = hostGuard.path
  return available ? path : hostGuard.reason
}
