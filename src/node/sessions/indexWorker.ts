import { existsSync, statSync, watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parentPort } from 'node:worker_threads';
import { agentById } from './agentRegistry';
import type { AgentRoot, FoundSession } from './agentRegistry';
import type { IndexEvent, IndexRequest, IndexWorkerConfig } from '../../protocol/indexWorkerProtocol';
import { respond } from '../../protocol/workerRpc';
import type { RpcResponse } from '../../protocol/workerRpc';
import { indexPriceBook, ParsePool, parseThreadsFor } from './parsePool';
import { SessionIndex } from './sessionIndex';
import { SessionIndexer } from './sessionIndexer';
import type { FileOutcome } from '../../protocol/indexWorkerProtocol';
import { isCorrupt } from './sqlite';
import { WriterLease } from './writerLease';
import { contextOfSessions } from './contextOfSessions';

/**
 * The index worker: a worker thread that owns the session index, reads session files
 * and watches the live ones. The extension host asks it questions (rows, calls,
 * search) and hears back when sessions change. Started by SessionIndexClient.
 */

/** Files changed within this long are watched closely (a running agent writes every few seconds). */
const HOT_WINDOW_MS = 10 * 60_000;
const MAX_HOT_FILES = 20;
/** The safety net under fs.watch (network drives, editors that replace files): a stat per hot file this often. */
const POLL_MS = 1000;
/** Appends come in bursts; wait this long after the last event before reading. */
const DEBOUNCE_MS = 30;

const port = parentPort;
if (!port) throw new Error('indexWorker.ts runs as a worker thread');

function post(message: IndexEvent | RpcResponse): void {
  port!.postMessage(message);
}

let config: IndexWorkerConfig | null = null;
let index: SessionIndex | null = null;
let indexer: SessionIndexer | null = null;
let lease: WriterLease | null = null;
let leaseTimer: ReturnType<typeof setInterval> | undefined;
let cancelled = false;
/** The running sync's parse threads, if it started any (a cancel drops their reads at once). */
let syncPool: ParsePool | null = null;
/** The whole-file integrity check ran since this worker started. */
let checked = false;

interface HotFile {
  found: Pick<FoundSession, 'path' | 'agentId' | 'projectHint'>;
  watchers: FSWatcher[];
  size: number;
  mtimeMs: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

const hot = new Map<string, HotFile>();
const pinned = new Set<string>();
let pollTimer: ReturnType<typeof setInterval> | undefined;
/** A close was asked for: nothing more is written. */
let closing = false;
/** Refreshes run one at a time, so two events on one file never read it twice at once. */
let queue: Promise<void> = Promise.resolve();

function priceBook(): ReturnType<typeof indexPriceBook> {
  return indexPriceBook(config?.prices ?? []);
}

/**
 * Parse threads set by the environment (AGENT_TRACE_PARSE_THREADS=N, 0 for none) instead of
 * parseThreadsFor's choice: bench:sessions --threads N measures two threads on a machine
 * busy enough that the worker would read in its own thread. Unset in normal use.
 */
const FORCED_PARSE_THREADS = ((n: number): number | null => (Number.isInteger(n) && n >= 0 && n <= 16 ? n : null))(
  Number(process.env['AGENT_TRACE_PARSE_THREADS'] ?? 'NaN'),
);

/** The parse threads' script: bundled beside this one (dist/indexParseWorker.js). */
const PARSE_WORKER_SCRIPT = join(__dirname, 'indexParseWorker.js');

/** The settings the figures depend on, as one string (a change recomputes every file's figures at the next sync). */
function figuresBasis(): string {
  return JSON.stringify([config?.analysis ?? {}, config?.prices ?? []]);
}

function roots(): AgentRoot[] {
  return (config?.roots ?? []).flatMap(({ agentId, root }) => {
    const agent = agentById(agentId);
    return agent ? [{ agent, root }] : [];
  });
}

function open(): string | null {
  const { index: opened, notice } = SessionIndex.open(config!.dbPath);
  index = opened;
  indexer = new SessionIndexer(opened, {
    analysis: config!.analysis,
    prices: priceBook(),
    maxFileBytes: config!.maxFileBytes,
    stateVersion: config!.stateVersion,
    basis: figuresBasis(),
  });
  return notice?.message ?? null;
}

/** Runs an index operation; a damaged index found on the way is set aside, rebuilt and said. */
async function guarded<T>(op: () => T | Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (!isCorrupt(e) || !config) throw e;
    index?.close();
    const notice = open() ?? 'The session index was damaged; it is rebuilt from the session files.';
    post({ event: 'notice', message: notice });
    return op();
  }
}

function closeHot(path: string): void {
  const h = hot.get(path);
  if (!h) return;
  clearTimeout(h.timer);
  for (const w of h.watchers) w.close();
  hot.delete(path);
}

function schedule(path: string): void {
  const h = hot.get(path);
  if (!h) return;
  clearTimeout(h.timer);
  h.timer = setTimeout(() => {
    queue = queue
      .then(() => refreshHot([path]))
      .catch((e: unknown) => post({ event: 'log', level: 'error', message: `reading ${path}: ${String(e)}` }));
  }, DEBOUNCE_MS);
}

function watchHot(found: Pick<FoundSession, 'path' | 'agentId' | 'projectHint'>): void {
  if (hot.has(found.path)) return;
  const h: HotFile = { found, watchers: [], size: -1, mtimeMs: -1, timer: undefined };
  hot.set(found.path, h);
  const onEvent = (): void => schedule(found.path);
  const tryWatch = (target: string): void => {
    try {
      if (existsSync(target)) h.watchers.push(watch(target, { persistent: false }, onEvent));
    } catch {
      // the poll still sees it
    }
  };
  tryWatch(found.path);
  // Claude Code sub-agent logs grow in <session>/subagents/.
  tryWatch(join(dirname(found.path), basename(found.path).replace(/\.jsonl$/i, ''), 'subagents'));
  try {
    const s = statSync(found.path);
    h.size = s.size;
    h.mtimeMs = s.mtimeMs;
  } catch {
    // gone already: the poll reports it
  }
}

async function refreshHot(paths: string[]): Promise<void> {
  if (!indexer || !lease?.isHeld || closing) return;
  const outcomes: Array<{ path: string; kind: FileOutcome['kind']; reason: string | null }> = [];
  for (const path of paths) {
    const h = hot.get(path);
    if (!h) continue;
    const outcome = await guarded(() => indexer!.refresh(h.found, true));
    if (outcome.kind === 'deleted') closeHot(path);
    if (outcome.kind !== 'unchanged')
      outcomes.push({
        path,
        kind: outcome.kind,
        reason: outcome.kind === 'reread' ? outcome.reason : outcome.kind === 'problem' ? outcome.message : null,
      });
  }
  if (outcomes.length > 0)
    post({ event: 'changed', generation: index!.generation(), paths: outcomes.map((o) => o.path), outcomes });
}

function poll(): void {
  const changed: string[] = [];
  for (const [path, h] of hot) {
    try {
      const s = statSync(path);
      if (s.size !== h.size || s.mtimeMs !== h.mtimeMs) {
        h.size = s.size;
        h.mtimeMs = s.mtimeMs;
        changed.push(path);
      }
    } catch {
      changed.push(path);
    }
  }
  for (const path of changed) schedule(path);
}

/** Watches the files that changed lately (and the pinned ones); stops watching the others. */
function updateHot(nowMs: number): void {
  if (!index) return;
  const recent = index
    .files()
    .filter((f) => f.status !== 'deleted' && (pinned.has(f.path) || nowMs - f.mtimeMs < HOT_WINDOW_MS))
    .sort((a, b) => Number(pinned.has(b.path)) - Number(pinned.has(a.path)) || b.mtimeMs - a.mtimeMs)
    .slice(0, MAX_HOT_FILES);
  const keep = new Set(recent.map((f) => f.path));
  for (const path of [...hot.keys()]) if (!keep.has(path)) closeHot(path);
  for (const f of recent) watchHot({ path: f.path, agentId: f.agentId, projectHint: null });
  if (hot.size > 0 && !pollTimer) pollTimer = setInterval(poll, POLL_MS);
  if (hot.size === 0 && pollTimer) {
    clearInterval(pollTimer);
    pollTimer = undefined;
  }
}

async function handle(m: Exclude<IndexRequest, { kind: 'cancel' }>): Promise<unknown> {
  switch (m.method) {
    case 'configure': {
      const reopen = config?.dbPath !== m.params.dbPath;
      config = m.params;
      let notice: string | null = null;
      if (reopen) {
        index?.close();
        lease?.release();
        notice = open();
        lease = new WriterLease(`${config.dbPath}.lease`);
        clearInterval(leaseTimer);
        leaseTimer = setInterval(() => lease?.refresh(), 10_000);
        leaseTimer.unref();
      } else {
        indexer!.setAnalysisOptions(config.analysis, priceBook(), figuresBasis());
      }
      return { notice };
    }
    case 'sync': {
      if (closing || !lease!.tryAcquire()) return { readOnly: true };
      cancelled = false;
      let last = 0;
      let pool: ParsePool | null = null;
      const result = await guarded(() =>
        indexer!.sync(roots(), {
          // A cold index (or many new sessions) is parsed on parse threads; this thread writes.
          freshReader: (newFiles) => {
            const threads = FORCED_PARSE_THREADS ?? parseThreadsFor(newFiles);
            if (threads === 0 || !existsSync(PARSE_WORKER_SCRIPT)) return null;
            void (pool as ParsePool | null)?.close(); // a sync run again after a damaged index was set aside
            pool = new ParsePool(PARSE_WORKER_SCRIPT, threads, {
              analysis: config!.analysis,
              userPrices: config!.prices,
            });
            syncPool = pool;
            post({
              event: 'log',
              level: 'info',
              message: `Reading ${newFiles.length} new session files on ${threads} parse threads.`,
            });
            return pool;
          },
          isCancelled: () => cancelled,
          onWritten: () => post({ event: 'written' }),
          keepLive: (f) => Date.now() - f.mtimeMs < HOT_WINDOW_MS || pinned.has(f.path),
          onProgress: (p) => {
            if (Date.now() - last < 100 && p.filesDone < p.filesTotal) return;
            last = Date.now();
            post({ event: 'progress', ...p });
          },
        }),
      ).finally(() => {
        syncPool = null;
        return (pool as ParsePool | null)?.close();
      });
      updateHot(Date.now());
      if (!checked) {
        // Once per start, after the first sync (not before the first rows): the whole file's integrity.
        checked = true;
        const verdict = index!.check();
        if (verdict !== 'ok') {
          index!.close();
          SessionIndex.setAsideFile(config!.dbPath);
          open();
          post({
            event: 'notice',
            message: `The session index was damaged (${verdict}); it is rebuilt from the session files.`,
          });
          const rebuilt = await indexer!.sync(roots(), { isCancelled: () => cancelled });
          return { ...rebuilt, readOnly: false };
        }
      }
      return { ...result, readOnly: false };
    }
    case 'generation':
      return guarded(() => index!.generation());
    case 'rows':
      return guarded(() => ({ generation: index!.generation(), rows: index!.rows() }));
    case 'calls':
      return guarded(() => index!.calls(m.params.sessionId));
    case 'search':
      return guarded(() => [...index!.search(m.params.text)]);
    case 'refresh': {
      if (!lease!.tryAcquire()) return { kind: 'unchanged' };
      const stored = index!.file(m.params.path, false);
      const agentId =
        stored?.agentId ?? config!.roots.find((r) => m.params.path.startsWith(r.root))?.agentId ?? 'claude-code';
      return guarded(() => indexer!.refresh({ path: m.params.path, agentId, projectHint: null }, true));
    }
    case 'context':
      return contextOfSessions(m.params.files, priceBook(), config!.maxFileBytes);
    case 'watch':
      pinned.clear();
      for (const p of m.params.paths) pinned.add(p);
      if (lease?.isHeld) updateHot(Date.now());
      return null;
    case 'close':
      for (const path of [...hot.keys()]) closeHot(path);
      clearInterval(pollTimer);
      clearInterval(leaseTimer);
      lease?.release();
      index?.close();
      index = null;
      return null;
  }
}

port.on('message', (m: IndexRequest) => {
  if (m.kind === 'cancel') {
    cancelled = true;
    syncPool?.cancel();
    return;
  }
  if (m.method === 'close') {
    // Closing goes first: a running sync stops at its next file and queued refreshes are skipped,
    // so the lease is released before the client stops waiting (another worker may want it).
    closing = true;
    cancelled = true;
  }
  const run = async (): Promise<void> => respond(post, m.id, () => handle(m));
  // Writes go one at a time, in order, with the file refreshes. Reads answer at once, also
  // during a long sync: its writes are whole synchronous transactions between two awaits,
  // so a read never sees half of one.
  // The context anatomy only reads the session files (not the index): it need not wait for a sync either.
  if (
    m.method === 'rows' ||
    m.method === 'calls' ||
    m.method === 'search' ||
    m.method === 'generation' ||
    m.method === 'context'
  )
    void run();
  else queue = queue.then(run);
});
