import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { AnalysisOptions } from '../../core/analysis/sessionAnalysis';
import type { PriceBook } from '../../core/cost/costTypes';
import { indexRecords } from '../../core/sessions/sessionRecord';
import { TraceParse } from '../../core/trace/parseTrace';
import type { ParsedTrace, SavedTraceParse } from '../../core/trace/parseTrace';
import { assembleSession } from '../agentSessions';
import { agentById, agentLabel, discoverSessions } from './agentRegistry';
import type { AgentRoot, FoundSession } from './agentRegistry';
import { storedSessions } from './sessionIndex';
import type { CompanionState, FileUpdate, SessionIndex, StoredFile, StoredSession } from './sessionIndex';
import { withBusyRetry } from './sqlite';
import type { FileOutcome, SyncProgress, SyncResult } from '../../protocol/indexWorkerProtocol';

/**
 * Keeps the session index in step with the session files on disk. A file is read only
 * when its size or modification time changed; an append is read from where the last
 * read stopped (the parse goes on from its saved or live state); a file that shrank or
 * whose first bytes changed (truncated, rotated, rewritten) is read again from the
 * start, and the outcome says so. Writes go in short batches, so a cancelled cold
 * index keeps what it read and the next one continues.
 */

export interface IndexerOptions {
  analysis: Partial<AnalysisOptions>;
  /** Prices every call (the user's prices included); null leaves costs unknown. */
  prices: PriceBook | null;
  /** Session files larger than this are listed with a problem, not read (`agentTrace.maxFileSizeMB`). */
  maxFileBytes: number;
  /** Files changed within this long keep their saved parse in the index, so an append after a restart resumes it. */
  keepStateWithinMs: number;
  /** Saved parses of another build are not resumed (their classes may differ). */
  stateVersion: string;
  /** Files whose parse stays in memory, ready for the next append (the live ones). */
  maxLiveParses: number;
  /**
   * What the stored figures depend on besides the files (the analysis settings, the user's
   * prices): when it differs from the one the index was written with, every file's figures
   * are computed again (from its saved parse when there is one), so no figure of the old
   * settings is shown as current.
   */
  basis: string;
  now: () => number;
}

/**
 * When a file (or one of its sub-agent logs) that grew since the last read was written:
 * the latest modification time among those that grew, not the moment this read noticed
 * (a view hidden for ten minutes would otherwise call a session finished eight minutes
 * ago "live"). Clipped to now for a clock ahead of ours; null or the earlier value when
 * nothing grew.
 */
export function grewAt(
  f: { sizeBytes: number; mtimeMs: number },
  companions: readonly CompanionState[],
  prior: { size: number; companions: readonly CompanionState[]; lastGrowthMs: number | null },
  nowMs: number,
): number | null {
  let at: number | null = null;
  if (f.sizeBytes > prior.size) at = f.mtimeMs;
  for (const c of companions) {
    if (c.size > (prior.companions.find((p) => p.key === c.key)?.size ?? 0)) at = Math.max(at ?? -Infinity, c.mtimeMs);
  }
  return at === null ? prior.lastGrowthMs : Math.min(at, nowMs);
}

/** The meta key of the settings the stored figures were computed with (IndexerOptions.basis). */
const BASIS_KEY = 'figures-basis';
const NO_SAVED_PARSE = 'no saved parse to resume';

export const DEFAULT_INDEXER_OPTIONS: IndexerOptions = {
  analysis: {},
  prices: null,
  maxFileBytes: 2048 * 2 ** 20,
  keepStateWithinMs: 3 * 86_400_000,
  stateVersion: 'dev',
  maxLiveParses: 24,
  basis: '',
  now: () => Date.now(),
};

/**
 * What a sync left out, in one sentence with the count and the first few paths (the CLI
 * prints it once a run, the extension logs it when it changes); null when nothing was.
 */
export function unreadNote(result: Pick<SyncResult, 'unlisted' | 'unread'>, examples = 3): string | null {
  const n = result.unlisted.length + result.unread.length;
  if (n === 0) return null;
  const parts: string[] = [];
  if (result.unlisted.length > 0) {
    const k = result.unlisted.length;
    parts.push(
      `${k} folder${k === 1 ? '' : 's'} or file${k === 1 ? '' : 's'} could not be looked at (${result.unlisted.slice(0, examples).join(', ')}${k > examples ? ', …' : ''})`,
    );
  }
  if (result.unread.length > 0) {
    const k = result.unread.length;
    const shown = result.unread
      .slice(0, examples)
      .map((u) => `${u.path}: ${u.problem.length > 120 ? `${u.problem.slice(0, 119)}…` : u.problem}`);
    parts.push(
      `${k} session file${k === 1 ? '' : 's'} could not be read (${shown.join('; ')}${k > examples ? '; …' : ''})`,
    );
  }
  return `${n} ${n === 1 ? 'entry' : 'entries'} under the agents' folders ${n === 1 ? 'was' : 'were'} not read: ${parts.join('; ')}.`;
}

/** Commit after this many files or this long, whichever first (each commit costs an fsync). */
const BATCH_FILES = 50;
const BATCH_MS = 250;
/** Read buffer: big enough to be fast, small enough to keep memory flat. */
const READ_CHUNK = 1 << 20;
/** How much of a file's head is hashed to notice it was replaced by another file. */
const HEAD_BYTES = 1024;

interface LiveParse {
  parser: TraceParse;
  /** When its state was last saved to the index. */
  savedMs: number;
}

interface FileStat {
  size: number;
  mtimeMs: number;
}

async function statFile(path: string): Promise<FileStat | null> {
  try {
    const s = await stat(path);
    return s.isFile() ? { size: s.size, mtimeMs: s.mtimeMs } : null;
  } catch {
    return null;
  }
}

async function headHash(path: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(path, 'r');
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    return createHash('sha1').update(buffer.subarray(0, bytesRead)).digest('hex');
  } catch {
    return null;
  } finally {
    await handle?.close();
  }
}

/** The index of file `key` in the parse, added when it is new (a sub-agent log that appeared). */
function fileIndex(parser: TraceParse, key: string): number {
  const at = parser.files.indexOf(key);
  return at >= 0 ? at : parser.addFile(key);
}

/**
 * Pushes the bytes of a file after what the parse has of it, up to `to`, chunk by chunk, the
 * next chunk read while this one is parsed. Each chunk has a buffer of its own: the parse may
 * keep views of bytes pushed to it past the push (one buffer read into again lost calls where
 * a chunk ended: 1,936 of a 23 MB session's 1,937; test/unit/node/sessions "a file read in
 * many chunks").
 */
async function pushRange(parser: TraceParse, key: string, path: string, to: number): Promise<number> {
  const index = fileIndex(parser, key);
  const from = parser.bytesRead(index);
  if (to <= from) return 0;
  const handle = await open(path, 'r');
  let read = 0;
  const size = Math.min(READ_CHUNK, to - from);
  const readAt = (at: number): Promise<{ bytesRead: number; buffer: Buffer }> =>
    handle.read(Buffer.allocUnsafe(Math.min(size, to - at)), 0, Math.min(size, to - at), at);
  let pending: Promise<{ bytesRead: number; buffer: Buffer }> | null = null;
  try {
    // The first read inside the try: one that throws before it starts (a size that is no number) still closes the file.
    pending = readAt(from);
    for (let at = from; pending !== null; ) {
      const { bytesRead, buffer } = await pending;
      pending = null;
      if (bytesRead === 0) break; // shrank while reading: the next sync sees it
      at += bytesRead;
      if (at < to) pending = readAt(at);
      const more = parser.push(index, buffer.subarray(0, bytesRead));
      read += bytesRead;
      // Reading stopped (not text, no known format): the rest of the file is not read.
      if (!more) break;
    }
  } finally {
    // A read still in flight (the parse stopped) ends before the file is closed.
    if (pending) await pending.catch(() => undefined);
    await handle.close();
  }
  return read;
}

function sameCompanions(a: readonly CompanionState[], b: readonly CompanionState[]): boolean {
  return (
    a.length === b.length &&
    a.every((c, i) => c.key === b[i]!.key && c.size === b[i]!.size && c.mtimeMs === b[i]!.mtimeMs)
  );
}

/** Saves a parse as deflated structured-clone bytes; null when it cannot be saved. */
export function packState(parser: TraceParse): Uint8Array | null {
  const saved = parser.saveState();
  if (saved === null) return null;
  try {
    return deflateRawSync(serialize(saved), { level: 1 });
  } catch {
    return null; // a value the serializer refuses: the file is read again when it changes
  }
}

/** The parse saved by packState, ready to resume; null when it cannot be (damaged, another build). */
export function unpackState(bytes: Uint8Array): TraceParse | null {
  try {
    return TraceParse.restore(deserialize(inflateRawSync(bytes)) as SavedTraceParse);
  } catch {
    return null;
  }
}

/** A file read whole from its start, off the writer's thread if need be: what to read. */
export interface FreshJob {
  /** The session file, read as file 0 under `mainKey`. */
  path: string;
  mainKey: string;
  size: number;
  /** Its companions (sub-agent logs), each up to the size seen when listed. */
  companions: Array<{ key: string; path: string; size: number }>;
  /** Save the parse (the file changed lately: an append may follow). */
  keepState: boolean;
}

/** What reading a FreshJob gave: the stored figures, or why the file could not be read. */
export type FreshResult =
  | { bytesRead: number; problem: string | null; records: StoredSession[]; state: Uint8Array | null }
  | { readError: string };

/** The name of the error a reader rejects a read with when it dropped it for a cancel. */
export const READ_CANCELLED = 'ReadCancelled';

/** Reads FreshJobs: here, one at a time (inProcessReader), or on parse threads (ParsePool). */
export interface FreshReader {
  /** Jobs worth having in flight at once. */
  readonly concurrency: number;
  read(job: FreshJob): Promise<FreshResult>;
}

/**
 * Reads a file from its start and computes its sessions' stored figures: the whole
 * of a cold index's work but the writing, so it runs the same on any thread.
 */
export async function readFresh(
  job: FreshJob,
  analysis: Partial<AnalysisOptions>,
  prices: PriceBook | null,
): Promise<FreshResult> {
  const parser = new TraceParse([job.mainKey]);
  let bytesRead = 0;
  try {
    bytesRead += await pushRange(parser, job.mainKey, job.path, job.size);
    for (const c of job.companions) bytesRead += await pushRange(parser, c.key, c.path, c.size);
  } catch (e) {
    return { readError: e instanceof Error ? e.message : String(e) };
  }
  // Saved before the files are ended: the state resumes at the last complete line, so a half-written one is read again whole.
  const state = job.keepState ? packState(parser) : null;
  for (let i = 0; i < parser.files.length; i++) parser.endFile(i);
  const parsed = parser.snapshot();
  return {
    bytesRead,
    problem: parsed.problem?.message ?? null,
    records: storedSessions(indexRecords(parsed, analysis, prices)),
    state,
  };
}

/** Reads each job in this thread, one after another. */
export function inProcessReader(options: Pick<IndexerOptions, 'analysis' | 'prices'>): FreshReader {
  return { concurrency: 1, read: (job) => readFresh(job, options.analysis, options.prices) };
}

/** A file's read: done (nothing to read, or read here), or a fresh read to run and finish. */
type FilePlan =
  | { outcome: FileOutcome; update: FileUpdate | null }
  | { job: FreshJob; finish: (result: FreshResult) => { outcome: FileOutcome; update: FileUpdate | null } };

export class SessionIndexer {
  private readonly options: IndexerOptions;
  private readonly live = new Map<string, LiveParse>();

  constructor(
    private readonly index: SessionIndex,
    options: Partial<IndexerOptions> = {},
  ) {
    this.options = { ...DEFAULT_INDEXER_OPTIONS, ...options };
  }

  /** Changes the analysis options (settings): rows are recomputed as files are read again. */
  setAnalysisOptions(analysis: Partial<AnalysisOptions>, prices: PriceBook | null, basis: string): void {
    this.options.analysis = analysis;
    this.options.prices = prices;
    this.options.basis = basis;
  }

  /** Drops every parse kept in memory. */
  dropLiveParses(): void {
    this.live.clear();
  }

  /**
   * Brings the index in step with the agents' folders: new and changed files are read
   * (newest first), vanished ones marked deleted. `isCancelled` is asked between files;
   * what was read until then stays in the index.
   */
  async sync(
    roots: readonly AgentRoot[],
    hooks: {
      onProgress?: (p: SyncProgress) => void;
      isCancelled?: () => boolean;
      keepLive?: (found: FoundSession) => boolean;
      /** A batch of files was written to the index (a cold index shows its sessions as they come). */
      onWritten?: () => void;
      /** The reader of files read whole, given the files new to the index (null: read them here). */
      freshReader?: (newFiles: readonly FoundSession[]) => FreshReader | null;
    } = {},
  ): Promise<SyncResult> {
    const { sessions: discovered, notes, unlisted } = await discoverSessions(roots);
    const stored = new Map(this.index.files().map((f) => [f.path, f]));
    // Files that were a problem last time go last: one unreadable file never holds up the others.
    const found = [
      ...discovered.filter((f) => stored.get(f.path)?.status !== 'problem'),
      ...discovered.filter((f) => stored.get(f.path)?.status === 'problem'),
    ];
    const result: SyncResult = {
      files: found.length,
      counts: { unchanged: 0, new: 0, appended: 0, reread: 0, deleted: 0, problem: 0 },
      bytesRead: 0,
      cancelled: false,
      rereads: [],
      notes,
      unlisted,
      unread: [],
    };
    const bytesTotal = found.reduce((n, f) => n + f.sizeBytes, 0);
    let bytesDone = 0;
    let pending: FileUpdate[] = [];
    let lastFlush = this.options.now();
    // Figures of other settings are recomputed for every file, changed or not.
    const recompute = this.index.metaValue(BASIS_KEY) !== this.options.basis;
    const flush = async (): Promise<void> => {
      if (pending.length === 0) return;
      const batch = pending;
      pending = [];
      await this.write(batch);
      lastFlush = this.options.now();
      hooks.onWritten?.();
    };
    // Files read whole go to the reader (parse threads, when the sync brings many); at most its concurrency in flight.
    const reader =
      hooks.freshReader?.(found.filter((f) => !stored.has(f.path) || stored.get(f.path)!.status === 'deleted')) ??
      inProcessReader(this.options);
    const inFlight = new Set<Promise<void>>();
    let filesDone = 0;
    let dropped = 0;
    const record = (
      f: FoundSession,
      { outcome, update }: { outcome: FileOutcome; update: FileUpdate | null },
    ): void => {
      result.counts[outcome.kind] += 1;
      if ('bytesRead' in outcome) result.bytesRead += outcome.bytesRead;
      // Recomputing figures for new settings reads old files whole: nothing to tell the user about.
      if (outcome.kind === 'reread' && !(recompute && outcome.reason === NO_SAVED_PARSE))
        result.rereads.push(`${f.path}: ${outcome.reason}`);
      if (update) pending.push(update);
      bytesDone += f.sizeBytes;
      filesDone += 1;
      hooks.onProgress?.({ filesDone, filesTotal: found.length, bytesDone, bytesTotal });
    };
    for (let i = 0; i < found.length; i++) {
      if (hooks.isCancelled?.()) {
        result.cancelled = true;
        break;
      }
      const f = found[i]!;
      const prior = stored.get(f.path) ?? null;
      stored.delete(f.path);
      const plan = await this.planFile(f, prior, hooks.keepLive?.(f) ?? false, recompute);
      if ('job' in plan) {
        const done = reader
          .read(plan.job)
          .catch((e: unknown): FreshResult | null =>
            e instanceof Error && e.name === READ_CANCELLED
              ? null
              : { readError: e instanceof Error ? e.message : String(e) },
          )
          // A read dropped by a cancel is not recorded: the file stays as it was, read at the next sync.
          .then((r) => (r === null ? void (dropped += 1) : record(f, plan.finish(r))))
          .finally(() => inFlight.delete(done));
        inFlight.add(done);
        while (inFlight.size >= reader.concurrency) await Promise.race(inFlight);
      } else record(f, plan);
      if (pending.length >= BATCH_FILES || (pending.length > 0 && this.options.now() - lastFlush >= BATCH_MS))
        await flush();
    }
    // A cancelled sync keeps the files read so far; the reads a reader dropped (ParsePool.cancel) are left for the next sync.
    await Promise.all(inFlight);
    if (dropped > 0) result.cancelled = true;
    await flush();
    if (!result.cancelled && recompute)
      await withBusyRetry(this.index.database, () => this.index.setMetaValue(BASIS_KEY, this.options.basis));
    if (!result.cancelled) {
      // What was not found any more: gone from disk (deleted), or outside the folders now looked in (forgotten).
      const gone = [...stored.values()].filter((s) => s.status !== 'deleted');
      if (gone.length > 0) {
        await withBusyRetry(this.index.database, () => {
          this.index.begin();
          for (const s of gone) {
            if (existsSync(s.path)) this.index.forget(s.id);
            else {
              this.index.markDeleted(s.id);
              this.live.delete(s.path);
              result.counts.deleted += 1;
            }
          }
          this.index.commit();
        });
      }
    }
    result.unread = this.index.problemFiles();
    return result;
  }

  /**
   * Reads one file again now (a watcher saw it change): an append is read from where
   * the last read stopped. Returns what happened.
   */
  async refresh(
    found: Pick<FoundSession, 'path' | 'agentId' | 'projectHint'> & Partial<Pick<FoundSession, 'assemble' | 'agent'>>,
    keepLive = true,
  ): Promise<FileOutcome> {
    // Without its saved parse: planFile reads that only when no parse is live in memory.
    const prior = this.index.file(found.path, false);
    const s = await statFile(found.path);
    if (!s) {
      if (prior && prior.status !== 'deleted') {
        await withBusyRetry(this.index.database, () => {
          this.index.begin();
          this.index.markDeleted(prior.id);
          this.index.commit();
        });
      }
      this.live.delete(found.path);
      return { kind: 'deleted' };
    }
    const { outcome, update } = await this.readFile(
      {
        agent: agentLabel(found.agentId) as FoundSession['agent'],
        assemble: null,
        project: found.projectHint,
        ...found,
        mtimeMs: s.mtimeMs,
        sizeBytes: s.size,
      },
      prior,
      keepLive,
    );
    if (update) await this.write([update]);
    return outcome;
  }

  private async write(batch: readonly FileUpdate[]): Promise<void> {
    await withBusyRetry(this.index.database, () => {
      this.index.begin();
      for (const u of batch) this.index.writeFile(u, this.options.now());
      this.index.commit();
    });
  }

  /** Reads what changed in one file, here; the update to store, or none when nothing changed. */
  private async readFile(
    f: FoundSession,
    prior: StoredFile | null,
    keepLive: boolean,
  ): Promise<{ outcome: FileOutcome; update: FileUpdate | null }> {
    const plan = await this.planFile(f, prior, keepLive, false);
    return 'job' in plan ? plan.finish(await readFresh(plan.job, this.options.analysis, this.options.prices)) : plan;
  }

  /**
   * What reading one file takes: nothing (unchanged), an append read here from the live
   * or saved parse, or a read from the start (a FreshJob, which any thread can run).
   */
  private async planFile(
    f: FoundSession,
    prior: StoredFile | null,
    keepLive: boolean,
    recompute: boolean,
  ): Promise<FilePlan> {
    const agent = agentById(f.agentId);
    const companionKeys = agent ? await agent.companions(f.path) : [];
    const companions: CompanionState[] = [];
    for (const key of companionKeys) {
      const s = await statFile(join(dirname(f.path), key));
      if (s) companions.push({ key, size: s.size, mtimeMs: s.mtimeMs });
    }
    const unchanged =
      !recompute &&
      prior !== null &&
      prior.status !== 'deleted' &&
      prior.size === f.sizeBytes &&
      prior.mtimeMs === f.mtimeMs &&
      sameCompanions(prior.companions, companions);
    if (unchanged) return { outcome: { kind: 'unchanged' }, update: null };
    const now = this.options.now();
    const base: Omit<FileUpdate, 'status' | 'problem' | 'records' | 'state' | 'stateVersion' | 'headHash'> = {
      path: f.path,
      agentId: f.agentId,
      projectHint: f.projectHint,
      size: f.sizeBytes,
      mtimeMs: f.mtimeMs,
      companions,
      lastGrowthMs: prior ? grewAt(f, companions, prior, now) : null,
    };
    if (f.sizeBytes > this.options.maxFileBytes) {
      const message = `${basename(f.path)} is ${(f.sizeBytes / 2 ** 20).toFixed(0)} MB, above the ${(this.options.maxFileBytes / 2 ** 20).toFixed(0)} MB limit (agentTrace.maxFileSizeMB): not read.`;
      this.live.delete(f.path);
      return {
        outcome: { kind: 'problem', message },
        update: {
          ...base,
          headHash: null,
          status: 'problem',
          problem: message,
          records: [],
          state: null,
          stateVersion: null,
        },
      };
    }
    if (f.assemble) return this.readAssembled(f, prior, base);
    const head = await headHash(f.path);
    const mainKey = basename(f.path);
    let parser: TraceParse | null = null;
    let reason: string | null = null;
    const shrankSince = (p: StoredFile): string | null => {
      if (f.sizeBytes < p.size) return 'it shrank (truncated or replaced)';
      const c = p.companions.find((pc) => (companions.find((x) => x.key === pc.key)?.size ?? 0) < pc.size);
      return c ? `${c.key} shrank (truncated or replaced)` : null;
    };
    if (prior && prior.status !== 'deleted') {
      reason = head !== prior.headHash ? 'its first bytes changed (rotated or rewritten)' : shrankSince(prior);
      if (reason === null) {
        parser = this.live.get(f.path)?.parser ?? null;
        if (!parser) {
          const stored = prior.state ? prior : this.index.file(f.path);
          if (stored?.state && stored.stateVersion === this.options.stateVersion) parser = unpackState(stored.state);
        }
        if (parser) {
          const sizes = new Map([[mainKey, f.sizeBytes], ...companions.map((c) => [c.key, c.size] as const)]);
          const shrunk = parser.files.find((key, i) => (sizes.get(key) ?? 0) < parser!.bytesRead(i));
          if (shrunk !== undefined) {
            reason = `${shrunk === mainKey ? 'it' : shrunk} shrank (truncated or replaced)`;
            parser = null;
          }
        } else reason = NO_SAVED_PARSE;
      }
    }
    if (reason !== null) parser = null;
    const outcomeOf = (bytesRead: number): FileOutcome =>
      prior === null || prior.status === 'deleted'
        ? { kind: 'new', bytesRead }
        : reason
          ? { kind: 'reread', bytesRead, reason }
          : { kind: 'appended', bytesRead };
    const readError = (e: unknown): { outcome: FileOutcome; update: FileUpdate } => {
      const message = `${basename(f.path)} could not be read: ${e instanceof Error ? e.message : String(e)}`;
      this.live.delete(f.path);
      return {
        outcome: { kind: 'problem', message },
        update: {
          ...base,
          headHash: head,
          status: 'problem',
          problem: message,
          records: [],
          state: null,
          stateVersion: null,
        },
      };
    };
    if (!parser && !keepLive) {
      // Read from the start and not kept in memory: any thread may read it.
      this.live.delete(f.path);
      const job: FreshJob = {
        path: f.path,
        mainKey,
        size: f.sizeBytes,
        companions: companions.map((c) => ({ key: c.key, path: join(dirname(f.path), c.key), size: c.size })),
        keepState: now - f.mtimeMs < this.options.keepStateWithinMs,
      };
      return {
        job,
        finish: (r) => {
          if ('readError' in r) return readError(r.readError);
          const update: FileUpdate = {
            ...base,
            headHash: head,
            status: r.problem ? 'problem' : 'ok',
            problem: r.problem,
            records: r.records,
            state: r.state,
            stateVersion: this.options.stateVersion,
          };
          return { outcome: outcomeOf(r.bytesRead), update };
        },
      };
    }
    if (!parser) {
      this.live.delete(f.path);
      parser = new TraceParse([mainKey]);
    }
    let bytesRead = 0;
    try {
      bytesRead += await pushRange(parser, mainKey, f.path, f.sizeBytes);
      for (const c of companions) bytesRead += await pushRange(parser, c.key, join(dirname(f.path), c.key), c.size);
    } catch (e) {
      return readError(e);
    }
    const keepState = keepLive || now - f.mtimeMs < this.options.keepStateWithinMs;
    let state: Uint8Array | null = null;
    let parsed: ParsedTrace;
    if (keepLive) {
      // A line still being written stays hidden until its newline comes.
      parsed = parser.snapshot();
      const entry = this.live.get(f.path);
      // A live parse is saved now and then, not on every append: its state carries its own resume points.
      if (!entry || now - entry.savedMs > 30_000) state = packState(parser);
      this.remember(f.path, { parser, savedMs: state ? now : (entry?.savedMs ?? now) });
    } else {
      // Saved before the files are ended: the state resumes at the last complete line, so a half-written one is read again whole.
      state = keepState ? packState(parser) : null;
      for (let i = 0; i < parser.files.length; i++) parser.endFile(i);
      parsed = parser.snapshot();
      this.live.delete(f.path);
    }
    const problem = parsed.problem?.message ?? null;
    const update: FileUpdate = {
      ...base,
      headHash: head,
      status: problem ? 'problem' : 'ok',
      problem,
      records: storedSessions(indexRecords(parsed, this.options.analysis, this.options.prices)),
      // A live parse not saved this time keeps the saved one (it resumes from its own offsets).
      state: state ?? (keepLive && this.live.has(f.path) && !reason && prior !== null ? undefined : null),
      stateVersion: this.options.stateVersion,
    };
    return { outcome: outcomeOf(bytesRead), update };
  }

  /**
   * A session kept in several files (an OpenHands events folder, OpenCode's storage) is
   * assembled into one document and read whole whenever it changed: nothing to resume.
   */
  private async readAssembled(
    f: FoundSession,
    prior: StoredFile | null,
    base: Omit<FileUpdate, 'status' | 'problem' | 'records' | 'state' | 'stateVersion' | 'headHash'>,
  ): Promise<{ outcome: FileOutcome; update: FileUpdate | null }> {
    let text: string | null;
    try {
      text = await assembleSession(f);
    } catch (e) {
      const message = `${f.path} could not be read: ${e instanceof Error ? e.message : String(e)}`;
      return {
        outcome: { kind: 'problem', message },
        update: {
          ...base,
          headHash: null,
          status: 'problem',
          problem: message,
          records: [],
          state: null,
          stateVersion: null,
        },
      };
    }
    const bytes = new TextEncoder().encode(text ?? '');
    const parser = new TraceParse([`${f.agentId}-session.json`]);
    parser.push(0, bytes);
    parser.endFile(0);
    const parsed = parser.snapshot();
    const problem = parsed.problem?.message ?? null;
    const outcome: FileOutcome =
      prior === null || prior.status === 'deleted'
        ? { kind: 'new', bytesRead: bytes.length }
        : { kind: 'reread', bytesRead: bytes.length, reason: 'a session kept in several files is read whole' };
    return {
      outcome,
      update: {
        ...base,
        headHash: null,
        status: problem ? 'problem' : 'ok',
        problem,
        records: storedSessions(indexRecords(parsed, this.options.analysis, this.options.prices)),
        state: null,
        stateVersion: null,
      },
    };
  }

  private remember(path: string, entry: LiveParse): void {
    this.live.delete(path);
    this.live.set(path, entry);
    while (this.live.size > this.options.maxLiveParses) this.live.delete(this.live.keys().next().value!);
  }
}
