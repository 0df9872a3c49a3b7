'use strict'
// The stdio wire of codex-cli 0.171.0 as the test kit's fake plays it: the one line reader of
// the fakes, and the shapes of what the server sends (threads, turns, items, token usage).

const nowMs = () => Date.now()
const nowS = () => Math.floor(Date.now() / 1000)

/**
 * Calls `onLine` for each line of `stream` (without its `\r\n` or `\n`) and `onEnd(rest)` at
 * its end with what followed the last newline. Not `readline`: its 'close' may come before the
 * lines it has queued are handled, and a line's handler may pause the stream.
 */
function readLines(stream, onLine, onEnd = () => {}) {
  let buffered = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk) => {
    buffered += chunk
    let newline
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline).replace(/\r$/, '')
      buffered = buffered.slice(newline + 1)
      onLine(line)
    }
  })
  stream.on('end', () => onEnd(buffered))
}

function thread({ id, cwd, model, cliVersion }) {
  const t = nowS()
  return {
    id,
    environments: [{ environmentId: 'local', cwd, runtimeWorkspaceRoots: [cwd] }],
    extra: null,
    sessionId: id,
    forkedFromId: null,
    attachedToThreadId: null,
    parentThreadId: null,
    preview: '',
    ephemeral: false,
    section: null,
    sectionEnteredAt: null,
    projectId: null,
    historyMode: 'paginated',
    modelProvider: 'openai',
    model,
    reasoningEffort: null,
    createdAt: t,
    updatedAt: t,
    recencyAt: t,
    status: { type: 'idle' },
    path: null,
    cwd,
    cliVersion,
    originator: 'rennet',
    source: 'vscode',
    canAcceptDirectInput: true,
    threadSource: null,
    agentNickname: null,
    agentRole: null,
    gitInfo: null,
    name: null,
    daybreakEnabled: null,
    turns: [],
  }
}

const SANDBOXES = {
  'read-only': { type: 'readOnly', networkAccess: false },
  'workspace-write': { type: 'workspaceWrite' },
  'danger-full-access': { type: 'dangerFullAccess' },
}

/** The result of `thread/start` and `thread/resume`; `sandbox` overrides the one asked for. */
function threadResult({ id, params, cliVersion, sandbox }) {
  const cwd = params.cwd ?? process.cwd()
  const model = params.model ?? 'gpt-fake'
  return {
    thread: thread({ id, cwd, model, cliVersion }),
    model,
    modelProvider: 'openai',
    serviceTier: null,
    disabledPluginIds: [],
    cwd,
    runtimeWorkspaceRoots: [cwd],
    instructionSources: [],
    approvalPolicy: params.approvalPolicy ?? 'on-request',
    approvalsReviewer: 'user',
    sandbox: sandbox ?? SANDBOXES[params.sandbox] ?? SANDBOXES['read-only'],
    activePermissionProfile: null,
    reasoningEffort: null,
    multiAgentMode: 'explicitRequestOnly',
  }
}

function turn(id, status, { items = [], error = null, started = true } = {}) {
  const done = status !== 'inProgress'
  return {
    id,
    rootTurnId: id,
    items,
    itemsView: items.length ? 'summary' : 'notLoaded',
    status,
    error,
    startedAt: started ? nowS() : null,
    completedAt: done ? nowS() : null,
    durationMs: done ? 1 : null,
  }
}

function agentMessage({ id, text, phase = null, startedAtMs = nowMs(), completedAtMs = null }) {
  return { type: 'agentMessage', moderation: null, id, text, phase, memoryCitation: null, delivery: null, questions: null, startedAtMs, completedAtMs }
}

/** A `dynamicToolCall` item (an app tool's call) as it starts. */
function dynamicToolCall({ id, namespace, tool, arguments: args, startedAtMs = nowMs() }) {
  return { type: 'dynamicToolCall', id, namespace, tool, arguments: args, status: 'inProgress', contentItems: null, success: null, durationMs: null, startedAtMs, completedAtMs: null }
}

/** A token-usage breakdown from the short names of a script's `usage` step. */
function usage({ input = 0, cached = 0, output = 0, reasoning = 0, total = input + output } = {}) {
  return { totalTokens: total, inputTokens: input, cachedInputTokens: cached, cacheWriteInputTokens: 0, outputTokens: output, reasoningOutputTokens: reasoning }
}

module.exports = { readLines, SANDBOXES, thread, threadResult, turn, agentMessage, dynamicToolCall, usage, nowMs, nowS }
