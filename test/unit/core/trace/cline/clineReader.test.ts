import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { resultsInRequest } from '../../../../../src/core/trace/cline/clineReader';
import { LOCAL_ONLY, localSample, parseFile } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// Real Cline task histories committed to public repositories without a licence, read from
// $AGENT_TRACE_LOCAL_SAMPLES and never copied (origins in test/fixtures/README.md). Expected
// figures from test/reference/cline_ui.py run on each file.
const FINEYE = localSample('cline/haram-333-fineye-ui_messages.json');
const MCP = localSample('cline/Jeehunter-mcp-vscode-server-ui_messages.json');

describe('Cline task with failed and retried requests (haram-333/fineye)', {
  skip: FINEYE === null && LOCAL_ONLY,
}, async () => {
  const parsed = FINEYE === null ? null : await parseFile(FINEYE);

  it('31 requests, 15 typed prompts, the tokens the reference sums', () => {
    assert.equal(parsed!.model.format, 'cline');
    const s = summarizeSession(parsed!.model.sessions[0]!);
    assert.deepEqual(
      [s.llmCalls, s.userTurns, s.tokens.input, s.tokens.cached, s.tokens.output],
      [31, 15, 777242, 632838, 4086],
    );
  });

  it('43 API errors (6 failed requests, 37 retries) on the timeline; 2 context deletions as compactions', () => {
    const s = parsed!.model.sessions[0]!;
    assert.equal(summarizeSession(s).apiErrors, 43);
    assert.equal(s.compactions.length, 2);
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed!);
  });
});

describe('Cline task saved as one JSON line (Jeehunter/mcp-vscode-server): a minified document', {
  skip: MCP === null && LOCAL_ONLY,
}, async () => {
  const parsed = MCP === null ? null : await parseFile(MCP);

  it('is read whole instead of as one bad record: 61 requests, 4 typed prompts, 55 tools', () => {
    assert.equal(parsed!.problem, null);
    assert.equal(parsed!.model.format, 'cline');
    const s = summarizeSession(parsed!.model.sessions[0]!);
    assert.deepEqual(
      [s.llmCalls, s.userTurns, s.toolCalls, s.tokens.input, s.tokens.cached, s.tokens.output],
      [61, 4, 55, 3322890, 3066304, 23260],
    );
  });

  it('an MCP server answer starting with "Error" fails its call; commands have no exit code, so no outcome', () => {
    const tools = parsed!.model.sessions[0]!.calls.flatMap((c) => c.toolCalls);
    assert.ok(tools.filter((t) => t.name.includes('/')).some((t) => t.isError === true));
    assert.ok(tools.filter((t) => t.name === 'execute_command').every((t) => t.isError === null));
  });
});

// Tool calls the user denied (issue 25). Cline writes the user content of each request into its
// `api_req_started` (`request`): the previous request's tool results, each "[tool for 'arg'] Result:",
// and "The user denied this operation." where the user refused the tool (cline/cline
// src/core/prompts/responses.ts, toolDenied). No public task with a denial was found; these real
// tasks hold none, and the reference (test/reference/tool_denials.py) agrees on every result they hold.
describe('Cline tool results and denials on real tasks (local only)', async () => {
  for (const [name, path, results] of [
    ['haram-333/fineye', FINEYE, 28],
    ['Jeehunter/mcp-vscode-server', MCP, 58],
  ] as const) {
    it(`${name}: the ${results} tool results the requests send back are read, none denied`, {
      skip: path === null && LOCAL_ONLY,
    }, async () => {
      const parsed = await parseFile(path!);
      const doc = JSON.parse(readFileSync(path!, 'utf8')) as Array<{ say?: string; text?: string }>;
      const requests = doc
        .filter((m) => m.say === 'api_req_started')
        .map((m) => (JSON.parse(m.text ?? '{}') as { request?: string }).request ?? '');
      const found = requests.flatMap((r) => resultsInRequest(r));
      assert.equal(found.length, results);
      assert.equal(found.filter((r) => r.denied).length, 0);
      assert.equal(summarizeSession(parsed.model.sessions[0]!).deniedToolCalls, 0);
    });
  }
});
