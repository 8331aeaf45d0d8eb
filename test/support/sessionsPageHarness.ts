import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { buildSessionsPageHtml, createNonce } from '../../src/extension/webviewHtml';
import type { SessionsHostNotification, SessionsPanelContent } from '../../src/protocol/sessionsMessages';
import { repoRoot } from './helpers';
import { THEMES } from './inspectorHarness';
import type { ThemeName } from './inspectorHarness';
import { themeCss } from './themes';

/**
 * The Agent Sessions panels' page (dist/sessionsView.js: several sessions at once, or two
 * compared) served with a fake host that answers `ready` with the content given. The page
 * is the one the panels get (`buildSessionsPageHtml`, src/extension/webviewHtml.ts): the
 * same elements, stylesheets and strict CSP, the theme set as VS Code sets it (class on
 * <body>, variables on <html>). `send` posts a message to the page as the host would.
 */
export async function openSessionsPage(
  browser: Browser,
  content: SessionsPanelContent,
  theme: ThemeName,
): Promise<{
  page: Page;
  posted: unknown[];
  send(message: SessionsHostNotification): Promise<void>;
  cspViolations(): Promise<string[]>;
  close(): Promise<void>;
}> {
  let origin = '';
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin);
      if (url.pathname === '/') {
        const html = buildSessionsPageHtml({
          cspSource: origin,
          scriptUri: `${origin}/dist/sessionsView.js`,
          styleUri: `${origin}/dist/webview.css`,
          codiconsUri: `${origin}/dist/codicons/codicon.css`,
          nonce: createNonce(),
          title: 'Agent Sessions',
        })
          // VS Code sets the theme before the page's script runs: class on <body>, variables on <html>.
          .replace('<body>', `<body class="${THEMES[theme].bodyClass}">`)
          .replace('</head>', `<link rel="stylesheet" href="${origin}/theme.css">\n</head>`);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(html);
        return;
      }
      if (url.pathname === '/theme.css') {
        res.writeHead(200, { 'content-type': 'text/css' });
        res.end(themeCss(THEMES[theme]));
        return;
      }
      const rel = normalize(decodeURIComponent(url.pathname)).replace(/^[/\\]+/, '');
      if (!(rel.startsWith(`dist${sep}`) || rel.startsWith(`media${sep}`))) {
        res.writeHead(404).end();
        return;
      }
      try {
        const body = await readFile(join(repoRoot, rel));
        res.writeHead(200, {
          'content-type':
            extname(rel) === '.css'
              ? 'text/css'
              : extname(rel) === '.js'
                ? 'text/javascript'
                : extname(rel) === '.ttf'
                  ? 'font/ttf'
                  : 'application/octet-stream',
        });
        res.end(body);
      } catch {
        res.writeHead(404).end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const posted: unknown[] = [];
  await page.exposeFunction('__hostPost', (message: { type?: string }) => {
    posted.push(message);
    if (message?.type === 'ready') void page.evaluate((m) => window.postMessage(m, '*'), { type: 'show', content });
  });
  await page.addInitScript(
    "window.__cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));",
  );
  await page.addInitScript(
    'window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__hostPost(JSON.parse(JSON.stringify(m))), getState: () => undefined, setState: (s) => s });',
  );
  await page.goto(`${origin}/`);
  await page.waitForSelector(`#app[data-ready="${content.kind}"]`);
  return {
    page,
    posted,
    cspViolations: () =>
      page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations.slice()),
    send: async (message) => {
      await page.evaluate((m) => window.postMessage(m, '*'), message as unknown);
    },
    close: async () => {
      await context.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
