import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { contextAcrossSessions, keepSessions } from '../../core/context/contextAcrossSessions';
import type { SessionsContext } from '../../core/context/contextAcrossSessions';
import { contextAnatomy } from '../../core/context/contextAnatomy';
import type { TraceAnatomy } from '../../core/context/contextAnatomy';
import type { PriceBook } from '../../core/cost/costTypes';
import { parseWithContext } from '../contextCollect';
import { readTraceFiles } from '../traceFiles';

/** Rows a list of the several-sessions view keeps (tool, MCP server, file): the page shows these, dearest first. */
export const ACROSS_ROWS_SENT = 15;

/** One session file of the view and the sessions of it the view shows (their ids in the trace, sub-agents included). */
export interface SessionsOfFile {
  path: string;
  sessionKeys: string[];
}

/**
 * Counts the context anatomy of each file (read again with the collector beside the reader, as
 * `agent-trace context` reads it), keeps the sessions the view shows, and sums them by tool, MCP
 * server and file (contextAcrossSessions). One file at a time, so one anatomy is held at once
 * besides the totals' inputs; a file over `maxBytes` or one that cannot be read is left out
 * and named. Each list is cut to its ACROSS_ROWS_SENT dearest rows (the totals stay whole).
 */
export async function contextOfSessions(
  files: readonly SessionsOfFile[],
  prices: PriceBook,
  maxBytes: number,
): Promise<SessionsContext> {
  const anatomies: TraceAnatomy[] = [];
  const skipped: SessionsContext['skipped'] = [];
  for (const f of files) {
    try {
      const size = (await stat(f.path)).size;
      if (size > maxBytes) {
        skipped.push({ file: basename(f.path), why: `${Math.round(size / 2 ** 20)} MiB, over the size limit` });
        continue;
      }
      const { parsed, context } = await parseWithContext(await readTraceFiles(f.path), null);
      if (parsed.problem) {
        skipped.push({ file: basename(f.path), why: parsed.problem.message });
        continue;
      }
      const anatomy = contextAnatomy(parsed.model, {
        content: context.content,
        tokenizer: context.tokenizer,
        prices,
        notes: context.notes,
      });
      anatomies.push(keepSessions(anatomy, new Set(f.sessionKeys)));
    } catch (e) {
      skipped.push({ file: basename(f.path), why: e instanceof Error ? e.message : String(e) });
    }
  }
  const across = contextAcrossSessions(anatomies);
  return {
    across: {
      ...across,
      byTool: across.byTool.slice(0, ACROSS_ROWS_SENT),
      byMcpServer: across.byMcpServer.slice(0, ACROSS_ROWS_SENT),
      byFile: across.byFile.slice(0, ACROSS_ROWS_SENT),
    },
    skipped,
  };
}
