import { findLibraryModel } from '../cost/genaiPrices';

/**
 * The context window of a model, in tokens, for "context used" in the status bar: the
 * `context_window` the price library (@pydantic/genai-prices, src/core/cost) lists for the
 * model, null when it lists none. A call that used more tokens than that window proves the
 * window is larger (a long-context beta, a newer model under an old name): then no window
 * is claimed, so a share above 100% is never shown.
 */
export function contextWindowFor(model: string | null, usedTokens: number | null): number | null {
  if (!model) return null;
  const window = findLibraryModel(model, null)?.model.context_window;
  if (typeof window !== 'number' || window <= 0) return null;
  return usedTokens !== null && usedTokens > window ? null : window;
}
