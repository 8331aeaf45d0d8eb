import type { EngineName } from '../core/sim/engines/engineTypes';
import type { EngineParams, KvLayout } from '../core/sim/params';
import { describePolicy } from '../core/sim/policies';
import type { ScenarioCall, ScenarioResult } from '../core/sim/scenario';
import type { ReplicaOptions } from '../core/sim/simRequests';
import type { SweepAxis, SweepResult } from '../core/sim/sweep';
import type { Workload } from '../core/sim/workload';
import { formatCount, formatDuration, formatPercent, formatRatio, UNKNOWN } from '../core/text/formatNumbers';

/** What the text report says about the input besides the results. */
export interface ReportContext {
  /** "agent-trace trace, main session … (48 calls)". */
  source: string;
  /** "one H200 141 GB with Qwen3-32B (bf16)", or null without presets. */
  hardware: string | null;
  engine: EngineName;
  params: EngineParams;
  replicas: ReplicaOptions | null;
  workload: Workload;
  /** The session whose calls are listed. */
  session: string | null;
}

/** Calls listed in full up to this many; beyond it, a selection. */
const MAX_CALL_ROWS = 25;

function pct0(v: number): string {
  return `${Math.round(v * 100)}%`;
}

function seconds(s: number | null): string {
  return s === null ? UNKNOWN : formatDuration(s * 1000);
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** Columns right-aligned to their widest cell; a row of one cell is a note between rows. */
function table(header: string[], rows: string[][], indent = '  '): string[] {
  const full = rows.filter((r) => r.length > 1);
  const widths = header.map((h, i) => Math.max(h.length, ...full.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    indent +
    cells
      .map((c, i) => c.padStart(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map((r) => (r.length === 1 ? indent + r[0]! : line(r)))];
}

function replayLine(c: ReportContext, swept: SweepAxis | null): string {
  const r = c.replicas;
  if (c.workload.kind === 'requests' || r === null)
    return `open loop, ${plural(c.workload.kind === 'requests' ? c.workload.requests.length : 0, 'request')} at their recorded arrival times`;
  const sessions = c.workload.sessions.length;
  if (swept === 'replicas') {
    const start =
      r.staggerS > 0
        ? r.staggerMode === 'fixed'
          ? `, one every ${seconds(r.staggerS)}`
          : `, random gaps of mean ${seconds(r.staggerS)} (seed ${r.seed})`
        : ', started together';
    return `closed loop, copies of ${plural(sessions, 'session')} (swept)${start}, tool waits ×${r.toolWaitScale}`;
  }
  if (r.replicas === 1)
    return `closed loop, ${sessions === 1 ? 'the session alone' : plural(sessions, 'session')}, tool waits ×${r.toolWaitScale}`;
  const copies =
    sessions === 1
      ? plural(r.replicas, 'copy', 'copies')
      : `${plural(r.replicas, 'replica')} of ${plural(sessions, 'session')}`;
  let start = 'started together';
  if (r.staggerS > 0)
    start =
      r.staggerMode === 'fixed'
        ? `one every ${seconds(r.staggerS)}`
        : `random gaps of mean ${seconds(r.staggerS)} (seed ${r.seed})`;
  return `closed loop, ${copies}, ${start}, tool waits ×${r.toolWaitScale}`;
}

function serverLine(c: ReportContext, swept: SweepAxis | null): string {
  const p = c.params;
  const capacity = swept === 'capacity' ? 'swept' : `${formatCount(p.capacityTokens)} tokens`;
  const fleet =
    swept === 'gpus'
      ? `, GPUs swept behind the ${p.fleet!.router} router (each with this cache)`
      : p.fleet
        ? `, ${p.fleet.gpus} GPUs behind the ${p.fleet.router} router (each with this cache)`
        : '';
  const offload = p.offload
    ? `, CPU tier ${formatCount(p.offload.capacityTokens)} tokens at ${p.offload.bandwidthGBps} GB/s`
    : '';
  // SGLang's radix tree caches single tokens; the block size only matters to vLLM's block pool.
  const unit =
    p.policy === 'sglang-lru'
      ? p.sglangPageSizeTokens === 1
        ? 'token-level radix tree'
        : `radix tree of ${p.sglangPageSizeTokens}-token pages`
      : `${p.blockSizeTokens}-token blocks`;
  // A hybrid layout runs on the hybrid engine whichever name was given (engineTable.ts).
  const engine = p.kvLayout ? `hybrid engine (${describeLayout(p.kvLayout)})` : `${c.engine} engine`;
  return `${describePolicy(p)}, KV cache ${capacity}${c.hardware ? ` (${c.hardware})` : ''}, ${unit}${offload}${fleet}, ${engine}`;
}

/** "1 full-attention + 1 sliding-window (128 tokens) block tables". */
function describeLayout(l: KvLayout): string {
  if (l.other === 'mamba')
    return `${l.fullGroups} full-attention + ${l.otherGroups} Mamba-state block tables${l.prefixCaching === false ? ', no prefix caching (vLLM turns it off for this model)' : ''}`;
  const other = l.other === 'sliding-window' ? 'sliding-window' : 'chunked-local';
  return `${l.fullGroups} full-attention + ${l.otherGroups} ${other} (${formatCount(l.windowTokens)} tokens) block tables`;
}

function stepLine(p: EngineParams): string {
  const decodePerSeq = p.decodeUsPerSeq > 0 ? ` + ${p.decodeUsPerSeq} µs per decoding sequence` : '';
  return `${p.stepFixedMs} ms + ${p.prefillUsPerToken} µs per prefill token + ${p.kvReadNsPerToken} ns per decode context token${decodePerSeq}`;
}

function header(c: ReportContext, swept: SweepAxis | null = null): string[] {
  return [
    `simulate: ${c.source}`,
    `  replay     ${replayLine(c, swept)}`,
    `  server     ${serverLine(c, swept)}`,
    `  step time  ${stepLine(c.params)}`,
    '',
  ];
}

/** The one plain sentence under the figures, e.g. "24 sessions like this on one H200 … : hit rate falls from 97% to 41% …". */
export function plainSentence(c: ReportContext, r: ScenarioResult): string {
  let who: string;
  if (c.workload.kind === 'requests') who = 'This trace replayed';
  else if (c.workload.sessions.length === 1)
    who = r.replicas === 1 ? 'This session alone' : `${formatCount(r.replicas)} sessions like this`;
  else
    who =
      r.replicas === 1
        ? `This ${c.workload.sessions.length}-session workload`
        : `${formatCount(r.replicas)} copies of this ${c.workload.sessions.length}-session workload`;
  let where = c.hardware ? `on ${c.hardware}` : `on a ${formatCount(r.capacityTokens)}-token KV cache`;
  if (r.gpus !== undefined)
    where = `on ${r.gpus} GPUs behind the ${r.router} router (${c.hardware ? c.hardware.replace(/^one /, 'each ') : `each a ${formatCount(r.capacityTokens)}-token KV cache`})`;
  const adm = r.admissionHitRate;
  const ideal = r.idealHitRate;
  const falls = adm !== null && ideal !== null && Math.round(ideal * 100) > Math.round(adm * 100);
  const hit =
    adm === null
      ? 'the hit rate is unknown'
      : c.params.kvLayout?.prefixCaching === false
        ? 'nothing hits (vLLM turns prefix caching off for this model)'
        : falls
          ? `hit rate falls from ${pct0(ideal!)} to ${pct0(adm)}`
          : `hit rate stays at ${pct0(adm)} (as with an infinite cache)`;
  const parts = [hit];
  if (r.prefillShare !== null) parts.push(`prefill ${falls ? 'becomes' : 'is'} ${pct0(r.prefillShare)} of LLM time`);
  if (r.slowdown.mean !== null && r.slowdown.mean >= 1.05)
    parts.push(`sessions take ${formatRatio(r.slowdown.mean)} as long as alone`);
  const last = parts.pop()!;
  const rejected = r.rejectedRequests > 0 ? `; ${plural(r.rejectedRequests, 'request')} never fit in the cache` : '';
  return `${who} ${where}: ${parts.length > 0 ? `${parts.join(', ')} and ${last}` : last}${rejected}.`;
}

function figures(r: ScenarioResult, withOffload: boolean): string[] {
  const rows: Array<[string, string]> = [
    [
      'admission hit rate',
      `${formatPercent(r.admissionHitRate)}   ideal ${formatPercent(r.idealHitRate)} (an infinite cache)`,
    ],
    r.sglangMetricHitRate !== undefined
      ? ["SGLang's metric", `${formatPercent(r.sglangMetricHitRate)}   #cached-token / (#cached-token + #new-token)`]
      : ["vLLM's metric", `${formatPercent(r.vllmMetricHitRate)}   prefix_cache_hits / prefix_cache_queries`],
    ['recomputed prefill', plural(r.recomputedPrefillTokens, 'token')],
    [r.sglangMetricHitRate !== undefined ? 'retractions' : 'preemptions', formatCount(r.preemptions)],
    ['prefill share', `${formatPercent(r.prefillShare)} of LLM time`],
    ['makespan', `${seconds(r.makespanS)}, ${plural(r.steps, 'step')}`],
    [
      'slowdown',
      r.slowdown.mean === null
        ? `${UNKNOWN} (no sessions)`
        : `mean ${formatRatio(r.slowdown.mean)}, max ${formatRatio(r.slowdown.max)} (each session vs alone)`,
    ],
  ];
  if (withOffload) rows.push(['reloaded from CPU', plural(r.offloadHitTokens, 'token')]);
  if (r.rejectedRequests > 0)
    rows.push(['rejected requests', `${formatCount(r.rejectedRequests)} (longer than the whole cache)`]);
  return rows.map(([k, v]) => `  ${k.padEnd(20)} ${v}`);
}

/**
 * Which calls to list: all of a short session; of a long one the first and last five
 * and the ten that recomputed most (the interesting ones), in call order.
 */
export function callsToShow(calls: readonly ScenarioCall[]): { shown: number[]; why: string | null } {
  if (calls.length <= MAX_CALL_ROWS) return { shown: calls.map((_, i) => i), why: null };
  const keep = new Set<number>();
  for (let i = 0; i < 5; i++) keep.add(i).add(calls.length - 1 - i);
  const worst = calls
    .map((c, i) => ({ i, bad: c.recomputedTokens + (c.idealHitTokens - c.hitTokens) }))
    .filter((x) => x.bad > 0 && !keep.has(x.i))
    .sort((a, b) => b.bad - a.bad || a.i - b.i)
    .slice(0, 10);
  for (const w of worst) keep.add(w.i);
  const why =
    worst.length > 0 ? `the first and last 5 and the ${worst.length} that lost the most cache` : 'the first and last 5';
  return { shown: [...keep].sort((a, b) => a - b), why };
}

function callTable(c: ReportContext, calls: readonly ScenarioCall[], replicas: number): string[] {
  if (calls.length === 0) return [];
  const { shown, why } = callsToShow(calls);
  const rows: string[][] = [];
  let previous = -1;
  for (const i of shown) {
    if (i > previous + 1) rows.push([`  … ${plural(i - previous - 1, 'call')}`]);
    const k = calls[i]!;
    rows.push([
      String(k.callIndex + 1),
      formatCount(k.promptTokens),
      formatCount(k.hitTokens),
      formatCount(k.idealHitTokens),
      formatCount(k.recomputedTokens),
      k.rejected ? 'rejected' : k.waitedS === null ? UNKNOWN : seconds(k.waitedS),
      formatCount(k.preemptions),
      ...(k.gpu !== undefined ? [k.gpu === null ? '' : String(k.gpu + 1)] : []),
    ]);
    previous = i;
  }
  const copy = replicas > 1 ? ' (its first copy)' : '';
  const onFleet = calls.some((k) => k.gpu !== undefined);
  const lines = [
    `calls of session ${c.session}${copy}:`,
    ...table(
      ['call', 'prompt', 'hit', 'ideal hit', 'recomputed', 'waited', 'preemptions', ...(onFleet ? ['GPU'] : [])],
      rows,
    ),
  ];
  if (why) lines.push(`  ${shown.length} of ${calls.length} calls shown: ${why}; --json lists every call.`);
  return lines;
}

/** Each GPU of a fleet: its share of the calls, its hit rate and how busy it was. */
function gpuTable(r: ScenarioResult): string[] {
  if (!r.perGpu) return [];
  const rows = r.perGpu.map((g) => [
    String(g.gpu + 1),
    formatCount(g.requests),
    formatCount(g.sessions),
    formatCount(g.promptTokens),
    formatPercent(g.admissionHitRate),
    formatPercent(g.idealHitRate),
    formatCount(g.recomputedPrefillTokens),
    formatCount(g.preemptions),
    formatPercent(g.prefillShare),
    formatPercent(g.utilization),
  ]);
  return [
    `per GPU (${r.router} router):`,
    ...table(
      [
        'GPU',
        'calls',
        'sessions',
        'prompt tokens',
        'hit rate',
        'ideal',
        'recomputed',
        'preemptions',
        'prefill share',
        'busy',
      ],
      rows,
    ),
  ];
}

/** The text report of one scenario. */
export function renderScenario(c: ReportContext, r: ScenarioResult): string {
  const lines = [...header(c), ...figures(r, c.params.offload !== null), '', plainSentence(c, r)];
  const gpus = gpuTable(r);
  if (gpus.length > 0) lines.push('', ...gpus);
  const calls = callTable(c, r.calls, r.replicas);
  if (calls.length > 0) lines.push('', ...calls);
  return lines.join('\n') + '\n';
}

/** The text report of a sweep: one row per point, the cliff marked, and its summary. */
export function renderSweep(c: ReportContext, s: SweepResult): string {
  const axis = s.axis === 'replicas' ? 'replicas' : s.axis === 'capacity' ? 'capacity' : 'GPUs';
  const anyRejected = s.points.some((p) => p.result.rejectedRequests > 0);
  const rows = s.points.map(({ value, result: r }) => [
    formatCount(value),
    formatPercent(r.admissionHitRate),
    formatPercent(r.idealHitRate),
    formatPercent(r.vllmMetricHitRate),
    formatCount(r.recomputedPrefillTokens),
    formatCount(r.preemptions),
    formatPercent(r.prefillShare),
    seconds(r.makespanS),
    r.slowdown.mean === null ? UNKNOWN : `${formatRatio(r.slowdown.mean)} / ${formatRatio(r.slowdown.max)}`,
    ...(anyRejected ? [formatCount(r.rejectedRequests)] : []),
    value === s.cliff.at ? '◀ cliff' : '',
  ]);
  const lines = [
    ...header(c, s.axis),
    `sweep over ${axis}:`,
    ...table(
      [
        axis,
        'hit rate',
        'ideal',
        "vLLM's metric",
        'recomputed',
        'preemptions',
        'prefill share',
        'makespan',
        'slowdown mean / max',
        ...(anyRejected ? ['rejected'] : []),
        '',
      ],
      rows,
    ),
    '',
    s.cliff.summary,
  ];
  if (s.plan) {
    const extra = s.plan.tried.filter((t) => !s.points.some((p) => p.value === t.gpus));
    if (extra.length > 0)
      lines.push(
        `searched between the listed counts: ${extra.map((t) => `${t.gpus} GPUs ${formatPercent(t.admissionHitRate)}`).join(', ')}`,
      );
    lines.push(s.plan.summary);
  }
  return lines.join('\n') + '\n';
}
