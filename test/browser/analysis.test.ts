import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { ParsedTrace } from '../../src/core/trace/parseTrace';
import type { WebviewMessage } from '../../src/protocol/messages';
import { EDIT_LOOP, parseFile, parseText, SPOTTER } from '../support/helpers';
import { assertClean, barPoint, inspectorSuite, plotArea, results } from '../support/inspectorHarness';
import type { InspectorPage, OpenOptions } from '../support/inspectorHarness';

// The session analyses in the inspector: fingerprint with published ranges, retry-loop
// bands and table, cache-miss marks. Expected values do not come from the code under
// test: loop lines and call indexes are read from the raw JSONL below (a tool_result's
// line → the assistant message that made the tool_use), the idle gaps are those of the
// files' timestamps (24 min 25 s, 6 min 03 s, 11 min 40 s, 14 min 19 s), and the
// synthetic session's loops are known by construction.

const SPOTTER_ID = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';

/** What a Claude Code log says, read naively: main-thread calls by message id, the call of each tool_use, results by 1-based line. */
function readClaudeLog(path: string): {
  calls: number;
  callOfResultLine(line: number): number;
  resultText(line: number): string;
  toolCounts: Record<string, { calls: number; failed: number }>;
} {
  const ids: string[] = [];
  const callOfTool = new Map<string, number>();
  const nameOfTool = new Map<string, string>();
  const resultLines = new Map<number, { toolId: string; text: string }>();
  const toolCounts: Record<string, { calls: number; failed: number }> = {};
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (!text.trim()) return;
      const r = JSON.parse(text) as {
        type?: string;
        isSidechain?: boolean;
        message?: { id?: string; content?: unknown };
      };
      if (r.isSidechain) return;
      const content = Array.isArray(r.message?.content) ? (r.message!.content as Array<Record<string, unknown>>) : [];
      if (r.type === 'assistant') {
        const id = r.message!.id!;
        if (!ids.includes(id)) ids.push(id);
        for (const c of content) {
          if (c['type'] !== 'tool_use' || nameOfTool.has(c['id'] as string)) continue;
          callOfTool.set(c['id'] as string, ids.indexOf(id));
          nameOfTool.set(c['id'] as string, c['name'] as string);
          (toolCounts[c['name'] as string] ??= { calls: 0, failed: 0 }).calls += 1;
        }
      } else if (r.type === 'user') {
        for (const c of content) {
          if (c['type'] !== 'tool_result') continue;
          const body = c['content'];
          resultLines.set(i + 1, {
            toolId: c['tool_use_id'] as string,
            text: typeof body === 'string' ? body : JSON.stringify(body),
          });
          const name = nameOfTool.get(c['tool_use_id'] as string);
          if (name && c['is_error'] === true) toolCounts[name]!.failed += 1;
        }
      }
    });
  return {
    calls: ids.length,
    callOfResultLine: (line) => callOfTool.get(resultLines.get(line)!.toolId)!,
    resultText: (line) => resultLines.get(line)!.text,
    toolCounts,
  };
}

const HOSTILE = '<img src=x onerror="window.__pwned=1">';

/**
 * A Claude Code session of 15 calls (14 with a tool, then an answer) with three retry loops, by construction:
 * `npm test` fails in calls 1–3 (gave up), Edit on /src/a.ts fails in calls 4–7 and
 * succeeds in call 8 (escaped), `pytest tests/test_a.py` fails in calls 9–13 (gave up;
 * the user prompts call 9 after a 20-minute pause, so it is an idle-gap miss). Indexes are 0-based.
 */
function threeLoopSession(): string {
  const lines: string[] = [];
  let t = Date.UTC(2026, 0, 1, 9, 0, 0);
  let n = 0;
  const base = {
    sessionId: 'synthetic-loops',
    cwd: '/src',
    version: '2.1.0',
    isSidechain: false,
    userType: 'external',
  };
  const stamp = (): string => new Date(t).toISOString();
  lines.push(
    JSON.stringify({
      ...base,
      type: 'user',
      uuid: `u${n++}`,
      parentUuid: null,
      timestamp: stamp(),
      message: { role: 'user', content: 'Make the tests pass.' },
    }),
  );
  const plan: Array<{ name: string; input: Record<string, string>; error: string | null }> = [
    { name: 'Read', input: { file_path: '/src/a.ts' }, error: null },
    ...[1, 2, 3].map(() => ({ name: 'Bash', input: { command: 'npm test' }, error: `${HOSTILE} 3 tests failed` })),
    ...[4, 5, 6, 7].map(() => ({
      name: 'Edit',
      input: { file_path: '/src/a.ts', old_string: 'x', new_string: 'y' },
      error: 'String to replace not found in file.',
    })),
    { name: 'Edit', input: { file_path: '/src/a.ts', old_string: 'a', new_string: 'b' }, error: null },
    ...[9, 10, 11, 12, 13].map(() => ({
      name: 'Bash',
      input: { command: 'pytest tests/test_a.py' },
      error: 'FAILED tests/test_a.py::test_one',
    })),
  ];
  plan.forEach((step, i) => {
    if (i === 9) {
      // The user comes back after 20 minutes with a new prompt: longer than the 5-minute cache TTL.
      t += 20 * 60_000;
      lines.push(
        JSON.stringify({
          ...base,
          type: 'user',
          uuid: `u${n++}`,
          parentUuid: `u${n - 2}`,
          timestamp: stamp(),
          message: { role: 'user', content: 'Now the Python tests.' },
        }),
      );
    }
    t += 5_000;
    // Each prompt extends the previous one; call 0 and call 9 (after the pause) find nothing cached.
    const context = 2_000 + 400 * i;
    const cached = i === 0 || i === 9 ? 0 : context - 400;
    const usage = {
      input_tokens: context - cached,
      cache_read_input_tokens: cached,
      cache_creation_input_tokens: 0,
      output_tokens: 120,
    };
    const toolId = `toolu_${i}`;
    lines.push(
      JSON.stringify({
        ...base,
        type: 'assistant',
        uuid: `u${n++}`,
        parentUuid: `u${n - 2}`,
        timestamp: stamp(),
        message: {
          id: `msg_${i}`,
          model: 'claude-test',
          role: 'assistant',
          type: 'message',
          content: [{ type: 'tool_use', id: toolId, name: step.name, input: step.input }],
          usage,
        },
      }),
    );
    t += 2_000;
    lines.push(
      JSON.stringify({
        ...base,
        type: 'user',
        uuid: `u${n++}`,
        parentUuid: `u${n - 2}`,
        timestamp: stamp(),
        message: {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: toolId, content: step.error ?? 'ok', is_error: step.error !== null },
          ],
        },
      }),
    );
  });
  t += 5_000;
  lines.push(
    JSON.stringify({
      ...base,
      type: 'assistant',
      uuid: `u${n++}`,
      parentUuid: `u${n - 2}`,
      timestamp: stamp(),
      message: {
        id: 'msg_last',
        model: 'claude-test',
        role: 'assistant',
        type: 'message',
        content: [{ type: 'text', text: 'Done.' }],
        usage: { input_tokens: 400, cache_read_input_tokens: 7_600, cache_creation_input_tokens: 0, output_tokens: 30 },
      },
    }),
  );
  return lines.join('\n') + '\n';
}

function revealLine(m: WebviewMessage): m is Extract<WebviewMessage, { type: 'source/revealLine' }> {
  return m.type === 'source/revealLine';
}

describe('session analyses in the inspector (Chromium)', () => {
  const suite = inspectorSuite(['dist/webview.js']);
  let editParsed: ParsedTrace;
  let spotterParsed: ParsedTrace;
  let loopsParsed: ParsedTrace;
  const editLog = readClaudeLog(EDIT_LOOP);
  const spotterLog = readClaudeLog(SPOTTER);

  before(async () => {
    editParsed = await parseFile(EDIT_LOOP);
    spotterParsed = await parseFile(SPOTTER);
    loopsParsed = await parseText(threeLoopSession(), 'three-loops.jsonl');
  });

  function inspector(options: Partial<OpenOptions> = {}): Promise<InspectorPage> {
    return suite.open({ trace: editParsed, fileName: 'edit-retry-loop.jsonl', ...options });
  }

  /** Hovers bar `index` and returns the tooltip's text as the chart painted it. */
  async function tooltipOf(p: InspectorPage, index: number): Promise<string> {
    await p.page.locator('.chart-wrap').scrollIntoViewIfNeeded();
    const at = await barPoint(p, index, { down: 0.85 });
    await p.page.mouse.move(at.x, at.y);
    await p.page.waitForSelector(`.chart-wrap[data-tooltip-call="${index}"]`);
    return (await p.page.getAttribute('.chart-wrap', 'data-tooltip'))!.replace(/\s+/g, ' ');
  }

  it('edit-retry-loop.jsonl: one Edit/Write loop on sync_raw_logs.py, 4 attempts over 7 calls, gave up, banded on the timeline', async () => {
    // Read from the file: results on lines 61, 65, 70, 74 answer calls 15, 17, 19 and 21 (1-based) of 41.
    assert.equal(editLog.calls, 41);
    const attemptCalls = [61, 65, 70, 74].map((l) => editLog.callOfResultLine(l));
    assert.deepEqual(attemptCalls, [14, 16, 18, 20]);
    const p = await inspector();
    // 4 of 41 calls, by hand: 9.76 %.
    assert.equal(
      await p.page.textContent('[data-loop-sentence]'),
      "9.8% of this session's calls were spent in 1 retry loop",
    );
    const rows = p.page.locator('.loops-table tr.loop-row');
    assert.equal(await rows.count(), 1);
    const row = rows.first();
    assert.equal((await row.locator('th.col-tool').textContent())?.trim(), 'Edit/Write');
    assert.equal(
      await row.locator('.col-target code').textContent(),
      'C:/Users/[USER]/Documents/M-Claude/scripts/sync_raw_logs.py',
    );
    assert.equal(await row.locator('[data-col="attempts"]').textContent(), '4');
    assert.equal(
      await row.locator('[data-col="callsSpanned"]').textContent(),
      String(attemptCalls[3]! - attemptCalls[0]! + 1),
    );
    assert.equal((await row.locator('[data-col="outcome"]').textContent())?.trim(), 'gave up');
    // The first error, as text, exactly as the result on line 61 holds it.
    assert.equal(await p.page.textContent('.loops [data-first-error]'), editLog.resultText(61));
    assert.match(
      (await p.page.textContent('.loop-where')) ?? '',
      /^calls 15–21 · lines 61–74 of edit-retry-loop\.jsonl$/,
    );

    // One band, over bars 14…20: from the left edge of bar 14 to the right edge of bar 20.
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-loop-bands'), '1');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-loop-band-spans'), '14-20');
    const a = await plotArea(p);
    const step = (a.right - a.left) / a.count;
    const [x0, x1] = (await p.page.getAttribute('.chart-wrap', 'data-loop-band-pixels'))!.split('-').map(Number) as [
      number,
      number,
    ];
    assert.ok(Math.abs(x0 - (a.left + 14 * step)) <= 2, `band starts at bar 14 (${x0} vs ${a.left + 14 * step})`);
    assert.ok(Math.abs(x1 - (a.left + 21 * step)) <= 2, `band ends after bar 20 (${x1} vs ${a.left + 21 * step})`);
    assert.equal(await p.page.isVisible('.legend [data-legend="loop"]'), true);
    // A call in the loop says so in its tooltip.
    assert.match(await tooltipOf(p, 16), /Retry loop: Edit\/Write attempt 2 of 4 on sync_raw_logs\.py \(gave up\)/);
    await assertClean(p);
  });

  it('clicking a loop row selects its first attempt and reveals line 61 (0-based 60); Enter on the row button does the same', async () => {
    const p = await inspector();
    let since = p.posted.length;
    // Click the row itself (the target cell), not its button.
    await p.page.click('.loops-table tr.loop-row .col-target');
    let m = await p.waitForPosted(revealLine, since);
    assert.deepEqual(m, { type: 'source/revealLine', file: 0, line: 60 });
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), String(editLog.callOfResultLine(61)));
    assert.equal(await p.page.getAttribute('.loops-table tr.loop-row', 'aria-current'), 'true');
    assert.deepEqual(
      p.posted.slice(since).filter((x) => x.type === 'source/reveal'),
      [],
      'the row reveals the loop, not the call',
    );
    await p.page.waitForSelector('.details .note-loop');
    assert.match((await p.page.textContent('.details .note-loop')) ?? '', /^Retry loop: Edit\/Write attempt 1 of 4/);

    await p.send({ type: 'call/select', ref: { sessionId: editParsed.model.sessions[0]!.id, callIndex: 0 } });
    await p.page.waitForSelector('.chart-wrap[data-selected-call="0"]');
    since = p.posted.length;
    await p.page.focus('.loops-table [data-action="open-loop"]');
    await p.page.keyboard.press('Enter');
    m = await p.waitForPosted(revealLine, since);
    assert.deepEqual(m, { type: 'source/revealLine', file: 0, line: 60 });
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), '14');
    assert.equal(
      await p.page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset['action']),
      'open-loop',
      'focus stays on the row button',
    );
    await assertClean(p);
  });

  it('edit-retry-loop.jsonl: misses are the first call and four idle gaps, marked under calls 0, 4, 22, 27, 40', async () => {
    const p = await inspector({ select: { sessionId: editParsed.model.sessions[0]!.id, callIndex: 4 } });
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-miss-calls'), '0,4,22,27,40');
    assert.deepEqual(await p.page.locator('.miss-summary [data-miss-cause]').allTextContents(), [
      '1 first call',
      '4 idle gap > TTL',
    ]);
    assert.equal(await p.page.isVisible('.legend [data-legend="miss"]'), true);
    // The gaps by the file's timestamps.
    const gaps: Array<[number, string]> = [
      [4, '24 min 25 s'],
      [22, '6 min 03 s'],
      [27, '11 min 40 s'],
      [40, '14 min 19 s'],
    ];
    for (const [index, gap] of gaps) {
      const text = await tooltipOf(p, index);
      assert.match(
        text,
        new RegExp(
          `Cache miss: idle gap — idle ${gap} since the previous call > cache TTL 5 min 00 s; [\\d.]+k tokens re-prefilled`,
        ),
        `call ${index}: ${text}`,
      );
    }
    assert.match(await tooltipOf(p, 0), /Cache miss: first call — first call of the session/);
    assert.doesNotMatch(await tooltipOf(p, 1), /Cache miss/);
    // The selected call's details say it too.
    await p.page.waitForSelector('.details .note-miss');
    assert.equal(await p.page.getAttribute('.details .note-miss', 'data-miss'), 'idle-gap');
    assert.match(
      (await p.page.textContent('.details .note-miss')) ?? '',
      /^Cache miss: idle gap — idle 24 min 25 s since the previous call/,
    );
    // Each cause selects its calls in turn, wrapping.
    await p.page.click('.miss-summary [data-miss-cause="idle-gap"]');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), '22');
    await p.page.click('.miss-summary [data-miss-cause="idle-gap"]');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), '27');
    await p.page.click('.miss-summary [data-miss-cause="first-call"]');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), '0');
    assert.match((await p.page.textContent('[aria-live="polite"]')) ?? '', /Cache miss: first call/);
    await assertClean(p);
  });

  it('spotter main session: one Bash `git add && git commit` loop of 7 attempts, gave up; misses at the model switch and after the compaction', async () => {
    const lines = [1209, 1343, 1366, 1389, 1419, 1447, 1463];
    const attemptCalls = lines.map((l) => spotterLog.callOfResultLine(l));
    assert.equal(spotterLog.calls, 149);
    const p = await inspector({ trace: spotterParsed, fileName: `${SPOTTER_ID}.jsonl` });
    const row = p.page.locator('.loops-table tr.loop-row');
    assert.equal(await row.count(), 1);
    assert.equal((await row.locator('th.col-tool').textContent())?.trim(), 'Bash');
    assert.equal(await row.locator('.col-target code').textContent(), 'git add && git commit');
    assert.equal(await row.locator('[data-col="attempts"]').textContent(), '7');
    assert.equal(
      await row.locator('[data-col="callsSpanned"]').textContent(),
      String(attemptCalls[6]! - attemptCalls[0]! + 1),
    );
    assert.equal((await row.locator('[data-col="outcome"]').textContent())?.trim(), 'gave up');
    // 7 of 149 calls: 4.70 %.
    assert.equal(
      await p.page.textContent('[data-loop-sentence]'),
      "4.7% of this session's calls were spent in 1 retry loop",
    );
    assert.equal(
      await p.page.getAttribute('.chart-wrap', 'data-loop-band-spans'),
      `${attemptCalls[0]}-${attemptCalls[6]}`,
    );
    const since = p.posted.length;
    await row.locator('[data-action="open-loop"]').click();
    assert.deepEqual(await p.waitForPosted(revealLine, since), { type: 'source/revealLine', file: 0, line: 1208 });
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), String(attemptCalls[0]));

    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-miss-calls'), '5,138');
    assert.deepEqual(await p.page.locator('.miss-summary [data-miss-cause]').allTextContents(), [
      '1 compaction',
      '1 prefix change (model switch)',
    ]);
    assert.match(
      await tooltipOf(p, 5),
      /Cache miss: prefix change — model switched from claude-opus-4-6 to claude-haiku-4-5-20251001/,
    );
    assert.match(await tooltipOf(p, 138), /Cache miss: compaction — compaction \(manual\)/);
    await assertClean(p);
  });

  it('spotter: figures with published ranges say where they fall, in words, with the source on hover', async () => {
    const p = await inspector({ trace: spotterParsed, fileName: `${SPOTTER_ID}.jsonl` });
    const verdict = async (name: string): Promise<[string | null, string]> => [
      await p.page.getAttribute(`[data-range-for="${name}"]`, 'data-range'),
      ((await p.page.textContent(`[data-range-for="${name}"]`)) ?? '').trim(),
    ];
    // Independent reference (test/reference/claude_code_totals.py): hit 98.4 %, input/output 371×, mean append/output 196.94×.
    assert.equal(await p.figure('cacheHitRate'), '98.4%');
    assert.deepEqual(await verdict('cacheHitRate'), ['within', '✓ within 84.6–99.5%']);
    assert.equal(await p.figure('rawInputToOutput'), '371×');
    assert.deepEqual(await verdict('rawInputToOutput'), ['within', '✓ within 53.9–559.8×']);
    assert.deepEqual(await verdict('appendToOutputMean'), ['above', '↑ above 1.5–7.3×']);
    assert.match(
      (await p.page.getAttribute('[data-range-for="cacheHitRate"]', 'title')) ?? '',
      /Agentic AI Workload Characteristics \(arXiv 2605\.26297\)/,
    );

    // Decode is what prefill leaves; Claude Code logs have no server timing, so the split is estimated.
    const prefill = parseFloat(await p.figure('prefillShare'));
    const decode = parseFloat(await p.figure('decodeShare'));
    assert.ok(Math.abs(prefill + decode - 100) < 0.11, `${prefill} + ${decode} = 100`);
    assert.deepEqual((await verdict('decodeShare'))[0], decode < 91 ? 'below' : decode > 98.6 ? 'above' : 'within');
    assert.equal(await p.page.getAttribute('[data-tag="prefillBasis"]', 'data-tag-value'), 'estimated');
    assert.match(
      (await p.page.getAttribute('[data-tag="prefillBasis"]', 'title')) ?? '',
      /^Estimated with a cost model/,
    );
    await assertClean(p);
  });

  it('spotter: the fingerprint opens from its summary (keyboard too), remembers that, and tables tools, quarters and the compaction', async () => {
    const p = await inspector({ trace: spotterParsed, fileName: `${SPOTTER_ID}.jsonl` });
    // Closed at first so the timeline stays in view; the digest names the decode verdict.
    assert.equal(await p.page.getAttribute('.fingerprint', 'open'), null);
    assert.match(
      (await p.page.textContent('.fp-digest')) ?? '',
      /^decode [\d.]+% of LLM time \((below|within|above) 91–98\.6%\), estimated · /,
    );
    await p.page.focus('.fingerprint > summary');
    await p.page.keyboard.press('Enter');
    await p.page.waitForSelector('.fingerprint[open] .tools-table', { state: 'visible' });
    // The state is saved from the <details> toggle event, which fires after the open: wait for it before asserting.
    const stateDeadline = Date.now() + 5000;
    while (((await p.state()) as { fingerprintOpen?: boolean }).fingerprintOpen !== true && Date.now() < stateDeadline)
      await p.page.waitForTimeout(50);
    assert.equal(((await p.state()) as { fingerprintOpen?: boolean }).fingerprintOpen, true);

    // Max context and the compaction's "before" size from the file (usage sums; compact_boundary preTokens).
    assert.equal(await p.figure('contextMax'), '141,787');
    assert.match(await p.figure('growthPerCall'), /^\+[\d,]+$/);
    for (const [tool, counts] of Object.entries(spotterLog.toolCounts)) {
      const cells = await p.page.locator(`.tools-table tr[data-tool="${tool}"] td`).allTextContents();
      assert.deepEqual(cells.slice(0, 2), [String(counts.calls), String(counts.failed)], tool);
    }
    assert.deepEqual(await p.page.locator('.quarters-table thead .quarter-calls').allTextContents(), [
      'calls 1–38',
      'calls 39–75',
      'calls 76–112',
      'calls 113–149',
    ]);
    const compaction = await p.page.locator('.compactions-table tbody tr').allTextContents();
    assert.equal(compaction.length, 1);
    assert.match(compaction[0]!, /^before call 139142,431/);
    for (const name of ['toolTime', 'llmTime', 'outputPerCallMean', 'outputPerCallMedian', 'appendToOutputP90'])
      assert.notEqual(await p.figure(name), '', name);

    // Reopening the page keeps it open.
    const again = await inspector({ trace: spotterParsed, fileName: `${SPOTTER_ID}.jsonl`, state: await p.state() });
    assert.notEqual(await again.page.getAttribute('.fingerprint', 'open'), null);
    await assertClean(p);
    await assertClean(again);
  });

  it('three loops: the table sorts by clicking its headers (mouse and keyboard), with aria-sort, and remembers the order', async () => {
    const session = loopsParsed.model.sessions[0]!;
    assert.equal(session.calls.length, 15);
    const p = await inspector({ trace: loopsParsed, fileName: 'three-loops.jsonl', details: () => null });
    const order = (): Promise<string[]> => p.page.locator('.loops-table tr.loop-row .col-tool').allTextContents();
    const targets = (): Promise<string[]> =>
      p.page.locator('.loops-table tr.loop-row .col-target code').allTextContents();
    // Session order: npm test (calls 1–3), Edit a.ts (4–7, escaped at 8), pytest (9–13).
    assert.deepEqual(await targets(), ['npm test', '/src/a.ts', 'pytest tests/test_a.py']);
    assert.deepEqual(await p.page.locator('.loops-table tr.loop-row [data-col="attempts"]').allTextContents(), [
      '3',
      '4',
      '5',
    ]);
    assert.deepEqual(
      (await p.page.locator('.loops-table tr.loop-row [data-col="outcome"]').allTextContents()).map((t) => t.trim()),
      ['gave up', 'escaped at call 9', 'gave up'],
    );
    // 12 of 15 calls made attempts.
    assert.equal(
      await p.page.textContent('[data-loop-sentence]'),
      "80% of this session's calls were spent in 3 retry loops",
    );
    assert.equal(await p.page.getAttribute('th.col-attempts', 'aria-sort'), 'none');

    await p.page.click('button[data-sort="attempts"]');
    assert.equal(await p.page.getAttribute('th.col-attempts', 'aria-sort'), 'descending');
    assert.deepEqual(await targets(), ['pytest tests/test_a.py', '/src/a.ts', 'npm test']);
    await p.page.click('button[data-sort="attempts"]');
    assert.equal(await p.page.getAttribute('th.col-attempts', 'aria-sort'), 'ascending');
    assert.deepEqual(await targets(), ['npm test', '/src/a.ts', 'pytest tests/test_a.py']);

    // Keyboard: the header is a button; focus stays on it after the table redraws.
    await p.page.focus('button[data-sort="outcome"]');
    await p.page.keyboard.press('Enter');
    assert.equal(await p.page.getAttribute('th.col-outcome', 'aria-sort'), 'descending');
    assert.equal(await p.page.getAttribute('th.col-attempts', 'aria-sort'), 'none');
    assert.deepEqual(await targets(), ['npm test', 'pytest tests/test_a.py', '/src/a.ts']);
    assert.equal(
      await p.page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset['sort']),
      'outcome',
    );
    await p.page.keyboard.press(' ');
    assert.equal(await p.page.getAttribute('th.col-outcome', 'aria-sort'), 'ascending');
    assert.deepEqual(await targets(), ['/src/a.ts', 'npm test', 'pytest tests/test_a.py']);
    await p.page.click('button[data-sort="tool"]');
    assert.deepEqual(await order(), ['Bash', 'Bash', 'Edit']);
    assert.deepEqual(((await p.state()) as { loopSort?: unknown }).loopSort, { key: 'tool', direction: 'ascending' });

    // Bands: two hatched (gave up) and one plain (escaped); the miss after the pause.
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-loop-band-spans'), '1-3 4-7 9-13');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-miss-calls'), '0,9');
    assert.match(await tooltipOf(p, 9), /Cache miss: idle gap — idle 20 min \d\d s since the previous call/);

    // Error text from the trace is text, never markup.
    assert.equal(await p.page.locator('.loops img, .loops script').count(), 0);
    assert.match(
      (await p.page.locator('.loops [data-first-error]').allTextContents()).join('\n'),
      /<img src=x onerror=/,
    );
    assert.equal(await p.page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    await p.page.screenshot({ path: join(results, 'analysis-three-loops.png'), fullPage: true });
    await assertClean(p);
  });

  it('a session without loops or misses says so briefly and shows neither legend entry', async () => {
    const sub = spotterParsed.model.sessions.find((s) => s.id === 'aac57f5')!;
    const p = await inspector({ trace: spotterParsed, fileName: `${SPOTTER_ID}.jsonl`, state: { sessionId: sub.id } });
    assert.equal(await p.page.textContent('[data-loop-sentence]'), 'No retry loops in this session.');
    assert.equal(await p.page.locator('.loops-table').count(), 0);
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-loop-bands'), '0');
    assert.equal(await p.page.isVisible('.legend [data-legend="loop"]'), false);
    await assertClean(p);
  });

  it('screenshots: Dark Modern (fingerprint open, loop selected), Light Modern, High Contrast and a 600px panel', async () => {
    const state = { fingerprintOpen: true };
    const select = { sessionId: editParsed.model.sessions[0]!.id, callIndex: 4 };
    for (const [theme, file] of [
      ['dark', 'analysis-dark.png'],
      ['light', 'analysis-light.png'],
      ['high-contrast', 'analysis-high-contrast.png'],
    ] as const) {
      const p = await inspector({ theme, state, select });
      await p.page.waitForSelector('.details .tools');
      await tooltipOf(p, 4);
      await p.page.screenshot({ path: join(results, file), fullPage: true });
      await assertClean(p);
    }
    const narrow = await inspector({ viewport: { width: 600, height: 900 }, state, select });
    await narrow.page.waitForSelector('.details .tools');
    const overflow = await narrow.page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `no horizontal scrolling at 600px (overflow ${overflow}px)`);
    await narrow.page.screenshot({ path: join(results, 'analysis-narrow.png'), fullPage: true });
    await assertClean(narrow);
    const spot = await inspector({
      trace: spotterParsed,
      fileName: `${SPOTTER_ID}.jsonl`,
      state,
      select: { sessionId: SPOTTER_ID, callIndex: 104 },
    });
    await spot.page.waitForSelector('.details .tools');
    await spot.page.screenshot({ path: join(results, 'analysis-spotter.png'), fullPage: true });
    await assertClean(spot);
  });
});
