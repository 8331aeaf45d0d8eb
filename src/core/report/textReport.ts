import { compareToRange, PUBLISHED_RANGES } from '../analysis/fingerprint';
import type { PublishedRange } from '../analysis/fingerprint';
import type { ReportSession, TraceReport } from './traceReport';
import { OTHER_INPUT_KINDS } from '../trace/model';
import type { OtherInputs } from '../trace/model';
import { formatCompact, formatCount, formatDuration, formatPercent, formatRatio } from './formatNumbers';

const MISS_LABELS: Record<string, string> = {
  'first-call': 'first call',
  'subagent-start': 'sub-agent start',
  compaction: 'compaction',
  'idle-gap': 'idle gap > cache TTL',
  'prefix-change': 'prefix change (model switch)',
  unexplained: 'unexplained',
};

/** "within 84.6–99.5%" beside a figure, so a reader sees at once whether the session is typical. */
function range(value: number | null, r: PublishedRange, format: (v: number) => string): string {
  const position = compareToRange(value, r);
  return position === null ? '' : `   [${position} published ${format(r.low)}–${format(r.high)}]`;
}

const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
const times = (v: number): string => `${v}×`;

function sessionLines(s: ReportSession): string[] {
  const out: string[] = [];
  const label = s.role === 'main' ? 'session' : s.role === 'compaction' ? 'compaction agent' : 'sub-agent';
  out.push('');
  out.push(`${label} ${s.id}${s.parentId ? ` (parent ${s.parentId})` : ''}`);
  out.push(`  agent ${s.agent ?? 'unknown'}, model ${s.model ?? 'unknown'}`);
  out.push(`  LLM calls ${s.llmCalls}, user turns ${s.userTurns}`);
  const other = otherInputsText(s);
  if (other) out.push(`  user-role records not typed by the user: ${other}`);
  if (s.apiErrors > 0) out.push(`  failed API requests ${s.apiErrors} (listed in the diagnostics)`);
  const t = s.tokens;
  const source = s.tokensSource === 'reported' ? ' (session totals reported by the agent; no per-call figures)' : '';
  out.push(
    `  tokens${source}  input ${formatCount(t.input)}  cached ${formatCount(t.cached)}  appended ${formatCount(t.appended)}  ` +
      `output ${formatCount(t.output)}  cache write ${formatCount(t.cacheWrite)}`,
  );
  out.push(`  cache hit rate (Σcached/Σinput)     ${formatPercent(s.cacheHitRate)}${range(s.cacheHitRate, PUBLISHED_RANGES.cacheHitRate, pct)}`);
  out.push(`  raw input / output (Σ/Σ)            ${formatRatio(s.rawInputToOutput)}${range(s.rawInputToOutput, PUBLISHED_RANGES.rawInputToOutput, times)}`);
  const a = s.appendToOutput;
  out.push(
    `  appended / output  per call mean ${formatRatio(a.mean)}, median ${formatRatio(a.median)}, p90 ${formatRatio(a.p90)}; Σ/Σ ${formatRatio(a.aggregate)}` +
      range(a.mean, PUBLISHED_RANGES.appendToOutputMean, times).replace('published', 'published mean'),
  );
  out.push(`  output per call  mean ${formatCompact(s.outputPerCall.mean)}, median ${formatCompact(s.outputPerCall.median)}`);
  const p = s.prefillShare;
  const decode = p.value === null ? null : 1 - p.value;
  out.push(
    `  prefill / decode share of LLM time  ${formatPercent(p.value)} / ${formatPercent(decode)} (${p.estimated ? p.basis : `measured: ${p.basis}`})` +
      range(decode, PUBLISHED_RANGES.decodeShare, pct).replace('published', 'published decode'),
  );
  if (s.llmCalls > 0) out.push(...toolLines(s), ...contextLines(s), ...missLines(s), ...loopLines(s));
  return out;
}

const OTHER_INPUT_LABELS: Record<keyof OtherInputs, [string, string]> = {
  notification: ['notification', 'notifications'],
  localCommand: ['local command', 'local commands'],
  hookOutput: ['hook output', 'hook outputs'],
  compactionSummary: ['compaction summary', 'compaction summaries'],
  interruption: ['interruption', 'interruptions'],
  injected: ['injected context', 'injected contexts'],
};

/** "12 notifications, 3 local commands", or '' when there are none. */
function otherInputsText(s: ReportSession): string {
  const other = s.otherInputs;
  if (!other) return '';
  return OTHER_INPUT_KINDS.filter((k) => other[k] > 0)
    .map((k) => `${other[k]} ${OTHER_INPUT_LABELS[k][other[k] === 1 ? 0 : 1]}`)
    .join(', ');
}

function toolLines(s: ReportSession): string[] {
  const tc = s.toolCalls;
  if (tc.total === 0) return ['  tool calls 0'];
  const out = [`  tool calls ${tc.total}, failed ${tc.failed} (${formatPercent(tc.failed / tc.total)}); tool time ${formatDuration(tc.toolTimeMs)}, LLM time ${formatDuration(tc.llmTimeMs)}`];
  for (const [name, t] of Object.entries(tc.byTool)) {
    out.push(`    ${name.padEnd(14)} ${String(t.total).padStart(5)} calls  ${String(t.failed).padStart(4)} failed  median ${formatDuration(t.latencyMsMedian)}, p90 ${formatDuration(t.latencyMsP90)}`);
  }
  const q = s.intentByQuartile.map((x, i) => `Q${i + 1} ${x.explore}/${x.execute}`).join(', ');
  out.push(`  explore/execute tool calls by quarter of the session: ${q}`);
  return out;
}

function contextLines(s: ReportSession): string[] {
  const c = s.context;
  const out = [`  context  mean ${formatCompact(c.meanTokens)}, max ${formatCompact(c.maxTokens)}, growth ${c.growthPerCall === null ? 'unknown' : `${c.growthPerCall >= 0 ? '+' : ''}${formatCompact(c.growthPerCall)}`} per call`];
  for (const k of s.compactions) {
    out.push(`  compaction before call ${k.beforeCall + 1}: context ${formatCompact(k.contextBefore)}, cached tokens lost ${formatCompact(k.lostCachedTokens)}, re-prefilled ${formatCompact(k.reprefillTokens)}`);
  }
  return out;
}

function missLines(s: ReportSession): string[] {
  const parts = Object.entries(s.missCauses)
    .filter(([, n]) => n > 0)
    .map(([cause, n]) => `${n} ${MISS_LABELS[cause] ?? cause}`);
  return [`  cache misses: ${parts.length > 0 ? parts.join(', ') : 'none'}`];
}

function loopLines(s: ReportSession): string[] {
  if (s.retryLoops.length === 0) return ['  retry loops: none'];
  const out = [`  retry loops: ${s.retryLoopSummary ?? ''}`];
  for (const l of s.retryLoops) {
    const where = `${l.file}:${l.firstLine}${l.lastLine !== l.firstLine ? `–${l.lastLine}` : ''}`;
    out.push(
      `    ${l.tool} on ${l.target}: ${l.attempts} attempts over ${l.callsSpanned} calls, ${l.escaped ? 'escaped' : 'gave up'} (${where}); ` +
        `wasted ≈${formatCompact(l.wastedTokens)} tokens, carried forward ≈${formatCompact(l.carryForwardTokens)}`,
    );
    if (l.firstError) out.push(`      first error: ${l.firstError.split('\n')[0]!.slice(0, 120)}`);
  }
  return out;
}

/** The human-readable report `agent-trace analyze` prints without `--json`. */
export function renderTextReport(fileName: string, report: TraceReport): string {
  const out: string[] = [];
  const sure = report.detectionConfidence !== null && report.format !== null ? `${report.detectionConfidence}: ` : '';
  out.push(`${fileName}: ${report.format ?? 'unreadable'} (${sure}${report.detection})`);
  if (report.problem) out.push(`  ${report.problem}`);
  for (const limitation of report.limitations) out.push(`  note: ${limitation}`);
  for (const s of report.sessions) out.push(...sessionLines(s));
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
