// The redaction flag and summary line shared by the commands that write a trace: a module of
// its own so that `analyze` and `convert` (dist/cliAnalyze.js) read it without loading the
// share commands' dependencies.
import type { RedactionMode, Redactor, RedactionSummary } from '../core/redact/redactor';
import { UsageError } from '../core/text/usageError';

/** `--redact MODE`: `default` or `strict` (docs/redaction.md, "Strict mode"). */
export function redactionModeFlag(v: string): RedactionMode {
  if (v !== 'default' && v !== 'strict')
    throw new UsageError(`--redact must be default or strict, not "${v}" (--no-redact turns redaction off)`);
  return v;
}

/** The redaction summary in one line for stderr: kinds and counts, never values. */
export function redactionLine(summary: RedactionSummary): string {
  const kinds = Object.entries(summary.byKind).map(
    ([kind, c]) => `${kind} ${c.occurrences}${c.distinct !== c.occurrences ? ` (${c.distinct} distinct)` : ''}`,
  );
  return summary.occurrences === 0
    ? `redaction: nothing found to remove (${summary.detectors})`
    : `redaction: removed ${summary.occurrences} value${summary.occurrences === 1 ? '' : 's'}: ${kinds.join(', ')} (${summary.detectors}); --no-redact keeps them`;
}

/** Redacts JSON Lines text (an export, a converted trace) unless redaction is off; prints the summary. */
export async function redactJsonLinesText(text: string, redactor: Redactor | null): Promise<string> {
  if (!redactor) return text;
  const lines = text.split('\n');
  return (await redactor.redactJsonTexts(lines)).join('\n');
}
