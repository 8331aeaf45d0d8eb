import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';

// The extension host and the CLI are two front ends of one core; src/protocol, every
// message between two runtimes, is built on the core alone. `npm run lint` runs
// dependency-cruiser with the repository's own rules; these tests run the same rules on
// a small tree that breaks them (and one that keeps them), so a rule that stopped biting
// (a typo in a path, a rule dropped in a merge) fails here.

const repo = path.resolve(import.meta.dirname, '../../..');
const depcruise = path.join(repo, 'node_modules/.bin/depcruise');

/** Runs the repository's dependency rules over a tree of files written into a temporary folder. */
function cruise(files: Record<string, string>): { status: number | null; output: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'layer-rules-'));
  try {
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    fs.copyFileSync(path.join(repo, '.dependency-cruiser.json'), path.join(dir, '.dependency-cruiser.json'));
    fs.copyFileSync(path.join(repo, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
    const r = spawnSync(depcruise, ['--config', '.dependency-cruiser.json', '--output-type', 'err', 'src'], {
      cwd: dir,
      encoding: 'utf8',
    });
    return { status: r.status, output: `${r.stdout}${r.stderr}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('layer rules (dependency-cruiser, as npm run lint runs them)', () => {
  it('an extension module importing a CLI module is refused, naming the rule', () => {
    const r = cruise({
      'src/cli/words.ts': 'export const words = 1;\n',
      'src/extension/panel.ts': "import { words } from '../cli/words';\nexport const n = words;\n",
    });
    assert.notEqual(r.status, 0, r.output);
    assert.match(r.output, /extension-and-cli-apart/);
    assert.match(r.output, /src\/extension\/panel\.ts → src\/cli\/words\.ts/);
  });

  it('a CLI module importing an extension module is refused, naming the rule', () => {
    const r = cruise({
      'src/extension/host.ts': 'export const host = 1;\n',
      'src/cli/main.ts': "import { host } from '../extension/host';\nexport const n = host;\n",
    });
    assert.notEqual(r.status, 0, r.output);
    assert.match(r.output, /cli-and-extension-apart/);
  });

  it('both importing the core is allowed', () => {
    const r = cruise({
      'src/core/grammar.ts': 'export const grammar = 1;\n',
      'src/cli/main.ts': "import { grammar } from '../core/grammar';\nexport const n = grammar;\n",
      'src/extension/panel.ts': "import { grammar } from '../core/grammar';\nexport const n = grammar;\n",
    });
    assert.equal(r.status, 0, r.output);
    assert.match(r.output, /no dependency violations found/);
  });

  it('a protocol module importing Node-only code (or a Node built-in) is refused, naming the rule', () => {
    const r = cruise({
      'src/node/files.ts': 'export const files = 1;\n',
      'src/protocol/traceWire.ts':
        "import { files } from '../node/files';\nimport { isMainThread } from 'node:worker_threads';\nexport const n = files + Number(isMainThread);\n",
    });
    assert.notEqual(r.status, 0, r.output);
    assert.match(r.output, /protocol-imports-only-core/);
    assert.match(r.output, /src\/protocol\/traceWire\.ts → src\/node\/files\.ts/);
    assert.match(r.output, /src\/protocol\/traceWire\.ts → (node:)?worker_threads/);
  });

  it('the core importing the protocol is refused, naming the rule', () => {
    const r = cruise({
      'src/protocol/wire.ts': 'export const wire = 1;\n',
      'src/core/view/queries.ts': "import { wire } from '../../protocol/wire';\nexport const n = wire;\n",
    });
    assert.notEqual(r.status, 0, r.output);
    assert.match(r.output, /core-below-protocol/);
  });

  it('the protocol importing the core, and the host, the Node code and the webview importing the protocol, are allowed', () => {
    const r = cruise({
      'src/core/view/queries.ts': 'export const queries = 1;\n',
      'src/protocol/wire.ts': "import { queries } from '../core/view/queries';\nexport const wire = queries;\n",
      'src/node/worker.ts': "import { wire } from '../protocol/wire';\nexport const n = wire;\n",
      'src/extension/host.ts': "import { wire } from '../protocol/wire';\nexport const n = wire;\n",
      'src/webview/page.ts': "import { wire } from '../protocol/wire';\nexport const n = wire;\n",
    });
    assert.equal(r.status, 0, r.output);
    assert.match(r.output, /no dependency violations found/);
  });
});
