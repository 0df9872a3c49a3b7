// The adapter example of docs/events.md ("An adapter: harness events to a UI transcript"),
// verbatim: docs.test.ts checks that it still is.
import type { HarnessEvent, NativeItem, TurnPlanStep } from '@rennet/codex'

type Entry =
  | { kind: 'assistant'; id: string; text: string }
  | { kind: 'command'; id: string; command: string; output: string; exitCode: number | null }
  | { kind: 'plan'; id: string; explanation: string | null; steps: TurnPlanStep[] }
  | { kind: 'note'; text: string }

export class Transcript {
  entries: Entry[] = []
  #byId = new Map<string, Entry>()

  apply(event: HarnessEvent): void {
    switch (event.type) {
      case 'itemStarted':
      case 'itemCompleted':
        return this.#item(event.item)
      case 'messageDelta': {
        const entry = this.#byId.get(event.itemId)
        if (entry?.kind === 'assistant') entry.text = event.replace ? event.delta : entry.text + event.delta
        return
      }
      case 'commandOutput': {
        // The deltas add up to the command's output; `replace`: this one is the whole output.
        const entry = this.#byId.get(event.itemId)
        if (entry?.kind === 'command') entry.output = event.replace ? event.delta : entry.output + event.delta
        return
      }
      case 'plan':
        // Each update is the whole plan: one entry, replaced.
        return this.#put({ kind: 'plan', id: 'plan', explanation: event.explanation, steps: event.plan })
      case 'retrying':
        return this.#add({ kind: 'note', text: `retrying: ${event.message}` })
      case 'terminal':
        if (event.status === 'failed') this.#add({ kind: 'note', text: `${event.failure?.code}: ${event.failure?.message}` })
        if (event.status === 'cancelled') this.#add({ kind: 'note', text: 'stopped' })
        return
    }
  }

  #item(item: NativeItem): void {
    switch (item.type) {
      case 'agentMessage':
        // itemCompleted carries the whole text; itemStarted may repeat and restarts it.
        return this.#put({ kind: 'assistant', id: item.id, text: item.text })
      case 'commandExecution': {
        // Its output so far: at itemCompleted, all of it (the deltas came first).
        const streamed = this.#byId.get(item.id)
        return this.#put({
          kind: 'command',
          id: item.id,
          command: item.command,
          output: streamed?.kind === 'command' ? streamed.output : '',
          exitCode: item.exitCode,
        })
      }
      default:
        // fileChange, reasoning, mcpToolCall, webSearch …; a newer Codex may add kinds.
        return
    }
  }

  #put(entry: Entry & { id: string }) {
    const old = this.#byId.get(entry.id)
    if (old) Object.assign(old, entry)
    else this.#add(entry)
  }

  #add(entry: Entry) {
    this.entries.push(entry)
    if ('id' in entry) this.#byId.set(entry.id, entry)
  }
}
