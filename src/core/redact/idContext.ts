import { forEachStringLiteral } from './jsonStrings';
import { isIdKey, strictFindings } from './strictRules';

/**
 * Telling ids from secrets of the same shape (hex, UUIDs, long numbers, short random runs)
 * with the context a trace gives, so that default redaction can take bare values of those
 * shapes (a Heroku key is a UUID, a Facebook secret 32 hex digits) and still leave the
 * commit hashes, session UUIDs and timestamps every trace is full of.
 *
 * Two kinds of context (docs/redaction.md, "Ids the trace explains"):
 * - the trace's own declarations: every value it stores under a key that names an id
 *   (`uuid`, `sessionId`, `tool_use_id`, `traceId`, OTLP attributes `session.id`, …) and
 *   the ids in its file names are ids wherever they appear in free text (TraceIds);
 * - the text around a value: forms that say id whatever the trace (idContextAt): a name
 *   that says id before it (`"uuid":"…"` in a tool's output, `root=UUID=…`), git's
 *   (`commit <h>`, `<h>..<h>`, `/blob/<h>/`, `.git/objects/ab/<h>`), a file name
 *   (`<uuid>.jsonl`, `<h>@v2`), a suffix of a longer name (`core-c39b92f3645816ae`), a
 *   web address's path part, a GUID in braces, a time-based UUID, a timestamp after a
 *   time word, hex too long for a key.
 */

/** Distinct ids kept per redactor: beyond it a trace's further ids are not remembered (they are then redacted where they stand bare: the safe side). */
export const MAX_DECLARED_IDS = 200_000;
/** Characters of texts remembered as learnt from (learnJsonOnce): beyond it texts are learnt from again (the same ids, more work). */
const MAX_REMEMBERED_CHARS = 16 * 2 ** 20;
/** Longest value remembered as an id. */
const MAX_ID_LENGTH = 256;
/** The id-shaped pieces inside a declared value (`codex:<uuid>:<uuid>`, `tool-<uuid>`, `claude:<uuid>:msg_…`). */
const ID_PIECE =
  /(?<![0-9A-Za-z])(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{16,}|[0-9]{16,})(?![0-9A-Za-z])/g;
/** An OTLP attribute (`{"key": "session.id", "value": {"stringValue": "…"}}`): the literal holding the value is the third after the name (`"value"`, `"stringValue"`, the value), on the same line or not (pretty-printed files are read line by line). */
const ATTRIBUTE_LITERALS = 3;
/** A text that may hold hex of 16 digits, a UUID or a number of 16 digits: 8 hex digits in a row (a cheap test first: most texts have none). */
const MAY_HOLD_ID = /[0-9a-fA-F]{8}/;

/**
 * The ids a trace declares in its own structure, collected in a first pass over its JSON
 * texts (and its file names) before anything is redacted. Bounded: at most
 * MAX_DECLARED_IDS values of at most MAX_ID_LENGTH characters.
 */
export class TraceIds {
  /** Each id, with how the trace declared it (`id field`, `file name`, or the context it was seen in: `git`, `braced GUID`…). */
  private readonly ids = new Map<string, string>();
  /** Literals left until an OTLP attribute's value, after a `"key"` that names an id (kept across texts). */
  private attributeLiterals = 0;
  /** Texts learnt from already (learnJsonOnce), with their total length bounded by MAX_REMEMBERED_CHARS. */
  private readonly learnt = new Set<string>();
  /** Values learnt from already (learnValueOnce), counted in the same bound. */
  private readonly learntValues = new Set<string>();
  private learntChars = 0;

  /** How many distinct ids are known. */
  get size(): number {
    return this.ids.size;
  }

  /** Whether `value` (or, for hex groups joined by `:`, each group) was declared. */
  has(value: string): boolean {
    return this.how(value) !== null;
  }

  /** How `value` was declared (`id field`, `file name`, `git`…), or null. */
  how(value: string): string | null {
    const own = this.ids.get(value) ?? this.ids.get(value.toLowerCase());
    if (own !== undefined) return own;
    const parts = value.split(':');
    if (parts.length < 2) return null;
    const each = parts.map((p) => this.ids.get(p) ?? this.ids.get(p.toLowerCase()));
    return each.every((h) => h !== undefined) ? each[0]! : null;
  }

  /** Remembers a declared id and the id-shaped pieces inside it. */
  add(value: string, how = 'id field'): void {
    if (value.length === 0 || value.length > MAX_ID_LENGTH || this.ids.size >= MAX_DECLARED_IDS || this.ids.has(value))
      return;
    this.ids.set(value, how);
    // Every id-shaped piece holds 8 hex digits in a row: most ids (`toolu_…`, `msg_…`) hold none,
    // and MAY_HOLD_ID's test costs far less than matchAll's iterator and copy of ID_PIECE.
    if (!MAY_HOLD_ID.test(value)) return;
    for (const m of value.matchAll(ID_PIECE))
      if (m[0] !== value && this.ids.size < MAX_DECLARED_IDS && !this.ids.has(m[0])) this.ids.set(m[0], how);
  }

  /**
   * learnJson, skipped for a text learnt from before. Exact: what a text declares depends on
   * the text alone when no OTLP attribute's value is pending before it (attributeLiterals 0)
   * nor after it, and learning an id again, or past MAX_DECLARED_IDS, adds nothing. The
   * export's texts repeat across traces (tool names, commands, paths, system texts).
   */
  learnJsonOnce(text: string): void {
    const clear = this.attributeLiterals === 0;
    if (clear && this.learnt.has(text)) return;
    this.learnJson(text);
    if (clear && this.attributeLiterals === 0 && this.learntChars + text.length <= MAX_REMEMBERED_CHARS) {
      this.learnt.add(text);
      this.learntChars += text.length;
    }
  }

  /**
   * learnJsonOnce of the one literal `JSON.stringify(value)`, without writing it: such a text
   * has no key, so learnJson reads it only for ids in context (`learnInContext` of the value;
   * its JSON holds the same runs of hex, escapes never being hex digits), and takes one
   * literal off a pending OTLP attribute. Remembered apart from the JSON texts, by value.
   * `learntAsId`: learnIdValue learnt everything this would learn from it (it said so).
   */
  learnValueOnce(value: string, learntAsId = false): void {
    if (this.attributeLiterals > 0) {
      this.attributeLiterals--;
      this.learnInContext(value);
      return;
    }
    // Learnt from by learnIdValue just before (its answer true): nothing more to learn.
    if (learntAsId || this.learntValues.has(value)) return;
    this.learnInContext(value);
    this.rememberValue(value);
  }

  /** A value learnValueOnce need not read again, within the bound on what is remembered. */
  private rememberValue(value: string): void {
    if (this.learntChars + value.length <= MAX_REMEMBERED_CHARS && !this.learntValues.has(value)) {
      this.learntValues.add(value);
      this.learntChars += value.length;
    }
  }

  /**
   * What learnJson learns from `{"<an id key>": value}` (a column of ids, as the Parquet export
   * declares its id columns), without writing and reading that JSON: the value is an id, and
   * so are the ids in JSON held in it, or those its text shows in an id's context. True when
   * learnValueOnce of the value, next, would learn nothing more.
   */
  learnIdValue(value: string): boolean {
    // An OTLP attribute's value pending: the literals must be counted as learnJson counts them.
    if (this.attributeLiterals > 0) {
      this.learnJson(JSON.stringify({ id: value }));
      return false;
    }
    this.add(value);
    if (value.length > 2 && (value[0] === '{' || value[0] === '[') && value.includes('"')) {
      this.learnJson(value, 1);
      return false;
    }
    this.learnInContext(value);
    // All learnValueOnce would learn from it (its ids in context; learning them again adds nothing). The export's id
    // columns are also text columns, so each id comes back there, told so (learnValueOnce's `learntAsId`) rather than
    // remembered: most ids (a call's, a tool call's) occur once in a whole export, and a million of them would fill
    // the memory that spares the texts that do repeat.
    return true;
  }

  /** The ids in a trace's file name (`ae4a77f8-….jsonl`, `agent-aac57f5.jsonl`). */
  learnFileName(name: string): void {
    for (const m of name.matchAll(ID_PIECE)) this.add(m[0], 'file name of the trace');
  }

  /**
   * The ids a JSON text declares: every string or number under a key that names an id,
   * OTLP attributes whose `key` names one, and the same inside JSON held in a string
   * (a tool's arguments); and every value of an id's shape that the text shows in an
   * id's context (idContextAt): once a trace shows a value as an id (a GUID in braces, a
   * hash after `commit`), it is an id wherever it appears, before or after (redacting it
   * in one place and leaving it in another would hide nothing). A text that is not JSON
   * declares nothing by its structure, but is still read for ids in context.
   */
  learnJson(text: string, depth = 0): void {
    let previous: [number, number] | null = null;
    let literals = 0;
    forEachStringLiteral(text, (start, end) => {
      literals++;
      const prev = previous;
      previous = [start, end];
      const raw = text.slice(start, end);
      const attribute = this.attributeLiterals > 0;
      if (attribute) this.attributeLiterals--;
      const afterKey = prev !== null && start - prev[1] <= 16 && /^\s*:\s*$/.test(text.slice(prev[1], start));
      if (afterKey) {
        const key = text.slice(prev[0] + 1, prev[1] - 1);
        // Most values need no decoding: they name no id and hold nothing of an id's shape.
        const nested = raw.startsWith('"{') || raw.startsWith('"[');
        if (!nested && !attribute && key !== 'key' && !MAY_HOLD_ID.test(raw) && !isIdKey(key)) return;
        const value = decode(raw);
        if (value === null) return;
        if (isIdKey(key) || (attribute && /Value$/.test(key)))
          this.add(value, attribute && !isIdKey(key) ? 'OTLP id attribute' : 'id field');
        // OTLP's attribute: the id's name is the value of `key`, the id the `…Value` after it.
        if (key === 'key' && isIdKey(value)) this.attributeLiterals = ATTRIBUTE_LITERALS;
        if (depth < 2 && value.length > 2 && (value[0] === '{' || value[0] === '[') && value.includes('"'))
          this.learnJson(value, depth + 1);
        else this.learnInContext(value);
        return;
      }
      if (raw.length > 16 && MAY_HOLD_ID.test(raw)) this.learnInContext(decode(raw) ?? raw);
      // A number under an id key (`"id": 1234567890123456789`): after the key's colon.
      const key = text.slice(start + 1, end - 1);
      if (isIdKey(key)) {
        const m = /^\s*:\s*(-?\d{6,40})\b/.exec(text.slice(end, end + 48));
        if (m) this.add(m[1]!);
      }
    });
    if (literals === 0 && depth === 0) this.learnInContext(text);
  }

  /** The values of an id's shape in `text` that stand in an id's context. */
  private learnInContext(text: string): void {
    if (text.length <= 16 || !MAY_HOLD_ID.test(text)) return;
    for (const f of strictFindings(text)) {
      if (f.kind === 'strict-short' || f.kind === 'strict-credential') continue;
      const why = idContextAt(text, f.start, f.end, f.kind);
      if (why !== null) this.add(text.slice(f.start, f.end), why);
    }
  }
}

function decode(literal: string): string | null {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return null;
  }
}

/** A name that says id just before a value, with its operator (`"uuid":"`, `\"id\": \"`, `root=UUID=`, `**UUID:** \``, `--trace-id=`). */
const NAMED_ID = /([A-Za-z][A-Za-z0-9_.-]{0,63})[\\"'`*\s]{0,4}[:=][\\"'`*\s]{0,6}$/;
/** Git's forms around a commit or object hash. */
const GIT_BEFORE =
  /(?:\bcommit:?\s+|\bMerge:\s+(?:[0-9a-f]{7,40}\s+)?|\bgit\s+(?:show|checkout|revert|cherry-pick|reset(?:\s+--\w+)?|diff|log|rebase(?:\s+-i)?|switch)\s+|\[[\w./-]+\s+(?:\(root-commit\)\s+)?|\.\.\.?|\/(?:tree|blob|commits?|raw|blame|compare|pull\/\d+\/commits)\/|\.git\/objects\/[0-9a-f]{2}\/|\bindex\s+)$/;
/** What follows a hash in git's forms (`<h>..<h>`, `[main <h>]`, `index <h>..<h> 100644`). */
const GIT_AFTER = /^(?:\.\.\.?[0-9a-f]{7,40}|\])/;
/** A file name's extension after the value (`<uuid>.jsonl`), or Claude Code's versioned backup (`<hash>@v2`). */
const FILE_AFTER = /^(?:\.[A-Za-z][A-Za-z0-9]{0,9}\b|@v\d+)/;
/** A name glued to the value by `-`, `_` or `.` (the name's characters up to 48 back). */
const NAME_BEFORE = /([0-9A-Za-z@+._-]{1,48}[0-9A-Za-z])[_.-]+$/;
/** A web address up to the value: the value is one of its path parts (not its query). */
const URL_PATH_BEFORE = /\bhttps?:\/\/[^\s?#"'`<>]*\/$/;
/** A time word before a number (`"created_time_ns": `, `startTimeUnixNano=`, `ts `). */
const TIME_BEFORE = /(?:time|nano|_ns|_us|_ms|stamp|\bts|_at|date|epoch)[\w.-]{0,16}["'`]?\s*[:=]?\s*["'`]?$/i;
/** Longest hex taken as a possible key: SHA-512's 128 digits; longer runs are data (a message, a signature). */
const MAX_KEY_HEX = 128;
/** How far back the context is read. */
const REACH = 96;
/** How far around a value idContextAt reads (characters before it, after it): a redactor's memory of clean texts needs it. */
export const CONTEXT_REACH = { before: REACH, after: 16 } as const;

/** Unix times of 2000-01-01 and 2100-01-01 in seconds. */
const YEAR_2000 = 946_684_800;
const YEAR_2100 = 4_102_444_800;

/** Whether a number reads as a Unix time between 2000 and 2100 in seconds, milli-, micro- or nanoseconds. */
function timestampSized(digits: string): boolean {
  const n = Number(digits);
  return [1, 1e3, 1e6, 1e9].some((scale) => n / scale >= YEAR_2000 && n / scale < YEAR_2100);
}

/** Whether a UUID is time-based (versions 1, 6, 7 of RFC 9562) with a time between 2000 and 2100: made by a clock, not drawn at random. */
function timeBasedUuid(uuid: string): boolean {
  const m = /^([0-9a-f]{8})-([0-9a-f]{4})-([167])([0-9a-f]{3})-[89ab]/i.exec(uuid);
  if (!m) return false;
  if (m[3] === '7') {
    const ms = parseInt(m[1]! + m[2]!, 16);
    return ms / 1e3 >= YEAR_2000 && ms / 1e3 < YEAR_2100;
  }
  // Versions 1 and 6: 100-ns intervals since 1582-10-15 (12,219,292,800 s before 1970).
  const hex = m[3] === '1' ? m[4]! + m[2]! + m[1]! : m[1]! + m[2]! + m[4]!;
  const seconds = parseInt(hex, 16) / 1e7 - 12_219_292_800;
  return seconds >= YEAR_2000 && seconds < YEAR_2100;
}

/**
 * Why the value at [start, end) of `text` reads as an id from the text around it, or null
 * when nothing there says id (then it may be a secret). `kind` is the shape rule that took it.
 */
export function idContextAt(text: string, start: number, end: number, kind: string): string | null {
  const value = text.slice(start, end);
  const before = text.slice(Math.max(0, start - REACH), start);
  const after = text.slice(end, end + 16);
  const named = NAMED_ID.exec(before);
  if (named && (isIdKey(named[1]!) || isIdKey(named[1]!.toLowerCase()))) return 'named id';
  if (GIT_BEFORE.test(before) || GIT_AFTER.test(after)) return 'git';
  if (FILE_AFTER.test(after)) return 'file name';
  // W3C trace context (`traceparent: 00-<trace id>-<parent id>-01`): a trace id and a span id.
  if (
    /(?<![0-9A-Za-z])[0-9a-f]{2}-$/.test(before) &&
    /^-[0-9a-f]{2}(?![0-9A-Za-z])/.test(after) &&
    /^[0-9a-f]{32}-[0-9a-f]{16}$/.test(value)
  )
    return 'trace context';
  // A suffix of a longer name: a build hash (`edgerunner_core-c39b92f3645816ae`), a store path's, a model number's.
  // The name must hold 5 letters or more: a short token prefix (`xoxa-`, `sk-`) says secret, not name.
  const name = NAME_BEFORE.exec(before);
  if (name && kind !== 'strict-credential' && (name[1]!.match(/[A-Za-z]/g)?.length ?? 0) >= 5) return 'name suffix';
  if (URL_PATH_BEFORE.test(before)) return 'web address path';
  if (before.endsWith('{') && after.startsWith('}')) return 'braced GUID';
  if (kind === 'strict-uuid' && timeBasedUuid(value)) return 'time-based UUID';
  if (kind === 'strict-number' && timestampSized(value) && TIME_BEFORE.test(before)) return 'timestamp';
  if (kind === 'strict-hex' && value.replace(/[-:]/g, '').length > MAX_KEY_HEX) return 'data';
  return null;
}

/**
 * The regexes of this module that scan text of any length, for the ReDoS check
 * (test/unit/core/redact/linear.test.ts). The others read a window around one value
 * (REACH characters before it, 16 after), so their cost per value is bounded.
 */
export const ID_CONTEXT_PATTERNS: readonly RegExp[] = [ID_PIECE, MAY_HOLD_ID];
