// Fake Codex candidates for the discovery suites, in a temporary sandbox. A broken candidate
// that is still a Codex (a bad or old version, a handshake that hangs, a crash or a kill in the
// handshake) is the test kit's fake with a script saying how (`Sandbox.kit`). The others are
// shell scripts (`Sandbox.codex`) that answer `--version` and, for `app-server`, read the
// `initialize` line and answer it (or not): they must run shell code of the test's at
// `--version`, in the handshake and in `mcp list` (background writers, barriers), be a
// launcher's script that a stand-in `node` runs, and log every call, `--version` included,
// which the kit's fake does not. The environment handed to discoverCodex blanks every
// variable discovery reads, so nothing on this machine can become a candidate.
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { afterEach } from 'vitest'

import { type CodexCandidate, type Discovery, discoverCodex } from '../../index.js'
import { fakeCodexRuns, writeFakeCodex, type FakeCodexRun, type FakeCodexScript } from '../../testing/index.js'
import { describeProcess, liveWithEnvironment } from '../support/procs.js'

export type { CodexCandidate, Discovery }

export async function discover(options: { env?: Record<string, string>; locus?: { wsl: { distro: string } }; refresh?: boolean }): Promise<Discovery> {
  return discoverCodex(options)
}

/** Every variable discovery reads, blanked (an empty value counts as unset). */
const BLANK: Record<string, string> = Object.fromEntries(
  [
    'PATH',
    'SHELL',
    'USER',
    'RENNET_CODEX_BIN',
    'RENNET_WSL_EXE',
    'XDG_DATA_HOME',
    'XDG_CONFIG_HOME',
    'NPM_CONFIG_PREFIX',
    'npm_config_prefix',
    'PNPM_HOME',
    'BUN_INSTALL',
    'VOLTA_HOME',
    'NVM_DIR',
    'NVM_BIN',
    'FNM_DIR',
    'N_PREFIX',
    'CARGO_HOME',
    'ASDF_DATA_DIR',
    'MISE_DATA_DIR',
  ].map((name) => [name, '']),
)

/** What the sandbox's limits are: a guard against a hang, not a pace. */
const GUARD_MS = 20_000

/** The variable whose value, the sandbox's root, marks what discovery started from it. */
export const SANDBOX_MARK = 'RENNET_TEST_SANDBOX'

export const AGENT = '{"id":1,"result":{"userAgent":"rennet/0.171.0 (fake)","codexHome":"/nowhere","platformFamily":"unix","platformOs":"linux"}}'

export interface FakeOptions {
  /** What `--version` prints (default `codex-cli 0.171.0`). */
  version?: string
  /** Shell code run for `--version` before it prints the version. */
  onVersion?: string
  /** Shell code run after the initialize line was read (default: answer it). */
  handshake?: string
  /** Shell code run for `codex --disable plugins mcp list --json` (default: print no server). */
  mcpList?: string
  /** The `#!` line (default `#!/bin/sh`). */
  shebang?: string
}

/** The file the writers of `Sandbox.writers` append to. */
const WRITES = 'writes.log'

/** What `Sandbox.writers` recorded: the process that started them, the writers, its tree marker. */
export interface Writers {
  pid: number
  writers: number[]
  /** `RENNET_CODEX_TREE` of the process ('' when it has none: a login shell). */
  marker: string
}

export class Sandbox {
  readonly root: string
  readonly log: string

  constructor() {
    this.root = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-discovery-')))
    this.log = join(this.root, 'calls.log')
    mkdirSync(join(this.root, 'home'), { recursive: true })
  }

  path(rel: string): string {
    return join(this.root, rel)
  }

  dir(rel: string): string {
    const dir = this.path(rel)
    mkdirSync(dir, { recursive: true })
    return dir
  }

  script(rel: string, body: string, mode = 0o755): string {
    const path = this.path(rel)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, body)
    chmodSync(path, mode)
    return path
  }

  codex(rel: string, fake: FakeOptions = {}): string {
    const version = fake.version ?? 'codex-cli 0.171.0'
    const handshake = fake.handshake ?? `printf '%s\\n' '${AGENT}'`
    const body = `${fake.shebang ?? '#!/bin/sh'}
PATH=/usr/bin:/bin
export PATH
me=$0
case "$1" in
  --version)
    echo "$me --version" >> '${this.log}'
    ${fake.onVersion ?? ':'}
    printf '%s\\n' '${version}'
    exit 0 ;;
  app-server)
    echo "$me app-server $$" >> '${this.log}'
    IFS= read -r line || exit 3
    case "$line" in
      *'"method":"initialize"'*'"name":"rennet"'*) ;;
      *) echo "unexpected first line: $line" >&2; exit 4 ;;
    esac
    ${handshake}
    while IFS= read -r line; do :; done
    exit 0 ;;
  --disable)
    echo "$me $*" >> '${this.log}'
    ${fake.mcpList ?? "echo '[]'"}
    exit 0 ;;
esac
echo "unexpected arguments: $*" >&2
exit 2
`
    return this.script(rel, body)
  }

  /**
   * The test kit's fake playing `script`, at `rel` (a copy of its executable: its script and
   * log stay where it was written); `runs()` reads what its processes did.
   */
  kit(rel: string, script: FakeCodexScript): { path: string; runs: () => FakeCodexRun[] } {
    const written = writeFakeCodex(script, { dir: this.dir('kit') })
    const path = this.path(rel)
    mkdirSync(dirname(path), { recursive: true })
    copyFileSync(written, path)
    chmodSync(path, 0o755)
    return { path, runs: () => fakeCodexRuns(written) }
  }

  /** A login shell that prints noise around running its command with PATH = `path`. */
  shell(path: string): string {
    const tools = this.dir('tools')
    // The login-shell query runs `printenv`; the fake login PATH has nothing else.
    if (!existsSync(join(tools, 'printenv'))) symlinkSync('/usr/bin/printenv', join(tools, 'printenv'))
    return this.script(
      'shell/fakesh',
      `#!/bin/sh
echo "Welcome to the fake shell"
printf '\\033[?2004h'
for a; do last=$a; done
PATH='${path}:${tools}'
export PATH
/bin/sh -c "$last"
echo bye
`,
    )
  }

  /**
   * Shell code that starts background writers named `name`, each appending a line to
   * `writes.log` in the sandbox every 20 ms: one in the caller's process group and, with
   * `session`, a second one in a session of its own (`setsid`). Then it records the caller's
   * pid, the writers' pids and the caller's tree marker in `<name>.pids` (see `started`).
   */
  writers(name: string, { session = false } = {}): string {
    const quiet = `>/dev/null 2>&1 </dev/null &`
    // The loop gets the log's path as $0, so that it can be quoted once for `sh -c`.
    const loop = (tag: string) => `'while :; do echo ${tag} >> "$0"; sleep 0.02; done' '${this.path(WRITES)}'`
    const pids = this.path(`${name}.pids`)
    return [
      `sh -c ${loop(name)} ${quiet}`,
      'w=$!',
      ...(session ? [`setsid sh -c ${loop(`${name}-session`)} ${quiet}`, 'w="$w,$!"'] : []),
      `printf '{"pid":%s,"writers":[%s],"marker":"%s"}\\n' "$$" "$w" "\${RENNET_CODEX_TREE:-}" > '${pids}.tmp'`,
      `mv '${pids}.tmp' '${pids}'`,
    ].join('\n')
  }

  /** What `writers(name)` recorded, once it did and each of its writers has written. */
  started(name: string): Writers | null {
    let text: string
    try {
      text = readFileSync(this.path(`${name}.pids`), 'utf8')
    } catch {
      return null
    }
    const recorded = JSON.parse(text) as Writers
    const lines = this.writes().split('\n')
    const wrote = (tag: string) => lines.includes(tag)
    return wrote(name) && (recorded.writers.length === 1 || wrote(`${name}-session`)) ? recorded : null
  }

  /** Everything the writers wrote so far. */
  writes(): string {
    try {
      return readFileSync(this.path(WRITES), 'utf8')
    } catch {
      return ''
    }
  }

  /** Calls logged for `path` (`--version`, `app-server`). */
  calls(path: string): string[] {
    let text = ''
    try {
      text = readFileSync(this.log, 'utf8')
    } catch {}
    return text.split('\n').filter((line) => line.startsWith(`${path} `))
  }

  /**
   * The environment for discoverCodex: hermetic, plus `extra`. Its limits only guard against
   * a hang (a loaded machine may take seconds to start a probe); a test that wants a limit to
   * fire sets its own. `SANDBOX_MARK` marks every process discovery starts (see `live`).
   */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...BLANK,
      HOME: this.path('home'),
      RENNET_DISCOVERY_ROOT: this.path('sys'),
      RENNET_DISCOVERY_TIMEOUT_MS: String(GUARD_MS),
      RENNET_LOGIN_SHELL_TIMEOUT_MS: String(GUARD_MS),
      [SANDBOX_MARK]: this.root,
      ...extra,
    }
  }

  /**
   * Live processes started with this sandbox's environment (probes, login shells and what they
   * started, unless they cleared their environment): whatever discovery left running.
   */
  live(): string[] {
    return liveWithEnvironment(`${SANDBOX_MARK}=${this.root}`).map(describeProcess)
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true })
  }
}

/** A factory of sandboxes that are removed after each test of the file that calls it. */
export function sandboxPerTest(): () => Sandbox {
  const made: Sandbox[] = []
  afterEach(() => {
    for (const sb of made.splice(0)) sb.cleanup()
  })
  return () => {
    const sb = new Sandbox()
    made.push(sb)
    return sb
  }
}
