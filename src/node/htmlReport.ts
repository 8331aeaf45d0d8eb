import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redactor } from '../core/redact/redactor';
import type { ReportDocument } from '../core/share/reportDocument';

/**
 * Writes the standalone HTML report: one file that opens offline in any browser.
 *
 * - One inline `<script>` (the report page, webview/report, built to dist/report.js) and
 *   one inline `<style>` (the inspector's stylesheet and the report's), each allowed by
 *   its SHA-256 hash in a strict Content-Security-Policy (`default-src 'none'`): nothing
 *   else runs, nothing is fetched. A nonce would be pointless in a static file (anyone
 *   could copy it); a hash only lets exactly this code run.
 * - The data is `<script type="application/json">`, which is never executed (so no hash),
 *   read with JSON.parse. `<`, `>`, `&`, U+2028 and U+2029 are written as \u escapes, so
 *   no trace text can close the element or open a comment, and the JSON stays valid. The
 *   page draws it with textContent only (webview/shared/dom.ts).
 * - Redaction runs over the whole data first (every string of it), unless turned off.
 */

/** The page's code and styles, read from the extension's or the CLI's own files. */
export interface ReportAssets {
  script: string;
  style: string;
}

/** Reads the assets from the package root (the folder holding dist/). */
export async function readReportAssets(packageRoot: string): Promise<ReportAssets> {
  // dist/report.css is the report page's stylesheet as esbuild bundled it: the inspector's parts and panels, then the report's own.
  const [script, style] = await Promise.all([
    readFile(join(packageRoot, 'dist', 'report.js'), 'utf8'),
    readFile(join(packageRoot, 'dist', 'report.css'), 'utf8'),
  ]);
  return { script, style };
}

/** JSON safe inside a `<script>` element (Lighthouse's report generator does the same). */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Inline code cannot contain `</script` or `<!--` (they would end or confuse the element): escape them inside its strings. */
function inlineSafe(code: string, tag: 'script' | 'style'): string {
  return code.replace(new RegExp(`</${tag}`, 'gi'), `<\\/${tag}`).replace(/<!--/g, '<\\!--');
}

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The report's HTML for a document that is already redacted (or meant not to be). */
export function reportHtml(doc: ReportDocument, assets: ReportAssets): string {
  const script = inlineSafe(assets.script, 'script');
  const style = inlineSafe(assets.style, 'style');
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    // The inline sheet by hash; chart.js and the controls style elements through the CSSOM, which style-src does not govern.
    `style-src ${sha256(style)}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeText(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="${escapeText(doc.generator)}">
<title>${escapeText(doc.title)}</title>
<style>${style}</style>
</head>
<body>
<div id="report"><p>Loading the report…</p></div>
<script type="application/json" id="report-data">${scriptSafeJson(doc)}</script>
<script>${script}</script>
</body>
</html>
`;
}

/** Redacts every string of the document (unless `redactor` is null) and records what was removed in it. */
export async function redactReport(doc: ReportDocument, redactor: Redactor | null): Promise<ReportDocument> {
  if (!redactor) return { ...doc, redaction: null };
  const [json] = await redactor.redactJsonTexts([JSON.stringify({ ...doc, redaction: null })]);
  return { ...(JSON.parse(json!) as ReportDocument), redaction: redactor.summary() };
}
