import type { TraceReport } from '../analysis/traceReport';
import { formatCount, formatPercent, formatRatio } from './formatNumbers';

/** The human-readable report `agent-trace analyze` prints without `--json`. */
export function renderTextReport(fileName: string, report: TraceReport): string {
  const out: string[] = [];
  out.push(`${fileName}: ${report.format ?? 'unreadable'} (${report.detection})`);
  if (report.problem) out.push(`  ${report.problem}`);
  for (const limitation of report.limitations) out.push(`  note: ${limitation}`);
  for (const s of report.sessions) {
    const label = s.role === 'main' ? 'session' : s.role === 'compaction' ? 'compaction agent' : 'sub-agent';
    out.push('');
    out.push(`${label} ${s.id}${s.parentId ? ` (parent ${s.parentId})` : ''}`);
    out.push(`  agent ${s.agent ?? 'unknown'}, model ${s.model ?? 'unknown'}`);
    out.push(`  LLM calls ${s.llmCalls}, user turns ${s.userTurns}`);
    const t = s.tokens;
    const source = s.tokensSource === 'reported' ? ' (session totals reported by the agent; no per-call figures)' : '';
    out.push(
      `  tokens${source}  input ${formatCount(t.input)}  cached ${formatCount(t.cached)}  appended ${formatCount(t.appended)}  ` +
        `output ${formatCount(t.output)}  cache write ${formatCount(t.cacheWrite)}`,
    );
    out.push(`  cache hit rate (Σcached/Σinput)     ${formatPercent(s.cacheHitRate)}`);
    out.push(`  raw input / output (Σ/Σ)            ${formatRatio(s.rawInputToOutput)}`);
    const a = s.appendToOutput;
    out.push(
      `  appended / output  per call mean ${formatRatio(a.mean)}, median ${formatRatio(a.median)}; Σ/Σ ${formatRatio(a.aggregate)}`,
    );
  }
  if (report.diagnostics.length > 0) {
    out.push('');
    out.push(`${report.diagnostics.length} diagnostic${report.diagnostics.length === 1 ? '' : 's'}:`);
    for (const d of report.diagnostics) {
      const where = d.line === null ? d.file || fileName : `${d.file || fileName}:${d.line}`;
      out.push(`  ${where}: ${d.severity}: ${d.message}`);
    }
  }
  return out.join('\n') + '\n';
}
