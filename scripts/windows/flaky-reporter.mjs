// A vitest reporter for the Windows lane: names every test that passed only when run again.
// The lane allows one retry because Wine's cmd.exe now and then fails to start the command of
// a `.cmd` file it runs hundreds of times without fault ("Can't recognize '"…node.exe" …' as an
// internal or external command", exit 9009); a retry that hides something else must be seen.
export default class FlakyReporter {
  flaky = []

  onTestCaseResult(testCase) {
    const diagnostic = testCase.diagnostic()
    if (!diagnostic?.flaky) return
    // A test that passed on a retry keeps the errors of the tries before it.
    const errors = (testCase.result().errors ?? []).map((e) => `${e.name ?? 'Error'}: ${String(e.message).split('\n').slice(0, 6).join('\n      ')}`)
    this.flaky.push(
      `${testCase.module.moduleId}: ${testCase.fullName} (passed on retry ${diagnostic.retryCount})` + errors.map((e) => `\n    first: ${e}`).join(''),
    )
  }

  onTestRunEnd() {
    if (this.flaky.length === 0) return
    console.log(`\nwindows-lane: ${this.flaky.length} test(s) passed only on a retry:\n  ${this.flaky.join('\n  ')}\n`)
  }
}
