/**
 * The one model every format maps into (docs/design/formats.md §0). Readers fill it,
 * analyses and the simulator read it, the canonical format serialises it.
 *
 * Conventions:
 * - `null` means "the trace does not say", never zero.
 * - Times are milliseconds since the Unix epoch (relative traces start at 0).
 * - Token identity: `input = cached + appended`.
 */

/** Identifier of a trace format (see src/core/trace/formats.ts for what each one is). */
export type FormatId =
  | 'agent-trace'
  | 'claude-code'
  | 'codex'
  | 'tracelab'
  | 'otlp'
  | 'openai-usage'
  | 'mooncake'
  | 'bailian'
  | 'swe-agent'
  | 'mini-swe-agent'
  | 'atif'
  | 'vllm-bench'
  | 'gemini-cli'
  | 'opencode'
  | 'openhands'
  | 'cline'
  | 'aiperf'
  | 'weka'
  | 'vscode-copilot';

/** Where a record came from: file index into `TraceModel.files`, 0-based line and byte offset. */
export interface SourceRef {
  file: number;
  line: number;
  offset: number;
}

/** Token counts of one LLM call. */
export interface CallTokens {
  /** Whole prompt: cached + appended. */
  input: number | null;
  /** Prompt tokens served from the prefix cache. */
  cached: number | null;
  /** Prompt tokens that needed prefill (new since the cached prefix). */
  appended: number | null;
  /** Tokens written to the provider's cache (Anthropic cache_creation). Part of `appended`. */
  cacheWrite: number | null;
  /**
   * The part of `cacheWrite` kept for 5 minutes and the part kept for 1 hour (Anthropic
   * `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`): each is
   * priced at its own rate. Absent or null when the format does not split writes by TTL.
   */
  cacheWrite5m?: number | null;
  cacheWrite1h?: number | null;
  /** Generated tokens, reasoning included. */
  output: number | null;
  /** Reasoning share of `output`, when the format reports it. */
  reasoningOutput: number | null;
}

/** Server-side timing of one call (vLLM request spans), in milliseconds. */
export interface ServerTiming {
  queueMs: number | null;
  ttftMs: number | null;
  prefillMs: number | null;
  decodeMs: number | null;
  e2eMs: number | null;
}

/** KV block hashes of a call's prompt (Mooncake, Bailian), equal hash = equal block. */
export interface BlockHashes {
  blockSizeTokens: number;
  hashes: number[];
}

/** A tool call the model asked for, paired with its result. */
export interface ToolCall {
  id: string;
  name: string;
  /** File the tool reads or changes (Edit/Write/Read `file_path`, apply_patch target). */
  targetFile: string | null;
  /** Shell command, for shell-like tools. */
  command: string | null;
  startMs: number | null;
  endMs: number | null;
  /** How long the tool ran: the format's own measure, else endMs − startMs. */
  durationMs: number | null;
  /** True/false when the result was seen; null when the trace ends before the result. */
  isError: boolean | null;
  /** First part of the error text, when the call failed. */
  errorText: string | null;
  exitCode: number | null;
  /** Size of the result text the next calls re-read, in characters. */
  resultChars: number | null;
  /** The line that asked for the call. */
  source: SourceRef;
  /** The line with the result, when seen. */
  resultSource: SourceRef | null;
  /**
   * The user refused to let the call run (answered no to a permission prompt, rejected
   * it): set with `isError` true, so a denial counts as failed and is also said apart.
   * Absent for every other call (docs/design/formats.md §12.19).
   */
  deniedByUser?: true;
}

/** One request to the model and its response. */
export interface LlmCall {
  id: string;
  /** 0-based position in its session. */
  index: number;
  /** Index into `Session.turns`, or null before the first user turn. */
  turn: number | null;
  model: string | null;
  startMs: number | null;
  endMs: number | null;
  tokens: CallTokens;
  server: ServerTiming | null;
  blocks: BlockHashes | null;
  toolCalls: ToolCall[];
  /** First line of the call in its file. */
  source: SourceRef;
  /**
   * The provider's service tier for this request (Anthropic `usage.service_tier`: standard,
   * priority, batch; OpenAI `service_tier`: default, flex, priority): it changes the price.
   * Absent or null when the trace does not say.
   */
  serviceTier?: string | null;
  /** Where Anthropic ran the request (`usage.inference_geo`: global, us): US-only inference costs more on newer models. */
  inferenceGeo?: string | null;
}

/** A prompt typed by the user: the start of a turn. */
export interface UserTurn {
  index: number;
  startMs: number | null;
  /** The first characters of the prompt, for labels; never interpreted. */
  preview: string;
  source: SourceRef;
}

/** A point where the agent replaced its context with a summary. */
export interface Compaction {
  /** Index of the first call after the compaction (calls.length if none followed). */
  beforeCall: number;
  trigger: 'manual' | 'auto' | null;
  /** Context size just before compaction, when the agent logs it. */
  preTokens: number | null;
  /** The user rewound the conversation to an earlier message (Gemini CLI `/rewind`): the context was cut back, not summarised. */
  rewind?: true;
  timeMs: number | null;
  source: SourceRef;
}

/**
 * User-role records that are not prompts a person typed, by kind. Agents write them
 * into the conversation themselves: background-task and sub-agent notifications, the
 * output of local commands, hook feedback, the summary that replaces the context after
 * a compaction, interruption markers, and context they inject (skill bodies, caveats).
 */
export interface OtherInputs {
  notification: number;
  localCommand: number;
  hookOutput: number;
  compactionSummary: number;
  interruption: number;
  injected: number;
}

/** Kinds of `OtherInputs`, in the order they are shown. */
export const OTHER_INPUT_KINDS: ReadonlyArray<keyof OtherInputs> = [
  'notification',
  'localCommand',
  'hookOutput',
  'compactionSummary',
  'interruption',
  'injected',
];
/** Singular and plural names of each kind of input no person typed (the text report and the inspector). */
export const OTHER_INPUT_LABELS: Record<keyof OtherInputs, [string, string]> = {
  notification: ['notification', 'notifications'],
  localCommand: ['local command', 'local commands'],
  hookOutput: ['hook output', 'hook outputs'],
  compactionSummary: ['compaction summary', 'compaction summaries'],
  interruption: ['interruption', 'interruptions'],
  injected: ['injected context', 'injected contexts'],
};

/** Something that happened between calls and is neither a call nor a turn: a failed API request. */
export interface SessionEvent {
  /** `api-error`: a request that failed (rate limit, overload, network); the agent may retry it. */
  kind: 'api-error';
  /** Index of the first call after it (calls.length if none followed). */
  beforeCall: number;
  timeMs: number | null;
  /** What the agent wrote about it, clipped; never interpreted. */
  text: string;
  source: SourceRef;
}

/**
 * Totals a trace reports for a whole session, apart from its calls (SWE-agent
 * `model_stats`, ATIF `final_metrics`, vllm bench aggregates). Never spread over the
 * calls: a format with totals only keeps its per-call tokens null.
 */
export interface ReportedTotals {
  /** Prompt tokens over the session, cached included. */
  input: number | null;
  output: number | null;
  /** Prompt tokens served from the prefix cache over the session. */
  cached: number | null;
  costUsd: number | null;
  /** LLM requests the agent counted (may exceed `calls.length` when retries are not logged). */
  llmCalls: number | null;
  /**
   * The totals are the agent's running sum over every request of the session (OpenCode
   * `info.tokens`), so what they count beyond the calls' sums is carried by no call in the
   * trace: shown as unattributed tokens. Absent for totals of another scope (ATIF
   * `final_metrics` may count copied steps and sub-agents; SWE-agent has totals only).
   */
  coversEveryCall?: true;
}

/** One agent conversation: the main thread or a sub-agent. */
export interface Session {
  id: string;
  /** Parent session for sub-agents, else null. */
  parentId: string | null;
  /** Tool call in the parent that started this sub-agent, when known. */
  parentToolCallId: string | null;
  /** What kind of session: the main thread, a sub-agent, or the agent's context compactor. */
  role: 'main' | 'subagent' | 'compaction';
  agent: { name: string; version: string | null } | null;
  /** Most used model, for labels; each call keeps its own. */
  model: string | null;
  cwd: string | null;
  title: string | null;
  calls: LlmCall[];
  turns: UserTurn[];
  compactions: Compaction[];
  /** Session totals the trace reports itself; absent or null when it reports none. Optional so older producers stay valid. */
  reportedTotals?: ReportedTotals | null;
  /** User-role records that were not typed prompts, when the format tells them apart (absent otherwise). */
  otherInputs?: OtherInputs;
  /** Failed API requests and similar events, in order (absent when the format records none). */
  events?: SessionEvent[];
}

/** How serious a diagnostic is. */
export type Severity = 'error' | 'warning' | 'info';

/** A problem found while reading, tied to a place in the file. */
export interface Diagnostic {
  file: number;
  /** 0-based line; -1 for problems with the file as a whole. */
  line: number;
  severity: Severity;
  message: string;
}

/** Everything read from one trace (its main file plus companion files such as sub-agent logs). */
export interface TraceModel {
  /** Null when the file could not be read as any known format. */
  format: FormatId | null;
  /** File keys: 0 is the opened file; others are relative paths of companion files. */
  files: string[];
  sessions: Session[];
  diagnostics: Diagnostic[];
  /** Records skipped on purpose, by record type (progress lines, snapshots, unknown types). */
  skippedRecords: Record<string, number>;
  /** What this format cannot give, in words for the user (shown instead of zeros). */
  limitations: string[];
}

/** A tool call as the model asked for it, before its result is seen (readers fill the result in when it comes). */
export function requestedToolCall(
  asked: Pick<ToolCall, 'id' | 'name' | 'targetFile' | 'command' | 'startMs' | 'source'>,
): ToolCall {
  return {
    id: asked.id,
    name: asked.name,
    targetFile: asked.targetFile,
    command: asked.command,
    startMs: asked.startMs,
    endMs: null,
    durationMs: null,
    isError: null,
    errorText: null,
    exitCode: null,
    resultChars: null,
    source: asked.source,
    resultSource: null,
  };
}

/**
 * TOOLS and then TOOL, in a new array of exactly that length. A reader adds a call's tools one
 * by one, and an array grown by `push` keeps room for 16 more: about 130 bytes for each call
 * of a long session, kept with the model (docs/performance.md, "Issue 27, fifth round").
 */
export function withTool(tools: readonly ToolCall[], tool: ToolCall): ToolCall[] {
  return tools.concat([tool]);
}

/**
 * Marks a call the user denied: failed (a denied call did not do its work), with the
 * agent's own words as its error, and `deniedByUser` so it is counted apart. One rule
 * for every agent (docs/design/formats.md §12.19).
 */
export function markDenied(tool: ToolCall, text: string): void {
  tool.isError = true;
  tool.errorText = text;
  tool.deniedByUser = true;
}

/** No other inputs counted yet. */
export function noOtherInputs(): OtherInputs {
  return { notification: 0, localCommand: 0, hookOutput: 0, compactionSummary: 0, interruption: 0, injected: 0 };
}

/** An empty token record: nothing known. */
export function unknownTokens(): CallTokens {
  return { input: null, cached: null, appended: null, cacheWrite: null, output: null, reasoningOutput: null };
}

/** The model most calls used, for session labels. */
export function mostUsedModel(calls: readonly LlmCall[]): string | null {
  const counts = new Map<string, number>();
  let best: string | null = null;
  let bestCount = 0;
  for (const call of calls) {
    if (call.model === null) continue;
    const n = (counts.get(call.model) ?? 0) + 1;
    counts.set(call.model, n);
    if (n > bestCount) {
      bestCount = n;
      best = call.model;
    }
  }
  return best;
}
