/**
 * The context anatomy's model (docs/guide/context.md): what each call's input is made of, by
 * source, with tokens and carried-forward dollars. Pure types and small helpers.
 */

import { widened } from '../typedArrays';

/** Where a part of the context came from. */
export type PartKind =
  | 'system'
  | 'memory'
  | 'mcpSchemas'
  | 'userText'
  | 'injected'
  | 'toolUse'
  | 'toolResult'
  | 'subagentResult'
  | 'assistantText'
  | 'thinking'
  | 'compactionSummary'
  | 'restored';

/** Every part kind, in the order they are shown. */
export const PART_KINDS: readonly PartKind[] = [
  'system',
  'memory',
  'mcpSchemas',
  'userText',
  'injected',
  'toolUse',
  'toolResult',
  'subagentResult',
  'assistantText',
  'thinking',
  'compactionSummary',
  'restored',
];

/** What a part kind is, in words for tables. */
export const PART_KIND_LABELS: Readonly<Record<PartKind, string>> = {
  system: 'system prompt and tool definitions (not logged)',
  memory: 'memory files',
  mcpSchemas: 'MCP tool schemas',
  userText: 'typed user text',
  injected: 'agent-written input (notifications, hooks, commands)',
  toolUse: 'tool calls the model wrote',
  toolResult: 'tool results',
  subagentResult: 'sub-agent results',
  assistantText: 'assistant text carried forward',
  thinking: 'thinking carried forward',
  compactionSummary: 'compaction summaries',
  restored: 'restored after a compaction (not logged)',
};

/**
 * One piece of text the log shows entering the context, before it is counted. `line` is its
 * 0-based line in file `file`, so pieces and calls sort into the order the agent sent them.
 */
export interface ContentPiece {
  kind: PartKind;
  file: number;
  line: number;
  /** The text as the model saw it (or as close as the log keeps it). */
  text: string;
  /** Tool name, for tool uses and results. */
  tool: string | null;
  /** MCP server, for `mcp__server__tool` tools. */
  mcpServer: string | null;
  /** File a read or edit targeted. */
  targetFile: string | null;
  /** Shell command, for shell tools. */
  command: string | null;
  /** The log keeps only a size for this piece (characters), not its text: counted as an estimate; null when the text is there. */
  charsOnly: number | null;
  /** Tokens counted while collecting (the text is then not kept: `text` is empty); null = count `text` later. */
  tokens: number | null;
  /**
   * For the model's own text and tool calls: the assistant message (turn) they belong to, shared
   * by its pieces, with the output tokens the log gives for it. Absent or null for other pieces.
   */
  turn?: AssistantTurn | null;
  /** True when `tokens` is not a count of text but a size the log gives (Codex's encrypted reasoning): an estimate. */
  estimated?: boolean;
}

/**
 * One assistant message as the log gives it: the largest output token count logged on any of its
 * records (Claude Code writes a message's usage on every content block's record, growing while it
 * streams) and whether it holds thinking.
 */
export interface AssistantTurn {
  output: number;
  thinking: boolean;
}

/** A piece of the context once counted, alive from `firstCall` to `lastCall` (inclusive). */
export interface ContextPart {
  id: number;
  kind: PartKind;
  tool: string | null;
  mcpServer: string | null;
  targetFile: string | null;
  command: string | null;
  /** Tokens after the session's calibration factor. */
  tokens: number;
  /** True when the count is not from logged text (the unseen base, size-only pieces). */
  estimated: boolean;
  /** First call whose input holds it. */
  firstCall: number;
  /** Last call whose input holds it (the session's last call, or the one before a compaction). */
  lastCall: number;
  /** Dollars of its tokens in every call that carried it: first write, cache reads, re-writes. Null when no call was priced. */
  usd: number | null;
  /** Of `usd`, what was paid at the cache-read rate. */
  cacheReadUsd: number;
  /** Of `usd`, what was paid at the input / cache-write rate (first write and re-writes). */
  writeUsd: number;
  /** How many priced calls wrote it (1 = written once, more = re-written after an expiry or compaction). */
  writes: number;
}

/** One call's input by part kind, counted and logged. */
export interface CallAnatomy {
  index: number;
  /** Tokens by kind (estimated included). */
  byKind: Record<PartKind, number>;
  /** Σ parts. */
  estimatedInput: number;
  /** The log's whole prompt, or null when it does not say. */
  loggedInput: number | null;
  /** Tokens the log says were appended since the previous call (input growth), when both inputs are known and no compaction lies between. */
  loggedGrowth: number | null;
  /** Tokens the parts say were appended since the previous call (calibrated). */
  estimatedGrowth: number;
  /** Input-side dollars of this call (null when unpriced). */
  inputUsd: number | null;
}

/** How well the tokenizer matched the log in one session. */
export interface Calibration {
  /** Tokenizer used, e.g. "o200k_base (gpt-tokenizer)". */
  tokenizer: string;
  /** Tokens per tokenizer token, fitted against the logged input growth; 1 when nothing could be compared. */
  factor: number;
  /** Tokens added to every piece for its framing (fitted; 0 when the fit is not possible). */
  perPiece: number;
  /** Tokens added to every call's appended pieces together for the framing of its two messages (fitted; 0 when not fitted: only one of perPiece and perCall is). */
  perCall: number;
  /** Calls whose logged growth could be compared. */
  comparedCalls: number;
  /** Median |counted − logged| ÷ logged growth before the factor (null when nothing to compare). */
  medianAbsErrorRaw: number | null;
  /** The same after the factor. */
  medianAbsError: number | null;
  /** Median |Σ parts − logged input| ÷ logged input over calls. */
  medianInputError: number | null;
  /**
   * The calibration's error when each call is predicted from the session's earlier calls only
   * (never from itself or later ones): the honest figure for a call not yet seen.
   */
  predictive: PredictiveCalibration;
}

/** The calibration learnt call by call from earlier calls only (docs/guide/context.md#tokenizers). */
export interface PredictiveCalibration {
  /** Compared calls that were predicted (from the fourth compared call on). */
  comparedCalls: number;
  /** Median |predicted − logged| ÷ logged growth over them (null when none). */
  medianAbsError: number | null;
  /** The tokenizer's count alone on the same calls, for comparison. */
  medianAbsErrorRaw: number | null;
}

/** The anatomy of one session. */
export interface SessionAnatomy {
  sessionId: string;
  role: 'main' | 'subagent' | 'compaction';
  model: string | null;
  /** Where the content came from: the log's text, or only the sizes the model keeps. */
  content: 'text' | 'sizes';
  calls: CallAnatomy[];
  parts: ContextPart[];
  calibration: Calibration;
  /** What is estimated and why, in words. */
  notes: string[];
}

/** A kind → 0 record. */
export function zeroKinds(): Record<PartKind, number> {
  const r = {} as Record<PartKind, number>;
  for (const k of PART_KINDS) r[k] = 0;
  return r;
}

/**
 * A kind → tokens record from sums indexed by kind id (KIND_ID): one object literal, its keys
 * in PART_KINDS order as zeroKinds makes them (a call's byKind; a spread of a record built key
 * by key made a slower, larger object per call).
 */
export function kindsRecord(t: Float64Array): Record<PartKind, number> {
  return {
    system: t[0]!,
    memory: t[1]!,
    mcpSchemas: t[2]!,
    userText: t[3]!,
    injected: t[4]!,
    toolUse: t[5]!,
    toolResult: t[6]!,
    subagentResult: t[7]!,
    assistantText: t[8]!,
    thinking: t[9]!,
    compactionSummary: t[10]!,
    restored: t[11]!,
  };
}

/** The MCP server of a tool named `mcp__server__tool` (Claude Code's and Codex's naming), else null. */
export function mcpServerOf(toolName: string | null): string | null {
  if (toolName === null || !toolName.startsWith('mcp__')) return null;
  const rest = toolName.slice(5);
  const end = rest.indexOf('__');
  return end > 0 ? rest.slice(0, end) : null;
}

/** A part kind's id in a column: its index in PART_KINDS. */
export const KIND_ID: Readonly<Record<PartKind, number>> = Object.fromEntries(
  PART_KINDS.map((k, i) => [k, i]),
) as Record<PartKind, number>;

/** What a tool piece names: its tool, MCP server, file and command (one object shared by a call and its output). */
export interface PieceSource {
  tool: string | null;
  mcpServer: string | null;
  targetFile: string | null;
  command: string | null;
}

/**
 * Pieces as columns, one typed array per field (docs/performance.md#context-anatomy-benchcontext):
 * a 1 GB log has hundreds of thousands of pieces, and an object each was most of what the
 * collector kept alive and the collector's garbage collection copied. Piece i is what
 * ContentPiece would say, field by field: null numbers are NaN, `turn` an index into `turns`
 * (−1: none), `source` the tool's names (null: none), `text` null when every text is empty.
 */
export interface PieceColumns {
  readonly length: number;
  readonly kind: Uint8Array;
  readonly file: Int32Array;
  readonly line: Int32Array;
  readonly tokens: Float64Array;
  readonly charsOnly: Float64Array;
  readonly estimated: Uint8Array;
  readonly turn: Int32Array;
  readonly turns: readonly AssistantTurn[];
  readonly source: readonly (PieceSource | null)[];
  readonly text: readonly string[] | null;
}

/** Pieces appended one at a time into growing columns (the Codex collector's store). */
export class PieceColumnsBuilder implements PieceColumns {
  length = 0;
  kind = new Uint8Array(64);
  file = new Int32Array(64);
  line = new Int32Array(64);
  tokens = new Float64Array(64);
  charsOnly = new Float64Array(64);
  estimated = new Uint8Array(64);
  turn = new Int32Array(64);
  readonly turns: AssistantTurn[] = [];
  readonly source: (PieceSource | null)[] = [];
  /** null: texts are not kept (counted as they come). */
  readonly text: string[] | null;

  constructor(keepText: boolean) {
    this.text = keepText ? [] : null;
  }

  /** A turn's index, for push. */
  addTurn(turn: AssistantTurn): number {
    this.turns.push(turn);
    return this.turns.length - 1;
  }

  /** Appends a piece; returns its index. `tokens` NaN: not counted; `turn` −1: none. */
  push(
    kind: PartKind,
    file: number,
    line: number,
    text: string,
    source: PieceSource | null,
    tokens: number,
    turn: number,
    estimated: boolean,
  ): number {
    const i = this.length;
    if (i === this.kind.length) this.grow();
    this.kind[i] = KIND_ID[kind];
    this.file[i] = file;
    this.line[i] = line;
    this.tokens[i] = tokens;
    this.charsOnly[i] = Number.NaN;
    this.estimated[i] = estimated ? 1 : 0;
    this.turn[i] = turn;
    this.source.push(source);
    this.text?.push(text);
    this.length = i + 1;
    return i;
  }

  private grow(): void {
    const n = this.kind.length * 2;
    this.kind = widened(this.kind, n);
    this.file = widened(this.file, n);
    this.line = widened(this.line, n);
    this.tokens = widened(this.tokens, n);
    this.charsOnly = widened(this.charsOnly, n);
    this.estimated = widened(this.estimated, n);
    this.turn = widened(this.turn, n);
  }
}

/** The pieces as objects (for callers that want ContentPiece[]: tests, tools); the same fields the columns hold. */
export function piecesOfColumns(c: PieceColumns): ContentPiece[] {
  const out: ContentPiece[] = [];
  for (let i = 0; i < c.length; i++) {
    const s = c.source[i] ?? null;
    const tokens = c.tokens[i]!;
    const chars = c.charsOnly[i]!;
    const turn = c.turn[i]!;
    out.push({
      kind: PART_KINDS[c.kind[i]!]!,
      file: c.file[i]!,
      line: c.line[i]!,
      text: c.text === null ? '' : c.text[i]!,
      tool: s === null ? null : s.tool,
      mcpServer: s === null ? null : s.mcpServer,
      targetFile: s === null ? null : s.targetFile,
      command: s === null ? null : s.command,
      charsOnly: Number.isNaN(chars) ? null : chars,
      tokens: Number.isNaN(tokens) ? null : tokens,
      turn: turn < 0 ? null : c.turns[turn]!,
      estimated: c.estimated[i] === 1,
    });
  }
  return out;
}

/**
 * ContentPiece objects as columns (what the anatomy reads): the objects themselves serve as
 * the sources, a turn keeps its object (a run of pieces of one turn gets one index).
 */
export function columnsOfPieces(pieces: readonly ContentPiece[]): PieceColumns {
  const n = pieces.length;
  const kind = new Uint8Array(n);
  const file = new Int32Array(n);
  const line = new Int32Array(n);
  const tokens = new Float64Array(n);
  const charsOnly = new Float64Array(n);
  const estimated = new Uint8Array(n);
  const turn = new Int32Array(n);
  const turns: AssistantTurn[] = [];
  let text: string[] | null = null;
  let lastTurn: AssistantTurn | null = null;
  for (let i = 0; i < n; i++) {
    const p = pieces[i]!;
    kind[i] = KIND_ID[p.kind];
    file[i] = p.file;
    line[i] = p.line;
    tokens[i] = p.tokens ?? Number.NaN;
    charsOnly[i] = p.charsOnly ?? Number.NaN;
    estimated[i] = p.estimated === true ? 1 : 0;
    const t = p.turn ?? null;
    if (t === null) turn[i] = -1;
    else {
      if (t !== lastTurn) {
        turns.push(t);
        lastTurn = t;
      }
      turn[i] = turns.length - 1;
    }
    if (p.text !== '') {
      text ??= new Array<string>(n).fill('');
      text[i] = p.text;
    }
  }
  return { length: n, kind, file, line, tokens, charsOnly, estimated, turn, turns, source: pieces, text };
}

/**
 * A session's parts as columns (docs/performance.md#context-anatomy-benchcontext): part i is what
 * ContextPart i says, field by field (`usd` NaN: null, `source` the tool's names or null). The
 * anatomy charges its dollars into these columns and the report reads them; the objects
 * (SessionAnatomy.parts) are built only when something asks for them: a 1 GB log has hundreds
 * of thousands of parts, and an object each (three boxed dollars, a boxed count) was most of
 * what the anatomy kept alive and collected.
 */
export interface PartColumns {
  readonly length: number;
  readonly kind: Uint8Array;
  readonly source: readonly (PieceSource | null)[];
  readonly tokens: Float64Array;
  readonly estimated: Uint8Array;
  readonly firstCall: Int32Array;
  readonly lastCall: Int32Array;
  readonly usd: Float64Array;
  readonly cacheReadUsd: Float64Array;
  readonly writeUsd: Float64Array;
  readonly writes: Int32Array;
}

/** Parts appended one at a time into growing columns (the anatomy's store while it charges the calls). */
export class PartColumnsBuilder implements PartColumns {
  length = 0;
  kind: Uint8Array;
  readonly source: (PieceSource | null)[] = [];
  tokens: Float64Array;
  estimated: Uint8Array;
  firstCall: Int32Array;
  lastCall: Int32Array;
  usd: Float64Array;
  cacheReadUsd: Float64Array;
  writeUsd: Float64Array;
  writes: Int32Array;

  /** `capacity`: the parts expected (the columns grow past it, twice each time). */
  constructor(capacity = 1024) {
    const n = Math.max(1, capacity);
    this.kind = new Uint8Array(n);
    this.tokens = new Float64Array(n);
    this.estimated = new Uint8Array(n);
    this.firstCall = new Int32Array(n);
    this.lastCall = new Int32Array(n);
    this.usd = new Float64Array(n);
    this.cacheReadUsd = new Float64Array(n);
    this.writeUsd = new Float64Array(n);
    this.writes = new Int32Array(n);
  }

  /** Appends a part alive at call `call` (not yet charged: usd null, the rest 0); returns its id. */
  push(kind: number, source: PieceSource | null, tokens: number, estimated: boolean, call: number): number {
    const i = this.length;
    if (i === this.kind.length) this.grow();
    this.kind[i] = kind;
    this.source.push(source);
    this.tokens[i] = tokens;
    this.estimated[i] = estimated ? 1 : 0;
    this.firstCall[i] = call;
    this.lastCall[i] = call;
    this.usd[i] = Number.NaN;
    this.length = i + 1;
    return i;
  }

  private grow(): void {
    const n = this.kind.length * 2;
    this.kind = widened(this.kind, n);
    this.tokens = widened(this.tokens, n);
    this.estimated = widened(this.estimated, n);
    this.firstCall = widened(this.firstCall, n);
    this.lastCall = widened(this.lastCall, n);
    this.usd = widened(this.usd, n);
    this.cacheReadUsd = widened(this.cacheReadUsd, n);
    this.writeUsd = widened(this.writeUsd, n);
    this.writes = widened(this.writes, n);
  }
}

/** The parts as objects, in id order (SessionAnatomy.parts). */
export function partsOfColumns(c: PartColumns): ContextPart[] {
  const out: ContextPart[] = new Array<ContextPart>(c.length);
  for (let i = 0; i < c.length; i++) {
    const s = c.source[i] ?? null;
    const usd = c.usd[i]!;
    out[i] = {
      id: i,
      kind: PART_KINDS[c.kind[i]!]!,
      tool: s === null ? null : s.tool,
      mcpServer: s === null ? null : s.mcpServer,
      targetFile: s === null ? null : s.targetFile,
      command: s === null ? null : s.command,
      tokens: c.tokens[i]!,
      estimated: c.estimated[i] === 1,
      firstCall: c.firstCall[i]!,
      lastCall: c.lastCall[i]!,
      usd: Number.isNaN(usd) ? null : usd,
      cacheReadUsd: c.cacheReadUsd[i]!,
      writeUsd: c.writeUsd[i]!,
      writes: c.writes[i]!,
    };
  }
  return out;
}

/** ContextPart objects as columns (a session built without them: views, tests); the parts serve as their own sources. */
export function columnsOfParts(parts: readonly ContextPart[]): PartColumns {
  const n = parts.length;
  const c = {
    length: n,
    kind: new Uint8Array(n),
    source: parts,
    tokens: new Float64Array(n),
    estimated: new Uint8Array(n),
    firstCall: new Int32Array(n),
    lastCall: new Int32Array(n),
    usd: new Float64Array(n),
    cacheReadUsd: new Float64Array(n),
    writeUsd: new Float64Array(n),
    writes: new Int32Array(n),
  };
  for (let i = 0; i < n; i++) {
    const p = parts[i]!;
    c.kind[i] = KIND_ID[p.kind];
    c.tokens[i] = p.tokens;
    c.estimated[i] = p.estimated ? 1 : 0;
    c.firstCall[i] = p.firstCall;
    c.lastCall[i] = p.lastCall;
    c.usd[i] = p.usd ?? Number.NaN;
    c.cacheReadUsd[i] = p.cacheReadUsd;
    c.writeUsd[i] = p.writeUsd;
    c.writes[i] = p.writes;
  }
  return c;
}

/**
 * A session's calls as columns (as PartColumns for the parts): call k is what CallAnatomy k
 * says; `byKind` holds its tokens by kind id at k × PART_KINDS.length; `has` flags which of the
 * nullable fields are set (HAS_LOGGED_INPUT, HAS_LOGGED_GROWTH, HAS_INPUT_USD).
 */
export interface CallColumns {
  readonly length: number;
  readonly index: Int32Array;
  readonly byKind: Float64Array;
  readonly estimatedInput: Float64Array;
  readonly loggedInput: Float64Array;
  readonly loggedGrowth: Float64Array;
  readonly estimatedGrowth: Float64Array;
  readonly inputUsd: Float64Array;
  readonly has: Uint8Array;
}

export const HAS_LOGGED_INPUT = 1;
export const HAS_LOGGED_GROWTH = 2;
export const HAS_INPUT_USD = 4;

/** Empty call columns with room for n calls (the anatomy fills them call by call). */
export function newCallColumns(n: number): CallColumns {
  return {
    length: n,
    index: new Int32Array(n),
    byKind: new Float64Array(n * PART_KINDS.length),
    estimatedInput: new Float64Array(n),
    loggedInput: new Float64Array(n),
    loggedGrowth: new Float64Array(n),
    estimatedGrowth: new Float64Array(n),
    inputUsd: new Float64Array(n),
    has: new Uint8Array(n),
  };
}

/** The calls as objects, in order (SessionAnatomy.calls). */
export function callsOfColumns(c: CallColumns): CallAnatomy[] {
  const out: CallAnatomy[] = new Array<CallAnatomy>(c.length);
  for (let k = 0; k < c.length; k++) {
    const has = c.has[k]!;
    out[k] = {
      index: c.index[k]!,
      byKind: kindsRecord(c.byKind.subarray(k * PART_KINDS.length, (k + 1) * PART_KINDS.length)),
      estimatedInput: c.estimatedInput[k]!,
      loggedInput: (has & HAS_LOGGED_INPUT) !== 0 ? c.loggedInput[k]! : null,
      loggedGrowth: (has & HAS_LOGGED_GROWTH) !== 0 ? c.loggedGrowth[k]! : null,
      estimatedGrowth: c.estimatedGrowth[k]!,
      inputUsd: (has & HAS_INPUT_USD) !== 0 ? c.inputUsd[k]! : null,
    };
  }
  return out;
}

/** CallAnatomy objects as columns (a session built without them: views, tests). */
export function columnsOfCalls(calls: readonly CallAnatomy[]): CallColumns {
  const c = newCallColumns(calls.length);
  calls.forEach((call, k) => {
    c.index[k] = call.index;
    PART_KINDS.forEach((kind, i) => (c.byKind[k * PART_KINDS.length + i] = call.byKind[kind]));
    c.estimatedInput[k] = call.estimatedInput;
    c.estimatedGrowth[k] = call.estimatedGrowth;
    let has = 0;
    if (call.loggedInput !== null) {
      c.loggedInput[k] = call.loggedInput;
      has |= HAS_LOGGED_INPUT;
    }
    if (call.loggedGrowth !== null) {
      c.loggedGrowth[k] = call.loggedGrowth;
      has |= HAS_LOGGED_GROWTH;
    }
    if (call.inputUsd !== null) {
      c.inputUsd[k] = call.inputUsd;
      has |= HAS_INPUT_USD;
    }
    c.has[k] = has;
  });
  return c;
}

/** The columns the anatomy kept for a session it built (see sessionWithColumns). */
const columnsOfSession = new WeakMap<SessionAnatomy, { parts: PartColumns; calls: CallColumns }>();

/**
 * A session whose `calls` and `parts` are built from these columns the first time they are
 * read (then kept), the columns themselves found again by partColumnsOf and callColumnsOf.
 * Both are own enumerable properties (getters), so a spread, a structured clone or JSON see
 * the objects.
 */
export function sessionWithColumns(
  fields: Omit<SessionAnatomy, 'parts' | 'calls'>,
  partColumns: PartColumns,
  callColumns: CallColumns,
): SessionAnatomy {
  let parts: ContextPart[] | null = null;
  let calls: CallAnatomy[] | null = null;
  const session: SessionAnatomy = {
    sessionId: fields.sessionId,
    role: fields.role,
    model: fields.model,
    content: fields.content,
    get calls(): CallAnatomy[] {
      return (calls ??= callsOfColumns(callColumns));
    },
    get parts(): ContextPart[] {
      return (parts ??= partsOfColumns(partColumns));
    },
    calibration: fields.calibration,
    notes: fields.notes,
  };
  columnsOfSession.set(session, { parts: partColumns, calls: callColumns });
  return session;
}

/** A session's parts as columns: the anatomy's own, or built from its `parts` (a session made otherwise). */
export function partColumnsOf(session: SessionAnatomy): PartColumns {
  return columnsOfSession.get(session)?.parts ?? columnsOfParts(session.parts);
}

/** A session's calls as columns: the anatomy's own, or built from its `calls`. */
export function callColumnsOf(session: SessionAnatomy): CallColumns {
  return columnsOfSession.get(session)?.calls ?? columnsOfCalls(session.calls);
}
