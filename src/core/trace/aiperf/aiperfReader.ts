import { clip, count, emptyRecord, isObject, nonNegative, num, obj, str } from '../json';
import type { JsonObject } from '../json';
import { unknownTokens } from '../model';
import type { CallTokens, Diagnostic, LlmCall, Session, SourceRef } from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';

/** Failed-request messages quoted in the diagnostic; the rest stay in the file. */
const ERROR_QUOTE_MAX = 200;
/** Session id of the requests of a run that names no conversation. */
const NO_CONVERSATION = 'aiperf-requests';

/**
 * One record of AIPerf's `profile_export.jsonl`: `metadata` (request ids, conversation,
 * times) and `metrics` (each `{value, unit}`), plus `error` for a failed request.
 */
export function isAiperfRecord(r: JsonObject): boolean {
  const metadata = obj(r['metadata']);
  return metadata !== null && 'x_request_id' in metadata && isObject(r['metrics']);
}

/** A metric's value in the unit AIPerf wrote (`{value, unit}`, or a bare number in older records). */
function metric(metrics: JsonObject, ...names: string[]): number | null {
  for (const name of names) {
    const m = metrics[name];
    const value = isObject(m) ? num(m['value']) : num(m);
    if (value !== null) return value;
  }
  return null;
}

/** Nanoseconds since the epoch (AIPerf's `*_ns`) as milliseconds. */
function nsToMs(ns: unknown): number | null {
  const n = nonNegative(ns);
  return n === null ? null : n / 1e6;
}

interface PendingCall {
  call: LlmCall;
  turnIndex: number;
}

/**
 * Reads AIPerf `profile_export.jsonl` (ai-dynamo/aiperf): one record per benchmark
 * request, with the client's own measures. One LLM call per record: input =
 * `input_sequence_length`, output = `output_sequence_length` (reasoning included,
 * `reasoning_token_count` its share), TTFT and latency as timing, start and end from
 * `request_start_ns`/`request_end_ns` (older: `timestamp_ns` and the latency). Requests of
 * one `conversation_id` are one session, in turn order; AIPerf writes no cache figures.
 */
export class AiperfReader implements RecordReader {
  private readonly sessions = new Map<string, PendingCall[]>();
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord();
  private failures = 0;
  private firstFailure: { source: SourceRef; text: string } | null = null;

  record({ value, source }: TraceRecord): void {
    if (!isAiperfRecord(value)) {
      countSkipped(this.skipped, '(not a profile_export record)');
      return;
    }
    const metadata = obj(value['metadata'])!;
    const metrics = obj(value['metrics'])!;
    const id = str(metadata['x_request_id']) ?? `request-${source.line + 1}`;
    const conversation = str(metadata['conversation_id']) ?? NO_CONVERSATION;
    const latencyMs = metric(metrics, 'request_latency');
    const ttftMs = metric(metrics, 'time_to_first_token', 'ttft');
    const startMs =
      nsToMs(metadata['request_start_ns']) ??
      nsToMs(metadata['timestamp_ns']) ??
      nsToMs(metric(metrics, 'min_request_timestamp'));
    const endMs =
      nsToMs(metadata['request_end_ns']) ??
      nsToMs(metric(metrics, 'max_response_timestamp')) ??
      (startMs !== null && latencyMs !== null ? startMs + latencyMs : null);
    const error = obj(value['error']);
    let tokens: CallTokens;
    if (error) {
      // A failed request generated nothing the export measured: its figures are unknown.
      tokens = unknownTokens();
      this.failures += 1;
      const text = [count(error['code']), str(error['type']), str(error['message'])]
        .filter((x) => x !== null)
        .join(' ');
      this.firstFailure ??= { source, text: clip(text, ERROR_QUOTE_MAX) };
    } else {
      const input = count(metric(metrics, 'input_sequence_length'));
      const reasoning = count(metric(metrics, 'reasoning_token_count'));
      const output =
        count(metric(metrics, 'output_sequence_length')) ??
        addKnown(count(metric(metrics, 'output_token_count')), reasoning);
      // The server's cached prompt tokens (usage.prompt_tokens_details.cached_tokens), which AIPerf keeps as
      // `usage_prompt_cached_tokens` when the server reports them (vLLM: --enable-prompt-tokens-details).
      const reported = count(metric(metrics, 'usage_prompt_cached_tokens'));
      const cached = reported !== null && input !== null ? Math.min(reported, input) : null;
      tokens = {
        input,
        cached,
        appended: cached !== null ? input! - cached : null,
        cacheWrite: null,
        output,
        reasoningOutput: reasoning,
      };
    }
    const call: LlmCall = {
      id,
      index: 0,
      turn: null,
      model: null,
      startMs,
      endMs,
      tokens,
      server: {
        queueMs: null,
        ttftMs: ttftMs !== null && ttftMs >= 0 ? ttftMs : null,
        prefillMs: null,
        decodeMs: latencyMs !== null && ttftMs !== null && latencyMs >= ttftMs ? latencyMs - ttftMs : null,
        e2eMs: latencyMs !== null && latencyMs >= 0 ? latencyMs : null,
      },
      blocks: null,
      toolCalls: [],
      source,
    };
    const list = this.sessions.get(conversation) ?? [];
    if (list.length === 0) this.sessions.set(conversation, list);
    list.push({ call, turnIndex: count(metadata['turn_index']) ?? list.length });
  }

  finish(): ReaderResult {
    if (this.failures > 0 && this.firstFailure) {
      const { source, text } = this.firstFailure;
      this.diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'warning',
        message: `${this.failures} request(s) failed (first: ${text}); they are listed as calls with unknown tokens.`,
      });
    }
    const sessions: Session[] = [];
    for (const [id, pending] of this.sessions) {
      // The export is written as requests complete; a conversation reads in turn order.
      pending.sort((a, b) => a.turnIndex - b.turnIndex || (a.call.startMs ?? 0) - (b.call.startMs ?? 0));
      const calls = pending.map((p, index) => ({ ...p.call, index }));
      sessions.push({
        id,
        parentId: null,
        parentToolCallId: null,
        role: 'main',
        agent: { name: 'aiperf', version: null },
        model: null,
        cwd: null,
        title: null,
        calls,
        turns: [],
        compactions: [],
      });
    }
    return { sessions, diagnostics: this.diagnostics, skippedRecords: this.skipped };
  }
}

function addKnown(a: number | null, b: number | null): number | null {
  return a === null ? null : a + (b ?? 0);
}
