import type { LlmCall, Session, TraceModel } from '../trace/model';
import { BlockIds, planRequests, ReplayError, requestFields, tokenKeyAt } from './replayExport';
import type { PlannedRequest, ReplayRequest } from './replayExport';

/**
 * Agent sessions written as kv-cache-tester ("Weka") agentic traces (docs/replay.md,
 * "Weka"), the JSON that kv-cache-tester's `trace_replay_tester.py`, AIPerf's Weka loader
 * (AgentX, InferenceX) and BLIS replay. One document per top-level session:
 * `{id, models, block_size: 64, hash_id_scope: "local", tool_tokens, system_tokens, requests,
 * totals}`; its sub-agents are `type: "subagent"` markers at the time their first call
 * started, holding their own requests. Field names and types are those of AIPerf's strict
 * models (`weka_trace_models.py`: unknown fields are refused), so nothing else is written.
 *
 * The content model and the block ids are the Mooncake export's (replayExport.ts): the same
 * token keys, cut into 64-token blocks. A Weka trace names full blocks only
 * (`len(hash_ids) == floor(in / 64)` on every published trace; the partial last block is
 * private to its request), so partial blocks get no id. Ids count from 1, as in the
 * published traces; one namespace per file (`hash_id_scope: "local"`), each traced session
 * with its own key space, so equal ids mean equal tokens only where the trace shares them.
 *
 * Times: `t` is seconds from the document's first call; a sub-agent's requests are in the
 * same root-trace seconds (what current captures write and AIPerf reads; kv-cache-tester
 * replays only their differences). `think_time` is the tool wait before a call (0 for a
 * session's first), `api_time` the call's recorded duration when the trace has both ends.
 */

/** Tokens per hash block in Weka traces. */
export const WEKA_BLOCK_TOKENS = 64;

/** One API call of an exported trace, in AIPerf's `WekaNormalRequest` fields. */
export interface WekaRequestOut {
  t: number;
  type: 'n';
  model: string;
  in: number;
  out: number;
  hash_ids: number[];
  input_types: string[];
  output_types: string[];
  stop: string;
  api_time?: number;
  think_time: number;
}

/** A sub-agent marker, in AIPerf's `WekaSubagentEntry` fields. */
export interface WekaSubagentOut {
  t: number;
  type: 'subagent';
  agent_id: string;
  subagent_type: string;
  duration_ms: number | null;
  total_tokens: number;
  tool_use_count: number;
  status: 'completed';
  requests: WekaRequestOut[];
  models: string[];
  tool_tokens: number;
  system_tokens: number;
}

/** One exported trace document, in AIPerf's `WekaTrace` fields. */
export interface WekaTraceOut {
  id: string;
  models: string[];
  block_size: number;
  hash_id_scope: 'local';
  tool_tokens: number;
  system_tokens: number;
  requests: Array<WekaRequestOut | WekaSubagentOut>;
  totals: {
    parent_tokens: { input: number; output: number };
    subagent_tokens: { input: number; output: number };
    combined_tokens: { input: number; output: number };
    subagent_count: number;
  };
}

/** What a Weka export writes: one document per top-level session, and how each request maps back to the trace. */
export interface WekaExport {
  traces: WekaTraceOut[];
  /** Every exported request (every call with input and output counts), with its block ids. */
  requests: ReplayRequest[];
  /** Traced sessions exported. */
  sessions: string[];
  notes: string[];
}

/** Seconds to 3 decimals: what the files need, without float noise. */
function seconds3(ms: number): number {
  return Math.round(ms) / 1000;
}

function fullBlockIds(request: PlannedRequest, ids: BlockIds): number[] {
  const out: number[] = [];
  const hint = { run: 0 };
  const blocks = Math.floor(request.promptTokens / WEKA_BLOCK_TOKENS);
  for (let j = 0; j < blocks; j++)
    out.push(ids.id(request.space, tokenKeyAt(request.keys, (j + 1) * WEKA_BLOCK_TOKENS - 1, hint), true));
  return out;
}

/**
 * Builds the Weka documents of the chosen sessions (all with token counts when `sessions` is
 * null) and their sub-agents. Pure: the CLI writes and redacts them.
 */
export function buildWekaExport(model: TraceModel, sessions: string[] | null): WekaExport {
  const notes: string[] = [];
  const { planned, sessions: exported } = planRequests(model, { replicas: 1, staggerS: 0, sessions }, notes);
  const byId = new Map(model.sessions.map((s) => [s.id, s]));
  const exportedSet = new Set(exported);
  const bySession = new Map<string, PlannedRequest[]>();
  for (const p of planned) {
    const list = bySession.get(p.traceSessionId) ?? [];
    list.push(p);
    bySession.set(p.traceSessionId, list);
  }
  // Each exported session's top: its nearest ancestor chain's highest exported member.
  const rootOf = (s: Session): { root: string; depth: number } => {
    let at = s;
    let depth = 0;
    for (let guard = 0; at.parentId !== null && exportedSet.has(at.parentId) && guard < 64; guard++) {
      at = byId.get(at.parentId)!;
      depth++;
    }
    return { root: at.id, depth };
  };
  const roots: string[] = [];
  const members = new Map<string, string[]>();
  let nested = 0;
  for (const id of exported) {
    const { root, depth } = rootOf(byId.get(id)!);
    if (depth > 1) nested++;
    if (root === id) roots.push(id);
    else {
      const list = members.get(root) ?? [];
      list.push(id);
      members.set(root, list);
    }
  }
  if (nested > 0)
    notes.push(
      `${nested} sub-agents of sub-agents: a Weka trace nests one level, so they are written as sub-agents of their top-level session, at their own start times.`,
    );

  const traces: WekaTraceOut[] = [];
  const requests: ReplayRequest[] = [];
  for (const rootId of roots) {
    const ids = new BlockIds(1);
    const rootPlanned = bySession.get(rootId) ?? [];
    const origin = Math.min(
      ...[rootId, ...(members.get(rootId) ?? [])].flatMap((id) => (bySession.get(id) ?? []).map((p) => p.arrivalMs)),
    );
    const write = (id: string): WekaRequestOut[] => {
      const session = byId.get(id)!;
      const list = bySession.get(id) ?? [];
      const callByIndex = new Map(session.calls.map((c) => [c.index, c]));
      return list.map((p, k) => {
        const call = callByIndex.get(p.callIndex)!;
        const previous = k > 0 ? callByIndex.get(list[k - 1]!.callIndex)! : null;
        const hashIds = fullBlockIds(p, ids);
        requests.push({ ...requestFields(p), hashIds });
        return requestOut(p, call, previous, session, hashIds, origin);
      });
    };
    const own = write(rootId);
    const markers: WekaSubagentOut[] = (members.get(rootId) ?? []).map((id) =>
      subagentOut(byId.get(id)!, write(id), byId),
    );
    // Sub-agent markers go at their first call's time; a marker comes after a parent call starting at the same second.
    const merged: Array<WekaRequestOut | WekaSubagentOut> = [...own];
    for (const m of markers.sort((a, b) => a.t - b.t)) {
      let at = merged.length;
      while (at > 0 && merged[at - 1]!.t > m.t) at--;
      merged.splice(at, 0, m);
    }
    const sum = (list: WekaRequestOut[]): { input: number; output: number } => ({
      input: list.reduce((n, r) => n + r.in, 0),
      output: list.reduce((n, r) => n + r.out, 0),
    });
    const parent = sum(own);
    const children = sum(markers.flatMap((m) => m.requests));
    const models = [...new Set([...own, ...markers.flatMap((m) => m.requests)].map((r) => r.model))];
    traces.push({
      id: rootId,
      models,
      block_size: WEKA_BLOCK_TOKENS,
      hash_id_scope: 'local',
      // The trace does not split its first prompt into tools and system prompt; 0 means "not declared" to AIPerf.
      tool_tokens: 0,
      system_tokens: 0,
      requests: merged,
      totals: {
        parent_tokens: parent,
        subagent_tokens: children,
        combined_tokens: { input: parent.input + children.input, output: parent.output + children.output },
        subagent_count: markers.length,
      },
    });
    if (rootPlanned.length === 0) notes.push(`${rootId}: no call with token counts, only its sub-agents.`);
  }
  return { traces, requests, sessions: exported, notes };
}

function requestOut(
  p: PlannedRequest,
  call: LlmCall,
  previous: LlmCall | null,
  session: Session,
  hashIds: number[],
  originMs: number,
): WekaRequestOut {
  // New input: the user's text when a turn starts here (or the session's first call), else the previous call's tool results.
  const newTurn = previous === null || (call.turn !== null && call.turn !== previous.turn);
  const asked = call.toolCalls.length > 0;
  const out: WekaRequestOut = {
    t: seconds3(p.arrivalMs - originMs),
    type: 'n',
    model: call.model ?? session.model ?? 'unknown',
    in: p.promptTokens,
    out: p.outputTokens,
    hash_ids: hashIds,
    input_types: newTurn || previous.toolCalls.length === 0 ? ['text'] : ['tool_result'],
    output_types: asked ? ['tool_use'] : ['text'],
    stop: asked ? 'tool_use' : 'end_turn',
    think_time: seconds3(p.waitMs),
  };
  if (call.startMs !== null && call.endMs !== null && call.endMs >= call.startMs)
    out.api_time = seconds3(call.endMs - call.startMs);
  return out;
}

/** What kind of sub-agent: its title, else the tool that started it (Task, Agent…), else its role. */
function subagentKind(session: Session, byId: ReadonlyMap<string, Session>): string {
  if (session.title) return session.title;
  if (session.role === 'compaction') return 'compaction';
  const parent = session.parentId !== null ? byId.get(session.parentId) : undefined;
  const tool = parent?.calls.flatMap((c) => c.toolCalls).find((t) => t.id === session.parentToolCallId);
  return tool?.name ?? 'subagent';
}

function subagentOut(
  session: Session,
  requests: WekaRequestOut[],
  byId: ReadonlyMap<string, Session>,
): WekaSubagentOut {
  const first = requests[0]?.t ?? 0;
  const last = requests.at(-1);
  const end = last ? last.t + (last.api_time ?? 0) : first;
  return {
    t: first,
    type: 'subagent',
    agent_id: session.id,
    subagent_type: subagentKind(session, byId),
    duration_ms: requests.length > 0 ? Math.round((end - first) * 1000) : null,
    total_tokens: requests.reduce((n, r) => n + r.in + r.out, 0),
    tool_use_count: session.calls.reduce((n, c) => n + c.toolCalls.length, 0),
    status: 'completed',
    requests,
    models: [...new Set(requests.map((r) => r.model))],
    tool_tokens: 0,
    system_tokens: 0,
  };
}

/** A document's JSON as written: compact, one line, as the published traces are. */
export function wekaJson(trace: WekaTraceOut): string {
  return `${JSON.stringify(trace)}\n`;
}

export { ReplayError };
