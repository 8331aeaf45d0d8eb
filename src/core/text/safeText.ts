/**
 * Trace text is written by someone else: an agent that read a malicious page, a log
 * from a stranger. Before it is shown anywhere that interprets text (a terminal, VS
 * Code's notifications, CodeLens, Problems, quick picks, the webview), it goes through
 * one of these functions, chosen by what that surface would otherwise act on:
 *
 * - terminals act on escape sequences (clear the screen, set the window title, make
 *   hyperlinks): every control character is shown as a visible escape instead;
 * - every surface reorders text around bidirectional overrides (a file name that reads
 *   backwards, a ✓ where a ✗ is): those characters are shown as escapes too;
 * - VS Code renders `$(name)` as an icon in CodeLens, quick picks and the status bar,
 *   and runs `[text](command:…)` links in notifications: both are broken with an
 *   invisible zero-width space, so they show as typed and never act;
 * - anything can be huge: each surface clips to its own length.
 *
 * Pure functions, shared by the CLI, the extension host and the webview.
 */

/** Bidirectional formatting characters: embeddings, overrides, isolates and the marks that steer them. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** C0 controls but tab and newline, DEL, C1 controls (U+009B is a terminal's CSI), and the line/paragraph separators. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;
// eslint-disable-next-line no-control-regex -- as above
const CONTROL_OR_BREAK = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
/** `$(icon)` as VS Code parses it in labels (optionally escaped with a backslash). */
const ICON = /\$\(/g;
/** The middle of a Markdown link `[text](target)`, where notifications look for `command:` and other links. */
const LINK = /\]\s*\(/g;
const ZERO_WIDTH_SPACE = '\u200b';

/** Longest text the panel shows from one trace string (an id, a name, a command): the rest is cut with an ellipsis. */
export const DISPLAY_MAX = 4000;

/** `\x1b`, `\u202e`: a character as the escape a reader can see and search for. */
function visible(ch: string): string {
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Cuts text to `max` characters with an ellipsis, without splitting a surrogate pair. */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/**
 * Text for a terminal: every control character but newline and tab, and every bidi
 * control, becomes a visible escape (`\x1b[2J` prints as those characters and clears
 * nothing). Applied to the CLI's whole text output.
 */
export function terminalText(text: string): string {
  return text.replace(CONTROL, visible).replace(BIDI, visible);
}

/**
 * JSON for a terminal: `JSON.stringify` already escapes C0 controls; this escapes the
 * rest that a terminal or an editor acts on (C1 controls, DEL, line separators, bidi
 * controls) as `\uXXXX`, which reads back as the same JSON value.
 */
export function terminalJson(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Text for display in the webview: bidi controls and control characters (but newline
 * and tab) as visible escapes, clipped to `max`. The page never parses text as HTML, so
 * nothing else in it can act; this keeps it from reading differently than it is (or
 * from filling the panel with one 10 MiB name).
 */
export function displayText(text: string, max = DISPLAY_MAX): string {
  const head = text.length > max * 2 ? text.slice(0, max * 2) : text;
  return clipText(head.replace(CONTROL, visible).replace(BIDI, visible), max);
}

/** Options of `uiText`. */
export interface UiTextOptions {
  /** Longest text kept (default 300). */
  max?: number;
  /** Keep newlines (hovers, multi-line messages); otherwise every line break becomes a space. */
  multiline?: boolean;
}

/**
 * Trace text for VS Code's own UI (notifications, CodeLens titles and hovers, Problems,
 * quick picks, the output channel): control and bidi characters as visible escapes,
 * `$(icon)` and Markdown links broken so they cannot render or run, clipped to `max`.
 * Only the extension's own words (added around this text) may carry icons or links.
 */
export function uiText(text: string, options: UiTextOptions = {}): string {
  const max = options.max ?? 300;
  // Clip first (with room for escapes) so a 10 MiB value costs nothing to clean.
  let t = text.length > max * 2 ? text.slice(0, max * 2) : text;
  t = options.multiline
    ? t.replace(/\r\n?/g, '\n').replace(CONTROL, visible)
    : t.replace(/[\t\r\n]+/g, ' ').replace(CONTROL_OR_BREAK, visible);
  t = t
    .replace(BIDI, visible)
    .replace(ICON, `$${ZERO_WIDTH_SPACE}(`)
    .replace(LINK, (m) => `]${ZERO_WIDTH_SPACE}${m.slice(1)}`);
  return clipText(t, max);
}
