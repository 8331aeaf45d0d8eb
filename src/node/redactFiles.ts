import { createReadStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { companionFolderOf } from '../core/trace/formats';
import type { Redactor } from '../core/redact/redactor';
import { listCompanions } from './traceFiles';

/** Lines per redactor call, and characters: big enough to batch the rules' set-up, small enough to stream. */
const BATCH_LINES = 2000;
const BATCH_CHARS = 4 << 20;

/**
 * Redacts a JSON or JSON Lines file into another, line by line and streamed. Line by
 * line works for a pretty-printed JSON document too: a JSON string cannot hold a raw
 * line break, so every string literal sits on one line. Line ends (`\n` or `\r\n`) and a
 * missing final newline are kept, so the copy differs only inside redacted strings.
 */
export async function redactJsonFile(inPath: string, outPath: string, redactor: Redactor): Promise<{ lines: number }> {
  await mkdir(dirname(outPath), { recursive: true });
  const out = await open(outPath, 'w');
  let lines = 0;
  try {
    let pending = '';
    let batch: string[] = [];
    let chars = 0;
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const redacted = await redactor.redactJsonTexts(batch);
      await out.write(redacted.join('\n') + '\n');
      lines += batch.length;
      batch = [];
      chars = 0;
    };
    const stream = createReadStream(inPath, { encoding: 'utf8', highWaterMark: 256 * 1024 });
    for await (const chunk of stream as AsyncIterable<string>) {
      pending += chunk;
      let at = pending.indexOf('\n');
      let from = 0;
      while (at !== -1) {
        const line = pending.slice(from, at);
        batch.push(line);
        chars += line.length;
        from = at + 1;
        if (batch.length >= BATCH_LINES || chars >= BATCH_CHARS) await flush();
        at = pending.indexOf('\n', from);
      }
      pending = pending.slice(from);
    }
    await flush();
    if (pending.length > 0) {
      const [last] = await redactor.redactJsonTexts([pending]);
      await out.write(last!);
      lines += 1;
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
  await redactJsonFile(inPath, outPath, redactor);
  // Only the companions the reader would read (regular files inside the trace's folder).
  const companions = (await listCompanions(inPath)).files;
  const outFolder = companionFolderOf(basename(outPath));
  if (companions.length > 0 && outFolder === null) throw new Error(`${basename(outPath)}: the trace has sub-agent logs, so the copy must be a .jsonl file (they go to <name>/subagents/ beside it)`);
  for (const c of companions) {
    const target = join(dirname(outPath), outFolder!, basename(c.rel));
    await redactJsonFile(c.path, target, redactor);
    written.push(target);
  }
  return written;
}
