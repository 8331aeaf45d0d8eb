/**
 * The context's contributors over many sessions (docs/guide/context.md#over-many-sessions): the
 * same totals by tool, MCP server and file as one trace's report, summed over several traces'
 * anatomies, with how many sessions each appeared in. Kept apart from the one-trace report so
 * the several-sessions view can show it beside its other tables.
 */
import type { TraceAnatomy } from './contextAnatomy';
import type { ContextPart, SessionAnatomy } from './contextParts';
import { BIG_RESULT_MIN_CALLS, BIG_RESULT_TOKENS, TRIMMED_TOKENS, fileReadOf, k, oneLine, usd } from './contextReport';
import type { Suggestion } from './contextReport';
import { median } from './tokenCounter';

/** One tool, MCP server or file over many sessions. */
export interface AcrossSessionsTotal {
  name: string;
  /** Tokens of its parts (calibrated), summed. */
  tokens: number;
  /** Their carried-forward dollars (null when no call that carried them was priced). */
  usd: number | null;
  /** Parts (tool results, reads…) summed. */
  parts: number;
  /** Sessions it appeared in. */
  sessions: number;
}

/** The unlogged base (system prompt, tool definitions with every MCP server's schemas, memory files) over many sessions. */
export interface AcrossSessionsBase {
  /** Median over sessions of the base's tokens (estimated: each session's first logged input minus what it visibly holds). */
  tokensPerCall: number;
  /** Its dollars over every call of every session (null when none was priced). */
  usd: number | null;
  /** Sessions it was estimated in. */
  sessions: number;
}

/** The contributors of many sessions. */
export interface ContextAcrossSessions {
  traces: number;
  /** Sessions summed, sub-agents and compaction runs counted apart. */
  sessions: number;
  /** Of them, main sessions (what the several-sessions view calls its sessions). */
  mainSessions: number;
  calls: number;
  /** Input dollars of every priced call (null when none was priced). */
  inputUsd: number | null;
  byTool: AcrossSessionsTotal[];
  byMcpServer: AcrossSessionsTotal[];
  byFile: AcrossSessionsTotal[];
  base: AcrossSessionsBase | null;
  /** Priced suggestions over these sessions, dearest first, each with how its figure was computed. */
  suggestions: Suggestion[];
}

/** The several-sessions view's context anatomy: the totals and suggestions, and the files it could not count. */
export interface SessionsContext {
  across: ContextAcrossSessions;
  /** Files left out, each with why (too large, unreadable, not a trace): their sessions are not in the totals. */
  skipped: Array<{ file: string; why: string }>;
}

/** The anatomy of only these sessions of a trace (by their ids in it), for a view that shows some of a file's sessions. */
export function keepSessions(anatomy: TraceAnatomy, ids: ReadonlySet<string>): TraceAnatomy {
  return { ...anatomy, sessions: anatomy.sessions.filter((s) => ids.has(s.sessionId)) };
}

/** Sums the contributors by tool, MCP server and file (files: tool results that named one) over these traces' anatomies. */
export function contextAcrossSessions(anatomies: readonly TraceAnatomy[]): ContextAcrossSessions {
  const tools = new Totals();
  const servers = new Totals();
  const files = new Totals();
  let sessions = 0;
  let mainSessions = 0;
  let calls = 0;
  let inputUsd: number | null = null;
  for (const anatomy of anatomies)
    for (const s of anatomy.sessions) {
      sessions += 1;
      if (s.role === 'main') mainSessions += 1;
      calls += s.calls.length;
      for (const c of s.calls) if (c.inputUsd !== null) inputUsd = (inputUsd ?? 0) + c.inputUsd;
      for (const p of s.parts) {
        if (p.tool !== null) tools.add(p.tool, p, sessions);
        if (p.mcpServer !== null) servers.add(p.mcpServer, p, sessions);
        if (p.targetFile !== null && p.kind === 'toolResult') files.add(p.targetFile, p, sessions);
      }
    }
  const all = anatomies.flatMap((a) => a.sessions);
  const base = baseOf(all);
  const byMcpServer = servers.sorted();
  return {
    traces: anatomies.length,
    sessions,
    mainSessions,
    calls,
    inputUsd,
    byTool: tools.sorted(),
    byMcpServer,
    byFile: files.sorted(),
    base,
    suggestions: suggestionsAcross(all, base, byMcpServer, inputUsd, mainSessions),
  };
}

function baseOf(sessions: readonly SessionAnatomy[]): AcrossSessionsBase | null {
  const perSession: number[] = [];
  let dollars: number | null = null;
  for (const s of sessions) {
    let seen = false;
    for (const p of s.parts) {
      if (p.kind !== 'system') continue;
      if (!seen) perSession.push(p.tokens);
      seen = true;
      if (p.usd !== null) dollars = (dollars ?? 0) + p.usd;
    }
  }
  const tokensPerCall = median(perSession);
  return tokensPerCall === null ? null : { tokensPerCall, usd: dollars, sessions: perSession.length };
}

/** "these 9 sessions", or "this session". */
function these(mainSessions: number): string {
  return mainSessions === 1 ? 'this session' : `these ${mainSessions} sessions`;
}

/** " (in 3 of them)", or " (in 3 of their 12 logs with sub-agents)": a sub-agent is a session of its own in the anatomy. */
function inOf(n: number, sessions: number, mainSessions: number): string {
  if (sessions <= 1) return '';
  return sessions === mainSessions ? ` (in ${n} of them)` : ` (in ${n} of their ${sessions} sessions and sub-agents)`;
}

/**
 * Suggestions over many sessions, each from a figure summed over them: the unlogged base every
 * call carries, each MCP server's results, files read again (within a session: the reads after
 * its costliest one), and commands whose large outputs were carried for many calls (what keeping
 * their last 1,000 tokens would have saved, pro rata).
 */
function suggestionsAcross(
  sessions: readonly SessionAnatomy[],
  base: AcrossSessionsBase | null,
  servers: readonly AcrossSessionsTotal[],
  inputUsd: number | null,
  mainSessions: number,
): Suggestion[] {
  const out: Suggestion[] = [];
  const over = these(mainSessions || sessions.length);
  const within = (n: number): string => inOf(n, sessions.length, mainSessions);
  if (base && base.usd !== null && base.usd > 0 && inputUsd !== null && inputUsd > 0)
    out.push({
      text: `System prompt, tool definitions (every MCP server's schemas among them) and memory files: ~${k(base.tokensPerCall)} tokens in every call, ${usd(base.usd)} over ${over} (${Math.round((100 * base.usd) / inputUsd)}% of their input dollars); each MCP server or memory file left out takes its share off every call`,
      usd: base.usd,
      how: `estimated per session (its first call's logged input minus its visible text; median over ${base.sessions} sessions); its dollars are its share of each call's cache reads and writes, summed over the sessions`,
    });
  for (const t of servers) {
    if (t.usd === null || t.usd <= 0) continue;
    out.push({
      text: `MCP server \`${t.name}\`: ${t.parts} result${t.parts === 1 ? '' : 's'}, ${k(t.tokens)} tokens carried forward, ${usd(t.usd)} over ${over}${within(t.sessions)}; its tool schemas are in the base above, which the logs do not split by server`,
      usd: t.usd,
      how: "Σ dollars of the server's tool results over every call that carried them",
    });
  }
  const reads = new Map<string, { parts: number; tokens: number; usd: number; again: number; sessions: number }>();
  const outputs = new Map<
    string,
    { parts: number; tokens: number; usd: number; saved: number; sessions: Set<number> }
  >();
  sessions.forEach((s, si) => {
    const inSession = new Map<string, ContextPart[]>();
    for (const p of s.parts) {
      const file = fileReadOf(p);
      if (file !== null && p.usd !== null) {
        const list = inSession.get(file);
        if (list) list.push(p);
        else inSession.set(file, [p]);
      }
      if (p.kind !== 'toolResult' || p.command === null || p.usd === null || p.tokens < BIG_RESULT_TOKENS) continue;
      if (p.lastCall - p.firstCall + 1 < BIG_RESULT_MIN_CALLS) continue;
      const key = oneLine(p.command);
      let o = outputs.get(key);
      if (!o) outputs.set(key, (o = { parts: 0, tokens: 0, usd: 0, saved: 0, sessions: new Set() }));
      o.parts += 1;
      o.tokens += p.tokens;
      o.usd += p.usd;
      o.saved += (p.usd * (p.tokens - TRIMMED_TOKENS)) / p.tokens;
      o.sessions.add(si);
    }
    for (const [file, list] of inSession) {
      let r = reads.get(file);
      if (!r) reads.set(file, (r = { parts: 0, tokens: 0, usd: 0, again: 0, sessions: 0 }));
      const dollars = list.map((p) => p.usd!);
      const sum = dollars.reduce((a, b) => a + b, 0);
      r.parts += list.length;
      r.tokens += list.reduce((a, p) => a + p.tokens, 0);
      r.usd += sum;
      r.again += sum - Math.max(...dollars);
      r.sessions += 1;
    }
  });
  for (const [file, r] of reads) {
    if (r.parts < 2 || r.again <= 0) continue;
    out.push({
      text: `\`${file}\` read ${r.parts} times over ${over}${within(r.sessions)}: ${k(r.tokens)} tokens, ${usd(r.usd)}; the reads after the costliest one in each session carried ${usd(r.again)}`,
      usd: r.again,
      how: 'Σ over sessions of the dollars of every read of the file but the costliest in that session; saved only where the file had not changed between reads (the logs do not say)',
    });
  }
  for (const [command, o] of outputs) {
    out.push({
      text: `Output of \`${command}\`: ${o.parts} output${o.parts === 1 ? '' : 's'} of ${k(BIG_RESULT_TOKENS)} tokens or more carried for ${BIG_RESULT_MIN_CALLS} calls or more over ${over}${within(o.sessions.size)}: ${k(o.tokens)} tokens, ${usd(o.usd)}; keeping only the last ${k(TRIMMED_TOKENS)} tokens of each (as \`| tail\` would) would have saved ~${usd(o.saved)}`,
      usd: o.saved,
      how: `Σ over those outputs of their dollars × (tokens − ${k(TRIMMED_TOKENS)}) ÷ tokens (same reads and writes, pro rata)`,
    });
  }
  return out.sort((a, b) => b.usd - a.usd).slice(0, 8);
}

/** Totals by name; `session` numbers each session once, so a name met again in the same session is not counted twice. */
class Totals {
  private readonly map = new Map<string, AcrossSessionsTotal & { lastSession: number }>();

  add(name: string, p: ContextPart, session: number): void {
    let t = this.map.get(name);
    if (!t) this.map.set(name, (t = { name, tokens: 0, usd: null, parts: 0, sessions: 0, lastSession: -1 }));
    t.tokens += p.tokens;
    t.parts += 1;
    if (p.usd !== null) t.usd = (t.usd ?? 0) + p.usd;
    if (t.lastSession !== session) {
      t.sessions += 1;
      t.lastSession = session;
    }
  }

  /** Dearest first, then largest. */
  sorted(): AcrossSessionsTotal[] {
    return [...this.map.values()]
      .map(({ lastSession: _, ...t }) => t)
      .sort((a, b) => (b.usd ?? 0) - (a.usd ?? 0) || b.tokens - a.tokens);
  }
}
