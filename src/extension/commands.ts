import * as vscode from 'vscode';
import { buildTraceReport } from '../core/analysis/traceReport';
import type { TraceReport } from '../core/analysis/traceReport';
import { formatPercent } from '../core/report/formatNumbers';
import { INSPECTOR_ANY_VIEW_TYPE, INSPECTOR_VIEW_TYPE } from './inspectorProvider';
import type { InspectorProvider } from './inspectorProvider';
import { loadTrace } from './traceLoader';
import { basename } from 'node:path';

/** What command factories get: the provider and the extension's log. */
export interface CommandContext {
  provider: InspectorProvider;
  log: vscode.LogOutputChannel;
}

/** The inspector view type that fits a file: the default editor for *.trace.jsonl, the "Open With" one otherwise. */
export function viewTypeFor(uri: vscode.Uri): string {
  return uri.path.toLowerCase().endsWith('.trace.jsonl') ? INSPECTOR_VIEW_TYPE : INSPECTOR_ANY_VIEW_TYPE;
}

/** The trace the user is looking at: the focused inspector, the active text editor, or the active tab. */
function activeTraceUri(provider: InspectorProvider): vscode.Uri | undefined {
  const doc = provider.activeDocument();
  if (doc) return doc.uri;
  const editor = vscode.window.activeTextEditor;
  if (editor && editor.document.uri.scheme !== 'output') return editor.document.uri;
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputCustom || input instanceof vscode.TabInputText) return input.uri;
  return undefined;
}

async function openInInspector(uri: vscode.Uri): Promise<void> {
  await vscode.commands.executeCommand('vscode.openWith', uri, viewTypeFor(uri));
}

/**
 * Analyses a trace with the same core as the CLI, opens it in the inspector and
 * returns the CLI's JSON report (so tests and other extensions can use the result).
 */
async function analyzeSession(ctx: CommandContext, given?: vscode.Uri): Promise<TraceReport | undefined> {
  let uri = given instanceof vscode.Uri ? given : activeTraceUri(ctx.provider);
  if (!uri) {
    const picked = await vscode.window.showOpenDialog({
      title: 'Analyze Agent Session',
      canSelectMany: false,
      openLabel: 'Analyze',
      filters: { 'Agent traces': ['jsonl', 'json', 'traj'] },
    });
    uri = picked?.[0];
  }
  if (!uri) return undefined;
  const parsed = await loadTrace(uri, Number.MAX_SAFE_INTEGER, () => undefined);
  const report = buildTraceReport(parsed);
  await openInInspector(uri);
  if (report.problem) {
    void vscode.window.showErrorMessage(`${basename(uri.path)}: ${report.problem}`);
    return report;
  }
  const main = report.sessions.find((s) => s.role === 'main') ?? report.sessions[0];
  const failed = parsed.model.sessions.reduce((n, s) => n + s.calls.reduce((m, c) => m + c.toolCalls.filter((t) => t.isError).length, 0), 0);
  if (main) {
    void vscode.window.showInformationMessage(
      `${basename(uri.path)}: ${main.llmCalls} LLM calls, ${main.userTurns} user turns, cache hit rate ${formatPercent(main.cacheHitRate)}, ` +
        `${failed} failed tool calls, ${report.diagnostics.filter((d) => d.severity === 'error').length} errors.`,
    );
  }
  return report;
}

/** Every command, by id. Factories take the shared context (rust-analyzer's createCommands pattern). */
export function createCommands(ctx: CommandContext): Record<string, (...args: unknown[]) => unknown> {
  return {
    'agentTrace.analyzeSession': (uri?: unknown) => analyzeSession(ctx, uri instanceof vscode.Uri ? uri : undefined),
    'agentTrace.openInInspector': async (uri?: unknown) => {
      const target = uri instanceof vscode.Uri ? uri : activeTraceUri(ctx.provider);
      if (target) await openInInspector(target);
    },
    'agentTrace.showSource': async (uri?: unknown) => {
      const target = uri instanceof vscode.Uri ? uri : activeTraceUri(ctx.provider);
      if (target) await vscode.commands.executeCommand('vscode.openWith', target, 'default');
    },
  };
}
