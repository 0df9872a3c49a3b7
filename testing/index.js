'use strict'
// `@rennet/codex/testing`: what an app's own tests need to exercise code built on
// `@rennet/codex` without Codex and without a model (a scripted fake app-server), or with the
// real Codex CLI and no model (a loopback mock of the Responses API). Nothing here is loaded
// by the main entry point.

const { writeFakeCodex, fakeCodexRuns, removeFakeCodexes } = require('./fake-codex.js')
const mock = require('./mock-responses.js')
const home = require('./codex-home.js')

const startMockResponses = mock.start
const { codexBinaryPath, createCodexHome, createLoggedOutHome, createGitCwd, isolatedEnv } = home

/**
 * Starts the loopback mock of the Responses API with `scenario` (one scripted response per
 * model request) and a temporary Codex home whose config.toml points at it. Pass `env` to
 * runTurn; `requests` records what the model was sent; `close()` stops the server and removes
 * the temporary home.
 */
async function startMockModel(scenario = [], options = {}) {
  if (!Array.isArray(scenario)) throw new TypeError('startMockModel: scenario must be an array of scripted responses')
  const server = await mock.start(scenario, { log: options.log })
  let codexHome
  try {
    codexHome = home.createCodexHome({
      baseUrl: server.url,
      model: options.model,
      extraConfig: options.extraConfig,
      prefix: 'rennet-mock-model-',
    })
  } catch (error) {
    await server.close()
    throw error
  }
  let closed = false
  return {
    url: server.url,
    port: server.port,
    requests: server.requests,
    allRequests: server.allRequests,
    push: server.push,
    env: codexHome.env,
    home: codexHome.home,
    codexHome: codexHome.codexHome,
    configPath: codexHome.configPath,
    async close() {
      if (closed) return
      closed = true
      await server.close()
      codexHome.cleanup()
    },
  }
}

// Names and `...require()` only: Node's CommonJS lexer reads them for index.mjs's named exports.
module.exports = {
  // the scripted fake app-server
  writeFakeCodex,
  fakeCodexRuns,
  removeFakeCodexes,
  // the loopback mock model for the real Codex CLI: every builder of scripted responses, the
  // bare mock server (`start`, also as startMockResponses)
  startMockModel,
  ...require('./mock-responses.js'),
  startMockResponses,
  // temporary Codex homes and working directories
  codexBinaryPath,
  createCodexHome,
  createLoggedOutHome,
  createGitCwd,
  isolatedEnv,
}
