import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PROGRESS_STUB, skimProgressLine } from '../../../../../src/core/trace/claudeCode/progressSkim';
import type { ParsedTrace } from '../../../../../src/core/trace/parseTrace';
import { checkRecord } from '../../../../../src/core/trace/recordChecks';
import { DETECTION_RECORDS } from '../../../../../src/core/trace/detectFormat';
import { parseFile, parseText, SPOTTER } from '../../../../support/helpers';

// Hook and bash progress lines are counted without being parsed (progressSkim.ts). The
// oracle throughout is the full path: JSON.parse, checkRecord and the reader. A parse with a
// record tap never skims (a tap wants whole records), so the same file parsed with a tap that
// does nothing is the full path's reading of it, and the two must agree in every figure.

// Real lines of the spotter session (test/fixtures/claude-code, MIT): file lines 3 and 147.
const HOOK =
  '{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/USER/projects/spotter-worktrees/spotter-4te","sessionId":"ae4a77f8-aedd-4bc1-888f-c94edc91af04","version":"2.1.39","gitBranch":"spotter-4te","type":"progress","data":{"type":"hook_progress","hookEvent":"SessionStart","hookName":"SessionStart:startup","command":"/home/USER/.claude/hooks/tmux-waiting.sh clear"},"parentToolUseID":"758443cf-6267-4641-baa0-6855f8fb8247","toolUseID":"758443cf-6267-4641-baa0-6855f8fb8247","timestamp":"2026-02-12T14:11:56.103Z","uuid":"948b4049-6323-44df-9a10-62503cacfd05"}';
const BASH =
  '{"parentUuid":"69d5fba8-d29c-4317-ad2f-7a23461a18fc","isSidechain":false,"userType":"external","cwd":"/home/USER/projects/spotter-worktrees/spotter-4te","sessionId":"ae4a77f8-aedd-4bc1-888f-c94edc91af04","version":"2.1.39","gitBranch":"spotter-4te","slug":"lexical-painting-whisper","type":"progress","data":{"type":"bash_progress","output":"Resolving Hex dependencies...","fullOutput":"Resolving Hex dependencies...","elapsedTimeSeconds":2,"totalLines":1,"timeoutMs":120000},"toolUseID":"bash-progress-0","parentToolUseID":"toolu_01FQM67JJAjd77CCAmahHmeJ","uuid":"9962067b-d892-4bf6-b2a8-3b422292772b","timestamp":"2026-02-12T14:13:35.524Z"}';
// The real agent_progress line 72, its prompt texts shortened and without escapes (the real
// one has "\n" in them, which alone sends it the full way): this is the skim's data.type rule at work.
const AGENT =
  '{"parentUuid":"24b8374b-624a-4785-9c90-f9d37d12f162","isSidechain":false,"userType":"external","cwd":"/home/USER/projects/spotter-worktrees/spotter-4te","sessionId":"ae4a77f8-aedd-4bc1-888f-c94edc91af04","version":"2.1.39","gitBranch":"spotter-4te","slug":"lexical-painting-whisper","type":"progress","data":{"message":{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Search hex.pm for the latest versions"}]},"uuid":"f1eb9ac5-1928-4a73-b605-aaf2f3a24db9","timestamp":"2026-02-12T14:12:32.522Z"},"normalizedMessages":[],"type":"agent_progress","prompt":"Search hex.pm for the latest versions","agentId":"aac57f5"},"toolUseID":"agent_msg_01","parentToolUseID":"toolu_01Task","uuid":"2c1f","timestamp":"2026-02-12T14:12:32.530Z"}';

/** The real hook line with `edit` applied to its text (a string replace, checked to have happened). */
function hookWith(from: string, to: string): string {
  assert.ok(HOOK.includes(from), `the hook line holds ${from}`);
  return HOOK.replace(from, to);
}

// Lines that look like progress records and are not valid JSON: each must reach JSON.parse
// and give its diagnostic. Made by hand from the real hook line.
const INVALID: Array<[string, string]> = [
  ['cut off mid-line', HOOK.slice(0, 400)],
  ['cut off before its last brace', HOOK.slice(0, -1)],
  ['a trailing comma', HOOK.replace(/}$/, ',}')],
  ['a trailing comma in data', hookWith('tmux-waiting.sh clear"}', 'tmux-waiting.sh clear",}')],
  ['a second closing brace', `${HOOK}}`],
  ['text after the object', `${HOOK} x`],
  ['two objects on a line', `${HOOK}${HOOK}`],
  ['an unquoted key', hookWith('"gitBranch":', 'gitBranch:')],
  ['a single-quoted value', hookWith('"external"', "'external'")],
  ['a missing colon', hookWith('"userType":"external"', '"userType" "external"')],
  ['a missing comma', hookWith('"userType":"external",', '"userType":"external" ')],
  ['NaN', hookWith('"isSidechain":false', '"isSidechain":NaN')],
  ['a number with a leading zero', hookWith('"isSidechain":false', '"isSidechain":01')],
  ['a number ending in a point', hookWith('"isSidechain":false', '"isSidechain":1.')],
  ['a bare minus', hookWith('"isSidechain":false', '"isSidechain":-')],
  ['a cut-off literal', hookWith('"isSidechain":false', '"isSidechain":fals')],
  ['a literal run on', hookWith('"isSidechain":false', '"isSidechain":falsey')],
  ['a raw tab inside a string', hookWith('tmux-waiting.sh clear', 'tmux-waiting.sh\tclear')],
  ['a raw newline-like control character inside a string', hookWith('clear', 'cl\u0001ear')],
  ['a bad escape', hookWith('tmux-waiting.sh', 'tmux\\x-waiting.sh')],
  ['a short \\u escape', hookWith('tmux-waiting.sh', 'tmux\\u00-waiting.sh')],
  ['an unclosed array', hookWith('"data":{', '"list":[1,2,"data":{')],
  ['an array closed by a brace', hookWith('"isSidechain":false', '"isSidechain":[1}')],
  ['an array with a trailing comma', hookWith('"isSidechain":false', '"isSidechain":[1,]')],
  ['an empty array slot', hookWith('"isSidechain":false', '"isSidechain":[1,,2]')],
  ['a non-breaking space before it', `\u00A0${HOOK}`],
];

// Valid JSON that only looks like a progress record the reader just counts, or is one the
// checks have something to say about: each must take the full path.
const FULL_PATH: Array<[string, string]> = [
  ['"progress" only in a string of a user record', hookWith('"type":"progress"', '"type":"user","note":"progress"')],
  [
    'the text "type":"progress" quoted inside a string of an assistant record',
    '{"type":"assistant","sessionId":"s","uuid":"u","message":{"id":"m","model":"claude-opus-4-6","content":[{"type":"text","text":"{\\"type\\":\\"progress\\"}"}],"usage":{"input_tokens":1,"output_tokens":2}}}',
  ],
  [
    'type progress only inside data',
    hookWith('"type":"progress"', '"type":"user"').replace('"hook_progress"', '"progress"'),
  ],
  ['type given twice, user last', hookWith('"uuid":"948b', '"type":"user","uuid":"948b')],
  ['type given twice, progress both times', hookWith('"uuid":"948b', '"type":"progress","uuid":"948b')],
  ['type written with an escape', hookWith('"type":"progress"', '"type":"progres\\u0073"')],
  ['a key written with an escape', hookWith('"type":"progress"', '"typ\\u0065":"progress"')],
  ['type in another case', hookWith('"type":"progress"', '"type":"Progress","x":"progress"')],
  ['the agent_progress line', AGENT],
  [
    'agent_progress after another data.type',
    hookWith('"type":"hook_progress"', '"type":"hook_progress","type":"agent_progress"'),
  ],
  [
    'agent_progress as a second data object',
    hookWith('"parentToolUseID"', '"data":{"type":"agent_progress","agentId":"a1"},"parentToolUseID"'),
  ],
  ['data.type not a string', hookWith('"type":"hook_progress"', '"type":7')],
  ['a bad token count', hookWith('"hookEvent"', '"input_tokens":-5,"hookEvent"')],
  ['a bad count in capitals', hookWith('"hookEvent"', '"Output_Tokens":"0x10","hookEvent"')],
  ['a good token count (checked all the same)', hookWith('"hookEvent"', '"input_tokens":5,"hookEvent"')],
  ['a list of lengths', hookWith('"hookEvent"', '"input_lens":[1,-2],"hookEvent"')],
  ['a tokens object', hookWith('"hookEvent"', '"Tokens":{"x":-1},"hookEvent"')],
  [
    'an OTLP attribute',
    hookWith('"hookEvent"', '"attr":{"key":"gen_ai.usage.input_tokens","value":{"intValue":"-1"}},"hookEvent"'),
  ],
  ['a metric object', hookWith('"hookEvent"', '"input_sequence_length":{"value":-1},"hookEvent"')],
  ['deeper than the skim follows', hookWith('"hookEvent"', `"deep":${'['.repeat(40)}${']'.repeat(40)},"hookEvent"`)],
  ['deeper than a record may nest', hookWith('"hookEvent"', `"deep":${'['.repeat(600)}${']'.repeat(600)},"hookEvent"`)],
  ['an escape in a value', hookWith('tmux-waiting.sh clear', 'tmux-waiting.sh\\nclear')],
  ['a JSON array', `[${HOOK}]`],
  // The line reader drops a byte-order mark, so the full path reads this line: the skim leaves it to it.
  ['a byte-order mark before it', `\uFEFF${HOOK}`],
  // Tabs and carriage returns are JSON whitespace, but the skim refuses every control character.
  ['a tab between tokens', HOOK.replace('":', '":\t')],
];

/** What a parse says, for comparing two: the model, the skipped counts and every diagnostic. */
function figures(parsed: ParsedTrace): string {
  return JSON.stringify({ model: parsed.model, problem: parsed.problem, detection: parsed.detection });
}

/**
 * The spotter session's first 60 lines: the format is chosen on the first DETECTION_RECORDS (50)
 * records, read the full way, so the lines under test come after these.
 */
const HEAD = readFileSync(SPOTTER, 'utf8').split('\n').slice(0, 60);
assert.equal(DETECTION_RECORDS, 50);

/** The full path's reading: a tap turns the skim off. */
const fullPath = { recordTap: () => {} };

describe('skimProgressLine: progress lines counted without being parsed', () => {
  it('skims the real hook and bash progress lines, and gives the reader only the type', () => {
    assert.equal(skimProgressLine(HOOK), PROGRESS_STUB);
    assert.equal(skimProgressLine(BASH), PROGRESS_STUB);
    assert.deepEqual({ ...PROGRESS_STUB }, { type: 'progress' });
    // Spaces between tokens change nothing.
    assert.equal(skimProgressLine(` ${HOOK.replaceAll('":', '" : ').replaceAll(',"', ', "')} `), PROGRESS_STUB);
  });

  for (const [name, line] of INVALID) {
    it(`does not skim a line that is not JSON: ${name}`, () => {
      assert.throws(() => JSON.parse(line), SyntaxError, 'the case is invalid JSON');
      assert.equal(skimProgressLine(line), null);
    });
  }

  for (const [name, line] of FULL_PATH) {
    it(`sends the full way: ${name}`, () => {
      assert.equal(skimProgressLine(line), null);
    });
  }

  it('skims exactly the hook and bash progress lines of the spotter session, each of which the full path only counts', () => {
    const lines = readFileSync(SPOTTER, 'utf8').split('\n');
    let skimmed = 0;
    for (const line of lines) {
      if (skimProgressLine(line) === null) continue;
      skimmed += 1;
      const value = JSON.parse(line) as Record<string, unknown>;
      assert.equal(value['type'], 'progress');
      assert.notEqual((value['data'] as Record<string, unknown>)['type'], 'agent_progress');
      const check = checkRecord(value, 512);
      assert.equal(check.tooDeep, false);
      assert.equal(check.badCounts.length, 0);
    }
    // grep -c '"type":"hook_progress"' → 956, grep -c '"type":"bash_progress"' → 147 (none has an escape).
    assert.equal(skimmed, 956 + 147);
  });

  it('gives the spotter session (main log and sub-agents) the same figures as the full path', async () => {
    const skim = await parseFile(SPOTTER);
    const full = await parseFile(SPOTTER, fullPath);
    assert.equal(skim.model.sessions.length, 3);
    assert.equal(skim.model.skippedRecords['progress'], 1128 + 12); // grep -c '"type":"progress"', main + agent-aac57f5
    assert.equal(figures(skim), figures(full));
  });

  it('reports every invalid progress line where the full path does, with its file and line', async () => {
    const lines = [...HEAD, HOOK, BASH, ...INVALID.map(([, l]) => l), ...FULL_PATH.map(([, l]) => l), HOOK];
    const text = lines.join('\n');
    const skim = await parseText(text, 'hostile-progress.jsonl');
    const full = await parseText(text, 'hostile-progress.jsonl', fullPath);
    assert.equal(figures(skim), figures(full));
    const notJson = skim.model.diagnostics.filter((d) => d.message.startsWith('Line is not valid JSON'));
    // Each INVALID line, at its 0-based line: they follow the 60 + 2 real lines.
    assert.deepEqual(
      notJson.map((d) => [d.file, d.line]),
      INVALID.map((_, i) => [0, 62 + i]),
    );
    // A bad count and the 600-deep line are reported on their own lines.
    const at = (name: string) => 62 + INVALID.length + FULL_PATH.findIndex(([n]) => n === name);
    const lineOf = (part: string) => skim.model.diagnostics.filter((d) => d.message.includes(part)).map((d) => d.line);
    assert.deepEqual(lineOf('data.input_tokens is not'), [at('a bad token count')]);
    assert.deepEqual(lineOf('Line nests deeper than'), [at('deeper than a record may nest')]);
  });

  it('keeps the sub-agent link an agent_progress line gives, as the full path does', async () => {
    // A Task call of the main session, then the sub-agent's own call (2.1.x: isSidechain with its
    // agentId): only the agent_progress line ties the sub-agent to toolu_01Task.
    const task =
      '{"type":"assistant","sessionId":"ae4a77f8-aedd-4bc1-888f-c94edc91af04","uuid":"a1","message":{"id":"msg_main","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"toolu_01Task","name":"Task","input":{"prompt":"Search hex.pm"}}],"usage":{"input_tokens":3,"output_tokens":9}}}';
    const sub =
      '{"type":"assistant","sessionId":"ae4a77f8-aedd-4bc1-888f-c94edc91af04","isSidechain":true,"agentId":"aac57f5","uuid":"a2","message":{"id":"msg_sub","model":"claude-haiku-4-5","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":5,"output_tokens":1}}}';
    const text = [...HEAD, HOOK, task, AGENT, BASH, sub].join('\n');
    const skim = await parseText(text);
    const subagent = skim.model.sessions.find((s) => s.id === 'aac57f5');
    assert.equal(subagent?.parentToolCallId, 'toolu_01Task');
    assert.equal(figures(skim), figures(await parseText(text, 'inline.jsonl', fullPath)));
  });
});
