import type { TraceAnatomy } from '../context/contextAnatomy';
import type { TeamIdentity, TeamRow, TeamRows } from './teamRows';
import type { FormatId } from '../trace/model';

/**
 * The context anatomy of a trace (src/core/context, read through its public types) as rows
 * of the `context_parts` table: one per part per session, in the partition of the session
 * it belongs to and the UTC day of the first call that carried it. The anatomy's own
 * figures, unrounded, so sums over the rows equal `agent-trace context --json`'s totals.
 */
export function contextPartRows(
  anatomy: TraceAnatomy,
  rows: Pick<TeamRows, 'calls' | 'sessions'>,
  identity: TeamIdentity,
  format: FormatId | null,
): TeamRow[] {
  // The day of each call, from the calls rows already built (same sessions, same order).
  const callDay = new Map<string, string | null>();
  for (const c of rows.calls) callDay.set(`${c.session}:${String(c.cells['call_index'])}`, c.date);
  const out: TeamRow[] = [];
  anatomy.sessions.forEach((s, si) => {
    const session = rows.sessions.find((r) => r.session === si);
    if (!session) return;
    for (const p of s.parts) {
      out.push({
        agent: session.agent,
        date: callDay.get(`${si}:${p.firstCall}`) ?? session.date,
        session: si,
        cells: {
          'gen_ai.conversation.id': s.sessionId,
          session_role: s.role,
          'gen_ai.request.model': s.model,
          part_index: p.id,
          kind: p.kind,
          'gen_ai.tool.name': p.tool,
          mcp_server: p.mcpServer,
          target_file: p.targetFile,
          command: p.command,
          tokens: p.tokens,
          estimated: p.estimated,
          first_call_index: p.firstCall,
          last_call_index: p.lastCall,
          calls_carried: p.lastCall - p.firstCall + 1,
          cost_usd: p.usd,
          cost_cache_read_usd: p.cacheReadUsd,
          cost_write_usd: p.writeUsd,
          writes: p.writes,
          tokenizer: s.calibration.tokenizer,
          calibration_factor: s.calibration.factor,
          source_format: format,
          'user.hash': identity.userHash,
          'user.name': identity.userName,
        },
      });
    }
  });
  return out;
}
