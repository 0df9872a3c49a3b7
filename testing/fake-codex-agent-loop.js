'use strict'
// The agent loop as the test kit's fake plays it (codex-cli 0.171.0, as observed against the
// real binary): sub-agent threads, goals and the continuation turns Codex starts on its own,
// plan mode's questions and proposed plans, approvals under `on-request`, a terminal session
// left open, and `review/start`. Steps of a script that the fake's own switch does not know
// are played here; so are the extra turns (an agent's, a continuation's) that run beside or
// after the user's turn, each by a player of its own that shares the fake's wire.

const wire = require('./fake-codex-wire.js')
const tools = require('./fake-codex-tools.js')

const { nowMs, nowS } = wire

const sleep = (ms) => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)))

/** The steps this module plays, with their required fields (checked by writeFakeCodex). */
const STEPS = {
  agent: { threadId: 'string', steps: 'array' },
  goal: {},
  plan: { text: 'text' },
  question: { questions: 'array' },
  approval: { command: 'string' },
  terminal: { command: 'string' },
}
const SPAWNS = ['collab', 'activity', 'rootTurnId']
const GOAL_STATUSES = ['active', 'paused', 'blocked', 'usageLimited', 'budgetLimited', 'complete']

/** How long after a completed turn with an active goal Codex starts the continuation. */
const CONTINUATION_DELAY_MS = 20

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

/** Throws (through `fail(path, what)`) at the first field of an agent-loop step that is wrong. */
function checkStep(step, path, fail, checkSteps) {
  switch (step.type) {
    case 'agent':
      if (step.spawn !== undefined && !SPAWNS.includes(step.spawn)) fail(`${path}.spawn`, `must be one of ${SPAWNS.join(', ')}`)
      if (step.forkContext !== undefined && typeof step.forkContext !== 'boolean') fail(`${path}.forkContext`, 'must be a boolean')
      checkSteps(step.steps, `${path}.steps`)
      return
    case 'goal':
      if (step.status !== undefined && !GOAL_STATUSES.includes(step.status)) fail(`${path}.status`, `must be one of ${GOAL_STATUSES.join(', ')}`)
      return
    case 'question':
      step.questions.forEach((q, i) => {
        if (!isObject(q) || typeof q.id !== 'string' || typeof q.question !== 'string') fail(`${path}.questions[${i}]`, 'must be { id, question, header?, options? }')
      })
      return
    default:
  }
}

/** Throws at the first script field of this module that is wrong. */
function checkScript(script, fail, checkSteps) {
  if (script.continuations !== undefined) {
    if (!Array.isArray(script.continuations)) fail('.continuations', 'must be an array of step lists')
    script.continuations.forEach((steps, i) => {
      if (!Array.isArray(steps)) fail(`.continuations[${i}]`, 'must be an array of steps')
      checkSteps(steps, `.continuations[${i}]`)
    })
  }
  if (script.review !== undefined) {
    if (!isObject(script.review)) fail('.review', 'must be an object { review?, raw?, steps? }')
    if (script.review.steps !== undefined) {
      if (!Array.isArray(script.review.steps)) fail('.review.steps', 'must be an array')
      checkSteps(script.review.steps, '.review.steps')
    }
  }
}

/** What the agent loop keeps for one fake process (shared by every player of it). */
function loopOf(fake) {
  fake.loopState ??= { goal: null, live: new Map(), continuations: 0 }
  return fake.loopState
}

/**
 * A player of another turn on the fake's wire (a sub-agent's, a goal continuation's): the fake's
 * methods with a turn, open messages and interrupt state of its own; request ids, the log and
 * the process state stay the fake's.
 */
function player(fake, turn, { threadUsage } = {}) {
  const p = Object.create(fake)
  Object.assign(p, { turn, open: new Map(), lastMessage: null, turnDone: false, interrupted: false, capture: null })
  p.threadUsage = threadUsage ?? wire.usage()
  for (const name of ['nextRequestId', 'hung', 'faulted']) {
    Object.defineProperty(p, name, { get: () => fake[name], set: (value) => (fake[name] = value) })
  }
  return p
}

/** `turn` of the wire with the root it was started for. */
const rooted = (turn, rootTurnId) => ({ ...turn, rootTurnId })

function turnStarted(p, rootTurnId) {
  p.notify('turn/started', { threadId: p.turn.threadId, turn: rooted(wire.turn(p.turn.turnId, 'inProgress'), rootTurnId) })
}

/** Ends a player's turn with `status` (its last message in the items). */
function finish(p, status, rootTurnId) {
  if (p.turnDone) return
  p.turnDone = true
  const items = p.lastMessage ? [p.lastMessage] : []
  p.notify('turn/completed', { threadId: p.turn.threadId, turn: rooted(wire.turn(p.turn.turnId, status, { items }), rootTurnId) })
}

/** Plays `steps` as a whole turn of player `p` whose root is `rootTurnId`; resolves with its status once it ended. */
async function playTurn(fake, p, steps, rootTurnId, { active = false } = {}) {
  const loop = loopOf(fake)
  const entry = { player: p, rootTurnId, ended: null }
  entry.ended = new Promise((resolve) => (entry.resolve = resolve))
  loop.live.set(p.turn.turnId, entry)
  if (active) p.status({ type: 'active', activeFlags: [] })
  turnStarted(p, rootTurnId)
  const end = await Promise.race([p.steps(steps), entry.ended])
  if (end !== 'end' && !p.interrupted && !p.turnDone) {
    p.status({ type: 'idle' })
    finish(p, 'completed', rootTurnId)
  }
  loop.live.delete(p.turn.turnId)
  const status = p.interrupted ? 'interrupted' : 'completed'
  entry.resolve(status)
  return status
}

/** Sends a server request of the player's turn; resolves with the client's reply (null: the turn ended first). */
function ask(fake, method, params, ids) {
  const id = fake.nextRequestId++
  const reply = new Promise((resolve) => fake.pending.set(id, resolve))
  fake.send({ method, id, params: { ...ids, ...params } })
  return reply
}

// ---------------------------------------------------------------------------------------------
// steps

/** Plays one step of this module; `ids`: the turn of the player that plays it. */
async function step(fake, s, ids) {
  switch (s.type) {
    case 'agent':
      return agent(fake, s, ids)
    case 'goal':
      return goal(fake, s, ids)
    case 'plan':
      return plan(fake, s, ids)
    case 'question':
      return question(fake, s, ids)
    case 'approval':
      return approval(fake, s, ids)
    case 'terminal':
      return terminal(fake, s, ids)
    default:
      throw new Error(`unknown step ${JSON.stringify(s.type)}`)
  }
}

/**
 * A sub-agent: the parent's spawn (a `collabAgentToolCall` whose `receiverThreadIds` names the
 * child once it completes, a `subAgentActivity`, or nothing: the child's `rootTurnId` names it),
 * the child's turn on its own thread (no `thread/started`, as Codex), then — unless `detach` —
 * the parent's `wait` call, completed when the child's turn is.
 */
async function agent(fake, s, ids) {
  const spawn = s.spawn ?? 'collab'
  const child = { threadId: s.threadId, turnId: s.turnId ?? `${s.threadId}:turn`, cwd: fake.turn.cwd, input: [] }
  const p = player(fake, child)
  // The child's app tools: the parent thread's, as a `fork_context: true` spawn gives them, or none.
  tools.inherit(fake, ids.threadId, child.threadId, s.forkContext !== false)
  const callId = s.callId ?? fake.id('spawn')
  const base = {
    type: 'collabAgentToolCall',
    id: callId,
    tool: 'spawnAgent',
    senderThreadId: ids.threadId,
    prompt: s.prompt ?? 'Help with this.',
    model: s.model ?? null,
    reasoningEffort: null,
  }
  // What Codex sends of the child before its turn: its status, and a warning (these can come
  // before the spawn item names the thread: `early`).
  const childHello = () => {
    p.status({ type: 'active', activeFlags: [] })
    if (s.early) {
      const message = typeof s.early === 'string' ? s.early : 'Model metadata for `mock-model` not found.'
      p.notify('warning', { threadId: child.threadId, message })
    }
  }
  if (spawn === 'collab') {
    const startedAtMs = nowMs()
    fake.itemStarted({ ...base, status: 'inProgress', receiverThreadIds: [], agentsStates: {}, startedAtMs, completedAtMs: null })
    if (s.early) childHello()
    fake.itemCompleted({
      ...base,
      status: 'completed',
      receiverThreadIds: [child.threadId],
      agentsStates: { [child.threadId]: { status: 'pendingInit', message: null } },
      startedAtMs,
      completedAtMs: nowMs(),
    })
    if (!s.early) childHello()
  } else if (spawn === 'activity') {
    const item = {
      type: 'subAgentActivity',
      id: callId,
      kind: 'started',
      agentThreadId: child.threadId,
      agentPath: s.path ?? '/root/helper',
      model: s.model ?? null,
      reasoningEffort: null,
      startedAtMs: nowMs(),
    }
    fake.itemStarted(item)
    fake.itemCompleted({ ...item, completedAtMs: nowMs() })
    childHello()
  }
  // (`rootTurnId`: nothing names the thread before its turn starts, so nothing of it comes before.)
  const rootTurnId = s.rootTurnId ?? ids.turnId
  const played = playTurn(fake, p, s.steps, rootTurnId)
  if (s.detach) return undefined
  if (spawn === 'collab' && s.wait !== false) {
    const waitId = fake.id('wait')
    const wait = { ...base, id: waitId, tool: 'wait', prompt: null, receiverThreadIds: [child.threadId] }
    const startedAtMs = nowMs()
    fake.itemStarted({ ...wait, status: 'inProgress', agentsStates: { [child.threadId]: { status: 'running', message: null } }, startedAtMs, completedAtMs: null })
    const status = await played
    const message = p.lastMessage?.text ?? null
    fake.itemCompleted({ ...wait, status: 'completed', agentsStates: { [child.threadId]: { status, message } }, startedAtMs, completedAtMs: nowMs() })
  } else {
    await played
  }
  return undefined
}

/** `thread/goal/updated` of the fake's thread: the goal as it is after the step's fields. */
function goal(fake, s, ids) {
  const loop = loopOf(fake)
  const t = nowS()
  const before = loop.goal ?? { threadId: ids.threadId, objective: '', status: 'active', tokenBudget: null, tokensUsed: 0, timeUsedSeconds: 0, createdAt: t, updatedAt: t }
  const given = Object.fromEntries(['objective', 'status', 'tokenBudget', 'tokensUsed', 'timeUsedSeconds'].filter((k) => s[k] !== undefined).map((k) => [k, s[k]]))
  loop.goal = { ...before, ...given, updatedAt: t }
  fake.notify('thread/goal/updated', { threadId: ids.threadId, turnId: s.unscoped ? null : ids.turnId, goal: loop.goal })
  return undefined
}

/** A `plan` item (plan mode's `<proposed_plan>`): `item/plan/delta` per delta, then completed with the whole text. */
function plan(fake, s, ids) {
  const id = fake.id('plan', s.id)
  const deltas = typeof s.text === 'string' ? [s.text] : s.text
  const startedAtMs = nowMs()
  fake.itemStarted({ type: 'plan', id, text: '', startedAtMs, completedAtMs: null })
  for (const delta of deltas) fake.notify('item/plan/delta', { ...ids, itemId: id, delta })
  fake.itemCompleted({ type: 'plan', id, text: deltas.join(''), startedAtMs, completedAtMs: nowMs() })
  return undefined
}

/**
 * The model's `request_user_input`: in plan mode the server request `item/tool/requestUserInput`
 * (the thread waiting on the user meanwhile), and the turn goes on once it is answered; in
 * default mode no request (Codex tells the model the tool is unavailable), noted in the log.
 */
async function question(fake, s, ids) {
  if (fake.turn.collaborationMode?.mode !== 'plan') {
    fake.log({ event: 'question-unavailable', questions: s.questions.map((q) => q.id) })
    return undefined
  }
  const questions = s.questions.map((q) => ({
    id: q.id,
    header: q.header ?? q.id,
    question: q.question,
    isOther: q.isOther ?? true,
    isSecret: q.isSecret ?? false,
    options: (q.options ?? []).map((o) => (typeof o === 'string' ? { label: o, description: '' } : o)),
  }))
  fake.status({ type: 'active', activeFlags: ['waitingOnUserInput'] })
  const itemId = fake.id('call', s.itemId)
  const reply = await ask(fake, 'item/tool/requestUserInput', { itemId, questions, isBlocking: true, autoResolutionMs: null }, ids)
  fake.log({ event: 'question-answered', itemId, reply })
  if (!fake.turnDone) fake.status({ type: 'active', activeFlags: [] })
  return undefined
}

const ACCEPTED = ['accept', 'acceptForSession']
const DECLINED = ['decline', 'cancel']

/**
 * The model's `exec_command` with `require_escalated`: under `on-request` the server request
 * `item/commandExecution/requestApproval`; accepted, the command runs (its item completes with
 * the output); declined or cancelled, the item is `declined` and nothing runs, and a cancel also
 * ends the turn `interrupted`; answered with an error or anything else, the item is `failed`
 * (all as Codex 0.171.0 does). Under `never` nothing is asked and the command runs.
 */
async function approval(fake, s, ids) {
  const asked = fake.turn.approvalPolicy !== 'never'
  let decision = 'accept'
  const itemId = fake.id('call', s.id)
  if (asked) {
    const params = {
      itemId,
      startedAtMs: nowMs(),
      environmentId: 'local',
      reason: s.justification ?? null,
      command: s.command,
      cwd: fake.turn.cwd,
      commandActions: [{ type: 'unknown', command: s.command }],
      availableDecisions: ['accept', 'acceptForSession', 'decline', 'cancel'],
    }
    const reply = await ask(fake, 'item/commandExecution/requestApproval', params, ids)
    const given = reply?.result?.decision
    decision = typeof given === 'string' ? given : given ? 'other' : 'error'
  }
  fake.log({ event: 'approval', command: s.command, asked, decision })
  const runs = ACCEPTED.includes(decision)
  const chunks = runs ? (s.output === undefined ? [] : typeof s.output === 'string' ? [s.output] : s.output) : []
  const exitCode = runs ? (s.exitCode ?? 0) : null
  const started = commandItem(fake, itemId, s.command, { processId: null })
  fake.itemStarted(started)
  for (const delta of chunks) fake.notify('item/commandExecution/outputDelta', { ...ids, itemId, delta })
  fake.itemCompleted({
    ...started,
    // An error reply, or a result that is not one of these decisions, fails the item (Codex 0.171.0).
    status: runs ? (exitCode === 0 ? 'completed' : 'failed') : DECLINED.includes(decision) ? 'declined' : 'failed',
    aggregatedOutput: runs ? chunks.join('') : null,
    exitCode,
    durationMs: runs ? 1 : null,
    completedAtMs: nowMs(),
  })
  if (decision !== 'cancel') return undefined
  endInterrupted(fake)
  return 'end'
}

/**
 * Ends the turn `fake` plays `interrupted`, as Codex ends a turn it was told to interrupt or
 * whose approval was cancelled: the fake's own turn, or a player's (an agent's, a
 * continuation's).
 */
function endInterrupted(fake) {
  const entry = loopOf(fake).live.get(fake.turn.turnId)
  fake.interrupted = true
  fake.status({ type: 'idle' })
  if (entry && entry.player === fake) {
    finish(fake, 'interrupted', entry.rootTurnId)
    entry.resolve('end')
  } else {
    fake.complete('interrupted', [], null)
  }
}

function commandItem(fake, id, command, { processId }) {
  return {
    type: 'commandExecution',
    id,
    pluginId: null,
    scriptPath: null,
    command,
    cwd: fake.turn.cwd,
    processId,
    source: 'unifiedExecStartup',
    status: 'inProgress',
    commandActions: [{ type: 'unknown', command }],
    aggregatedOutput: null,
    exitCode: null,
    durationMs: null,
    startedAtMs: nowMs(),
    completedAtMs: null,
  }
}

/**
 * `exec_command` with `tty: true`: a terminal session that stays open — its item started and
 * never completed, its output, and `terminalInteraction` for each write of `stdin`.
 */
function terminal(fake, s, ids) {
  const itemId = fake.id('call', s.id)
  const processId = s.processId ?? String(10000 + Number(fake.id('pty').slice(4)))
  fake.itemStarted(commandItem(fake, itemId, s.command, { processId }))
  const chunks = s.output === undefined ? [] : typeof s.output === 'string' ? [s.output] : s.output
  for (const delta of chunks) fake.notify('item/commandExecution/outputDelta', { ...ids, itemId, delta })
  for (const stdin of s.stdin ?? []) fake.notify('item/commandExecution/terminalInteraction', { ...ids, itemId, processId, stdin })
  return undefined
}

// ---------------------------------------------------------------------------------------------
// turns beyond the user's

/**
 * After a turn of the fake's thread completed: while the goal is `active` and the script has
 * continuations left, Codex starts one ~20 ms later by itself (a new turn whose `rootTurnId`
 * is the user's turn), and again after it.
 */
async function afterTurn(fake) {
  const loop = loopOf(fake)
  const continuations = fake.script.continuations ?? []
  while (loop.goal?.status === 'active' && loop.continuations < continuations.length && !fake.interrupted) {
    await sleep(CONTINUATION_DELAY_MS)
    if (fake.hung || loop.goal?.status !== 'active') return
    const n = ++loop.continuations
    const turn = { ...fake.turn, turnId: `${fake.turn.turnId}:goal-${n}`, input: [] }
    const p = player(fake, turn, { threadUsage: fake.threadUsage })
    fake.log({ event: 'continuation', turnId: turn.turnId })
    const status = await playTurn(fake, p, continuations[n - 1], fake.turn.turnId, { active: true })
    if (status !== 'completed') return
  }
}

/**
 * `turn/interrupt` of a turn this module plays (an agent's, a continuation's): answered, and —
 * unless the script's `interrupt` is `'ignore'` — the turn ends `interrupted`. False for any
 * other turn (the fake's own handling answers it).
 */
function interrupt(fake, params, id) {
  const entry = loopOf(fake).live.get(params.turnId)
  if (!entry || entry.player.turn.threadId !== params.threadId || entry.player.turnDone) return false
  const honour = (fake.script.interrupt ?? 'honour') !== 'ignore'
  // Its app tool calls still waiting fail before the interrupt is answered, as Codex does.
  if (honour) tools.interrupted(fake, params.turnId)
  fake.send({ id, result: {} })
  if (honour) endInterrupted(entry.player)
  return true
}

/** A label of a review target, as `enteredReviewMode` says it. */
function reviewLabel(target) {
  switch (target?.type) {
    case 'uncommittedChanges':
      return 'current changes'
    case 'baseBranch':
      return `changes against '${target.branch}'`
    case 'commit':
      return `commit ${String(target.sha ?? '').slice(0, 7)}${target.title ? `: ${target.title}` : ''}`
    case 'custom':
      return target.instructions ?? 'custom review'
    default:
      return 'review'
  }
}

/**
 * `review/start` (inline): answered `{turn, reviewThreadId}`, then the review as Codex 0.171.0
 * plays it: `turn/started` of an inner turn whose `rootTurnId` is the review's turn, while the
 * items and `turn/completed` carry the review's id; `enteredReviewMode`, the request as a user
 * message, the reviewer's raw JSON as an agent message started and never completed,
 * `script.review.steps`, `exitedReviewMode` with the formatted review, the formatted review as
 * the final agent message.
 */
async function review(fake, id, params) {
  if (params.threadId !== fake.threadId) {
    fake.send({ error: { code: -32600, message: `thread not found: ${params.threadId}` }, id })
    return
  }
  const scripted = fake.script.review ?? {}
  const turnId = fake.script.turnId ?? '019a0000-0000-7000-8000-0000000071e5'
  fake.turn = { threadId: fake.threadId, turnId, cwd: process.cwd(), input: [], approvalPolicy: null, collaborationMode: null }
  fake.send({ id, result: { turn: wire.turn(turnId, 'inProgress', { started: false }), reviewThreadId: fake.threadId } })
  const formatted = scripted.review ?? 'No issues found.'
  const raw = scripted.raw ?? JSON.stringify({ findings: [], overall_correctness: 'patch is correct', overall_explanation: formatted, overall_confidence_score: 0.9 })
  const label = reviewLabel(params.target)
  const ids = fake.ids()
  fake.status({ type: 'active', activeFlags: [] })
  fake.notify('turn/started', { threadId: fake.threadId, turn: rooted(wire.turn(`${turnId}:inner`, 'inProgress'), turnId) })
  const entered = { type: 'enteredReviewMode', id: fake.id('review'), review: label, startedAtMs: nowMs() }
  fake.itemStarted(entered)
  fake.itemCompleted({ ...entered, completedAtMs: nowMs() })
  const text = `Review the ${label === 'current changes' ? 'current code changes (staged, unstaged, and untracked files)' : label} and provide prioritized findings.`
  const user = { type: 'userMessage', id: fake.id('user'), clientId: null, content: [{ type: 'text', text, text_elements: [] }], startedAtMs: nowMs() }
  fake.itemStarted(user)
  fake.itemCompleted({ ...user, completedAtMs: nowMs() })
  const rawId = fake.id('msg')
  fake.itemStarted(wire.agentMessage({ id: rawId, text: '' }))
  fake.notify('item/agentMessage/delta', { ...ids, itemId: rawId, delta: raw })
  if ((await fake.steps(scripted.steps ?? [])) === 'end' || fake.interrupted || fake.turnDone) return
  const exited = { type: 'exitedReviewMode', id: fake.id('review'), review: formatted, startedAtMs: nowMs() }
  fake.itemStarted(exited)
  fake.itemCompleted({ ...exited, completedAtMs: nowMs() })
  await fake.step({ type: 'message', text: formatted })
  if (fake.interrupted || fake.turnDone) return
  fake.status({ type: 'idle' })
  fake.complete('completed', fake.lastMessage ? [fake.lastMessage] : [], null)
}

module.exports = { STEPS, checkStep, checkScript, step, afterTurn, interrupt, endInterrupted, review }
