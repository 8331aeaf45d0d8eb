import { compareToRange, PUBLISHED_RANGES } from '../analysis/fingerprint';
import type { PublishedRange } from '../analysis/fingerprint';
import type { ReportCacheTtl, ReportCost, ReportIdealCache, ReportSession, TraceReport } from './traceReport';
import { clipText } from '../text/safeText';
import { OTHER_INPUT_KINDS, OTHER_INPUT_LABELS } from '../trace/model';
import {
  formatCompact,
  formatCount,
  formatDuration,
  formatPercent,
  formatRatio,
  formatSignedPercent,
  formatTtl,
  formatUsd,
} from '../text/formatNumbers';

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

/** Names and ids from the trace, cut for a line of text (the JSON output keeps them whole). */
const short = (text: string): string => clipText(text.replace(/\s+/g, ' '), NAME_MAX);
const NAME_MAX = 160;

const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
const times = (v: number): string => `${v}×`;

function sessionLines(s: ReportSession): string[] {
  const out: string[] = [];
  const label = s.role === 'main' ? 'session' : s.role === 'compaction' ? 'compaction agent' : 'sub-agent';
  out.push('');
  out.push(`${label} ${short(s.id)}${s.parentId ? ` (parent ${short(s.parentId)})` : ''}`);
  out.push(`  agent ${short(s.agent ?? 'unknown')}, model ${short(s.model ?? 'unknown')}`);
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
  const u = s.unattributedTokens;
  if (u) {
    out.push(
      `  unattributed tokens  input ${formatCount(u.input)}  cached ${formatCount(u.cached)}  output ${formatCount(u.output)}` +
        " (the agent's own session totals count these beyond the sum over its calls; no call carries them)",
    );
  }
  out.push(
    `  cache hit rate (Σcached/Σinput)     ${formatPercent(s.cacheHitRate)}${range(s.cacheHitRate, PUBLISHED_RANGES.cacheHitRate, pct)}`,
  );
  out.push(
    `  raw input / output (Σ/Σ)            ${formatRatio(s.rawInputToOutput)}${range(s.rawInputToOutput, PUBLISHED_RANGES.rawInputToOutput, times)}`,
  );
  const a = s.appendToOutput;
  out.push(
    `  appended / output  per call mean ${formatRatio(a.mean)}, median ${formatRatio(a.median)}, p90 ${formatRatio(a.p90)}; Σ/Σ ${formatRatio(a.aggregate)}` +
      range(a.mean, PUBLISHED_RANGES.appendToOutputMean, times).replace('published', 'published mean'),
  );
  out.push(
    `  output per call  mean ${formatCompact(s.outputPerCall.mean)}, median ${formatCompact(s.outputPerCall.median)}`,
  );
  const p = s.prefillShare;
  const decode = p.value === null ? null : 1 - p.value;
  out.push(
    `  prefill / decode share of LLM time  ${formatPercent(p.value)} / ${formatPercent(decode)} (${p.estimated ? p.basis : `measured: ${p.basis}`})` +
      range(decode, PUBLISHED_RANGES.decodeShare, pct).replace('published', 'published decode'),
  );
  if (s.llmCalls > 0) out.push(...toolLines(s), ...contextLines(s), ...missLines(s), ...loopLines(s));
  if (s.cost && s.llmCalls > 0) out.push(...costLines(s.cost, '  cost'), ...s.cost.notes.map((n) => `    note: ${n}`));
  if (s.cacheTtl && s.llmCalls > 0) out.push(...ttlLines(s.cacheTtl));
  if (s.idealCache.steps > 0) out.push(...idealLines(s.idealCache));
  return out;
}

/** "12 notifications, 3 local commands", or '' when there are none. */
function otherInputsText(s: ReportSession): string {
  const other = s.otherInputs;
  if (!other) return '';
  return OTHER_INPUT_KINDS.filter((k) => other[k] > 0)
    .map((k) => `${other[k]} ${OTHER_INPUT_LABELS[k][other[k] === 1 ? 0 : 1]}`)
    .join(', ');
}

const KIND_LABELS: Array<[keyof NonNullable<ReportCost['byKind']>, string]> = [
  ['input', 'input'],
  ['cacheRead', 'cache read'],
  ['cacheWrite5m', 'cache write 5 min'],
  ['cacheWrite1h', 'cache write 1 h'],
  ['output', 'output'],
  ['gpuTime', 'GPU time'],
];

/** "cost $2.05 (149 calls priced, 2 unpriced)", then by kind and by model. */
function costLines(c: ReportCost, head: string): string[] {
  const unpriced = c.unpricedCalls > 0 ? `, ${c.unpricedCalls} unpriced: their cost is unknown, not in the total` : '';
  const out = [
    `${head} ${formatUsd(c.totalUsd)} (${c.pricedCalls} call${c.pricedCalls === 1 ? '' : 's'} priced${unpriced})`,
  ];
  if (c.byKind && c.pricedCalls > 0) {
    const kinds = KIND_LABELS.filter(([k]) => k !== 'gpuTime' || c.byKind![k] > 0).map(
      ([k, label]) => `${label} ${formatUsd(c.byKind![k])}`,
    );
    out.push(`    by kind: ${kinds.join(', ')}`);
  }
  const models = Object.entries(c.byModel).sort((a, b) => (b[1].usd ?? -1) - (a[1].usd ?? -1));
  if (models.length > 0) {
    out.push(
      `    by model: ${models.map(([m, v]) => `${m} ${formatUsd(v.usd)} (${v.calls} call${v.calls === 1 ? '' : 's'}${v.unpricedCalls > 0 ? `, ${v.unpricedCalls} unpriced` : ''})`).join('; ')}`,
    );
  }
  return out;
}

function ttlLines(t: ReportCacheTtl): string[] {
  const out = [`  provider cache TTL what-if (ran with ${formatTtl(t.ranWithTtlMin * 60_000)}: ${t.basis})`];
  for (const r of t.replays) {
    const asLogged =
      r.ttlMin === t.ranWithTtlMin &&
      r.writePrice === (t.ranWithTtlMin === 60 ? '1-hour write price' : '5-minute write price');
    const cost = r.unavailable
      ? `unknown (${r.unavailable})`
      : `${formatUsd(r.costUsd)}${asLogged ? ' as logged' : r.deltaShare === null ? '' : ` ${formatSignedPercent(r.deltaShare)}`}`;
    const n = r.expiredCalls.length;
    const rewrites =
      n > 0
        ? `, ${formatCount(r.rewriteTokens)} tokens written again (${formatUsd(r.rewriteUsd)} more than reading them)`
        : '';
    out.push(
      `    ${formatTtl(r.ttlMin * 60_000).padEnd(8)} ${cost.padEnd(18)} ${n} call${n === 1 ? '' : 's'} found the cache expired${rewrites}; writes at the ${r.writePrice}`,
    );
  }
  if (t.sentence) out.push(`    ${t.sentence}`);
  return out;
}

function idealLines(c: ReportIdealCache): string[] {
  const hits = c.points.map(
    (p) =>
      `${formatTtl(p.ttlMin * 60_000)} ${formatPercent(p.hitRate)}${p.published ? ` [${p.published.approximate ? '≈' : ''}${formatPercent(p.published.hitRate)}]` : ''}`,
  );
  const amps = c.points.map(
    (p) =>
      `${formatTtl(p.ttlMin * 60_000)} ${formatRatio(p.amplification)}${p.published ? ` [${formatRatio(p.published.amplification)}]` : ''}`,
  );
  const d = c.published.deployedAmplification;
  return [
    `  ideal cache with an idle TTL (TraceLab's method, ${c.steps} steps; [TraceLab's merged trace]):`,
    `    hit rate ${hits.join(', ')}; with no TTL ${formatPercent(c.optimalHitRate)}`,
    `    prefill amplification ${amps.join(', ')}`,
    `    this session's cache: hit rate ${formatPercent(c.realHitRate)}, amplification ${formatRatio(c.realAmplification)} [deployed caches: ${formatRatio(d.merged)}, Claude ${formatRatio(d.claude)}, Codex ${formatRatio(d.codex)}]` +
      (c.effectiveTtlMin === null
        ? ''
        : `, as an ideal cache with a ${formatTtl(c.effectiveTtlMin * 60_000)} idle TTL`),
  ];
}

function toolLines(s: ReportSession): string[] {
  const tc = s.toolCalls;
  if (tc.total === 0) return ['  tool calls 0'];
  const denied = tc.denied > 0 ? `, ${tc.denied} of them denied by the user` : '';
  const out = [
    `  tool calls ${tc.total}, failed ${tc.failed} (${formatPercent(tc.failed / tc.total)})${denied}; tool time ${formatDuration(tc.toolTimeMs)}, LLM time ${formatDuration(tc.llmTimeMs)}`,
  ];
  for (const [name, t] of Object.entries(tc.byTool)) {
    out.push(
      `    ${short(name).padEnd(14)} ${String(t.total).padStart(5)} calls  ${String(t.failed).padStart(4)} failed  median ${formatDuration(t.latencyMsMedian)}, p90 ${formatDuration(t.latencyMsP90)}`,
    );
  }
  const q = s.intentByQuartile.map((x, i) => `Q${i + 1} ${x.explore}/${x.execute}`).join(', ');
  out.push(`  explore/execute tool calls by quarter of the session: ${q}`);
  return out;
}

function contextLines(s: ReportSession): string[] {
  const c = s.context;
  const out = [
    `  context  mean ${formatCompact(c.meanTokens)}, max ${formatCompact(c.maxTokens)}, growth ${c.growthPerCall === null ? 'unknown' : `${c.growthPerCall >= 0 ? '+' : ''}${formatCompact(c.growthPerCall)}`} per call`,
  ];
  for (const k of s.compactions) {
    out.push(
      `  compaction before call ${k.beforeCall + 1}: context ${formatCompact(k.contextBefore)}, cached tokens lost ${formatCompact(k.lostCachedTokens)}, re-prefilled ${formatCompact(k.reprefillTokens)}`,
    );
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
      `    ${short(l.tool)} on ${short(l.target)}: ${l.attempts} attempts over ${l.callsSpanned} calls, ${l.escaped ? 'escaped' : 'gave up'} (${where}); ` +
        `wasted ≈${formatCompact(l.wastedTokens)} tokens${l.wastedUsd === null ? '' : ` (${formatUsd(l.wastedUsd)})`}, carried forward ≈${formatCompact(l.carryForwardTokens)}${l.carriedForwardUsd === null ? '' : ` (${formatUsd(l.carriedForwardUsd)})`}`,
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
  if (report.cost) {
    out.push(
      ...costLines(
        report.cost,
        `  cost of the whole trace${report.sessions.length > 1 ? ' (sub-agents included)' : ''}`,
      ),
    );
    out.push(`    prices: ${report.cost.priceSource}`);
  }
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
