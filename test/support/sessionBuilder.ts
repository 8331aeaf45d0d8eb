import type { CallTokens, Compaction, LlmCall, Session, ToolCall } from '../../src/core/trace/model';

/**
 * Builds hand-made sessions for analysis tests, call by call, so each test reads like
 * the story it checks. Lines are 1-based in `line` arguments (as a person counts them)
 * and stored 0-based like every SourceRef.
 */
export class SessionBuilder {
  private readonly calls: LlmCall[] = [];
  private readonly compactions: Compaction[] = [];
  private nextLine = 1;

  constructor(
    private readonly id = 's',
    private readonly role: Session['role'] = 'main',
  ) {}

  /** Adds a call; `tools` are tool calls it made. */
  call(
    tokens: Partial<CallTokens> = {},
    tools: Array<Partial<ToolCall> & { name: string }> = [],
    extra: Partial<LlmCall> = {},
  ): this {
    const index = this.calls.length;
    const line = this.nextLine++;
    const toolCalls: ToolCall[] = tools.map((t, i) => {
      const resultLine = this.nextLine++;
      return {
        id: `t${index}-${i}`,
        targetFile: null,
        command: null,
        startMs: null,
        endMs: null,
        durationMs: null,
        isError: false,
        errorText: null,
        exitCode: null,
        resultChars: null,
        source: { file: 0, line: line - 1, offset: 0 },
        resultSource: { file: 0, line: resultLine - 1, offset: 0 },
        ...t,
      };
    });
    this.calls.push({
      id: `c${index}`,
      index,
      turn: 0,
      model: 'm',
      startMs: null,
      endMs: null,
      tokens: {
        input: null,
        cached: null,
        appended: null,
        cacheWrite: null,
        output: null,
        reasoningOutput: null,
        ...tokens,
      },
      server: null,
      blocks: null,
      toolCalls,
      source: { file: 0, line: line - 1, offset: 0 },
      ...extra,
    });
    return this;
  }

  /** Adds a compaction before the next call. */
  compaction(preTokens: number | null = null): this {
    this.compactions.push({
      beforeCall: this.calls.length,
      trigger: 'auto',
      preTokens,
      timeMs: null,
      source: { file: 0, line: this.nextLine++ - 1, offset: 0 },
    });
    return this;
  }

  build(): Session {
    return {
      id: this.id,
      parentId: this.role === 'main' ? null : 'parent',
      parentToolCallId: null,
      role: this.role,
      agent: null,
      model: 'm',
      cwd: null,
      title: null,
      calls: this.calls,
      turns: [],
      compactions: this.compactions,
    };
  }
}

/** A failed tool call with error text of `chars` characters. */
export function failed(name: string, over: Partial<ToolCall> = {}, chars = 400): Partial<ToolCall> & { name: string } {
  return { name, isError: true, errorText: 'x'.repeat(chars), resultChars: chars, ...over };
}

/** A successful tool call. */
export function ok(name: string, over: Partial<ToolCall> = {}): Partial<ToolCall> & { name: string } {
  return { name, isError: false, resultChars: 100, ...over };
}
