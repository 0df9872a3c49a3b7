// Compiled, never run (`pnpm test:types`): app tools (`tools`). A tool typed by its Standard
// Schema gets the schema's parsed output in `execute` (transforms applied); its context and
// result are typed; `tools` is an option of runTurn, prepareTurn and openConversation, not of
// runReview.
import { z } from 'zod'
import { openConversation, prepareTurn, runReview, runTurn } from '@rennet/codex'
import type { AppTool, ServerRequestReply, ToolContext, ToolResult } from '@rennet/codex'

declare const cwd: string

const city = z.object({ city: z.string().transform((s) => s.length), units: z.enum(['C', 'F']).optional() })

// `execute` gets what the schema parses to: `city` a number after the transform.
export const weather = {
  description: 'Weather for a city',
  inputSchema: city,
  timeoutMs: 5000,
  async execute(args, context) {
    const length: number = args.city
    // @ts-expect-error the transform's output is a number, not the string the model sent
    const sent: string = args.city
    const signal: AbortSignal = context.signal
    const agent: string | undefined = context.agent?.threadId
    void [length, sent, signal, agent, context.threadId, context.turnId, context.callId]
    return { content: [{ type: 'text', text: `${args.units ?? 'C'}` }], isError: false }
  },
} satisfies AppTool<z.output<typeof city>>

// A JSON Schema tool: arguments typed as the app says (or `any`).
const open: AppTool<{ path: string }> = {
  description: 'Open a file in the editor',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: ({ path }) => `opened ${path}`,
}

export function tools() {
  runTurn({ prompt: 'p', cwd, tools: { weather, open } })
  prepareTurn({ cwd, tools: { weather } })
  openConversation({ cwd, tools: { open } })
  // @ts-expect-error a review takes no tools
  runReview({ cwd, target: { type: 'uncommittedChanges' }, tools: { open } })
  runTurn({
    prompt: 'p',
    cwd,
    // @ts-expect-error an image part has a url, not a path
    tools: { bad: { description: 'd', inputSchema: {}, execute: () => ({ content: [{ type: 'image', path: '/a.png' }] }) } },
  })
}

export function results(context: ToolContext): ToolResult[] {
  const reply: ServerRequestReply[] = ['app', 'invalidArguments', 'timedOut', 'cancelled', 'failed']
  void [reply, context]
  return ['text', { content: [{ type: 'image', url: 'data:image/png;base64,AAAA' }] }]
}
