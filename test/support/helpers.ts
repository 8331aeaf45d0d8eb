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
 * Where a folder kept beside the repository would be (`relative` to the checkout's parent
 * folder): beside this checkout, and for a git worktree beside its main checkout too. Never
 * an absolute path of one machine's layout.
 */
export function besideCheckout(relative: string): string[] {
  const candidates = [join(repoRoot, '..', relative)];
  // A linked worktree's .git is a file "gitdir: <main>/.git/worktrees/<name>".
  const dotGit = join(repoRoot, '.git');
  if (existsSync(dotGit) && statSync(dotGit).isFile()) {
    const gitdir = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
    if (gitdir) candidates.push(join(resolve(repoRoot, gitdir), '../../../..', relative));
  }
  return candidates;
}

/**
 * The team's shared sample traces: $AGENT_TRACE_SHARED_TRACES when set (any missing folder,
 * e.g. `none`, runs the tests as a clone without them would), else `shared/traces` beside
 * the checkout (for a git worktree, beside its main checkout too). Null when absent: the
 * tests that need them skip, saying so.
 */
export const sharedTracesDir: string | null = (() => {
  const fromEnv = process.env['AGENT_TRACE_SHARED_TRACES'];
  if (fromEnv !== undefined) return existsSync(fromEnv) ? fromEnv : null;
  return besideCheckout('shared/traces').find((dir) => existsSync(dir)) ?? null;
})();

/** A test's `skip` option when it reads shared traces: why it cannot run (and how to let it), or false. */
export function needsShared(...paths: Array<string | null>): string | false {
  return paths.some((p) => p === null)
    ? 'shared traces not present (AGENT_TRACE_SHARED_TRACES, or shared/traces beside the checkout)'
    : false;
}

/** A file of the shared sample traces (for formats whose licence does not let the project copy them); null when absent. */
export function sharedTrace(relative: string): string | null {
  if (sharedTracesDir === null || !existsSync(join(sharedTracesDir, relative))) return null;
  return join(sharedTracesDir, relative);
}

/**
 * A real sample whose licence does not let the project copy it (OpenCode exports, Cline
 * tasks found in public repositories without a licence): read from the folder named by
 * $AGENT_TRACE_LOCAL_SAMPLES, never from the repository. Null when that folder or the file
 * is absent; tests then skip and say so. test/fixtures/README.md lists where each one comes from.
 */
export function localSample(relative: string): string | null {
  const base = process.env['AGENT_TRACE_LOCAL_SAMPLES'];
  return base && existsSync(join(base, relative)) ? join(base, relative) : null;
}

/** The skip reason for a test on a local-only sample. */
export const LOCAL_ONLY =
  'local-only sample absent: set AGENT_TRACE_LOCAL_SAMPLES to a folder holding it (see test/fixtures/README.md)';

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
