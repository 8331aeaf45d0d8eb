import * as vscode from 'vscode';
import { buildTraceReport } from '../core/report/traceReport';
import type { TraceReport } from '../core/report/traceReport';
import { analyzeNotice } from '../core/report/traceScopes';
import { uiText } from '../core/text/safeText';
import type { ParsedTrace } from '../core/trace/parseTrace';
import type { CallRef } from '../protocol/messages';
import { isTraceCandidate, TRACE_EXTENSION } from './analysisRegistry';
import { compareWithResults, isCompareChoices } from './compareCommand';
import { exportHtmlReport, isReportChoices } from './htmlReportCommand';
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
  /** The extension's folder (dist/ and media/, for the HTML report's page). */
  extensionUri: vscode.Uri;
  version: string;
  /** This extension's global storage folder: Cline's and Roo Code's tasks are in its siblings; assembled sessions are written below it. */
  storageDir: string;
}

/** The bundled sample, relative to the extension's folder. */
export const SAMPLE_PATH = ['samples', 'claude-code-sessions.trace.jsonl'] as const;

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
  if (
    input instanceof vscode.TabInputCustom &&
    (input.viewType === INSPECTOR_VIEW_TYPE || input.viewType === INSPECTOR_ANY_VIEW_TYPE)
  )
    return input.uri;
  if (input instanceof vscode.TabInputText && isTraceFile(input.uri)) return input.uri;
  return undefined;
}

async function openInInspector(uri: vscode.Uri): Promise<void> {
  await vscode.commands.executeCommand('vscode.openWith', uri, viewTypeFor(uri));
}

/** The trace open as text in an editor tab, if it is: what the user sees, saved or not. */
function shownAsText(uri: vscode.Uri): vscode.TextDocument | undefined {
  const shown = vscode.window.tabGroups.all.some((g) =>
    g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString()),
  );
  return shown && isTraceCandidate(uri)
    ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString())
    : undefined;
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
    if (analysis)
      return buildTraceReport(analysis.parsed, ctx.registry.analysisOptions, { book: ctx.registry.priceBook });
  }
  await openInInspector(uri);
  const inspector = ctx.provider.documentFor(uri);
  if (inspector) {
    const report = await ctx.provider.report(inspector);
    if (isLoadFailure(report)) throw new Error(report.message);
    return report;
  }
  return buildTraceReport(await loadTrace(uri, maxFileBytes(), () => undefined), ctx.registry.analysisOptions, {
    book: ctx.registry.priceBook,
  });
}

/**
 * The parsed trace a command that needs the whole model works on (Export HTML Report,
 * Compare): the registry's parse of a trace open as text, else the file read here. The
 * inspector's model lives in its trace worker, so these commands read the file once more.
 */
async function parsedFor(ctx: CommandContext, uri: vscode.Uri): Promise<ParsedTrace> {
  const text = shownAsText(uri);
  if (text) {
    const analysis = await ctx.registry.analyze(text);
    if (analysis) return analysis.parsed;
  }
  return loadTrace(uri, maxFileBytes(), () => undefined);
}

/**
 * Analyses a trace with the same core as the CLI, opens it in the inspector and
 * returns the CLI's JSON report (so tests and other extensions can use the result).
 * With no trace given or active it offers the local agent sessions (a `{ pick }`
 * argument chooses from those rows in tests).
 */
async function analyzeSession(
  ctx: CommandContext,
  given: vscode.Uri | undefined,
  hook: PickHook | null,
): Promise<TraceReport | undefined> {
  const uri =
    given ??
    activeTraceUri(ctx.provider) ??
    (await pickLocalSession(ctx.log, ctx.storageDir, ctx.registry.priceBook, hook));
  if (!uri) return undefined;
  let report: TraceReport;
  try {
    report = await reportFor(ctx, uri);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    ctx.log.error(
      `Analyze Agent Session on ${uiText(uri.toString(true), { max: 2000 })}: ${uiText(message, { max: 4000 })}`,
    );
    void vscode.window.showErrorMessage(`Analyze Agent Session: ${fileLabel(uri)}: ${uiText(message, { max: 300 })}`);
    return undefined;
  }
  await openInInspector(uri);
  if (report.problem) {
    // The problem can quote the file's keys: trace text, shown as plain text only.
    void vscode.window.showErrorMessage(
      `Analyze Agent Session: ${fileLabel(uri)}: ${uiText(report.problem, { max: 300 })}`,
    );
    return report;
  }
  // One scope per sentence, each named: the whole trace, then the session the inspector opens on (core/report/traceScopes.ts).
  void vscode.window.showInformationMessage(analyzeNotice(fileLabel(uri), report).text);
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

/**
 * A file's name for a notification: the name is the trace author's choice too (a file
 * can be named `[Repair](command:….jsonl`), so it is shown as plain text, clipped.
 */
function fileLabel(uri: vscode.Uri): string {
  return uiText(basename(uri.path), { max: 120 });
}

/**
 * Show Trace Source: the file as text. A trace deleted or renamed since it was opened
 * has no source left; that is said instead of failing.
 */
async function showSource(target: vscode.Uri): Promise<void> {
  try {
    await vscode.workspace.fs.stat(target);
  } catch {
    void vscode.window.showErrorMessage(
      `Show Trace Source: ${fileLabel(target)} no longer exists (deleted or renamed), so there is no source to show.`,
    );
    return;
  }
  await vscode.commands.executeCommand('vscode.openWith', target, 'default');
}

/** Every command, by id. Factories take the shared context (rust-analyzer's createCommands pattern). */
export function createCommands(ctx: CommandContext): Record<string, (...args: unknown[]) => unknown> {
  return {
    'agentTrace.analyzeSession': (arg?: unknown) =>
      analyzeSession(ctx, arg instanceof vscode.Uri ? arg : undefined, isPickHook(arg) ? arg : null),
    // The bundled sample (samples/ ships in the .vsix): the walkthrough's and the empty Agent Sessions view's first step.
    'agentTrace.openSample': async () => {
      const sample = vscode.Uri.joinPath(ctx.extensionUri, ...SAMPLE_PATH);
      try {
        await vscode.workspace.fs.stat(sample);
      } catch {
        void vscode.window.showErrorMessage(
          `Open Sample Trace: the sample is missing from this installation (${SAMPLE_PATH.join('/')}); reinstall the extension.`,
        );
        return undefined;
      }
      await openInInspector(sample);
      return sample;
    },
    'agentTrace.openInInspector': async (uri?: unknown) => {
      const target = uri instanceof vscode.Uri ? uri : activeTraceUri(ctx.provider);
      if (target) await openInInspector(target);
    },
    'agentTrace.showSource': async (uri?: unknown) => {
      const target = uri instanceof vscode.Uri ? uri : activeTraceUri(ctx.provider);
      if (target) await showSource(target);
    },
    [SHOW_IN_TIMELINE]: (uri?: unknown, ref?: unknown) => showInTimeline(ctx, uri, ref),
    // (uri, { target, sessions }) skips the dialogs: for tests and other extensions.
    'agentTrace.exportHtmlReport': (uri?: unknown, choices?: unknown) =>
      exportHtmlReport(
        {
          extensionUri: ctx.extensionUri,
          provider: ctx.provider,
          log: ctx.log,
          version: ctx.version,
          analysisOptions: () => ctx.registry.analysisOptions,
          prices: () => ctx.registry.priceBook,
          parsedFor: (u) => parsedFor(ctx, u),
        },
        uri instanceof vscode.Uri ? uri : (activeTraceUri(ctx.provider) ?? ctx.provider.recentDocument()?.uri),
        isReportChoices(choices) ? choices : null,
      ),
    // (uri, { results }) skips the open dialog.
    'agentTrace.compareWithResults': (uri?: unknown, choices?: unknown) =>
      compareWithResults(
        { provider: ctx.provider, log: ctx.log, parsedFor: (u) => parsedFor(ctx, u) },
        uri instanceof vscode.Uri ? uri : activeTraceUri(ctx.provider),
        isCompareChoices(choices) ? choices : null,
      ),
  };
}
