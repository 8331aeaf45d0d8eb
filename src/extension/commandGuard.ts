import * as vscode from 'vscode';
import { uiText } from '../core/text/safeText';

/**
 * Registers a table of commands (id → handler), each behind one guard: a failure is logged
 * with its stack and said in an error notification (its text made inert), and the command
 * answers undefined, so no command of the extension leaves an unhandled rejection behind.
 * The inspector's commands and the Agent Sessions' both go through it.
 */
export function registerGuardedCommands(
  commands: Record<string, (...args: unknown[]) => unknown>,
  log: vscode.LogOutputChannel,
): vscode.Disposable[] {
  return Object.entries(commands).map(([id, handler]) =>
    vscode.commands.registerCommand(id, guardCommand(id, handler, log)),
  );
}

/** `handler` behind the guard (see registerGuardedCommands). */
export function guardCommand(
  id: string,
  handler: (...args: unknown[]) => unknown,
  log: vscode.LogOutputChannel,
): (...args: unknown[]) => Promise<unknown> {
  return async (...args: unknown[]): Promise<unknown> => {
    try {
      return await handler(...args);
    } catch (e) {
      log.error(
        `${id}: ${uiText(e instanceof Error ? (e.stack ?? e.message) : String(e), { max: 4000, multiline: true })}`,
      );
      void vscode.window.showErrorMessage(
        `Agent Trace: the command failed: ${uiText(e instanceof Error ? e.message : String(e), { max: 300 })}`,
      );
      return undefined;
    }
  };
}
