// The MCP policy arguments (`mcpPolicyArgs`, the shipped Rust code behind `options.mcp`)
// against the real pinned `codex app-server` and the MCP fixture home (an enabled stdio server
// that records its starts, an HTTP server with a bearer-token variable and a header, a disabled
// server, and a trusted project adding one more), with a loopback mock Responses server as the
// model. Everything stays on 127.0.0.1; HOME and CODEX_HOME are temporary.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { mcpInventory, mcpPolicyArgs } from '../../binding.js'
import { listMcpStatus, startAppServer } from '../../scripts/mcp-fixture/app-server.mjs'
import type { AppServer } from '../../scripts/mcp-fixture/app-server.mjs'
import { createMcpFixture, FIXTURE_SECRETS, FIXTURE_SERVERS } from '../../scripts/mcp-fixture/fixture-home.mjs'
import type { McpFixture } from '../../scripts/mcp-fixture/fixture-home.mjs'
import { startHttpMcpServer } from '../../scripts/mcp-fixture/mcp-servers.mjs'
import type { HttpMcpServer } from '../../scripts/mcp-fixture/mcp-servers.mjs'
import { codexBinaryPath } from '../../testing/codex-home.js'
import {
  functionCallOutputs,
  mcpToolCallItem,
  messageResponse,
  offeredTools,
  response,
  start as startMock,
} from '../../testing/mock-responses.js'
import type { MockServer } from '../../testing/mock-responses.js'

const codexPath = codexBinaryPath()
const SERVER = 'rennet_loop'
const TOKEN = 'test-token-7f3a'
const HEADER_VALUE = 'header "value" with \\ and = ; # { } [ ] marks'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function fixture(modelBaseUrl?: string): McpFixture {
  const fx = createMcpFixture({ modelBaseUrl })
  cleanups.push(() => fx.cleanup())
  return fx
}

async function loopbackServer(): Promise<HttpMcpServer> {
  const server = await startHttpMcpServer({ name: SERVER, bearerToken: TOKEN, requiredHeaders: { 'X-Rennet-Test': HEADER_VALUE } })
  cleanups.push(() => server.close())
  return server
}

async function mock(scenario: Parameters<typeof startMock>[0]): Promise<MockServer> {
  const server = await startMock(scenario)
  cleanups.push(() => server.close())
  return server
}

function appServer(args: string[], fx: McpFixture, env: Record<string, string>): AppServer {
  const server = startAppServer({ codexPath, args, cwd: fx.project, env })
  cleanups.push(() => server.close())
  return server
}

async function startThread(server: AppServer, cwd: string): Promise<string> {
  await server.initialize()
  const started = await server.request('thread/start', { cwd, ephemeral: true, sandbox: 'read-only', approvalPolicy: 'never' })
  return started.thread.id
}

function policyJson(fx: McpFixture, env: Record<string, string>, servers: Record<string, unknown>, cwd = fx.project) {
  return JSON.stringify({ cwd, codexPath, env, mcp: { servers } })
}

describe('mcpPolicyArgs against the real codex app-server', () => {
  it('loopback policy: the model calls the requested server tool and its result reaches the second request', async () => {
    const model = await mock([
      response({ id: 'resp_call', items: [mcpToolCallItem({ callId: 'call_1', namespace: `mcp__${SERVER}`, name: 'echo', args: { text: 'hello from the mock' } })] }),
      messageResponse('The tool answered.', { id: 'resp_msg' }),
    ])
    const fx = fixture(model.url)
    const mcp = await loopbackServer()
    const env = { ...fx.env, RENNET_TEST_TOKEN: TOKEN }
    const { args, env: headerEnv } = await mcpPolicyArgs(
      policyJson(fx, env, {
        [SERVER]: { url: mcp.url, bearerTokenEnvVar: 'RENNET_TEST_TOKEN', httpHeaders: { 'X-Rennet-Test': HEADER_VALUE } },
      }),
    )
    expect(args.slice(0, 3)).toEqual(['--disable', 'plugins', '-c'])
    expect(args).toHaveLength(4)
    expect(args[3]).toMatch(/^mcp_servers=\{/)
    // The header value travels in the child's environment, never in its argv.
    expect(args.join(' ')).not.toContain(HEADER_VALUE)
    expect(Object.values(headerEnv)).toEqual([HEADER_VALUE])

    const server = appServer(args, fx, { ...env, ...headerEnv })
    expect(readFileSync(`/proc/${server.pid}/cmdline`, 'utf8')).not.toContain(HEADER_VALUE)
    const threadId = await startThread(server, fx.project)
    await server.waitFor(
      (n) => n.method === 'mcpServer/startupStatus/updated' && n.params?.name === SERVER && n.params?.status === 'ready',
      20_000,
      `${SERVER} ready`,
    )
    // As runTurn does for full access: a read-only thread, full access raised on the turn
    // (under a read-only turn Codex refuses MCP tool calls that would need approval).
    await server.request('turn/start', {
      threadId,
      input: [{ type: 'text', text: 'Call the echo tool.' }],
      approvalPolicy: 'never',
      sandboxPolicy: { type: 'dangerFullAccess' },
    })
    const completed = await server.waitFor((n) => n.method === 'turn/completed' && n.params?.threadId === threadId, 30_000, 'turn/completed')
    expect(completed.params.turn.status, JSON.stringify(completed.params.turn.error)).toBe('completed')

    // The requested server got the call, with the token and header it demands.
    expect(mcp.calls).toEqual([{ tool: 'echo', args: { text: 'hello from the mock' } }])
    expect(mcp.rejected).toBe(0)
    // The tool result is in the second model request.
    expect(model.requests).toHaveLength(2)
    const outputs = functionCallOutputs(model.requests[1].body)
    expect(outputs).toHaveLength(1)
    expect(outputs[0].call_id).toBe('call_1')
    expect(JSON.stringify(outputs[0].output)).toContain(`${SERVER} echo: hello from the mock`)
    // Only the requested server's tools were offered; no configured server ran.
    const offered = offeredTools(model.requests[0].body).filter((n) => n.startsWith('mcp__'))
    expect(offered).toEqual([`mcp__${SERVER}`])
    const mcpItem = server.notifications.find((n) => n.method === 'item/completed' && n.params?.item?.type === 'mcpToolCall')
    expect(mcpItem?.params.item).toMatchObject({ server: SERVER, tool: 'echo', status: 'completed' })
    expect(fx.starts()).toEqual([])
  })

  it('empty policy: every configured server is disabled and the stdio fixture server never starts', async () => {
    const model = await mock([messageResponse('No MCP here.', { id: 'resp_msg' })])
    const fx = fixture(model.url)
    const { args } = await mcpPolicyArgs(policyJson(fx, fx.env, {}))
    expect(args.slice(0, 3)).toEqual(['--disable', 'plugins', '-c'])

    const server = appServer(args, fx, fx.env)
    const threadId = await startThread(server, fx.project)
    const statuses = await listMcpStatus(server, { threadId })
    expect(Object.fromEntries(statuses.map((s) => [s.name, s.runtimeStatus]))).toEqual(
      Object.fromEntries(Object.keys(FIXTURE_SERVERS).map((name) => [name, 'disabled'])),
    )
    const config = await server.request('config/read', { cwd: fx.project })
    for (const name of Object.keys(FIXTURE_SERVERS)) expect(config.config.mcp_servers[name].enabled, name).toBe(false)

    await server.request('turn/start', { threadId, input: [{ type: 'text', text: 'Hello.' }] })
    const completed = await server.waitFor((n) => n.method === 'turn/completed' && n.params?.threadId === threadId, 30_000, 'turn/completed')
    expect(completed.params.turn.status).toBe('completed')
    expect(model.requests).toHaveLength(1)
    expect(offeredTools(model.requests[0].body).filter((n) => n.startsWith('mcp__'))).toEqual([])
    // Native tools stay (the empty policy removes MCP servers, not repository or shell capability).
    expect(offeredTools(model.requests[0].body)).toContain('exec_command')
    expect(server.notifications.filter((n) => n.method === 'mcpServer/startupStatus/updated')).toEqual([])
    await server.close()
    expect(fx.starts()).toEqual([])
  })

  it('control: without a policy the same fixture starts its stdio servers (the marker would show a leak)', async () => {
    const fx = fixture()
    const server = appServer([], fx, fx.env)
    await startThread(server, fx.project)
    // Both stdio servers, each in its own time (on a busy machine one can lag the other).
    for (const name of ['fixture_stdio', 'fixture_project']) {
      await server.waitFor(
        (n) => n.method === 'mcpServer/startupStatus/updated' && n.params?.name === name && n.params?.status === 'ready',
        20_000,
        `${name} ready`,
      )
    }
    await server.close()
    const started = fx.starts().map((s) => s.name)
    expect(started).toContain('fixture_stdio')
    expect(started).toContain('fixture_project')
    expect(started).not.toContain('fixture_off')
  })
})

describe('mcpPolicyArgs failures (before any app-server starts)', () => {
  it('reads the inventory at the working directory: the project layer counts only there', async () => {
    const fx = fixture()
    const inProject = JSON.parse(await mcpInventory(JSON.stringify({ cwd: fx.project, codexPath, env: fx.env })))
    expect(inProject).toEqual(
      Object.entries(FIXTURE_SERVERS)
        .map(([name, s]) => ({ name, enabled: s.enabled, transport: s.transport }))
        .sort((a, b) => (a.name < b.name ? -1 : 1)),
    )
    const elsewhere = JSON.parse(await mcpInventory(JSON.stringify({ cwd: fx.home, codexPath, env: fx.env })))
    expect(elsewhere.map((s: { name: string }) => s.name)).not.toContain('fixture_project')
  })

  it('MCP_NOT_LOOPBACK names the server, never the URL, token variable or header values', async () => {
    const fx = fixture()
    const hostile = [
      'http://localhost.example.com/mcp',
      'http://127.0.0.1.nip.io/mcp',
      'http://0x7f.0.0.1/mcp',
      'http://2130706433/mcp',
      'http://[::ffff:127.0.0.1]/mcp',
      'http://localhost./mcp',
      'ws://127.0.0.1/mcp',
    ]
    for (const url of hostile) {
      const attempt = mcpPolicyArgs(
        JSON.stringify({
          cwd: fx.project,
          // Validation comes first: this program would fail the inventory step.
          codexPath: join(fx.root, 'no-such-codex'),
          env: fx.env,
          mcp: { servers: { 'my.server': { url, bearerTokenEnvVar: 'SECRET_VAR_NAME_Q', httpHeaders: { 'X-A': 'secret-header-value-q' } } } },
        }),
      )
      const error: Error = await attempt.then(
        () => {
          throw new Error(`${url} was accepted`)
        },
        (e: Error) => e,
      )
      expect(error.message, url).toMatch(/^MCP_NOT_LOOPBACK: MCP server "my\.server"/)
      for (const secret of ['SECRET_VAR_NAME_Q', 'secret-header-value-q', url]) expect(error.message).not.toContain(secret)
    }
  })

  it('a URL that can carry a secret (userinfo, query, fragment) is an option error naming the server, as for runTurn', async () => {
    const fx = fixture()
    for (const url of ['http://127.0.0.1@evil.example/mcp', 'http://127.0.0.1:1/mcp?key=secret-in-url-q', 'http://127.0.0.1:1/mcp#secret-in-url-q']) {
      const error: Error & { code?: string } = await mcpPolicyArgs(policyJson(fx, fx.env, { 'my.server': { url } })).then(
        () => {
          throw new Error(`${url} was accepted`)
        },
        (e: Error) => e,
      )
      expect(error.code, url).toBe('InvalidArg')
      expect(error.message, url).toMatch(/^options\.mcp\.servers\.my\.server\.url: has (userinfo|a query string|a fragment)/)
      for (const secret of ['secret-in-url-q', 'evil.example', url]) expect(error.message).not.toContain(secret)
    }
  })

  it('MCP_NAME_COLLISION for a requested name the user or the trusted project already configures', async () => {
    const fx = fixture()
    const url = 'http://127.0.0.1:1/mcp'
    await expect(mcpPolicyArgs(policyJson(fx, fx.env, { 'fixture.http': { url }, fixture_project: { url } }))).rejects.toThrow(
      /^MCP_NAME_COLLISION: .*"fixture\.http", "fixture_project"/,
    )
    // Outside the project, its server is not configured: no collision.
    const { args } = await mcpPolicyArgs(policyJson(fx, fx.env, { fixture_project: { url } }, fx.home))
    expect(args[3]).toContain('fixture_project')
  })

  it('MCP_INVENTORY_FAILED carries the CLI error but none of the configuration values', async () => {
    const fx = fixture()
    const config = join(fx.codexHome, 'config.toml')
    writeFileSync(config, readFileSync(config, 'utf8') + '\n[mcp_servers.broken]\ncommand = "true"\nurl = "http://127.0.0.1:1/mcp"\n')
    const error: Error = await mcpPolicyArgs(policyJson(fx, fx.env, {})).then(
      () => {
        throw new Error('accepted')
      },
      (e: Error) => e,
    )
    expect(error.message).toMatch(/^MCP_INVENTORY_FAILED: `codex mcp list --json` exited with code 1/)
    expect(error.message).toContain('url is not supported for stdio')
    expect(error.message).toContain('mcp_servers.broken')
    for (const secret of FIXTURE_SECRETS) expect(error.message).not.toContain(secret)
  })

  it('MCP_INVENTORY_INVALID when the list is not the expected shape', async () => {
    const fx = fixture()
    const fake = join(fx.root, 'fake-codex')
    writeFileSync(fake, '#!/bin/sh\necho \'{"servers": []}\'\n')
    chmodSync(fake, 0o755)
    await expect(mcpPolicyArgs(JSON.stringify({ cwd: fx.project, codexPath: fake, env: fx.env, mcp: { servers: {} } }))).rejects.toThrow(
      /^MCP_INVENTORY_INVALID: /,
    )
  })
})
