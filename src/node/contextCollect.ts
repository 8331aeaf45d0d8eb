import { ClaudeCodeContentCollector } from '../core/context/claudeCodeContent';
import type { ContextSource } from '../core/context/contextView';
import { BudgetedCounter, estimatedTextNote } from '../core/context/tokenCounter';
import type { FormatId } from '../core/trace/model';
import { parseTrace } from '../core/trace/parseTrace';
import type { ParsedTrace, TraceFile } from '../core/trace/parseTrace';

/**
 * Parses a trace and collects, beside the reader, what its context anatomy is built from:
 * a Claude Code log's text (counted as it is read, with the tokenizer past which text is
 * counted by its length), the tokenizers, and the note saying how much was estimated. The
 * tokenizer's ranks are loaded here, on demand: they take seconds, which no other command pays.
 */
export async function parseWithContext(
  files: readonly TraceFile[],
  format: FormatId | null,
): Promise<{ parsed: ParsedTrace; context: ContextSource }> {
  const { CLAUDE_STANDIN, tokenCounterFor } = await import('./contextTokenizer');
  // The collector only reads Claude Code logs: their text is counted with the Claude stand-in.
  const counter = new BudgetedCounter(CLAUDE_STANDIN);
  const collector = new ClaudeCodeContentCollector(counter);
  const parsed = await parseTrace(files, { ...(format ? { format } : {}), recordTap: (r) => collector.record(r) });
  const content = parsed.model.format === 'claude-code' ? collector.result() : null;
  return {
    parsed,
    context: {
      content,
      tokenizer: tokenCounterFor,
      notes: counter.estimatedChars > 0 ? [estimatedTextNote(counter.estimatedChars)] : [],
    },
  };
}
