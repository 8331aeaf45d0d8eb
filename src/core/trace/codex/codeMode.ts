import { arr, isObject, num, obj, parseArguments, str } from '../json';
import type { JsonObject } from '../json';
import { patchTarget } from './toolOutput';

/**
 * Codex "code mode" (CLI 0.14x and later): the model runs every tool through one freeform
 * `exec` tool whose input is JavaScript (`await tools.exec_command({cmd: "npm test"})`,
 * `await tools.apply_patch("*** Begin Patch…")`), plus `wait` for a script still running
 * and `request_user_input`. The script's own result starts with `Script completed`,
 * `Script failed` or `Script running with cell ID N` (0.144–0.152; later versions add
 * `with cell ID N` to every status and write `Script terminated`), then `Wall time …` and
 * `Output:` (openai/codex `codex-rs/code-mode`; docs/design/formats.md §2). Nested commands
 * are also written as `event_msg/item_completed` items (0.15x: `CommandExecution` with argv
 * and `exit_code`, `FileChange`) or `patch_apply_end` events (0.14x), with `exec-…` ids.
 */

/** The freeform tool that runs a code-mode script, and the one that waits for it. */
export const CODE_MODE_EXEC = 'exec';
export const CODE_MODE_WAIT = 'wait';

/** What a script asks its nested tools to do, as far as its source text shows. */
export interface ScriptActions {
  /** `cmd` / `command` of each `tools.exec_command(...)` / `tools.shell(...)` call, in order. */
  commands: string[];
  /** The first file each `tools.apply_patch(...)` changes. */
  patchedFiles: string[];
}

/** Nested tools that run a shell command. */
const SHELL_NESTED = /^(?:exec_command|shell|shell_command|local_shell)$/;

/**
 * Reads the nested tool calls of a script from its source. Only literal arguments are
 * understood (a command built at run time stays unknown); that is what models write.
 */
export function scriptActions(source: string): ScriptActions {
  const commands: string[] = [];
  const patchedFiles: string[] = [];
  const call = /tools\s*\.\s*([A-Za-z_$][\w$]*)\s*\(/g;
  for (const m of source.matchAll(call)) {
    const name = m[1]!;
    const at = m.index! + m[0].length;
    // The argument is read only for the two tools whose arguments are used.
    if (SHELL_NESTED.test(name)) {
      const arg = leadingLiteral(source, at) ?? declaredLiteral(source, at);
      const args = arg === null ? null : typeof arg === 'string' ? { cmd: arg } : arg;
      const cmd = args ? (str(args['cmd']) ?? str(args['command']) ?? joined(args['command'])) : null;
      if (cmd !== null) commands.push(cmd);
    } else if (name === 'apply_patch') {
      const quick = literalPatchTarget(source, at);
      if (quick !== undefined) {
        if (quick !== null) patchedFiles.push(quick);
        continue;
      }
      const arg = leadingLiteral(source, at) ?? declaredLiteral(source, at);
      // A patch built at run time (`patch.replace(…)`) still starts from a patch literal in the script.
      const patch =
        typeof arg === 'string' ? arg : arg ? (str(arg['input']) ?? str(arg['patch'])) : firstPatchLiteral(source);
      const target = patch === null ? null : patchTarget(patch);
      if (target !== null) patchedFiles.push(target);
    }
  }
  return { commands, patchedFiles };
}

/** The first file a patch names, as patchTarget finds it (line for line the same expression). */
const PATCH_FILE_LINE = /^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$/m;
/** Characters of a patch literal read before its first file line is looked for (it is nearly always the second line). */
const PATCH_PREFIX_CHARS = 4096;

/**
 * `patchTarget` of the string literal `apply_patch` is given at `at` (written there, or in
 * the declaration of the variable passed), without reading the whole literal: a patch is
 * long, its target is on its second line. Undefined when the argument is anything else (an
 * object, an unclosed literal): the caller then reads it in full.
 *
 * Exact: the text read is a prefix of the literal's text (its escapes read one by one from
 * the start, as unescapeJs does, up to an escape past the limit), and a file line the
 * expression finds that ends before that prefix does is the first in the whole text too,
 * with the same path (an earlier match in the whole text would have matched in the prefix,
 * and a line's path depends only on that line). Otherwise a four times longer prefix, up to
 * the whole literal. (`firstLimit` is the first prefix's length; tests make it small.)
 */
export function literalPatchTarget(
  source: string,
  at: number,
  firstLimit = PATCH_PREFIX_CHARS,
): string | null | undefined {
  let open = at;
  while (open < source.length && /\s/.test(source[open]!)) open++;
  const first = source[open];
  if (first === '{') return undefined;
  if (first !== '"' && first !== "'" && first !== '`') {
    // What declaredLiteral reads: the literal the variable passed here was declared with.
    const name = /^\s*([A-Za-z_$][\w$]*)\s*[,)]/.exec(source.slice(at))?.[1];
    if (name === undefined) return undefined;
    const declaration = new RegExp(`\\b(?:const|let|var)\\s+${name.replace(/\$/g, '\\$')}\\s*=\\s*`).exec(source);
    if (!declaration) return undefined;
    open = declaration.index + declaration[0].length;
    const quote = source[open];
    if (quote !== '"' && quote !== "'" && quote !== '`') return undefined;
  }
  // A literal that never closes is no literal to leadingLiteral: known before any prefix is trusted.
  if (closingQuote(source, open) < 0) return undefined;
  for (let limit = firstLimit; ; limit *= 4) {
    const read = literalPrefix(source, open, limit);
    if (read === null) return undefined;
    if (read.closed) return patchTarget(read.text);
    const m = PATCH_FILE_LINE.exec(read.text);
    if (m && m.index + m[0].length < read.text.length) return m[1]!;
  }
}

/**
 * The text of the string literal opened at `open`, its escapes read as unescapeJs reads
 * them: whole (`closed`) when its closing quote comes before an escape `limit` characters
 * into it, else up to that escape (a prefix of the whole text, if it closes at all). Null
 * when no closing quote was met (closingQuote's -1).
 */
export function literalPrefix(source: string, open: number, limit: number): { text: string; closed: boolean } | null {
  const quote = source[open]!;
  const start = open + 1;
  const parts: string[] = [];
  let from = start;
  // As closingQuote: the next quote is searched again only once an escape has passed it.
  let q = source.indexOf(quote, from);
  for (;;) {
    if (q !== -1 && q < from) q = source.indexOf(quote, from);
    if (q === -1) return null;
    const b = source.indexOf('\\', from);
    if (b === -1 || q < b) {
      parts.push(source.slice(from, q));
      return { text: parts.join(''), closed: true };
    }
    if (b - start >= limit) {
      parts.push(source.slice(from, b));
      return { text: parts.join(''), closed: false };
    }
    parts.push(source.slice(from, b));
    // The escape as unescapeJs reads it (its \u and \x digits never hold a quote, so the literal's end cannot cut them).
    const e = source[b + 1]!;
    let length = 2;
    if (e === 'u' && HEX4.test(source.slice(b + 2, b + 6))) {
      parts.push(String.fromCharCode(parseInt(source.slice(b + 2, b + 6), 16)));
      length = 6;
    } else if (e === 'x' && HEX2.test(source.slice(b + 2, b + 4))) {
      parts.push(String.fromCharCode(parseInt(source.slice(b + 2, b + 4), 16)));
      length = 4;
    } else parts.push(e === 'u' || e === 'x' ? '\u0000' : e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e);
    from = b + length;
  }
}

/**
 * The literal a variable passed at `at` was declared with: models write
 * `const patch = "*** Begin Patch…"; await tools.apply_patch(patch)` (observed on 0.144 and 0.152).
 */
function declaredLiteral(source: string, at: number): JsonObject | string | null {
  const name = /^\s*([A-Za-z_$][\w$]*)\s*[,)]/.exec(source.slice(at))?.[1];
  if (name === undefined) return null;
  const declaration = new RegExp(`\\b(?:const|let|var)\\s+${name.replace(/\$/g, '\\$')}\\s*=\\s*`).exec(source);
  return declaration ? leadingLiteral(source, declaration.index + declaration[0].length) : null;
}

/** The first string literal of a script that holds a patch (`*** Begin Patch`). */
function firstPatchLiteral(source: string): string | null {
  for (const m of source.matchAll(/["'`]/g)) {
    if (!source.startsWith('*** Begin Patch', m.index! + 1)) continue;
    const literal = leadingLiteral(source, m.index!);
    if (typeof literal === 'string') return literal;
  }
  return null;
}

function joined(value: unknown): string | null {
  const parts = arr(value);
  return parts && parts.length > 0 && parts.every((p) => typeof p === 'string') ? parts.join(' ') : null;
}

/**
 * The literal argument that starts at `at`: a string (double, single or back-quoted) or an
 * object literal whose keys may be unquoted (`{cmd: "ls", "workdir": "/x"}`); null otherwise.
 */
function leadingLiteral(source: string, at: number): JsonObject | string | null {
  let i = at;
  while (i < source.length && /\s/.test(source[i]!)) i++;
  const open = source[i];
  if (open === '"' || open === "'" || open === '`') {
    const end = closingQuote(source, i);
    return end < 0 ? null : unescapeJs(source.slice(i + 1, end));
  }
  if (open !== '{') return null;
  const end = closingBrace(source, i);
  if (end < 0) return null;
  const text = source.slice(i, end + 1);
  return parseArguments(text) ?? parseArguments(toJson(text));
}

/** The quote that closes the literal opened at `start` (a backslash escapes the character after it), or -1. */
function closingQuote(source: string, start: number): number {
  const quote = source[start]!;
  // Jumps from backslash to backslash (a patch literal is long): the next quote is searched again only once passed.
  let q = source.indexOf(quote, start + 1);
  let b = source.indexOf('\\', start + 1);
  for (;;) {
    if (q === -1) return -1;
    if (b === -1 || q < b) return q;
    const i = b + 2;
    b = source.indexOf('\\', i);
    if (q < i) q = source.indexOf(quote, i);
  }
}

function closingBrace(source: string, start: number): number {
  let depth = 0;
  for (let i = start; i < source.length; i++) {
    const c = source[i]!;
    if (c === '"' || c === "'" || c === '`') {
      i = closingQuote(source, i);
      if (i < 0) return -1;
    } else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

const HEX4 = /^[0-9a-fA-F]{4}$/;
const HEX2 = /^[0-9a-fA-F]{2}$/;

/**
 * A string literal's body with its escapes read: `\uXXXX`, `\xXX`, `\n`, `\t`, `\r`, and any
 * other escaped character as itself (`\u` or `\x` without their hex digits read as U+0000, as
 * the first version did). One pass from backslash to backslash: a patch literal holds thousands.
 */
export function unescapeJs(body: string): string {
  let i = body.indexOf('\\');
  if (i === -1) return body;
  let out = '';
  let from = 0;
  // A backslash that ends the body escapes nothing and stays.
  while (i !== -1 && i + 1 < body.length) {
    out += body.slice(from, i);
    const e = body[i + 1]!;
    let length = 2;
    let text: string;
    if (e === 'u' && HEX4.test(body.slice(i + 2, i + 6))) {
      text = String.fromCharCode(parseInt(body.slice(i + 2, i + 6), 16));
      length = 6;
    } else if (e === 'x' && HEX2.test(body.slice(i + 2, i + 4))) {
      text = String.fromCharCode(parseInt(body.slice(i + 2, i + 4), 16));
      length = 4;
    } else text = e === 'u' || e === 'x' ? '\u0000' : e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e;
    out += text;
    from = i + length;
    i = body.indexOf('\\', from);
  }
  return out + body.slice(from);
}

/** A JavaScript object literal with unquoted keys and single-quoted strings as JSON (best effort). */
function toJson(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'" || c === '`') {
      const end = closingQuote(text, i);
      if (end < 0) return text;
      out += JSON.stringify(unescapeJs(text.slice(i + 1, end)));
      i = end;
    } else if (/[A-Za-z_$]/.test(c) && /[{,]\s*$/.test(out)) {
      let j = i;
      while (j < text.length && /[\w$]/.test(text[j]!)) j++;
      const word = text.slice(i, j);
      out += /^\s*:/.test(text.slice(j)) ? JSON.stringify(word) : word;
      i = j - 1;
    } else out += c;
  }
  return out.replace(/,\s*([}\]])/g, '$1');
}

/** How a code-mode script ended, from the header of its result. */
export interface ScriptOutcome {
  /** `terminated`: the runtime stopped the script (interrupted, or over its time limit). */
  status: 'completed' | 'failed' | 'terminated' | 'running';
  /** The cell a running script can be waited on with. */
  cellId: string | null;
  /** `Wall time` of the script, ms. */
  durationMs: number | null;
  /** Exit codes of the nested commands whose results the script printed as JSON (`{exit_code, output}`). */
  exitCodes: number[];
  /** The text after `Output:`. */
  body: string;
}

/**
 * Reads a code-mode result (`Script completed|failed|terminated [with cell ID N]`, or
 * `Script running with cell ID N [after explicit yield]`, then `Wall time … / Output:`);
 * null when the text is not one.
 */
export function scriptOutcome(text: string): ScriptOutcome | null {
  const head =
    /^Script (completed|failed|terminated|running)(?: with cell ID (\S+))?(?: after explicit yield)?\s*$/.exec(
      text.split('\n', 1)[0] ?? '',
    );
  if (!head) return null;
  const status = head[1] as ScriptOutcome['status'];
  const wall = /^Wall time:? (\d+(?:\.\d+)?) seconds?\s*$/m.exec(text);
  const split = text.indexOf('\nOutput:');
  const body = split >= 0 ? text.slice(split + '\nOutput:'.length).replace(/^\n/, '') : '';
  const exitCodes: number[] = [];
  // Both searches below need their words in the body: most bodies have neither, and are not split.
  if (body.includes('exit_code'))
    for (const line of body.split('\n')) {
      const t = line.trim();
      if (!t.startsWith('{') || !t.includes('exit_code')) continue;
      const value = parseArguments(t);
      const code = value ? num(value['exit_code']) : null;
      if (code !== null && Number.isInteger(code)) exitCodes.push(code);
    }
  if (body.includes('Process exited with code '))
    for (const m of body.matchAll(/^Process exited with code (-?\d+)\s*$/gm)) exitCodes.push(Number(m[1]));
  return {
    status,
    cellId: head[2] ?? null,
    durationMs: wall ? Math.round(Number(wall[1]) * 1000) : null,
    exitCodes,
    body,
  };
}

/** A nested command or file change Codex reported with `event_msg/item_completed`. */
export interface NestedItem {
  kind: 'command' | 'file-change';
  id: string | null;
  command: string | null;
  files: string[];
  exitCode: number | null;
  failed: boolean | null;
}

/** Reads an `item_completed` payload's item when it is a command execution or a file change. */
export function nestedItem(payload: JsonObject): NestedItem | null {
  const item = obj(payload['item']);
  if (!item) return null;
  const type = (str(item['type']) ?? '').toLowerCase();
  const status = (str(item['status']) ?? '').toLowerCase();
  const failed = status === 'failed' || status === 'declined' ? true : status === 'completed' ? false : null;
  if (type === 'commandexecution') {
    const exitCode = num(item['exit_code'] ?? item['exitCode']);
    const raw = item['command'];
    const command = str(raw) !== null ? commandText(str(raw)!) : argvText(raw);
    const code = exitCode !== null && Number.isInteger(exitCode) ? exitCode : null;
    return {
      kind: 'command',
      id: str(item['id']) ?? str(item['call_id']),
      command,
      files: [],
      exitCode: code,
      failed: code !== null ? code !== 0 : failed,
    };
  }
  if (type === 'filechange') {
    const changes = obj(item['changes']);
    const files = changes
      ? Object.keys(changes)
      : (arr(item['changes']) ?? [])
          .filter(isObject)
          .map((c) => str(c['path']))
          .filter((p): p is string => p !== null);
    return { kind: 'file-change', id: str(item['id']), command: null, files, exitCode: null, failed };
  }
  return null;
}

/**
 * A `patch_apply_end` event (0.14x code mode writes one for each nested `apply_patch`, with an
 * `exec-…` call id): the files it changed and whether it succeeded. Null when it is not one.
 */
export function patchApplied(payload: JsonObject): NestedItem | null {
  const changes = obj(payload['changes']);
  const success = payload['success'];
  if (!changes && typeof success !== 'boolean') return null;
  return {
    kind: 'file-change',
    id: str(payload['call_id']),
    command: null,
    files: changes ? Object.keys(changes) : [],
    exitCode: null,
    failed: typeof success === 'boolean' ? !success : null,
  };
}

/** A command logged as a JSON array string (`["/bin/zsh","-lc","npm test"]`) as one line. */
function commandText(raw: string): string {
  if (!raw.startsWith('[')) return raw;
  try {
    const parsed: unknown = JSON.parse(raw);
    return argvText(parsed) ?? raw;
  } catch {
    return raw;
  }
}

/**
 * An argv as the command a person typed: Codex runs every nested command through the user's
 * shell (`["/bin/zsh","-lc","cat missing.txt"]`, observed on 0.152), so the script is the command.
 */
function argvText(value: unknown): string | null {
  const parts = arr(value);
  if (
    parts &&
    parts.length === 3 &&
    parts.every((p) => typeof p === 'string') &&
    /(?:^|[\\/])(?:ba|z|da|k)?sh$/.test(parts[0] as string) &&
    /^-[a-z]*c$/.test(parts[1] as string)
  )
    return parts[2] as string;
  return joined(value);
}
