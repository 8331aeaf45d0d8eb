import { OTLP_OWN_PREFIX, otlpAttributeName } from './teamSchema';
import type { TeamCell, TeamColumn } from './teamSchema';
import type { TeamRows } from './teamRows';
import type { TeamColumns } from './teamColumns';

/**
 * The team rows (teamRows.ts, already redacted) as OpenTelemetry GenAI spans in OTLP/JSON
 * (docs/reference/otlp.md): per session an `invoke_agent` span, under it a `chat` span per
 * LLM call, under each call an `execute_tool` span per tool call; a sub-agent's
 * `invoke_agent` hangs under the tool call that started it, in its parent's trace. The
 * attributes are the rows' cells under the names of the one schema table
 * (`otlpAttributeName`), so the Parquet columns and the span attributes never drift apart.
 * Ids are hashes of the source, session and call ids: the same trace exports the same bytes.
 */

/** An OTLP `AnyValue` as OTLP/JSON writes it (int64 as a decimal string). */
export interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpAnyValue[] };
}

/** One attribute. */
export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

/** A span in OTLP/JSON: hex ids, nanosecond times as decimal strings, enums as numbers. */
export interface OtlpJsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 3 client. */
  kind: number;
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
  attributes: OtlpKeyValue[];
  /** Only on failed tool calls: code 2 is ERROR. */
  status?: { code: 2; message?: string };
}

/** One trace's spans with the resource (the agent, the user, the machine) that produced them. */
export interface OtlpResourceSpans {
  resource: { attributes: OtlpKeyValue[] };
  scopeSpans: Array<{ scope: { name: string; version: string }; spans: OtlpJsonSpan[] }>;
}

/** An `ExportTraceServiceRequest` (OTLP/HTTP's body for `/v1/traces`). */
export interface OtlpTraceRequest {
  resourceSpans: OtlpResourceSpans[];
}

/** How the spans are made. */
export interface OtlpSpanOptions {
  /** `digits` hex digits of a stable hash of `text` (SHA-256 in the CLI): the ids. */
  hexHash(text: string, digits: 16 | 32): string;
  /** Unique per source trace (a hash of its path): two sources' sessions never share a trace id. */
  sourceKey: string;
  /** Who and where, on every resource: `user.hash` or `user.name`, the machine. */
  identity: OtlpKeyValue[];
  /** The instrumentation scope: this program and its version. */
  scope: { name: string; version: string };
}

const KIND_INTERNAL = 1;
const KIND_CLIENT = 3;

/** Columns that become the span's times, status or resource rather than attributes. */
const NOT_ATTRIBUTES = new Set([
  'start_time',
  'end_time',
  'duration_ms',
  'user.hash',
  'user.name',
  'source_format',
  'error_text',
]);

/** A string attribute. */
export function stringAttr(key: string, value: string): OtlpKeyValue {
  return { key, value: { stringValue: value } };
}

function cellValue(column: TeamColumn, cell: TeamCell): OtlpAnyValue | null {
  if (cell === null) return null;
  switch (column.type) {
    case 'STRING':
      return { stringValue: String(cell) };
    case 'INT32':
    case 'INT64':
      return typeof cell === 'number' && Number.isFinite(cell) ? { intValue: String(Math.round(cell)) } : null;
    case 'DOUBLE':
      return typeof cell === 'number' && Number.isFinite(cell) ? { doubleValue: cell } : null;
    case 'BOOLEAN':
      return { boolValue: cell === true };
    case 'TIMESTAMP':
      return null;
  }
}

/**
 * A session's own totals go under `agent_trace.session.*`, not `gen_ai.usage.*`: a backend
 * that sums usage over every span (Langfuse, Phoenix) would otherwise count each token twice,
 * once on the call and once on its session.
 */
function sessionAttributeName(column: TeamColumn): string {
  return column.name.startsWith('gen_ai.usage.')
    ? `${OTLP_OWN_PREFIX}session.${column.name.slice('gen_ai.usage.'.length)}`
    : otlpAttributeName(column);
}

function rowAttributes(
  rows: TeamColumns,
  row: number,
  name: (c: TeamColumn) => string = otlpAttributeName,
): OtlpKeyValue[] {
  const out: OtlpKeyValue[] = [];
  rows.table.columns.forEach((column, j) => {
    if (NOT_ATTRIBUTES.has(column.name)) return;
    const value = cellValue(column, rows.cells[j]![row] ?? null);
    if (value !== null) out.push({ key: name(column), value });
  });
  return out;
}

/** Epoch milliseconds as OTLP's nanosecond decimal string (exact for whole ms, the fraction rounded to the ns); undefined when unknown. */
export function msToNanos(ms: TeamCell): string | undefined {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) return undefined;
  const whole = Math.floor(ms);
  return (BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6))).toString();
}

function text(cell: TeamCell | undefined): string | null {
  return typeof cell === 'string' && cell !== '' ? cell : null;
}

function times(rows: TeamColumns, row: number): Pick<OtlpJsonSpan, 'startTimeUnixNano' | 'endTimeUnixNano'> {
  const start = msToNanos(rows.cell(row, 'start_time'));
  const end = msToNanos(rows.cell(row, 'end_time'));
  return { ...(start ? { startTimeUnixNano: start } : {}), ...(end ? { endTimeUnixNano: end } : {}) };
}

/** Builds one resource's spans per root session (a main session with its sub-agents is one trace). */
export function teamRowsToOtlp(rows: TeamRows, options: OtlpSpanOptions): OtlpResourceSpans[] {
  const { sessions, calls, tool_calls: toolCalls } = rows;
  // Rows by position: each session's call rows, each call's tool call rows (appended in place:
  // a copy per row made a session's list quadratic in its calls).
  const callsOf = new Map<number, number[]>();
  for (let c = 0; c < calls.length; c++) {
    const list = callsOf.get(calls.session[c]!);
    if (list) list.push(c);
    else callsOf.set(calls.session[c]!, [c]);
  }
  const toolsOf = new Map<string, number[]>();
  const toolCallIndex = toolCalls.column('call_index');
  for (let t = 0; t < toolCalls.length; t++) {
    const key = `${toolCalls.session[t]}\u0000${String(toolCallIndex[t])}`;
    const list = toolsOf.get(key);
    if (list) list.push(t);
    else toolsOf.set(key, [t]);
  }
  // A sub-agent's parent: the session of this trace whose conversation id it names.
  const byConversation = new Map<string, number>();
  for (let i = 0; i < sessions.length; i++) {
    const id = text(sessions.cell(i, 'gen_ai.conversation.id'));
    if (id !== null && !byConversation.has(id)) byConversation.set(id, i);
  }
  const parentOf = (i: number): number | null => {
    const p = text(sessions.cell(i, 'parent_conversation_id'));
    const j = p === null ? undefined : byConversation.get(p);
    return j === undefined || j === i ? null : j;
  };
  const rootOf = (i: number): number => {
    let r = i;
    for (let depth = 0, p = parentOf(r); p !== null && depth < sessions.length; depth++, p = parentOf(r)) r = p;
    return r;
  };
  const traceIdOf = (root: number) =>
    options.hexHash(
      `${options.sourceKey}\u0000${root}\u0000${String(sessions.cell(root, 'gen_ai.conversation.id'))}`,
      32,
    );
  const agentSpanId = (traceId: string, i: number) => options.hexHash(`${traceId}\u0000invoke_agent\u0000${i}`, 16);
  const callSpanId = (traceId: string, i: number, call: number) =>
    options.hexHash(`${traceId}\u0000chat\u0000${i}\u0000${call}`, 16);
  const toolSpanId = (traceId: string, i: number, call: number, n: number) =>
    options.hexHash(`${traceId}\u0000execute_tool\u0000${i}\u0000${call}\u0000${n}`, 16);
  /** The span id of each session's tool calls by their id, for the sub-agents they started. */
  const toolSpanById = new Map<number, Map<string, string>>();

  const traces = new Map<number, OtlpJsonSpan[]>();
  // Parents before children: a session's parent comes first in a trace, whatever the row order.
  const order = Array.from({ length: sessions.length }, (_, i) => i).sort((a, b) => depthOf(a) - depthOf(b) || a - b);
  function depthOf(i: number): number {
    let d = 0;
    for (let p = parentOf(i); p !== null && d < sessions.length; p = parentOf(p)) d++;
    return d;
  }
  for (const i of order) {
    const root = rootOf(i);
    const traceId = traceIdOf(root);
    const spans = traces.get(root) ?? [];
    traces.set(root, spans);
    const agentId = agentSpanId(traceId, i);
    const parent = root === i ? null : parentOf(i)!;
    const parentTool =
      parent === null ? undefined : toolSpanById.get(parent)?.get(text(sessions.cell(i, 'parent_tool_call_id')) ?? '');
    const agentName = text(sessions.cell(i, 'gen_ai.agent.name'));
    spans.push({
      traceId,
      spanId: agentId,
      ...(parent === null ? {} : { parentSpanId: parentTool ?? agentSpanId(traceId, parent) }),
      name: agentName ? `invoke_agent ${agentName}` : 'invoke_agent',
      kind: KIND_INTERNAL,
      ...times(sessions, i),
      attributes: [
        stringAttr('gen_ai.operation.name', 'invoke_agent'),
        ...rowAttributes(sessions, i, sessionAttributeName),
      ],
    });
    const tools = new Map<string, string>();
    toolSpanById.set(i, tools);
    for (const c of callsOf.get(i) ?? []) {
      const callIndex = Number(calls.cell(c, 'call_index'));
      const callId = callSpanId(traceId, i, callIndex);
      const model = text(calls.cell(c, 'gen_ai.request.model'));
      spans.push({
        traceId,
        spanId: callId,
        parentSpanId: agentId,
        name: model ? `chat ${model}` : 'chat',
        kind: KIND_CLIENT,
        ...times(calls, c),
        attributes: [...rowAttributes(calls, c), ...(model ? [stringAttr('gen_ai.response.model', model)] : [])],
      });
      (toolsOf.get(`${i}\u0000${callIndex}`) ?? []).forEach((t, n) => {
        const toolId = toolSpanId(traceId, i, callIndex, n);
        const callIdText = text(toolCalls.cell(t, 'gen_ai.tool.call.id'));
        if (callIdText !== null && !tools.has(callIdText)) tools.set(callIdText, toolId);
        const name = text(toolCalls.cell(t, 'gen_ai.tool.name'));
        const failed = toolCalls.cell(t, 'is_error') === true;
        const errorText = text(toolCalls.cell(t, 'error_text'));
        spans.push({
          traceId,
          spanId: toolId,
          parentSpanId: callId,
          name: name ? `execute_tool ${name}` : 'execute_tool',
          kind: KIND_INTERNAL,
          ...times(toolCalls, t),
          attributes: [
            stringAttr('gen_ai.operation.name', 'execute_tool'),
            ...rowAttributes(toolCalls, t),
            // The conventions' error.type: a class of error; ours are the agent's tool failures.
            ...(failed
              ? [
                  stringAttr(
                    'error.type',
                    toolCalls.cell(t, 'denied_by_user') === true ? 'denied_by_user' : 'tool_error',
                  ),
                ]
              : []),
          ],
          ...(failed ? { status: errorText ? { code: 2 as const, message: errorText } : { code: 2 as const } } : {}),
        });
      });
    }
  }
  const out: OtlpResourceSpans[] = [];
  for (const [root, spans] of [...traces].sort((a, b) => a[0] - b[0])) {
    const agent = text(sessions.cell(root, 'gen_ai.agent.name'));
    const version = text(sessions.cell(root, 'gen_ai.agent.version'));
    const format = text(sessions.cell(root, 'source_format'));
    out.push({
      resource: {
        attributes: [
          // The agent whose run the spans describe is the service (Langfuse and Phoenix group by it).
          stringAttr('service.name', agent ?? 'unknown agent'),
          ...(version ? [stringAttr('service.version', version)] : []),
          ...options.identity,
          ...(format ? [stringAttr(`${OTLP_OWN_PREFIX}source_format`, format)] : []),
        ],
      },
      scopeSpans: [{ scope: options.scope, spans }],
    });
  }
  return out;
}

/**
 * Splits resources into requests of at most `maxBytes` of JSON each (a receiver refuses a body
 * over its limit): whole resources while they fit, a resource larger than the limit split into
 * several with the same resource and scope. A single span larger than the limit goes alone.
 */
export function batchRequests(resources: readonly OtlpResourceSpans[], maxBytes: number): OtlpTraceRequest[] {
  const out: OtlpTraceRequest[] = [];
  let current: OtlpResourceSpans[] = [];
  let size = 0;
  const overhead = '{"resourceSpans":[]}'.length;
  const flush = (): void => {
    if (current.length > 0) out.push({ resourceSpans: current });
    current = [];
    size = 0;
  };
  for (const r of resources) {
    const whole = utf8Length(JSON.stringify(r)) + 1;
    if (overhead + size + whole <= maxBytes) {
      current.push(r);
      size += whole;
      continue;
    }
    flush();
    if (overhead + whole <= maxBytes) {
      current.push(r);
      size = whole;
      continue;
    }
    // One resource over the limit: its spans in pieces.
    const scope = r.scopeSpans[0]!.scope;
    const empty = utf8Length(JSON.stringify({ resource: r.resource, scopeSpans: [{ scope, spans: [] }] })) + 1;
    let spans: OtlpJsonSpan[] = [];
    let spanBytes = 0;
    const piece = (): void => {
      if (spans.length > 0) out.push({ resourceSpans: [{ resource: r.resource, scopeSpans: [{ scope, spans }] }] });
      spans = [];
      spanBytes = 0;
    };
    for (const s of r.scopeSpans.flatMap((x) => x.spans)) {
      const b = utf8Length(JSON.stringify(s)) + 1;
      if (spans.length > 0 && overhead + empty + spanBytes + b > maxBytes) piece();
      spans.push(s);
      spanBytes += b;
    }
    piece();
  }
  flush();
  return out;
}

/** Bytes of a string in UTF-8, without an encoder (core has no TextEncoder type). */
function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
