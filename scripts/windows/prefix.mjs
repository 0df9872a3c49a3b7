// What runs in a Wine prefix, as Linux sees it (/proc): every process Wine started for it carries
// WINEPREFIX=<prefix> in its Linux environment. Wine's own services are left out.
import { describeProcess, liveWithEnvironment } from '../processes.mjs'

const WINE_OWN = /\\(services|winedevice|plugplay|explorer|rpcss|svchost|conhost|start|tabtip|wineboot|winemenubuilder)\.exe|wineserver/i

/** Live processes of the prefix other than Wine's own and this one, as `{ pid, line }` (`line`: `pid: argv`). */
export function prefixProcesses(prefix) {
  return liveWithEnvironment(`WINEPREFIX=${prefix}`)
    .filter((pid) => pid !== process.pid)
    .map((pid) => ({ pid, line: describeProcess(pid) }))
    .filter(({ line }) => !WINE_OWN.test(line) && !line.endsWith(': (gone)'))
}
