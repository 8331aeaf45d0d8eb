import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OracleJob } from './oracleRun';
import { radixRequestId, radixSteps, runSglangOracle } from './sglangOracleRun';

/**
 * Step diff for the sglang-lru engine: runs one job through the engine and through the
 * SGLang oracle, each writing what it ran step by step (prefill or decode, which requests
 * with how many tokens, which were retracted, tokens evicted), and finds the first step
 * where the two part. Used by the oracle suite to explain a failure.
 */

/** One step in a form both sides share: request ids as "session-call". */
export interface RadixComparableStep {
  step: number;
  t: number;
  mode: 'prefill' | 'decode';
  reqs: Array<[string, number]>;
  retracted: string[];
  evicted: number;
}

/** What differs between two steps, in words; null when they agree (times to a microsecond). */
export function radixStepDifference(ours: RadixComparableStep, oracle: RadixComparableStep): string | null {
  const parts: string[] = [];
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  if (Math.abs(ours.t - oracle.t) > 1e-6) parts.push(`starts at ${ours.t} s, oracle ${oracle.t} s`);
  for (const key of ['mode', 'reqs', 'retracted', 'evicted'] as const) {
    if (!same(ours[key], oracle[key]))
      parts.push(`${key}: ours ${JSON.stringify(ours[key])}, oracle ${JSON.stringify(oracle[key])}`);
  }
  return parts.length === 0 ? null : parts.join('; ');
}

/** The first step where the engine and the oracle part (null when every step agrees), and the step counts. */
export async function radixStepDiff(
  oracleDir: string,
  job: OracleJob,
): Promise<{ ourSteps: number; oracleSteps: number; first: { step: number; what: string } | null }> {
  const { steps, plan } = radixSteps(job);
  const id = (r: number): string => radixRequestId(plan, r);
  const ours: RadixComparableStep[] = steps.map((e) => ({
    step: e.step,
    t: e.t,
    mode: e.mode,
    reqs: e.reqs.map(([r, n]) => [id(r), n]),
    retracted: e.retracted.map(id),
    evicted: e.evicted,
  }));
  const dir = mkdtempSync(join(tmpdir(), 'radix-step-diff-'));
  try {
    const file = join(dir, 'oracle-steps.jsonl');
    await runSglangOracle(oracleDir, job, { steps: file });
    const oracle = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as RadixComparableStep);
    const n = Math.max(ours.length, oracle.length);
    for (let i = 0; i < n; i++) {
      const a = ours[i];
      const b = oracle[i];
      const what = a && b ? radixStepDifference(a, b) : a ? 'the oracle has no more steps' : 'ours has no more steps';
      if (what !== null) return { ourSteps: ours.length, oracleSteps: oracle.length, first: { step: i, what } };
    }
    return { ourSteps: ours.length, oracleSteps: oracle.length, first: null };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
