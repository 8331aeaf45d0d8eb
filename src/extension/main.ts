import * as vscode from 'vscode';
import { registerGuardedCommands } from './commandGuard';
import { TRACE_DOCUMENT_SELECTOR, TraceAnalysisRegistry } from './analysisRegistry';
import { TraceCodeLensProvider } from './codeLens';
import { createCommands, viewTypeFor } from './commands';
import { INSPECTOR_ANY_VIEW_TYPE, INSPECTOR_VIEW_TYPE, InspectorProvider } from './inspectorProvider';
import { createSessionCommands } from './sessions/sessionCommands';
import { SessionsPanels } from './sessions/sessionsPanels';
import { SessionsService } from './sessions/sessionsService';
import { SessionsStatusBar } from './sessions/sessionsStatusBar';
import { PlanWindowsModel, PlanWindowsTree, WINDOWS_VIEW_ID } from './sessions/planWindowsView';
import { SESSIONS_VIEW_ID, SessionsTreeProvider } from './sessions/sessionsTree';

/** What activate() hands back: the Agent Sessions parts and the inspector, for the extension-host tests. */
export interface AgentTraceApi {
  sessions: {
    service: SessionsService;
    tree: SessionsTreeProvider;
    panels: SessionsPanels;
    statusBar: SessionsStatusBar;
    windows: PlanWindowsModel;
    windowsTree: PlanWindowsTree;
  };
  inspector: InspectorProvider;
}

/**
 * Entry point: registers the inspector editor, CodeLens, Problems, the Agent Sessions
 * view and status bar item, and the commands. Everything else is in core.
 */
export function activate(context: vscode.ExtensionContext): AgentTraceApi {
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
  // A command's failure is logged and said, never left as an unhandled rejection.
  context.subscriptions.push(
    ...registerGuardedCommands(
      createCommands({
        provider,
        registry,
        log,
        storageDir: context.globalStorageUri.fsPath,
        extensionUri: context.extensionUri,
        version,
      }),
      log,
    ),
  );

  // Agent Sessions: the index worker starts when the view opens or the status bar needs it.
  const service = new SessionsService(context, log);
  const tree = new SessionsTreeProvider(service);
  const view = vscode.window.createTreeView(SESSIONS_VIEW_ID, {
    treeDataProvider: tree,
    canSelectMany: true,
    showCollapseAll: true,
  });
  tree.view = view;
  const openInInspector = async (path: string): Promise<void> => {
    const uri = vscode.Uri.file(path);
    await vscode.commands.executeCommand('vscode.openWith', uri, viewTypeFor(uri));
  };
  const panels = new SessionsPanels(context.extensionUri, service, log, (row) => openInInspector(row.path));
  const windows = new PlanWindowsModel(service);
  const windowsTree = new PlanWindowsTree(windows);
  const windowsView = vscode.window.createTreeView(WINDOWS_VIEW_ID, { treeDataProvider: windowsTree });
  const statusBar = new SessionsStatusBar(service, windows);
  let viewUse: vscode.Disposable | null = null;
  const followView = (): void => {
    // Either view open needs the index (the windows count the calls it keeps).
    const visible = view.visible || windowsView.visible;
    if (visible && !viewUse) viewUse = service.use();
    if (!visible && viewUse) {
      viewUse.dispose();
      viewUse = null;
    }
  };
  followView();
  context.subscriptions.push(
    service,
    tree,
    view,
    windows,
    windowsTree,
    windowsView,
    panels,
    statusBar,
    view.onDidChangeVisibility(followView),
    windowsView.onDidChangeVisibility(followView),
    { dispose: () => viewUse?.dispose() },
  );
  context.subscriptions.push(
    ...registerGuardedCommands(createSessionCommands({ service, tree, panels, statusBar, openInInspector }), log),
  );
  return { sessions: { service, tree, panels, statusBar, windows, windowsTree }, inspector: provider };
}

export function deactivate(): void {}
