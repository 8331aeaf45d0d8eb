// Rebuilds samples/claude-code-sessions.trace.jsonl from the real sessions in
// test/fixtures (see samples/README.md for what is kept and why). Run:
//   npx tsx scripts/makeSample.ts
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeCanonical } from '../src/core/trace/canonical/canonicalFormat';
import type { Session, TraceModel } from '../src/core/trace/model';
import { parseTrace } from '../src/core/trace/parseTrace';
import { readTraceFiles } from '../src/node/traceFiles';

const root = join(__dirname, '..');
const SPOTTER = join(root, 'test/fixtures/claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl');
const EDIT_LOOP = join(root, 'test/fixtures/claude-code/edit-retry-loop.jsonl');
/** The spotter window: from its 102nd call to the end, which keeps the pre-commit retries and the /compact. */
const FIRST_CALL = 101;

/** Calls [from, end) of a session, with turns and compactions renumbered to match. */
function window(session: Session, from: number): Session {
  const calls = session.calls.slice(from).map((c, i) => ({ ...c, index: i }));
  const firstTurn = calls[0]?.turn ?? 0;
  return {
    ...session,
    calls: calls.map((c) => ({ ...c, turn: c.turn === null ? null : c.turn - firstTurn })),
    turns: session.turns.slice(firstTurn).map((t, i) => ({ ...t, index: i })),
    compactions: session.compactions
      .filter((c) => c.beforeCall >= from)
      .map((c) => ({ ...c, beforeCall: c.beforeCall - from })),
  };
}

async function main(): Promise<void> {
  const spotter = (await parseTrace(await readTraceFiles(SPOTTER))).model;
  const edits = (await parseTrace(await readTraceFiles(EDIT_LOOP))).model;
  const main = spotter.sessions.find((s) => s.role === 'main')!;
  // The compaction agent ran inside the window; the Task sub-agent ran before it.
  const compactor = spotter.sessions.find((s) => s.role === 'compaction')!;
  const model: TraceModel = {
    format: 'claude-code',
    files: ['ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', 'edit-retry-loop.jsonl'],
    sessions: [window(main, FIRST_CALL), compactor, ...edits.sessions],
    diagnostics: [],
    skippedRecords: {},
    limitations: [],
  };
  const out = join(root, 'samples/claude-code-sessions.trace.jsonl');
  writeFileSync(out, writeCanonical(model, 'agent-trace 0.1.0 (scripts/makeSample.ts)'));
  console.log(`${out}: ${model.sessions.map((s) => `${s.id} ${s.calls.length} calls`).join(', ')}`);
}

void main();
