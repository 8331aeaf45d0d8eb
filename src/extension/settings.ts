import * as vscode from 'vscode';
import type { Budgets } from '../core/sessions/budgetWatch';
import type { PlanFamily, WindowOptions } from '../core/cost/planWindows';
import { limitSetting } from '../core/sessions/sessionWindows';
import { DEFAULT_ANALYSIS_OPTIONS } from '../core/analysis/sessionAnalysis';
import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import { DEFAULT_INTENT_MAPPING } from '../core/analysis/toolTaxonomy';
import type { IntentMapping } from '../core/analysis/toolTaxonomy';
import { createPriceBook } from '../core/cost/priceBook';
import type { PriceBook } from '../core/cost/costTypes';
import { readUserPrices } from '../core/cost/userPrices';
import { GPU_PRESETS, MODEL_PRESETS } from '../core/sim/params';
import { POLICY_IDS } from '../core/sim/policies';
import { GROUPINGS } from '../core/sessions/sessionQuery';
import type { SessionGrouping } from '../core/sessions/sessionQuery';
import {
  WHATIF_DEFAULTS,
  WHATIF_MAX_REPLICAS,
  WHATIF_MAX_TOOL_WAIT_SCALE,
  WHATIF_MIN_TOOL_WAIT_SCALE,
} from '../protocol/messages';
import type { WhatIfDefaults } from '../protocol/messages';
import { AGENTS, agentRoots, resolveRoots } from '../node/sessions/agentRegistry';
import type { AgentRoot } from '../node/sessions/agentRegistry';
import { MIN_LOOP_ATTEMPTS, SETTING_DEFAULTS } from './settingDefaults';
import type { SessionRoots } from '../node/agentSessions';
import type { RedactionMode } from '../core/redact/redactor';

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
    minLoopAttempts: Math.max(
      MIN_LOOP_ATTEMPTS,
      Math.round(positive(config.get('minLoopAttempts'), DEFAULT_ANALYSIS_OPTIONS.minLoopAttempts)),
    ),
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
  const oneOf = <T extends string>(value: unknown, options: readonly T[], fallback: T): T =>
    options.find((o) => o === value) ?? fallback;
  const within = (value: unknown, low: number, high: number, fallback: number): number =>
    typeof value === 'number' && Number.isFinite(value) && value >= low && value <= high ? value : fallback;
  return {
    gpu: oneOf(
      config.get('gpu'),
      GPU_PRESETS.map((g) => g.id),
      d.gpu,
    ),
    model: oneOf(
      config.get('model'),
      MODEL_PRESETS.map((m) => m.id),
      d.model,
    ),
    replicas: Math.round(within(config.get('replicas'), 1, WHATIF_MAX_REPLICAS, d.replicas)),
    staggerS: within(config.get('staggerS'), 0, 86_400, d.staggerS),
    toolWaitScale: within(
      config.get('toolWaitScale'),
      WHATIF_MIN_TOOL_WAIT_SCALE,
      WHATIF_MAX_TOOL_WAIT_SCALE,
      d.toolWaitScale,
    ),
    policy: oneOf(config.get('policy'), POLICY_IDS, d.policy),
  };
}

/** `agentTrace.sessions.groupBy`: by project then day (the default), or flat by recency. */
export function sessionsGrouping(): SessionGrouping {
  const value = vscode.workspace.getConfiguration('agentTrace').get<unknown>('sessions.groupBy');
  return GROUPINGS.find((g) => g === value) ?? SETTING_DEFAULTS['sessions.groupBy'];
}

/** `agentTrace.redaction`: how much the exports redact (`default`, or `strict`: the bare hex, UUIDs, numbers and short tokens the trace explains as ids too). */
export function redactionMode(): RedactionMode {
  const value = vscode.workspace.getConfiguration('agentTrace').get<unknown>('redaction');
  return value === 'strict' ? 'strict' : SETTING_DEFAULTS.redaction;
}

/** `agentTrace.problems.retryLoops`: list retry loops in the Problems view (read errors are listed whatever it says). */
export function problemsShowRetryLoops(): boolean {
  const value = vscode.workspace.getConfiguration('agentTrace').get<unknown>('problems.retryLoops');
  return typeof value === 'boolean' ? value : SETTING_DEFAULTS['problems.retryLoops'];
}

/** `agentTrace.codeLens.enabled`. */
export function codeLensEnabled(): boolean {
  return vscode.workspace
    .getConfiguration('agentTrace')
    .get<boolean>('codeLens.enabled', SETTING_DEFAULTS['codeLens.enabled']);
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
    log.warn(
      `agentTrace.maxFileSizeMB is ${shown.slice(0, 80)}, not a number of MB above 0: using ${DEFAULT_MAX_FILE_MB} MB.`,
    );
  }
  return DEFAULT_MAX_FILE_MB * 2 ** 20;
}

export type { SessionRoots } from '../node/agentSessions';

/**
 * Where each agent keeps its sessions (`agentTrace.sessionRoots.*`), `~` expanded, from
 * the one registry every discovery uses (src/node/sessions/agentRegistry.ts): a setting
 * changed from its default wins, else the folder the agent itself uses (its environment
 * variable, then its default). Cline's and Roo Code's tasks are in their extensions'
 * global storage, a sibling of this extension's (`globalStorageDir`); AIPerf runs are
 * looked for relative to each workspace folder unless the setting is absolute.
 */
export function sessionRoots(globalStorageDir: string): SessionRoots {
  const config = vscode.workspace.getConfiguration('agentTrace.sessionRoots');
  const configured: Record<string, string | undefined> = {};
  for (const agent of AGENTS) {
    const value = config.get<unknown>(agent.settingKey);
    configured[agent.settingKey] = typeof value === 'string' ? value : undefined;
  }
  const folders = (vscode.workspace.workspaceFolders ?? [])
    .filter((f) => f.uri.scheme === 'file')
    .map((f) => f.uri.fsPath);
  return resolveRoots(configured, { globalStorageDir, workspaceFolders: folders });
}

/** The same folders, one per agent (AIPerf: one per workspace folder), for the session index. */
export function sessionAgentRoots(globalStorageDir: string): AgentRoot[] {
  return agentRoots(sessionRoots(globalStorageDir));
}

/** The status bar item's settings (`agentTrace.statusBar.*`); unusable values fall back to the defaults. */
export interface StatusBarSettings {
  enabled: boolean;
  /** Agent ids whose sessions it follows; empty: every agent. */
  agents: string[];
  /** A session counts as active this long after its last call. */
  activeWithinMinutes: number;
}

export function statusBarSettings(): StatusBarSettings {
  const config = vscode.workspace.getConfiguration('agentTrace.statusBar');
  const enabled = config.get<unknown>('enabled');
  return {
    enabled: typeof enabled === 'boolean' ? enabled : SETTING_DEFAULTS['statusBar.enabled'],
    agents: stringList(config.get('agents'), [...SETTING_DEFAULTS['statusBar.agents']]),
    activeWithinMinutes: positive(config.get('activeWithinMinutes'), SETTING_DEFAULTS['statusBar.activeWithinMinutes']),
  };
}

/**
 * The plan windows' options of one plan from `agentTrace.windows.<plan>.*`: its limits and
 * weekly reset. A malformed value counts as unset and is named in `problems` (the view says so).
 */
export function windowSettings(family: PlanFamily): { options: WindowOptions; problems: string[] } {
  const config = vscode.workspace.getConfiguration(`agentTrace.windows.${family}`);
  const text = (key: string): string => {
    const v = config.get<unknown>(key);
    return typeof v === 'string' ? v : '';
  };
  const problems: string[] = [];
  const limits: WindowOptions['limits'] = {};
  for (const [kind, key] of [
    ['5h', 'limit5h'],
    ['weekly', 'limitWeekly'],
  ] as const) {
    const { limit, problem } = limitSetting(text(key));
    if (problem) problems.push(`agentTrace.windows.${family}.${key}: ${problem}`);
    else if (limit) limits[kind] = limit;
  }
  const anchorMs: WindowOptions['anchorMs'] = {};
  const reset = text('weeklyResetAt').trim();
  if (reset !== '') {
    const t = Date.parse(reset);
    if (Number.isFinite(t)) anchorMs.weekly = t;
    else
      problems.push(
        `agentTrace.windows.${family}.weeklyResetAt: "${reset}" is not a date and time (2026-12-07T08:00Z)`,
      );
  }
  return { options: { align: 'call', anchorMs, limits }, problems };
}

/** The budgets of `agentTrace.budget.*`; unset, zero, negative or malformed values mean no budget. */
export function budgetSettings(): Budgets {
  const config = vscode.workspace.getConfiguration('agentTrace.budget');
  const usd = (value: unknown): number | null =>
    typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : null;
  return { perSessionUsd: usd(config.get('perSessionUsd')), perDayUsd: usd(config.get('perDayUsd')) };
}
