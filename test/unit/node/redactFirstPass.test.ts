import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Redactor } from '../../../src/core/redact/redactor';
import { redactTraceFiles } from '../../../src/node/redactFiles';
import { SPOTTER } from '../../support/helpers';

// `agent-trace redact` streams a trace in batches of 2,000 lines; default redaction needs the
// ids the whole trace declares before the first batch is redacted (a first pass).

const core = (): Redactor => new Redactor([], 'core');
const tool = (text: string, sessionId: string): string =>
  JSON.stringify({
    type: 'user',
    sessionId,
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: text }] },
  });

describe('redacting a file: the first pass', () => {
  it('leaves an id that only a later batch declares, and takes an undeclared one of the same shape', async () => {
    const declared = '4217662e-98af-48eb-b641-b260c6a6e985';
    const stranger = '832d2129-a846-4e27-99f4-7004b6ad53ef'; // gitleaks' heroku-api-key case
    const other = '00000000-0000-4000-8000-00000000000a'; // the session of lines 1 to 2,000: a pattern (low entropy)
    // Line 1 shows both bare; lines 2..2,000 fill the first batch; line 2,001 (second batch) is a record of session `declared`.
    const lines = [
      tool(`ls /srv/runs/${declared}/ /srv/runs/${stranger}/`, other),
      ...Array.from({ length: 1999 }, (_, i) => tool(`step ${i}`, other)),
      tool('done', declared),
    ];
    const dir = mkdtempSync(join(tmpdir(), 'redact-first-pass-'));
    writeFileSync(join(dir, 'in.jsonl'), lines.join('\n') + '\n');
    await redactTraceFiles(join(dir, 'in.jsonl'), join(dir, 'out.jsonl'), core());
    const first = JSON.parse(readFileSync(join(dir, 'out.jsonl'), 'utf8').split('\n')[0]!) as {
      message: { content: Array<{ content: string }> };
    };
    assert.equal(first.message.content[0]!.content, `ls /srv/runs/${declared}/ /srv/runs/[REDACTED:strict-uuid#1]/`);
  });

  it("keeps a real Claude Code session's UUID everywhere it appears (its file name, its sessionId, paths in tool output)", async () => {
    // The spotter session's id is its file's name and every record's sessionId; tool output
    // names it in `~/.claude/projects/…/<id>.jsonl` paths. Counted in the raw text before and after.
    const id = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';
    const dir = mkdtempSync(join(tmpdir(), 'redact-first-pass-'));
    const out = join(dir, `${id}.jsonl`);
    await redactTraceFiles(SPOTTER, out, core());
    const count = (text: string): number => text.split(id).length - 1;
    const before = count(readFileSync(SPOTTER, 'utf8'));
    assert.ok(before > 100);
    assert.equal(count(readFileSync(out, 'utf8')), before);
  });
});
