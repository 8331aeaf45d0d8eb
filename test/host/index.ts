import * as path from 'node:path';
import Mocha from 'mocha';

/** Entry point the extension host calls (the @vscode/test-electron contract). */
export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 30_000 });
  mocha.addFile(path.resolve(__dirname, 'inspector.test.js'));
  mocha.addFile(path.resolve(__dirname, 'sessions.test.js'));
  mocha.addFile(path.resolve(__dirname, 'hostile.test.js'));
  mocha.addFile(path.resolve(__dirname, 'copilotOtlpSessions.test.js'));
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const s = runner.stats!;
      // The line CI and scripts/test.mjs read.
      console.log(`${s.passes} passed, ${s.failures} failed, ${s.pending} skipped`);
      if (failures) reject(new Error(`${failures} tests failed.`));
      else resolve();
    });
  });
}
