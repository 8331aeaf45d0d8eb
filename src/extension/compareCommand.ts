import * as vscode from 'vscode';
import { compareReplay, predictReplay } from '../core/replay/compareReplay';
import type { ReplayComparison } from '../core/replay/compareReplay';
import { renderComparison, resultsProblemText } from '../core/replay/compareText';
import { buildReplayExport, replayJsonLines } from '../core/replay/replayExport';
import { parseWhatIfDocument, whatIfParams } from '../core/share/whatIfDocument';
import { runFast } from '../core/sim/engines/fastEngine';
import type { ParsedTrace } from '../core/trace/parseTrace';
import { createRedactor } from '../node/secretlintDetector';
import { uiText } from '../core/text/safeText';
import type { InspectorProvider } from './inspectorProvider';
import { loadTrace } from './traceLoader';
import { maxFileBytes, redactionMode } from './settings';
import { basename } from 'node:path';

export interface CompareCommandContext {
  provider: InspectorProvider;
  log: vscode.LogOutputChannel;
  parsedFor(uri: vscode.Uri): Promise<ParsedTrace>;
}

/** Choices a caller (a test) can give instead of the dialogs. */
export interface CompareChoices {
  results: vscode.Uri;
}

export function isCompareChoices(value: unknown): value is CompareChoices {
  return typeof value === 'object' && value !== null && (value as { results?: unknown }).results instanceof vscode.Uri;
}

/**
 * Agent Trace: Compare With Replay Results. The trace shown, replayed on a server from an
 * export (AIPerf or vllm bench): its measured results beside the what-if panel's
 * prediction of the same scenario. The scenario (session, replicas, stagger, GPU, model,
 * policy) is the panel's last run, so export with the same replicas and stagger; without
 * a run, one copy and the simulator's defaults. The comparison opens as text beside the
 * inspector, the same text `agent-trace compare` prints. Returns the comparison.
 */
export async function compareWithResults(
  ctx: CompareCommandContext,
  uri: vscode.Uri | undefined,
  choices: CompareChoices | null,
): Promise<ReplayComparison | undefined> {
  if (!uri) {
    void vscode.window.showErrorMessage(
      "Open the trace you exported in the Agent Trace Inspector first, then compare it with the replay's results.",
    );
    return undefined;
  }
  const results =
    choices?.results ??
    (
      await vscode.window.showOpenDialog({
        canSelectMany: false,
        openLabel: 'Compare',
        title: "The replay's results: AIPerf's profile_export.jsonl or a vllm bench result",
        filters: { 'Replay results': ['jsonl', 'json'] },
      })
    )?.[0];
  if (!results) return undefined;
  try {
    const parsed = await ctx.parsedFor(uri);
    if (parsed.problem) throw new Error(parsed.problem.message);
    const measured = await loadTrace(results, maxFileBytes(), () => undefined);
    if (measured.problem || (measured.model.format !== 'aiperf' && measured.model.format !== 'vllm-bench')) {
      // The reader's reason and the first lines that failed, as the CLI says them (file:line: message).
      throw new Error(resultsProblemText(basename(results.path), measured));
    }
    // The what-if panel's scenario, checked field by field (it comes from the webview).
    const raw = await ctx.provider.whatIfDocument(uri);
    let doc = null;
    try {
      doc = raw ? parseWhatIfDocument(raw) : null;
    } catch (e) {
      ctx.log.warn(
        `Compare: the what-if panel's scenario was left out: ${uiText(e instanceof Error ? e.message : String(e), { max: 1000 })}`,
      );
    }
    const replicas = doc?.input.replicas?.replicas ?? 1;
    const staggerS = doc?.input.replicas?.staggerS ?? 0;
    const params = whatIfParams(doc ? (raw as { input?: { params?: unknown } }).input?.params : undefined);
    const target = measured.model.format === 'aiperf' ? 'aiperf' : 'mooncake';
    const sessions = doc?.input.session ? [doc.input.session] : null;
    const e = buildReplayExport(parsed.model, target, { replicas, staggerS, sessions });
    const text = (await createRedactor(redactionMode()).redactJsonTexts(replayJsonLines(e).split('\n'))).filter(
      (l) => l.length > 0,
    );
    const ids = text.map((l) => {
      const v = JSON.parse(l) as { session_id?: unknown };
      return typeof v.session_id === 'string' ? v.session_id : null;
    });
    const comparison = compareReplay(
      parsed.model,
      e,
      ids,
      measured.model,
      predictReplay(parsed.model, e, params, runFast, replicas, staggerS),
    );
    const header = `${basename(results.path)} (${measured.model.format}) against ${basename(uri.path)} exported --to ${target}, ${replicas} replica${replicas === 1 ? '' : 's'}${replicas > 1 ? ` ${staggerS} s apart` : ''}${doc ? " (the what-if panel's scenario)" : ' (no what-if run: one copy, default parameters)'}\n`;
    const document = await vscode.workspace.openTextDocument({
      content: header + renderComparison(comparison),
      language: 'plaintext',
    });
    await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    return comparison;
  } catch (err) {
    // The message can quote the trace or the results (a session id, a file name, keys): plain text only.
    const message = err instanceof Error ? err.message : String(err);
    ctx.log.error(
      `Compare With Replay Results on ${uiText(uri.toString(true), { max: 2000 })}: ${uiText(message, { max: 4000, multiline: true })}`,
    );
    void vscode.window.showErrorMessage(`Could not compare: ${uiText(message, { max: 300 })}`);
    return undefined;
  }
}
