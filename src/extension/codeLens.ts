import * as vscode from 'vscode';
import { uiText } from '../core/text/safeText';
import { failingCarryUsd } from '../core/cost/loopCost';
import type { CallRef } from '../protocol/messages';
import type { TraceAnalysisRegistry } from './analysisRegistry';
import { codeLensEnabled } from './settings';
import { failureTitle, failureTooltip, summaryTitle, summaryTooltip } from './traceAnalysis';

/** The command behind "Show in Timeline": opens the inspector on a trace and selects a call. */
export const SHOW_IN_TIMELINE = 'agentTrace.showInTimeline';

/**
 * CodeLens in the text view of a trace: a summary on the first line, and above the
 * result line of every failed tool call what failed, its place in its retry loop and
 * what it costs later calls, with "Show in Timeline". Reads the registry's shared
 * parse, so opening CodeLens, Problems and the commands parse a version once.
 */
export class TraceCodeLensProvider implements vscode.CodeLensProvider {
  readonly onDidChangeCodeLenses: vscode.Event<void>;

  constructor(
    private readonly registry: TraceAnalysisRegistry,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.onDidChangeCodeLenses = registry.onDidChange;
  }

  async provideCodeLenses(document: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    if (!codeLensEnabled()) return [];
    try {
      const analysis = await this.registry.analyze(document);
      if (!analysis || token.isCancellationRequested) return [];
      const uri = document.uri;
      const top = new vscode.Range(0, 0, 0, 0);
      // Over the size limit: say so where the lenses would be, instead of showing nothing.
      if (analysis.tooLarge)
        return [
          new vscode.CodeLens(top, {
            title: `$(warning) Agent Trace · ${uiText(analysis.tooLarge, { max: 200 })}`,
            command: '',
          }),
        ];
      if (analysis.sessions.length === 0) return [];
      const lenses = [
        new vscode.CodeLens(top, {
          title: summaryTitle(analysis),
          command: 'agentTrace.analyzeSession',
          arguments: [uri],
          tooltip: summaryTooltip(analysis),
        }),
        new vscode.CodeLens(top, {
          title: 'Open Inspector',
          command: 'agentTrace.openInInspector',
          arguments: [uri],
          tooltip: 'Open this trace in the Agent Trace Inspector',
        }),
      ];
      const lastLine = Math.max(0, document.lineCount - 1);
      for (const { session, analysis: a, cost } of analysis.sessions) {
        const shown = new Set<string>();
        for (const f of a.retry.failing) {
          if (f.source.file !== 0) continue; // sub-agent logs get their lenses when opened themselves
          const line = Math.min(f.source.line, lastLine);
          const range = new vscode.Range(line, 0, line, 0);
          const loop = f.loopIndex !== null ? (a.retry.loops[f.loopIndex] ?? null) : null;
          // The link comes first so a narrow editor never cuts it off; one per call and line.
          const key = `${line}:${f.callIndex}`;
          if (!shown.has(key)) {
            shown.add(key);
            const ref: CallRef = { sessionId: session.id, callIndex: f.callIndex };
            lenses.push(
              new vscode.CodeLens(range, {
                title: 'Show in Timeline',
                command: SHOW_IN_TIMELINE,
                arguments: [uri, ref],
                tooltip: `Select call ${f.callIndex + 1} in the Agent Trace Inspector`,
              }),
            );
          }
          // An empty command makes a label: the text is the information, the link is beside it.
          const carryUsd = cost ? failingCarryUsd(f, session, cost) : null;
          lenses.push(
            new vscode.CodeLens(range, {
              title: failureTitle(f, carryUsd),
              command: '',
              tooltip: failureTooltip(f, loop, carryUsd),
            }),
          );
        }
      }
      return lenses;
    } catch (e) {
      // Never throw into the editor: a broken lens must not take the others down.
      this.log.error(
        `CodeLens for ${uiText(document.uri.toString(true), { max: 2000 })}: ${uiText(e instanceof Error ? (e.stack ?? e.message) : String(e), { max: 4000, multiline: true })}`,
      );
      return [];
    }
  }
}
