import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepLogEntry } from '../../src/core/sim/engines/engineTypes';
import { referenceSteps, runOracle } from './oracleRun';
import type { OracleJob } from './oracleRun';

/**
 * Step diff: runs one job through the reference engine and through the vLLM oracle,
 * each writing what it scheduled step by step (requests and tokens, decodes,
 * preemptions, admissions, every cache lookup and its hit), and finds the first step
 * where the two part. Used by the oracle suite to explain a failure, and by hand:
 *
 *   node --import tsx test/oracle/stepDiff.ts W.json --replicas 24 --stagger-s 2 --capacity-tokens 30000 [--free-order legacy]
 */

/** One step in a form both sides share: request ids as "session-call". */
export interface ComparableStep {
  step: number;
  t: number;
  sched: Array<[string, number, number]>;
  preempted: string[];
  admitted: string[];
  lookups: Array<[string, number]>;
}

function fromReference(e: StepLogEntry & { ids: (r: number) => string }): ComparableStep {
  return {
    step: e.step,
    t: e.t,
    sched: e.sched.map(([r, n, d]) => [e.ids(r), n, d]),
    preempted: e.preempted.map(e.ids),
    admitted: e.admitted.map(e.ids),
    lookups: e.lookups.map(([r, hit]) => [e.ids(r), hit]),
  };
}

/** What differs between two steps, in words; null when they agree (times to a microsecond, the oracle's clock being a float). */
export function stepDifference(ours: ComparableStep, oracle: ComparableStep): string | null {
  const parts: string[] = [];
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  if (Math.abs(ours.t - oracle.t) > 1e-6) parts.push(`starts at ${ours.t} s, oracle ${oracle.t} s`);
  for (const key of ['sched', 'preempted', 'admitted', 'lookups'] as const) {
    if (!same(ours[key], oracle[key]))
      parts.push(`${key}: ours ${JSON.stringify(ours[key])}, oracle ${JSON.stringify(oracle[key])}`);
  }
  return parts.length === 0 ? null : parts.join('; ');
}

export interface StepDiffResult {
  ourSteps: number;
  oracleSteps: number;
  /** The first step that differs, with the steps just before it on both sides; null when all agree. */
  first: {
    step: number;
    what: string;
    context: Array<{ ours: ComparableStep | null; oracle: ComparableStep | null }>;
  } | null;
}

export async function stepDiff(oracleDir: string, job: OracleJob, contextSteps = 3): Promise<StepDiffResult> {
  const ours = referenceSteps(job).map(fromReference);
  const dir = mkdtempSync(join(tmpdir(), 'step-diff-'));
  try {
    const file = join(dir, 'oracle-steps.jsonl');
    await runOracle(oracleDir, job, { steps: file });
    const oracle = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as ComparableStep);
    const n = Math.max(ours.length, oracle.length);
    for (let i = 0; i < n; i++) {
      const a = ours[i];
      const b = oracle[i];
      const what = a && b ? stepDifference(a, b) : a ? 'the oracle has no more steps' : 'ours has no more steps';
      if (what === null) continue;
      const context = [];
      for (let k = Math.max(0, i - contextSteps); k <= i; k++)
        context.push({ ours: ours[k] ?? null, oracle: oracle[k] ?? null });
      return { ourSteps: ours.length, oracleSteps: oracle.length, first: { step: i, what, context } };
    }
    return { ourSteps: ours.length, oracleSteps: oracle.length, first: null };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
