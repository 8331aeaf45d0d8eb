import { UsageError } from '../core/text/usageError';
import { printError } from './output';

/** Runs a command and gives its exit status: 2 for a usage error, 1 for any other failure, said on stderr. */
export async function withExitStatus(run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (err: unknown) {
    if (err instanceof UsageError) {
      printError(`agent-trace: ${err.message}\nRun "${err.helpCommand}" for usage.`);
      return 2;
    }
    const e = err as NodeJS.ErrnoException;
    printError(`agent-trace: ${e.code === 'ENOENT' ? `no such file: ${e.path ?? ''}` : (e.message ?? String(err))}`);
    return 1;
  }
}
