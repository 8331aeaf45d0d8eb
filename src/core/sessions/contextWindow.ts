/**
 * The context window of a model, in tokens, for "context used" in the status bar.
 *
 * The seam to a maintained model table: until the price library (which lists each
 * model's `context_window`) is part of the core, no window is known here and the
 * status bar shows the tokens used instead of a share. One rule needs no table: a
 * call that used more tokens than a window proves the window is larger, so a
 * guess is never shown as more than 100%.
 */
export function contextWindowFor(_model: string | null, _usedTokens: number | null): number | null {
  return null;
}
