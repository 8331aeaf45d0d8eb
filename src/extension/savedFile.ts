import * as vscode from 'vscode';
import { uiText } from '../core/text/safeText';

/** The buttons of a "saved" notification. */
export const OPEN_SAVED = 'Open';
export const REVEAL_SAVED = 'Reveal';

/**
 * The file shown where it is: selected in VS Code's Explorer when it is in the workspace,
 * else in the system's file manager on the desktop; in a browser (VS Code for the Web,
 * code-server) there is no file manager, so its path is copied and said.
 */
async function reveal(target: vscode.Uri): Promise<void> {
  if (vscode.workspace.getWorkspaceFolder(target)) await vscode.commands.executeCommand('revealInExplorer', target);
  else if (vscode.env.uiKind === vscode.UIKind.Desktop && target.scheme === 'file')
    await vscode.commands.executeCommand('revealFileInOS', target);
  else {
    const where = target.scheme === 'file' ? target.fsPath : target.toString(true);
    await vscode.env.clipboard.writeText(where);
    void vscode.window.showInformationMessage(`Copied its path: ${uiText(where, { max: 300 })}`);
  }
}

/**
 * The file opened: an HTML report in the system's browser on the desktop; in a browser
 * window (no local browser to hand a file to) and for other files, in an editor tab.
 */
async function open(target: vscode.Uri): Promise<void> {
  const html = /\.html?$/i.test(target.path);
  if (html && vscode.env.uiKind === vscode.UIKind.Desktop && (await vscode.env.openExternal(target))) return;
  await vscode.commands.executeCommand('vscode.open', target);
}

/**
 * Says a file was written, with Open and Reveal buttons. Not awaited by the command that
 * wrote it (a notification stays until dismissed); the button chosen is acted on.
 * `message` is ours and the file name in it already plain text.
 */
export function announceSaved(message: string, target: vscode.Uri, log: vscode.LogOutputChannel): void {
  void vscode.window.showInformationMessage(message, OPEN_SAVED, REVEAL_SAVED).then(async (choice) => {
    try {
      if (choice === OPEN_SAVED) await open(target);
      else if (choice === REVEAL_SAVED) await reveal(target);
    } catch (e) {
      log.error(`${choice ?? 'Saved file'}: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
}
