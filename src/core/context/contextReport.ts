import { HAS_INPUT_USD, PART_KINDS, PART_KIND_LABELS, callColumnsOf, partColumnsOf } from './contextParts';
import type { ContextPart, PartKind, SessionAnatomy } from './contextParts';
import type { TraceAnatomy } from './contextAnatomy';
import { median } from './tokenCounter';

/** Tools that read a file into the context, across agents (Claude Code, Gemini CLI, OpenCode, Codex's viewers). */
const READ_TOOLS = /^(read|read_file|readfile|view|read_many_files|notebookread)$/i;
/** A tool result this large, carried this long, is worth a sentence. */
export const BIG_RESULT_TOKENS = 10_000;
/** …carried for at least this many calls. */
export const BIG_RESULT_MIN_CALLS = 5;
/** What a trimmed output would keep (the last lines, as `tail` does). */
export const TRIMMED_TOKENS = 1_000;

/** A group of parts that came from one place: a file, a command, a tool, an MCP server, a kind. */
export interface Contributor {
  /** Stable key, e.g. `file:src/big.ts`, `command:npm test`, `tool:Grep`, `kind:system`. */
  key: string;
  /** What it is, in words: "`src/big.ts` read". */
  label: string;
  kind: PartKind;
  /** How many parts (reads, outputs, messages) it holds. */
  count: number;
  /** Σ tokens of its parts. */
  tokens: number;
  /** Calls that carried at least one of its parts (over every session). */
  calls: number;
  /** Dollars of its parts over every call that carried them; null when nothing was priced. */
  usd: number | null;
  /** Some of its tokens are estimates (not counted from logged text). */
  estimated: boolean;
}

/** A priced suggestion: a sentence with its figure, and how the figure was computed. */
export interface Suggestion {
  text: string;
  /** The dollars the sentence is about. */
  usd: number;
  how: string;
}

/** A total by one grouping (tool, MCP server, file). */
export interface GroupTotal {
  name: string;
  tokens: number;
  usd: number | null;
  parts: number;
}

/** What `agent-trace context` reports over a whole trace. */
export interface ContextReport {
  calls: number;
  /** Input-side dollars of every priced call; the parts' dollars sum to it. */
  inputUsd: number | null;
  cacheReadUsd: number;
  writeUsd: number;
  byKind: Record<PartKind, { tokens: number; usd: number | null }>;
  byTool: GroupTotal[];
  byMcpServer: GroupTotal[];
  byFile: GroupTotal[];
  contributors: Contributor[];
  suggestions: Suggestion[];
  /** Medians over sessions' calls of the tokenizer's error against the logged growth (null when none could be compared). */
  medianGrowthError: number | null;
  medianGrowthErrorRaw: number | null;
  /** The same with each call predicted from its session's earlier calls only (Calibration.predictive); null when no call was. */
  medianGrowthErrorPredicted: number | null;
  medianInputError: number | null;
}

/** What names a part's group: its kind and its tool's names (a ContextPart, or the report's cursor over the columns). */
type PartNames = Pick<ContextPart, 'kind' | 'tool' | 'mcpServer' | 'targetFile' | 'command'>;

/** A part in words, as its group is named: "`src/big.ts` read", "output of `npm test`", a kind's words. */
export function partLabel(part: PartNames): string {
  return groupLabel(part);
}

/** The file a part read into the context (a read tool's result naming it), else null. */
export function fileReadOf(part: PartNames): string | null {
  return part.kind === 'toolResult' && part.targetFile !== null && part.tool !== null && READ_TOOLS.test(part.tool)
    ? part.targetFile
    : null;
}

/** The key of a part's group: `file:…`, `command:…`, `mcp:server:tool`, `toolResult:Grep`, `kind:system`. */
function groupKey(part: PartNames): string {
  if (fileReadOf(part) !== null) return `file:${part.targetFile}`;
  if (part.kind === 'toolResult' && part.command !== null) return `command:${part.command}`;
  if (part.kind === 'toolResult' && part.mcpServer !== null) return `mcp:${part.mcpServer}:${part.tool}`;
  if (part.kind === 'toolResult' || part.kind === 'subagentResult' || part.kind === 'toolUse')
    return `${part.kind}:${part.tool ?? '?'}`;
  return `kind:${part.kind}`;
}

/** A contributor being gathered: per session, the [first, last] calls of its parts, flat (the session's list last); a file's reads. */
interface Group {
  c: Contributor;
  ranges: number[][];
  session: number;
  /** The dollars of each read of the file (0 when unpriced). */
  reads: number[] | null;
}

/**
 * The group of a part, found by the string its key is made of (the file, the command, the tool)
 * in a map per kind of key: the key itself (`command:` and a command of kilobytes) was built and
 * hashed for every part, the same groups as groupKey.
 */
class GroupLookup {
  private readonly files = new Map<string, Group>();
  private readonly commands = new Map<string, Group>();
  private readonly mcp = new Map<string, Group>();
  private readonly tools = new Map<PartKind, Map<string, Group>>();
  private readonly kinds = new Map<PartKind, Group>();

  get(part: PartNames, read: boolean): Group | undefined {
    const [map, key] = this.place(part, read);
    return map.get(key);
  }

  set(part: PartNames, read: boolean, group: Group): void {
    const [map, key] = this.place(part, read);
    map.set(key, group);
  }

  /** The map and key of a part's group, in groupKey's order of rules. */
  private place(part: PartNames, read: boolean): [Map<string, Group>, string] {
    const kind = part.kind;
    if (read) return [this.files, part.targetFile!];
    if (kind === 'toolResult' && part.command !== null) return [this.commands, part.command];
    if (kind === 'toolResult' && part.mcpServer !== null) return [this.mcp, `${part.mcpServer}:${part.tool}`];
    if (kind === 'toolResult' || kind === 'subagentResult' || kind === 'toolUse') {
      let byTool = this.tools.get(kind);
      if (!byTool) this.tools.set(kind, (byTool = new Map()));
      return [byTool, part.tool ?? '?'];
    }
    return [this.kinds as Map<string, Group>, kind];
  }
}

/** The words of a part's group (built once per group, not per part: a long log has hundreds of thousands of parts). */
function groupLabel(part: PartNames): string {
  if (fileReadOf(part) !== null) return `\`${part.targetFile}\` read`;
  if (part.kind === 'toolResult' && part.command !== null) return `output of \`${oneLine(part.command)}\``;
  if (part.kind === 'toolResult' && part.mcpServer !== null)
    return `MCP \`${part.mcpServer}\` results of \`${part.tool}\``;
  if (part.kind === 'toolResult' || part.kind === 'subagentResult' || part.kind === 'toolUse') {
    const what =
      part.kind === 'toolUse'
        ? 'calls written to'
        : part.kind === 'subagentResult'
          ? 'sub-agent answers from'
          : 'results of';
    return `${what} \`${part.tool ?? 'unknown tool'}\``;
  }
  return PART_KIND_LABELS[part.kind];
}

/** A command's first line, cut to 60 characters, for sentences. */
export function oneLine(text: string): string {
  const line = text.split('\n', 1)[0]!;
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/** Counts the calls covered by a set of [first, last] ranges, given flat: first, last, first, last… */
export function coveredCalls(flat: readonly number[]): number {
  // Flat pairs first, last (no array per part). A session's parts come in the order they entered, so
  // the ranges are mostly sorted already; otherwise their indices are sorted (stably) by first call.
  const pairs = flat.length >> 1;
  let sorted = true;
  for (let i = 1; i < pairs && sorted; i++) if (flat[2 * i]! < flat[2 * i - 2]!) sorted = false;
  const order = sorted ? null : Array.from({ length: pairs }, (_, i) => i).sort((x, y) => flat[2 * x]! - flat[2 * y]!);
  let n = 0;
  let end = -1;
  for (let j = 0; j < pairs; j++) {
    const i = order === null ? j : order[j]!;
    const a = flat[2 * i]!;
    const b = flat[2 * i + 1]!;
    if (b <= end) continue;
    n += b - Math.max(a, end + 1) + 1;
    end = b;
  }
  return n;
}

/** The report: totals by kind, tool, MCP server and file, the largest contributors and priced suggestions. */
export function contextReport(anatomy: TraceAnatomy, limit = 15): ContextReport {
  const byKind = {} as ContextReport['byKind'];
  for (const k of PART_KINDS) byKind[k] = { tokens: 0, usd: null };
  /** The groups in the order first seen; found through `lookup` without building their key for every part. */
  const groups: Group[] = [];
  const lookup = new GroupLookup();
  const tools = new Map<string, GroupTotal>();
  const servers = new Map<string, GroupTotal>();
  const files = new Map<string, GroupTotal>();
  let calls = 0;
  let inputUsd: number | null = null;
  let cacheReadUsd = 0;
  let writeUsd = 0;
  const cursor: { -readonly [K in keyof PartNames]: PartNames[K] } = {
    kind: 'system',
    tool: null,
    mcpServer: null,
    targetFile: null,
    command: null,
  };
  anatomy.sessions.forEach((s, si) => {
    const sc = callColumnsOf(s);
    calls += sc.length;
    for (let k = 0; k < sc.length; k++)
      if ((sc.has[k]! & HAS_INPUT_USD) !== 0) inputUsd = (inputUsd ?? 0) + sc.inputUsd[k]!;
    // The parts' columns, read through one cursor (no object per part: docs/performance.md#context-anatomy-benchcontext).
    const c = partColumnsOf(s);
    for (let i = 0; i < c.length; i++) {
      const src = c.source[i] ?? null;
      const p = cursor;
      p.kind = PART_KINDS[c.kind[i]!]!;
      p.tool = src === null ? null : src.tool;
      p.mcpServer = src === null ? null : src.mcpServer;
      p.targetFile = src === null ? null : src.targetFile;
      p.command = src === null ? null : src.command;
      const tokens = c.tokens[i]!;
      const usdOrNaN = c.usd[i]!;
      const partUsd = Number.isNaN(usdOrNaN) ? null : usdOrNaN;
      const k = byKind[p.kind];
      k.tokens += tokens;
      if (partUsd !== null) k.usd = (k.usd ?? 0) + partUsd;
      cacheReadUsd += c.cacheReadUsd[i]!;
      writeUsd += c.writeUsd[i]!;
      if (p.tool !== null) addTotal(tools, p.tool, tokens, partUsd);
      if (p.mcpServer !== null) addTotal(servers, p.mcpServer, tokens, partUsd);
      if (p.targetFile !== null && p.kind === 'toolResult') addTotal(files, p.targetFile, tokens, partUsd);
      const read = fileReadOf(p) !== null;
      let g = lookup.get(p, read);
      if (!g) {
        const key = groupKey(p);
        g = {
          c: { key, label: groupLabel(p), kind: p.kind, count: 0, tokens: 0, calls: 0, usd: null, estimated: false },
          ranges: [],
          session: -1,
          reads: null,
        };
        lookup.set(p, read, g);
        groups.push(g);
      }
      if (read) (g.reads ??= []).push(partUsd ?? 0);
      g.c.count += 1;
      g.c.tokens += tokens;
      if (partUsd !== null) g.c.usd = (g.c.usd ?? 0) + partUsd;
      if (c.estimated[i] === 1) g.c.estimated = true;
      if (g.session !== si) {
        g.ranges.push([]);
        g.session = si;
      }
      g.ranges[g.ranges.length - 1]!.push(c.firstCall[i]!, c.lastCall[i]!);
    }
  });
  /** Every read of each file, by group key (the suggestions price the re-reads). */
  const fileReads = new Map<string, number[]>();
  for (const g of groups) if (g.reads !== null) fileReads.set(g.c.key, g.reads);
  const contributors = groups.map(({ c, ranges }) => {
    for (const r of ranges) c.calls += coveredCalls(r);
    return c;
  });
  contributors.sort((a, b) => (b.usd ?? 0) - (a.usd ?? 0) || b.tokens - a.tokens);
  const sessionsCompared = anatomy.sessions.filter((s) => s.calibration.comparedCalls > 0);
  return {
    calls,
    inputUsd,
    cacheReadUsd,
    writeUsd,
    byKind,
    byTool: sortTotals(tools),
    byMcpServer: sortTotals(servers),
    byFile: sortTotals(files),
    contributors: contributors.slice(0, limit),
    suggestions: suggestions(anatomy.sessions, contributors, fileReads, inputUsd),
    medianGrowthError: median(sessionsCompared.map((s) => s.calibration.medianAbsError!)),
    medianGrowthErrorRaw: median(sessionsCompared.map((s) => s.calibration.medianAbsErrorRaw!)),
    medianGrowthErrorPredicted: median(
      anatomy.sessions.flatMap((s) =>
        s.calibration.predictive.medianAbsError === null ? [] : [s.calibration.predictive.medianAbsError],
      ),
    ),
    medianInputError: median(
      anatomy.sessions.flatMap((s) =>
        s.calibration.medianInputError === null ? [] : [s.calibration.medianInputError],
      ),
    ),
  };
}

function addTotal(map: Map<string, GroupTotal>, name: string, tokens: number, partUsd: number | null): void {
  let t = map.get(name);
  if (!t) map.set(name, (t = { name, tokens: 0, usd: null, parts: 0 }));
  t.tokens += tokens;
  t.parts += 1;
  if (partUsd !== null) t.usd = (t.usd ?? 0) + partUsd;
}

function sortTotals(map: Map<string, GroupTotal>): GroupTotal[] {
  return [...map.values()].sort((a, b) => (b.usd ?? 0) - (a.usd ?? 0) || b.tokens - a.tokens);
}

/**
 * Suggestions, each from a figure of this trace: large outputs carried for many calls (what
 * keeping their last 1,000 tokens would have saved, pro rata of their dollars), files read more
 * than once (the dollars of the re-reads), and the unlogged base carried by every call.
 */
function suggestions(
  sessions: readonly SessionAnatomy[],
  contributors: readonly Contributor[],
  fileReads: ReadonlyMap<string, number[]>,
  inputUsd: number | null,
): Suggestion[] {
  const out: Suggestion[] = [];
  const baseTokens: number[] = [];
  for (const s of sessions) {
    const c = partColumnsOf(s);
    for (let i = 0; i < c.length; i++) {
      const kind = PART_KINDS[c.kind[i]!]!;
      if (kind === 'system') baseTokens.push(c.tokens[i]!);
      const partUsd = c.usd[i]!;
      if (kind !== 'toolResult' || c.tokens[i]! < BIG_RESULT_TOKENS || Number.isNaN(partUsd)) continue;
      const carried = c.lastCall[i]! - c.firstCall[i]! + 1;
      if (carried < BIG_RESULT_MIN_CALLS) continue;
      const src = c.source[i] ?? null;
      const p = {
        tokens: c.tokens[i]!,
        usd: partUsd,
        firstCall: c.firstCall[i]!,
        lastCall: c.lastCall[i]!,
        tool: src === null ? null : src.tool,
        targetFile: src === null ? null : src.targetFile,
        command: src === null ? null : src.command,
      };
      const kept = p.tokens - TRIMMED_TOKENS;
      const saved = (p.usd * kept) / p.tokens;
      const what =
        p.command !== null
          ? `the output of \`${oneLine(p.command)}\``
          : p.targetFile !== null
            ? `the ${p.tool ?? 'tool'} result for \`${p.targetFile}\``
            : `a \`${p.tool ?? 'tool'}\` result`;
      out.push({
        text: `${cap(what)} (${k(p.tokens)} tokens) was carried for ${carried} calls (${usd(p.usd)}); keeping only its last ${k(TRIMMED_TOKENS)} tokens (as \`| tail\` would) would have kept ~${k(kept)} out and saved ~${usd(saved)}`,
        usd: saved,
        how: `its dollars over calls ${p.firstCall + 1}–${p.lastCall + 1} × ${k(kept)} ÷ ${k(p.tokens)} tokens (same reads and writes, pro rata)`,
      });
    }
  }
  for (const c of contributors) {
    if (!c.key.startsWith('file:') || c.count < 2 || c.usd === null) continue;
    const reads = fileReads.get(c.key) ?? [];
    reads.sort((a, b) => b - a);
    const again = reads.slice(1).reduce((a, v) => a + v, 0);
    if (again <= 0) continue;
    out.push({
      text: `${c.label} ${c.count} times: ${k(c.tokens)} tokens in context for ${c.calls} calls, ${usd(c.usd)}; the ${c.count - 1} reads after the costliest one carried ${usd(again)}`,
      usd: again,
      how: 'Σ dollars of every read of the file except the costliest; saved only where the file had not changed between reads (the log does not say)',
    });
  }
  const base = contributors.find((c) => c.key === 'kind:system');
  if (base && base.usd !== null && inputUsd !== null && inputUsd > 0) {
    const perCall = median(baseTokens) ?? 0;
    out.push({
      text: `System prompt, tool definitions (MCP servers' schemas included) and memory files: ~${k(perCall)} tokens in every call, ${usd(base.usd)} (${Math.round((100 * base.usd) / inputUsd)}% of the input dollars); every MCP server or memory file left out takes its share off every call`,
      usd: base.usd,
      how: "estimated: the first call's logged input minus its visible text, per session; its dollars are its share of each call's cache reads and writes",
    });
  }
  return out.sort((a, b) => b.usd - a.usd).slice(0, 8);
}

function cap(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Tokens in thousands for sentences: 38k, 1.2k, 950. */
export function k(tokens: number): string {
  if (tokens < 1000) return String(Math.round(tokens));
  return tokens < 10_000 ? `${(tokens / 1000).toFixed(1)}k` : `${Math.round(tokens / 1000)}k`;
}

/** Dollars for sentences: $1.92, $0.0042. */
export function usd(value: number): string {
  return value >= 0.01 || value === 0 ? `$${value.toFixed(2)}` : `$${value.toPrecision(2)}`;
}

/** The report as text for the terminal. */
export function contextReportText(file: string, anatomy: TraceAnatomy, report: ContextReport): string {
  const lines: string[] = [];
  const tokenizers = [...new Set(anatomy.sessions.map((s) => s.calibration.tokenizer))].join(', ');
  lines.push(
    `Context anatomy of ${file} (${anatomy.format ?? 'unknown format'}): ${anatomy.sessions.length} session${anatomy.sessions.length === 1 ? '' : 's'}, ${report.calls} calls`,
  );
  lines.push(`Tokenizer: ${tokenizers}, calibrated per session against the logged input growth`);
  lines.push(
    `  median |error| of what each call appended: ${pct(report.medianGrowthError)} after calibration fitted on the same calls (${pct(report.medianGrowthErrorRaw)} raw), ${pct(report.medianGrowthErrorPredicted)} with each call predicted from the earlier calls only; of each call's whole input: ${pct(report.medianInputError)}`,
  );
  lines.push(
    report.inputUsd === null
      ? 'Input dollars: no call could be priced'
      : `Input dollars: ${usd(report.inputUsd)} (cache reads ${usd(report.cacheReadUsd)}, writes and uncached ${usd(report.writeUsd)}); output is not part of the context`,
  );
  lines.push('');
  lines.push('By part kind');
  for (const kind of PART_KINDS) {
    const v = report.byKind[kind];
    if (v.tokens === 0) continue;
    lines.push(
      `  ${PART_KIND_LABELS[kind].padEnd(54)} ${k(v.tokens).padStart(7)} tokens  ${(v.usd === null ? '—' : usd(v.usd)).padStart(9)}`,
    );
  }
  if (report.byMcpServer.length > 0) {
    lines.push('');
    lines.push('By MCP server (results; their tool schemas are in the estimated system part)');
    for (const t of report.byMcpServer.slice(0, 10))
      lines.push(
        `  ${t.name.padEnd(54)} ${k(t.tokens).padStart(7)} tokens  ${(t.usd === null ? '—' : usd(t.usd)).padStart(9)}`,
      );
  }
  lines.push('');
  lines.push('Largest contributors');
  for (const c of report.contributors) {
    const times = c.count > 1 ? ` ${c.count} times` : '';
    lines.push(
      `  ${c.label}${times}: ${k(c.tokens)} tokens in context for ${c.calls} call${c.calls === 1 ? '' : 's'}, ${c.usd === null ? 'unpriced' : usd(c.usd)}${c.estimated ? ' (estimated)' : ''}`,
    );
  }
  if (report.suggestions.length > 0) {
    lines.push('');
    lines.push('Suggestions');
    for (const s of report.suggestions) {
      lines.push(`  - ${s.text}`);
      lines.push(`    how: ${s.how}`);
    }
  }
  const notes = [...new Set([...anatomy.notes, ...anatomy.sessions.flatMap((s) => s.notes)])];
  if (notes.length > 0) {
    lines.push('');
    lines.push('Notes');
    for (const n of notes) lines.push(`  - ${n}`);
  }
  return `${lines.join('\n')}\n`;
}

function pct(value: number | null): string {
  return value === null ? 'n/a' : `${(value * 100).toFixed(1)}%`;
}

/** Tokens by kind of one call, for the JSON. */
export function kindsOf(byKind: Record<PartKind, number>): Partial<Record<PartKind, number>> {
  const out: Partial<Record<PartKind, number>> = {};
  for (const kind of PART_KINDS) if (byKind[kind] > 0) out[kind] = byKind[kind];
  return out;
}
