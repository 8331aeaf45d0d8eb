import { workloadFromBlockTrace, workloadFromSession } from '../core/sim/workload';
import type { FormatId, TraceModel } from '../core/trace/model';
import type { WhatIfWorkload } from '../protocol/messages';

/**
 * The answer to `whatif/workload`: what the simulator replays for a session, built the
 * way `agent-trace simulate` builds it, so the panel and the CLI replay the same thing.
 * A trace whose calls carry block hashes (Mooncake, Bailian) is a request log: its
 * requests replay together, whichever session is selected. Pure (no vscode), so the
 * webview tests answer the request with this very function.
 */
export function buildWhatIfWorkload(model: TraceModel, sessionId: string, filePath: string, format: FormatId | null): WhatIfWorkload {
  if (model.sessions.some((s) => s.calls.some((c) => c.blocks !== null))) {
    const { workload, notes } = workloadFromBlockTrace(model);
    if (!workload || workload.requests.length === 0) throw new Error('No request in this trace has block hashes, a prompt length and an arrival time: nothing to simulate.');
    return { workload, notes, filePath, sessionId: null, callIndexes: [], format };
  }
  const session = model.sessions.find((s) => s.id === sessionId);
  if (!session) throw new Error(`No session ${sessionId} in this trace.`);
  // workloadFromSession leaves out calls without input or output counts: keep where each kept call sits.
  const callIndexes = session.calls.flatMap((c, i) => (c.tokens.input !== null && c.tokens.output !== null ? [i] : []));
  if (callIndexes.length === 0) throw new Error('This session has no call with input and output token counts: nothing to simulate.');
  const { workload, notes } = workloadFromSession(session);
  return { workload, notes, filePath, sessionId: session.id, callIndexes, format };
}
