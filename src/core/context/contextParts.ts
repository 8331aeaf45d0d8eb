/**
 * The context anatomy's model (docs/guide/context.md): what each call's input is made of, by
 * source, with tokens and carried-forward dollars. Pure types and small helpers.
 */

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

/** The MCP server of a tool named `mcp__server__tool` (Claude Code's and Codex's naming), else null. */
export function mcpServerOf(toolName: string | null): string | null {
  if (toolName === null || !toolName.startsWith('mcp__')) return null;
  const rest = toolName.slice(5);
  const end = rest.indexOf('__');
  return end > 0 ? rest.slice(0, end) : null;
}
