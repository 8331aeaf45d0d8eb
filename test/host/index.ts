import * as path from 'node:path';
import Mocha from 'mocha';

/** Entry point the extension host calls (the @vscode/test-electron contract). */
export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 30_000 });
  const files = ['inspector', 'sessions', 'hostile', 'copilotOtlpSessions', 'firstMinutes'];
  // AGENT_TRACE_HOST_ONLY=sessions,firstMinutes runs those files alone (a developer's loop on a busy machine).
  const only = process.env['AGENT_TRACE_HOST_ONLY']
    ?.split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  for (const f of files) if (!only || only.includes(f)) mocha.addFile(path.resolve(__dirname, `${f}.test.js`));
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const s = runner.stats!;
      // The line CI and scripts/test.mjs read.
      console.log(`${s.passes} passed, ${s.failures} failed, ${s.pending} skipped`);
      if (failures) reject(new Error(`${failures} tests failed.`));
      else resolve();
    });
    // Each failure as it happens: a run stopped by the runner's timeout still says why.
    runner.on('fail', (t, err: Error) => console.log(`FAILED: ${t.fullTitle()}: ${err.stack ?? err.message}`));
  });
}
