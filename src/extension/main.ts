import * as vscode from 'vscode';
import { uiText } from '../core/text/safeText';
import { TRACE_DOCUMENT_SELECTOR, TraceAnalysisRegistry } from './analysisRegistry';
import { TraceCodeLensProvider } from './codeLens';
import { createCommands } from './commands';
import { INSPECTOR_ANY_VIEW_TYPE, INSPECTOR_VIEW_TYPE, InspectorProvider } from './inspectorProvider';

/** Entry point: registers the inspector editor, CodeLens, Problems and the commands. Everything else is in core. */
export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Agent Trace Inspector', { log: true });
  // The registry parses each trace once per version and owns the one Problems collection.
  const registry = new TraceAnalysisRegistry(log);
  const provider = new InspectorProvider(context.extensionUri, registry, log);
  // No retainContextWhenHidden: the webview keeps its UI state with setState and
  // refetches data on `ready`, which is cheaper than a hidden page held in memory.
  const options = { supportsMultipleEditorsPerDocument: true };
  context.subscriptions.push(
    log,
    registry,
    provider,
    vscode.window.registerCustomEditorProvider(INSPECTOR_VIEW_TYPE, provider, options),
    vscode.window.registerCustomEditorProvider(INSPECTOR_ANY_VIEW_TYPE, provider, options),
    vscode.languages.registerCodeLensProvider(TRACE_DOCUMENT_SELECTOR, new TraceCodeLensProvider(registry, log)),
  );
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '');
  for (const [id, handler] of Object.entries(createCommands({ provider, registry, log, storageDir: context.globalStorageUri.fsPath, extensionUri: context.extensionUri, version }))) {
    // A command's failure is logged and said, never left as an unhandled rejection.
    const guarded = async (...args: unknown[]): Promise<unknown> => {
      try {
        return await handler(...args);
      } catch (e) {
        log.error(`${id}: ${uiText(e instanceof Error ? (e.stack ?? e.message) : String(e), { max: 4000, multiline: true })}`);
        void vscode.window.showErrorMessage(`Agent Trace: the command failed: ${uiText(e instanceof Error ? e.message : String(e), { max: 300 })}`);
        return undefined;
      }
    };
    context.subscriptions.push(vscode.commands.registerCommand(id, guarded));
  }
}

export function deactivate(): void {}
