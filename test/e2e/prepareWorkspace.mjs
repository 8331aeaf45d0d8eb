// Makes .vscode-test/workspace for `npx vscode-test` (see .vscode-test.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { createWorkspace, repoRoot } from './workspace.mjs';

const target = path.join(repoRoot, '.vscode-test/workspace');
fs.rmSync(target, { recursive: true, force: true });
fs.mkdirSync(path.dirname(target), { recursive: true });
const made = createWorkspace();
fs.cpSync(made, target, { recursive: true }); // not rename: /tmp may be another filesystem
fs.rmSync(made, { recursive: true, force: true });
console.log(target);
