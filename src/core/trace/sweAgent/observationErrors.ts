/**
 * Conservative failure detection for tool output that arrives as plain text (SWE-agent
 * observations, ATIF observation content). Only messages whose wording can come from
 * nothing but a failure count; anything else is a success, so a failed-call count is a
 * lower bound rather than a guess. Each rule is named, to show why a call was marked.
 */

import { clip } from '../json';

/** Why a text was read as a failure. */
export type OutputFailure =
  | 'edit-rejected'
  | 'tool-usage'
  | 'command-not-found'
  | 'no-such-file'
  | 'python-traceback'
  | 'tool-use-error'
  | 'exit-code';

/** Longest error text kept per failed tool call; the full text stays in the file. */
export const ERROR_TEXT_MAX = 600;

/** SWE-agent's linting edit tool rejects an edit with this sentence (observed 3× in the pydicom sample). */
const EDIT_REJECTED = /^Your proposed edit has introduced new syntax error\(s\)/;
/**
 * SWE-agent's own tools (tools/windowed, tools/search, windowed_edit_*) print these as the
 * first line when they refuse to run: usage, bad arguments, nothing open, missing paths.
 */
const TOOL_USAGE = [
  /^Usage: /,
  /^Error: /,
  /^No file open(?:ed)?\. /,
  /^File .+ not found\.?$/,
  /^Directory .+ not found$/,
];
/** The shell's own message: `bash: foo: command not found`, `/bin/sh: line 1: foo: command not found`. */
const COMMAND_NOT_FOUND = /^(?:\/(?:usr\/)?bin\/)?(?:ba|da|z)?sh: (?:line \d+: )?[^\n]+: command not found$/m;
/** A program naming a missing path on the first line: `cat: x: No such file or directory`, `python: can't open file …`. */
const NO_SUCH_FILE = /^[\w./+-]+: [^\n]*No such file or directory\s*$/;
/** The last line of an uncaught Python exception: `AttributeError: …`, `KeyboardInterrupt`. */
const EXCEPTION_LINE = /^[A-Za-z_][\w.]*(?:Error|Exception|Interrupt)(?::|$)/;
/** Claude Code's tool errors, kept by converters that copy its tool results. */
const TOOL_USE_ERROR = /^<tool_use_error>/;
/** `Exit code 2` at the start (Claude Code Bash results), `Process exited with code 1`, mini-swe-agent's `<returncode>1</returncode>`. */
const EXIT_CODE = /^(?:Exit code:? |Process exited with code |<returncode>)(-?\d+)\b/;

/** The first non-empty line of a text, trimmed of `\r`. */
function firstLine(text: string): string {
  for (const line of text.split('\n')) {
    const t = line.replace(/\r$/, '').trim();
    if (t !== '') return t;
  }
  return '';
}

function lastLine(text: string): string {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const t = lines[i]!.replace(/\r$/, '').trim();
    if (t !== '') return t;
  }
  return '';
}

/** SWE-agent's own commands, whose refusals start with `Usage:` / `Error:` (a user script's `Error:` line is not a failure). */
export const SWE_AGENT_TOOLS = new Set([
  'open',
  'goto',
  'create',
  'edit',
  'insert',
  'scroll_up',
  'scroll_down',
  'search_file',
  'search_dir',
  'find_file',
  'str_replace_editor',
  'filemap',
  'submit',
]);

/**
 * The rule a tool output breaks, or null for a success; `exitCode` when the text states
 * one. `agentTool`: the output is from one of the agent's own commands (SWE_AGENT_TOOLS),
 * whose usage and argument errors are recognised too.
 */
export function outputFailure(
  text: string,
  agentTool = false,
): { rule: OutputFailure; exitCode: number | null } | null {
  const head = text.trimStart();
  const first = firstLine(text);
  const exit = EXIT_CODE.exec(head);
  if (exit) {
    const code = Number(exit[1]);
    return code !== 0 ? { rule: 'exit-code', exitCode: code } : null;
  }
  if (EDIT_REJECTED.test(head)) return { rule: 'edit-rejected', exitCode: null };
  if (TOOL_USE_ERROR.test(head)) return { rule: 'tool-use-error', exitCode: null };
  if (agentTool && TOOL_USAGE.some((re) => re.test(first))) return { rule: 'tool-usage', exitCode: null };
  if (COMMAND_NOT_FOUND.test(text.replace(/\r/g, ''))) return { rule: 'command-not-found', exitCode: null };
  if (NO_SUCH_FILE.test(first)) return { rule: 'no-such-file', exitCode: null };
  if (text.includes('Traceback (most recent call last):') && EXCEPTION_LINE.test(lastLine(text)))
    return { rule: 'python-traceback', exitCode: null };
  return null;
}

/** The part of a failed output worth showing: the text from its start, clipped. */
export function errorTextOf(text: string): string {
  return clip(text.replace(/\r\n/g, '\n').trim(), ERROR_TEXT_MAX);
}
