// Server→client requests are answered at once by policy; each answer is also an event.
import { afterEach, describe, expect, it } from 'vitest'
import { ANSWER_TYPES, ISOLATION_NOT_CONFIRMED, THREAD_ID, TURN_ID, cleanupFakes, fakeRun, terminalOf, types } from '../support/fake.js'

afterEach(cleanupFakes)

type Reply = 'accepted' | 'grantedEmpty' | 'declined' | 'methodError'

// In the order the fake sends them (ids 0…10).
const FULL_ACCESS: Array<[method: string, reply: Reply, result: object | null]> = [
  ['item/commandExecution/requestApproval', 'accepted', { decision: 'accept' }],
  ['item/fileChange/requestApproval', 'accepted', { decision: 'accept' }],
  ['item/permissions/requestApproval', 'grantedEmpty', { permissions: {} }],
  ['execCommandApproval', 'accepted', { decision: 'approved' }],
  ['applyPatchApproval', 'accepted', { decision: 'approved' }],
  ['mcpServer/elicitation/request', 'declined', { action: 'decline', content: null, _meta: null }],
  ['item/tool/call', 'methodError', null],
  ['account/chatgptAuthTokens/refresh', 'methodError', null],
  ['attestation/generate', 'methodError', null],
  ['item/tool/requestUserInput', 'methodError', null],
  ['fake/futureRequest', 'methodError', null],
]

describe('server requests', () => {
  it('answers each request kind by the full-access policy and reports each answer', async () => {
    const { events, terminal, log } = await fakeRun('server-requests')

    // The fake's requests, as sent: ids from 0, in this order.
    const sentRequests = log.sent().filter((f) => 'method' in f && 'id' in f)
    expect(sentRequests.map((f) => [f.method, f.id])).toEqual(FULL_ACCESS.map(([m], i) => [m, i]))

    expect(events.filter((e) => e.type === 'serverRequest')).toEqual(
      FULL_ACCESS.map(([method, reply], id) => ({ type: 'serverRequest', method, id, params: sentRequests[id].params, agent: null, reply })),
    )
    expect(types(events)).toEqual([
      'started',
      'threadStarted',
      'turnStarted',
      ...FULL_ACCESS.map(() => 'serverRequest'),
      ...ANSWER_TYPES,
    ])

    // What went back on the wire.
    const replies = log.replies()
    expect(replies).toHaveLength(FULL_ACCESS.length)
    FULL_ACCESS.forEach(([method, , result], id) => {
      const matching = replies.filter((r) => r.id === id)
      expect(matching, `one reply to ${method}`).toHaveLength(1)
      const r = matching[0]
      expect(r, method).not.toHaveProperty('jsonrpc')
      if (result) {
        expect(r, method).toEqual({ id, result })
      } else {
        expect(r, method).not.toHaveProperty('result')
        expect(r.error, method).toEqual(expect.objectContaining({ code: -32601, message: expect.any(String) }))
      }
    })
    expect(log.events('server-request-timeout')).toEqual([])

    expect(terminal).toEqual(terminalOf({ finalMessage: 'all answered' }))
  })

  it('answers every request with a JSON-RPC error under readOnly access', async () => {
    const { events, terminal, log } = await fakeRun('server-requests', { access: 'readOnly' })

    const sentRequests = log.sent().filter((f) => 'method' in f && 'id' in f)
    expect(events.filter((e) => e.type === 'serverRequest')).toEqual(
      FULL_ACCESS.map(([method], id) => ({ type: 'serverRequest', method, id, params: sentRequests[id].params, agent: null, reply: 'methodError' })),
    )
    const replies = log.replies()
    expect(replies).toHaveLength(FULL_ACCESS.length)
    FULL_ACCESS.forEach(([method], id) => {
      const r = replies.find((x) => x.id === id)
      expect(r, method).toBeDefined()
      expect(r, method).not.toHaveProperty('result')
      expect(r.error, method).toEqual(expect.objectContaining({ code: expect.any(Number), message: expect.any(String) }))
    })
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe('all answered')

    // The isolation was confirmed before the turn: every configured server disabled by name.
    expect(log.request('config/read').params.cwd).toBeTypeOf('string')
    expect(log.request('thread/start').params.config).toEqual({
      mcp_servers: { ambient_srv: { enabled: false }, 'proj.srv': { enabled: false } },
    })

    // Read-only all the way: neither the thread nor the turn is given a writable sandbox.
    expect(log.request('thread/start').params.sandbox).toBe('read-only')
    const turnStart = log.request('turn/start').params
    expect(turnStart.approvalPolicy).toBe('never')
    expect(turnStart.sandboxPolicy?.type).not.toBe('dangerFullAccess')
    expect(turnStart.sandboxPolicy?.type).not.toBe('workspaceWrite')
  })

  it.each(Object.keys(ISOLATION_NOT_CONFIRMED) as Array<keyof typeof ISOLATION_NOT_CONFIRMED>)(
    'fails closed without starting the turn when the server reports %s',
    async (report) => {
      const { events, terminal, log } = await fakeRun('server-requests', { access: 'readOnly', fake: ISOLATION_NOT_CONFIRMED[report] })
      expect(terminal.status).toBe('failed')
      expect(terminal.failure).toMatchObject({ code: 'ISOLATION_NOT_CONFIRMED' })
      expect((terminal.failure?.detail as { report: unknown }).report).toBeTruthy()
      expect(log.requests('turn/start')).toHaveLength(0)
      expect(events.filter((e) => e.type === 'turnStarted')).toHaveLength(0)
    },
  )

  it('starts the child with every feature of the isolation list switched off', async () => {
    const { log } = await fakeRun('minimal', { access: 'readOnly' })
    const argv = log.starts()[0].argv.join(' ')
    for (const feature of ['plugins', 'apps', 'hooks', 'memories', 'multi_agent', 'browser_use', 'computer_use']) {
      expect(argv).toContain(`features.${feature}=false`)
    }
    expect(argv).toContain('web_search="disabled"')
  })
})
