import type { MeasuredRequest } from '../sim/calibrate';

/**
 * Reads a benchmark client's per-request measurements for the step-time calibration:
 * AIPerf's `profile_export.jsonl` (one record per line: `metadata.request_start_ns`,
 * metrics `time_to_first_token`, `inter_chunk_latency`, `request_latency`,
 * `input_sequence_length`, `output_sequence_length`, `usage_prompt_cached_tokens`, all in
 * ms or tokens) or a `vllm bench serve --save-result --save-detailed` result (one JSON
 * object of parallel arrays: `start_times`, `ttfts`, `itls`, `latencies` in seconds,
 * `input_lens`, `output_lens`, `errors`). Failed and warm-up requests are left out and
 * counted; a malformed record is named by its line and the rest still read.
 */
export interface MeasuredResults {
  format: 'aiperf' | 'vllm-bench';
  requests: MeasuredRequest[];
  /** Each a sentence naming where (file line or request index) and what. */
  problems: string[];
  /** Requests not used (failed, cancelled, warm-up). */
  skipped: number;
}

const obj = (v: unknown): Record<string, unknown> | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** An AIPerf metric's value (`{ "value": …, "unit": … }`). */
function metric(metrics: Record<string, unknown>, name: string): unknown {
  return obj(metrics[name])?.['value'];
}

function readAiperf(text: string): MeasuredResults {
  const out: MeasuredResults = { format: 'aiperf', requests: [], problems: [], skipped: 0 };
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let record: Record<string, unknown> | null;
    try {
      record = obj(JSON.parse(line));
    } catch (e) {
      out.problems.push(`line ${i + 1}: not JSON (${e instanceof Error ? e.message : String(e)})`);
      return;
    }
    const meta = obj(record?.['metadata']);
    const metrics = obj(record?.['metrics']);
    if (!record || !meta || !metrics) {
      out.problems.push(`line ${i + 1}: not an AIPerf record (no "metadata" and "metrics")`);
      return;
    }
    const phase = meta['benchmark_phase'];
    if (record['error'] || meta['was_cancelled'] === true || (typeof phase === 'string' && phase !== 'profiling')) {
      out.skipped += 1;
      return;
    }
    const startNs = num(meta['request_start_ns']);
    const ttft = num(metric(metrics, 'time_to_first_token'));
    const input = num(metric(metrics, 'input_sequence_length'));
    const output = num(metric(metrics, 'output_sequence_length')) ?? num(metric(metrics, 'output_token_count'));
    if (startNs === null || ttft === null || input === null || output === null) {
      out.problems.push(
        `line ${i + 1}: a record without request_start_ns, time_to_first_token, input_sequence_length or output_sequence_length`,
      );
      return;
    }
    const chunks = metric(metrics, 'inter_chunk_latency');
    out.requests.push({
      startMs: startNs / 1e6,
      ttftMs: ttft,
      itlsMs: Array.isArray(chunks) && chunks.every((c) => num(c) !== null) ? (chunks as number[]) : null,
      latencyMs: num(metric(metrics, 'request_latency')),
      inputTokens: input,
      cachedTokens: num(metric(metrics, 'usage_prompt_cached_tokens')),
      outputTokens: output,
      label: `line ${i + 1}`,
    });
  });
  return out;
}

function readVllmBench(result: Record<string, unknown>): MeasuredResults {
  const out: MeasuredResults = { format: 'vllm-bench', requests: [], problems: [], skipped: 0 };
  const col = (key: string): unknown[] | null => (Array.isArray(result[key]) ? (result[key] as unknown[]) : null);
  const inputs = col('input_lens');
  const outputs = col('output_lens');
  const ttfts = col('ttfts');
  const starts = col('start_times');
  if (!inputs || !outputs || !ttfts || !starts) {
    out.problems.push(
      'a vllm bench result without per-request start_times, ttfts, input_lens and output_lens: run it with --save-detailed',
    );
    return out;
  }
  const itls = col('itls');
  const latencies = col('latencies');
  const errors = col('errors');
  inputs.forEach((_, i) => {
    const error = errors?.[i];
    if (typeof error === 'string' && error !== '') {
      out.skipped += 1;
      return;
    }
    const start = num(starts[i]);
    const ttft = num(ttfts[i]);
    const input = num(inputs[i]);
    const output = num(outputs[i]);
    if (start === null || ttft === null || input === null || output === null) {
      out.problems.push(`request ${i + 1}: no start time, TTFT or token counts`);
      return;
    }
    const gaps = itls?.[i];
    out.requests.push({
      startMs: start * 1000,
      ttftMs: ttft * 1000,
      itlsMs:
        Array.isArray(gaps) && gaps.every((g) => num(g) !== null) ? (gaps as number[]).map((g) => g * 1000) : null,
      latencyMs: num(latencies?.[i]) === null ? null : (latencies![i] as number) * 1000,
      inputTokens: input,
      // vllm bench does not record the server's prefix-cache hits.
      cachedTokens: null,
      outputTokens: output,
      label: `request ${i + 1}`,
    });
  });
  return out;
}

/** Reads AIPerf or vllm bench per-request results; null when the text is neither. */
export function readMeasuredRequests(text: string): MeasuredResults | null {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    // One JSON object over the whole text is a vllm bench result; else JSON Lines (AIPerf).
    try {
      const whole = obj(JSON.parse(trimmed));
      if (whole && (Array.isArray(whole['input_lens']) || 'num_prompts' in whole)) return readVllmBench(whole);
    } catch {
      // Not one object: JSON Lines.
    }
    const first = trimmed.slice(0, trimmed.indexOf('\n') < 0 ? undefined : trimmed.indexOf('\n'));
    try {
      const record = obj(JSON.parse(first));
      if (record && obj(record['metadata']) && obj(record['metrics'])) return readAiperf(text);
    } catch {
      return null;
    }
  }
  return null;
}
