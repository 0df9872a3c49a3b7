#!/usr/bin/env node
// node bench/floor.mjs [lines, default 200000]
//
// The floor of a plain client on the throughput stream: the lines the test kit's fake writes
// (an agent-message delta each, as in `pnpm bench --only throughput`), held in memory and put
// through the least a JavaScript client does per event, with nothing else running in the
// process: splitting the text into lines, `JSON.parse` of each line, and `JSON.parse` plus the
// event object. CPU per line (process.cpuUsage, median of five passes), so that the
// throughput's CPU per event of the yardstick and of this package can be read against it
// (BENCHMARKS.md, "Where the time goes").

const lines = Number(process.argv[2] ?? 200_000)
const threadId = '01a22f3f-395c-74e0-a930-000000000001'
const turnId = '01a22f3f-3972-7112-84af-000000000001'
const head = `{"method":"item/agentMessage/delta","params":{"threadId":"${threadId}","turnId":"${turnId}","itemId":"msg_1.0","delta":"`
const at = Date.now()
let text = ''
for (let i = 0; i < lines; i++) text += `${head}${i}"},"emittedAtMs":${at}}\n`
const list = text.split('\n')
list.pop()

let sink = 0
/** CPU ns per line of `pass`, the median of five. */
function cpuPerLine(pass) {
  const runs = []
  for (let r = 0; r < 5; r++) {
    const cpu = process.cpuUsage()
    pass()
    const used = process.cpuUsage(cpu)
    runs.push(((used.user + used.system) * 1000) / lines)
  }
  return runs.sort((a, b) => a - b)[2]
}

const rows = [
  ['split the text into lines', () => (sink += text.split('\n').length)],
  ['JSON.parse of each line', () => list.forEach((line) => (sink += JSON.parse(line).params.delta.length))],
  [
    'JSON.parse and the event object',
    () =>
      list.forEach((line) => {
        const p = JSON.parse(line).params
        const event = { type: 'messageDelta', itemId: p.itemId, delta: p.delta }
        sink += event.delta.length
      }),
  ],
]
console.log(`${lines} lines of ${(text.length / lines).toFixed(0)} bytes; CPU per line, median of 5 passes`)
for (const [label, pass] of rows) console.log(`${label.padEnd(36)} ${cpuPerLine(pass).toFixed(0)} ns`)
if (sink === 0) console.log('(nothing was read)')
