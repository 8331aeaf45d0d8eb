import type { TraceAnatomy } from '../context/contextAnatomy';
import type { TeamIdentity, TeamRows } from './teamRows';
import { TeamColumns } from './teamColumns';
import { CONTEXT_PARTS_TABLE } from './teamSchema';
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
): TeamColumns {
  // The day of each call, from the calls rows already built (same sessions, same order).
  const callDay = new Map<string, string | null>();
  const calls = rows.calls;
  const callIndex = calls.column('call_index');
  for (let i = 0; i < calls.length; i++) callDay.set(`${calls.session[i]}:${String(callIndex[i])}`, calls.date[i]!);
  const out = new TeamColumns(CONTEXT_PARTS_TABLE);
  anatomy.sessions.forEach((s, si) => {
    const row = rows.sessions.session.indexOf(si);
    if (row < 0) return;
    const agent = rows.sessions.agent[row]!;
    const sessionDate = rows.sessions.date[row]!;
    for (const p of s.parts) {
      out.append(agent, callDay.get(`${si}:${p.firstCall}`) ?? sessionDate, si, {
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
      });
    }
  });
  return out;
}
