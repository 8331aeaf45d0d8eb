/**
 * The defaults the extension falls back to when a setting is unset or unusable, for the
 * settings that have no constant in core. package.json's `default`s must equal these
 * (and the core constants the other settings use): test/unit/extension/contributions.test.ts
 * checks it. Pure: no vscode, so that test runs in plain Node.
 */
export const SETTING_DEFAULTS = {
  'timeline.showCached': true,
  maxFileSizeMB: 2048,
  'codeLens.enabled': true,
  'sessionRoots.claudeCode': '~/.claude/projects',
  'sessionRoots.codex': '~/.codex/sessions',
  'sessionRoots.geminiCli': '~/.gemini/tmp',
  'sessionRoots.openCode': '~/.local/share/opencode',
  'sessionRoots.openHands': '~/.openhands',
  // Empty: beside this extension's own storage, where VS Code keeps every extension's (see settings.ts).
  'sessionRoots.cline': '',
  'sessionRoots.rooCode': '',
  'sessionRoots.aiperf': 'artifacts',
  // Empty: the user folder of the VS Code this extension runs in.
  'sessionRoots.vscodeCopilot': '',
  'sessionRoots.openTelemetry': '~/.copilot/otel',
  /** No prices of one's own: the list prices apply. */
  prices: [],
  'statusBar.enabled': true,
  'statusBar.agents': [] as string[],
  'statusBar.activeWithinMinutes': 60,
  /** No budgets: nothing is watched until the user sets one (docs/guide/windows.md). */
  'budget.perSessionUsd': null as number | null,
  'budget.perDayUsd': null as number | null,
  /** No plan limits: the plans publish none (docs/guide/windows.md); the windows show what they used. */
  'windows.claude.limit5h': '',
  'windows.claude.limitWeekly': '',
  'windows.claude.weeklyResetAt': '',
  'windows.codex.limit5h': '',
  'windows.codex.limitWeekly': '',
  'windows.codex.weeklyResetAt': '',
  /** The Agent Sessions view's grouping: by project then day, or flat by recency ('recency'). */
  'sessions.groupBy': 'project' as 'project' | 'recency',
  /** Retry loops as warnings in the Problems view. */
  'problems.retryLoops': true,
  /** What the exports redact: `strict` also takes the bare hex, UUIDs, numbers and short tokens the trace explains as ids (docs/redaction.md). */
  redaction: 'default' as 'default' | 'strict',
} as const;

/** The fewest attempts a retry loop can have (`agentTrace.analysis.minLoopAttempts`' minimum). */
export const MIN_LOOP_ATTEMPTS = 2;
