import type { Session } from '../trace/model';

/**
 * A call's transcript, as VS Code's chat debug view shows a request: the prompt that
 * started its turn, what the model answered (text, reasoning, tool calls with their input)
 * and what its tools returned. The model keeps no text, only where each record is, so the
 * trace worker reads those lines again on demand (`transcriptPlan` says which bytes) and
 * this file turns the records into entries (`transcriptEntries`). Every text is trace
 * text: shown as text only, and clipped to a size the page asks for.
 */

/** What an entry of a transcript is. */
export type TranscriptKind = 'prompt' | 'input' | 'assistant' | 'thinking' | 'tool-call' | 'tool-result';

/** One piece of a call's transcript. */
export interface TranscriptEntry {
  kind: TranscriptKind;
  /** "Prompt", "Bash", "Result of Bash"…: trace text in part (tool names). */
  label: string;
  /** The text, at most the asked size. */
  text: string;
  /** Characters of the whole text (more than `text` holds when clipped). */
  chars: number;
  /** A tool result that was an error. */
  error: boolean;
  /** Where the record is: the file's index in the trace and its 0-based line. */
  file: number;
  line: number;
}

/** A call's transcript as the page gets it. */
export interface CallTranscript {
  sessionId: string;
  callIndex: number;
  entries: TranscriptEntry[];
  /** The size each text was clipped to. */
  maxChars: number;
  /** What could not be shown, in words (a record too large, a file gone, nothing readable). */
  notes: string[];
}

/** Bytes of a trace file to read again: [from, to), `to` null up to the end, ONE_LINE for one line; the first byte starts line `firstLine`. */
export interface TranscriptRange {
  file: number;
  from: number;
  to: number | null;
  firstLine: number;
}

/** `to` of a range that is one line. */
export const ONE_LINE = -1;

/** The ranges of one call's records, and which of Claude Code's side-chain records belong to it. */
export interface TranscriptPlan {
  ranges: TranscriptRange[];
  /** Claude Code 1.0 kept sub-agents inside the log (`isSidechain`): a main session's transcript leaves theirs out, a sub-agent's keeps only them. */
  sidechain: boolean;
}

/** A record read again: its line and its text (`cut`: longer than the read allowed, not whole). */
export interface TranscriptRecord {
  file: number;
  line: number;
  text: string;
  cut: boolean;
}

/** Text each entry holds unless the page asks for more ("show more"). */
export const TRANSCRIPT_CHARS = 2000;
/** The most the page may ask for per entry. */
export const TRANSCRIPT_MAX_CHARS = 256_000;

/**
 * Where a call's records are: the prompt of its turn (for the turn's first call), the
 * call's own records up to the next call or the next prompt of its session, and the lines
 * of its tools' results that fall outside them. Null when there is no such call.
 */
export function transcriptPlan(session: Session, callIndex: number): TranscriptPlan | null {
  const call = session.calls[callIndex];
  if (!call) return null;
  const ranges: TranscriptRange[] = [];
  const start = call.source;
  // The call's records end where the session's next call or next prompt starts in the same file.
  let end: number | null = null;
  const next = session.calls[callIndex + 1];
  if (next && next.source.file === start.file && next.source.offset > start.offset) end = next.source.offset;
  for (const t of session.turns) {
    if (t.source.file === start.file && t.source.offset > start.offset && (end === null || t.source.offset < end))
      end = t.source.offset;
  }
  const previous = session.calls[callIndex - 1];
  const turn = call.turn !== null ? session.turns[call.turn] : undefined;
  if (turn && (!previous || previous.turn !== call.turn)) {
    // The turn's first call: its prompt, and what came between it and the call (attachments, injected context).
    const to = turn.source.file === start.file && turn.source.offset < start.offset ? start.offset : ONE_LINE;
    ranges.push({ file: turn.source.file, from: turn.source.offset, to, firstLine: turn.source.line });
  }
  ranges.push({ file: start.file, from: start.offset, to: end, firstLine: start.line });
  for (const tool of call.toolCalls) {
    const r = tool.resultSource;
    if (!r) continue;
    const inside = r.file === start.file && r.offset >= start.offset && (end === null || r.offset < end);
    if (!inside && !ranges.some((x) => x.file === r.file && x.from === r.offset))
      ranges.push({ file: r.file, from: r.offset, to: ONE_LINE, firstLine: r.line });
  }
  return { ranges, sidechain: session.role !== 'main' };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** JSON given as a string (Codex's `arguments`) pretty-printed when it parses, else as it is. */
function prettyJson(v: unknown): string {
  if (typeof v === 'string') {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2) ?? '';
}

/** The text of a content list (Anthropic blocks, Codex parts): its text parts joined; other parts named. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content))
    return isObject(content) ? (str(content['text']) ?? str(content['content']) ?? prettyJson(content)) : '';
  return content
    .map((b) => {
      if (typeof b === 'string') return b;
      if (!isObject(b)) return '';
      const text = str(b['text']);
      if (text !== null) return text;
      const type = str(b['type']) ?? 'part';
      return `[${type}]`;
    })
    .filter((t) => t !== '')
    .join('\n');
}

type Piece = Omit<TranscriptEntry, 'text' | 'chars' | 'file' | 'line'> & { text: string };

/** Claude Code: `message.content` as a string or blocks (text, thinking, tool_use, tool_result). */
function claudePieces(r: Record<string, unknown>, names: Map<string, string>): Piece[] {
  const m = r['message'];
  if (!isObject(m)) return [];
  const user = r['type'] === 'user' || m['role'] === 'user';
  const content = m['content'];
  const userKind: TranscriptKind = r['isMeta'] === true || r['isCompactSummary'] === true ? 'input' : 'prompt';
  const userLabel =
    r['isCompactSummary'] === true ? 'Compaction summary' : userKind === 'input' ? 'Injected input' : 'Prompt';
  if (typeof content === 'string')
    return [
      { kind: user ? userKind : 'assistant', label: user ? userLabel : 'Assistant', text: content, error: false },
    ];
  if (!Array.isArray(content)) return [];
  const out: Piece[] = [];
  for (const b of content) {
    if (!isObject(b)) continue;
    switch (b['type']) {
      case 'text':
        out.push({
          kind: user ? userKind : 'assistant',
          label: user ? userLabel : 'Assistant',
          text: str(b['text']) ?? '',
          error: false,
        });
        break;
      case 'thinking':
        out.push({ kind: 'thinking', label: 'Thinking', text: str(b['thinking']) ?? '', error: false });
        break;
      case 'tool_use': {
        const name = str(b['name']) ?? 'tool';
        const id = str(b['id']);
        if (id) names.set(id, name);
        out.push({ kind: 'tool-call', label: name, text: prettyJson(b['input'] ?? {}), error: false });
        break;
      }
      case 'tool_result': {
        const id = str(b['tool_use_id']);
        out.push({
          kind: 'tool-result',
          label: `Result of ${(id && names.get(id)) ?? 'a tool'}`,
          text: contentText(b['content']),
          error: b['is_error'] === true,
        });
        break;
      }
      case 'image':
        out.push({
          kind: user ? userKind : 'assistant',
          label: user ? userLabel : 'Assistant',
          text: '[image]',
          error: false,
        });
        break;
    }
  }
  return out;
}

/** Codex: `response_item` records (messages, function and custom tool calls and their outputs, reasoning summaries). */
function codexPieces(p: Record<string, unknown>, names: Map<string, string>): Piece[] {
  const type = p['type'];
  const callId = str(p['call_id']);
  switch (type) {
    case 'message': {
      const role = p['role'];
      const text = contentText(p['content']);
      if (role === 'assistant') return [{ kind: 'assistant', label: 'Assistant', text, error: false }];
      if (role === 'user') return [{ kind: 'prompt', label: 'Prompt', text, error: false }];
      return [{ kind: 'input', label: role === 'developer' ? 'Developer message' : 'Input', text, error: false }];
    }
    case 'reasoning': {
      const summary = Array.isArray(p['summary']) ? contentText(p['summary']) : '';
      return summary ? [{ kind: 'thinking', label: 'Reasoning summary', text: summary, error: false }] : [];
    }
    case 'function_call':
    case 'custom_tool_call': {
      const name = str(p['name']) ?? 'tool';
      if (callId) names.set(callId, name);
      return [
        {
          kind: 'tool-call',
          label: name,
          text: prettyJson(type === 'function_call' ? p['arguments'] : p['input']),
          error: false,
        },
      ];
    }
    case 'local_shell_call': {
      const action = isObject(p['action']) ? p['action'] : {};
      const command = Array.isArray(action['command']) ? action['command'].map(String).join(' ') : prettyJson(action);
      if (callId) names.set(callId, 'shell');
      return [{ kind: 'tool-call', label: 'shell', text: command, error: false }];
    }
    case 'function_call_output':
    case 'custom_tool_call_output':
    case 'local_shell_call_output': {
      const output = p['output'];
      const text = isObject(output) ? (str(output['content']) ?? contentText(output)) : contentText(output);
      return [
        { kind: 'tool-result', label: `Result of ${(callId && names.get(callId)) ?? 'a tool'}`, text, error: false },
      ];
    }
  }
  return [];
}

/** This format's canonical records: a turn's prompt preview, a tool call's command or file and its error text. */
function canonicalPieces(r: Record<string, unknown>): Piece[] {
  if (r['type'] === 'turn') return [{ kind: 'prompt', label: 'Prompt', text: str(r['preview']) ?? '', error: false }];
  if (r['type'] !== 'tool_call') return [];
  const name = str(r['name']) ?? 'tool';
  const out: Piece[] = [
    { kind: 'tool-call', label: name, text: str(r['command']) ?? str(r['targetFile']) ?? '', error: false },
  ];
  const error = str(r['errorText']);
  if (error !== null) out.push({ kind: 'tool-result', label: `Result of ${name}`, text: error, error: true });
  return out;
}

/**
 * The entries of a call's records, in file order, each text clipped to `maxChars`
 * (characters, not bytes). Records that are not JSON, or whose shape no reader here
 * knows, give nothing; a record longer than the read allowed gives a note.
 */
export function transcriptEntries(
  records: readonly TranscriptRecord[],
  maxChars: number,
  session: { id: string; sidechain: boolean },
): { entries: TranscriptEntry[]; notes: string[] } {
  const entries: TranscriptEntry[] = [];
  const notes: string[] = [];
  const names = new Map<string, string>();
  const limit = Math.max(1, Math.min(TRANSCRIPT_MAX_CHARS, Math.floor(maxChars)));
  for (const rec of records) {
    if (rec.cut) {
      notes.push(`Line ${rec.line + 1} is too long to read here (it was not read whole): Show source opens it.`);
      continue;
    }
    let r: unknown;
    try {
      r = JSON.parse(rec.text);
    } catch {
      continue;
    }
    if (!isObject(r)) continue;
    if (typeof r['isSidechain'] === 'boolean' && r['isSidechain'] !== session.sidechain) continue;
    // This format's records name their session: other sessions' records between the call's lines are not its own.
    if (typeof r['session'] === 'string' && r['session'] !== session.id) continue;
    const pieces = isObject(r['message'])
      ? claudePieces(r, names)
      : r['type'] === 'response_item' && isObject(r['payload'])
        ? codexPieces(r['payload'], names)
        : canonicalPieces(r);
    for (const p of pieces) {
      if (p.text.trim() === '') continue;
      const chars = [...p.text].length;
      const text = chars > limit ? [...p.text].slice(0, limit).join('') : p.text;
      entries.push({ ...p, text, chars, file: rec.file, line: rec.line });
    }
  }
  return { entries, notes };
}
