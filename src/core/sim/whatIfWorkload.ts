import { workloadFromBlockTrace, workloadFromSession } from './workload';
import type { Workload } from './workload';
import type { FormatId, Session, TraceModel } from '../trace/model';

/** What the what-if simulator replays for a session, built by the host from the parsed trace. */
export interface WhatIfWorkload {
  workload: Workload;
  /** What was left out or assumed while building it, for the user to read. */
  notes: string[];
  /** Absolute path of the trace file, for "Copy as CLI". */
  filePath: string;
  /** The session replayed (the CLI's --session); null for a block-hash trace, whose requests replay together. */
  sessionId: string | null;
  /** For an agent session: the index in the session's calls of each workload call (calls without token counts are left out). */
  callIndexes: number[];
  /** The format the user chose for the file (the CLI's --format); null when it was detected. */
  format: FormatId | null;
}

/**
 * The answer to `whatIfWorkload`: what the simulator replays for a session, built the
 * way `agent-trace simulate` builds it, so the panel and the CLI replay the same thing.
 * A trace whose calls carry block hashes (Mooncake, Bailian) is a request log: its
 * requests replay together, whichever session is selected. Pure (no vscode), so the
 * webview tests answer the request with this very function. `findSession` lets a
 * caller with an index of the sessions skip the scan.
 */
export function buildWhatIfWorkload(
  model: TraceModel,
  sessionId: string,
  filePath: string,
  format: FormatId | null,
  findSession?: (id: string) => Session | undefined,
): WhatIfWorkload {
  if (model.sessions.some((s) => s.calls.some((c) => c.blocks !== null))) {
    const { workload, notes } = workloadFromBlockTrace(model);
    if (!workload || workload.requests.length === 0)
      throw new Error(
        'No request in this trace has block hashes, a prompt length and an arrival time: nothing to simulate.',
      );
    return { workload, notes, filePath, sessionId: null, callIndexes: [], format };
  }
  const session = findSession ? findSession(sessionId) : model.sessions.find((s) => s.id === sessionId);
  if (!session) throw new Error(`No session ${sessionId} in this trace.`);
  // workloadFromSession leaves out calls without input or output counts: keep where each kept call sits.
  const callIndexes = session.calls.flatMap((c, i) => (c.tokens.input !== null && c.tokens.output !== null ? [i] : []));
  if (callIndexes.length === 0)
    throw new Error('This session has no call with input and output token counts: nothing to simulate.');
  const { workload, notes } = workloadFromSession(session);
  return { workload, notes, filePath, sessionId: session.id, callIndexes, format };
}
