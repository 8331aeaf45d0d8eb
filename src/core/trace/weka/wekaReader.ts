import type { JsonDocument, JsonPath } from '../formatDefinition';
import { arr, count, DETECT_SAMPLE, emptyRecord, isObject, mostlyOfKind, nonNegative, num, obj, str } from '../json';
import type { JsonObject } from '../json';
import { hashIds } from '../mooncake/kvBlocks';
import { mostUsedModel } from '../model';
import type { Diagnostic, LlmCall, ReportedTotals, Session, SourceRef, UserTurn } from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';

/**
 * The kv-cache-tester ("Weka") agentic trace (docs/design/formats.md §18): one JSON object per
 * captured coding conversation, `{id, models, block_size, hash_id_scope, tool_tokens,
 * system_tokens, requests, totals}`. Each request is an API call (`type` "n" normal or "s"
 * streaming: `t`, `model`, `in`, `out`, `hash_ids`, `input_types`, `output_types`, `stop`,
 * `api_time`, `think_time`, `ttft`) or a sub-agent marker (`type` "subagent": `t`,
 * `agent_id`, `subagent_type`, `duration_ms`, `status`, and its own `requests`). Defined by
 * callanjfox/kv-cache-tester `docs/trace_replay_tester.md` and `trace_replay_tester.py`
 * (`normalize_trace`, `flatten_requests`), and by the loader AIPerf replays it with
 * (ai-dynamo/aiperf `src/aiperf/dataset/loader/weka_trace_models.py`, `weka_trace.py`).
 */

/** Tokens per hash block when a trace does not say (every published trace says 64). */
export const WEKA_DEFAULT_BLOCK_TOKENS = 64;
/** A child timestamp this far before its spawn marker is read as relative to the spawn (AIPerf's `_JOIN_EPSILON_SECONDS`). */
const SPAWN_EPSILON_S = 1e-6;
/** Preview of a turn whose prompt text the trace does not carry. */
const NO_TEXT = '(prompt text not recorded)';

/** True when the value is a Weka trace: a `requests` list of API calls with `hash_ids` or sub-agent markers, and a block size or hash scope. */
export function isWekaTrace(value: unknown): value is JsonObject {
  if (!isObject(value) || !Array.isArray(value['requests'])) return false;
  if (typeof value['block_size'] !== 'number' && typeof value['hash_id_scope'] !== 'string') return false;
  const requests = value['requests'];
  // Most of the first requests, not all: one broken request must not lose the whole trace.
  return (
    requests.length === 0 ||
    mostlyOfKind(requests.slice(0, DETECT_SAMPLE), (r) => isWekaRequest(r) || isWekaSubagent(r))
  );
}

function isWekaRequest(r: unknown): boolean {
  return isObject(r) && (r['type'] === 'n' || r['type'] === 's') && 'in' in r && 't' in r;
}

function isWekaSubagent(r: unknown): boolean {
  return isObject(r) && r['type'] === 'subagent' && Array.isArray(r['requests']);
}

/** One API call before cache figures are known: where it is, its absolute start, its ids. */
interface PendingCall {
  session: SessionDraft;
  value: JsonObject;
  path: JsonPath;
  startS: number | null;
  /** File order, for ties in time. */
  order: number;
}

interface SessionDraft {
  session: Session;
}

type Locate = (path: JsonPath) => SourceRef;

/**
 * Reads one trace into its main session and one session per sub-agent marker.
 *
 * Times: `t` is seconds from the conversation start; a marker's inner requests carry either
 * root-trace seconds (current captures) or seconds from the spawn (kv-cache-tester's own
 * `flatten_requests`, older captures). AIPerf tells them apart per request (a child before
 * its spawn is relative); here it is decided per marker by its first inner request, so a
 * long relative sub-agent is not half-read as absolute. Calls end `api_time` seconds after
 * they start.
 *
 * Tokens: input = `in`, output = `out`; the trace records no provider cache figures, so
 * cached is what an ideal, infinite prefix cache would hit: hash ids are prefix hashes
 * within the trace (`hash_id_scope: "local"`: one namespace per file, sub-agents included),
 * so walking a call's ids from block 0 until the first id never sent before, over every
 * call of the trace in time order, gives the longest prefix any earlier call shared.
 * Only full blocks are named (`len(hash_ids) = floor(in / block_size)` on every published
 * trace), so cached = hit blocks × block size ≤ input. appended = input − cached.
 */
export function readWekaTrace(
  trace: JsonObject,
  locate: Locate,
  ordinal: number,
  diagnostics: Diagnostic[],
  skipped: Record<string, number>,
): Session[] {
  const note = (path: JsonPath, severity: Diagnostic['severity'], message: string): void => {
    const at = locate(path);
    diagnostics.push({ file: at.file, line: at.line, severity, message });
  };
  const id = str(trace['id']) ?? `trace-${ordinal + 1}`;
  const declared = count(trace['block_size']);
  const blockSize = declared !== null && declared > 0 ? declared : WEKA_DEFAULT_BLOCK_TOKENS;
  if (declared === null || declared === 0)
    note(
      ['block_size'],
      'warning',
      `"block_size" should be a token count > 0, not ${JSON.stringify(trace['block_size'] ?? null)}: read as ${WEKA_DEFAULT_BLOCK_TOKENS}.`,
    );
  const scope = str(trace['hash_id_scope']);
  if (scope !== null && scope !== 'local') {
    note(
      ['hash_id_scope'],
      'info',
      `"hash_id_scope" is "${scope}": hash ids are shared across traces, so a block this trace sends first may already be cached by another; cached tokens count only hits within this file.`,
    );
  }
  const main = draft({ id, parentId: null, role: 'main', title: null, model: null });
  const drafts: SessionDraft[] = [main];
  const pending: PendingCall[] = [];
  const requests = arr(trace['requests']) ?? [];
  requests.forEach((r, i) => {
    const path: JsonPath = ['requests', i];
    if (isWekaSubagent(r)) {
      readSubagent(r as JsonObject, path, main, drafts, pending, note, skipped);
      return;
    }
    if (!isObject(r) || (r['type'] !== 'n' && r['type'] !== 's')) {
      countSkipped(skipped, `request:${isObject(r) ? (str(r['type']) ?? 'no type') : 'not an object'}`);
      note(path, 'warning', 'Not a Weka request (type "n", "s" or "subagent"); skipped.');
      return;
    }
    pending.push({ session: main, value: r, path, startS: seconds(r['t'], path, note), order: pending.length });
  });

  buildCalls(pending, blockSize, locate, note);
  const totals = obj(obj(trace['totals'])?.['parent_tokens']);
  if (totals) {
    const reported: ReportedTotals = {
      input: count(totals['input']),
      output: count(totals['output']),
      cached: null,
      costUsd: null,
      llmCalls: null,
    };
    if (reported.input !== null || reported.output !== null) main.session.reportedTotals = reported;
  }
  return drafts.map((d) => finishSession(d));
}

function draft(s: Pick<Session, 'id' | 'parentId' | 'role' | 'title' | 'model'>): SessionDraft {
  return {
    session: {
      id: s.id,
      parentId: s.parentId,
      parentToolCallId: null,
      role: s.role,
      agent: null,
      model: s.model,
      cwd: null,
      title: s.title,
      calls: [],
      turns: [],
      compactions: [],
    },
  };
}

function readSubagent(
  entry: JsonObject,
  path: JsonPath,
  parent: SessionDraft,
  drafts: SessionDraft[],
  pending: PendingCall[],
  note: (path: JsonPath, severity: Diagnostic['severity'], message: string) => void,
  skipped: Record<string, number>,
): void {
  const agentId = str(entry['agent_id']) ?? `subagent-${drafts.length}`;
  const kind = str(entry['subagent_type']);
  const spawnS = seconds(entry['t'], path, note);
  const d = draft({
    id: `${parent.session.id}/${agentId}`,
    parentId: parent.session.id,
    role: 'subagent',
    title: kind,
    model: null,
  });
  drafts.push(d);
  const inner = arr(entry['requests']) ?? [];
  // The first inner request decides the time base of the whole marker (see readWekaTrace).
  const first = inner.map((r) => (isObject(r) ? num(r['t']) : null)).find((t) => t !== null) ?? null;
  const relative = spawnS !== null && first !== null && first + SPAWN_EPSILON_S < spawnS;
  inner.forEach((r, j) => {
    const at: JsonPath = [...path, 'requests', j];
    if (isWekaSubagent(r)) {
      readSubagent(r as JsonObject, at, d, drafts, pending, note, skipped);
      return;
    }
    if (!isObject(r) || (r['type'] !== 'n' && r['type'] !== 's')) {
      countSkipped(skipped, `request:${isObject(r) ? (str(r['type']) ?? 'no type') : 'not an object'}`);
      note(at, 'warning', 'Not a Weka request (type "n" or "s"); skipped.');
      return;
    }
    const t = seconds(r['t'], at, note);
    pending.push({
      session: d,
      value: r,
      path: at,
      startS: t === null ? null : relative ? spawnS! + t : t,
      order: pending.length,
    });
  });
}

function seconds(
  value: unknown,
  path: JsonPath,
  note: (path: JsonPath, severity: Diagnostic['severity'], message: string) => void,
): number | null {
  const t = nonNegative(value);
  if (t === null)
    note(
      [...path, 't'],
      'warning',
      `"t" should be seconds ≥ 0 from the conversation start, not ${JSON.stringify(value ?? null)}: start time unknown.`,
    );
  return t;
}

/** Seconds to milliseconds, rounded to the microsecond so 0.1 s reads 100. */
function ms(s: number): number {
  return Math.round(s * 1e6) / 1e3;
}

/** Turns every pending call into an LlmCall, computing ideal-cache hits over the whole trace in time order. */
function buildCalls(
  pending: PendingCall[],
  blockSize: number,
  locate: Locate,
  note: (path: JsonPath, severity: Diagnostic['severity'], message: string) => void,
): void {
  const seen = new Set<number>();
  // Time order over the whole trace (a sub-agent's calls interleave with its parent's); unknown times keep file order, last.
  const ordered = [...pending].sort(
    (a, b) =>
      (a.startS === null || b.startS === null
        ? a.startS === null
          ? b.startS === null
            ? 0
            : 1
          : -1
        : a.startS - b.startS) || a.order - b.order,
  );
  const byPending = new Map<PendingCall, LlmCall>();
  for (const p of ordered) {
    const r = p.value;
    const input = count(r['in']);
    if (input === null)
      note(
        [...p.path, 'in'],
        'warning',
        `"in" should be a whole token count, not ${JSON.stringify(r['in'] ?? null)}: input and cache figures unknown.`,
      );
    const output = count(r['out']);
    if (output === null)
      note(
        [...p.path, 'out'],
        'warning',
        `"out" should be a whole token count, not ${JSON.stringify(r['out'] ?? null)}: output unknown.`,
      );
    const hashes = hashIds(r['hash_ids']);
    if (hashes === null)
      note([...p.path, 'hash_ids'], 'warning', '"hash_ids" should be an array of integers: cache figures unknown.');
    else if (input !== null && hashes.length > Math.floor(input / blockSize)) {
      note(
        [...p.path, 'hash_ids'],
        'warning',
        `${hashes.length} hash_ids for ${input} input tokens: ${blockSize}-token blocks give at most floor(${input}/${blockSize}) = ${Math.floor(input / blockSize)} full blocks. Cached tokens are capped at the input.`,
      );
    }
    let cached: number | null = null;
    if (hashes !== null) {
      let hit = 0;
      while (hit < hashes.length && seen.has(hashes[hit]!)) hit++;
      for (const h of hashes) seen.add(h);
      if (input !== null) cached = Math.min(hit * blockSize, input);
    }
    const apiS = nonNegative(r['api_time']);
    const ttftS = nonNegative(r['ttft']);
    const startMs = p.startS === null ? null : ms(p.startS);
    byPending.set(p, {
      id: '',
      index: 0,
      turn: null,
      model: str(r['model']),
      startMs,
      endMs: startMs !== null && apiS !== null ? startMs + ms(apiS) : null,
      tokens: {
        input,
        cached,
        appended: input !== null && cached !== null ? input - cached : null,
        cacheWrite: null,
        output,
        reasoningOutput: null,
      },
      // The capture's own measures of the provider's API (time to first token, whole request), in the server timing's slots.
      server:
        apiS !== null || ttftS !== null
          ? {
              queueMs: null,
              ttftMs: ttftS === null ? null : ms(ttftS),
              prefillMs: null,
              decodeMs: null,
              e2eMs: apiS === null ? null : ms(apiS),
            }
          : null,
      blocks: hashes === null ? null : { blockSizeTokens: blockSize, hashes },
      toolCalls: [],
      source: locate(p.path),
    });
  }
  // Calls go to their session in file order (the order the agent made them).
  for (const p of pending) {
    const call = byPending.get(p)!;
    const s = p.session.session;
    call.index = s.calls.length;
    call.id = `${s.id}#${call.index + 1}`;
    // New input of text, not a tool result: a prompt (the first call's task, or the user's next message).
    const types = (arr(p.value['input_types']) ?? []).map(str);
    if (types.includes('text') && !types.includes('tool_result')) {
      const turn: UserTurn = { index: s.turns.length, startMs: call.startMs, preview: NO_TEXT, source: call.source };
      s.turns.push(turn);
    }
    call.turn = s.turns.length > 0 ? s.turns.length - 1 : null;
    s.calls.push(call);
  }
}

function finishSession(d: SessionDraft): Session {
  d.session.model = mostUsedModel(d.session.calls);
  return d.session;
}

/** A JSON Lines corpus (one trace per line, as published on Hugging Face) or one trace per file fed as a record. */
export class WekaRecordReader implements RecordReader {
  private readonly sessions: Session[] = [];
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord<number>();
  private traces = 0;

  record({ value, source }: TraceRecord): void {
    if (!isWekaTrace(value)) {
      countSkipped(this.skipped, '(not a Weka trace)');
      this.diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'warning',
        message: 'Not a Weka trace ("requests" with hash_ids and a "block_size"); skipped.',
      });
      return;
    }
    this.sessions.push(...readWekaTrace(value, () => source, this.traces++, this.diagnostics, this.skipped));
  }

  finish(): ReaderResult {
    return { sessions: this.sessions, diagnostics: this.diagnostics, skippedRecords: this.skipped };
  }
}

/** Reads a whole trace file, with a line for every request. */
export function readWekaDocument(doc: JsonDocument): ReaderResult {
  const diagnostics: Diagnostic[] = [];
  const skipped = emptyRecord<number>();
  const sessions = isWekaTrace(doc.value)
    ? readWekaTrace(doc.value, (p) => doc.locate(p), 0, diagnostics, skipped)
    : [];
  return { sessions, diagnostics, skippedRecords: skipped };
}
