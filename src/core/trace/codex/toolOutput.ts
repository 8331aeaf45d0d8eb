import { arr, isObject, num, obj, ownedText, parseArguments, str } from '../json';
import type { JsonObject } from '../json';

/** The last function call's arguments as given and as parsed (callArguments). */
let lastRaw: unknown;
let lastArgs: JsonObject | null = null;

/**
 * A function call's arguments parsed (parseArguments), the last call's kept: the Codex reader
 * and the context anatomy's collector read the same record one after the other, and the
 * arguments were parsed twice. The object is shared: read it, never change it.
 */
export function callArguments(raw: unknown): JsonObject | null {
  if (raw === lastRaw && typeof raw === 'string') return lastArgs;
  const args = parseArguments(raw);
  lastRaw = raw;
  lastArgs = args;
  return args;
}

/** What a tool's output text says about how the tool ended. */
export interface ToolOutcome {
  /** True/false when the text tells; null for a command that was still running. */
  isError: boolean | null;
  exitCode: number | null;
  /** The runner's own measure (`Wall time`, `duration_seconds`), in ms. */
  durationMs: number | null;
  /** The part worth showing when the call failed: the command output, or the whole message. */
  detail: string;
}

/** First lines of the shell runners' own header (0.60: `Exit code:`; 0.114: `Chunk ID:` …). */
const RUNNER_HEADER =
  /^(?:Exit code: |Chunk ID: |Wall time: |Process exited with code |Process running with session ID )/;
/**
 * Plain-text results Codex writes when a tool could not run or was refused
 * (`apply_patch verification failed: …`, `write_stdin failed: …`, `exec command rejected by user`,
 * `aborted by user after 77.1s`, `request_user_input is unavailable in Default mode`).
 * Only the first line is tested, so command output never matches.
 */
const FAILURE_TEXT = /^[\w .\-/]{0,60}?\b(?:failed|error|rejected|timed out|denied|aborted|unavailable)\b/i;

/** The text of a `*_call_output` payload: a string, `{content, success}`, or content items. */
export function outputText(output: unknown): { text: string; success: boolean | null } {
  if (typeof output === 'string') return { text: output, success: null };
  const o = obj(output);
  if (o) {
    const success = typeof o['success'] === 'boolean' ? o['success'] : null;
    return { text: outputText(o['content']).text, success };
  }
  const parts: string[] = [];
  for (const item of arr(output) ?? []) {
    if (isObject(item) && typeof item['text'] === 'string') parts.push(item['text']);
  }
  return { text: parts.join('\n'), success: null };
}

/**
 * Reads how a tool ended from its output text (docs/design/formats.md §2, §12.7): the runner header of
 * either CLI generation, apply_patch's JSON metadata, or a plain failure message.
 */
export function toolOutcome(text: string, success: boolean | null): ToolOutcome {
  const json = jsonMetadata(text);
  if (json) return json;
  if (RUNNER_HEADER.test(text)) return runnerOutcome(text);
  const firstLine = text.split('\n', 1)[0] ?? '';
  const failed = success !== null ? !success : FAILURE_TEXT.test(firstLine);
  return { isError: failed, exitCode: null, durationMs: null, detail: text };
}

/** `Exit code: N / Wall time / Output:` (0.60) or `Chunk ID / Wall time / Process exited with code N / … / Output:` (0.114). */
function runnerOutcome(text: string): ToolOutcome {
  const split = text.indexOf('\nOutput:');
  const header = split >= 0 ? text.slice(0, split) : text;
  const body = split >= 0 ? text.slice(split + '\nOutput:'.length).replace(/^\n/, '') : '';
  const exit = /^(?:Exit code:|Process exited with code) (-?\d+)\s*$/m.exec(header);
  const wall = /^Wall time: (\d+(?:\.\d+)?) seconds?\s*$/m.exec(header);
  const durationMs = wall ? Math.round(Number(wall[1]) * 1000) : null;
  if (exit) {
    const exitCode = Number(exit[1]);
    return { isError: exitCode !== 0, exitCode, durationMs, detail: body.trim() === '' ? text : body };
  }
  // "Process running with session ID N": the command had not finished when the output was logged.
  return { isError: null, exitCode: null, durationMs, detail: text };
}

/** apply_patch (and older shell) results: a JSON string `{"output": …, "metadata": {"exit_code", "duration_seconds"}}`. */
function jsonMetadata(text: string): ToolOutcome | null {
  if (!text.startsWith('{')) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const metadata = isObject(value) ? obj(value['metadata']) : null;
  if (!metadata) return null;
  const exitCode = num(metadata['exit_code']);
  const seconds = num(metadata['duration_seconds']);
  return {
    isError: exitCode === null ? null : exitCode !== 0,
    exitCode: exitCode !== null && Number.isInteger(exitCode) ? exitCode : null,
    durationMs: seconds === null ? null : Math.round(seconds * 1000),
    detail: str((value as JsonObject)['output']) ?? text,
  };
}

/** The command of a shell-like tool: `command` (shell_command, shell) or `cmd` (exec_command); arrays joined. */
export function shellCommand(args: JsonObject | null): string | null {
  if (!args) return null;
  for (const key of ['command', 'cmd']) {
    const value = args[key];
    if (typeof value === 'string') return value;
    const parts = arr(value);
    if (parts && parts.length > 0 && parts.every((p) => typeof p === 'string')) return parts.join(' ');
  }
  return null;
}

/** The first file a patch touches: `*** Update File: <path>` (or Add / Delete). */
export function patchTarget(patch: string): string | null {
  const m = /^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$/m.exec(patch);
  return m ? m[1]! : null;
}

/** The file an apply_patch failure names (`Failed to find expected lines in <path>:`). */
export function failedPatchTarget(text: string): string | null {
  const m =
    /(?:Failed to find expected lines in|Failed to read file to update|Failed to delete file|Failed to read) (.+?):(?:\n|\s|$)/.exec(
      text,
    );
  return m ? m[1]! : null;
}

/**
 * A patch path made absolute with the turn's cwd, the way apply_patch resolves it, so that
 * header paths (`app.js`) and failure paths (`/home/u/repo/app.js`) name one file alike.
 */
export function resolvePath(path: string, cwd: string | null): string {
  // The last answer again: the Codex reader and the anatomy's collector resolve the same patch's
  // path one after the other (and share the one string).
  if (path === lastPath && cwd === lastCwd) return lastResolved;
  lastResolved = ownPath(path, cwd);
  lastPath = path;
  lastCwd = cwd;
  return lastResolved;
}

let lastPath: string | null = null;
let lastCwd: string | null = null;
let lastResolved = '';

function ownPath(path: string, cwd: string | null): string {
  // A string of its own: the path is often cut from a script or a patch, and a piece of a
  // string keeps the whole of it alive in V8 (about 300 bytes a call of a long session).
  if (cwd === null || path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\'))
    return ownedText(path);
  const windows = /^[A-Za-z]:\\/.test(cwd) && !cwd.includes('/');
  const sep = windows ? '\\' : '/';
  const base = cwd.endsWith(sep) ? cwd.slice(0, -1) : cwd;
  return ownedText(`${base}${sep}${path.replace(/^\.[\\/]/, '')}`);
}
