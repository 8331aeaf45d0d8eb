import type { JsonDocument, JsonPath } from '../formatDefinition';
import { arr, clip, count, emptyRecord, isObject, nonNegative, num, str } from '../json';
import type { JsonObject } from '../json';
import type { Diagnostic, LlmCall, ReportedTotals, Session, SourceRef } from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';

/** Per-request arrays of a detailed result, parallel to `input_lens` (vllm/benchmarks/serve.py). */
type ParallelKey = 'output_lens' | 'ttfts' | 'itls' | 'latencies' | 'start_times' | 'errors';
/** Failed-request errors quoted in the diagnostic; the rest stay in the file. */
const ERROR_QUOTE_MAX = 200;

/**
 * A `vllm bench serve --save-result` object (docs/design/formats.md §4): detailed (per-request arrays
 * `input_lens`, `ttfts`…) or aggregates only (saved without `--save-detailed`).
 */
export function isBenchResult(v: unknown): v is JsonObject {
  if (!isObject(v)) return false;
  if (Array.isArray(v['input_lens']) && Array.isArray(v['ttfts'])) return true;
  return (
    typeof v['duration'] === 'number' &&
    typeof v['completed'] === 'number' &&
    'total_input_tokens' in v &&
    'request_throughput' in v
  );
}

/** Where a JSON path of one result is: a document's own lines, or the one line of a JSON Lines record. */
type Locate = (path: JsonPath) => SourceRef;

/**
 * One benchmark run as one session: one call per request, in the order of the arrays.
 * input = input_lens[i] (the prompt sent), output = output_lens[i], TTFT and decode
 * (Σ itls) from the benchmark client's own clock, start from `start_times`
 * (perf_counter seconds, made relative to the run's first request). A failed request
 * (errors[i] not empty) keeps its input; vLLM writes 0 for its output and times, which
 * mean "not measured", so they stay null. The aggregates go to `reportedTotals`.
 */
export function readBenchResult(
  result: JsonObject,
  locate: Locate,
  ordinal: number,
  diagnostics: Diagnostic[],
): Session {
  const note = (path: JsonPath, severity: Diagnostic['severity'], message: string): void => {
    const at = locate(path);
    diagnostics.push({ file: at.file, line: at.line, severity, message });
  };
  const model = str(result['model_id']);
  const date = str(result['date']);
  const inputLens = arr(result['input_lens']);
  const calls: LlmCall[] = [];
  if (!inputLens) {
    note(
      [],
      'info',
      'This vllm bench result has no per-request data (it was saved without --save-detailed): only its aggregates are shown.',
    );
  } else {
    const n = inputLens.length;
    const column = (key: ParallelKey): unknown[] | null => {
      const values = arr(result[key]);
      if (values && values.length !== n)
        note(
          [key],
          'warning',
          `"${key}" has ${values.length} entries for ${n} requests; the missing ones are unknown.`,
        );
      return values;
    };
    const outputs = column('output_lens');
    const ttfts = column('ttfts');
    const itls = column('itls');
    const latencies = column('latencies');
    const starts = column('start_times');
    const errors = column('errors');
    const startValues = (starts ?? []).map(num).filter((s): s is number => s !== null);
    // reduce, not Math.min(...spread): a benchmark can have more requests than the stack has room for arguments.
    const origin = startValues.length > 0 ? startValues.reduce((a, b) => Math.min(a, b)) : null;
    const failed: number[] = [];
    for (let i = 0; i < n; i++) {
      const error = errors ? str(errors[i]) : null;
      const isFailed = error !== null && error !== '';
      if (isFailed) failed.push(i);
      const ttftS = isFailed ? null : nonNegative(ttfts?.[i]);
      const gaps = isFailed ? null : arr(itls?.[i]);
      const decodeS =
        gaps && gaps.every((g) => nonNegative(g) !== null) ? gaps.reduce<number>((a, g) => a + (g as number), 0) : null;
      // Older results have no latencies: a streamed request's latency is TTFT + Σ ITL.
      const latencyS = isFailed
        ? null
        : (nonNegative(latencies?.[i]) ?? (ttftS !== null && decodeS !== null ? ttftS + decodeS : null));
      const start = num(starts?.[i]);
      const startMs = start !== null && origin !== null ? (start - origin) * 1000 : null;
      const input = count(inputLens[i]);
      calls.push({
        id: `request-${i}`,
        index: i,
        turn: null,
        model,
        startMs,
        endMs: startMs !== null && latencyS !== null ? startMs + latencyS * 1000 : null,
        tokens: {
          input,
          cached: null,
          appended: null,
          cacheWrite: null,
          output: isFailed ? null : count(outputs?.[i]),
          reasoningOutput: null,
        },
        server: { queueMs: null, ttftMs: ms(ttftS), prefillMs: null, decodeMs: ms(decodeS), e2eMs: ms(latencyS) },
        blocks: null,
        toolCalls: [],
        source: locate(['input_lens', i]),
      });
    }
    if (failed.length > 0) {
      const first = failed[0]!;
      const text = str(errors?.[first]) ?? '';
      note(
        ['errors', first],
        'warning',
        `${failed.length} of ${n} requests failed (requests ${failed.join(', ')}); their output and times are unknown. First error: ${clip(text, ERROR_QUOTE_MAX)}`,
      );
    }
  }
  const totals = totalsOf(result);
  return {
    id: date !== null ? `vllm-bench-${date}` : `vllm-bench-${ordinal + 1}`,
    parentId: null,
    parentToolCallId: null,
    role: 'main',
    agent: { name: 'vllm-bench', version: null },
    model,
    cwd: null,
    title: titleOf(result, model),
    calls,
    turns: [],
    compactions: [],
    reportedTotals: totals,
  };
}

/** The aggregates: token totals count completed requests only; llmCalls = completed + failed. */
function totalsOf(result: JsonObject): ReportedTotals {
  const completed = count(result['completed']);
  const failed = count(result['failed']);
  return {
    input: count(result['total_input_tokens']),
    output: count(result['total_output_tokens']),
    cached: null,
    costUsd: null,
    llmCalls: completed === null ? null : completed + (failed ?? 0),
  };
}

function titleOf(result: JsonObject, model: string | null): string {
  const prompts = count(result['num_prompts']);
  const rate = result['request_rate'];
  const rateText = typeof rate === 'number' || typeof rate === 'string' ? ` at ${String(rate)} req/s` : '';
  const concurrency = count(result['max_concurrency']);
  return `vllm bench serve: ${model ?? 'unknown model'}${prompts !== null ? `, ${prompts} prompts` : ''}${rateText}${concurrency !== null ? `, max concurrency ${concurrency}` : ''}`;
}

function ms(seconds: number | null): number | null {
  return seconds === null ? null : seconds * 1000;
}

/** Unique session ids across the runs of one file (`--append-result` adds one line per run). */
function uniqueIds(sessions: Session[]): void {
  const seen = new Set<string>();
  sessions.forEach((s, i) => {
    if (seen.has(s.id)) s.id = `${s.id}#${i + 1}`;
    seen.add(s.id);
  });
}

/** A pretty-printed result (or one that spans lines): one document, one session. */
export function readBenchDocument(doc: JsonDocument): ReaderResult {
  const diagnostics: Diagnostic[] = [];
  if (!isBenchResult(doc.value)) {
    const at = doc.locate([]);
    diagnostics.push({
      file: at.file,
      line: at.line,
      severity: 'error',
      message: 'Not a vllm bench result: no "input_lens"/"ttfts" arrays and no benchmark aggregates.',
    });
    return { sessions: [], diagnostics, skippedRecords: {} };
  }
  return { sessions: [readBenchResult(doc.value, doc.locate, 0, diagnostics)], diagnostics, skippedRecords: {} };
}

/**
 * `vllm bench serve` writes its result as one line (`json.dump`), and `--append-result`
 * adds a line per run: each line that is a result becomes a session.
 */
export class VllmBenchRecordReader implements RecordReader {
  private readonly sessions: Session[] = [];
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord();

  record({ value, source }: TraceRecord): void {
    if (!isBenchResult(value)) {
      countSkipped(this.skipped, 'line:not-a-bench-result');
      return;
    }
    // Every path of a one-line result is on that line.
    this.sessions.push(readBenchResult(value, () => source, this.sessions.length, this.diagnostics));
  }

  finish(): ReaderResult {
    uniqueIds(this.sessions);
    return { sessions: this.sessions, diagnostics: this.diagnostics, skippedRecords: this.skipped };
  }
}
