import { count, num } from '../json';
import type { JsonObject } from '../json';
import type { Diagnostic, LlmCall, Session, SourceRef } from '../model';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';
import { blockCountProblem, hashIds, hitTokens } from './kvBlocks';

/** Tokens per hash block in Mooncake traces (FAST25-release README). */
export const MOONCAKE_BLOCK_TOKENS = 512;
/** Id of the one session a Mooncake file becomes. */
export const MOONCAKE_SESSION_ID = 'requests';

/**
 * Reads Mooncake KV traces (`kvcache-ai/Mooncake:FAST25-release/traces/*.jsonl`, docs/design/formats.md §6):
 * `{timestamp (ms), input_length, output_length, hash_ids}` per request, 512-token blocks.
 *
 * The trace has no sessions, turns, tools or models: the file becomes one session of
 * independent requests, in file (= arrival) order, with `startMs` = `timestamp`.
 *
 * Cached tokens are what an ideal, infinite prefix cache would hit: hash ids are prefix
 * hashes (equal id at position i = equal tokens in blocks 0..i), so a set of every id seen
 * in earlier rows, walked from block 0 until the first miss, gives the longest prefix any
 * earlier request shared. cached = hit blocks × 512, capped at `input_length`: a hit on
 * the last, partial block counts only the tokens the prompt has in it. In the FAST'25
 * conversation trace such hits only come from repeats of an identical prompt, so a repeat
 * is fully cached (cached = input). appended = input − cached.
 */
export class MooncakeReader implements RecordReader {
  private readonly calls: LlmCall[] = [];
  private readonly seen = new Set<number>();
  private readonly diagnostics: Diagnostic[] = [];
  private lastStartMs = Number.NEGATIVE_INFINITY;
  private warnedFraction = false;
  private warnedOrder = false;

  record({ value, source }: TraceRecord): void {
    if (!('input_length' in value) && !('hash_ids' in value)) {
      this.warn(source, 'Not a Mooncake request (no "input_length" or "hash_ids"); skipped.');
      return;
    }
    const input = count(value['input_length']);
    if (input === null)
      this.warn(
        source,
        `"input_length" should be a whole token count, not ${JSON.stringify(value['input_length'] ?? null)}: input and cache figures unknown.`,
      );
    const hashes = hashIds(value['hash_ids']);
    if (hashes === null) this.warn(source, '"hash_ids" should be an array of integers: cache figures unknown.');
    else if (input !== null) {
      const problem = blockCountProblem(hashes, input, MOONCAKE_BLOCK_TOKENS);
      if (problem !== null) this.warn(source, problem);
    }
    let cached: number | null = null;
    if (hashes !== null) {
      let hit = 0;
      while (hit < hashes.length && this.seen.has(hashes[hit]!)) hit++;
      for (const h of hashes) this.seen.add(h);
      if (input !== null) cached = hitTokens(hit, MOONCAKE_BLOCK_TOKENS, input);
    }
    const appended = cached !== null && input !== null ? input - cached : null;
    const output = count(value['output_length']);
    if (output === null)
      this.warn(
        source,
        `"output_length" should be a whole token count, not ${JSON.stringify(value['output_length'] ?? null)}: output unknown.`,
      );
    this.calls.push({
      // The file has no request ids: the 1-based line number finds the row again.
      id: String(source.line + 1),
      index: this.calls.length,
      turn: null,
      model: null,
      startMs: this.startMs(value, source),
      endMs: null,
      tokens: { input, cached, appended, cacheWrite: null, output, reasoningOutput: null },
      server: null,
      blocks: hashes === null ? null : { blockSizeTokens: MOONCAKE_BLOCK_TOKENS, hashes },
      toolCalls: [],
      source,
    });
  }

  finish(): ReaderResult {
    const sessions: Session[] =
      this.calls.length === 0
        ? []
        : [
            {
              id: MOONCAKE_SESSION_ID,
              parentId: null,
              parentToolCallId: null,
              role: 'main',
              agent: null,
              model: null,
              cwd: null,
              title: 'Independent requests (Mooncake traces have no sessions)',
              calls: this.calls,
              turns: [],
              compactions: [],
            },
          ];
    return { sessions, diagnostics: this.diagnostics, skippedRecords: {} };
  }

  /** `timestamp` is integer milliseconds since the trace start (docs/design/formats.md §12.8). */
  private startMs(value: JsonObject, source: SourceRef): number | null {
    const ms = num(value['timestamp']);
    if (ms === null || ms < 0) {
      this.warn(
        source,
        `"timestamp" should be milliseconds ≥ 0, not ${JSON.stringify(value['timestamp'] ?? null)}: start time unknown.`,
      );
      return null;
    }
    // Float seconds are the Bailian convention; a fraction here suggests the wrong unit.
    if (!Number.isInteger(ms) && !this.warnedFraction) {
      this.warnedFraction = true;
      this.warn(
        source,
        `Mooncake timestamps are whole milliseconds, but this one is ${ms}: read as milliseconds. If the file is in seconds, its times are 1,000× too short.`,
      );
    }
    if (ms < this.lastStartMs && !this.warnedOrder) {
      this.warnedOrder = true;
      this.warn(source, 'Rows are not in time order: cached tokens are computed in file order.', 'info');
    }
    this.lastStartMs = Math.max(this.lastStartMs, ms);
    return ms;
  }

  private warn(source: SourceRef, message: string, severity: Diagnostic['severity'] = 'warning'): void {
    this.diagnostics.push({ file: source.file, line: source.line, severity, message });
  }
}
