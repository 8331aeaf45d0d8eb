import * as vscode from 'vscode';
import { createCommands } from './commands';
import { INSPECTOR_ANY_VIEW_TYPE, INSPECTOR_VIEW_TYPE, InspectorProvider } from './inspectorProvider';

/** Entry point: registers the inspector editor and the commands. Everything else is in core. */
export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Agent Trace Inspector', { log: true });
  const diagnostics = vscode.languages.createDiagnosticCollection('agentTrace');
  const provider = new InspectorProvider(context.extensionUri, diagnostics, log);
  // No retainContextWhenHidden: the webview keeps its UI state with setState and
  // refetches data on `ready`, which is cheaper than a hidden page held in memory.
  const options = { supportsMultipleEditorsPerDocument: true };
  context.subscriptions.push(
    log,
    diagnostics,
    vscode.window.registerCustomEditorProvider(INSPECTOR_VIEW_TYPE, provider, options),
    vscode.window.registerCustomEditorProvider(INSPECTOR_ANY_VIEW_TYPE, provider, options),
  );
  for (const [id, handler] of Object.entries(createCommands({ provider, log }))) {
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));
  }
}

export function deactivate(): void {}
