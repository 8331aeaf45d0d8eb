import type { RecallCase } from './redact.bench';

/** trufflehog's detector pattern tests, read from a checkout (AGPL-3.0: never copied into this repository). */
export function trufflehogCases(folder: string | undefined): { cases: RecallCase[]; source: string } {
  if (!folder) return { cases: [], source: 'AGENT_TRACE_TRUFFLEHOG is not set' };
  return { cases: [], source: 'not yet' };
}
