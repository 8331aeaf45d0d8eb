import type { CallTokens, ServerTiming } from '../model';
import type { Attributes, AttrValue, OtlpSpan } from './otlpJson';

/**
 * OpenTelemetry GenAI semantic-convention attribute names (docs/design/formats.md §5), current and
 * older spellings, and vLLM's request-span attributes (docs/design/formats.md §4). vLLM's names are
 * those of `vllm/tracing.py` / `vllm/tracing/utils.py` `SpanAttributes`, filled in
 * `vllm/v1/engine/output_processor.py` `do_tracing` (and the v0 engine's `create_trace_span`).
 */
export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  requestId: 'gen_ai.request.id',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  /** Current names first, then older ones; all include cached tokens. */
  inputTokens: ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens'],
  outputTokens: ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens'],
  /**
   * Cache reads: the semconv name, then aliases seen in the wild (Sentry's conventions),
   * then `gen_ai.usage.cached_tokens`, which vLLM's newer `SpanAttributes` declares and
   * SGLang sets (vLLM's own do_tracing does not set it).
   */
  cacheReadTokens: [
    'gen_ai.usage.cache_read.input_tokens',
    'gen_ai.usage.cache_read_input_tokens',
    'gen_ai.usage.input_tokens.cached',
    'gen_ai.usage.cached_tokens',
  ],
  cacheWriteTokens: ['gen_ai.usage.cache_creation.input_tokens', 'gen_ai.usage.cache_creation_input_tokens'],
  /**
   * The cache writes kept 5 minutes and 1 hour (Anthropic's split, priced apart), which the
   * conventions lack: agent-trace's own export writes them (docs/reference/otlp.md).
   */
  cacheWrite5mTokens: ['agent_trace.cache_creation_5m_input_tokens'],
  cacheWrite1hTokens: ['agent_trace.cache_creation_1h_input_tokens'],
  /** The provider's service tier and inference region (they change the price): agent-trace's export. */
  serviceTier: 'agent_trace.service_tier',
  inferenceGeo: 'agent_trace.inference_geo',
  /** Reasoning share of the output: the semconv name, VS Code Copilot Chat's own, Codex's. */
  reasoningTokens: [
    'gen_ai.usage.reasoning.output_tokens',
    'gen_ai.usage.reasoning_tokens',
    'codex.usage.reasoning_output_tokens',
  ],
} as const;

/** vLLM request-span latencies, float seconds. */
export const VLLM_LATENCY = {
  queue: 'gen_ai.latency.time_in_queue',
  ttft: 'gen_ai.latency.time_to_first_token',
  e2e: 'gen_ai.latency.e2e',
  prefill: 'gen_ai.latency.time_in_model_prefill',
  decode: 'gen_ai.latency.time_in_model_decode',
} as const;

const LATENCY_PREFIX = 'gen_ai.latency.';
/** The span name vLLM gives its request spans (v0 and v1 engines). */
const VLLM_SPAN_NAME = 'llm_request';

/** Operations that are one request to a model. */
const MODEL_CALL_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content', 'completion']);

/** What a span is, for this reader. */
export type SpanRole = 'llm' | 'server' | 'tool' | 'agent' | 'other-genai' | 'not-genai';

/** A string attribute, or null. */
export function attrString(attrs: Attributes, key: string): string | null {
  const v = attrs.get(key);
  return typeof v === 'string' && v !== '' ? v : null;
}

/** The first of `keys` present on the span, as it was written. */
export function firstAttr(attrs: Attributes, keys: readonly string[]): { key: string; value: AttrValue } | null {
  for (const key of keys) if (attrs.has(key)) return { key, value: attrs.get(key)! };
  return null;
}

/** A token count attribute: a whole number ≥ 0 (int64 strings past 2^53 are refused). */
export function tokenAttr(attrs: Attributes, keys: readonly string[]): { key: string; count: number | null } | null {
  const found = firstAttr(attrs, keys);
  if (!found) return null;
  const v = found.value;
  return { key: found.key, count: typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null };
}

function hasLatency(attrs: Attributes): boolean {
  for (const key of attrs.keys()) if (key.startsWith(LATENCY_PREFIX)) return true;
  return false;
}

function hasGenAi(attrs: Attributes): boolean {
  for (const key of attrs.keys()) if (key.startsWith('gen_ai.')) return true;
  return false;
}

/**
 * Sorts a span into what the reader does with it:
 * - `server`: a vLLM request span (a `gen_ai.latency.*` attribute, or vLLM's span name with a request id);
 * - `llm`: an agent/client-side model call (`gen_ai.operation.name` chat, text_completion…,
 *   or no operation but token usage);
 * - `tool`: `execute_tool`, or a span with `gen_ai.tool.name` and no operation;
 * - `agent`: `invoke_agent`, which defines a session;
 * - `other-genai`: embeddings, create_agent and other GenAI operations (counted, skipped).
 */
export function classifySpan(span: OtlpSpan): SpanRole {
  const a = span.attributes;
  if (!hasGenAi(a)) return 'not-genai';
  const op = attrString(a, GEN_AI.operation);
  if (hasLatency(a) || (span.name === VLLM_SPAN_NAME && a.has(GEN_AI.requestId) && op === null)) return 'server';
  if (op !== null) {
    if (MODEL_CALL_OPERATIONS.has(op)) return 'llm';
    if (op === 'execute_tool') return 'tool';
    if (op === 'invoke_agent') return 'agent';
    return 'other-genai';
  }
  if (a.has(GEN_AI.toolName)) return 'tool';
  if (firstAttr(a, [...GEN_AI.inputTokens, ...GEN_AI.outputTokens])) return 'llm';
  return 'other-genai';
}

/** How a span's token attributes were read: the tokens, and what the reader had to assume. */
export interface SpanTokens {
  tokens: CallTokens;
  /** Cache reads exceeded the input: the input was read as excluding them (Anthropic style). */
  exclusiveInput: boolean;
  /** Attributes present but not usable counts (negative, fractional, past 2^53). */
  badKeys: string[];
}

/**
 * Token figures of a GenAI span. The conventions say cache reads and writes SHOULD be
 * included in input_tokens, so appended = input − cached. When cached (+ cache writes)
 * exceed the input, the instrumentation cannot have included them: the input is then
 * read as the uncached part (input = given + cached + written), and the caller says so.
 */
export function spanTokens(attrs: Attributes): SpanTokens {
  const badKeys: string[] = [];
  const read = (keys: readonly string[]): number | null => {
    const t = tokenAttr(attrs, keys);
    if (t && t.count === null) badKeys.push(t.key);
    return t ? t.count : null;
  };
  const given = read(GEN_AI.inputTokens);
  const output = read(GEN_AI.outputTokens);
  const cached = read(GEN_AI.cacheReadTokens);
  const cacheWrite = read(GEN_AI.cacheWriteTokens);
  const reasoning = read(GEN_AI.reasoningTokens);
  const write5m = read(GEN_AI.cacheWrite5mTokens);
  const write1h = read(GEN_AI.cacheWrite1hTokens);
  let input = given;
  let appended: number | null = null;
  let exclusiveInput = false;
  if (given !== null && cached !== null) {
    if (cached + (cacheWrite ?? 0) <= given) appended = given - cached;
    else {
      exclusiveInput = true;
      appended = given + (cacheWrite ?? 0);
      input = appended + cached;
    }
  }
  const split = write5m !== null || write1h !== null ? { cacheWrite5m: write5m, cacheWrite1h: write1h } : {};
  return {
    tokens: { input, cached, appended, cacheWrite, ...split, output, reasoningOutput: reasoning },
    exclusiveInput,
    badKeys,
  };
}

/** Float seconds to ms, rounded to the microsecond so 0.1 s reads 100, not 100.00000000000001. */
function secondsToMs(value: AttrValue | undefined): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return null;
  return Math.round(value * 1e6) / 1e3;
}

/**
 * vLLM's server-side timing: `gen_ai.latency.*` float seconds × 1,000. Queue =
 * scheduled − queued, prefill = first token − scheduled, decode = last token − first
 * token, e2e = finish − arrival (output_processor.py do_tracing). The v0 engine wrote
 * no prefill/decode split (only scheduler/forward/execute times), so those stay null.
 */
export function serverTiming(attrs: Attributes): { timing: ServerTiming; negativeKeys: string[] } {
  const negativeKeys: string[] = [];
  const ms = (key: string): number | null => {
    const v = attrs.get(key);
    if (typeof v === 'number' && v < 0) negativeKeys.push(key);
    return secondsToMs(v);
  };
  return {
    timing: {
      queueMs: ms(VLLM_LATENCY.queue),
      ttftMs: ms(VLLM_LATENCY.ttft),
      prefillMs: ms(VLLM_LATENCY.prefill),
      decodeMs: ms(VLLM_LATENCY.decode),
      e2eMs: ms(VLLM_LATENCY.e2e),
    },
    negativeKeys,
  };
}

/** The model a span names: the response's model, else the requested one. */
export function spanModel(attrs: Attributes): string | null {
  return attrString(attrs, GEN_AI.responseModel) ?? attrString(attrs, GEN_AI.requestModel);
}
