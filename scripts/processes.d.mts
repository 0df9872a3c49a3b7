export interface ProcStat {
  pid: number
  ppid: number
  pgrp: number
  session: number
  /** `/proc/<pid>/stat`'s state letter: `Z` for a zombie. */
  state: string
  /** Start time in clock ticks since boot. */
  start: string
}
export function statOf(pid: number): ProcStat | null
export function processTable(): ProcStat[]
export function isAlive(pid: number): boolean
export function environOf(pid: number): Map<string, string>
export function liveWithEnvironment(entry: string, options?: { prefix?: boolean }): number[]
export function describeProcess(pid: number): string
/** A process's command line and environment as `/proc` gives them (NUL-separated); `environ` '' where unreadable. */
export interface ProcTexts {
  pid: number
  cmdline: string
  environ: string
}
export function rawProcessTexts(): ProcTexts[]
