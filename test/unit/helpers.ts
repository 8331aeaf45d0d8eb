import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FormatDefinition } from '../../src/core/trace/formatDefinition';
import { isObject } from '../../src/core/trace/json';
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

/** Builds the bundles (`node esbuild.mjs`) when `file`, a built file such as dist/cli.js, is missing. */
export function ensureBuilt(file: string): void {
  if (!existsSync(file)) execFileSync(process.execPath, ['esbuild.mjs'], { cwd: repoRoot, stdio: 'inherit' });
}

/** Every .jsonl, .json and .traj file under `dir`, at any depth. */
export function traceFilesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return traceFilesUnder(p);
    return /\.(jsonl|json|traj)$/.test(name) ? [p] : [];
  });
}

/**
 * Asserts that `format` claims none of `files` (other formats' samples): a file that parses
 * as one JSON document does not match its matchesDocument, and no line that parses as a
 * JSON object matches its matchesRecord.
 */
export function assertClaimsNone(format: FormatDefinition, files: readonly string[]): void {
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    try {
      assert.equal(format.matchesDocument!(JSON.parse(text)), false, f);
    } catch (e) {
      if (e instanceof assert.AssertionError) throw e;
    }
    for (const line of text.split('\n')) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      if (isObject(value)) assert.equal(format.matchesRecord!(value), false, `${f}: ${line.slice(0, 80)}`);
    }
  }
}
