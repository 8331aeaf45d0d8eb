import type { FormatId } from '../trace/model';
import type { TraceRecord } from '../trace/recordReader';
import { ClaudeCodeContentCollector } from './claudeCodeContent';
import type { CollectedContent, ContentCollector } from './claudeCodeContent';
import { CodexContentCollector, isRolloutRecord } from './codexContent';
import { GeminiContentCollector, isGeminiHeader } from './geminiContent';
import { OpenCodeContentCollector, isOpenCodeSessionRecord } from './opencodeContent';
import type { TokenCounter } from './tokenCounter';

/**
 * The content collector for whichever agent log it is fed: Codex when the first record is a
 * rollout line (`{type, payload}`), Gemini CLI when it is a chat header (`sessionId` and
 * `projectHash`), OpenCode when it is an export's session info (as openCodeDocumentRecords taps it;
 * its text is kept and counted by the anatomy with the model's tokenizer), Claude Code otherwise, each counting with its own counter
 * (docs/guide/context.md#tokenizers). The reader decides the format; contentFor() hands the
 * text over only when it matches the collector that read it.
 */
export class AgentContentCollector implements ContentCollector {
  private inner: ContentCollector | null = null;
  private kind: 'claude-code' | 'codex' | 'gemini-cli' | 'opencode' | null = null;

  /** `openaiExact` counts Codex's message framing exactly (see CodexContentCollector); by default `openaiCounter`. */
  constructor(
    private readonly claudeCounter: TokenCounter | null,
    private readonly openaiCounter: TokenCounter | null,
    private readonly openaiExact: TokenCounter | null = openaiCounter,
    /** Gemini CLI's text: a stand-in counter (docs/guide/context.md#gemini-cli); by default `openaiCounter`. */
    private readonly geminiCounter: TokenCounter | null = openaiCounter,
  ) {}

  record(record: TraceRecord): void {
    let inner = this.inner;
    if (inner === null) {
      this.kind = isRolloutRecord(record.value)
        ? 'codex'
        : isGeminiHeader(record.value)
          ? 'gemini-cli'
          : isOpenCodeSessionRecord(record.value)
            ? 'opencode'
            : 'claude-code';
      inner = this.inner =
        this.kind === 'codex'
          ? new CodexContentCollector(this.openaiCounter, this.openaiExact)
          : this.kind === 'gemini-cli'
            ? new GeminiContentCollector(this.geminiCounter)
            : this.kind === 'opencode'
              ? new OpenCodeContentCollector()
              : new ClaudeCodeContentCollector(this.claudeCounter);
    }
    inner.record(record);
  }

  result(): CollectedContent {
    return (this.inner ?? new ClaudeCodeContentCollector(this.claudeCounter)).result();
  }

  /** The collected text for a trace read as `format`, or null when this collector does not read that format. */
  contentFor(format: FormatId | null): CollectedContent | null {
    return format !== null && format === this.kind ? this.result() : null;
  }
}
