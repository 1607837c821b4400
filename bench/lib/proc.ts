/**
 * Memory of a process from /proc/<pid>/status (Linux): resident set now (VmRSS) and its peak
 * since the process started (VmHWM). The parser is pure, so it can be checked on fixed text.
 */
import { readFileSync } from 'node:fs';

export interface ProcMemory {
  /** Resident set size now. Unit: bytes. */
  readonly rssBytes: number;
  /** Highest resident set size since the process started. Unit: bytes. */
  readonly rssPeakBytes: number;
}

/** Reads `/proc/<pid>/status`; undefined once the process is gone. */
export function memoryOf(pid: number): ProcMemory | undefined {
  try {
    return parseProcStatus(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The VmRSS and VmHWM lines of a /proc/<pid>/status text (`VmRSS:\t   28672 kB`; the kernel
 * writes kB meaning KiB). Undefined when either is missing (a kernel thread, a zombie).
 */
export function parseProcStatus(text: string): ProcMemory | undefined {
  const kib = (field: string): number | undefined => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
    return match === null ? undefined : Number(match[1]);
  };
  const rss = kib('VmRSS');
  const peak = kib('VmHWM');
  if (rss === undefined || peak === undefined) return undefined;
  return { rssBytes: rss * 1024, rssPeakBytes: peak * 1024 };
}
