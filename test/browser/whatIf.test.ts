import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { before, describe, it } from 'node:test';
import { engineByName } from '../../src/core/sim/engines/engineTable';
import { DEFAULT_PARAMS } from '../../src/core/sim/params';
import type { EngineParams } from '../../src/core/sim/params';
import { runScenario } from '../../src/core/sim/scenario';
import type { ScenarioResult } from '../../src/core/sim/scenario';
import { runSweep } from '../../src/core/sim/sweep';
import { TraceParse } from '../../src/core/trace/parseTrace';
import type { ParsedTrace } from '../../src/core/trace/parseTrace';
import { TraceService } from '../../src/core/view/traceService';
import { SESSION_PAGE_SIZE } from '../../src/protocol/messages';
import { buildWhatIfWorkload } from '../../src/core/sim/whatIfWorkload';
import type { WebviewMessage, WhatIfCalibration } from '../../src/protocol/messages';
import { readCalibrationDocument } from '../../src/core/sim/calibrate';
import { parseFile, repoRoot, SPOTTER } from '../support/helpers';
import { assertClean, barPoint, inspectorSuite, plotArea, results } from '../support/inspectorHarness';
import type { InspectorPage, OpenOptions } from '../support/inspectorHarness';

/** The stored state without the view (zoom window, scroll), which is kept a moment after it settles (test/browser/firstMinutes.test.ts). */
function withoutView(state: unknown): Record<string, unknown> {
  const copy = { ...(state as Record<string, unknown>) };
  delete copy['view'];
  delete copy['scrollY'];
  return copy;
}

const FAST = engineByName('fast');

// The what-if panel in real Chromium against the built webview and its worker bundle.
// The expected numbers are what `agent-trace simulate` prints for the same scenario
// (the built dist/cli.js, run on the command the panel copies): the panel and the CLI
// run the same core, so they must match exactly.

const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');
const SAMPLE_MAIN = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';
/** The spotter log's main session (149 calls): the same session, whole. */
const SPOTTER_MAIN = SAMPLE_MAIN;
const MOONCAKE = join(repoRoot, 'test/fixtures/mooncake/conversation_trace.head300.jsonl');
const CLI = join(repoRoot, 'dist/cli.js');

/** `agent-trace simulate --json` output. */
interface SimulateDocument {
  input: { params: unknown; replicas: unknown };
  scenario: ScenarioResult;
}

interface SweepDocument {
  sweep: Array<{ value: number }>;
  cliff: { at: number | null; suggestedAdmissionCap: number | null; summary: string };
}

function cliHasSimulate(): boolean {
  return existsSync(CLI) && spawnSync(process.execPath, [CLI, 'simulate', '--help'], { encoding: 'utf8' }).status === 0;
}

/** Runs a copied command line with the built CLI in a shell, as a person pasting it would. */
function runCommand<T>(command: string): T {
  assert.match(command, /^agent-trace simulate /);
  const out = execFileSync(
    'bash',
    ['-c', command.replace(/^agent-trace /, `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} `)],
    { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 },
  );
  return JSON.parse(out) as T;
}

/** What assertClean says of CSP violations here. */
const CLEAN_CSP = 'no CSP violations (the worker starts from a blob: URL)';

function posted<T extends WebviewMessage['type']>(
  type: T,
): (m: WebviewMessage) => m is Extract<WebviewMessage, { type: T }> {
  return (m): m is Extract<WebviewMessage, { type: T }> => m.type === type;
}

describe('what-if panel in Chromium', () => {
  const suite = inspectorSuite(['dist/whatIfWorker.js']);
  let sample: ParsedTrace;

  before(async () => {
    assert.ok(cliHasSimulate(), 'run `npm run build` first: dist/cli.js is missing or has no `simulate` command');
    sample = await parseFile(SAMPLE);
  });

  /** The sample in the inspector, the what-if section open (or opened by a click). */
  async function whatIf(options: Partial<OpenOptions> = {}, click = false): Promise<InspectorPage> {
    const p = await suite.open({
      trace: sample,
      fileName: 'claude-code-sessions.trace.jsonl',
      whatIf: (id) => buildWhatIfWorkload(sample.model, id, SAMPLE, null),
      state: click ? null : { whatIfOpen: true },
      ...options,
    });
    if (click) await p.page.click('.whatif-summary');
    return p;
  }

  /** Waits until the scenario with `replicas` sessions (any, when omitted) has run completely. */
  async function settled(p: InspectorPage, replicas?: number, extra = ''): Promise<void> {
    await p.page.waitForSelector(
      `.whatif[data-scenario-status="done"]${replicas === undefined ? '' : `[data-replicas="${replicas}"]`}${extra}`,
      { state: 'attached', timeout: 30_000 },
    );
  }

  /** The raw values behind the headline figures. */
  async function figures(p: InspectorPage): Promise<Record<string, number | null>> {
    return p.page.evaluate(() =>
      Object.fromEntries(
        Array.from(document.querySelectorAll<HTMLElement>('.whatif [data-figure]')).map((e) => [
          e.dataset['figure']!,
          JSON.parse(e.dataset['value'] ?? 'null') as number | null,
        ]),
      ),
    );
  }

  async function copyCommand(p: InspectorPage): Promise<string> {
    const since = p.posted.length;
    await p.page.click('#whatif-copy-cli');
    const m = await p.waitForPosted(posted('clipboard/write'), since);
    return (m as Extract<WebviewMessage, { type: 'clipboard/write' }>).text;
  }

  /** The figures equal the CLI's for the copied command, and so does the whole exported scenario. */
  async function matchesCli(p: InspectorPage): Promise<string> {
    const command = await copyCommand(p);
    assert.equal(await p.page.getAttribute('.whatif-command', 'data-command'), command, 'the copied command is shown');
    const cli = runCommand<SimulateDocument>(command);
    const f = await figures(p);
    assert.equal(f['whatIfHitRate'], cli.scenario.admissionHitRate);
    assert.equal(f['whatIfRecomputed'], cli.scenario.recomputedPrefillTokens);
    assert.equal(f['whatIfPrefillShare'], cli.scenario.prefillShare);
    assert.equal(f['whatIfSlowdown'], cli.scenario.slowdown.mean);
    // The export carries the whole result and the engine parameters: both the CLI's.
    const since = p.posted.length;
    await p.page.click('#whatif-export');
    const exported = (await p.waitForPosted(posted('whatif/export'), since)) as Extract<
      WebviewMessage,
      { type: 'whatif/export' }
    >;
    const doc = JSON.parse(exported.json) as SimulateDocument & { command: string };
    assert.deepEqual(doc.scenario, cli.scenario);
    assert.deepEqual(doc.input.params, cli.input.params);
    assert.deepEqual(doc.input.replicas, cli.input.replicas);
    assert.equal(doc.command, command);
    return command;
  }

  it('opens on a click, asks the host for the workload, and shows what agent-trace simulate prints', async () => {
    const p = await whatIf({}, true);
    const request = await p.waitForPosted(posted('whatIfWorkload'));
    assert.deepEqual((request as Extract<WebviewMessage, { type: 'whatIfWorkload' }>).params, {
      sessionId: SAMPLE_MAIN,
    });
    await settled(p, 16);
    // The default scenario of the settings: 16 sessions, 10 s apart, Qwen3-32B on one H200, vLLM LRU; the selects show it.
    assert.equal((await p.page.textContent('#whatif-gpu .select-face .text'))?.trim(), 'H200 141 GB');
    assert.equal(
      (await p.page.textContent('#whatif-model .select-face .text'))?.trim(),
      'Qwen3-32B (bf16) · 256 KiB KV/token',
    );
    assert.equal((await p.page.textContent('#whatif-policy .select-face .text'))?.trim(), 'vLLM LRU');
    assert.match(
      (await p.page.textContent('.whatif-sentence')) ?? '',
      /^16 sessions like this on one H200 with Qwen3-32B: hit rate falls from \d+% to \d+% and prefill becomes \d+% of LLM time/,
    );
    const command = await matchesCli(p);
    assert.equal(
      command,
      `agent-trace simulate ${SAMPLE} --session ${SAMPLE_MAIN} --replicas 16 --stagger-s 10 --tool-wait-scale 1 --gpu h200 --model qwen3-32b --policy vllm-lru --json`,
    );
    const state = withoutView(await p.state());
    assert.deepEqual(state, {
      whatIfOpen: true,
      sessionId: SAMPLE_MAIN,
      callIndex: null,
      showCached: true,
      barView: 'tokens',
    });
    await p.page.locator('.whatif').screenshot({ path: join(results, 'webview-whatif.png') });
    await assertClean(p, CLEAN_CSP);
  });

  it('moving N (slider by keyboard, then the field) changes the figures, and they stay equal to the CLI', async () => {
    const p = await whatIf();
    await settled(p, 16);
    const before = await figures(p);
    await p.page.focus('[data-slider="replicas"]');
    for (let i = 0; i < 8; i++) await p.page.keyboard.press('ArrowRight');
    await settled(p, 24);
    const at24 = await figures(p);
    assert.notDeepEqual(at24, before, 'the figures change with N');
    assert.ok(at24['whatIfSlowdown']! > before['whatIfSlowdown']!, 'more sessions, more slowdown');
    assert.equal(await p.page.inputValue('#whatif-replicas input'), '24');
    assert.match(await matchesCli(p), / --replicas 24 /);
    await p.page.fill('#whatif-replicas input', '4');
    await settled(p, 4);
    assert.equal(await p.page.inputValue('[data-slider="replicas"]'), '4');
    assert.match(await matchesCli(p), / --replicas 4 /);
    await assertClean(p, CLEAN_CSP);
  });

  it('every policy, with its parameters, a typed capacity and custom memory match the CLI', async () => {
    const p = await whatIf();
    await settled(p, 16);
    // A typed value starts a run of its own after the policy's: wait for a later run than the one before the typing, done.
    const typed = async (selector: string, value: string): Promise<void> => {
      const before = Number(await p.page.getAttribute('.whatif', 'data-scenario-seq'));
      await p.page.fill(selector, value);
      await p.page.waitForFunction(
        (b) => {
          const w = document.querySelector<HTMLElement>('.whatif');
          return Number(w?.dataset['scenarioSeq']) > b && w?.dataset['scenarioStatus'] === 'done';
        },
        before,
        { timeout: 30_000 },
      );
    };
    // Opens the dropdown and picks the option. On a loaded CI machine the list once stayed
    // closed after the click that should open it (the option never became visible): open it again.
    const choose = async (id: string, text: string): Promise<void> => {
      const option = p.page.locator(`#${id} li.option:has-text("${text}")`).first();
      for (let attempt = 1; ; attempt++) {
        await p.page.click(`#${id}`);
        try {
          await option.waitFor({ state: 'visible', timeout: 5_000 });
          break;
        } catch (error) {
          if (attempt === 3) throw error;
        }
      }
      await option.click();
    };
    await p.page.fill('#whatif-replicas input', '8');
    await settled(p, 8);
    await choose('whatif-policy', 'TTL pin');
    await typed('#whatif-ttlS input', '20');
    await settled(p, 8, '[data-scenario-policy="ttl-pin"]');
    assert.match(await matchesCli(p), / --policy ttl-pin --ttl-s 20 --max-ttl-s 30 /);
    await choose('whatif-policy', 'Admission cap');
    await typed('#whatif-admissionCap input', '4');
    await settled(p, 8, '[data-scenario-policy="admission-cap"]');
    assert.match(await matchesCli(p), / --policy admission-cap --admission-cap 4 /);
    await choose('whatif-policy', 'CPU offload');
    await typed('#whatif-offloadTokens input', '500000');
    await settled(p, 8, '[data-scenario-policy="cpu-offload"]');
    assert.match(await matchesCli(p), / --policy vllm-lru --offload-tokens 500000 --offload-gbps 25 /);
    await choose('whatif-policy', 'SGLang LRU');
    await settled(p, 8, '[data-scenario-policy="sglang-lru"]');
    assert.match(await matchesCli(p), / --policy sglang-lru /);
    await choose('whatif-policy', 'vLLM LRU');
    await p.page.click('#whatif-capacity-typed');
    await p.page.fill('#whatif-capacityTokens input', '100000');
    await settled(p, 8, '[data-capacity="100000"]');
    assert.match(
      await matchesCli(p),
      / --capacity-tokens 100000 --step-fixed-ms 16.1 --prefill-us-per-token 132.7 --kv-read-ns-per-token 64 --kv-bytes-per-token 262144 /,
    );
    await p.page.click('#whatif-capacity-typed');
    await choose('whatif-gpu', 'Custom memory');
    await p.page.fill('#whatif-gpuMemoryGiB input', '96');
    await settled(p, 8, '[data-capacity="91328"]');
    assert.match(await matchesCli(p), / --gpu h100 --model qwen3-32b --gpu-memory-gib 96 /);
    await assertClean(p, CLEAN_CSP);
  });

  it("GPUs and a router: each GPU's load and hit rate, equal to the CLI, and one GPU again as before", async () => {
    const p = await whatIf();
    await settled(p, 16);
    const single = await figures(p);
    assert.equal(await p.page.isHidden('.whatif-gpu-section'), true, 'one GPU: no per-GPU table');
    assert.equal(await p.page.getAttribute('#whatif-router', 'disabled'), '', 'one GPU: nothing to route');
    await p.page.fill('#whatif-gpus input', '4');
    await settled(p, 16, '[data-gpus="4"]');
    await p.page.click('#whatif-router');
    await p.page.click('#whatif-router li.option:has-text("Session affinity")');
    await settled(p, 16, '[data-gpus="4"]');
    const command = await matchesCli(p);
    assert.match(command, / --gpus 4 --router session-affinity --json$/);
    const cli = runCommand<SimulateDocument>(command);
    // The table: one row per GPU, with the CLI's calls, busy share and hit rate.
    const rows = await p.page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLElement>('.whatif-gpu-table tbody tr')).map((tr) =>
        Object.fromEntries(
          Array.from(tr.querySelectorAll<HTMLElement>('[data-whatif-gpu-col]')).map((td) => [
            td.dataset['whatifGpuCol']!,
            JSON.parse(td.dataset['value'] ?? 'null') as number | null,
          ]),
        ),
      ),
    );
    assert.deepEqual(
      rows,
      cli.scenario.perGpu!.map((g) => ({ calls: g.requests, busy: g.utilization, hitRate: g.admissionHitRate })),
    );
    // Sixteen copies of one session on four GPUs, each session kept on one: every GPU serves some.
    assert.ok(rows.every((r) => r['calls']! > 0));
    assert.match(
      (await p.page.textContent('.whatif-sentence')) ?? '',
      /^16 sessions like this on 4 H200s behind the Session affinity router with Qwen3-32B/,
    );
    await p.page.locator('.whatif').screenshot({ path: join(results, 'webview-whatif-fleet.png') });
    await p.page.fill('#whatif-gpus input', '1');
    await settled(p, 16, '[data-gpus="1"]');
    assert.deepEqual(await figures(p), single, 'back to one GPU: the same figures as before');
    assert.equal(await p.page.isHidden('.whatif-gpu-section'), true);
    await assertClean(p, CLEAN_CSP);
  });

  it('draws the knee where the sweep says, marks the cap and the scenario, and Copy sweep reproduces the cliff', async () => {
    const p = await whatIf();
    await settled(p, 16);
    await p.page.waitForSelector('.whatif-cliff-chart[data-knee]:not([data-knee=""])', {
      state: 'attached',
      timeout: 30_000,
    });
    const data = await p.page.evaluate(() => ({
      ...(document.querySelector('.whatif-cliff-chart') as HTMLElement).dataset,
    }));
    const run = data['points']!.split(',').map(Number);
    // The same sweep in Node, by the core, over the points the panel ran.
    const { workload } = buildWhatIfWorkload(sample.model, SAMPLE_MAIN, SAMPLE, null);
    const sweep = runSweep(
      FAST,
      workload,
      {
        params: await exportedParams(p),
        replicas: { replicas: 1, staggerS: 10, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 },
        session: SAMPLE_MAIN,
      },
      'replicas',
      run,
    );
    assert.ok(sweep.cliff.at !== null, 'the sample has a cliff on one H200');
    assert.equal(Number(data['knee']), sweep.cliff.at);
    assert.equal(Number(data['suggested']), sweep.cliff.suggestedAdmissionCap);
    assert.equal(data['current'], '16');
    // Drawn at that point's pixel: the knee line's x is the x of the knee's point.
    assert.equal(data['kneePixel'], data['pointPixels']!.split(',')[run.indexOf(sweep.cliff.at)]);
    assert.equal((await p.page.textContent('[data-cliff-summary]'))?.trim(), sweep.cliff.summary);
    // Stops two points past the cliff, and says what it skipped.
    assert.equal(run[run.length - 1], run[run.indexOf(sweep.cliff.at) + 2]);
    assert.match(
      (await p.page.textContent('[data-sweep-skipped]')) ?? '',
      /^Not run: N = .*256\. The sweep stops 2 points past the cliff/,
    );
    const since = p.posted.length;
    await p.page.click('#whatif-copy-sweep');
    const m = (await p.waitForPosted(posted('clipboard/write'), since)) as Extract<
      WebviewMessage,
      { type: 'clipboard/write' }
    >;
    assert.match(m.text, new RegExp(` --sweep replicas=${run.join(',')} --json$`));
    const cli = runCommand<SweepDocument>(m.text);
    assert.equal(cli.cliff.at, Number(data['knee']));
    assert.equal(cli.cliff.suggestedAdmissionCap, Number(data['suggested']));
    // Other policies' lines arrive progressively, at the same points.
    await p.page.waitForSelector('.whatif-cliff-chart[data-lines*="ttl-pin"]', { state: 'attached', timeout: 30_000 });
    await assertClean(p, CLEAN_CSP);
  });

  /** The engine parameters of the scenario on screen, from its export. */
  async function exportedParams(p: InspectorPage): Promise<EngineParams> {
    const since = p.posted.length;
    await p.page.click('#whatif-export');
    const m = (await p.waitForPosted(posted('whatif/export'), since)) as Extract<
      WebviewMessage,
      { type: 'whatif/export' }
    >;
    // The export leaves out SGLang's page size under every other policy (as simulate --json does): the engine's default.
    const params = (
      JSON.parse(m.json) as {
        input: { params: Omit<EngineParams, 'sglangPageSizeTokens'> & { sglangPageSizeTokens?: number } };
      }
    ).input.params;
    return { sglangPageSizeTokens: DEFAULT_PARAMS.sglangPageSizeTokens, ...params };
  }

  it('refuses bad input at the field with a message, keeps the last results, and recovers', async () => {
    const p = await whatIf();
    await settled(p, 16);
    const good = await figures(p);
    const error = (field: string) => p.page.textContent(`[data-field-error="${field}"]`);
    await p.page.fill('#whatif-replicas input', 'many');
    await p.page.waitForSelector('[data-field-error="replicas"]:not([hidden])');
    assert.match(
      (await error('replicas')) ?? '',
      /"many" is not a number: Sessions needs a whole number from 1 to 256/,
    );
    assert.equal(await p.page.getAttribute('#whatif-replicas', 'aria-describedby'), 'whatif-replicas-error');
    await p.page.fill('#whatif-replicas input', '0');
    assert.match((await error('replicas')) ?? '', /Sessions cannot be 0/);
    assert.match((await p.page.textContent('.whatif-status')) ?? '', /^Not updated: Sessions needs a valid value/);
    await p.page.click('#whatif-capacity-typed');
    await p.page.fill('#whatif-capacityTokens input', '8');
    assert.match((await error('capacityTokens')) ?? '', /at least one block \(16 tokens\)/);
    await p.page.fill('#whatif-toolWaitScale input', '×2');
    assert.match((await error('toolWaitScale')) ?? '', /not a number/);
    await p.page.waitForTimeout(300);
    assert.deepEqual(await figures(p), good, 'the last valid results stay on screen');
    await p.page.screenshot({ path: join(results, 'webview-whatif-bad-input.png'), fullPage: true });
    await p.page.fill('#whatif-toolWaitScale input', '2');
    await p.page.fill('#whatif-capacityTokens input', '200000');
    await p.page.fill('#whatif-replicas input', '12');
    await settled(p, 12, '[data-capacity="200000"]');
    assert.equal(await p.page.isHidden('[data-field-error="replicas"]'), true);
    await assertClean(p, CLEAN_CSP);
  });

  it('clicking a call in the scenario bars selects it in the timeline and reveals its source; arrows move it', async () => {
    const p = await whatIf();
    await settled(p, 16);
    await p.page.locator('.whatif-bars-chart').scrollIntoViewIfNeeded();
    assert.equal((await plotArea(p, '.whatif-bars-chart')).count, 48);
    const at = await barPoint(p, 30, { chart: '.whatif-bars-chart', down: 0.9 });
    const since = p.posted.length;
    await p.page.mouse.click(at.x, at.y);
    const m = (await p.waitForPosted(posted('source/reveal'), since)) as Extract<
      WebviewMessage,
      { type: 'source/reveal' }
    >;
    assert.deepEqual(m.ref, { sessionId: SAMPLE_MAIN, callIndex: 30 });
    assert.equal(await p.page.getAttribute('.timeline .chart-wrap', 'data-selected-call'), '30');
    assert.equal(await p.page.getAttribute('.whatif-bars-chart', 'data-selected-call'), '30');
    await p.page.focus('.whatif-bars-chart');
    await p.page.keyboard.press('ArrowRight');
    assert.equal(await p.page.getAttribute('.timeline .chart-wrap', 'data-selected-call'), '31');
    const sinceEnter = p.posted.length;
    await p.page.keyboard.press('Enter');
    const enter = (await p.waitForPosted(posted('source/reveal'), sinceEnter)) as Extract<
      WebviewMessage,
      { type: 'source/reveal' }
    >;
    assert.equal(enter.ref.callIndex, 31);
    // The timeline's own selection shows in the scenario bars.
    await p.page.focus('.timeline .chart-wrap');
    await p.page.keyboard.press('Home');
    assert.equal(await p.page.getAttribute('.whatif-bars-chart', 'data-selected-call'), '0');
    await assertClean(p, CLEAN_CSP);
  });

  it('the cliff chart is keyboard reachable: arrows announce points, Enter makes one the scenario', async () => {
    const p = await whatIf();
    await settled(p, 16);
    await p.page.waitForSelector('.whatif-cliff-chart[data-knee]:not([data-knee=""])', { state: 'attached' });
    await p.page.focus('.whatif-cliff-chart');
    await p.page.keyboard.press('Home');
    await p.page.keyboard.press('ArrowRight');
    assert.equal(await p.page.getAttribute('.whatif-cliff-chart', 'data-cursor'), '2');
    assert.match(
      (await p.page.textContent('.whatif-results > .visually-hidden')) ?? '',
      /^2 sessions: hit rate \d+\.\d% \(ideal \d+\.\d%\), prefill/,
    );
    await p.page.keyboard.press('Enter');
    await settled(p, 2);
    assert.equal(await p.page.inputValue('#whatif-replicas input'), '2');
    await assertClean(p, CLEAN_CSP);
  });

  it('a stale run is cancelled: a burst of N changes ends on the last N, with its own numbers', async () => {
    const p = await whatIf();
    await settled(p, 16);
    for (const n of [40, 64, 96, 128, 7, 33]) {
      await p.page.fill('#whatif-replicas input', String(n));
      await p.page.waitForTimeout(60);
    }
    await settled(p, 33);
    const { workload } = buildWhatIfWorkload(sample.model, SAMPLE_MAIN, SAMPLE, null);
    const params = await exportedParams(p);
    const expected = runScenario(FAST, workload, {
      params,
      replicas: { replicas: 33, staggerS: 10, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 },
      session: SAMPLE_MAIN,
    });
    const f = await figures(p);
    assert.equal(f['whatIfHitRate'], expected.admissionHitRate);
    assert.equal(f['whatIfSlowdown'], expected.slowdown.mean);
    await assertClean(p, CLEAN_CSP);
  });

  it('keeps the choices per file in the webview state and starts from the settings', async () => {
    const p = await whatIf({
      settings: {
        showCached: true,
        whatIf: { gpu: 'h100', model: 'llama-3.1-8b', replicas: 6, staggerS: 2, toolWaitScale: 0.5, policy: 'ttl-pin' },
      },
    });
    await settled(p, 6);
    assert.equal(await p.page.getAttribute('#whatif-gpu', 'data-value'), 'h100');
    assert.equal(await p.page.getAttribute('#whatif-model', 'data-value'), 'llama-3.1-8b');
    assert.equal(await p.page.getAttribute('#whatif-policy', 'data-value'), 'ttl-pin');
    assert.equal(await p.page.inputValue('#whatif-toolWaitScale input'), '0.5');
    const command = await copyCommand(p);
    assert.match(
      command,
      / --replicas 6 --stagger-s 2 --tool-wait-scale 0\.5 --gpu h100 --model llama-3\.1-8b --policy ttl-pin --ttl-s auto --max-ttl-s 30 --json$/,
    );
    await p.page.fill('#whatif-replicas input', '9');
    await settled(p, 9);
    const state = (await p.state()) as { whatIf: { replicas: number; model: string } };
    assert.equal(state.whatIf.replicas, 9);
    // Reopened with that state (a reload, or VS Code restoring the editor): the file's choices win over the settings.
    const again = await whatIf({
      state,
      settings: {
        showCached: true,
        whatIf: { gpu: 'h200', model: 'qwen3-32b', replicas: 16, staggerS: 10, toolWaitScale: 1, policy: 'vllm-lru' },
      },
    });
    await settled(again, 9);
    assert.equal(await again.page.getAttribute('#whatif-model', 'data-value'), 'llama-3.1-8b');
    assert.equal(await again.page.inputValue('#whatif-replicas input'), '9');
    await assertClean(again, CLEAN_CSP);
  });

  it('step times from a calibration file: the run uses them, equal to simulate --calibration; kept per file; the presets again on request', async () => {
    // The file the person would pick: the real CLI's fit of a real AIPerf run, read as the host reads it.
    const scratch = mkdtempSync(join(tmpdir(), 'agent-trace-whatif-cal-'));
    const cal = join(scratch, 'qwen.cal.json');
    execFileSync(
      process.execPath,
      [CLI, 'calibrate', join(repoRoot, 'test/fixtures/aiperf/qwen_concurrency1.profile_export.jsonl'), '-o', cal],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const read = readCalibrationDocument(JSON.parse(readFileSync(cal, 'utf8')));
    assert.ok(read.ok);
    let pick: WhatIfCalibration | null | Error = new Error(
      'bad.json: not a calibration (no "model.stepFixedMs" from 0 to 1,000,000)',
    );
    const p = await whatIf({ calibration: () => pick });
    await settled(p, 16);
    const note = async (): Promise<string> => (await p.page.textContent('[data-steps-note]'))?.trim() ?? '';
    // The H200 × Qwen3-32B preset (src/core/sim/params.ts: 16.1 ms, 132.7 µs, 64 ns; no per-sequence cost by default).
    assert.equal(
      await note(),
      'From the GPU and model presets: 16.1 ms per step, 132.7 µs per prefilled token, 64 ns per KV token read, 0 µs per decoding sequence.',
    );
    assert.equal(await p.page.isHidden('#whatif-calibration-drop'), true);
    const presetCommand = await copyCommand(p);
    assert.doesNotMatch(presetCommand, /--step-fixed-ms/);

    // A file that is not a calibration: said under the control, and nothing changes.
    let since = p.posted.length;
    await p.page.click('#whatif-calibration-load');
    const asked = await p.waitForPosted(posted('whatif/calibration'), since);
    assert.deepEqual((asked as { params: unknown }).params, {}, 'the page names no file');
    await p.page.waitForSelector('[data-field-error="calibration"]:not([hidden])');
    assert.equal(
      (await p.page.textContent('[data-field-error="calibration"]'))?.trim(),
      'Could not use that file: bad.json: not a calibration (no "model.stepFixedMs" from 0 to 1,000,000)',
    );
    assert.equal(await copyCommand(p), presetCommand);

    // The calibration: the run starts again with its four costs.
    pick = { name: 'qwen.cal.json', ...read.fit };
    const before = Number(await p.page.getAttribute('.whatif', 'data-scenario-seq'));
    await p.page.click('#whatif-calibration-load');
    await p.page.waitForFunction(
      (b) => {
        const w = document.querySelector<HTMLElement>('.whatif');
        return Number(w?.dataset['scenarioSeq']) > b && w?.dataset['scenarioStatus'] === 'done';
      },
      before,
      { timeout: 30_000 },
    );
    assert.equal(await p.page.isHidden('[data-field-error="calibration"]'), true);
    // The fit the calibrate test checks by its closed form: F = 18.082 ms, P = 131.93 µs, K and Q not identified (0).
    assert.match(
      await note(),
      /^From qwen\.cal\.json: 18\.08 ms per step, 131\.9 µs per prefilled token, 0 ns per KV token read, 0 µs per decoding sequence; fitted to 10 requests, median error \d+(\.\d+)?%\.$/,
    );
    assert.match((await p.page.textContent('.whatif-digest')) ?? '', /calibrated steps/);
    assert.match(
      (await p.page.textContent('.whatif-sentence')) ?? '',
      / with Qwen3-32B \(step times from qwen\.cal\.json\):/,
    );
    await p.page.locator('.whatif-controls').screenshot({ path: join(results, 'webview-whatif-calibration.png') });
    const command = await matchesCli(p);
    assert.match(command, / --step-fixed-ms 18\.082249 --prefill-us-per-token 131\.933 --kv-read-ns-per-token 0 /);
    assert.match(command, / --decode-us-per-seq 0 /);
    // A second path to the same numbers: the CLI reading the file itself.
    const viaFile = runCommand<SimulateDocument>(
      `agent-trace simulate ${SAMPLE} --session ${SAMPLE_MAIN} --replicas 16 --stagger-s 10 --tool-wait-scale 1 --gpu h200 --model qwen3-32b --policy vllm-lru --calibration ${cal} --json`,
    );
    const viaPanel = runCommand<SimulateDocument>(command);
    assert.deepEqual(viaPanel.input.params, viaFile.input.params);
    assert.deepEqual(viaPanel.scenario, viaFile.scenario);
    const preset = runCommand<SimulateDocument>(presetCommand);
    assert.notDeepEqual(viaFile.scenario.slowdown, preset.scenario.slowdown, 'the calibration changed the run');

    // Kept per file with the other choices; reopened, the page shows it (the name as text, whatever it holds).
    const state = (await p.state()) as { whatIf: { calibration: WhatIfCalibration } };
    assert.equal(state.whatIf.calibration.name, 'qwen.cal.json');
    const hostileName = '<img src=x onerror="window.__pwned=1">.json';
    const again = await whatIf({
      state: { ...state, whatIf: { ...state.whatIf, calibration: { ...state.whatIf.calibration, name: hostileName } } },
    });
    await settled(again, 16);
    assert.ok(
      ((await again.page.textContent('[data-steps-note]')) ?? '').startsWith(`From ${hostileName}: 18.08 ms per step`),
    );
    assert.equal(await again.page.locator('.whatif img').count(), 0);
    assert.equal(await again.page.evaluate(() => (window as { __pwned?: number }).__pwned), undefined);
    // A saved calibration past the engine's bounds is none: the presets run.
    const tampered = await whatIf({
      state: {
        ...state,
        whatIf: {
          ...state.whatIf,
          calibration: {
            ...state.whatIf.calibration,
            model: { ...state.whatIf.calibration.model, stepFixedMs: 1e308 },
          },
        },
      },
    });
    await settled(tampered, 16);
    assert.equal(await copyCommand(tampered), presetCommand);

    // "Use the presets'" goes back: the same command as before the calibration.
    since = p.posted.length;
    await p.page.click('#whatif-calibration-drop');
    await p.page.waitForFunction(() => !document.querySelector('.whatif-digest')?.textContent?.includes('calibrated'));
    await settled(p, 16);
    assert.equal(await copyCommand(p), presetCommand);
    await assertClean(p, CLEAN_CSP);
    rmSync(scratch, { recursive: true, force: true });
  });

  for (const theme of ['light', 'high-contrast'] as const) {
    it(`renders in the ${theme} theme`, async () => {
      const p = await whatIf({ theme });
      await settled(p, 16);
      await p.page.waitForSelector('.whatif-cliff-chart[data-knee]:not([data-knee=""])', { state: 'attached' });
      await p.page.locator('.whatif').screenshot({ path: join(results, `webview-whatif-${theme}.png`) });
      await assertClean(p, CLEAN_CSP);
    });
  }

  it('fits a 600 px wide panel: one column, nothing wider than the page', async () => {
    const p = await whatIf({ viewport: { width: 600, height: 900 } });
    await settled(p, 16);
    const layout = await p.page.evaluate(() => {
      const controls = document.querySelector('.whatif-controls')!.getBoundingClientRect();
      const resultsBox = document.querySelector('.whatif-results')!.getBoundingClientRect();
      return {
        scroll: document.documentElement.scrollWidth,
        width: window.innerWidth,
        stacked: resultsBox.top >= controls.bottom - 1,
      };
    });
    assert.ok(layout.scroll <= layout.width, `the page scrolls sideways: ${layout.scroll} > ${layout.width}`);
    assert.ok(layout.stacked, 'results sit under the controls');
    await p.page.locator('.whatif').screenshot({ path: join(results, 'webview-whatif-600px.png') });
    await assertClean(p, CLEAN_CSP);
  });

  it('a block-hash trace (Mooncake) replays as recorded: no session controls, a capacity sweep, numbers equal to the CLI', async () => {
    const mooncake = await parseFile(MOONCAKE);
    const p = await whatIf({
      trace: mooncake,
      fileName: 'conversation_trace.head300.jsonl',
      details: () => null,
      whatIf: (id) => buildWhatIfWorkload(mooncake.model, id, MOONCAKE, null),
    });
    await settled(p);
    assert.equal(await p.page.isHidden('#whatif-replicas'), true);
    assert.match(
      (await p.page.textContent('.whatif-sentence')) ?? '',
      /^This trace's 300 requests on one H200 with Qwen3-32B: hit rate \d+% \(ideal \d+%\)/,
    );
    const command = await matchesCli(p);
    assert.equal(command, `agent-trace simulate ${MOONCAKE} --gpu h200 --model qwen3-32b --policy vllm-lru --json`);
    await p.page.waitForSelector('.whatif-cliff-chart[data-axis="capacity"]', { state: 'attached', timeout: 30_000 });
    await assertClean(p, CLEAN_CSP);
  });

  it('another session gets its own workload and results; none of the old ones linger', async () => {
    const p = await whatIf();
    await settled(p, 16);
    assert.equal(await p.page.getAttribute('.whatif-bars-chart', 'data-bar-count'), '48');
    const since = p.posted.length;
    await p.page.click('#session-picker');
    await p.page.locator('#session-picker li.option', { hasText: 'e5821007' }).click();
    const request = (await p.waitForPosted(posted('whatIfWorkload'), since)) as Extract<
      WebviewMessage,
      { type: 'whatIfWorkload' }
    >;
    assert.equal(request.params.sessionId, 'e5821007-9ca0-4a36-afc0-94da583da0ea');
    await p.page.waitForSelector('.whatif-bars-chart[data-bar-count="41"]', { state: 'attached', timeout: 30_000 });
    await settled(p, 16);
    assert.match(await copyCommand(p), / --session e5821007-9ca0-4a36-afc0-94da583da0ea /);
    await assertClean(p, CLEAN_CSP);
  });

  it('a live session that grows keeps its results on screen, marked as behind, then shows the grown session, equal to the CLI on the whole log', async () => {
    // The spotter log (149 calls in its main session) read in three pieces as a running agent writes it, with the
    // incremental parse the trace worker keeps; the page is told of each append as the host tells it.
    const bytes = readFileSync(SPOTTER);
    const cut = (share: number): number => bytes.indexOf(0x0a, Math.floor(bytes.length * share)) + 1;
    const cuts = [cut(0.4), cut(0.7), bytes.length];
    const parse = new TraceParse([basename(SPOTTER)]);
    parse.push(0, bytes.subarray(0, cuts[0]));
    const serviceOf = (): TraceService =>
      new TraceService(parse.snapshot(), {
        fileName: basename(SPOTTER),
        formatChosen: false,
        analysis: {},
        prices: null,
      });
    const p = await suite.open({
      trace: parse.snapshot(),
      fileName: basename(SPOTTER),
      service: serviceOf(),
      whatIf: (id) => buildWhatIfWorkload(parse.snapshot().model, id, SPOTTER, null),
      state: { whatIfOpen: true },
    });
    await settled(p, 16);
    await p.page.waitForSelector('.whatif-cliff-chart[data-sweep-status="done"]', {
      state: 'attached',
      timeout: 60_000,
    });
    const early = Number(await p.page.getAttribute('.whatif-bars-chart', 'data-bar-count'));
    assert.ok(early > 20 && early < 149, `${early} calls in the first 40% of the log`);
    const before = await figures(p);
    const seqBefore = Number(await p.page.getAttribute('.whatif', 'data-scenario-seq'));
    const append = async (from: number, to: number): Promise<void> => {
      parse.push(0, bytes.subarray(from, to));
      const service = serviceOf();
      p.setService(service);
      await p.send({
        type: 'trace/didChange',
        header: service.header(),
        sessions: service.sessionList({ query: '', offset: 0, limit: SESSION_PAGE_SIZE }),
        appended: { newBytes: to - from },
        live: { grewMsAgo: 0 },
      });
    };
    // Two appends close together: the second waits for the first one's runs (and the least time between runs).
    await append(cuts[0]!, cuts[1]!);
    await p.page.waitForSelector('.whatif[data-behind="true"]', { state: 'attached' });
    // The earlier figures and curve stay on screen meanwhile: nothing is blanked while the grown session runs.
    assert.deepEqual(Object.keys(await figures(p)).sort(), Object.keys(before).sort());
    await append(cuts[1]!, cuts[2]!);
    await p.page.waitForSelector('.whatif-bars-chart[data-bar-count="149"]', { state: 'attached', timeout: 60_000 });
    await p.page.waitForSelector('.whatif:not([data-behind])[data-scenario-status="done"]', {
      state: 'attached',
      timeout: 60_000,
    });
    assert.ok(Number(await p.page.getAttribute('.whatif', 'data-scenario-seq')) > seqBefore, 'the scenario ran again');
    assert.notDeepEqual(await figures(p), before, 'the grown session has its own figures');
    // The whole log, simulated by the CLI on the command the panel copies.
    assert.match(await matchesCli(p), new RegExp(` --session ${SPOTTER_MAIN} `));
    await assertClean(p, CLEAN_CSP);
  });

  it('a session the host cannot simulate says why in the panel, and nothing breaks', async () => {
    const p = await whatIf({
      whatIf: () => new Error('This session has no call with input and output token counts: nothing to simulate.'),
    });
    await p.page.waitForSelector('.whatif[data-state="error"]', { state: 'attached' });
    assert.match(
      (await p.page.textContent('.whatif-status')) ?? '',
      /cannot be simulated: This session has no call with input and output token counts/,
    );
    assert.equal(await p.page.getAttribute('.timeline .chart-wrap', 'data-bar-count'), '48');
    await assertClean(p, CLEAN_CSP);
  });
});
