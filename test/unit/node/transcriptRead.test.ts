import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TraceService } from '../../../src/core/view/traceService';
import { TRANSCRIPT_CHARS } from '../../../src/core/view/transcript';
import type { CallTranscript } from '../../../src/core/view/transcript';
import { listCompanions } from '../../../src/node/traceFiles';
import type { WorkerFile } from '../../../src/protocol/traceWorkerProtocol';
import { callTranscript, TRANSCRIPT_RANGE_BYTES } from '../../../src/node/transcriptRead';
import { parseFile, parseText, repoRoot, SPOTTER } from '../../support/helpers';

// A call's transcript, its records read again from the trace's own files by byte offset.
// Expected texts come from test/reference/claude_transcript.py, which groups the raw log's
// assistant records by message id on its own and pairs tool results by tool_use id.

/** The trace's files as the worker holds them: the log, then its sub-agent logs. */
async function workerFiles(path: string): Promise<WorkerFile[]> {
  const listing = await listCompanions(path);
  return [{ key: path.split('/').pop()!, path }, ...listing.files.map((c) => ({ key: c.rel, path: c.path }))];
}

interface Reference {
  prompt: string | null;
  text: string[];
  thinking: string[];
  tools: { name: string; input: unknown }[];
  results: { error: boolean; text: string }[];
}

function reference(path: string, call: number): Reference {
  return JSON.parse(
    execFileSync('python3', [join(repoRoot, 'test/reference/claude_transcript.py'), path, String(call)], {
      encoding: 'utf8',
    }),
  ) as Reference;
}

function texts(t: CallTranscript, kind: string): string[] {
  return t.entries.filter((e) => e.kind === kind).map((e) => e.text);
}

describe('call transcripts read again from the trace', async () => {
  const parsed = await parseFile(SPOTTER);
  const service = new TraceService(parsed, {
    fileName: 'spotter.jsonl',
    formatChosen: false,
    analysis: {},
    prices: null,
  });
  const files = await workerFiles(SPOTTER);
  const main = parsed.model.sessions[0]!.id;

  for (const call of [1, 23, 139]) {
    it(`call ${call} of the spotter log: its prompt, text, thinking, tool inputs and results, as the Python reference reads them`, async () => {
      const ref = reference(SPOTTER, call);
      const t = (await callTranscript(service, files, { sessionId: main, callIndex: call - 1, maxChars: 1_000_000 }))!;
      assert.deepEqual(texts(t, 'prompt'), ref.prompt === null ? [] : [ref.prompt]);
      assert.deepEqual(
        texts(t, 'assistant'),
        ref.text.filter((x) => x.trim() !== ''),
      );
      assert.deepEqual(
        texts(t, 'thinking'),
        ref.thinking.filter((x) => x.trim() !== ''),
      );
      const tools = t.entries.filter((e) => e.kind === 'tool-call');
      assert.deepEqual(
        tools.map((e) => ({ name: e.label, input: JSON.parse(e.text) as unknown })),
        ref.tools,
      );
      const results = t.entries.filter((e) => e.kind === 'tool-result');
      assert.deepEqual(
        results.map((e) => ({ error: e.error, text: e.text })),
        ref.results.filter((r) => r.text.trim() !== ''),
      );
      assert.ok(
        results.every((r) => r.label.startsWith('Result of ')),
        'each result names its tool',
      );
      assert.deepEqual(t.notes, []);
    });
  }

  it('clips each text to the size asked, counting characters, and says how long it was', async () => {
    const ref = reference(SPOTTER, 1);
    const t = (await callTranscript(service, files, { sessionId: main, callIndex: 0, maxChars: 100 }))!;
    const first = t.entries.find((e) => e.kind === 'tool-result')!;
    assert.equal([...first.text].length, 100);
    assert.equal(first.chars, [...ref.results[0]!.text].length);
    assert.equal(first.text, [...ref.results[0]!.text].slice(0, 100).join(''));
    assert.equal(TRANSCRIPT_CHARS, 2000);
  });

  it("reads only the trace's own files, by index: a record longer than the read allows is said, not parsed", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'transcript-'));
    const path = join(dir, 'long.jsonl');
    const base = { sessionId: 's1', parentUuid: null, timestamp: '2026-01-01T00:00:00.000Z' };
    const huge = 'x'.repeat(TRANSCRIPT_RANGE_BYTES + 10);
    const lines = [
      { ...base, uuid: 'u0', type: 'user', message: { role: 'user', content: '<b>hi</b> & </script>' } },
      {
        ...base,
        uuid: 'u1',
        type: 'assistant',
        message: {
          id: 'm1',
          model: 'claude-test',
          role: 'assistant',
          content: [{ type: 'text', text: huge }],
          usage: { input_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 5 },
        },
      },
    ];
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const p = await parseText(lines.map((l) => JSON.stringify(l)).join('\n') + '\n', 'long.jsonl');
    const s = new TraceService(p, { fileName: 'long.jsonl', formatChosen: false, analysis: {}, prices: null });
    const t = (await callTranscript(s, [{ key: 'long.jsonl', path }], {
      sessionId: 's1',
      callIndex: 0,
      maxChars: 2000,
    }))!;
    // The prompt, as text (the page draws it with textContent); the call's line too long to read whole.
    assert.deepEqual(texts(t, 'prompt'), ['<b>hi</b> & </script>']);
    assert.equal(texts(t, 'assistant').length, 0);
    assert.match(t.notes.join(' '), /Line 2 is too long to read here/);
    // No file at that index: nothing read, and said.
    const none = (await callTranscript(s, [], { sessionId: 's1', callIndex: 0, maxChars: 2000 }))!;
    assert.deepEqual(none.entries, []);
    assert.match(none.notes.join(' '), /could not be read again/);
    assert.equal(
      await callTranscript(s, [{ key: 'long.jsonl', path }], { sessionId: 's1', callIndex: 5, maxChars: 2000 }),
      null,
    );
  });
});
