import { formatUsd } from '../text/formatNumbers';

/**
 * Budgets in dollars for a session (with its sub-agents) and for a day, watched as live
 * sessions grow: the status bar's colour follows the state, and a crossing (under, then
 * over) is told once. A figure first seen already over is shown over but not told: nothing
 * was crossed while it was watched, and a window reload must not repeat an old alert.
 */

/** The user's budgets; null when unset. */
export interface Budgets {
  perSessionUsd: number | null;
  perDayUsd: number | null;
}

/** How close the figures are to the budgets: `near` from 80% of one. */
export type BudgetState = 'ok' | 'near' | 'over';

/** Share of a budget from which the state is `near`. */
export const NEAR_SHARE = 0.8;

/** A budget crossed, to be told once. */
export interface BudgetCrossing {
  scope: 'session' | 'day';
  /** The session's key or the local day. */
  key: string;
  usd: number;
  budgetUsd: number;
  /** Plain words, ours only (no trace text). */
  message: string;
}

/** What is watched at one moment: the followed session's cost with its sub-agents, and the day's. */
export interface BudgetFigures {
  session: { key: string; usd: number | null } | null;
  day: { key: string; usd: number | null } | null;
}

/** "over budget by $0.42": how a crossing is said, in the notification and the CLI. */
export function overBudgetText(usd: number, budgetUsd: number): string {
  const over = usd - budgetUsd;
  return `${formatUsd(usd)} against a budget of ${formatUsd(budgetUsd)}: over by ${formatUsd(over)} (${Math.round((over / budgetUsd) * 100)}%)`;
}

/** Remembers, per session and per day, whether it was last seen over its budget. */
export class BudgetWatch {
  private readonly over = new Map<string, boolean>();

  /** The state to show and the crossings to tell, for the figures now. */
  update(budgets: Budgets, figures: BudgetFigures): { state: BudgetState; crossings: BudgetCrossing[] } {
    const crossings: BudgetCrossing[] = [];
    let state: BudgetState = 'ok';
    const check = (scope: BudgetCrossing['scope'], key: string, usd: number | null, budget: number | null): void => {
      if (budget === null || usd === null) return;
      const id = `${scope}\u0000${key}`;
      const isOver = usd > budget;
      const was = this.over.get(id);
      this.over.set(id, isOver);
      if (isOver) state = 'over';
      else if (usd >= NEAR_SHARE * budget && state === 'ok') state = 'near';
      if (isOver && was === false) {
        crossings.push({
          scope,
          key,
          usd,
          budgetUsd: budget,
          message: `Agent Trace: ${scope === 'session' ? 'this session' : 'today’s sessions'} cost ${overBudgetText(usd, budget)}.`,
        });
      }
    };
    if (figures.session) check('session', figures.session.key, figures.session.usd, budgets.perSessionUsd);
    if (figures.day) check('day', figures.day.key, figures.day.usd, budgets.perDayUsd);
    return { state, crossings };
  }
}
