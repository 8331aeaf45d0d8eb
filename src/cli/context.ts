import { basename } from 'node:path';
import { contextAnatomy } from '../core/context/contextAnatomy';
import { contextJson } from '../core/context/contextJson';
import { contextReport, contextReportText } from '../core/context/contextReport';
import { createPriceBook } from '../core/cost/priceBook';
import { FORMATS } from '../core/trace/formats';
import type { FormatId } from '../core/trace/model';
import { parseTrace } from '../core/trace/parseTrace';
import { UsageError } from '../core/text/usageError';
import { newContextCollector } from '../node/contextCollect';
import { readTraceFiles } from '../node/traceFiles';
import { printError, printJson, printText } from './output';

/** `agent-trace context --help`. */
export const CONTEXT_USAGE = `Usage: agent-trace context FILE [--json] [--format ID] [--top N]

What fills each call's input, by source (system prompt and tools, memory, typed text,
each tool result by tool, file and MCP server, assistant text and thinking carried
forward, compaction summaries, sub-agent answers), counted with the model family's
tokenizer and calibrated against the logged input growth; what each part cost over
every call that carried it; the largest contributors and priced suggestions.
--top N lists N contributors (default 15). docs/guide/context.md.
`;

/** Runs `agent-trace context`; returns the exit status. */
export async function runContext(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(CONTEXT_USAGE);
    return 0;
  }
  let file: string | null = null;
  let json = false;
  let format: FormatId | null = null;
  let top = 15;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') json = true;
    else if (a === '--format') {
      const f = argv[++i];
      const known = FORMATS.find((s) => s.id === f);
      if (!known)
        throw new UsageError(
          `unknown --format "${f ?? ''}"; one of: ${FORMATS.map((s) => s.id).join(', ')}`,
          'agent-trace context --help',
        );
      format = known.id;
    } else if (a === '--top') {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n <= 0)
        throw new UsageError(`--top needs a whole number > 0, not "${argv[i] ?? ''}"`, 'agent-trace context --help');
      top = n;
    } else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`, 'agent-trace context --help');
    else if (file === null) file = a;
    else throw new UsageError(`unexpected argument ${a}`, 'agent-trace context --help');
  }
  if (file === null) throw new UsageError('context needs a FILE', 'agent-trace context --help');
  // The tokenizer is loaded here, not at start: building the ranks takes seconds, which no other command should pay.
  const { collector, tokenizer, notes } = await newContextCollector();
  const files = await readTraceFiles(file);
  const parsed = await parseTrace(files, { ...(format ? { format } : {}), recordTap: (r) => collector.record(r) });
  if (parsed.problem) {
    printError(`${file}: ${parsed.problem.message}`);
    return 1;
  }
  const anatomy = contextAnatomy(parsed.model, {
    content: collector.contentFor(parsed.model.format),
    tokenizer,
    prices: createPriceBook(),
    notes: notes(),
  });
  const report = contextReport(anatomy, top);
  if (json) printJson(contextJson(basename(file), anatomy, report));
  else printText(contextReportText(basename(file), anatomy, report));
  return 0;
}
