import * as vscode from 'vscode';
import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import type { SessionContext } from '../core/context/contextView';
import type { PriceBook } from '../core/cost/costTypes';
import { buildReportTrace } from '../core/share/reportDocument';
import type { ReportDocument } from '../core/share/reportDocument';
import { parseWhatIfDocument } from '../core/share/whatIfDocument';
import type { WhatIfDocument } from '../core/share/whatIfDocument';
import type { ParsedTrace } from '../core/trace/parseTrace';
import { readReportAssets, redactReport, reportHtml } from '../node/htmlReport';
import { createRedactor } from '../node/secretlintDetector';
import { redactionMode } from './settings';
import { uiText } from '../core/text/safeText';
import type { InspectorProvider } from './inspectorProvider';
import { announceSaved } from './savedFile';
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';

/** What the command needs from the extension around it. */
export interface ReportCommandContext {
  extensionUri: vscode.Uri;
  provider: InspectorProvider;
  log: vscode.LogOutputChannel;
  analysisOptions(): Partial<AnalysisOptions>;
  /** The price book the inspector uses (the registry's). */
  prices(): PriceBook;
  parsedFor(uri: vscode.Uri): Promise<ParsedTrace>;
  version: string;
}

/**
 * The context anatomy of the report's sessions, from the trace worker of the inspector the
 * trace is open in (it collected the log's text and holds the tokenizer, which the extension
 * host does not load); undefined when the trace is not open there or the worker cannot say:
 * the report then says it was made without it.
 */
async function inspectorContext(
  ctx: ReportCommandContext,
  uri: vscode.Uri,
  sessionIds: readonly string[],
): Promise<(SessionContext | null)[] | undefined> {
  const document = ctx.provider.documentFor(uri);
  if (!document) return undefined;
  try {
    const out: (SessionContext | null)[] = [];
    for (const sessionId of sessionIds) out.push(await document.request('sessionContext', { sessionId }));
    return out;
  } catch (e) {
    ctx.log.warn(`Export HTML Report: the context anatomy could not be had from the inspector: ${why(e, 400)}`);
    return undefined;
  }
}

/** Choices a caller (a test, another extension) can give instead of the dialogs. */
export interface ReportChoices {
  /** Where to write; skips the save dialog. */
  target: vscode.Uri;
  /** Session ids to keep (with their sub-agents); all when absent. */
  sessions?: string[];
}

export function isReportChoices(value: unknown): value is ReportChoices {
  const v = value as Partial<ReportChoices> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.target instanceof vscode.Uri &&
    (v.sessions === undefined || (Array.isArray(v.sessions) && v.sessions.every((s) => typeof s === 'string')))
  );
}

/** True when `uri` is inside `folder` (same scheme and authority, a path below it). */
function isUnder(uri: vscode.Uri, folder: vscode.Uri): boolean {
  const base = folder.path.endsWith('/') ? folder.path : `${folder.path}/`;
  return uri.scheme === folder.scheme && uri.authority === folder.authority && uri.path.startsWith(base);
}

/** A file's name for a notification: the trace author's choice (`[Repair](command:…).jsonl`), shown as plain text, clipped. */
function nameOf(uri: vscode.Uri): string {
  return uiText(basename(uri.path), { max: 120 });
}

/** Why something failed, for a notification: error text can quote the trace (a key, a session id), so plain text only. */
function why(e: unknown, max = 300): string {
  return uiText(e instanceof Error ? e.message : String(e), { max });
}

/**
 * A session's row in the "Sessions in the report" quick pick. The id is trace text: a quick
 * pick renders `$(icon)`, and bidi or control characters would make it read as another
 * id, so it goes through uiText like every other string VS Code shows.
 */
export function sessionPickItem(s: { id: string; role: string; calls: readonly unknown[] }): {
  label: string;
  description: string;
  picked: boolean;
  id: string;
} {
  return {
    label: `${s.role === 'main' ? '' : '↳ '}${uiText(s.id, { max: 120 })}`,
    description: `${s.calls.length} calls · ${uiText(s.role, { max: 40 })}`,
    picked: true,
    id: s.id,
  };
}

/** The what-if panel's last run on this trace, checked field by field; null when none ran or the answer is not one. */
async function panelWhatIf(ctx: ReportCommandContext, uri: vscode.Uri): Promise<WhatIfDocument | null> {
  const raw = await ctx.provider.whatIfDocument(uri);
  if (raw === null || raw === undefined) return null;
  try {
    return parseWhatIfDocument(raw);
  } catch (e) {
    ctx.log.warn(`Export HTML Report: the what-if panel's results were left out: ${why(e, 1000)}`);
    return null;
  }
}

/**
 * Agent Trace: Export HTML Report. Writes the trace shown (its sub-agent tree, or the
 * sessions the user picks) with the what-if panel's last scenario and sweep as one
 * self-contained, redacted HTML file, the same the CLI's `agent-trace report` writes.
 * Returns where it wrote, or undefined when the user cancelled.
 */
export async function exportHtmlReport(
  ctx: ReportCommandContext,
  uri: vscode.Uri | undefined,
  choices: ReportChoices | null,
): Promise<vscode.Uri | undefined> {
  if (!uri) {
    void vscode.window.showErrorMessage(
      'Open a trace in the Agent Trace Inspector (or as text) first, then export its report.',
    );
    return undefined;
  }
  let parsed: ParsedTrace;
  try {
    parsed = await ctx.parsedFor(uri);
  } catch (e) {
    ctx.log.error(`Export HTML Report on ${uiText(uri.toString(true), { max: 2000 })}: ${why(e, 4000)}`);
    void vscode.window.showErrorMessage(`Export HTML Report: ${nameOf(uri)}: ${why(e)}`);
    return undefined;
  }
  if (parsed.problem) {
    // The problem can quote the file's keys: trace text, shown as plain text only.
    void vscode.window.showErrorMessage(
      `Export HTML Report: ${nameOf(uri)}: ${uiText(parsed.problem.message, { max: 300 })}`,
    );
    return undefined;
  }
  let sessions = choices?.sessions ?? [];
  const withCalls = parsed.model.sessions.filter((s) => s.calls.length > 0);
  if (!choices && withCalls.length > 1) {
    const items = withCalls.map(sessionPickItem);
    const picked = await vscode.window.showQuickPick(items, {
      canPickMany: true,
      title: 'Sessions in the report',
      placeHolder: 'Every session is in; untick the ones to leave out',
    });
    if (!picked || picked.length === 0) return undefined;
    if (picked.length < items.length) sessions = picked.map((p) => p.id);
  }
  const base = basename(uri.path).replace(/\.(jsonl|json|traj)$/i, '');
  // Beside the trace, unless the trace is this extension's own sample (its folder goes with the next update): then the workspace.
  const folder = isUnder(uri, ctx.extensionUri)
    ? (vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.joinPath(uri, '..'))
    : vscode.Uri.joinPath(uri, '..');
  const target =
    choices?.target ??
    (await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.joinPath(folder, `${base}.report.html`),
      filters: { HTML: ['html'] },
      saveLabel: 'Export Report',
      title: 'Export the trace as a standalone HTML report',
    }));
  if (!target) return undefined;
  try {
    const trace = buildReportTrace(parsed, basename(uri.path), {
      sessions,
      analysis: ctx.analysisOptions(),
      whatIf: await panelWhatIf(ctx, uri),
      prices: ctx.prices(),
    });
    const context = await inspectorContext(
      ctx,
      uri,
      trace.view.sessions.map((s) => s.summary.id),
    );
    if (context) trace.context = context;
    const doc: ReportDocument = {
      schema: 1,
      title: `Agent trace report: ${basename(uri.path)}`,
      generatedAt: new Date().toISOString(),
      generator: `Agent Trace Inspector ${ctx.version}`,
      traces: [trace],
      redaction: null,
    };
    const redactor = createRedactor(redactionMode());
    const html = reportHtml(await redactReport(doc, redactor), await readReportAssets(ctx.extensionUri.fsPath));
    if (target.scheme === 'file') await writeFile(target.fsPath, html);
    else await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(html));
    const summary = redactor.summary();
    const removed =
      summary.occurrences === 0
        ? 'nothing to redact'
        : `redacted ${summary.occurrences} value${summary.occurrences === 1 ? '' : 's'} (${Object.keys(summary.byKind).join(', ')})`;
    announceSaved(
      `Report saved to ${nameOf(target)}: ${trace.view.sessions.length} sessions, ${Math.round(html.length / 1024)} KB, ${removed}${trace.whatIf ? ', with the what-if scenario' : ''}.`,
      target,
      ctx.log,
    );
    return target;
  } catch (e) {
    ctx.log.error(`Export HTML Report on ${uiText(uri.toString(true), { max: 2000 })}: ${why(e, 4000)}`);
    void vscode.window.showErrorMessage(`Could not export the report: ${why(e)}`);
    return undefined;
  }
}
