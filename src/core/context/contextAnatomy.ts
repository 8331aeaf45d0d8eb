import { priceCall, pricingContext } from '../cost/callCost';
import type { CallCosts, TraceCost } from '../cost/callCost';
import { COST_KINDS } from '../cost/costTypes';
import type { PriceBook } from '../cost/costTypes';
import type { FormatId, Session, TraceModel } from '../trace/model';
import type { CollectedContent } from './claudeCodeContent';
import {
  KIND_ID,
  PART_KINDS,
  HAS_INPUT_USD,
  HAS_LOGGED_GROWTH,
  HAS_LOGGED_INPUT,
  PartColumnsBuilder,
  columnsOfPieces,
  mcpServerOf,
  newCallColumns,
  sessionWithColumns,
} from './contextParts';
import type {
  Calibration,
  ContentPiece,
  PartKind,
  PieceColumns,
  PredictiveCalibration,
  SessionAnatomy,
} from './contextParts';
import { CHARS_PER_TOKEN_ESTIMATE, medianInPlace } from './tokenCounter';
import type { TokenCounterFor } from './tokenCounter';
import { widened } from '../typedArrays';

/** What the anatomy needs besides the model. */
export interface AnatomyOptions {
  /** Text the log carries, when a collector ran beside the reader (Claude Code); null = sizes only. */
  content: CollectedContent | null;
  tokenizer: TokenCounterFor;
  /** Prices; null leaves dollars null. */
  prices: PriceBook | null;
  /**
   * The trace already priced with the same book (priceTrace), when the caller has it: each
   * call's dollars are then read from it instead of priced a second time (the same figures).
   */
  costs?: TraceCost | null;
  /** Notes about the whole trace from the caller (how much text was counted by length only). */
  notes?: string[];
}

/** The anatomy of every session of a trace, in the model's order. */
export interface TraceAnatomy {
  format: FormatId | null;
  sessions: SessionAnatomy[];
  notes: string[];
}

/**
 * Builds the context anatomy of a trace: a pass over the calls the reader produced (the
 * readers are untouched). Per session: the pieces each call appended, counted with the
 * model family's tokenizer, scaled by the session's calibration factor (logged input growth ÷
 * counted growth); the part nobody logs (system prompt, tool definitions, memory files) is
 * the first call's logged input minus what is visible, marked as an estimate; each part's
 * dollars are its share of every call that carried it, read or written as the call's logged
 * cached prefix says (docs/guide/context.md).
 */
export function contextAnatomy(model: TraceModel, options: AnatomyOptions): TraceAnatomy {
  return {
    format: model.format,
    sessions: model.sessions.map((s, i) =>
      sessionAnatomy(s, model.format, options, options.costs?.sessions[i]?.calls ?? null),
    ),
    notes: options.notes ?? [],
  };
}

/**
 * The pieces the calls appended, flat and in order: call k appended pieces[starts[k]] up to
 * (not including) pieces[starts[k + 1]] (those between call k−1 and call k). One array and one
 * index per call, not an array per call: a 1 GB log has ninety thousand calls.
 */
export interface AppendedPieces {
  /** As columns (the collector's, or built from its objects). */
  pieces: PieceColumns;
  /** Length calls + 1. */
  starts: Int32Array;
  fromText: boolean;
  unread: boolean[];
}

/**
 * What the anatomy reads of each call, gathered in one pass: the calls are objects spread over
 * the model's heap (hundreds of megabytes on a 1 GB log), and reading each one's tokens and line
 * again in every step (the pieces' split, the calibration, the charging) missed the cache each time.
 */
interface CallFields {
  /** Logged input tokens; meaningful where hasInput is 1 (null otherwise). */
  readonly input: Float64Array;
  readonly hasInput: Uint8Array;
  /** Logged cached input tokens (null read as 0). */
  readonly cached: Float64Array;
  readonly index: Int32Array;
  readonly file: Int32Array;
  readonly line: Int32Array;
}

function callFields(session: Session): CallFields {
  const n = session.calls.length;
  const f = {
    input: new Float64Array(n),
    hasInput: new Uint8Array(n),
    cached: new Float64Array(n),
    index: new Int32Array(n),
    file: new Int32Array(n),
    line: new Int32Array(n),
  };
  for (let k = 0; k < n; k++) {
    const call = session.calls[k]!;
    const tokens = call.tokens;
    const input = tokens.input;
    if (input !== null) {
      f.input[k] = input;
      f.hasInput[k] = 1;
    }
    f.cached[k] = tokens.cached ?? 0;
    f.index[k] = call.index;
    f.file[k] = call.source.file;
    f.line[k] = call.source.line;
  }
  return f;
}

/** Call k's logged input, or null. */
function inputOf(f: CallFields, k: number): number | null {
  return f.hasInput[k] === 1 ? f.input[k]! : null;
}

/** The pieces each call appended (see AppendedPieces). */
function piecesBeforeCalls(session: Session, content: CollectedContent | null, fields: CallFields): AppendedPieces {
  const n = session.calls.length;
  const starts = new Int32Array(n + 1);
  const unread = session.calls.map(() => false);
  const first = session.calls[0];
  const key = first && content ? content.keyOfCall(first.source.file, first.source.line) : undefined;
  const columns = key !== undefined ? content!.columns?.get(key) : undefined;
  const objects = key !== undefined && columns === undefined ? content!.pieces.get(key) : undefined;
  const pieces = columns ?? (objects ? columnsOfPieces(objects) : undefined);
  if (pieces && n > 0) {
    let k = 0;
    let i = 0;
    for (; i < pieces.length; i++) {
      // Call k's pieces end at the first piece not before it.
      while (k < n && !isBeforeLine(pieces, i, fields.file[k]!, fields.line[k]!)) starts[++k] = i;
      // Pieces after the last call (its own answer, a final result) reach no call's input.
      if (k === n) break;
    }
    while (k < n) starts[++k] = i;
    markUnread(session, content!.unreadLines, unread);
    return { pieces, starts, fromText: true, unread };
  }
  // Sizes only: each call's tool results and its own output enter the next call's input.
  const sized: ContentPiece[] = [];
  for (let k = 0; k < n; k++) {
    starts[k] = sized.length;
    if (k === 0) continue;
    const call = session.calls[k - 1]!;
    const out = call.tokens.output;
    if (out !== null && out > 0)
      sized.push(sizedPiece('assistantText', call.source, null, out * CHARS_PER_TOKEN_ESTIMATE, null, null));
    for (const t of call.toolCalls) {
      if (t.resultChars === null) continue;
      sized.push(sizedPiece('toolResult', call.source, t.name, t.resultChars, t.targetFile, t.command));
    }
  }
  starts[n] = sized.length;
  return { pieces: columnsOfPieces(sized), starts, fromText: false, unread };
}

/**
 * Claude models before Opus 4.5 drop the thinking of earlier turns from the prompt once a new
 * user turn starts (Anthropic's extended-thinking guide, "thinking blocks from previous
 * turns"); Opus 4.5 and later keep it. OpenAI models before GPT-5.6 drop the reasoning of
 * earlier turns alike (docs/guide/context.md#codex). Per call: the tokens of thinking that left the prompt just
 * before it, for the calibration (what a call appended minus what it dropped): `raw` of thinking
 * counted by the tokenizer, `fixed` of thinking the log sizes (knownTurnTokens).
 */
function droppedThinking(
  model: string | null,
  format: FormatId | null,
  appended: AppendedPieces,
  rawCounts: Float64Array,
  known: Float64Array,
  compactAt: ReadonlySet<number>,
): { raw: Float64Array; fixed: Float64Array } {
  const { pieces, starts } = appended;
  const calls = starts.length - 1;
  const raw = new Float64Array(calls);
  const fixed = new Float64Array(calls);
  const codex = format === 'codex' && appended.fromText && stripsEarlierReasoning(model);
  if (!(stripsEarlierThinking(model) || codex)) return { raw, fixed };
  let aliveRaw = 0;
  let aliveFixed = 0;
  if (codex) {
    // In order: the reasoning of the response that ended the turn precedes the user's message in the same call, and goes too.
    for (let k = 0; k < calls; k++) {
      if (compactAt.has(k)) aliveRaw = aliveFixed = 0;
      for (let i = starts[k]!; i < starts[k + 1]!; i++) {
        const kind = pieces.kind[i]!;
        if (kind === THINKING) {
          if (Number.isNaN(known[i]!)) aliveRaw += rawCounts[i]!;
          else aliveFixed += known[i]!;
        } else if (kind === USER_TEXT) {
          raw[k] = raw[k]! + aliveRaw;
          fixed[k] = fixed[k]! + aliveFixed;
          aliveRaw = aliveFixed = 0;
        }
      }
    }
    return { raw, fixed };
  }
  for (let k = 0; k < calls; k++) {
    if (compactAt.has(k)) aliveRaw = aliveFixed = 0;
    for (let i = starts[k]!; i < starts[k + 1]!; i++)
      if (pieces.kind[i] === USER_TEXT) {
        raw[k] = aliveRaw;
        fixed[k] = aliveFixed;
        aliveRaw = aliveFixed = 0;
        break;
      }
    for (let i = starts[k]!; i < starts[k + 1]!; i++)
      if (pieces.kind[i] === THINKING) {
        if (Number.isNaN(known[i]!)) aliveRaw += rawCounts[i]!;
        else aliveFixed += known[i]!;
      }
  }
  return { raw, fixed };
}

/**
 * True for the OpenAI models whose earlier turns' reasoning leaves the prompt at a new user
 * message: every model before GPT-5.6, which keeps all turns' reasoning
 * (docs/guide/context.md#codex).
 */
export function stripsEarlierReasoning(model: string | null): boolean {
  return !/gpt-(?:5\.(?:[6-9]|\d{2,})|[6-9]|\d{2,})(?!\d)/.test((model ?? '').toLowerCase());
}

/** True for the Claude models that strip earlier turns' thinking: every Claude model before Opus 4.5. */
export function stripsEarlierThinking(model: string | null): boolean {
  const m = (model ?? '').toLowerCase();
  if (!m.includes('claude')) return false;
  const keeps = /opus-4-[5-9](?!\d)|(opus|sonnet|haiku)-[5-9](?!\d)|(sonnet|haiku)-4-[6-9](?!\d)/;
  return !keeps.test(m);
}

/** unread[k] = a line the reader skipped lies between call k−1 and call k in their file: what call k appended is not all in the log. */
function markUnread(session: Session, lines: Map<number, number[]> | undefined, unread: boolean[]): void {
  if (!lines || lines.size === 0) return;
  for (let k = 1; k < session.calls.length; k++) {
    const a = session.calls[k - 1]!.source;
    const b = session.calls[k]!.source;
    const list = a.file === b.file ? lines.get(b.file) : undefined;
    if (!list) continue;
    // The first skipped line after call k−1's line (binary search), then whether it comes before call k's.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]! <= a.line) lo = mid + 1;
      else hi = mid;
    }
    if (lo < list.length && list[lo]! < b.line) unread[k] = true;
  }
}

/** How the Gemini CLI anatomy labels its counts (docs/guide/context.md#gemini-cli). */
const GEMINI_STANDIN = "a stand-in for Gemini's tokenizer";

/** True when piece i comes before a line (`at`) of the log. */
function isBefore(pieces: PieceColumns, i: number, at: { file: number; line: number }): boolean {
  return isBeforeLine(pieces, i, at.file, at.line);
}

/** True when piece i comes before line `line` of file `file`. */
function isBeforeLine(pieces: PieceColumns, i: number, file: number, line: number): boolean {
  const f = pieces.file[i]!;
  return f < file || (f === file && pieces.line[i]! < line);
}

function isColumns(pieces: PieceColumns | readonly ContentPiece[]): pieces is PieceColumns {
  return !Array.isArray(pieces);
}

const THINKING = KIND_ID.thinking;
const USER_TEXT = KIND_ID.userText;
const SYSTEM = KIND_ID.system;
const RESTORED = KIND_ID.restored;

function sizedPiece(
  kind: PartKind,
  at: { file: number; line: number },
  tool: string | null,
  chars: number,
  targetFile: string | null,
  command: string | null,
): ContentPiece {
  return {
    kind,
    file: at.file,
    line: at.line,
    text: '',
    tool,
    mcpServer: mcpServerOf(tool),
    targetFile,
    command,
    charsOnly: chars,
    tokens: null,
    turn: null,
  };
}

function sessionAnatomy(
  session: Session,
  format: FormatId | null,
  options: AnatomyOptions,
  costs: CallCosts | null,
): SessionAnatomy {
  const counter = options.tokenizer(session.model);
  const fields = callFields(session);
  const appended = piecesBeforeCalls(session, options.content, fields);
  const { pieces, starts, fromText, unread } = appended;
  const notes: string[] = [];
  const kept = session.compactions.filter((c) => !c.rewind);
  const compactAt = new Set(kept.map((c) => c.beforeCall));
  const compactionLine = new Map(kept.map((c) => [c.beforeCall, c.source] as const));
  // Tokenizer tokens per piece, aligned with `pieces` (pieces after the last call stay 0).
  const rawCounts = new Float64Array(pieces.length);
  for (let i = starts[0]!; i < starts[session.calls.length]!; i++) {
    const tokens = pieces.tokens[i]!;
    const chars = pieces.charsOnly[i]!;
    rawCounts[i] = !Number.isNaN(tokens)
      ? tokens
      : !Number.isNaN(chars)
        ? chars / CHARS_PER_TOKEN_ESTIMATE
        : counter.count(pieces.text === null ? '' : pieces.text[i]!);
  }
  const known = knownTurnTokens(appended, rawCounts);
  const dropped = droppedThinking(session.model, format, appended, rawCounts, known, compactAt);
  const calibration = calibrate(
    fields,
    appended,
    rawCounts,
    known,
    compactAt,
    unread,
    dropped,
    fromText
      ? format === 'gemini-cli'
        ? `${counter.name}, ${GEMINI_STANDIN}`
        : counter.name
      : `${counter.name}; sizes only`,
  );
  // A call's framing (perCall) is shared by the pieces it appended; a piece whose tokens the log gives is not scaled.
  const scaled = (i: number, k: number): number =>
    Math.round(
      (Number.isNaN(known[i]!) ? rawCounts[i]! * calibration.factor + calibration.perPiece : known[i]!) +
        calibration.perCall / Math.max(1, starts[k + 1]! - starts[k]!),
    );

  // The parts as columns (no object per part: a long session has hundreds of thousands); the objects are built only when read.
  // At most: the base, every piece a call appended, a restored part per compaction (no copy as they grow).
  const parts = new PartColumnsBuilder(1 + starts[session.calls.length]! - starts[0]! + kept.length);

  // The base nobody logs: the first call's input minus what it visibly holds.
  const first = session.calls[0];
  let visibleAtFirst = 0;
  if (first) for (let i = starts[0]!; i < starts[1]!; i++) visibleAtFirst += scaled(i, 0);
  const firstInput = first?.tokens.input ?? null;
  let baseTokens = 0;
  if (first && firstInput !== null) {
    baseTokens = Math.max(0, Math.round(firstInput - visibleAtFirst));
    if (firstInput < visibleAtFirst)
      notes.push('the first call logged less input than its visible text counts: the unseen base is taken as 0');
  } else if (first)
    notes.push("the first call's input is not logged: the system prompt and tool definitions cannot be estimated");
  if (format === 'codex' && fromText)
    notes.push(
      "tool definitions (MCP servers' schemas included) are not in the log: estimated as the first call's logged input minus the visible text; the base instructions and developer messages are counted from the log (as agent-written input), AGENTS.md as memory",
      "reasoning is logged encrypted: each response's reasoning is its logged reasoning tokens (estimated), and the reasoning of earlier turns leaves the prompt at a new user message",
    );
  else if (format === 'gemini-cli' && fromText)
    notes.push(
      "system instruction, tool definitions (MCP servers' schemas included) and GEMINI.md memory (sent in the system instruction) are not in the log: estimated together as the first call's logged input minus the visible text",
      `Gemini's tokenizer is not published for JavaScript: the text is counted with ${counter.name} as a stand-in, scaled by the session's calibration; the model's turns are their logged output tokens (its thoughts do not go back into the history)`,
    );
  else
    notes.push(
      "system prompt, tool definitions (MCP servers' schemas included) and memory files are not in the log: estimated together as the first call's logged input minus the visible text",
    );
  const unreadCalls = unread.filter(Boolean).length;
  if (unreadCalls > 0)
    notes.push(
      `${unreadCalls} call${unreadCalls === 1 ? '' : 's'} came after a line the reader could not read: what ${unreadCalls === 1 ? 'it' : 'they'} appended is partly missing from the log, so ${unreadCalls === 1 ? 'it is' : 'they are'} left out of the calibration`,
    );
  if (!fromText)
    notes.push(
      'the log keeps only sizes here: tool results counted as characters ÷ 4 and earlier output as its logged output tokens',
    );
  const base = first ? parts.push(SYSTEM, null, baseTokens, true, 0) : -1;

  const context = pricingContext(format, session);
  // The first segment sized for every part (a session without compaction has one segment: no copy as it grows).
  let live = new Segment(parts, base, parts.kind.length);
  // The calls as columns too (their objects are built only when read).
  const calls = newCallColumns(session.calls.length);
  let prevInput: number | null = null;
  for (let k = 0; k < session.calls.length; k++) {
    const compacted = compactAt.has(k) && k > 0;
    const boundary = compacted ? compactionLine.get(k) : undefined;
    if (compacted) {
      live.finish(k - 1);
      live = new Segment(parts, base);
    }
    let growth = 0;
    for (let i = starts[k]!; i < starts[k + 1]!; i++) {
      // What was appended before the compaction left the context with it.
      if (boundary !== undefined && isBefore(pieces, i, boundary)) continue;
      const tokens = scaled(i, k);
      growth += tokens;
      live.push(
        parts.push(
          pieces.kind[i]!,
          pieces.source[i] ?? null,
          tokens,
          !Number.isNaN(pieces.charsOnly[i]!) || pieces.estimated[i] === 1,
          k,
        ),
      );
    }
    const loggedInput = inputOf(fields, k);
    if (compacted && loggedInput !== null) {
      // After a compaction the agent re-attaches what it chose (recent files, plans) without logging it: the rest of the first input.
      const restored = Math.round(loggedInput - live.total);
      if (restored > 0) live.push(parts.push(RESTORED, null, restored, true, k));
    }
    const loggedGrowth =
      !compacted && k > 0 && prevInput !== null && loggedInput !== null ? loggedInput - prevInput : null;
    prevInput = loggedInput;
    const inputUsd = options.prices ? chargeCall(live, session.calls, k, fields, options.prices, context, costs) : null;
    calls.index[k] = k;
    calls.byKind.set(live.byKind, k * PART_KINDS.length);
    calls.estimatedInput[k] = live.total;
    calls.estimatedGrowth[k] = growth;
    let has = 0;
    if (loggedInput !== null) {
      calls.loggedInput[k] = loggedInput;
      has |= HAS_LOGGED_INPUT;
    }
    if (loggedGrowth !== null) {
      calls.loggedGrowth[k] = loggedGrowth;
      has |= HAS_LOGGED_GROWTH;
    }
    if (inputUsd !== null) {
      calls.inputUsd[k] = inputUsd;
      has |= HAS_INPUT_USD;
    }
    calls.has[k] = has;
  }
  if (session.calls.length > 0) live.finish(session.calls.length - 1);
  // Each logged call's |error| in a typed array, in call order, for its median.
  const errors = new Float64Array(calls.length);
  let logged = 0;
  for (let k = 0; k < calls.length; k++) {
    const loggedInput = calls.loggedInput[k]!;
    if ((calls.has[k]! & HAS_LOGGED_INPUT) !== 0 && loggedInput > 0)
      errors[logged++] = Math.abs(calls.estimatedInput[k]! - loggedInput) / loggedInput;
  }
  calibration.medianInputError = medianInPlace(errors.subarray(0, logged));
  return sessionWithColumns(
    {
      sessionId: session.id,
      role: session.role,
      model: session.model,
      content: fromText ? 'text' : 'sizes',
      calibration,
      notes,
    },
    parts,
    calls,
  );
}

/**
 * The tokens of the model's own turns as the log gives them: an assistant message goes back into
 * the next call's input as the tokens the model produced, so its logged output count is what its
 * text and tool calls add there (docs/guide/context.md#tokenizers), shared among its pieces in
 * proportion to their tokenizer counts. NaN for every other piece (counted and calibrated). A
 * message is left to the tokenizer when it holds thinking (the output counts the full thinking,
 * the log keeps a summary, and thinking may be dropped later) or when its logged output is below
 * its pieces' stand-in count: Claude's tokenizer splits these texts finer than `o200k_base`
 * (every session's calibration factor is above 1), so a smaller count is a usage logged before
 * the message finished streaming (Claude Code logs 1–9 output tokens on many first blocks).
 * Pieces the log sizes itself (`estimated`: Codex's encrypted reasoning, its logged reasoning
 * tokens) keep that size and the others share the rest of the output.
 */
export function knownTurnTokens(
  appended: Omit<AppendedPieces, 'pieces'> & { pieces: PieceColumns | readonly ContentPiece[] },
  rawCounts: Float64Array,
): Float64Array {
  const { starts } = appended;
  const pieces = isColumns(appended.pieces) ? appended.pieces : columnsOfPieces(appended.pieces);
  const known = new Float64Array(pieces.length).fill(Number.NaN);
  const end = starts[starts.length - 1]!;
  const turns = pieces.turn;
  const estimated = pieces.estimated;
  // A message's pieces are consecutive (its records follow one another), so a run of the same turn is the message.
  let i = starts[0]!;
  while (i < end) {
    const id = turns[i]!;
    let j = i + 1;
    if (id < 0) {
      i = j;
      continue;
    }
    const turn = pieces.turns[id]!;
    // Pieces the log itself sizes (Codex's reasoning: its logged reasoning tokens) keep their size; the rest share what is left.
    let raw = 0;
    let sized = 0;
    for (let m = i; m < end && (m === i || turns[m] === id); m++, j = m) {
      if (estimated[m] === 1) sized += rawCounts[m]!;
      else raw += rawCounts[m]!;
    }
    if (!turn.thinking && raw + sized > 0 && turn.output >= raw + sized)
      for (let m = i; m < j; m++) {
        if (raw === 0) known[m] = (turn.output * rawCounts[m]!) / sized;
        else known[m] = estimated[m] === 1 ? rawCounts[m]! : ((turn.output - sized) * rawCounts[m]!) / raw;
      }
    i = j;
  }
  return known;
}

/**
 * The session's calibration: each piece counts `factor × tokenizer tokens + perPiece`, and
 * each call's appended pieces together `+ perCall`, fitted so that what each call appended
 * sums to what the log says it appended (its input growth), over calls where both are
 * positive, no compaction lies between and no unreadable line hid part of what was appended.
 * The fit is least squares on relative error (every call weighs the same, large or small).
 * `perPiece` stands for the framing each content block carries (its type, the tool_use id a
 * result answers); `perCall` for the framing of the two messages every round adds (the
 * assistant's turn and the user turn after it), which the log does not show either. Only one
 * of the two framings is fitted at a time (together they are nearly collinear and the fit goes
 * negative); each needs three calls per fitted term. Without a fit the factor is the median
 * ratio, or 1. `dropped` is what the model no longer sees at call k (earlier thinking on
 * models that strip it at a new user turn): subtracted from what call k appended.
 */
function calibrate(
  fields: CallFields,
  { starts }: AppendedPieces,
  rawCounts: Float64Array,
  known: Float64Array,
  compactAt: ReadonlySet<number>,
  unread: readonly boolean[],
  dropped: { raw: Float64Array; fixed: Float64Array },
  tokenizer: string,
): Calibration {
  // The compared calls as columns (no object per call: a long session has a hundred thousand), in call order.
  const calls = fields.input.length;
  const rows = new RowColumns(calls);
  for (let k = 1; k < calls; k++) {
    if (compactAt.has(k) || unread[k]) continue;
    const a = inputOf(fields, k - 1);
    const b = inputOf(fields, k);
    if (a === null || b === null) continue;
    const logged = b - a;
    let sum = 0;
    let fixed = 0;
    let counted = 0;
    for (let i = starts[k]!; i < starts[k + 1]!; i++) {
      if (Number.isNaN(known[i]!)) {
        sum += rawCounts[i]!;
        counted++;
      } else fixed += known[i]!;
    }
    const raw = sum - dropped.raw[k]!;
    fixed -= dropped.fixed[k]!;
    if (logged > 0 && raw >= 0 && raw + fixed > 0) rows.add(raw, fixed, counted, logged);
  }
  const n = rows.length;
  const { raw, fixed, pieces, logged } = rows;
  // One buffer for every median below: each is taken in place, in the calls' order (as median() on a list).
  const scratch = new Float64Array(n);
  const errorOf = (c: Fit): number | null => {
    for (let i = 0; i < n; i++)
      scratch[i] =
        Math.abs(fixed[i]! + raw[i]! * c.factor + pieces[i]! * c.perPiece + c.perCall - logged[i]!) / logged[i]!;
    return medianInPlace(scratch.subarray(0, n));
  };
  let ratios = 0;
  for (let i = 0; i < n; i++) if (raw[i]! > 0) scratch[ratios++] = (logged[i]! - fixed[i]!) / raw[i]!;
  // The fits, the median ratio or none, whichever matches the log best: a fit on few or noisy calls can do worse than either.
  const candidates: Fit[] = [
    { factor: 1, perPiece: 0, perCall: 0 },
    {
      factor: medianInPlace(scratch.subarray(0, ratios)) ?? 1,
      perPiece: 0,
      perCall: 0,
    },
  ];
  const byPiece = fitRelative(rows, pieces);
  if (byPiece !== null) candidates.push({ factor: byPiece.factor, perPiece: byPiece.extra, perCall: 0 });
  const byCall = n >= 2 * MIN_ROWS_PER_TERM ? fitRelative(rows, null) : null;
  if (byCall !== null) candidates.push({ factor: byCall.factor, perPiece: 0, perCall: byCall.extra });
  let best = candidates[0]!;
  let bestError = errorOf(best);
  for (const c of candidates.slice(1)) {
    const e = errorOf(c);
    if (e !== null && bestError !== null && e < bestError) [best, bestError] = [c, e];
  }
  return {
    tokenizer,
    factor: best.factor,
    perPiece: best.perPiece,
    perCall: best.perCall,
    comparedCalls: n,
    medianAbsErrorRaw: errorOf({ factor: 1, perPiece: 0, perCall: 0 }),
    medianAbsError: bestError,
    medianInputError: null,
    predictive: predictiveOfColumns(rows),
  };
}

/** Compared calls as columns: what calibrate and the predictive calibration read, one typed array per field. */
class RowColumns {
  readonly raw: Float64Array;
  readonly fixed: Float64Array;
  readonly pieces: Float64Array;
  readonly logged: Float64Array;
  length = 0;

  constructor(capacity: number) {
    this.raw = new Float64Array(capacity);
    this.fixed = new Float64Array(capacity);
    this.pieces = new Float64Array(capacity);
    this.logged = new Float64Array(capacity);
  }

  add(raw: number, fixed: number, pieces: number, logged: number): void {
    const i = this.length++;
    this.raw[i] = raw;
    this.fixed[i] = fixed;
    this.pieces[i] = pieces;
    this.logged[i] = logged;
  }
}

/**
 * The calibration as it would have done had it known only the calls before each one: every
 * compared call's appended tokens predicted by a factor (and framing) fitted on the earlier
 * compared calls of its session alone, never on itself or later ones. Three ways are kept up
 * call by call (the tokenizer's count × a ratio; + a framing per piece; + a framing per call,
 * least squares on relative error as in calibrate), and each call is predicted by the one
 * whose own earlier predictions erred least on average: the choice, too, sees only the past.
 * Calls are scored from the fourth compared call on (three to learn from). O(1) per call.
 */
export function predictiveCalibration(rows: readonly CalibrationRow[]): PredictiveCalibration {
  const columns = new RowColumns(rows.length);
  for (const r of rows) columns.add(r.raw, r.fixed ?? 0, r.pieces, r.logged);
  return predictiveOfColumns(columns);
}

function predictiveOfColumns(rows: RowColumns): PredictiveCalibration {
  const ratio = new RunningFit(null, 1);
  const byPiece = new RunningFit(rows.pieces, MIN_ROWS_PER_TERM);
  const byCall = new RunningFit(ONE_PER_CALL, 2 * MIN_ROWS_PER_TERM);
  const fits = [ratio, byPiece, byCall];
  const n = rows.length;
  const errors = new Float64Array(n);
  const rawErrors = new Float64Array(n);
  let compared = 0;
  const { raw, fixed, logged } = rows;
  for (let i = 0; i < n; i++) {
    if (i >= MIN_ROWS_PER_TERM) {
      let best: RunningFit | null = null;
      for (const f of fits) if (f.scored > 0 && (best === null || f.meanError < best.meanError)) best = f;
      const predicted = (best ?? ratio).predict(rows, i);
      if (predicted !== null) {
        errors[compared] = Math.abs(predicted - logged[i]!) / logged[i]!;
        rawErrors[compared] = Math.abs(fixed[i]! + raw[i]! - logged[i]!) / logged[i]!;
        compared++;
      }
    }
    // Each way's own record on this call, then the call joins what they learn from.
    for (const f of fits) f.score(rows, i);
    for (const f of fits) f.add(rows, i);
  }
  return {
    comparedCalls: compared,
    medianAbsError: medianInPlace(errors.subarray(0, compared)),
    medianAbsErrorRaw: medianInPlace(rawErrors.subarray(0, compared)),
  };
}

/** The framing term of a fit per call: 1 for every call (read as a column, as the per-piece term is). */
const ONE_PER_CALL = 'perCall';

/** One way of calibrating, fitted on the calls added so far (sums of least squares on relative error), with its record of predictions. */
class RunningFit {
  private rows = 0;
  private sxx = 0;
  private sxy = 0;
  private syy = 0;
  private sxz = 0;
  private syz = 0;
  private errorSum = 0;
  scored = 0;

  /** `extra` null: the ratio alone; else the framing term's count per call (a column, or 1 for every call). `minRows`: calls it needs before it predicts (as calibrate's fits). */
  constructor(
    private readonly extra: Float64Array | typeof ONE_PER_CALL | null,
    private readonly minRows: number,
  ) {}

  get meanError(): number {
    return this.errorSum / this.scored;
  }

  private extraOf(i: number): number {
    const e = this.extra;
    return e === null ? 0 : e === ONE_PER_CALL ? 1 : e[i]!;
  }

  add(rows: RowColumns, i: number): void {
    const x = rows.raw[i]!;
    const y = this.extraOf(i);
    const logged = rows.logged[i]!;
    const w = 1 / (logged * logged);
    this.rows++;
    this.sxx += w * x * x;
    this.sxy += w * x * y;
    this.syy += w * y * y;
    const z = logged - rows.fixed[i]!;
    this.sxz += w * x * z;
    this.syz += w * y * z;
  }

  /** The appended tokens this way predicts for a call from the calls added so far; null before it has enough of them. */
  predict(rows: RowColumns, i: number): number | null {
    if (this.rows < this.minRows) return null;
    const fixed = rows.fixed[i]!;
    if (this.extra === null) return this.sxx > 0 ? fixed + (rows.raw[i]! * this.sxz) / this.sxx : null;
    const det = this.sxx * this.syy - this.sxy * this.sxy;
    if (!(Math.abs(det) > 1e-12 * this.sxx * this.syy)) return null;
    const factor = (this.sxz * this.syy - this.syz * this.sxy) / det;
    const extra = (this.sxx * this.syz - this.sxy * this.sxz) / det;
    if (!(factor > 0) || !(extra >= 0)) return null;
    return fixed + rows.raw[i]! * factor + this.extraOf(i) * extra;
  }

  score(rows: RowColumns, i: number): void {
    const p = this.predict(rows, i);
    if (p === null) return;
    const logged = rows.logged[i]!;
    this.errorSum += Math.abs(p - logged) / logged;
    this.scored++;
  }
}

/**
 * One compared call: tokenizer tokens it appended (of the pieces calibrated), how many such
 * pieces, the tokens of the pieces the log itself sizes (the model's turns: knownTurnTokens;
 * absent = 0), the logged growth.
 */
export interface CalibrationRow {
  raw: number;
  pieces: number;
  fixed?: number;
  logged: number;
}

interface Fit {
  factor: number;
  perPiece: number;
  perCall: number;
}

/** Compared calls needed per fitted term: fewer and a fit only follows the noise. */
const MIN_ROWS_PER_TERM = 3;

/** Least squares of logged ≈ a·raw + b·extra(row) with weights 1/logged² (relative error); null when degenerate or either term would be negative. */
function fitRelative(rows: RowColumns, extraOf: Float64Array | null): { factor: number; extra: number } | null {
  if (rows.length < MIN_ROWS_PER_TERM) return null;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  let sxz = 0;
  let syz = 0;
  const { raw, fixed, logged } = rows;
  for (let i = 0; i < rows.length; i++) {
    const x = raw[i]!;
    // null: one framing per call.
    const y = extraOf === null ? 1 : extraOf[i]!;
    const z = logged[i]! - fixed[i]!;
    const w = 1 / (logged[i]! * logged[i]!);
    sxx += w * x * x;
    sxy += w * x * y;
    syy += w * y * y;
    sxz += w * x * z;
    syz += w * y * z;
  }
  const det = sxx * syy - sxy * sxy;
  if (!(Math.abs(det) > 1e-12 * sxx * syy)) return null;
  const factor = (sxz * syy - syz * sxy) / det;
  const extra = (sxx * syz - sxy * sxz) / det;
  if (!(factor > 0) || !(extra >= 0)) return null;
  return { factor, extra };
}

/**
 * The parts alive between two compactions, in context order, with what every call charged
 * them. A call's cached prefix covers a run of whole parts, then splits one, then the rest was
 * written: the whole runs are added as ranges (difference arrays, summed when the segment
 * ends), the split part directly, so a call costs O(log parts), not O(parts): a long session
 * without compaction stays linear.
 */
class Segment {
  /** The ids of its parts (in `all`), in context order; the first `n` are used. */
  private ids: Int32Array;
  private n = 0;
  /** starts[j]: tokens before part j; starts[n] = total. */
  private starts: Float64Array;
  /** Tokens by kind id (KIND_ID). */
  readonly byKind = new Float64Array(PART_KINDS.length);
  total = 0;
  /** Range sums over part indices (length n + 1): $ per token read, $ per token written, calls that mostly wrote it, priced calls that carried it. */
  private readRate: Float64Array;
  private writeRate: Float64Array;
  private writes: Float64Array;
  private priced: Float64Array;
  /** No part has negative tokens, so `starts` never decreases: charge may search from the last call's answer. */
  private monotonic = true;
  /** The last call's number of whole parts read from the cache. */
  private hint = 0;

  /** `base`: the id of the part every segment starts with (−1: none); `capacity`: the parts expected (it grows past them). */
  constructor(
    private readonly all: PartColumnsBuilder,
    base: number,
    capacity = SEGMENT_CAPACITY,
  ) {
    const room = Math.max(1, capacity);
    this.ids = new Int32Array(room);
    this.starts = new Float64Array(room + 1);
    this.readRate = new Float64Array(room + 1);
    this.writeRate = new Float64Array(room + 1);
    this.writes = new Float64Array(room + 1);
    this.priced = new Float64Array(room + 1);
    if (base >= 0) this.push(base);
  }

  /** Adds part `id` (of `all`) at the end of the context. */
  push(id: number): void {
    const j = this.n;
    if (j + 1 === this.starts.length) this.grow();
    this.ids[j] = id;
    this.n = j + 1;
    const tokens = this.all.tokens[id]!;
    if (!(tokens >= 0)) this.monotonic = false;
    this.total += tokens;
    this.starts[j + 1] = this.total;
    this.byKind[this.all.kind[id]!]! += tokens;
  }

  /** Twice the room for parts, the columns copied. */
  private grow(): void {
    const room = (this.starts.length - 1) * 2 + 1;
    this.ids = widened(this.ids, room - 1);
    this.starts = widened(this.starts, room);
    this.readRate = widened(this.readRate, room);
    this.writeRate = widened(this.writeRate, room);
    this.writes = widened(this.writes, room);
    this.priced = widened(this.priced, room);
  }

  /** Charges one call: its parts scaled to `input` tokens, the first `cached` read at `readRate`, the rest at `writeRate`. */
  charge(input: number, cached: number, readRate: number, writeRate: number): void {
    const n = this.n;
    if (n === 0) return;
    const scale = input / this.total;
    rangeAdd(this.priced, 0, n, 1);
    // Whole parts inside the cached prefix: the largest i with starts[i] × scale ≤ cached.
    let lo = 0;
    let hi = n;
    const starts = this.starts;
    if (this.monotonic) {
      // A call's cached prefix mostly ends near where the last call's did: gallop from there, then
      // bisect. On a non-decreasing `starts` the answer is the same as bisecting all of [0, n]
      // (it is unique); bisecting it all touched ~19 cold entries of a 414k-part segment per call.
      const h = Math.min(this.hint, n);
      let step = 1;
      if (starts[h]! * scale <= cached) {
        lo = h;
        while (lo + step <= n) {
          if (starts[lo + step]! * scale <= cached) {
            lo += step;
            step *= 2;
          } else {
            hi = lo + step - 1;
            break;
          }
        }
      } else {
        let b = h;
        for (;;) {
          const p = Math.max(0, b - step);
          if (p === 0 || starts[p]! * scale <= cached) {
            lo = p;
            hi = Math.max(p, b - 1);
            break;
          }
          b = p;
          step *= 2;
        }
      }
    }
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! * scale <= cached) lo = mid;
      else hi = mid - 1;
    }
    this.hint = lo;
    rangeAdd(this.readRate, 0, lo, scale * readRate);
    if (lo < n) {
      const id = this.ids[lo]!;
      const all = this.all;
      const tokens = all.tokens[id]! * scale;
      const read = Math.max(0, Math.min(tokens, cached - starts[lo]! * scale));
      const written = tokens - read;
      all.cacheReadUsd[id]! += read * readRate;
      all.writeUsd[id]! += written * writeRate;
      const usd = all.usd[id]!;
      all.usd[id] = (Number.isNaN(usd) ? 0 : usd) + read * readRate + written * writeRate;
      if (written > tokens / 2 && tokens > 0) all.writes[id]! += 1;
      rangeAdd(this.writeRate, lo + 1, n, scale * writeRate);
      rangeAdd(this.writes, lo + 1, n, 1);
    }
  }

  /** The segment ends after call `lastCall`: every part left the context then; its ranges are summed into the parts. */
  finish(lastCall: number): void {
    const { all, ids, n } = this;
    let read = 0;
    let write = 0;
    let writes = 0;
    let priced = 0;
    for (let j = 0; j < n; j++) {
      read += this.readRate[j]!;
      write += this.writeRate[j]!;
      writes += this.writes[j]!;
      priced += this.priced[j]!;
      const id = ids[j]!;
      all.lastCall[id] = lastCall;
      if (priced <= 0) continue;
      const tokens = all.tokens[id]!;
      const r = tokens * read;
      const w = tokens * write;
      all.cacheReadUsd[id]! += r;
      all.writeUsd[id]! += w;
      const usd = all.usd[id]!;
      all.usd[id] = (Number.isNaN(usd) ? 0 : usd) + r + w;
      if (tokens > 0) all.writes[id]! += writes;
    }
  }
}

/** Parts a segment has room for before its columns grow (twice each time). */
const SEGMENT_CAPACITY = 1024;

function rangeAdd(diff: Float64Array, from: number, to: number, value: number): void {
  if (from >= to) return;
  diff[from]! += value;
  diff[to]! -= value;
}

/**
 * Charges a call's input dollars to the parts it carried. The parts are scaled to the logged
 * input (so they sum to the bill); in context order, the first `cached` tokens were cache
 * reads at the read rate, the rest written (or sent uncached) at the call's own write rate.
 */
function chargeCall(
  live: Segment,
  calls: Session['calls'],
  k: number,
  fields: CallFields,
  prices: PriceBook,
  context: { providerHint: string | null; selfHosted: boolean },
  costs: CallCosts | null,
): number | null {
  const input = inputOf(fields, k);
  if (input === null || input <= 0 || live.total <= 0) return null;
  let readUsd: number;
  let writeUsd: number;
  const index = fields.index[k]!;
  if (costs !== null && costs.length > index) {
    // The caller's pricing of this call: NaN kinds = unpriced or priced per GPU-hour, as a null byKind below.
    if (costs.usdOf(index) === null) return null;
    readUsd = costs.kindOf(index, CACHE_READ);
    writeUsd = costs.kindOf(index, INPUT) + costs.kindOf(index, CACHE_WRITE_5M) + costs.kindOf(index, CACHE_WRITE_1H);
    if (Number.isNaN(readUsd) || Number.isNaN(writeUsd)) return null;
  } else {
    const { cost } = priceCall(calls[k]!, prices, context);
    if (cost.usd === null || cost.byKind === null) return null;
    const byKind = cost.byKind;
    readUsd = byKind.cacheRead;
    writeUsd = byKind.input + byKind.cacheWrite5m + byKind.cacheWrite1h;
  }
  const cached = Math.min(fields.cached[k]!, input);
  live.charge(input, cached, cached > 0 ? readUsd / cached : 0, input - cached > 0 ? writeUsd / (input - cached) : 0);
  return readUsd + writeUsd;
}

const INPUT = COST_KINDS.indexOf('input');
const CACHE_READ = COST_KINDS.indexOf('cacheRead');
const CACHE_WRITE_5M = COST_KINDS.indexOf('cacheWrite5m');
const CACHE_WRITE_1H = COST_KINDS.indexOf('cacheWrite1h');

/** Kinds in the order shown, re-exported for the views. */
export { PART_KINDS };
