/**
 * The context's contributors over many sessions (docs/guide/context.md#over-many-sessions): the
 * same totals by tool, MCP server and file as one trace's report, summed over several traces'
 * anatomies, with how many sessions each appeared in. Kept apart from the one-trace report so
 * the several-sessions view can show it beside its other tables.
 */
import type { TraceAnatomy } from './contextAnatomy';
import type { ContextPart } from './contextParts';

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

/** The contributors of many sessions. */
export interface ContextAcrossSessions {
  traces: number;
  sessions: number;
  calls: number;
  /** Input dollars of every priced call (null when none was priced). */
  inputUsd: number | null;
  byTool: AcrossSessionsTotal[];
  byMcpServer: AcrossSessionsTotal[];
  byFile: AcrossSessionsTotal[];
}

/** Sums the contributors by tool, MCP server and file (files: tool results that named one) over these traces' anatomies. */
export function contextAcrossSessions(anatomies: readonly TraceAnatomy[]): ContextAcrossSessions {
  const tools = new Totals();
  const servers = new Totals();
  const files = new Totals();
  let sessions = 0;
  let calls = 0;
  let inputUsd: number | null = null;
  for (const anatomy of anatomies)
    for (const s of anatomy.sessions) {
      sessions += 1;
      calls += s.calls.length;
      for (const c of s.calls) if (c.inputUsd !== null) inputUsd = (inputUsd ?? 0) + c.inputUsd;
      for (const p of s.parts) {
        if (p.tool !== null) tools.add(p.tool, p, sessions);
        if (p.mcpServer !== null) servers.add(p.mcpServer, p, sessions);
        if (p.targetFile !== null && p.kind === 'toolResult') files.add(p.targetFile, p, sessions);
      }
    }
  return {
    traces: anatomies.length,
    sessions,
    calls,
    inputUsd,
    byTool: tools.sorted(),
    byMcpServer: servers.sorted(),
    byFile: files.sorted(),
  };
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
