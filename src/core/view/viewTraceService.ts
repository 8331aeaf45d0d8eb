import { traceTitle } from '../sessions/sessionTitle';
import { emptySessionContext } from '../context/contextView';
import type { SessionContext } from '../context/contextView';
import type { SessionPage } from './sessionList';
import { sessionLabel, sessionTreeOrder } from './sessionList';
import { countTools } from './traceService';
import { MAX_ROWS_PER_REQUEST, MAX_SEARCH_HITS, searchCalls, sessionPage, toolCallRow } from './traceService';
import type { SearchableCall } from './traceService';
import type {
  SearchResult,
  SessionBody,
  SessionIntro,
  ToolCallRow,
  TraceHeader,
  TraceQueries,
  TraceQueryParams,
} from './traceQueries';
import { timelineColumnsOfRows } from './timelineColumns';
import { customReplay } from '../cost/cacheTtlWhatIf';
import type { TtlReplay } from '../cost/cacheTtlWhatIf';
import type { CallDetail, CallRow, SessionView, TraceView } from './traceView';
import { costFigures } from './traceView';

/**
 * The inspector page's requests answered from a built view instead of a model: the
 * standalone HTML report carries the trace as the view the inspector draws (summaries,
 * call rows, analyses) and every call's details, and has no host and no worker. Same
 * answers as TraceService on the trace the view was built from (test/unit/core/view
 * checks them side by side); the page cannot tell the two apart.
 */
export class ViewTraceService implements TraceQueries {
  private readonly byId = new Map<
    string,
    { view: SessionView; details: readonly CallDetail[]; context: SessionContext | null }
  >();
  private order: ReturnType<typeof sessionTreeOrder> | null = null;

  constructor(
    private readonly view: TraceView,
    /** `details[i][k]`: call k of `view.sessions[i]`. */
    details: readonly (readonly CallDetail[])[],
    /** `context[i]`: the context anatomy of `view.sessions[i]` (a report made before it has none). */
    context: readonly (SessionContext | null)[] = [],
  ) {
    view.sessions.forEach((s, i) => {
      if (!this.byId.has(s.summary.id))
        this.byId.set(s.summary.id, { view: s, details: details[i] ?? [], context: context[i] ?? null });
    });
  }

  /** The session's context anatomy as the report embedded it. */
  sessionContext({ sessionId }: TraceQueryParams<'sessionContext'>): SessionContext | null {
    const entry = this.byId.get(sessionId);
    if (!entry) return null;
    return entry.context ?? emptySessionContext(sessionId, 'This report was made without the context anatomy.');
  }

  header(): TraceHeader {
    const v = this.view;
    const main = v.sessions.find((s) => s.summary.role === 'main') ?? v.sessions[0];
    return {
      fileName: v.fileName,
      files: [v.fileName],
      format: v.format,
      formatLabel: v.formatLabel,
      detection: v.detection,
      detectionConfidence: v.detectionConfidence,
      formatChosen: v.formatChosen,
      formatChoices: v.formatChoices,
      limitations: v.limitations,
      problem: v.problem,
      diagnostics: v.diagnostics,
      skippedRecords: v.skippedRecords,
      sessionCount: v.sessions.length,
      callCount: v.sessions.reduce((n, s) => n + s.calls.length, 0),
      defaultSessionId: main?.summary.id ?? null,
      // The summary's display title is sessionTitle's already: the same rule as the host's.
      title: traceTitle(
        v.fileName,
        v.sessions.map((s) => s.summary),
        main ? { id: main.summary.id, title: main.summary.displayTitle, turns: [] } : undefined,
      ),
      cost: v.cost,
    };
  }

  sessionList({ query, offset, limit }: TraceQueryParams<'sessionList'>): SessionPage {
    const sessions = this.view.sessions.map((s) => s.summary);
    this.order ??= sessionTreeOrder(sessions);
    const entries = this.order.map(({ index, depth }) => {
      const s = sessions[index]!;
      return { id: s.id, label: sessionLabel(s, s.llmCalls, depth), depth };
    });
    return sessionPage(entries, query, offset, limit);
  }

  sessionIntro({ sessionId }: TraceQueryParams<'sessionIntro'>): SessionIntro | null {
    const s = this.byId.get(sessionId)?.view;
    if (!s) return null;
    return {
      summary: s.summary,
      compactions: s.compactions,
      events: s.events,
      subagents: s.subagents,
      cost: s.cost ? costFigures(s.cost) : null,
    };
  }

  /** The session replayed under a TTL the user typed, from the replay input the view keeps; null without prices. */
  customTtl({ sessionId, minutes, writeMultiple }: TraceQueryParams<'customTtl'>): TtlReplay | null {
    const cost = this.byId.get(sessionId)?.view.cost;
    return cost ? customReplay(cost.ttlCalls, cost.ttl, { minutes, writeMultiple }) : null;
  }

  sessionBody({ sessionId }: TraceQueryParams<'sessionBody'>): SessionBody | null {
    const entry = this.byId.get(sessionId);
    if (!entry) return null;
    const s = entry.view;
    const { tools, toolCallCount } = countTools(
      entry.details.flatMap((d) => d.tools.map((t) => ({ name: t.name, failed: t.failed === true }))),
    );
    return {
      sessionId,
      analysis: s.analysis,
      columns: timelineColumnsOfRows(s.calls, s.analysis.loops, s.compactions, s.subagents),
      tools,
      toolCallCount,
    };
  }

  callRows({ sessionId, from, count }: TraceQueryParams<'callRows'>): CallRow[] {
    const calls = this.byId.get(sessionId)?.view.calls ?? [];
    return calls.slice(Math.max(0, from), Math.min(calls.length, from + Math.min(count, MAX_ROWS_PER_REQUEST)));
  }

  toolRows({ sessionId, from, count }: TraceQueryParams<'toolRows'>): ToolCallRow[] {
    const details = this.byId.get(sessionId)?.details ?? [];
    const out: ToolCallRow[] = [];
    const end = from + Math.min(count, MAX_ROWS_PER_REQUEST);
    let i = 0;
    for (const d of details) {
      for (const t of d.tools) {
        if (i >= from && i < end) out.push(toolCallRow(i, d.index, t, t.failed));
        i += 1;
        if (i >= end) return out;
      }
    }
    return out;
  }

  search({ query, sessionId }: TraceQueryParams<'search'>, limit = MAX_SEARCH_HITS): SearchResult {
    const entries =
      sessionId === null
        ? this.view.sessions.map((s) => this.byId.get(s.summary.id)!)
        : [this.byId.get(sessionId)].filter((e) => e !== undefined);
    return searchCalls(
      entries.map(({ view, details }) => ({
        id: view.summary.id,
        calls: (function* (): Generator<SearchableCall> {
          for (let k = 0; k < view.calls.length; k++) {
            const detail = details[k];
            yield {
              index: view.calls[k]!.index,
              turn: view.calls[k]!.turn,
              tools: detail?.tools ?? [],
              prompt: () => detail?.turnPreview ?? null,
            };
          }
        })(),
      })),
      query,
      limit,
    );
  }

  callsUsingTool({ sessionId, tool }: TraceQueryParams<'callsUsingTool'>): Int32Array {
    const details = this.byId.get(sessionId)?.details ?? [];
    return Int32Array.from(details.filter((d) => d.tools.some((t) => t.name === tool)).map((d) => d.index));
  }

  callDetail({ sessionId, callIndex }: TraceQueryParams<'callDetail'>): CallDetail | null {
    return this.byId.get(sessionId)?.details[callIndex] ?? null;
  }
}
