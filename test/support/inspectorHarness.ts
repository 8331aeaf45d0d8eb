import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import type { PriceBook } from '../../src/core/cost/costTypes';
import type { ParsedTrace } from '../../src/core/trace/parseTrace';
import { TraceService } from '../../src/core/view/traceService';
import { askQuery } from '../../src/core/view/traceQueries';
import { isTraceQuery, noCall, queryAnswer } from '../../src/protocol/traceQueryChecks';
import type { TraceHeader } from '../../src/core/view/traceService';
import type { CallDetail } from '../../src/core/view/traceView';
import { buildWebviewHtml, createNonce } from '../../src/extension/webviewHtml';
import { SESSION_PAGE_SIZE } from '../../src/protocol/messages';
import type {
  CallRef,
  InspectorSettings,
  WebviewMessage,
  WebviewRequests,
  WhatIfCalibration,
  WhatIfWorkload,
} from '../../src/protocol/messages';
import { CHROMIUM_ARGS, chromiumPath } from './chromium.mjs';
import { callTranscript } from '../../src/node/transcriptRead';
import type { WorkerFile } from '../../src/protocol/traceWorkerProtocol';
import { repoRoot } from './helpers';
import { DARK_MODERN, HIGH_CONTRAST, LIGHT_MODERN, themeCss } from './themes';
import type { TestTheme } from './themes';

/** Where the webview tests keep screenshots for a person to look at. */
export const results = join(repoRoot, 'test-results');

/** Theme names the test page knows. */
export type ThemeName = 'dark' | 'light' | 'high-contrast';
/** The test themes by name. */
export const THEMES: Record<ThemeName, TestTheme> = {
  dark: DARK_MODERN,
  light: LIGHT_MODERN,
  'high-contrast': HIGH_CONTRAST,
};

const TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.ttf': 'font/ttf',
  '.map': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** Serves the page as the extension would (buildWebviewHtml, strict CSP) plus dist/ and media/. */
export async function startPageServer(): Promise<{ origin: string; close(): Promise<void> }> {
  let origin = '';
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin);
      const theme = THEMES[(url.searchParams.get('theme') ?? 'dark') as ThemeName] ?? DARK_MODERN;
      if (url.pathname === '/') {
        const html = buildWebviewHtml({
          cspSource: origin,
          scriptUri: `${origin}/dist/webview.js`,
          workerUri: `${origin}/dist/whatIfWorker.js`,
          styleUri: `${origin}/dist/webview.css`,
          codiconsUri: `${origin}/dist/codicons/codicon.css`,
          nonce: createNonce(),
          title: 'Agent Trace Inspector',
        })
          // VS Code sets the theme before the page's script runs: class on <body>, variables on <html>.
          .replace('<body>', `<body class="${theme.bodyClass}">`)
          .replace(
            '</head>',
            `<link rel="stylesheet" href="${origin}/theme.css?theme=${url.searchParams.get('theme') ?? 'dark'}">\n</head>`,
          );
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(html);
        return;
      }
      if (url.pathname === '/theme.css') {
        res.writeHead(200, { 'content-type': 'text/css' });
        res.end(themeCss(theme));
        return;
      }
      const rel = normalize(decodeURIComponent(url.pathname)).replace(/^[/\\]+/, '');
      if (!(rel.startsWith(`dist${sep}`) || rel.startsWith(`media${sep}`))) {
        res.writeHead(404).end();
        return;
      }
      try {
        const body = await readFile(join(repoRoot, rel));
        res.writeHead(200, { 'content-type': TYPES[extname(rel)] ?? 'application/octet-stream' });
        res.end(body);
      } catch {
        res.writeHead(404).end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Chromium from the system, never downloaded. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

/** How the fake host answers `call/details`: a result, or an Error to send back as `err`. */
export type DetailsAnswer = (ref: CallRef) => CallDetail | null | Error;

/** How the fake host answers `whatif/workload`: a workload, or an Error to send back as `err`. */
export type WhatIfAnswer = (sessionId: string) => WhatIfWorkload | Error;

/** What to open the page with. */
export interface OpenOptions {
  /** The trace the fake host serves, answering as the extension's trace worker does (the same TraceService). */
  trace: ParsedTrace;
  /** The file's name in the header. */
  fileName: string;
  /** True when the format was chosen by the user. */
  formatChosen?: boolean;
  /** Changes the header before it is sent (hostile names, diagnostics). */
  header?: (header: TraceHeader) => TraceHeader;
  /** Overrides the service's `call/details` answers. */
  details?: DetailsAnswer;
  /** The trace's files on disk, by index, for `call/transcript` (the worker reads the call's records again from them). */
  files?: WorkerFile[];
  /** How long to wait for the page to draw the first session (big traces in benchmarks take long). */
  drawTimeoutMs?: number;
  /** Prices the service figures costs with (the trace worker's book); none by default. */
  prices?: PriceBook | null;
  /** A service already made for `trace` (benchmarks reuse the analyses it holds). */
  service?: TraceService;
  whatIf?: WhatIfAnswer;
  /** How the fake host answers `whatif/calibration` (the person's choice in the open dialog); an Error is sent back as `err`. */
  calibration?: () => WhatIfCalibration | null | Error;
  settings?: InspectorSettings;
  select?: CallRef | null;
  state?: unknown;
  theme?: ThemeName;
  viewport?: { width: number; height: number };
}

/** An inspector page with a fake host: records what the webview posts and answers it. */
export interface InspectorPage {
  page: Page;
  /** Every message the webview posted, in order. */
  posted: WebviewMessage[];
  pageErrors: string[];
  consoleErrors: string[];
  /** CSP violations seen by the page. */
  cspViolations(): Promise<string[]>;
  /** The webview state as the host stub holds it. */
  state(): Promise<unknown>;
  /** Text of a `data-figure` element. */
  figure(name: string): Promise<string>;
  /** Waits for a posted message matching `match` that arrives after `since` messages. */
  waitForPosted(match: (m: WebviewMessage) => boolean, since?: number, timeoutMs?: number): Promise<WebviewMessage>;
  /** Sends a host message to the webview. */
  send(message: unknown): Promise<void>;
  /** The fake host's service (what the page is answered from). */
  readonly service: TraceService;
  /** Answers from now on from another service (the trace read again, or grown), as the trace worker does after a read. */
  setService(service: TraceService): void;
  /** The header as sent with `init`. */
  header: TraceHeader;
  /** Requests the page made, by method. */
  requests: Map<string, number>;
  close(): Promise<void>;
}

/**
 * Stands in for VS Code's webview API before the page's script runs: records CSP
 * violations, keeps the state, and forwards posted messages (JSON-cloned, as VS Code
 * serialises them) to the test through `__hostPost`.
 */
const HOST_STUB = `(() => {
  const violations = [];
  window.__cspViolations = violations;
  document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber));
  let state = __INITIAL_STATE__ ?? undefined;
  let acquired = false;
  window.__hostState = () => state;
  window.acquireVsCodeApi = () => {
    // VS Code allows one call per page; a second call is a bug in the webview.
    if (acquired) throw new Error('acquireVsCodeApi was called twice');
    acquired = true;
    return {
      postMessage: (m) => window.__hostPost(JSON.parse(JSON.stringify(m))),
      getState: () => state,
      setState: (s) => { state = s; return s; },
    };
  };
})();`;

/** Opens the inspector in a fresh page and answers `ready` with `init`. Resolves once the summary is on screen. */
export async function openInspector(browser: Browser, origin: string, options: OpenOptions): Promise<InspectorPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1400, height: 900 },
    deviceScaleFactor: 1,
  });
  const page = await context.newPage();
  const posted: WebviewMessage[] = [];
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  const send = async (message: unknown): Promise<void> => {
    await page.evaluate((m) => window.postMessage(m, '*'), message);
  };
  let service =
    options.service ??
    new TraceService(options.trace, {
      fileName: options.fileName,
      formatChosen: options.formatChosen ?? false,
      analysis: {},
      prices: options.prices ?? null,
    });
  const header = options.header ? options.header(service.header()) : service.header();
  const requests = new Map<string, number>();
  const answer = (id: number, result: unknown): Promise<void> =>
    result instanceof Error
      ? send({ type: 'response', inReplyTo: id, err: result.message })
      : send({ type: 'response', inReplyTo: id, ok: result });
  /** What the extension answers, from the same service its trace worker holds: any trace query by its name, as the host forwards it. */
  const serve = (method: keyof WebviewRequests, params: Record<string, unknown>): unknown => {
    const sessionId = params['sessionId'] as string;
    const callIndex = params['callIndex'] as number;
    switch (method) {
      case 'callDetail':
        if (options.details) return options.details(params as unknown as CallRef);
        break;
      case 'whatIfWorkload':
        return options.whatIf ? options.whatIf(sessionId) : new Error('no what-if workload in this test');
      case 'whatif/calibration':
        return options.calibration ? options.calibration() : new Error('no calibration in this test');
      case 'callTranscript':
        return callTranscript(service, options.files ?? [], {
          sessionId,
          callIndex,
          maxChars: params['maxChars'] as number,
        }).then((t) => t ?? new Error(noCall({ sessionId, callIndex })));
    }
    if (!isTraceQuery(method)) return new Error(`no handler for ${String(method)}`);
    try {
      return queryAnswer(method, params as never, askQuery(service, method, params as never));
    } catch (e) {
      return e as Error;
    }
  };
  await page.exposeFunction('__hostPost', async (message: WebviewMessage) => {
    posted.push(message);
    if (message.type === 'ready') {
      const intro =
        header.defaultSessionId === null ? null : service.sessionIntro({ sessionId: header.defaultSessionId });
      void send({
        type: 'init',
        header,
        sessions: service.sessionList({ query: '', offset: 0, limit: SESSION_PAGE_SIZE }),
        intro,
        settings: options.settings ?? { showCached: true },
        select: options.select ?? null,
      });
    } else if ('id' in message && typeof message.id === 'number') {
      requests.set(message.type, (requests.get(message.type) ?? 0) + 1);
      let result: unknown;
      try {
        result = await serve(
          message.type as keyof WebviewRequests,
          (message as { params: Record<string, unknown> }).params,
        );
      } catch (e) {
        result = e instanceof Error ? e : new Error(String(e));
      }
      void answer(message.id, result);
    }
  });
  // A string, not a function: tsx would wrap a function's inner closures in helpers that do not exist in the page.
  await page.addInitScript(HOST_STUB.replace('__INITIAL_STATE__', JSON.stringify(options.state ?? null)));
  await page.goto(`${origin}/?theme=${options.theme ?? 'dark'}`);
  await page.waitForSelector('#app[aria-busy="false"]', {
    state: 'attached',
    timeout: options.drawTimeoutMs ?? 30_000,
  });

  const waitForPosted = async (
    match: (m: WebviewMessage) => boolean,
    since = 0,
    timeoutMs = 5000,
  ): Promise<WebviewMessage> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = posted.slice(since).find(match);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no matching message posted; saw ${JSON.stringify(posted.slice(since).map((m) => m.type))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    page,
    posted,
    pageErrors,
    consoleErrors,
    cspViolations: () =>
      page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations.slice()),
    state: () => page.evaluate(() => (window as unknown as { __hostState: () => unknown }).__hostState()),
    figure: async (name) => ((await page.textContent(`[data-figure="${name}"]`)) ?? '').trim(),
    waitForPosted,
    send,
    get service() {
      return service;
    },
    setService(next: TraceService) {
      service = next;
    },
    header,
    requests,
    close: () => context.close(),
  };
}

/** The page server and Chromium of one test file, and every page opened on them. */
export interface InspectorSuite {
  /** Opens the inspector on the suite's server and browser; the page is closed in `after`. */
  open(options: OpenOptions): Promise<InspectorPage>;
}

/**
 * Registers a describe block's hooks for inspector pages. `before`: the built files in
 * `requires` (paths from the repository root) must exist, test-results/ is created, the page
 * server and Chromium start. `after`: every page opened, the browser and the server close.
 * Call it inside `describe`, before the block's own hooks (they run in registration order).
 */
export function inspectorSuite(requires: readonly string[]): InspectorSuite {
  let browser: Browser | undefined;
  let server: { origin: string; close(): Promise<void> } | undefined;
  const pages: InspectorPage[] = [];
  before(async () => {
    for (const file of requires)
      assert.ok(existsSync(join(repoRoot, file)), `run \`npm run build\` first: ${file} is missing`);
    await mkdir(results, { recursive: true });
    server = await startPageServer();
    browser = await launchChromium();
  });
  after(async () => {
    for (const p of pages) await p.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });
  return {
    async open(options) {
      if (!browser || !server) throw new Error('inspectorSuite: open() was called before its `before` hook ran');
      const p = await openInspector(browser, server.origin, options);
      pages.push(p);
      return p;
    },
  };
}

/** No CSP violation, no uncaught page error, no error reported to the host. */
export async function assertClean(p: InspectorPage, cspMessage = 'no CSP violations'): Promise<void> {
  assert.deepEqual(await p.cspViolations(), [], cspMessage);
  assert.deepEqual(p.pageErrors, [], 'no uncaught page errors');
  assert.deepEqual(
    p.posted.filter((m) => m.type === 'log/error'),
    [],
    'no errors reported to the host',
  );
}

/** Waits until the page has drawn its session's timeline (or said it has none). */
export async function timelineDrawn(p: InspectorPage): Promise<void> {
  await p.page.waitForSelector('#app[aria-busy="false"]', { state: 'attached' });
}

/** A chart's plot area as it reports it (`data-plot-area`: left, top, right, bottom within its canvas) and its bar count. */
export async function plotArea(
  p: InspectorPage,
  chart = '.chart-wrap',
): Promise<{ left: number; top: number; right: number; bottom: number; count: number }> {
  const [left, top, right, bottom] = (await p.page.getAttribute(chart, 'data-plot-area'))!.split(',').map(Number) as [
    number,
    number,
    number,
    number,
  ];
  return { left, top, right, bottom, count: Number(await p.page.getAttribute(chart, 'data-bar-count')) };
}

/**
 * Client coordinates of bar `index` of `chart`: the middle of its slot across, and `down`
 * of the way from the plot area's top (0) to its bottom (1).
 */
export async function barPoint(
  p: InspectorPage,
  index: number,
  { chart = '.chart-wrap', down = 0.8 }: { chart?: string; down?: number } = {},
): Promise<{ x: number; y: number }> {
  const box = (await p.page.locator(`${chart} canvas`).boundingBox())!;
  const a = await plotArea(p, chart);
  return {
    x: box.x + a.left + ((index + 0.5) * (a.right - a.left)) / a.count,
    y: box.y + a.top + (a.bottom - a.top) * down,
  };
}
