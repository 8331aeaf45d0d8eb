import { checkOutputTarget, NotWritableTargetError, writeRegularFile } from '../node/traceFiles';
import { UsageError } from '../core/text/usageError';

/**
 * An output file of the CLI (`-o`, `--emit-workload`): without `text`, checks it before any
 * work; with it, writes it. A folder, a FIFO or a device is refused as a usage error naming
 * the flag (writing to a FIFO waited for a reader forever, to a folder printed a raw EISDIR).
 */
export async function outputFile(path: string, text?: string, flag = '-o', help?: string): Promise<void> {
  try {
    if (text === undefined) await checkOutputTarget(path);
    else await writeRegularFile(path, text);
  } catch (e) {
    if (e instanceof NotWritableTargetError) throw new UsageError(`${flag} ${e.message}`, help);
    throw e;
  }
}
