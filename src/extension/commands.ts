import * as vscode from 'vscode';
import { buildTraceReport } from '../core/report/traceReport';
import type { TraceReport } from '../core/report/traceReport';
import { formatPercent } from '../core/report/formatNumbers';
import type { CallRef } from '../protocol/messages';
import { isTraceCandidate, TRACE_EXTENSION } from './analysisRegistry';
import type { TraceAnalysisRegistry } from './analysisRegistry';
import { SHOW_IN_TIMELINE } from './codeLens';
import { INSPECTOR_ANY_VIEW_TYPE, INSPECTOR_VIEW_TYPE } from './inspectorProvider';
import type { InspectorProvider } from './inspectorProvider';
import { isPickHook, pickLocalSession } from './sessionPicker';
import type { PickHook } from './sessionPicker';
import { maxFileBytes } from './settings';
import { isLoadFailure } from './traceDocument';
import { loadTrace } from './traceLoader';
import { basename } from 'node:path';

/** What command factories get: the inspector, the shared analyses and the extension's log. */
export interface CommandContext {
  provider: InspectorProvider;
  registry: TraceAnalysisRegistry;
  log: vscode.LogOutputChannel;
  /** This extension's global storage folder: Cline's and Roo Code's tasks are in its siblings; assembled sessions are written below it. */
  storageDir: string;
}

/** The inspector view type that fits a file: the default editor for *.trace.jsonl, the "Open With" one otherwise. */
export function viewTypeFor(uri: vscode.Uri): string {
  return uri.path.toLowerCase().endsWith('.trace.jsonl') ? INSPECTOR_VIEW_TYPE : INSPECTOR_ANY_VIEW_TYPE;
}

/** A file with a trace's extension (the files the commands and CodeLens consider). */
function isTraceFile(uri: vscode.Uri): boolean {
  return uri.scheme !== 'output' && TRACE_EXTENSION.test(uri.path);
}

/** The trace the user is looking at: the focused inspector, the active text editor, or the active tab; none for other files. */
function activeTraceUri(provider: InspectorProvider): vscode.Uri | undefined {
  const doc = provider.activeDocument();
  if (doc) return doc.uri;
  const editor = vscode.window.activeTextEditor;
  if (editor && isTraceFile(editor.document.uri)) return editor.document.uri;
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputCustom && (input.viewType === INSPECTOR_VIEW_TYPE || input.viewType === INSPECTOR_ANY_VIEW_TYPE)) return input.uri;
  if (input instanceof vscode.TabInputText && isTraceFile(input.uri)) return input.uri;
  return undefined;
}

async function openInInspector(uri: vscode.Uri): Promise<void> {
  await vscode.commands.executeCommand('vscode.openWith', uri, viewTypeFor(uri));
}

/** The trace open as text in an editor tab, if it is: what the user sees, saved or not. */
function shownAsText(uri: vscode.Uri): vscode.TextDocument | undefined {
  const shown = vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString()));
  return shown && isTraceCandidate(uri) ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString()) : undefined;
}

/**
 * The report a command works on, from the parse that already exists where one does:
 * the registry's parse of a trace open as text, else the inspector's worker (the trace
 * is opened in the inspector first, so it is read once, off the host's event loop),
 * else the file read here.
 */
async function reportFor(ctx: CommandContext, uri: vscode.Uri): Promise<TraceReport> {
  const text = shownAsText(uri);
  if (text) {
    const analysis = await ctx.registry.analyze(text);
    if (analysis) return buildTraceReport(analysis.parsed, ctx.registry.analysisOptions);
  }
  await openInInspector(uri);
  const inspector = ctx.provider.documentFor(uri);
  if (inspector) {
    const report = await ctx.provider.report(inspector);
    if (isLoadFailure(report)) throw new Error(report.message);
    return report;
  }
  return buildTraceReport(await loadTrace(uri, maxFileBytes(), () => undefined), ctx.registry.analysisOptions);
}

/**
 * Analyses a trace with the same core as the CLI, opens it in the inspector and
 * returns the CLI's JSON report (so tests and other extensions can use the result).
 * With no trace given or active it offers the local agent sessions (a `{ pick }`
 * argument chooses from those rows in tests).
 */
async function analyzeSession(ctx: CommandContext, given: vscode.Uri | undefined, hook: PickHook | null): Promise<TraceReport | undefined> {
  const uri = given ?? activeTraceUri(ctx.provider) ?? (await pickLocalSession(ctx.log, ctx.storageDir, hook));
  if (!uri) return undefined;
  let report: TraceReport;
  try {
    report = await reportFor(ctx, uri);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    ctx.log.error(`Analyze Agent Session on ${uri.toString(true)}: ${message}`);
    void vscode.window.showErrorMessage(`${basename(uri.path)}: ${message}`);
    return undefined;
  }
  await openInInspector(uri);
  if (report.problem) {
    void vscode.window.showErrorMessage(`${basename(uri.path)}: ${report.problem}`);
    return report;
  }
  const main = report.sessions.find((s) => s.role === 'main') ?? report.sessions[0];
  // Over every session, as the report counts them (the same quantities as the summaries' failedToolCalls and retry loops).
  const failed = report.sessions.reduce((n, s) => n + s.toolCalls.failed, 0);
  const loops = report.sessions.reduce((n, s) => n + s.retryLoops.length, 0);
  if (main) {
    void vscode.window.showInformationMessage(
      `${basename(uri.path)}: ${main.llmCalls} LLM calls, ${main.userTurns} user turns, cache hit rate ${formatPercent(main.cacheHitRate)}, ` +
        `${failed} failed tool calls, ${loops} retry loop${loops === 1 ? '' : 's'}, ${report.diagnostics.filter((d) => d.severity === 'error').length} errors.`,
    );
  }
  return report;
}

function isCallRef(value: unknown): value is CallRef {
  const v = value as Partial<CallRef> | null;
  return typeof v === 'object' && v !== null && typeof v.sessionId === 'string' && typeof v.callIndex === 'number';
}

/** Opens the inspector on a trace (beside the text it was asked from) with one call selected. */
async function showInTimeline(ctx: CommandContext, uri: unknown, ref: unknown): Promise<void> {
  if (!(uri instanceof vscode.Uri) || !isCallRef(ref)) return;
  // An open inspector selects at once (or when its webview is ready); else the next one to open does.
  if (ctx.provider.selectCall(uri, ref, { reveal: true })) return;
  ctx.provider.queueSelect(uri, ref);
  try {
    await vscode.commands.executeCommand('vscode.openWith', uri, viewTypeFor(uri), vscode.ViewColumn.Beside);
  } finally {
    ctx.provider.dropQueuedSelect(uri);
  }
}

/** Every command, by id. Factories take the shared context (rust-analyzer's createCommands pattern). */
export function createCommands(ctx: CommandContext): Record<string, (...args: unknown[]) => unknown> {
  return {
    'agentTrace.analyzeSession': (arg?: unknown) => analyzeSession(ctx, arg instanceof vscode.Uri ? arg : undefined, isPickHook(arg) ? arg : null),
    'agentTrace.openInInspector': async (uri?: unknown) => {
      const target = uri instanceof vscode.Uri ? uri : activeTraceUri(ctx.provider);
      if (target) await openInInspector(target);
    },
    'agentTrace.showSource': async (uri?: unknown) => {
      const target = uri instanceof vscode.Uri ? uri : activeTraceUri(ctx.provider);
      if (target) await vscode.commands.executeCommand('vscode.openWith', target, 'default');
    },
    [SHOW_IN_TIMELINE]: (uri?: unknown, ref?: unknown) => showInTimeline(ctx, uri, ref),
  };
}
