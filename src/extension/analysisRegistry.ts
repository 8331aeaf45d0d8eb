import * as vscode from 'vscode';
import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import type { PriceBook } from '../core/cost/costTypes';
import { parseTrace } from '../core/trace/parseTrace';
import type { ParsedTrace, TraceFile } from '../core/trace/parseTrace';
import { uiText } from '../core/text/safeText';
import type { TraceProblems } from '../core/view/traceService';
import { companionFiles, listCompanions } from '../node/traceFiles';
import { fileProblem, problemDiagnostics, traceDiagnostics, withoutRetryLoops } from './diagnostics';
import type { TraceDiagnostics } from './diagnostics';
import {
  ANALYSIS_SETTINGS,
  CODELENS_SETTINGS,
  maxFileBytes,
  PRICE_SETTINGS,
  problemsShowRetryLoops,
  readAnalysisOptions,
  readPriceBook,
} from './settings';
import { analyzeTrace, isTrace, tooLargeAnalysis } from './traceAnalysis';
import type { TraceAnalysis } from './traceAnalysis';
import { isLoadFailure } from './traceDocument';
import type { LoadFailure } from './traceDocument';
import { tooLargeMessage, yieldToEventLoop } from './traceLoader';
import { basename } from 'node:path';

/** The files CodeLens and Problems look at: every extension a supported format uses. */
export const TRACE_FILE_PATTERN = '**/*.{jsonl,json,traj}';

/**
 * Where the extension reads text documents: local and remote files. Registered by
 * pattern, not by a language id, so JSON Lines keeps its own highlighting.
 */
export const TRACE_DOCUMENT_SELECTOR: vscode.DocumentFilter[] = [
  { scheme: 'file', pattern: TRACE_FILE_PATTERN },
  { scheme: 'vscode-remote', pattern: TRACE_FILE_PATTERN },
];

/** A path with one of TRACE_FILE_PATTERN's extensions. */
export const TRACE_EXTENSION = /\.(jsonl|json|traj)$/i;

/** True for a URI CodeLens and Problems consider (a supported extension on a readable scheme). */
export function isTraceCandidate(uri: vscode.Uri): boolean {
  return (uri.scheme === 'file' || uri.scheme === 'vscode-remote') && TRACE_EXTENSION.test(uri.path);
}

/** Re-parses a text document this long after its last edit (an agent appends in bursts). */
const EDIT_DEBOUNCE_MS = 500;

/** One document version's parse. */
interface CachedParse {
  version: number;
  generation: number;
  result: Promise<TraceAnalysis | null>;
}

/** What the inspector last read for one of its documents. */
interface InspectorSource {
  uri: vscode.Uri;
  diagnostics: TraceDiagnostics;
}

/** What a text document's parse publishes, and for which version. */
interface TextSource {
  version: number;
  generation: number;
  diagnostics: TraceDiagnostics;
}

/**
 * Parses each trace text document once per version and shares the result between
 * CodeLens, Problems and the commands (hexeditor's registry pattern). It is also the
 * one owner of the Problems collection, fed from two sources:
 *
 * - a trace open as text in an editor tab (its buffer, parsed here), and
 * - a trace open in the inspector (its file on disk, parsed by TraceDocument's worker).
 *
 * Per file the text source wins (it is what the user sees and may be unsaved), else
 * the first inspector document showing it; so no problem is listed twice. A file's
 * problems go when its last text tab and its last inspector close. Text documents that
 * are not traces (package.json…) publish nothing: the extension stays silent there.
 */
export class TraceAnalysisRegistry implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('agentTrace');
  private readonly parses = new Map<string, CachedParse>();
  private readonly textSources = new Map<string, TextSource>();
  private readonly inspectorSources = new Map<object, InspectorSource>();
  private published = new Map<string, vscode.Uri>();
  /** Bumped when the analysis settings change: every cached parse is re-analysed. */
  private generation = 0;
  private options: AnalysisOptions = readAnalysisOptions();
  /** List prices and the user's own (`agentTrace.prices`), rebuilt when that setting changes. */
  private prices: PriceBook;
  private syncTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly subscriptions: vscode.Disposable[];
  /** Fires when analyses may have changed (settings, edits): CodeLens refreshes on it. */
  readonly onDidChange = this.changed.event;

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.prices = this.readPrices();
    this.subscriptions = [
      this.collection,
      this.changed,
      vscode.window.tabGroups.onDidChangeTabs(() => this.syncTextSources()),
      vscode.workspace.onDidOpenTextDocument((d) => {
        if (isTraceCandidate(d.uri)) this.syncTextSources();
      }),
      vscode.workspace.onDidCloseTextDocument((d) => {
        this.parses.delete(d.uri.toString());
        if (this.textSources.has(d.uri.toString())) this.syncTextSources();
      }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (!isTraceCandidate(e.document.uri) || e.contentChanges.length === 0) return;
        clearTimeout(this.syncTimer);
        this.syncTimer = setTimeout(() => {
          this.syncTextSources();
          this.changed.fire();
        }, EDIT_DEBOUNCE_MS);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        // The size limit decides whether a document is read at all: it re-reads like the analysis settings.
        if (
          e.affectsConfiguration(ANALYSIS_SETTINGS) ||
          e.affectsConfiguration(PRICE_SETTINGS) ||
          e.affectsConfiguration('agentTrace.maxFileSizeMB')
        )
          this.settingsChanged();
        else if (e.affectsConfiguration(CODELENS_SETTINGS)) this.changed.fire();
        // Shown or not, the loops are already listed: publishing again is enough.
        if (e.affectsConfiguration('agentTrace.problems.retryLoops')) this.render();
      }),
    ];
    this.syncTextSources();
  }

  /** The analysis options in force (from the settings). */
  get analysisOptions(): AnalysisOptions {
    return this.options;
  }

  /** The price book in force (the library's list prices and `agentTrace.prices`). */
  get priceBook(): PriceBook {
    return this.prices;
  }

  /**
   * Reads `agentTrace.prices`; entries that cannot be read are skipped. Which and why goes to
   * the output channel: the notification quotes none of it, since a workspace's settings can
   * carry text that a notification would render as a link.
   */
  private readPrices(): PriceBook {
    const { book, problems } = readPriceBook();
    if (problems.length > 0) {
      this.log.warn(`agentTrace.prices: ${problems.join('; ')}`);
      const n = problems.length;
      void vscode.window.showWarningMessage(
        `${n} problem${n === 1 ? '' : 's'} in the agentTrace.prices setting: those entries were left out. The Agent Trace Inspector output lists them.`,
      );
    }
    return book;
  }

  dispose(): void {
    clearTimeout(this.syncTimer);
    for (const s of this.subscriptions) s.dispose();
  }

  /**
   * The parse and analysis of a text document's current version, computed once and
   * shared. Null when it could not be read (logged); never throws.
   */
  analyze(document: vscode.TextDocument): Promise<TraceAnalysis | null> {
    const key = document.uri.toString();
    const cached = this.parses.get(key);
    if (cached && cached.version === document.version && cached.generation === this.generation) return cached.result;
    const generation = this.generation;
    const result = this.parseDocument(document).then(
      ({ parsed, tooLarge }) =>
        parsed
          ? analyzeTrace(parsed, this.options, this.prices)
          : tooLarge
            ? tooLargeAnalysis(document.uri, tooLarge)
            : null,
      (e: unknown) => {
        this.log.error(
          `Could not analyse ${uiText(document.uri.toString(true), { max: 2000 })}: ${uiText(e instanceof Error ? (e.stack ?? e.message) : String(e), { max: 4000, multiline: true })}`,
        );
        return null;
      },
    );
    this.parses.set(key, { version: document.version, generation, result });
    return result;
  }

  /**
   * The inspector read (or re-read, or re-analysed) one of its documents: publish its
   * problems (listed by its trace worker) unless a text source covers them.
   */
  inspectorLoaded(owner: object, uri: vscode.Uri, result: TraceProblems | LoadFailure): void {
    try {
      this.inspectorSources.set(owner, {
        uri,
        diagnostics: isLoadFailure(result) ? fileProblem(uri, result.message) : problemDiagnostics(uri, result),
      });
    } catch (e) {
      this.log.error(
        `Could not list the problems of ${uiText(uri.toString(true), { max: 2000 })}: ${uiText(e instanceof Error ? e.message : String(e), { max: 4000 })}`,
      );
    }
    this.render();
  }

  /** An inspector document closed: its problems go unless something else still shows them. */
  inspectorClosed(owner: object): void {
    this.inspectorSources.delete(owner);
    this.render();
  }

  private settingsChanged(): void {
    this.options = readAnalysisOptions();
    this.prices = this.readPrices();
    this.generation += 1;
    // Inspector documents re-analyse in their workers and report back through inspectorLoaded.
    this.render();
    this.syncTextSources();
    this.changed.fire();
  }

  /**
   * Reads a document's text (plus Claude Code sub-agent logs beside it on disk, the safe
   * ones) with the core parser. A document over `agentTrace.maxFileSizeMB` is not read;
   * if its start reads as a trace, that is said (`tooLarge`) instead of showing nothing.
   */
  private async parseDocument(
    document: vscode.TextDocument,
  ): Promise<{ parsed: ParsedTrace | null; tooLarge: string | null }> {
    const text = document.getText();
    const name = basename(document.uri.path);
    const max = maxFileBytes(this.log);
    const size = Buffer.byteLength(text, 'utf8');
    if (size > max) {
      // Enough of the start to detect the format (50 records), cut at a line end.
      const head = text.slice(0, Math.min(text.length, 1 << 20));
      const start = await parseTrace([
        { key: name, bytes: Buffer.from(head.slice(0, Math.max(head.lastIndexOf('\n'), 0) || head.length), 'utf8') },
      ]);
      return { parsed: null, tooLarge: start.model.format !== null ? tooLargeMessage(name, size, max) : null };
    }
    const files: TraceFile[] = [{ key: name, bytes: Buffer.from(text, 'utf8') }];
    if (document.uri.scheme === 'file') {
      const listing = await listCompanions(document.uri.fsPath);
      files[0]!.notes = listing.refused;
      files.push(...companionFiles(listing));
    }
    return { parsed: await parseTrace(files, { yieldControl: yieldToEventLoop }), tooLarge: null };
  }

  /** Trace files open as text in some editor tab, by URI string. */
  private textTabs(): Map<string, vscode.Uri> {
    const shown = new Map<string, vscode.Uri>();
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        if (tab.input instanceof vscode.TabInputText && isTraceCandidate(tab.input.uri))
          shown.set(tab.input.uri.toString(), tab.input.uri);
      }
    }
    return shown;
  }

  /** Starts or drops text sources so they match the trace files open as text. */
  private syncTextSources(): void {
    const shown = this.textTabs();
    let removed = false;
    for (const key of [...this.textSources.keys()]) {
      if (!shown.has(key)) {
        this.textSources.delete(key);
        removed = true;
      }
    }
    if (removed) this.render();
    for (const key of shown.keys()) {
      const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
      if (!document) continue; // a restored tab whose document is not loaded yet: onDidOpenTextDocument brings it
      const current = this.textSources.get(key);
      if (current && current.version === document.version && current.generation === this.generation) continue;
      const { version } = document;
      const generation = this.generation;
      void this.analyze(document).then((analysis) => {
        // Stale: the tab closed, or a newer version or setting arrived meanwhile.
        if (!this.textTabs().has(key) || document.version !== version || generation !== this.generation) return;
        if (analysis?.tooLarge)
          this.textSources.set(key, {
            version,
            generation,
            diagnostics: fileProblem(document.uri, analysis.tooLarge, vscode.DiagnosticSeverity.Information),
          });
        else if (!analysis || !isTrace(analysis.parsed)) this.textSources.delete(key);
        else
          this.textSources.set(key, {
            version,
            generation,
            diagnostics: traceDiagnostics(document.uri, analysis.parsed, analysis),
          });
        this.render();
      });
    }
  }

  /** Publishes, per file, the text source's problems if any, else the first inspector's. */
  private render(): void {
    const next = new Map<string, { uri: vscode.Uri; diagnostics: vscode.Diagnostic[] }>();
    for (const source of this.inspectorSources.values()) {
      for (const [key, entry] of source.diagnostics) if (!next.has(key)) next.set(key, entry);
    }
    for (const source of this.textSources.values()) for (const [key, entry] of source.diagnostics) next.set(key, entry);
    for (const [key, uri] of this.published) if (!next.has(key)) this.collection.delete(uri);
    const loops = problemsShowRetryLoops();
    for (const entry of next.values())
      this.collection.set(entry.uri, loops ? entry.diagnostics : withoutRetryLoops(entry.diagnostics));
    this.published = new Map([...next].map(([key, entry]) => [key, entry.uri]));
  }
}
