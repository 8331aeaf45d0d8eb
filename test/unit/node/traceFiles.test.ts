import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { claudeSubagentFolder } from '../../../src/core/trace/claudeCode/companions';
import { claudeCodeFormat } from '../../../src/core/trace/claudeCode/definition';
import type { CompanionLayout } from '../../../src/core/trace/formatDefinition';
import { COMPANION_LAYOUTS, FORMATS } from '../../../src/core/trace/formats';
import { parseTrace } from '../../../src/core/trace/parseTrace';
import {
  listCompanions,
  listSafeCompanions,
  readJsonFile,
  readTraceFiles,
  regularFileChunks,
} from '../../../src/node/traceFiles';
import { SPOTTER } from '../../support/helpers';
import { deepText } from '../../support/hostileCorpus';

describe('companion files and regular files', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-trace-files-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists only regular files directly inside the folder, and links that stay inside the trace folder; says why the rest are left out', async () => {
    const root = join(dir, 'a');
    const sub = join(root, 's/subagents');
    mkdirSync(join(sub, 'agent-dir.jsonl'), { recursive: true });
    writeFileSync(join(sub, 'agent-1.jsonl'), '{}\n');
    writeFileSync(join(dir, 'outside.jsonl'), 'SECRET\n');
    symlinkSync(join(dir, 'outside.jsonl'), join(sub, 'agent-out.jsonl'));
    symlinkSync('agent-1.jsonl', join(sub, 'agent-in.jsonl'));
    symlinkSync(join(root, 'missing'), join(sub, 'agent-broken.jsonl'));
    execFileSync('mkfifo', [join(sub, 'agent-fifo.jsonl')]);
    writeFileSync(join(sub, 'notes.txt'), 'not a log');
    writeFileSync(join(root, 's.jsonl'), '{}\n');
    const listing = await listCompanions(join(root, 's.jsonl'));
    assert.deepEqual(
      listing.files.map((f) => f.rel),
      ['s/subagents/agent-1.jsonl', 's/subagents/agent-in.jsonl'],
    );
    assert.deepEqual(listing.refused.sort(), [
      's/subagents/agent-broken.jsonl is a broken link; not read.',
      's/subagents/agent-dir.jsonl is a folder, not a file; not read.',
      's/subagents/agent-fifo.jsonl is a named pipe (FIFO), not a file; not read.',
      "s/subagents/agent-out.jsonl is a link to a file outside the trace's folder; not read.",
    ]);
  });

  it('the 2.0.x sibling logs and 2.1.x nested folders follow the same rules: regular files of this session, no FIFO, no link out, no linked folder', async () => {
    const root = join(dir, 'siblings');
    mkdirSync(join(root, 's/subagents/workflows/run1'), { recursive: true });
    mkdirSync(join(dir, 'elsewhere2'));
    writeFileSync(join(dir, 'elsewhere2/agent-far.jsonl'), '{"sessionId":"s"}\n');
    writeFileSync(join(root, 's.jsonl'), '{}\n');
    writeFileSync(join(root, 'agent-mine.jsonl'), '{"type":"user","sessionId":"s"}\n');
    writeFileSync(join(root, 'agent-theirs.jsonl'), '{"type":"user","sessionId":"other"}\n');
    execFileSync('mkfifo', [join(root, 'agent-fifo.jsonl')]);
    symlinkSync(join(dir, 'elsewhere2/agent-far.jsonl'), join(root, 'agent-out.jsonl'));
    writeFileSync(join(root, 's/subagents/workflows/run1/agent-w.jsonl'), '{}\n');
    symlinkSync(join(dir, 'elsewhere2'), join(root, 's/subagents/linked'));
    const listing = await listCompanions(join(root, 's.jsonl'));
    assert.deepEqual(
      listing.files.map((f) => f.rel),
      ['s/subagents/workflows/run1/agent-w.jsonl', 'agent-mine.jsonl'],
    );
    assert.deepEqual(listing.refused.sort(), [
      'agent-fifo.jsonl is a named pipe (FIFO), not a file; not read.',
      "agent-out.jsonl is a link to a file outside the trace's folder; not read.",
    ]);
  });

  it('companions come from the format definitions: Claude Code is the one format with a layout, and a made-up layout is listed by the same rules with no other code', async () => {
    // The registry: only Claude Code's definition says where companions are, so only its files have any.
    assert.deepEqual(
      FORMATS.filter((f) => f.companions).map((f) => f.id),
      ['claude-code'],
    );
    assert.deepEqual(COMPANION_LAYOUTS, [claudeCodeFormat.companions]);
    // A format whose runs keep their parts in `<name>.parts/` (and one folder below), none beside.
    const parts: CompanionLayout = {
      folderOf: (name) => {
        const stem = /^(.+)\.run\.jsonl$/.exec(name)?.[1];
        return stem === undefined ? null : `${stem}.parts`;
      },
      folderDepth: 1,
      isCompanionName: (name) => /\.part\.jsonl$/.test(name),
      nameGlob: '*.part.jsonl',
    };
    const root = join(dir, 'made-up');
    mkdirSync(join(root, 'r.parts/deeper/deepest'), { recursive: true });
    writeFileSync(join(root, 'r.run.jsonl'), '{}\n');
    writeFileSync(join(root, 'r.parts/b.part.jsonl'), '{}\n');
    writeFileSync(join(root, 'r.parts/a.part.jsonl'), '{}\n');
    writeFileSync(join(root, 'r.parts/notes.jsonl'), '{}\n');
    writeFileSync(join(root, 'r.parts/deeper/c.part.jsonl'), '{}\n');
    writeFileSync(join(root, 'r.parts/deeper/deepest/too-deep.part.jsonl'), '{}\n');
    writeFileSync(join(root, 'beside.part.jsonl'), '{}\n');
    execFileSync('mkfifo', [join(root, 'r.parts/fifo.part.jsonl')]);
    const listing = await listCompanions(join(root, 'r.run.jsonl'), [parts]);
    assert.deepEqual(
      listing.files.map((f) => f.rel),
      ['r.parts/a.part.jsonl', 'r.parts/b.part.jsonl', 'r.parts/deeper/c.part.jsonl'],
    );
    assert.deepEqual(listing.refused, ['r.parts/fifo.part.jsonl is a named pipe (FIFO), not a file; not read.']);
    // The registry's layouts know nothing of these files, and a file the layout does not name has none.
    assert.deepEqual((await listCompanions(join(root, 'r.run.jsonl'))).files, []);
    assert.deepEqual((await listCompanions(join(root, 'other.jsonl'), [parts])).files, []);
  });

  it('refuses a companion folder that is itself a link out of the trace folder', async () => {
    const root = join(dir, 'b');
    mkdirSync(join(root, 's'), { recursive: true });
    mkdirSync(join(dir, 'elsewhere'));
    writeFileSync(join(dir, 'elsewhere/agent-x.jsonl'), '{}\n');
    symlinkSync(join(dir, 'elsewhere'), join(root, 's/subagents'));
    const listing = await listSafeCompanions(root, 's/subagents', () => true);
    assert.deepEqual(listing, {
      files: [],
      refused: ["s/subagents leads outside the trace's folder; its files are not read."],
      folders: [],
    });
  });

  it('a name made only of dots names no companion folder (it would be one above)', () => {
    assert.equal(claudeSubagentFolder('...jsonl'), null);
    assert.equal(claudeSubagentFolder('..jsonl'), null);
    assert.equal(claudeSubagentFolder('a.jsonl'), 'a/subagents');
  });

  it('refuses to read a FIFO or a folder, at once (a plain open of a FIFO waits forever)', async () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    await assert.rejects(async () => {
      for await (const _ of regularFileChunks(fifo)) void _;
    }, /pipe is a named pipe \(FIFO\), not a regular file; not read\./);
    await assert.rejects(async () => {
      for await (const _ of regularFileChunks(dir)) void _;
    }, /is a folder, not a regular file/);
  });

  it('one reused buffer (and blocking reads): the chunks are views of one buffer, and read in turn they are the file', async () => {
    const path = join(dir, 'chunks.txt');
    // 10,000 bytes, no two 1,024-byte chunks alike: chunk k starts with byte k.
    const bytes = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 7 + Math.floor(i / 1024)) % 251);
    writeFileSync(path, bytes);
    for (const mode of [{ reuseBuffer: true }, { blocking: true }]) {
      const copies: Uint8Array[] = [];
      const buffers = new Set<ArrayBufferLike>();
      for await (const chunk of regularFileChunks(path, { ...mode, chunkBytes: 1024 })) {
        copies.push(new Uint8Array(chunk)); // a copy (slice() of a Buffer is a view)
        buffers.add(chunk.buffer);
      }
      assert.equal(buffers.size, 1, JSON.stringify(mode));
      assert.deepEqual(
        copies.map((c) => c.length),
        [...Array<number>(9).fill(1024), 784],
      );
      assert.deepEqual(Buffer.concat(copies), Buffer.from(bytes));
      // From a byte offset, as an index resumes a file.
      const tail: Uint8Array[] = [];
      for await (const chunk of regularFileChunks(path, { ...mode, chunkBytes: 4096, start: 9_000 }))
        tail.push(new Uint8Array(chunk));
      assert.deepEqual(Buffer.concat(tail), Buffer.from(bytes.subarray(9_000)));
    }
  });

  it('parseTrace over chunks of one reused buffer reads the model it reads from a new buffer per chunk', async () => {
    // The Claude Code sample in 4 KiB chunks: most of its lines are cut by a chunk's end, and the
    // next chunk overwrites the buffer the cut part came from.
    const read = (reuseBuffer: boolean) =>
      parseTrace([{ key: 's.jsonl', bytes: regularFileChunks(SPOTTER, { reuseBuffer, chunkBytes: 4096 }) }]);
    const fresh = await read(false);
    assert.ok(fresh.model.sessions[0]!.calls.length > 100);
    assert.deepEqual(await read(true), fresh);
  });

  it('blocking reads (the export threads): the same refusals, and the same parse', async () => {
    const fifo = join(dir, 'pipe-blocking');
    execFileSync('mkfifo', [fifo]);
    await assert.rejects(async () => {
      for await (const _ of regularFileChunks(fifo, { blocking: true })) void _;
    }, /pipe-blocking is a named pipe \(FIFO\), not a regular file; not read\./);
    await assert.rejects(async () => {
      for await (const _ of regularFileChunks(dir, { blocking: true })) void _;
    }, /is a folder, not a regular file/);
    // A link where the listing saw a plain file (noFollow), and a file swapped since the listing (expect).
    const target = join(dir, 'target.txt');
    writeFileSync(target, 'x\n');
    const link = join(dir, 'link.txt');
    symlinkSync(target, link);
    await assert.rejects(async () => {
      for await (const _ of regularFileChunks(link, { blocking: true, noFollow: true })) void _;
    }, /link\.txt became a symbolic link after it was listed; not read\./);
    const other = join(dir, 'other.txt');
    writeFileSync(other, 'y\n');
    await assert.rejects(async () => {
      for await (const _ of regularFileChunks(other, { blocking: true, expect: statSync(target) })) void _;
    }, /other\.txt changed between listing and reading; not read\./);

    const read = (blocking: boolean) =>
      parseTrace([{ key: 's.jsonl', bytes: regularFileChunks(SPOTTER, { blocking, chunkBytes: 4096 }) }]);
    const fresh = await read(false);
    assert.ok(fresh.model.sessions[0]!.calls.length > 100);
    assert.deepEqual(await read(true), fresh);
    // readTraceFiles hands the option to the trace's companions too.
    const files = await readTraceFiles(SPOTTER, { blocking: true });
    assert.deepEqual(await parseTrace(files), await parseTrace(await readTraceFiles(SPOTTER)));
  });

  it('reads a JSON file streamed, and says where it is broken or too deep', async () => {
    const ok = join(dir, 'ok.json');
    writeFileSync(ok, '{\n "a": [1, 2]\n}\n');
    assert.deepEqual(await readJsonFile(ok), { value: { a: [1, 2] } });
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{\n "a": [1, 2\n');
    assert.match(
      ((await readJsonFile(broken)) as { error: string }).error,
      /^not valid JSON at line 3: the JSON ends before its value is complete/,
    );
    const deep = join(dir, 'deep.json');
    writeFileSync(deep, `{"a":\n${deepText(5000)}}`);
    assert.equal(
      ((await readJsonFile(deep)) as { error: string }).error,
      'nests deeper than 512 levels at line 2; a workload never does',
    );
  });
});
