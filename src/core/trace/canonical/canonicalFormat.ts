import type { FormatId, LlmCall, Session, TraceModel } from '../model';

/** Version this code reads and writes (docs/trace-format.md). */
export const CANONICAL_VERSION = 1;

/** Record types of the canonical format, in the order a writer emits them per session. */
export const CANONICAL_RECORD_TYPES = [
  'header',
  'session',
  'turn',
  'compaction',
  'event',
  'llm_call',
  'tool_call',
] as const;

/** Where a canonical file came from, written into its header. */
export interface CanonicalSourceInfo {
  format: FormatId | null;
  files: string[];
}

/**
 * Serialises a model as canonical JSON Lines: a header, then per session its
 * `session` record followed by turns, compactions, calls and tool calls in the order
 * that gives them their membership (see CanonicalReader). Reading the result gives
 * back the same model, apart from source positions.
 */
export function writeCanonical(model: TraceModel, generator: string): string {
  const lines: string[] = [];
  const source: CanonicalSourceInfo = { format: model.format, files: model.files };
  lines.push(JSON.stringify({ type: 'header', format: 'agent-trace', version: CANONICAL_VERSION, generator, source }));
  for (const session of model.sessions) writeSession(session, lines);
  return lines.join('\n') + '\n';
}

function writeSession(session: Session, lines: string[]): void {
  const record: Record<string, unknown> = {
    type: 'session',
    id: session.id,
    parentId: session.parentId,
    parentToolCallId: session.parentToolCallId,
    role: session.role,
    agent: session.agent,
    model: session.model,
    cwd: session.cwd,
    title: session.title,
  };
  // Written only when the source reports totals, so files of other formats stay byte-identical.
  if (session.reportedTotals !== undefined) record['reportedTotals'] = session.reportedTotals;
  if (session.otherInputs !== undefined) record['otherInputs'] = session.otherInputs;
  lines.push(JSON.stringify(record));
  let nextEvent = 0;
  const events = session.events ?? [];
  const emitEventsBefore = (callIndex: number): void => {
    while (nextEvent < events.length && events[nextEvent]!.beforeCall <= callIndex) {
      const e = events[nextEvent++]!;
      lines.push(JSON.stringify({ type: 'event', session: session.id, kind: e.kind, timeMs: e.timeMs, text: e.text }));
    }
  };
  let nextTurn = 0;
  let nextCompaction = 0;
  const emitCompactionsBefore = (callIndex: number): void => {
    while (
      nextCompaction < session.compactions.length &&
      session.compactions[nextCompaction]!.beforeCall <= callIndex
    ) {
      const c = session.compactions[nextCompaction++]!;
      lines.push(
        JSON.stringify({
          type: 'compaction',
          session: session.id,
          trigger: c.trigger,
          preTokens: c.preTokens,
          timeMs: c.timeMs,
          ...(c.rewind ? { rewind: true } : {}),
        }),
      );
    }
  };
  const emitTurnsUpTo = (turn: number | null): void => {
    while (turn !== null && nextTurn <= turn && nextTurn < session.turns.length) {
      const t = session.turns[nextTurn++]!;
      lines.push(JSON.stringify({ type: 'turn', session: session.id, startMs: t.startMs, preview: t.preview }));
    }
  };
  for (const call of session.calls) {
    emitTurnsUpTo(call.turn);
    emitCompactionsBefore(call.index);
    emitEventsBefore(call.index);
    lines.push(JSON.stringify(callRecord(session.id, call)));
    for (const tool of call.toolCalls) {
      lines.push(
        JSON.stringify({
          type: 'tool_call',
          session: session.id,
          call: call.id,
          id: tool.id,
          name: tool.name,
          targetFile: tool.targetFile,
          command: tool.command,
          startMs: tool.startMs,
          endMs: tool.endMs,
          durationMs: tool.durationMs,
          isError: tool.isError,
          errorText: tool.errorText,
          exitCode: tool.exitCode,
          resultChars: tool.resultChars,
          // Written only for a denied call, so other files stay byte-identical.
          ...(tool.deniedByUser ? { deniedByUser: true } : {}),
        }),
      );
    }
  }
  emitTurnsUpTo(session.turns.length - 1);
  emitCompactionsBefore(Number.POSITIVE_INFINITY);
  emitEventsBefore(Number.POSITIVE_INFINITY);
}

function callRecord(sessionId: string, call: LlmCall): Record<string, unknown> {
  const record: Record<string, unknown> = {
    type: 'llm_call',
    session: sessionId,
    id: call.id,
    model: call.model,
    startMs: call.startMs,
    endMs: call.endMs,
    tokens: call.tokens,
  };
  // Pricing context, written only when the source gave it, so other formats' files stay byte-identical.
  if (call.serviceTier != null) record['serviceTier'] = call.serviceTier;
  if (call.inferenceGeo != null) record['inferenceGeo'] = call.inferenceGeo;
  if (call.server) record['server'] = call.server;
  if (call.blocks) record['blocks'] = call.blocks;
  return record;
}
