import { count, num, str } from '../json';
import type { JsonObject } from '../json';
import { blockCountProblem, commonPrefixBlocks, hashIds, hitTokens } from '../mooncake/kvBlocks';
import type { Diagnostic, LlmCall, Session, SourceRef, UserTurn } from '../model';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';

/** Tokens per hash block in the Qwen Bailian traces (`qwen_*_blksz_16.jsonl`). */
export const BAILIAN_BLOCK_TOKENS = 16;
/** `parent_chat_id` of a conversation's first request. */
const ROOT_PARENT = -1;

/** One request row, kept until the file ends: sessions need every parent first. */
interface ChatRow {
  chatId: number;
  /** Null for a root (−1). */
  parentId: number | null;
  startMs: number | null;
  input: number | null;
  output: number | null;
  type: string | null;
  turn: number | null;
  hashes: number[] | null;
  source: SourceRef;
}

/**
 * Reads the Alibaba Bailian / Qwen KV traces (`alibaba-edu/qwen-bailian-usagetraces-anon`,
 * docs/design/formats.md §7): one request per line, `timestamp` in float seconds, 16-token blocks.
 *
 * Sessions: a request's `parent_chat_id` is the request it follows up; following it to the
 * root (−1) gives the conversation, whose id is the root's `chat_id`. A parent with several
 * follow-ups branches the conversation: every branch stays in the parent's session (calls in
 * file order) and each request is compared with its own parent; an info diagnostic names the
 * branches. A request whose parent row is not in the file (a cut slice) starts its own
 * session, with an info diagnostic.
 *
 * Tokens: a follow-up re-sends its parent's prompt and answer, so an ideal per-conversation
 * cache holds the parent's blocks. cached = longest common prefix of `hash_ids` with the
 * parent's × 16, capped at `input_length`. The prefix usually stops before the parent's
 * last block, which was partial and changed as tokens filled it (docs/design/formats.md §7); when the
 * parent's prompt ended on a block boundary, its last block is shared too. A root has no
 * parent: cached 0. A request whose parent is missing: cached unknown (null), not 0.
 *
 * Each request is one user turn (preview "turn N · type", N = the trace's `turn` depth).
 */
export class BailianReader implements RecordReader {
  private readonly rows: ChatRow[] = [];
  private readonly byId = new Map<number, ChatRow>();
  private readonly roots = new Map<ChatRow, ChatRow>();
  private readonly diagnostics: Diagnostic[] = [];

  record({ value, source }: TraceRecord): void {
    const chatId = integer(value['chat_id']);
    if (chatId === null) {
      this.report(
        source,
        'warning',
        `Bailian request without an integer "chat_id" (${JSON.stringify(value['chat_id'] ?? null)}); skipped.`,
      );
      return;
    }
    if (this.byId.has(chatId)) {
      this.report(
        source,
        'warning',
        `chat_id ${chatId} appears again (first on line ${this.byId.get(chatId)!.source.line + 1}); this row is skipped.`,
      );
      return;
    }
    const row: ChatRow = {
      chatId,
      parentId: this.parentOf(value, chatId, source),
      startMs: this.startMs(value, source),
      input: this.tokens(value, 'input_length', source),
      output: this.tokens(value, 'output_length', source),
      type: str(value['type']),
      turn: count(value['turn']),
      hashes: hashIds(value['hash_ids']),
      source,
    };
    if (row.hashes === null)
      this.report(
        source,
        'warning',
        `chat ${chatId}: "hash_ids" should be an array of integers: its cache figures are unknown.`,
      );
    else if (row.input !== null) {
      const problem = blockCountProblem(row.hashes, row.input, BAILIAN_BLOCK_TOKENS);
      if (problem !== null) this.report(source, 'warning', `chat ${chatId}: ${problem}`);
    }
    this.rows.push(row);
    this.byId.set(chatId, row);
  }

  finish(): ReaderResult {
    const children = new Map<ChatRow, ChatRow[]>();
    for (const row of this.rows) {
      const parent = this.parent(row);
      if (parent) pushTo(children, parent, row);
      else if (row.parentId !== null && !this.byId.has(row.parentId)) {
        this.report(
          row.source,
          'info',
          `chat ${row.chatId} follows chat ${row.parentId}, which is not in this file (a cut slice?): it starts its own session, and its cached tokens are unknown.`,
        );
      }
    }
    const groups = new Map<ChatRow, ChatRow[]>();
    for (const row of this.rows) {
      const root = this.rootOf(row);
      pushTo(groups, root, row);
    }
    for (const [parent, kids] of children) {
      if (kids.length < 2) continue;
      this.report(
        parent.source,
        'info',
        `chat ${parent.chatId} has ${kids.length} follow-ups (chats ${kids.map((k) => k.chatId).join(', ')}): the conversation branches. ` +
          `All stay in session ${this.rootOf(parent).chatId}, each compared with chat ${parent.chatId}.`,
      );
    }
    const sessions = [...groups].map(([root, rows]) => this.session(root, rows));
    return { sessions, diagnostics: this.diagnostics, skippedRecords: {} };
  }

  private session(root: ChatRow, rows: ChatRow[]): Session {
    const calls: LlmCall[] = [];
    const turns: UserTurn[] = [];
    for (const row of rows) {
      const index = calls.length;
      turns.push({ index, startMs: row.startMs, preview: preview(row), source: row.source });
      calls.push({
        id: String(row.chatId),
        index,
        turn: index,
        model: null,
        startMs: row.startMs,
        endMs: null,
        tokens: this.callTokens(row),
        server: null,
        blocks: row.hashes === null ? null : { blockSizeTokens: BAILIAN_BLOCK_TOKENS, hashes: row.hashes },
        toolCalls: [],
        source: row.source,
      });
    }
    return {
      id: String(root.chatId),
      parentId: null,
      parentToolCallId: null,
      role: 'main',
      agent: null,
      model: null,
      cwd: null,
      title: null,
      calls,
      turns,
      compactions: [],
    };
  }

  private callTokens(row: ChatRow): LlmCall['tokens'] {
    let cached: number | null = null;
    if (row.input !== null) {
      if (row.parentId === null) cached = 0;
      else {
        const parent = this.parent(row);
        if (parent?.hashes && row.hashes)
          cached = hitTokens(commonPrefixBlocks(row.hashes, parent.hashes), BAILIAN_BLOCK_TOKENS, row.input);
      }
    }
    return {
      input: row.input,
      cached,
      appended: cached === null || row.input === null ? null : row.input - cached,
      cacheWrite: null,
      output: row.output,
      reasoningOutput: null,
    };
  }

  /** The parent row, when it is in the file and is not the row itself. */
  private parent(row: ChatRow): ChatRow | undefined {
    if (row.parentId === null || row.parentId === row.chatId) return undefined;
    return this.byId.get(row.parentId);
  }

  /** The first request of the row's conversation: the top of its parent chain within this file. */
  private rootOf(row: ChatRow): ChatRow {
    const path: ChatRow[] = [];
    const onPath = new Set<ChatRow>();
    let current = row;
    let root: ChatRow;
    for (;;) {
      const known = this.roots.get(current);
      if (known) {
        root = known;
        break;
      }
      if (onPath.has(current)) {
        // Broken data: the parents loop. Cut the loop here rather than walk forever.
        this.report(
          current.source,
          'warning',
          `chat ${current.chatId} is its own ancestor (parent_chat_id loop); its session starts here.`,
        );
        root = current;
        break;
      }
      path.push(current);
      onPath.add(current);
      const parent = this.parent(current);
      if (!parent) {
        root = current;
        break;
      }
      current = parent;
    }
    for (const r of path) this.roots.set(r, root);
    return root;
  }

  private parentOf(value: JsonObject, chatId: number, source: SourceRef): number | null {
    const parent = integer(value['parent_chat_id']);
    if (parent === null) {
      this.report(
        source,
        'warning',
        `chat ${chatId}: "parent_chat_id" should be an integer (−1 for a first request); read as a first request.`,
      );
      return null;
    }
    if (parent === chatId) {
      this.report(source, 'warning', `chat ${chatId} names itself as parent; read as a first request.`);
      return null;
    }
    return parent === ROOT_PARENT ? null : parent;
  }

  /** `timestamp` is float seconds since the trace start (docs/design/formats.md §12.8). */
  private startMs(value: JsonObject, source: SourceRef): number | null {
    const seconds = num(value['timestamp']);
    if (seconds === null || seconds < 0) {
      this.report(
        source,
        'warning',
        `"timestamp" should be seconds ≥ 0, not ${JSON.stringify(value['timestamp'] ?? null)}: start time unknown.`,
      );
      return null;
    }
    // Rounded to the microsecond: 322.612 × 1000 is 322612.00000000006 in floating point.
    return Math.round(seconds * 1e6) / 1e3;
  }

  private tokens(value: JsonObject, key: string, source: SourceRef): number | null {
    const n = count(value[key]);
    if (n === null)
      this.report(
        source,
        'warning',
        `"${key}" should be a whole token count, not ${JSON.stringify(value[key] ?? null)}: read as unknown.`,
      );
    return n;
  }

  private report(source: SourceRef, severity: Diagnostic['severity'], message: string): void {
    this.diagnostics.push({ file: source.file, line: source.line, severity, message });
  }
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function integer(value: unknown): number | null {
  const n = num(value);
  return n !== null && Number.isSafeInteger(n) ? n : null;
}

function preview(row: ChatRow): string {
  const turn = row.turn === null ? 'request' : `turn ${row.turn}`;
  return row.type === null ? turn : `${turn} · ${row.type}`;
}
