import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import type { CompanionLayout } from '../core/trace/formatDefinition';
import { COMPANION_LAYOUTS } from '../core/trace/formats';
import { MAX_JSON_DEPTH, StreamingJsonParser } from '../core/trace/jsonStream';
import type { TraceFile } from '../core/trace/parseTrace';

/** Read buffer per stream: large enough to be fast, small enough to yield often. */
export const CHUNK_BYTES = 256 * 1024;

/** A file that is not a regular file (a FIFO, a folder, a device): reading it would hang or fail. */
export class NotRegularFileError extends Error {}

function kindOf(s: Stats): string {
  if (s.isDirectory()) return 'a folder';
  if (s.isFIFO()) return 'a named pipe (FIFO)';
  if (s.isSocket()) return 'a socket';
  if (s.isCharacterDevice() || s.isBlockDevice()) return 'a device';
  if (s.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/**
 * Streams a file only if it is a regular file, opened lazily (on first read, so a
 * session with 20,000 sub-agent logs never holds 20,000 descriptors) and without
 * blocking: a FIFO is opened non-blocking and refused, where a plain open would wait
 * for a writer forever. `noFollow` refuses a symbolic link in the last component
 * (companion files the listing found to be plain files), closing the race where one is
 * swapped in between listing and reading. `expect` is the file the listing saw: a
 * different one at open time is refused.
 */
export function regularFileChunks(
  path: string,
  options: {
    noFollow?: boolean;
    expect?: Pick<Stats, 'ino' | 'dev'>;
    start?: number;
    /**
     * Read into one buffer, each chunk a view of it that is valid only until the next one is
     * asked for: for a consumer that is done with a chunk when it asks for the next (parseTrace:
     * its line reader copies the part of a line a chunk leaves unfinished). A stream's new
     * buffer per chunk is memory that a chunk which outlives two scavenges keeps until a full
     * collection, and that the thread's allocator keeps after it (docs/performance.md, "Issue
     * 27, tenth session").
     */
    reuseBuffer?: boolean;
    /** Bytes per chunk (default CHUNK_BYTES; tests set it low). */
    chunkBytes?: number;
    /**
     * Reads with blocking calls on this thread, into one reused buffer (as `reuseBuffer`):
     * for a worker thread with nothing else to do meanwhile (the export's threads). Each of
     * the stream's reads and opens is a hop through libuv's pool and back, and on a machine
     * whose cores the parse threads already fill, the wait for that pool's thread to be
     * scheduled cost each export thread about a second and a half of a 45-second export
     * (docs/performance.md, "Issue 30, thirteenth session").
     */
    blocking?: boolean;
  } = {},
): AsyncIterable<Uint8Array> {
  if (options.blocking) return blockingChunks(path, options);
  return {
    async *[Symbol.asyncIterator]() {
      let handle;
      try {
        handle = await open(path, openFlags(options.noFollow));
      } catch (e) {
        throw openError(path, e);
      }
      try {
        const s = await handle.stat();
        refuseUnlessExpected(path, s, options.expect);
        const chunkBytes = chunkSize(options.chunkBytes, s.size);
        if (options.reuseBuffer) {
          // A Buffer, as a stream's chunks are: the line reader's indexOf is then Buffer's own (memchr), not the typed array's.
          const buffer = Buffer.allocUnsafeSlow(chunkBytes);
          for (let position = options.start ?? 0; ; ) {
            const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
            if (bytesRead === 0) break;
            position += bytesRead;
            yield buffer.subarray(0, bytesRead);
          }
          return;
        }
        // The stream owns the handle from here and closes it at the end (or on an error).
        const stream = handle.createReadStream({ highWaterMark: chunkBytes, start: options.start ?? 0 });
        handle = null;
        for await (const chunk of stream) yield chunk as Uint8Array;
      } finally {
        await handle?.close();
      }
    },
  };
}

// O_NONBLOCK and O_NOFOLLOW do not exist on Windows (which has no FIFOs in the file system).
function openFlags(noFollow: boolean | undefined): number {
  return constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (noFollow ? (constants.O_NOFOLLOW ?? 0) : 0);
}

function openError(path: string, e: unknown): Error {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'ELOOP' || err.code === 'EMLINK')
    return new NotRegularFileError(`${basename(path)} became a symbolic link after it was listed; not read.`);
  return err;
}

/** Throws unless the opened file is a regular file, and the one the listing saw when it says which. */
function refuseUnlessExpected(path: string, s: Stats, expect: Pick<Stats, 'ino' | 'dev'> | undefined): void {
  if (!s.isFile()) throw new NotRegularFileError(`${basename(path)} is ${kindOf(s)}, not a regular file; not read.`);
  if (expect && (s.ino !== expect.ino || s.dev !== expect.dev))
    throw new NotRegularFileError(`${basename(path)} changed between listing and reading; not read.`);
}

/** A small file gets a small buffer: 20,000 one-line sub-agent logs must not allocate 20,000 × 256 KiB. */
function chunkSize(asked: number | undefined, fileBytes: number): number {
  return Math.max(1024, Math.min(asked ?? CHUNK_BYTES, fileBytes + 1));
}

/** regularFileChunks with `blocking`: the same checks, each call made on this thread. */
function blockingChunks(
  path: string,
  options: { noFollow?: boolean; expect?: Pick<Stats, 'ino' | 'dev'>; start?: number; chunkBytes?: number },
): AsyncIterable<Uint8Array> {
  return {
    async *[Symbol.asyncIterator]() {
      let fd: number;
      try {
        fd = openSync(path, openFlags(options.noFollow));
      } catch (e) {
        throw openError(path, e);
      }
      try {
        const s = fstatSync(fd);
        refuseUnlessExpected(path, s, options.expect);
        const chunkBytes = chunkSize(options.chunkBytes, s.size);
        const buffer = Buffer.allocUnsafeSlow(chunkBytes);
        for (let position = options.start ?? 0; ; ) {
          const bytesRead = readSync(fd, buffer, 0, buffer.length, position);
          if (bytesRead === 0) break;
          position += bytesRead;
          yield buffer.subarray(0, bytesRead);
        }
      } finally {
        closeSync(fd);
      }
    },
  };
}

/** A companion file that may be read: its path relative to the trace's folder, and what the listing saw. */
export interface SafeCompanion {
  rel: string;
  /** The file to open: the entry itself, or the target of a link that stays inside the folder. */
  path: string;
  noFollow: boolean;
  expect: Stats | undefined;
}

/** What a companion listing found: the files to read, and why others were left out (said to the user). */
export interface CompanionListing {
  files: SafeCompanion[];
  refused: string[];
  /** Real folders (never links) inside the listed folder, relative to the root: where a walk may go on. */
  folders: string[];
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * The files in `folder` (relative to `root`, the trace's own folder) that `accept`s
 * name and that are safe to read as part of the trace: regular files directly in that
 * folder, and symbolic links only when they resolve to a regular file inside `root`.
 * Folders, FIFOs, sockets, devices and links out of `root` are refused with a reason;
 * so is a folder that itself resolves outside `root`. Sorted by name, so runs repeat.
 *
 * One function for every kind of companion (Claude Code's `<session>/subagents/` and
 * sibling `agent-<id>.jsonl` logs alike), so the rules live in one place.
 */
export async function listSafeCompanions(
  root: string,
  folder: string,
  accept: (name: string) => boolean,
): Promise<CompanionListing> {
  const refused: string[] = [];
  let rootReal: string;
  let folderReal: string;
  let entries: Dirent[];
  try {
    rootReal = await realpath(root);
    const folderPath = join(root, folder);
    folderReal = await realpath(folderPath);
    if (folder !== '' && folder !== '.' && !inside(rootReal, folderReal)) {
      return {
        files: [],
        refused: [`${folder} leads outside the trace's folder; its files are not read.`],
        folders: [],
      };
    }
    entries = await readdir(folderPath, { withFileTypes: true });
  } catch {
    return { files: [], refused: [], folders: [] }; // no such folder: a session without sub-agents
  }
  const files: SafeCompanion[] = [];
  const folders: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const rel = folder === '' || folder === '.' ? entry.name : `${folder}/${entry.name}`;
    // A folder not named like a log is a place to look further (a link to one is not followed).
    if (entry.isDirectory() && !accept(entry.name)) {
      folders.push(rel);
      continue;
    }
    if (!accept(entry.name)) continue;
    const path = join(root, folder, entry.name);
    if (entry.isFile()) {
      files.push({ rel, path, noFollow: true, expect: undefined });
      continue;
    }
    if (entry.isSymbolicLink()) {
      try {
        const target = await realpath(path);
        const s = await stat(target);
        if (!inside(rootReal, target)) refused.push(`${rel} is a link to a file outside the trace's folder; not read.`);
        else if (!s.isFile()) refused.push(`${rel} is a link to ${kindOf(s)}; not read.`);
        else files.push({ rel, path: target, noFollow: true, expect: s });
      } catch {
        refused.push(`${rel} is a broken link; not read.`);
      }
      continue;
    }
    try {
      refused.push(`${rel} is ${kindOf(await lstat(path))}, not a file; not read.`);
    } catch {
      refused.push(`${rel} could not be read; not read.`);
    }
  }
  return { files, refused, folders };
}

/**
 * The companion files of a trace file that are safe to read, by every format's companion
 * layout (its definition's `companions`: Claude Code's sub-agent logs, for one), listed
 * before the file's format is known. Per layout: the files in its folder and up to
 * `folderDepth` real folders below it, sorted by path, then those beside the file whose
 * first bytes name it as their owner. None for a file no layout names.
 * Each folder is listed by listSafeCompanions, so the same rules hold everywhere.
 * `layouts` is the registry's unless a test gives others.
 */
export async function listCompanions(
  path: string,
  layouts: readonly CompanionLayout[] = COMPANION_LAYOUTS,
): Promise<CompanionListing> {
  const listing: CompanionListing = { files: [], refused: [], folders: [] };
  for (const layout of layouts) {
    const found = await listLayoutCompanions(path, layout);
    listing.files.push(...found.files);
    listing.refused.push(...found.refused);
  }
  return listing;
}

async function listLayoutCompanions(path: string, layout: CompanionLayout): Promise<CompanionListing> {
  const name = basename(path);
  const folder = layout.folderOf(name);
  const ownerId = layout.beside ? layout.beside.idOf(name) : '';
  const none: CompanionListing = { files: [], refused: [], folders: [] };
  if (folder === null || ownerId === null) return none;
  const root = dirname(path);
  const nested: CompanionListing = { files: [], refused: [], folders: [] };
  const walk = async (rel: string, depth: number): Promise<void> => {
    const here = await listSafeCompanions(root, rel, layout.isCompanionName);
    nested.files.push(...here.files);
    nested.refused.push(...here.refused);
    if (depth < layout.folderDepth) for (const sub of here.folders) await walk(sub, depth + 1);
  };
  await walk(folder, 0);
  nested.files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  if (!layout.beside) return { files: nested.files, refused: nested.refused, folders: [] };
  const { headBytes, ownerIn } = layout.beside;
  const beside = await listSafeCompanions(root, '.', layout.isCompanionName);
  const siblings: SafeCompanion[] = [];
  for (const c of beside.files) if ((await headOwner(c, headBytes, ownerIn)) === ownerId) siblings.push(c);
  // A sibling log that cannot be read (a folder, a FIFO, a link out) may be this file's: it is said too.
  return { files: [...nested.files, ...siblings], refused: [...nested.refused, ...beside.refused], folders: [] };
}

/** The owner named by the first `headBytes` bytes of a companion beside the file, or null when unreadable; opened like any companion, without blocking. */
async function headOwner(
  c: SafeCompanion,
  headBytes: number,
  ownerIn: (head: string) => string | null,
): Promise<string | null> {
  let handle;
  try {
    handle = await open(
      c.path,
      constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (c.noFollow ? (constants.O_NOFOLLOW ?? 0) : 0),
    );
    if (!(await handle.stat()).isFile()) return null;
    const buffer = Buffer.alloc(headBytes);
    const { bytesRead } = await handle.read(buffer, 0, headBytes, 0);
    return ownerIn(buffer.subarray(0, bytesRead).toString('utf8'));
  } catch {
    return null;
  } finally {
    await handle?.close();
  }
}

/** The companions of a trace as TraceFiles, each streamed lazily from a checked regular file. */
export function companionFiles(listing: CompanionListing, blocking = false): TraceFile[] {
  return listing.files.map((c) => ({
    key: c.rel,
    bytes: regularFileChunks(c.path, { noFollow: c.noFollow, blocking, ...(c.expect ? { expect: c.expect } : {}) }),
  }));
}

/**
 * The files of a trace on local disk: the file itself, streamed (refused if it is not a
 * regular file), then its companions that are safe to read (listCompanions: Claude Code
 * sub-agent logs, for one), sorted by name so runs are repeatable. Companion files are only
 * read if the main file turns out to be of a format with companions (parseTrace decides);
 * the ones refused are said on the main file. `reuseBuffer`: the main file's chunks are views
 * of one buffer (regularFileChunks), for parseTrace on this thread.
 */
export async function readTraceFiles(
  path: string,
  options: { reuseBuffer?: boolean; blocking?: boolean } = {},
): Promise<TraceFile[]> {
  const listing = await listCompanions(path);
  return [
    {
      key: basename(path),
      bytes: regularFileChunks(path, { reuseBuffer: options.reuseBuffer, blocking: options.blocking }),
      notes: listing.refused,
    },
    ...companionFiles(listing, options.blocking),
  ];
}

/**
 * A whole JSON file (a workload, a price list, a what-if export), streamed through the
 * incremental parser: a regular file only, of any size (no 512 M-character string is
 * ever built), its nesting bounded. Returns the value, or why it could not be read with
 * the line (1-based). `what` names the kind of file in messages ("a price list").
 */
export async function readJsonFile(path: string, what = 'a workload'): Promise<{ value: unknown } | { error: string }> {
  const parser = new StreamingJsonParser(MAX_JSON_DEPTH);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 0;
  let offset = 0;
  parser.startLine(0, 0);
  const feed = (text: string): void => {
    // Line numbers for messages: the parser is told where each line starts.
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      parser.write(text.slice(from, nl + 1));
      offset += nl + 1 - from;
      from = nl + 1;
      parser.startLine(++line, offset);
    }
    if (from < text.length) {
      parser.write(text.slice(from));
      offset += text.length - from;
    }
  };
  try {
    for await (const chunk of regularFileChunks(path)) {
      feed(decoder.decode(chunk, { stream: true }));
      if (parser.failed) break;
    }
    feed(decoder.decode());
  } catch (e) {
    if (e instanceof TypeError) return { error: `not UTF-8 text near line ${line + 1}` };
    throw e;
  }
  const result = parser.end();
  if (result.error) return { error: `not valid JSON at line ${result.error.at.line + 1}: ${result.error.message}` };
  if (result.prunedCount > 0)
    return {
      error: `nests deeper than ${MAX_JSON_DEPTH} levels at line ${result.pruned[0]!.line + 1}; ${what} never does`,
    };
  if (result.value === undefined) return { error: 'empty: no JSON value in it' };
  return { value: result.value };
}

/** Why an output path was refused: it exists and is not a regular file (a folder, a FIFO, a device). */
export class NotWritableTargetError extends Error {}

/**
 * Refuses an output path that exists and is not a regular file, before any work is done:
 * writing to a FIFO waits for a reader forever, to a folder fails with a raw EISDIR, to a
 * device does something else than writing a file. A missing path is fine (it is created).
 */
export async function checkOutputTarget(path: string): Promise<void> {
  let s: Stats;
  try {
    s = await stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (!s.isFile())
    throw new NotWritableTargetError(`${path} is ${kindOf(s)}, not a regular file: nothing is written there`);
}

/**
 * Writes `text` to a regular file, created if missing, refusing what checkOutputTarget
 * refuses. The file is opened without blocking (a FIFO swapped in after the check fails
 * at once instead of waiting for a reader) and checked again once open, before anything
 * is written or truncated.
 */
export async function writeRegularFile(path: string, text: string): Promise<void> {
  await checkOutputTarget(path);
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_WRONLY | constants.O_CREAT | (constants.O_NONBLOCK ?? 0), 0o666);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EISDIR')
      throw new NotWritableTargetError(`${path} is a folder, not a regular file: nothing is written there`);
    if (code === 'ENXIO')
      throw new NotWritableTargetError(`${path} is a named pipe (FIFO), not a regular file: nothing is written there`);
    throw e;
  }
  try {
    const s = await handle.stat();
    if (!s.isFile())
      throw new NotWritableTargetError(`${path} is ${kindOf(s)}, not a regular file: nothing is written there`);
    await handle.truncate(0);
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}
