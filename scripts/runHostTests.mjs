// Runs the extension-host suite (test/host) inside a real VS Code: code-server's Node
// extension host, loaded through the workbench's `payload` URL parameter, the same
// contract @vscode/test-electron uses (see .vscode-test.mjs for machines that can
// download VS Code). Prints the suite's "N passed, N failed" line; exits non-zero on failure.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { runExtensionTests, startCodeServer } from '../test/support/vscodeE2e.mjs';
import { createWorkspace, removeWorkspace, repoRoot } from '../test/support/workspace.mjs';

execFileSync(process.execPath, ['esbuild.mjs', '--tests'], { cwd: repoRoot, stdio: 'inherit' });
const workspace = createWorkspace();
const cs = await startCodeServer();
let code = 1;
try {
  code = await runExtensionTests({
    url: cs.url,
    extensionDevelopmentPath: repoRoot,
    extensionTestsPath: path.join(repoRoot, 'dist/test/index.js'),
    folder: workspace,
  });
} finally {
  await cs.stop();
  removeWorkspace(workspace);
}
console.log(code === 0 ? 'extension-host tests: ok' : `extension-host tests failed (exit ${code})`);
process.exit(code);
