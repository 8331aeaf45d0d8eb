import type { WebviewNotification, WebviewRequests } from '../../src/protocol/messages';
import { buildPalette, isHighContrast } from '../shared/palette';
import type { Palette } from '../shared/palette';

/** Params and result of a request to the host. */
export type RequestParams<M extends keyof WebviewRequests> = WebviewRequests[M]['params'];
/** What the host answers a request with. */
export type RequestResult<M extends keyof WebviewRequests> = WebviewRequests[M]['result'];

/** What the app needs from the page around it: the channel to the host and the webview state. */
export interface InspectorHost {
  notify(message: WebviewNotification): void;
  /** Asks the host (`timeoutMs` for answers that take long on big traces). */
  request<M extends keyof WebviewRequests>(
    method: M,
    params: RequestParams<M>,
    options?: { timeoutMs?: number },
  ): Promise<RequestResult<M>>;
  getState(): unknown;
  setState(state: unknown): void;
}

/**
 * How the page runs. The inspector in VS Code has everything; the standalone HTML report
 * (agent-trace report) draws the same views from data embedded in the file, with no host
 * to re-read the trace as another format, open source lines or run the what-if simulator.
 */
export interface InspectorOptions {
  /** The interactive what-if panel (needs the host's workload and a worker). */
  whatIf: boolean;
  /** The format picker (the host reads the trace again). */
  formatChoice: boolean;
  /** Clicking a call opens its line in an editor. */
  sourceLinks: boolean;
  /** A call's transcript, read again from the trace by the host (a report embeds no trace text beyond its figures). */
  transcript?: boolean;
}

/** The inspector in VS Code: every part on. */
export const INSPECTOR_IN_VSCODE: InspectorOptions = {
  whatIf: true,
  formatChoice: true,
  sourceLinks: true,
  transcript: true,
};

/** A session's analyses can take a while on a million calls: wait for them this long. */
export const BODY_TIMEOUT_MS = 10 * 60_000;

/** Reads the chart colours from the page's theme variables. */
export function readPalette(): Palette {
  const style = getComputedStyle(document.body);
  return buildPalette((name) => style.getPropertyValue(name), isHighContrast(document.body.className));
}

/** Calls `changed` when VS Code changes the theme (it swaps the body's class and theme attributes, and rewrites the variables on <html>). */
export function watchTheme(changed: () => void): void {
  new MutationObserver(changed).observe(document.body, {
    attributes: true,
    attributeFilter: ['class', 'data-vscode-theme-kind', 'data-vscode-theme-id'],
  });
  new MutationObserver(changed).observe(document.documentElement, {
    attributes: true,
    attributeFilter: ['style', 'class'],
  });
}
