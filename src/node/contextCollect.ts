import { AgentContentCollector } from '../core/context/agentContent';
import type { ContextSource } from '../core/context/contextView';
import { BudgetedCounter, estimatedTextNote } from '../core/context/tokenCounter';
import type { TokenCounterFor } from '../core/context/tokenCounter';
import type { FormatId } from '../core/trace/model';
import { parseTrace } from '../core/trace/parseTrace';
import type { ParsedTrace, TraceFile } from '../core/trace/parseTrace';

/**
 * A content collector for an agent log (Claude Code's text counted with the Claude stand-in,
 * Codex's with o200k_base, each counted exactly up to a budget, then by length), the
 * tokenizers, and the note saying how much text was counted by its length. The tokenizer's
 * ranks are loaded here, on demand: they take seconds, which no other command pays.
 */
export async function newContextCollector(): Promise<{
  collector: AgentContentCollector;
  tokenizer: TokenCounterFor;
  notes(): string[];
}> {
  const { CLAUDE_STANDIN, O200K, tokenCounterFor } = await import('./contextTokenizer');
  const claude = new BudgetedCounter(CLAUDE_STANDIN);
  const openai = new BudgetedCounter(O200K);
  return {
    collector: new AgentContentCollector(claude, openai, O200K),
    tokenizer: tokenCounterFor,
    notes: () => {
      const chars = claude.estimatedChars + openai.estimatedChars;
      return chars > 0 ? [estimatedTextNote(chars)] : [];
    },
  };
}

/**
 * Parses a trace and collects, beside the reader, what its context anatomy is built from:
 * an agent log's text (counted as it is read), the tokenizers, and the note saying how much
 * was estimated.
 */
export async function parseWithContext(
  files: readonly TraceFile[],
  format: FormatId | null,
): Promise<{ parsed: ParsedTrace; context: ContextSource }> {
  const { collector, tokenizer, notes } = await newContextCollector();
  const parsed = await parseTrace(files, { ...(format ? { format } : {}), recordTap: (r) => collector.record(r) });
  return {
    parsed,
    context: { content: collector.contentFor(parsed.model.format), tokenizer, notes: notes() },
  };
}
