import type { ParsedTrace } from '../trace/parseTrace';
import { formatCount, formatPercent } from '../text/formatNumbers';
import type { ReplayComparison } from './compareReplay';

function ms(value: number | null): string {
  return value === null ? 'unknown' : value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(0)} ms`;
}

/** The comparison in words: overall figures side by side, then calls of the first replica. */
export function renderComparison(c: ReplayComparison): string {
  const lines = [
    `joined ${c.matched} of ${c.calls.length} exported requests to the results (${c.join === 'order' ? 'by order' : 'by AIPerf conversation and turn'})${c.unmatchedResults > 0 ? `; ${c.unmatchedResults} results matched nothing` : ''}`,
    '',
    '                      measured        simulated',
    `  TTFT mean           ${ms(c.measured.ttftMs.mean).padEnd(15)} ${c.predicted ? ms(c.predicted.ttftMs.mean) : 'not run'}`,
    `  TTFT median         ${ms(c.measured.ttftMs.median).padEnd(15)} ${c.predicted ? ms(c.predicted.ttftMs.median) : 'not run'}`,
    `  TTFT p90            ${ms(c.measured.ttftMs.p90).padEnd(15)} ${c.predicted ? ms(c.predicted.ttftMs.p90) : 'not run'}`,
    `  latency mean        ${ms(c.measured.latencyMs.mean).padEnd(15)} ${c.predicted ? ms(c.predicted.latencyMs.mean) : 'not run'}`,
    `  prefix-cache hits   ${(c.measured.cachedRate === null ? 'not recorded' : formatPercent(c.measured.cachedRate)).padEnd(15)} ${c.predicted ? `${formatPercent(c.predicted.hitRate)} (ideal ${formatPercent(c.predicted.idealHitRate)})` : 'not run'}`,
    `  failed requests     ${formatCount(c.measured.failed)}`,
  ];
  if (c.predicted) lines.push('', `simulated TTFT: ${c.predicted.ttftBasis}`);
  const first = c.calls.filter((x) => x.replica === 0 && x.measured !== null);
  if (first.length > 0) {
    lines.push(
      '',
      'calls of the first replica:',
      '  session       call   prompt   TTFT meas.  TTFT sim.   cached meas.  hit sim.   cached traced',
    );
    const shown = first.length > 20 ? [...first.slice(0, 10), ...first.slice(-10)] : first;
    for (const x of shown) {
      lines.push(
        `  ${x.traceSessionId.slice(0, 12).padEnd(12)} ${String(x.callIndex + 1).padStart(5)} ${formatCount(x.promptTokens).padStart(8)}   ${ms(x.measured!.ttftMs).padStart(9)}  ${ms(x.predicted?.ttftS == null ? null : x.predicted.ttftS * 1000).padStart(9)}   ${(x.measured!.cachedTokens === null ? '—' : formatCount(x.measured!.cachedTokens)).padStart(12)}  ${(x.predicted ? formatCount(x.predicted.hitTokens) : '—').padStart(8)}   ${(x.tracedCachedTokens === null ? '—' : formatCount(x.tracedCachedTokens)).padStart(13)}`,
      );
    }
    if (shown.length < first.length)
      lines.push(`  ${shown.length} of ${first.length} calls shown (the first and last 10); --json lists every call.`);
  }
  for (const n of c.notes) lines.push(`note: ${n}`);
  return lines.join('\n') + '\n';
}

/**
 * Why a replay's results file cannot be compared, with its lines: the reader's reason
 * (without the list of every supported format: only two fit here) and the first lines
 * that failed, `file:line: message`.
 */
export function resultsProblemText(resultsFile: string, results: ParsedTrace): string {
  const wanted = "not AIPerf's profile_export.jsonl or a vllm bench result";
  const reason = results.problem
    ? results.problem.message.replace(/\s*Supported: [\s\S]*$/, '')
    : `read as ${results.model.format ?? 'no known format'}`;
  const lines = results.model.diagnostics
    .filter((d) => d.file === 0 && d.severity === 'error')
    .slice(0, 3)
    .map((d) => `\n  ${resultsFile}:${d.line + 1}: ${d.message}`);
  return `${resultsFile}: ${wanted} (${reason})${lines.join('')}`;
}
