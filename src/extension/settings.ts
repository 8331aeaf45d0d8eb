import * as vscode from 'vscode';
import { DEFAULT_ANALYSIS_OPTIONS } from '../core/analysis/sessionAnalysis';
import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import { DEFAULT_INTENT_MAPPING } from '../core/analysis/toolTaxonomy';
import type { IntentMapping } from '../core/analysis/toolTaxonomy';
import { GPU_PRESETS, MODEL_PRESETS } from '../core/sim/params';
import { POLICY_IDS } from '../core/sim/policies';
import { WHATIF_DEFAULTS, WHATIF_MAX_REPLICAS, WHATIF_MAX_TOOL_WAIT_SCALE, WHATIF_MIN_TOOL_WAIT_SCALE } from '../protocol/messages';
import type { WhatIfDefaults } from '../protocol/messages';
import { AGENTS, resolveRoots } from '../node/sessions/agentRegistry';
import type { AgentRoot } from '../node/sessions/agentRegistry';
import { MIN_LOOP_ATTEMPTS, SETTING_DEFAULTS } from './settingDefaults';

/** Settings whose change re-runs the analyses (CodeLens, Problems, inspector). */
export const ANALYSIS_SETTINGS = 'agentTrace.analysis';
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

/** Largest trace the extension reads, in bytes (`agentTrace.maxFileSizeMB`). */
export function maxFileBytes(): number {
  return vscode.workspace.getConfiguration('agentTrace').get<number>('maxFileSizeMB', SETTING_DEFAULTS.maxFileSizeMB) * 2 ** 20;
}

/**
 * Where each agent's local sessions live: `agentTrace.sessionRoots.<agent>` when set
 * to something else than its default, else the folder the agent itself uses (its
 * environment variable, then its default), `~` expanded. The agents are the registry's.
 */
export function sessionRoots(): AgentRoot[] {
  const config = vscode.workspace.getConfiguration('agentTrace.sessionRoots');
  const configured: Record<string, string | undefined> = {};
  for (const agent of AGENTS) {
    const value = config.get<unknown>(agent.settingKey);
    configured[agent.settingKey] = typeof value === 'string' ? value : undefined;
  }
  return resolveRoots(configured);
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
