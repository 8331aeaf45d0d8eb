import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseTrace } from '../../src/core/trace/parseTrace';
import type { ParseOptions, ParsedTrace, TraceFile } from '../../src/core/trace/parseTrace';
import { readTraceFiles } from '../../src/node/traceFiles';

export const repoRoot = resolve(__dirname, '../..');
export const fixtures = join(repoRoot, 'test/fixtures');

export const SPOTTER = join(fixtures, 'claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl');
export const EDIT_LOOP = join(fixtures, 'claude-code/edit-retry-loop.jsonl');
export const REJECTIONS = join(fixtures, 'claude-code/user-rejections.jsonl');

/** Parses a file on disk the way the CLI does (streamed, with sub-agent companions). */
export async function parseFile(path: string, options: ParseOptions = {}): Promise<ParsedTrace> {
  return parseTrace(await readTraceFiles(path), options);
}

/** Parses text given inline, as one file named `name`. */
export function parseText(text: string, name = 'inline.jsonl', options: ParseOptions = {}): Promise<ParsedTrace> {
  return parseTrace([{ key: name, bytes: new TextEncoder().encode(text) }], options);
}

/** The bytes of a file, fed in chunks of `size` to exercise chunk boundaries. */
export function chunked(path: string, size: number): TraceFile {
  const bytes = readFileSync(path);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return { key: path, bytes: chunks };
}

/**
 * A file of the team's shared sample traces (../shared/traces), for formats whose licence
 * does not let the project copy them; null when that folder is not beside the repo.
 */
export function sharedTrace(relative: string): string | null {
  for (const base of [process.env['AGENT_TRACE_SHARED_TRACES'], join(repoRoot, '../shared/traces'), '/work/shared/traces']) {
    if (base && existsSync(join(base, relative))) return join(base, relative);
  }
  return null;
}
