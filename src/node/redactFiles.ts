import { createReadStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { companionFolderOf } from '../core/trace/formats';
import type { Redactor } from '../core/redact/redactor';
import { listCompanions } from './traceFiles';

/** Lines per redactor call, and characters: big enough to batch the rules' set-up, small enough to stream. */
const BATCH_LINES = 2000;
const BATCH_CHARS = 4 << 20;

/** The lines of a file in batches (at most BATCH_LINES lines or about BATCH_CHARS characters), streamed; the last line without its newline comes alone, flagged. */
async function* lineBatches(path: string): AsyncGenerator<{ lines: string[]; unterminated: boolean }> {
  let pending = '';
  let batch: string[] = [];
  let chars = 0;
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  for await (const chunk of stream as AsyncIterable<string>) {
    pending += chunk;
    let at = pending.indexOf('\n');
    let from = 0;
    while (at !== -1) {
      const line = pending.slice(from, at);
      batch.push(line);
      chars += line.length;
      from = at + 1;
      if (batch.length >= BATCH_LINES || chars >= BATCH_CHARS) {
        yield { lines: batch, unterminated: false };
        batch = [];
        chars = 0;
      }
      at = pending.indexOf('\n', from);
    }
    pending = pending.slice(from);
  }
  if (batch.length > 0) yield { lines: batch, unterminated: false };
  if (pending.length > 0) yield { lines: [pending], unterminated: true };
}

/**
 * The first pass of a streamed redaction: the ids the trace's files declare (their
 * names, and the values of their id fields), read batch by batch so that memory holds one
 * batch and the id set (bounded: idContext.ts). Strict mode leaves no id, so it skips this.
 */
export async function learnTraceIds(paths: readonly string[], redactor: Redactor): Promise<void> {
  if (redactor.mode === 'strict') return;
  for (const path of paths) {
    redactor.learnFileName(basename(path));
    for await (const { lines } of lineBatches(path)) redactor.learnIds(lines);
  }
}

/**
 * Redacts a JSON or JSON Lines file into another, line by line and streamed. Line by
 * line works for a pretty-printed JSON document too: a JSON string cannot hold a raw
 * line break, so every string literal sits on one line. Line ends (`\n` or `\r\n`) and a
 * missing final newline are kept, so the copy differs only inside redacted strings.
 * `idsLearned`: the caller ran learnTraceIds over the whole trace, so batches need not learn again.
 */
export async function redactJsonFile(
  inPath: string,
  outPath: string,
  redactor: Redactor,
  idsLearned = false,
): Promise<{ lines: number }> {
  await mkdir(dirname(outPath), { recursive: true });
  const out = await open(outPath, 'w');
  let lines = 0;
  try {
    for await (const batch of lineBatches(inPath)) {
      const redacted = await redactor.redactJsonTexts(batch.lines, { idsLearned });
      await out.write(redacted.join('\n') + (batch.unterminated ? '' : '\n'));
      lines += batch.lines.length;
    }
  } finally {
    await out.close();
  }
  return { lines };
}

/**
 * Redacts a trace with its companion files: the file itself to `outPath`, and Claude
 * Code sub-agent logs (`<session>/subagents/agent-*.jsonl`) to the companion folder of
 * `outPath`, where the reader looks for them. Returns the files written, in order.
 */
export async function redactTraceFiles(inPath: string, outPath: string, redactor: Redactor): Promise<string[]> {
  const written = [outPath];
  // Only the companions the reader would read (regular files inside the trace's folder).
  const companions = (await listCompanions(inPath)).files;
  // The trace and its sub-agents are one conversation: an id one declares is an id in the others.
  await learnTraceIds([inPath, ...companions.map((c) => c.path)], redactor);
  await redactJsonFile(inPath, outPath, redactor, true);
  const outFolder = companionFolderOf(basename(outPath));
  if (companions.length > 0 && outFolder === null)
    throw new Error(
      `${basename(outPath)}: the trace has sub-agent logs, so the copy must be a .jsonl file (they go to <name>/subagents/ beside it)`,
    );
  for (const c of companions) {
    const target = join(dirname(outPath), outFolder!, basename(c.rel));
    await redactJsonFile(c.path, target, redactor, true);
    written.push(target);
  }
  return written;
}
