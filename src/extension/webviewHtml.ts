/** What a page needs from the host: URIs already converted with `asWebviewUri`. */
export interface WebviewPageResources {
  /** `webview.cspSource`: the only origin scripts, styles, fonts and images may come from. */
  cspSource: string;
  scriptUri: string;
  /** The what-if simulator's worker bundle; the page fetches it and starts it from a blob: URL. */
  workerUri: string;
  styleUri: string;
  codiconsUri: string;
  nonce: string;
  title: string;
}

/** What the Agent Sessions panels' page needs: the inspector's resources less the worker (it runs none). */
export type SessionsPageResources = Omit<WebviewPageResources, 'workerUri'>;

/** A fresh random nonce for the page's one script tag. */
export function createNonce(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < 32; i++) out += alphabet.charAt(Math.floor(Math.random() * alphabet.length));
  return out;
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The inspector's HTML. Strict CSP: nothing by default, scripts only with the nonce,
 * styles/fonts/images only from the extension's own files. No trace data is written
 * into the page: it arrives by postMessage after `ready` and is rendered with
 * textContent, never as HTML.
 * chart.js and @vscode-elements style elements through the CSSOM and constructable
 * stylesheets, which this CSP allows without 'unsafe-inline' (the webview test fails on
 * any CSP violation).
 * The what-if simulator runs in a Web Worker. A worker script must be same-origin with
 * the page, and the extension's files (`asWebviewUri`) are not, so the page fetches the
 * worker bundle (`connect-src` the extension's own origin, nothing else) and starts it
 * from a `blob:` URL (`worker-src blob:`). Scripts still need the nonce, and nothing
 * allows eval or inline script.
 */
export function buildWebviewHtml(r: WebviewPageResources): string {
  return pageHtml(r, { workerUri: r.workerUri, mainClass: null, loading: 'Loading trace…' });
}

/**
 * The Agent Sessions panels' HTML (several sessions at once, two compared): the
 * inspector's page and CSP without the worker, so no `connect-src` and no `worker-src`.
 * Trace text (titles, paths) arrives by postMessage and is drawn with textContent.
 */
export function buildSessionsPageHtml(r: SessionsPageResources): string {
  return pageHtml(r, { workerUri: null, mainClass: 'sessions-page', loading: 'Loading sessions…' });
}

/** One page skeleton and one CSP for every webview of the extension; a page without a worker gets no connections. */
function pageHtml(
  r: SessionsPageResources,
  page: { workerUri: string | null; mainClass: string | null; loading: string },
): string {
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${r.nonce}'`,
    `style-src ${r.cspSource}`,
    `font-src ${r.cspSource}`,
    `img-src ${r.cspSource} data:`,
    // The what-if worker: its bundle is fetched from the extension and run from a blob: URL (see buildWebviewHtml).
    ...(page.workerUri !== null ? [`connect-src ${r.cspSource}`, 'worker-src blob:'] : []),
  ].join('; ');
  const mainClass = page.mainClass !== null ? ` class="${escapeAttribute(page.mainClass)}"` : '';
  const worker = page.workerUri !== null ? ` data-worker-uri="${escapeAttribute(page.workerUri)}"` : '';
  return /* html */ `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" id="vscode-codicon-stylesheet" href="${escapeAttribute(r.codiconsUri)}">
<link rel="stylesheet" href="${escapeAttribute(r.styleUri)}">
<title>${escapeAttribute(r.title)}</title>
</head>
<body>
<main id="app"${mainClass} aria-busy="true"${worker}><p class="loading">${page.loading}</p></main>
<script nonce="${r.nonce}" src="${escapeAttribute(r.scriptUri)}"></script>
</body>
</html>`;
}
