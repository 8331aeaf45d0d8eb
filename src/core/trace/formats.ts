import { aiperfFormat } from './aiperf/definition';
import { bailianFormat } from './bailian/definition';
import { canonicalFormat } from './canonical/definition';
import { claudeCodeFormat } from './claudeCode/definition';
import { clineFormat } from './cline/definition';
import { codexFormat } from './codex/definition';
import type { CompanionLayout, FormatDefinition } from './formatDefinition';
import { geminiCliFormat } from './geminiCli/definition';
import { openCodeFormat } from './opencode/definition';
import { openHandsFormat } from './openhands/definition';
import { openAiUsageFormat } from './openaiUsage/definition';
import { otlpFormat } from './otlp/definition';
import { mooncakeFormat } from './mooncake/definition';
import { traceLabFormat } from './tracelab/definition';
import { atifFormat } from './atif/definition';
import { miniSweAgentFormat } from './miniSweAgent/definition';
import { sweAgentFormat } from './sweAgent/definition';
import { vllmBenchFormat } from './vllmBench/definition';
import { wekaFormat } from './weka/definition';
import { vscodeCopilotFormat } from './vscodeCopilot/definition';

/**
 * Every format this build reads, in detection order: on a tie in votes the earlier
 * one wins, so more specific formats come before more general ones.
 */
export const FORMATS: readonly FormatDefinition[] = [
  canonicalFormat,
  claudeCodeFormat,
  codexFormat,
  traceLabFormat,
  bailianFormat,
  mooncakeFormat,
  wekaFormat,
  otlpFormat,
  atifFormat,
  sweAgentFormat,
  miniSweAgentFormat,
  openHandsFormat,
  vscodeCopilotFormat,
  geminiCliFormat,
  openCodeFormat,
  clineFormat,
  vllmBenchFormat,
  aiperfFormat,
  openAiUsageFormat,
];

/** The definition of a format id, or undefined for an id this build does not read. */
export function formatById(id: string): FormatDefinition | undefined {
  return FORMATS.find((f) => f.id === id);
}

/**
 * The companion layouts of every format that has one, in detection order: a host lists
 * each one's companions of an opened file before its format is known (parseTrace then
 * reads them only if the file turns out to be of a format with companions).
 */
export const COMPANION_LAYOUTS: readonly CompanionLayout[] = FORMATS.flatMap((f) =>
  f.companions ? [f.companions] : [],
);

/** The folder where a file named `fileName` keeps its companions (and a redacted copy by that name puts them), by the first layout that has one; null when none does. */
export function companionFolderOf(fileName: string): string | null {
  for (const layout of COMPANION_LAYOUTS) {
    const folder = layout.folderOf(fileName);
    if (folder !== null) return folder;
  }
  return null;
}

/** True for a file named like some format's companion (a sub-agent log): not a trace of its own. */
export function isCompanionName(name: string): boolean {
  return COMPANION_LAYOUTS.some((layout) => layout.isCompanionName(name));
}

/** One line per format, for "unknown format" messages and --help. */
export function supportedFormatsText(): string {
  return FORMATS.map((f) => `${f.label} (${f.fileHint})`).join('; ');
}
