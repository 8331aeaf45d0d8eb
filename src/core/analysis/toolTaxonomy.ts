import type { ToolCall } from '../trace/model';

/**
 * Tools that change a file. Different tools on one file count as one kind of
 * attempt: an agent that fails with Edit and then with Write on the same file is in
 * one retry loop (formats differ in what they call their edit tool).
 */
const FILE_EDIT_TOOLS = new Set(
  [
    'Edit',
    'MultiEdit',
    'Write',
    'NotebookEdit',
    'apply_patch',
    'str_replace_editor',
    'str_replace_based_edit_tool',
    'edit',
    'create',
    'write_file',
    'replace',
    'insert',
    'edit_file',
    'write_to_file',
    'replace_in_file',
    'apply_diff',
    'insert_content',
    'search_and_replace',
    'patch',
    'FileEditAction',
    'FileWriteAction',
  ].map((n) => n.toLowerCase()),
);

/** Tools that run a shell command. */
const SHELL_TOOLS = new Set(
  [
    'Bash',
    'shell',
    'shell_command',
    'exec_command',
    'local_shell',
    'run_command',
    'execute_bash',
    'bash',
    'terminal',
    'run_shell_command',
    'execute_command',
    'CmdRunAction',
  ].map((n) => n.toLowerCase()),
);

/**
 * Tools that run a script of other tools (Codex code mode's `exec`, and `wait` on a running
 * one): a call is a file edit when its script changes a file, a shell command when it runs one.
 */
const SCRIPT_TOOLS = new Set(['exec', 'wait']);

/** Where a tool call acts, for grouping failures: the same file, or the same command with its flags and quoted text set aside. */
export interface ToolTarget {
  family: 'file-edit' | 'shell' | 'other';
  kind: 'file' | 'command' | 'tool';
  /** Display form (the file path, the normalised command, or the tool name). */
  key: string;
}

/** The name readers give a failed call whose tool the log no longer names (its tool_use line is unreadable). */
export const UNKNOWN_TOOL_NAME = '(unknown tool)';

/** The family and target a tool call's failures are grouped by. */
export function toolTarget(tool: ToolCall): ToolTarget {
  // Nothing says two failures of unnamed tools were attempts at the same thing: each is its own target.
  if (tool.name === UNKNOWN_TOOL_NAME) return { family: 'other', kind: 'tool', key: `${UNKNOWN_TOOL_NAME} ${tool.id}` };
  if (isFileEditTarget(tool)) return { family: 'file-edit', kind: 'file', key: tool.targetFile! };
  if (isShellTarget(tool)) return { family: 'shell', kind: 'command', key: normalizeCommand(tool.command!) };
  if (tool.targetFile) return { family: 'other', kind: 'file', key: `${tool.name} ${tool.targetFile}` };
  return { family: 'other', kind: 'tool', key: tool.name };
}

function isFileEditTarget(tool: ToolCall): boolean {
  if (tool.name === UNKNOWN_TOOL_NAME || !tool.targetFile) return false;
  const name = tool.name.toLowerCase();
  return FILE_EDIT_TOOLS.has(name) || SCRIPT_TOOLS.has(name);
}

/** True when `toolTarget` puts the call in the shell family (without normalising its command, the costly part). */
export function isShellTarget(tool: ToolCall): boolean {
  if (tool.name === UNKNOWN_TOOL_NAME || !tool.command || isFileEditTarget(tool)) return false;
  return SHELL_TOOLS.has(tool.name.toLowerCase()) || !tool.targetFile;
}

/** Splits a shell command into its `&&`, `||`, `;` and `|` segments, keeping quoted text whole. */
function segments(command: string): string[][] {
  const out: string[][] = [[]];
  const re = /"(?:[^"\\]|\\.)*"|'[^']*'|&&|\|\||[;|\n]|[^\s"';|&]+|&/g;
  for (const m of command.matchAll(re)) {
    const token = m[0];
    if (token === '&&' || token === '||' || token === ';' || token === '|' || token === '\n') out.push([]);
    else out[out.length - 1]!.push(token);
  }
  return out.filter((s) => s.length > 0);
}

/** Shells that run a script given on their command line, and the flag that introduces it. */
const WRAPPERS: ReadonlyArray<{ programs: ReadonlySet<string>; scriptFlag: RegExp; posix: boolean }> = [
  // bash -c, bash -lc, sh -c, zsh -ic …: a short-option cluster containing c.
  { programs: new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'fish']), scriptFlag: /^-[a-z]*c[a-z]*$/, posix: true },
  { programs: new Set(['powershell', 'pwsh']), scriptFlag: /^[-/](?:c|command)$/i, posix: false },
  { programs: new Set(['cmd']), scriptFlag: /^\/[ck]$/i, posix: false },
];
/** Nested wrappers unwrapped at most (`cmd /c powershell -c "bash -lc …"`). */
const MAX_UNWRAP = 4;

/** A program's name without quotes, folders or `.exe`, lower-cased: `"C:\\…\\powershell.exe"` → `powershell`. */
function programName(token: string): string {
  const bare = token.replace(/^["']|["']$/g, '');
  return (bare.split(/[\\/]/).pop() ?? bare).replace(/\.exe$/i, '').toLowerCase();
}

/**
 * A quoted token's text: `'x'` → `x`; `"a \\"b\\""` → `a "b"` for POSIX shells, which treat a
 * backslash in double quotes as an escape; PowerShell and cmd do not (`"C:\\x"` stays a path).
 */
function unquote(token: string, posix: boolean): string {
  if (token.length >= 2 && token.startsWith('"') && token.endsWith('"'))
    return posix ? token.slice(1, -1).replace(/\\(["\\$`])/g, '$1') : token.slice(1, -1);
  if (token.length >= 2 && token.startsWith("'") && token.endsWith("'")) return token.slice(1, -1);
  return token;
}

/** The script a wrapper segment runs (`bash -lc "npm test"` → `npm test`), or null when the segment is no wrapper. */
function wrappedScript(segment: readonly string[]): string | null {
  const program = programName(segment[0] ?? '');
  const wrapper = WRAPPERS.find((w) => w.programs.has(program));
  if (!wrapper) return null;
  const at = segment.findIndex((t, i) => i > 0 && wrapper.scriptFlag.test(t));
  if (at < 0 || at === segment.length - 1) return null;
  const rest = segment.slice(at + 1);
  return rest.map((t) => unquote(t, wrapper.posix)).join(' ');
}

/**
 * The segments of a command as a person would name them: a shell wrapper (`bash -lc "…"`,
 * `sh -c`, `powershell.exe -Command "…"`, `pwsh -c`, `cmd /c`) is replaced by the segments
 * of the script it runs, so `powershell -Command "git pull"` is a `git pull`.
 */
function commandSegments(command: string, depth = 0): string[][] {
  const out: string[][] = [];
  for (const seg of segments(command)) {
    const script = depth < MAX_UNWRAP ? wrappedScript(seg) : null;
    if (script !== null) out.push(...commandSegments(script, depth + 1));
    else out.push(seg);
  }
  return out;
}

/** Package managers and runners whose second word names a script or tool to run: `npm run build`, `uv run pytest`. */
const SCRIPT_RUNNERS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['npm', new Set(['run', 'run-script', 'exec'])],
  ['pnpm', new Set(['run', 'exec', 'dlx'])],
  ['yarn', new Set(['run', 'exec', 'dlx'])],
  ['bun', new Set(['run', 'x'])],
  ['uv', new Set(['run', 'tool'])],
  ['poetry', new Set(['run'])],
  ['pipenv', new Set(['run'])],
  ['pdm', new Set(['run'])],
  ['hatch', new Set(['run'])],
  ['deno', new Set(['task', 'run'])],
  ['dotnet', new Set(['run', 'tool'])],
]);

/**
 * A command's identity for retry loops: per segment, the program and its first
 * argument (three words for a script runner: `npm run build`), with flags, quoted text
 * (commit messages, scripts), environment assignments and `cd` segments set aside, and
 * shell wrappers replaced by what they run. So `git commit -m "a"` and
 * `git commit --no-verify -m "b"` are the same attempt, `pytest a.py` and `pytest b.py`
 * are not, nor are `npm run build` and `npm run test`, nor two different commands each
 * run through `powershell.exe -Command`.
 */
export function normalizeCommand(command: string): string {
  const parts: string[] = [];
  for (const seg of commandSegments(command)) {
    const words = seg.filter(
      (t) => !t.startsWith('-') && !/^["']/.test(t) && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(t) && t !== '&',
    );
    if (
      words.length === 0 ||
      words[0] === 'cd' ||
      words[0] === 'source' ||
      words[0] === '.' ||
      /^(?:set-location|pushd|popd)$/i.test(words[0]!)
    )
      continue;
    const runner = SCRIPT_RUNNERS.get(programName(words[0]!));
    const keep = runner && words[1] !== undefined && runner.has(words[1]) ? 3 : 2;
    parts.push(words.slice(0, keep).join(' '));
  }
  return parts.length > 0 ? parts.join(' && ') : command.trim().slice(0, 80);
}

/**
 * Failures that are not the agent's own attempt: the user refused the call, or the
 * tool was cancelled because a sibling call in the same response failed. They count as
 * failed tool calls but never as retry attempts.
 */
export function isCollateralFailure(tool: ToolCall): boolean {
  const text = tool.errorText ?? '';
  return (
    /^Sibling tool call errored/i.test(text) ||
    /user doesn't want to proceed|user rejected|permission denied by the user|\[Request interrupted by user|^aborted by user/i.test(
      text,
    )
  );
}

/** How the analyses class a tool call: reading around (explore) or changing and running things (execute). */
export type ToolIntent = 'explore' | 'execute' | 'other';

/** Which tool names mean what; user-configurable (`agentTrace.analysis.toolIntent`). */
export interface IntentMapping {
  explore: string[];
  execute: string[];
  /** Shell programs that only read (ls, cat, grep…): a shell call running only these is exploration. */
  readOnlyCommands: string[];
}

/** The default mapping, covering Claude Code, Codex, SWE-agent and common MCP names. */
export const DEFAULT_INTENT_MAPPING: IntentMapping = {
  explore: [
    'Read',
    'Glob',
    'Grep',
    'LS',
    'WebFetch',
    'WebSearch',
    'NotebookRead',
    'view',
    'open',
    'goto',
    'scroll_up',
    'scroll_down',
    'find_file',
    'search_dir',
    'search_file',
    'read_file',
    'list_dir',
    'list_files',
    'grep_search',
    'file_search',
    'codebase_search',
    'view_image',
    'web_search',
    'list_directory',
    'read_many_files',
    'search_file_content',
    'web_fetch',
    'google_web_search',
    'list',
    'webfetch',
    'search_files',
    'list_code_definition_names',
    'FileReadAction',
    'BrowseURLAction',
  ],
  execute: [
    'Bash',
    'Edit',
    'MultiEdit',
    'Write',
    'NotebookEdit',
    'apply_patch',
    'shell',
    'shell_command',
    'exec_command',
    'write_stdin',
    'local_shell',
    'edit',
    'create',
    'insert',
    'str_replace_editor',
    'str_replace_based_edit_tool',
    'python',
    'submit',
    'run_command',
    'execute_bash',
    'write_file',
    'edit_file',
    'exec',
    'wait',
    'run_shell_command',
    'replace',
    'patch',
    'write_to_file',
    'replace_in_file',
    'apply_diff',
    'execute_command',
    'CmdRunAction',
    'FileEditAction',
    'FileWriteAction',
  ],
  readOnlyCommands: [
    'ls',
    'cat',
    'head',
    'tail',
    'less',
    'grep',
    'rg',
    'ag',
    'find',
    'fd',
    'tree',
    'wc',
    'pwd',
    'which',
    'file',
    'stat',
    'du',
    'git status',
    'git log',
    'git diff',
    'git show',
    'git branch',
    'sed -n',
    'nl',
  ],
};

/** A mapping's names lower-cased and its read-only commands split into words, once per mapping (toolIntent runs for every tool call). */
interface PreparedMapping {
  explore: Set<string>;
  execute: Set<string>;
  readOnlyCommands: string[][];
}
const prepared = new WeakMap<IntentMapping, PreparedMapping>();

function prepare(mapping: IntentMapping): PreparedMapping {
  let p = prepared.get(mapping);
  if (!p) {
    p = {
      explore: new Set(mapping.explore.map((n) => n.toLowerCase())),
      execute: new Set(mapping.execute.map((n) => n.toLowerCase())),
      readOnlyCommands: mapping.readOnlyCommands.map((c) => c.split(/\s+/)),
    };
    prepared.set(mapping, p);
  }
  return p;
}

/** Classes one tool call. A shell call whose every segment is a read-only program is exploration. */
export function toolIntent(tool: ToolCall, mapping: IntentMapping = DEFAULT_INTENT_MAPPING): ToolIntent {
  const name = tool.name;
  const lower = name.toLowerCase();
  const p = prepare(mapping);
  if (tool.command && (SHELL_TOOLS.has(lower) || SCRIPT_TOOLS.has(lower))) {
    const segs = commandSegments(tool.command).filter((s) => s[0] !== 'cd');
    const readOnly =
      segs.length > 0 && segs.every((s) => p.readOnlyCommands.some((words) => startsWithWords(s, words)));
    if (readOnly) return 'explore';
  }
  if (p.explore.has(lower)) return 'explore';
  if (p.execute.has(lower)) return 'execute';
  return 'other';
}

function startsWithWords(segment: string[], words: readonly string[]): boolean {
  return words.every((w, i) => segment[i] === w);
}
