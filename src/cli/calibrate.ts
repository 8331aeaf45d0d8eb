import { readFile } from 'node:fs/promises';
import { readMeasuredRequests } from '../core/replay/measuredRequests';
import {
  calibrate,
  DEFAULT_CALIBRATE_OPTIONS,
  readCalibrationDocument,
  roundedStepModel,
  STEP_MODEL_KEYS,
} from '../core/sim/calibrate';
import type { Calibration, StepModel } from '../core/sim/calibrate';
import { formatCount } from '../core/text/formatNumbers';
import { terminalJson, terminalText } from '../core/text/safeText';
import { UsageError } from '../core/text/usageError';
import { outputFile } from './outputFile';

export const CALIBRATE_USAGE = `Usage: agent-trace calibrate RESULTS [--max-batched-tokens N] [--tolerance-ms X] [--json] [-o CAL.json]

Fits the simulator's step-time model (fixed ms per step, us per prefilled token, ns
per decode context token, us per decoding sequence) to requests measured on your own
server: an AIPerf profile_export.jsonl or a vllm bench serve result saved with
--save-detailed. The tokens that arrive together mark the ends of the engine's steps;
what each step held is read off them, and a non-negative least-squares fit finds the
four constants. Prints the fit, its error, the constants the data cannot tell apart,
and the worst residuals first. simulate --calibration CAL.json (the --json output)
runs the what-if with them. How it works: docs/guide/simulate.md.

  --max-batched-tokens N  the server's token budget per step (vLLM --max-num-batched-tokens);
                          default: every prompt prefilled in one step
  --tolerance-ms X        token arrivals closer than X ms end the same step (default ${DEFAULT_CALIBRATE_OPTIONS.toleranceMs})
  --top N                 residuals to print (default 10)
  --json                  the fit, every note and the worst residuals as JSON
  -o FILE                 write the JSON there (for simulate --calibration)

Exit status: 0 ok, 1 the results could not be read or gave nothing to fit, 2 usage error.
`;

const HELP = 'agent-trace calibrate --help';

/** The simulate flags that run the what-if with a fit. */
export function calibrationFlags(model: StepModel): string[] {
  const flag: Record<keyof StepModel, string> = {
    stepFixedMs: '--step-fixed-ms',
    prefillUsPerToken: '--prefill-us-per-token',
    kvReadNsPerToken: '--kv-read-ns-per-token',
    decodeUsPerSeq: '--decode-us-per-seq',
  };
  const rounded = roundedStepModel(model);
  return STEP_MODEL_KEYS.flatMap((key) => [flag[key], String(rounded[key])]);
}

function calibrationJson(file: string, format: string, skipped: number, c: Calibration, top: number): object {
  return {
    results: file,
    format,
    requests: c.requests,
    skippedRequests: skipped,
    intervals: c.rows,
    model: c.model,
    notIdentified: c.notIdentified,
    rmsErrorMs: c.rmsErrorMs,
    medianAbsRelError: c.medianAbsRelError,
    rSquared: c.rSquared,
    simulateFlags: calibrationFlags(c.model),
    notes: c.notes,
    worstResiduals: c.residuals.slice(0, top).map((r) => ({
      startMs: r.startMs,
      endMs: r.endMs,
      measuredMs: r.measuredMs,
      fittedMs: r.fittedMs,
      steps: r.steps,
      prefillTokens: r.prefillTokens,
      kvTokens: r.kvTokens,
      decodes: r.decodes,
      firstTokensOf: r.firstTokens,
    })),
  };
}

const ms = (v: number): string => `${v.toFixed(3)} ms`;

function calibrationText(file: string, format: string, skipped: number, c: Calibration, top: number): string {
  const m = c.model;
  const unknown = new Map(c.notIdentified.map((n) => [n.key, n.reason]));
  const line = (key: keyof StepModel, label: string, text: string): string =>
    `  ${label.padEnd(26)} ${unknown.has(key) ? `not identified: ${unknown.get(key)}` : text}`;
  const out = [
    `${file} (${format}): ${formatCount(c.requests)} requests${skipped > 0 ? ` (${formatCount(skipped)} failed or warm-up left out)` : ''}, ${formatCount(c.rows)} intervals between token arrivals`,
    '',
    'Step-time model:',
    line('stepFixedMs', 'fixed per step', `${m.stepFixedMs.toFixed(3)} ms`),
    line('prefillUsPerToken', 'per prefilled token', `${m.prefillUsPerToken.toFixed(2)} us`),
    line('kvReadNsPerToken', 'per decode context token', `${m.kvReadNsPerToken.toFixed(2)} ns`),
    line('decodeUsPerSeq', 'per decoding sequence', `${m.decodeUsPerSeq.toFixed(2)} us`),
    '',
    `Fit: RMS error ${ms(c.rmsErrorMs)}, median |error| ${(c.medianAbsRelError * 100).toFixed(1)}% of an interval, R² ${c.rSquared.toFixed(4)}`,
    `Run the what-if with it: agent-trace simulate FILE ${calibrationFlags(m).join(' ')}`,
  ];
  if (c.notes.length > 0) out.push('', 'Notes:', ...c.notes.map((n) => `  - ${n}`));
  if (top > 0 && c.residuals.length > 0) {
    out.push('', `Worst residuals (${Math.min(top, c.residuals.length)} of ${formatCount(c.residuals.length)}):`);
    out.push('  at (ms)       measured     fitted  steps  prefill  decodes  context read  first token of');
    for (const r of c.residuals.slice(0, top))
      out.push(
        `  ${r.startMs.toFixed(1).padStart(10)} ${ms(r.measuredMs).padStart(12)} ${ms(r.fittedMs).padStart(10)} ${String(r.steps).padStart(6)} ${formatCount(r.prefillTokens).padStart(8)} ${String(r.decodes).padStart(8)} ${formatCount(r.kvTokens).padStart(13)}  ${r.firstTokens.join(', ')}`,
      );
  }
  return `${out.join('\n')}\n`;
}

function positive(flag: string, v: string | undefined, integer: boolean): number {
  const n = Number(v);
  if (v === undefined || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new UsageError(`${flag} needs a positive ${integer ? 'whole number' : 'number'}, not "${v ?? ''}"`, HELP);
  return n;
}

/** `agent-trace calibrate`: exit status. */
export async function runCalibrate(
  argv: readonly string[],
  write: (text: string) => void,
  writeErr: (text: string) => void,
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    write(CALIBRATE_USAGE);
    return 0;
  }
  const options = { ...DEFAULT_CALIBRATE_OPTIONS };
  let json = false;
  let out: string | null = null;
  let top = 10;
  let file: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') json = true;
    else if (a === '--max-batched-tokens') options.maxBatchedTokens = positive(a, argv[++i], true);
    else if (a === '--tolerance-ms') options.toleranceMs = positive(a, argv[++i], false);
    else if (a === '--top') top = positive(a, argv[++i], true);
    else if (a === '-o' || a === '--out') out = argv[++i] ?? null;
    else if (a.startsWith('-')) throw new UsageError(`unknown option "${a}"`, HELP);
    else if (file === null) file = a;
    else throw new UsageError(`calibrate reads one RESULTS file, not "${a}" too`, HELP);
  }
  if (file === null)
    throw new UsageError('calibrate needs a RESULTS file (AIPerf profile_export.jsonl or vllm bench result)', HELP);
  if (out === null && argv.some((a) => a === '-o' || a === '--out')) throw new UsageError('-o needs a FILE', HELP);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    writeErr(terminalText(`agent-trace: ${file}: ${e instanceof Error ? e.message : String(e)}\n`));
    return 1;
  }
  const results = readMeasuredRequests(text);
  if (!results) {
    writeErr(terminalText(`agent-trace: ${file}: neither an AIPerf profile_export.jsonl nor a vllm bench result\n`));
    return 1;
  }
  for (const p of results.problems) writeErr(terminalText(`agent-trace: ${file}: ${p}\n`));
  const c = calibrate(results.requests, options);
  if (c.rows === 0) {
    writeErr(terminalText(`agent-trace: ${file}: no request with a token to fit\n`));
    return 1;
  }
  const doc = calibrationJson(file, results.format, results.skipped, c, top);
  if (out !== null) {
    await outputFile(out, `${terminalJson(JSON.stringify(doc, null, 2))}\n`);
    writeErr(terminalText(`wrote ${out}\n`));
  }
  write(
    json
      ? `${terminalJson(JSON.stringify(doc, null, 2))}\n`
      : terminalText(calibrationText(file, results.format, results.skipped, c, top)),
  );
  return 0;
}

/** The step constants of a calibration file (`calibrate --json` or `-o`), as simulate flags; a clear error otherwise. */
export async function readCalibrationFlags(file: string): Promise<string[]> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    throw new UsageError(
      `--calibration ${file}: ${e instanceof Error ? e.message : String(e)}`,
      'agent-trace simulate --help',
    );
  }
  const read = readCalibrationDocument(doc);
  if (!read.ok) throw new UsageError(`--calibration ${file}: ${read.error}`, 'agent-trace simulate --help');
  return calibrationFlags(read.fit.model);
}
