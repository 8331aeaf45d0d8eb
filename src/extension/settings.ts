import * as vscode from 'vscode';
import { DEFAULT_ANALYSIS_OPTIONS } from '../core/analysis/sessionAnalysis';
import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import { DEFAULT_INTENT_MAPPING } from '../core/analysis/toolTaxonomy';
import type { IntentMapping } from '../core/analysis/toolTaxonomy';
import { createPriceBook } from '../core/cost/priceBook';
import type { PriceBook } from '../core/cost/costTypes';
import { readUserPrices } from '../core/cost/userPrices';
import { GPU_PRESETS, MODEL_PRESETS } from '../core/sim/params';
import { POLICY_IDS } from '../core/sim/policies';
import { WHATIF_DEFAULTS, WHATIF_MAX_REPLICAS, WHATIF_MAX_TOOL_WAIT_SCALE, WHATIF_MIN_TOOL_WAIT_SCALE } from '../protocol/messages';
import type { WhatIfDefaults } from '../protocol/messages';
import { MIN_LOOP_ATTEMPTS, SETTING_DEFAULTS } from './settingDefaults';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import type { SessionRoots } from '../node/agentSessions';

/** Settings whose change re-runs the analyses (CodeLens, Problems, inspector). */
export const ANALYSIS_SETTINGS = 'agentTrace.analysis';
/** The user's own prices: their change re-prices every view. */
export const PRICE_SETTINGS = 'agentTrace.prices';
/** Settings whose change only redraws the CodeLens. */
export const CODELENS_SETTINGS = 'agentTrace.codeLens';

function stringList(value: unknown, fallback: string[]): string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : fallback;
}

function positive(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

/**
 * The analysis options from `agentTrace.analysis.*`. A malformed value (hand-edited
 * settings.json) falls back to its default instead of breaking the analyses.
 */
export function readAnalysisOptions(): AnalysisOptions {
  const config = vscode.workspace.getConfiguration('agentTrace.analysis');
  const intent = config.get<Partial<IntentMapping>>('toolIntent') ?? {};
  return {
    ...DEFAULT_ANALYSIS_OPTIONS,
    minLoopAttempts: Math.max(MIN_LOOP_ATTEMPTS, Math.round(positive(config.get('minLoopAttempts'), DEFAULT_ANALYSIS_OPTIONS.minLoopAttempts))),
    cacheTtlMs: positive(config.get('cacheTtlMinutes'), DEFAULT_ANALYSIS_OPTIONS.cacheTtlMs / 60_000) * 60_000,
    intent: {
      explore: stringList(intent.explore, DEFAULT_INTENT_MAPPING.explore),
      execute: stringList(intent.execute, DEFAULT_INTENT_MAPPING.execute),
      readOnlyCommands: stringList(intent.readOnlyCommands, DEFAULT_INTENT_MAPPING.readOnlyCommands),
    },
  };
}

/** `agentTrace.prices` as the user wrote it: the trace worker builds its price book from it, as readPriceBook does. */
export function userPriceSetting(): unknown {
  return vscode.workspace.getConfiguration('agentTrace').get<unknown>('prices', SETTING_DEFAULTS.prices);
}

/**
 * The price book from `agentTrace.prices` over the library's list prices. Entries that
 * cannot be read are left out and listed in `problems` (the registry shows them once).
 */
export function readPriceBook(): { book: PriceBook; problems: string[] } {
  const user = readUserPrices(userPriceSetting() ?? []);
  return { book: createPriceBook({ user, userLabel: 'agentTrace.prices' }), problems: user.problems };
}

/**
 * The what-if panel's defaults from `agentTrace.whatIf.*`; a value the panel cannot use
 * (an unknown preset, N outside 1–256) falls back to its built-in default.
 */
export function readWhatIfDefaults(): WhatIfDefaults {
  const config = vscode.workspace.getConfiguration('agentTrace.whatIf');
  const d = WHATIF_DEFAULTS;
  const oneOf = <T extends string>(value: unknown, options: readonly T[], fallback: T): T => options.find((o) => o === value) ?? fallback;
  const within = (value: unknown, low: number, high: number, fallback: number): number => (typeof value === 'number' && Number.isFinite(value) && value >= low && value <= high ? value : fallback);
  return {
    gpu: oneOf(config.get('gpu'), GPU_PRESETS.map((g) => g.id), d.gpu),
    model: oneOf(config.get('model'), MODEL_PRESETS.map((m) => m.id), d.model),
    replicas: Math.round(within(config.get('replicas'), 1, WHATIF_MAX_REPLICAS, d.replicas)),
    staggerS: within(config.get('staggerS'), 0, 86_400, d.staggerS),
    toolWaitScale: within(config.get('toolWaitScale'), WHATIF_MIN_TOOL_WAIT_SCALE, WHATIF_MAX_TOOL_WAIT_SCALE, d.toolWaitScale),
    policy: oneOf(config.get('policy'), POLICY_IDS, d.policy),
  };
}

/** `agentTrace.codeLens.enabled`. */
export function codeLensEnabled(): boolean {
  return vscode.workspace.getConfiguration('agentTrace').get<boolean>('codeLens.enabled', SETTING_DEFAULTS['codeLens.enabled']);
}

/** `agentTrace.maxFileSizeMB` when it is missing or unusable. */
export const DEFAULT_MAX_FILE_MB = SETTING_DEFAULTS.maxFileSizeMB;
/** Values already warned about, so a bad setting is logged once, not on every read. */
const warnedSizes = new Set<string>();

/**
 * Largest trace the extension reads, in bytes (`agentTrace.maxFileSizeMB`). A value that
 * is not a number above 0 ("abc" once turned the limit off; 0 refused every file) is
 * ignored for the default, and said once in the output channel.
 */
export function maxFileBytes(log?: vscode.LogOutputChannel): number {
  const value: unknown = vscode.workspace.getConfiguration('agentTrace').get('maxFileSizeMB', DEFAULT_MAX_FILE_MB);
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value * 2 ** 20;
  const shown = JSON.stringify(value) ?? String(value);
  if (log && !warnedSizes.has(shown)) {
    warnedSizes.add(shown);
    log.warn(`agentTrace.maxFileSizeMB is ${shown.slice(0, 80)}, not a number of MB above 0: using ${DEFAULT_MAX_FILE_MB} MB.`);
  }
  return DEFAULT_MAX_FILE_MB * 2 ** 20;
}

/** Expands a leading `~` to the home folder. */
export function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/') || path.startsWith('~\\')) return join(homedir(), path.slice(2));
  return path;
}

export type { SessionRoots } from '../node/agentSessions';

/** Folder names VS Code gives the global storage of Cline and Roo Code, beside this extension's own. */
const TASK_STORAGE = { cline: 'saoudrizwan.claude-dev', rooCode: 'rooveterinaryinc.roo-cline' } as const;

/**
 * The session roots from the settings (`agentTrace.sessionRoots.*`), `~` expanded. Cline's
 * and Roo Code's tasks are in their extensions' global storage, a sibling of this
 * extension's (`globalStorageDir`), unless a setting names another folder; AIPerf runs are
 * looked for in the given folder, relative to each workspace folder unless absolute.
 */
export function sessionRoots(globalStorageDir: string): SessionRoots {
  const config = vscode.workspace.getConfiguration('agentTrace.sessionRoots');
  const read = (key: keyof typeof SESSION_ROOT_KEYS): string => {
    const value = config.get<string>(key);
    const fallback: string = SETTING_DEFAULTS[SESSION_ROOT_KEYS[key]];
    return expandHome(typeof value === 'string' && value.trim() !== '' ? value.trim() : fallback);
  };
  const tasks = (key: 'cline' | 'rooCode'): string => read(key) || join(dirname(globalStorageDir), TASK_STORAGE[key], 'tasks');
  const aiperf = read('aiperf');
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  return {
    claudeCode: read('claudeCode'),
    codex: read('codex'),
    geminiCli: read('geminiCli'),
    openCode: read('openCode'),
    openHands: read('openHands'),
    cline: tasks('cline'),
    rooCode: tasks('rooCode'),
    aiperf: aiperf === '' ? [] : isAbsolute(aiperf) ? [aiperf] : folders.map((f) => join(f, aiperf)),
  };
}

/** Setting key of each root. */
const SESSION_ROOT_KEYS = {
  claudeCode: 'sessionRoots.claudeCode',
  codex: 'sessionRoots.codex',
  geminiCli: 'sessionRoots.geminiCli',
  openCode: 'sessionRoots.openCode',
  openHands: 'sessionRoots.openHands',
  cline: 'sessionRoots.cline',
  rooCode: 'sessionRoots.rooCode',
  aiperf: 'sessionRoots.aiperf',
} as const;
