import { arr, clip, count, emptyRecord, num, obj, str } from '../json';
import type { JsonObject } from '../json';
import { mostUsedModel, noOtherInputs, OTHER_INPUT_KINDS, unknownTokens } from '../model';
import type {
  BlockHashes,
  CallTokens,
  Compaction,
  Diagnostic,
  LlmCall,
  OtherInputs,
  ReportedTotals,
  ServerTiming,
  Session,
  SourceRef,
  ToolCall,
} from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';
import { CANONICAL_VERSION } from './canonicalFormat';

/**
 * The tool calls of a call that has none: one array for all of them (a million calls
 * without tools held a million empty arrays). Frozen, so a push on it fails loudly; the
 * reader replaces it when a call's first tool call comes.
 */
const NO_TOOL_CALLS: ToolCall[] = Object.freeze([]) as unknown as ToolCall[];

/** Owned by CanonicalReader: one session being filled, plus id lookups. */
interface SessionState {
  session: Session;
  callsById: Map<string, LlmCall>;
  toolIds: Set<string>;
  /** Created by a record that named it before its `session` record; that record may still fill it in. */
  implicit: boolean;
}

/**
 * Reads the canonical `agent-trace` format v1 (docs/trace-format.md). Membership is by
 * order: a call belongs to the last `turn` of its session before it, a `compaction`
 * applies before the next call of its session, and a `tool_call` names its call.
 */
export class CanonicalReader implements RecordReader {
  private readonly sessions = new Map<string, SessionState>();
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord();
  private sawHeader = false;
  /**
   * One copy of each model name, service tier, region, tool name, file, command and error
   * text: a long session repeats them on every call, and JSON.parse makes a new string each
   * time (a million calls held a million copies of one model name).
   */
  private readonly interned = new Map<string, string>();

  private intern(value: string | null): string | null {
    if (value === null) return null;
    const known = this.interned.get(value);
    if (known !== undefined) return known;
    this.interned.set(value, value);
    return value;
  }

  record({ value, source }: TraceRecord): void {
    const type = str(value['type']);
    switch (type) {
      case 'header':
        this.header(value, source);
        return;
      case 'session':
        this.sessionRecord(value, source);
        return;
      case 'turn':
        this.turn(value, source);
        return;
      case 'llm_call':
        this.call(value, source);
        return;
      case 'tool_call':
        this.toolCall(value, source);
        return;
      case 'compaction':
        this.compaction(value, source);
        return;
      case 'event':
        this.event(value, source);
        return;
      default:
        countSkipped(this.skipped, type === null ? '(no type)' : `unknown:${type}`);
    }
  }

  finish(): ReaderResult {
    if (!this.sawHeader && this.sessions.size > 0) {
      this.diagnostics.push({
        file: 0,
        line: -1,
        severity: 'info',
        message: 'No "header" record: assumed agent-trace version 1.',
      });
    }
    for (const { session } of this.sessions.values()) session.model ??= mostUsedModel(session.calls);
    return {
      sessions: [...this.sessions.values()].map((s) => s.session),
      diagnostics: this.diagnostics,
      skippedRecords: this.skipped,
    };
  }

  private header(value: JsonObject, source: SourceRef): void {
    this.sawHeader = true;
    if (value['format'] !== 'agent-trace')
      this.report(
        source,
        'warning',
        `header "format" should be "agent-trace", not ${JSON.stringify(value['format'] ?? null)}.`,
      );
    const version = num(value['version']);
    if (version === null) this.report(source, 'warning', 'header has no numeric "version"; read as version 1.');
    else if (version > CANONICAL_VERSION) {
      this.report(
        source,
        'warning',
        `header says version ${version}; this reader knows version ${CANONICAL_VERSION} and reads the fields it knows.`,
      );
    }
  }

  private sessionRecord(value: JsonObject, source: SourceRef): void {
    const id = this.requiredString(value, 'id', source);
    if (id === null) return;
    const existing = this.sessions.get(id);
    if (existing && !existing.implicit) {
      this.report(source, 'warning', `session "${id}" is declared twice; the later declaration is ignored.`);
      return;
    }
    const parentId = str(value['parentId']);
    const role = str(value['role']);
    const agent = obj(value['agent']);
    const agentName = agent ? str(agent['name']) : null;
    const metadata = {
      id,
      parentId,
      parentToolCallId: str(value['parentToolCallId']),
      role:
        role === 'main' || role === 'subagent' || role === 'compaction'
          ? role
          : parentId !== null
            ? 'subagent'
            : 'main',
      agent: agentName !== null ? { name: agentName, version: agent ? str(agent['version']) : null } : null,
      model: str(value['model']),
      cwd: str(value['cwd']),
      title: str(value['title']),
      // Only present when the record has it, so sessions without totals compare equal after a round trip.
      ...('reportedTotals' in value ? { reportedTotals: this.reportedTotals(value['reportedTotals'], source) } : {}),
      ...(obj(value['otherInputs']) ? { otherInputs: this.otherInputs(obj(value['otherInputs'])!, source) } : {}),
    } as const;
    if (existing) {
      // The session was named before its record: keep what it already holds, take the metadata.
      Object.assign(existing.session, metadata);
      existing.implicit = false;
      return;
    }
    this.sessions.set(id, {
      session: { ...metadata, calls: [], turns: [], compactions: [] },
      callsById: new Map(),
      toolIds: new Set(),
      implicit: false,
    });
  }

  /** The session a record names; declared implicitly (with a note) when no session record came first. */
  private sessionOf(value: JsonObject, source: SourceRef): SessionState | null {
    const id = this.requiredString(value, 'session', source);
    if (id === null) return null;
    let state = this.sessions.get(id);
    if (!state) {
      this.report(
        source,
        'info',
        `session "${id}" is used before a "session" record; created with unknown metadata until that record comes.`,
      );
      this.sessionRecord({ type: 'session', id }, source);
      state = this.sessions.get(id)!;
      state.implicit = true;
    }
    return state;
  }

  private turn(value: JsonObject, source: SourceRef): void {
    const state = this.sessionOf(value, source);
    if (!state) return;
    const turns = state.session.turns;
    turns.push({
      index: turns.length,
      startMs: this.time(value, 'startMs', source),
      preview: clip(str(value['preview']) ?? '', 160),
      source,
    });
  }

  private call(value: JsonObject, source: SourceRef): void {
    const state = this.sessionOf(value, source);
    if (!state) return;
    const id = this.requiredString(value, 'id', source);
    if (id === null) return;
    if (state.callsById.has(id)) {
      this.report(
        source,
        'warning',
        `llm_call "${id}" appears twice in session "${state.session.id}"; the second is ignored.`,
      );
      return;
    }
    const calls = state.session.calls;
    const turns = state.session.turns.length;
    const fields = {
      id,
      index: calls.length,
      turn: turns > 0 ? turns - 1 : null,
      model: this.intern(str(value['model'])),
      startMs: this.time(value, 'startMs', source),
      endMs: this.time(value, 'endMs', source),
      tokens: this.tokens(value['tokens'], source),
      server: serverTiming(value['server']),
      blocks: this.blocks(value['blocks'], source),
      toolCalls: NO_TOOL_CALLS,
      source,
    };
    // Optional pricing context: kept only when given, so a file without it reads as before.
    const pricing = {
      serviceTier: this.pricingWord(value, 'serviceTier', source),
      inferenceGeo: this.pricingWord(value, 'inferenceGeo', source),
    };
    // Both given (the writer's usual case): one literal with every field, as in tokens().
    const call: LlmCall =
      pricing.serviceTier !== null && pricing.inferenceGeo !== null
        ? {
            id,
            index: fields.index,
            turn: fields.turn,
            model: fields.model,
            startMs: fields.startMs,
            endMs: fields.endMs,
            tokens: fields.tokens,
            server: fields.server,
            blocks: fields.blocks,
            toolCalls: fields.toolCalls,
            source,
            serviceTier: pricing.serviceTier,
            inferenceGeo: pricing.inferenceGeo,
          }
        : fields;
    if (call === fields)
      for (const key of ['serviceTier', 'inferenceGeo'] as const) if (pricing[key] !== null) call[key] = pricing[key];
    calls.push(call);
    state.callsById.set(id, call);
  }

  private toolCall(value: JsonObject, source: SourceRef): void {
    const state = this.sessionOf(value, source);
    if (!state) return;
    const id = this.requiredString(value, 'id', source);
    const name = this.requiredString(value, 'name', source);
    const callId = this.requiredString(value, 'call', source);
    if (id === null || name === null || callId === null) return;
    const call = state.callsById.get(callId);
    if (!call) {
      this.report(
        source,
        'warning',
        `tool_call "${id}" names call "${callId}", which no earlier llm_call of session "${state.session.id}" has; skipped.`,
      );
      return;
    }
    if (state.toolIds.has(id)) {
      this.report(
        source,
        'warning',
        `tool_call "${id}" appears twice in session "${state.session.id}"; the second is ignored.`,
      );
      return;
    }
    state.toolIds.add(id);
    const isError = value['isError'];
    const tool: ToolCall = {
      id,
      name: this.intern(name)!,
      targetFile: this.intern(str(value['targetFile'])),
      command: this.intern(str(value['command'])),
      startMs: this.time(value, 'startMs', source),
      endMs: this.time(value, 'endMs', source),
      durationMs: this.time(value, 'durationMs', source),
      isError: typeof isError === 'boolean' ? isError : null,
      errorText: this.intern(str(value['errorText'])),
      exitCode: typeof value['exitCode'] === 'number' && Number.isInteger(value['exitCode']) ? value['exitCode'] : null,
      resultChars: count(value['resultChars']),
      source,
      // One line holds both the call and its result.
      resultSource: typeof isError === 'boolean' ? source : null,
    };
    // A denial is a failure: the flag counts only on a failed call.
    if (value['deniedByUser'] === true && tool.isError === true) tool.deniedByUser = true;
    // A call's empty list is replaced, never pushed onto: calls without tools may share one.
    if (call.toolCalls.length === 0) call.toolCalls = [tool];
    else call.toolCalls.push(tool);
  }

  private compaction(value: JsonObject, source: SourceRef): void {
    const state = this.sessionOf(value, source);
    if (!state) return;
    const trigger = str(value['trigger']);
    const compaction: Compaction = {
      beforeCall: state.session.calls.length,
      trigger: trigger === 'manual' || trigger === 'auto' ? trigger : null,
      preTokens: count(value['preTokens']),
      timeMs: this.time(value, 'timeMs', source),
      source,
    };
    if (value['rewind'] === true) compaction.rewind = true;
    state.session.compactions.push(compaction);
  }

  /** An `event` record: something between calls, such as a failed API request. */
  private event(value: JsonObject, source: SourceRef): void {
    const state = this.sessionOf(value, source);
    if (!state) return;
    const kind = str(value['kind']);
    if (kind !== 'api-error') {
      countSkipped(this.skipped, `event:${kind ?? '(no kind)'}`);
      return;
    }
    const events = (state.session.events ??= []);
    events.push({
      kind,
      beforeCall: state.session.calls.length,
      timeMs: this.time(value, 'timeMs', source),
      text: clip(str(value['text']) ?? '', 300),
      source,
    });
  }

  /** A session's `otherInputs`: whole counts ≥ 0 by kind; a bad or missing count reads as 0 with a warning. */
  private otherInputs(value: JsonObject, source: SourceRef): OtherInputs {
    const out = noOtherInputs();
    for (const kind of OTHER_INPUT_KINDS) {
      const raw = value[kind];
      if (raw === undefined) continue;
      const n = count(raw);
      if (n === null)
        this.report(
          source,
          'warning',
          `otherInputs.${kind} must be a whole number ≥ 0, not ${JSON.stringify(raw)}; read as 0.`,
        );
      else out[kind] = n;
    }
    return out;
  }

  /** A session's `reportedTotals`: counts are whole numbers ≥ 0, cost a number ≥ 0; anything else is unknown. */
  private reportedTotals(value: unknown, source: SourceRef): ReportedTotals | null {
    const t = obj(value);
    if (!t) {
      if (value !== null)
        this.report(
          source,
          'warning',
          `session reportedTotals must be an object or null, not ${JSON.stringify(value)}; read as null.`,
        );
      return null;
    }
    const field = (name: 'input' | 'output' | 'cached' | 'llmCalls'): number | null => {
      const raw = t[name];
      if (raw === undefined || raw === null) return null;
      const n = typeof raw === 'number' ? count(raw) : null;
      if (n === null)
        this.report(
          source,
          'warning',
          `reportedTotals.${name} must be a whole number ≥ 0, not ${JSON.stringify(raw)}; read as unknown.`,
        );
      return n;
    };
    const rawCost = t['costUsd'];
    let costUsd: number | null = null;
    if (rawCost !== undefined && rawCost !== null) {
      costUsd = typeof rawCost === 'number' && Number.isFinite(rawCost) && rawCost >= 0 ? rawCost : null;
      if (costUsd === null)
        this.report(
          source,
          'warning',
          `reportedTotals.costUsd must be a number ≥ 0, not ${JSON.stringify(rawCost)}; read as unknown.`,
        );
    }
    const totals: ReportedTotals = {
      input: field('input'),
      output: field('output'),
      cached: field('cached'),
      costUsd,
      llmCalls: field('llmCalls'),
    };
    if (t['coversEveryCall'] === true) totals.coversEveryCall = true;
    return totals;
  }

  private tokens(value: unknown, source: SourceRef): CallTokens {
    const t = obj(value);
    if (!t) return unknownTokens();
    const field = (name: keyof CallTokens): number | null => {
      const raw = t[name];
      if (raw === undefined || raw === null) return null;
      // Numbers only: a token count written as text is a producer bug worth seeing.
      const n = typeof raw === 'number' ? count(raw) : null;
      if (n === null)
        this.report(
          source,
          'warning',
          `tokens.${name} must be a whole number ≥ 0, not ${JSON.stringify(raw)}; read as unknown.`,
        );
      return n;
    };
    let input = field('input');
    let cached = field('cached');
    let appended = field('appended');
    const cacheWrite = field('cacheWrite');
    const output = field('output');
    const reasoningOutput = field('reasoningOutput');
    const cacheWrite5m = 'cacheWrite5m' in t ? field('cacheWrite5m') : undefined;
    const cacheWrite1h = 'cacheWrite1h' in t ? field('cacheWrite1h') : undefined;
    const impossible = (what: string): void =>
      this.report(source, 'warning', `tokens: ${what}; the missing figure stays unknown.`);
    // input = cached + appended: any two give the third.
    if (input === null && cached !== null && appended !== null) input = cached + appended;
    else if (appended === null && input !== null && cached !== null) {
      if (input >= cached) appended = input - cached;
      else impossible(`input (${input}) is smaller than cached (${cached})`);
    } else if (cached === null && input !== null && appended !== null) {
      if (input >= appended) cached = input - appended;
      else impossible(`input (${input}) is smaller than appended (${appended})`);
    } else if (input !== null && cached !== null && appended !== null && input !== cached + appended) {
      this.report(source, 'warning', `tokens.input (${input}) is not cached + appended (${cached} + ${appended}).`);
    }
    if (cacheWrite !== null && appended !== null && cacheWrite > appended) {
      this.report(
        source,
        'warning',
        `tokens.cacheWrite (${cacheWrite}) exceeds appended (${appended}); cache writes are part of appended.`,
      );
    }
    if (reasoningOutput !== null && output !== null && reasoningOutput > output) {
      this.report(
        source,
        'warning',
        `tokens.reasoningOutput (${reasoningOutput}) exceeds output (${output}); output includes reasoning.`,
      );
    }
    // With both splits given (as the writer writes them), one literal holds every field in the object itself: fields
    // added after a literal go to a separate property array, ~40 bytes more per call.
    const tokens: CallTokens =
      cacheWrite5m !== undefined && cacheWrite1h !== undefined
        ? { input, cached, appended, cacheWrite, output, reasoningOutput, cacheWrite5m, cacheWrite1h }
        : { input, cached, appended, cacheWrite, output, reasoningOutput };
    if (cacheWrite5m !== undefined && cacheWrite1h === undefined) tokens.cacheWrite5m = cacheWrite5m;
    if (cacheWrite1h !== undefined && cacheWrite5m === undefined) tokens.cacheWrite1h = cacheWrite1h;
    const splitSum = (cacheWrite5m ?? 0) + (cacheWrite1h ?? 0);
    if (cacheWrite !== null && (cacheWrite5m != null || cacheWrite1h != null) && splitSum > cacheWrite) {
      this.report(
        source,
        'warning',
        `tokens.cacheWrite5m + cacheWrite1h (${splitSum}) exceed cacheWrite (${cacheWrite}); they split it.`,
      );
    }
    return tokens;
  }

  /** A time in ms: a finite number ≥ 0, else unknown (with a warning when something else was given). */
  /** An llm_call's service tier or region: a non-empty string, else null (a non-string is reported). */
  private pricingWord(value: JsonObject, key: 'serviceTier' | 'inferenceGeo', source: SourceRef): string | null {
    const raw = value[key];
    if (raw === undefined || raw === null || raw === '') return null;
    if (typeof raw === 'string') return this.intern(raw);
    this.report(source, 'warning', `llm_call ${key} must be a string or null, not ${JSON.stringify(raw)}; ignored.`);
    return null;
  }

  private time(value: JsonObject, key: string, source: SourceRef): number | null {
    const raw = value[key];
    if (raw === undefined || raw === null) return null;
    if (typeof raw === 'number' && Number.isFinite(raw) && raw >= 0) return raw;
    this.report(
      source,
      'warning',
      `${key} must be a number of milliseconds ≥ 0, not ${JSON.stringify(raw)}; read as unknown.`,
    );
    return null;
  }

  private blocks(value: unknown, source: SourceRef): BlockHashes | null {
    const b = obj(value);
    if (!b) return null;
    const size = count(b['blockSizeTokens']);
    const hashes = arr(b['hashes']);
    if (
      size === null ||
      size === 0 ||
      !hashes ||
      !hashes.every((h) => typeof h === 'number' && Number.isSafeInteger(h))
    ) {
      this.report(
        source,
        'warning',
        'blocks needs "blockSizeTokens" > 0 and "hashes" of safe integers (|h| < 2^53); ignored.',
      );
      return null;
    }
    return { blockSizeTokens: size, hashes: hashes as number[] };
  }

  private requiredString(value: JsonObject, key: string, source: SourceRef): string | null {
    const v = str(value[key]);
    if (v === null || v === '') {
      this.report(source, 'error', `${str(value['type']) ?? 'record'} needs a string "${key}"; skipped.`);
      return null;
    }
    return v;
  }

  private report(source: SourceRef, severity: Diagnostic['severity'], message: string): void {
    this.diagnostics.push({ file: source.file, line: source.line, severity, message });
  }
}

function serverTiming(value: unknown): ServerTiming | null {
  const s = obj(value);
  if (!s) return null;
  return {
    queueMs: num(s['queueMs']),
    ttftMs: num(s['ttftMs']),
    prefillMs: num(s['prefillMs']),
    decodeMs: num(s['decodeMs']),
    e2eMs: num(s['e2eMs']),
  };
}
