/**
 * Checks every parsed record (and whole document) gets before a format reader sees it,
 * so no reader has to defend itself against the two kinds of hostile JSON that broke
 * them: values nested thousands of levels deep (any recursive walk, `JSON.stringify`
 * and `postMessage` included, overflows the stack on them) and token counts that are
 * not counts ("0x10", -5, 1e308, 2^64), which turned sums into ∞ and ratios into NaN.
 *
 * Both walks are iterative (an explicit stack), so they are safe on any input.
 */

/** The largest whole number a double holds exactly; a larger "count" has lost digits. */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/** Keys whose value is a token count or a list of them (input_tokens, promptTokens, input_lens, input_length, output_token_count…). */
const COUNT_KEY = /(tokens|_lens|_length|_token_count)$/i;
/** Objects whose plain fields are all token counts (the canonical `tokens`). */
const COUNT_OBJECT_KEY = /^tokens$/i;
/** A count written as a string: decimal digits only (OTLP writes int64 values that way). */
const DECIMAL_COUNT = /^\s*\d+\s*$/;

/** True when `value` is a usable token count (or a decimal string of one). */
export function isCountLike(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= MAX_COUNT;
  if (typeof value === 'string') return DECIMAL_COUNT.test(value) && Number(value) <= MAX_COUNT;
  return false;
}

/** A bad count found by `checkRecord`: where it was (the keys and indexes down to it) and what it held. */
export interface BadCount {
  path: Array<string | number>;
  /** What the count is called: its key (with its parent's), or an OTLP attribute's name. */
  name: string;
  raw: unknown;
}

/** What `checkRecord` found. */
export interface RecordCheck {
  /** The value nests deeper than the limit; nothing else was checked. */
  readonly tooDeep: boolean;
  /** Token counts that were not counts; each was replaced with null in the value. */
  readonly badCounts: readonly BadCount[];
}

/** The answers that carry no bad count, shared: nearly every record gets FINE, and a new object for each was garbage. */
const FINE: RecordCheck = Object.freeze({ tooDeep: false, badCounts: Object.freeze([]) });
const TOO_DEEP: RecordCheck = Object.freeze({ tooDeep: true, badCounts: Object.freeze([]) });

interface Node {
  value: unknown;
  depth: number;
  parent: Node | null;
  key: string | number;
  /** Every plain field of this value is a count (it sits under `tokens` or `usage`). */
  countsInside: boolean;
}

/** "usage.input_tokens": the key and the nearest named parent. */
function nameOf(node: Node, key: string | null): string {
  const names: string[] = key === null ? [] : [key];
  for (let n: Node | null = node; n && n.parent && names.length < 2; n = n.parent)
    if (typeof n.key === 'string') names.unshift(n.key);
  return names.join('.');
}

function pathOf(node: Node): Array<string | number> {
  const path: Array<string | number> = [];
  for (let n: Node | null = node; n && n.parent; n = n.parent) path.push(n.key);
  return path.reverse();
}

/**
 * Answers of COUNT_KEY by key: a log repeats a few dozen keys millions of times. Bounded
 * in count and in key length, since keys are trace data (a 10 MiB key is not kept).
 */
const countKeyMemo = new Map<string, boolean>();
const COUNT_KEY_MEMO_MAX = 4096;
const COUNT_KEY_MEMO_KEY_CHARS = 64;

function isCountKey(key: string): boolean {
  // COUNT_KEY's endings all end in s, h or t (either case): any other key is answered without the memo.
  const last = key.charCodeAt(key.length - 1) | 0x20;
  if (last !== 0x73 && last !== 0x68 && last !== 0x74) return false;
  const known = countKeyMemo.get(key);
  if (known !== undefined) return known;
  const answer = COUNT_KEY.test(key);
  if (countKeyMemo.size < COUNT_KEY_MEMO_MAX && key.length <= COUNT_KEY_MEMO_KEY_CHARS) countKeyMemo.set(key, answer);
  return answer;
}

/**
 * The same walk as `checkRecordFully`, without changing anything or building a node per value:
 * 'deep', 'bad' (some count is not a count: `checkRecordFully` then finds, reports and replaces
 * them) or 'fine', which nearly every record is. Its decisions are `checkRecordFully`'s, rule for
 * rule; the two parallel stacks hold each value, its depth and whether its plain fields
 * are counts (bit 0 of `flags`).
 */
function quickCheck(root: unknown, maxDepth: number): 'deep' | 'bad' | 'fine' {
  if (typeof root !== 'object' || root === null) return 'fine';
  const answer = quickWalk(root, maxDepth);
  // The stacks are reused by every record: emptied, so they hold on to nothing of this one.
  quickValues.length = 0;
  quickFlags.length = 0;
  return answer;
}

/** quickCheck's two stacks, made once (every record is walked; the walk is never re-entered). */
const quickValues: object[] = [];
const quickFlags: number[] = [];

function quickWalk(root: object, maxDepth: number): 'deep' | 'bad' | 'fine' {
  const values = quickValues;
  const flags = quickFlags;
  values.push(root);
  flags.push(0);
  while (values.length > 0) {
    const v = values.pop()!;
    const f = flags.pop()!;
    const depth = (f >> 1) + 1;
    if (depth > maxDepth) return 'deep';
    const countsInside = (f & 1) === 1;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (countsInside && item !== null && typeof item !== 'object') {
          if (!isCountLike(item)) return 'bad';
        } else if (typeof item === 'object' && item !== null) {
          values.push(item);
          flags.push(depth << 1);
        }
      }
      continue;
    }
    const record = v as Record<string, unknown>;
    const attributeKey = record['key'];
    if (typeof attributeKey === 'string' && COUNT_KEY.test(attributeKey)) {
      const value = record['value'];
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const typed = value as Record<string, unknown>;
        for (const k of ['intValue', 'doubleValue', 'stringValue']) {
          const raw = typed[k];
          if (raw !== undefined && raw !== null && !isCountLike(raw)) return 'bad';
        }
      }
    }
    for (const key in record) {
      if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
      const item = record[key];
      if (item === null || item === undefined) continue;
      if (typeof item !== 'object') {
        if (typeof item !== 'boolean' && (countsInside || isCountKey(key)) && !isCountLike(item)) return 'bad';
        continue;
      }
      if (Array.isArray(item)) {
        values.push(item);
        flags.push((depth << 1) | (isCountKey(key) ? 1 : 0));
        continue;
      }
      if (isCountKey(key) && 'value' in item) {
        const raw = (item as Record<string, unknown>)['value'];
        if (raw !== null && typeof raw !== 'object' && !isCountLike(raw)) return 'bad';
      }
      values.push(item);
      flags.push((depth << 1) | (COUNT_OBJECT_KEY.test(key) ? 1 : 0));
    }
  }
  return 'fine';
}

/**
 * Walks a parsed value: says whether it nests deeper than `maxDepth`, and replaces every
 * token count that is not a whole number from 0 to 2^53 − 1 (a hex or binary string, a
 * negative number, 1e308, 2^64, a number that overflowed to Infinity) with null, so
 * every reader reads it as unknown. The caller reports what it returns. Runs on every
 * record, so a quick walk that changes nothing decides first, and the full walk (paths,
 * names, replacing) runs only on a record with a bad count.
 */
export function checkRecord(root: unknown, maxDepth: number): RecordCheck {
  const quick = quickCheck(root, maxDepth);
  if (quick === 'fine') return FINE;
  if (quick === 'deep') return TOO_DEEP;
  return checkRecordFully(root, maxDepth);
}

/** The walk that finds, names and replaces bad counts (see checkRecord); exported so a test holds the quick walk to it. */
export function checkRecordFully(root: unknown, maxDepth: number): RecordCheck {
  const badCounts: BadCount[] = [];
  const stack: Node[] = [{ value: root, depth: 0, parent: null, key: '', countsInside: false }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v !== 'object' || v === null) continue;
    const depth = node.depth + 1;
    if (depth > maxDepth) return { tooDeep: true, badCounts: [] };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (node.countsInside && item !== null && typeof item !== 'object') {
          if (!isCountLike(item)) {
            badCounts.push({ path: [...pathOf(node), i], name: nameOf(node, null), raw: item });
            v[i] = null;
          }
        } else if (typeof item === 'object' && item !== null)
          stack.push({ value: item, depth, parent: node, key: i, countsInside: false });
      }
      continue;
    }
    const record = v as Record<string, unknown>;
    // An OTLP attribute: {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "…"}}.
    const attributeKey = typeof record['key'] === 'string' && COUNT_KEY.test(record['key']) ? record['key'] : null;
    for (const key of Object.keys(record)) {
      const item = record[key];
      const isCount = node.countsInside || COUNT_KEY.test(key);
      if (item === null || item === undefined) continue;
      if (typeof item !== 'object') {
        if (isCount && typeof item !== 'boolean' && !isCountLike(item)) {
          badCounts.push({ path: [...pathOf(node), key], name: nameOf(node, key), raw: item });
          record[key] = null;
        }
        continue;
      }
      // AIPerf writes each metric as {value, unit}: under a count's key (input_sequence_length) its value is a count.
      if (!Array.isArray(item) && COUNT_KEY.test(key) && 'value' in item) {
        const metric = item as Record<string, unknown>;
        const raw = metric['value'];
        if (raw !== null && typeof raw !== 'object' && !isCountLike(raw)) {
          badCounts.push({ path: [...pathOf(node), key, 'value'], name: key, raw });
          metric['value'] = null;
        }
      }
      const countsInside = Array.isArray(item) ? COUNT_KEY.test(key) : COUNT_OBJECT_KEY.test(key);
      stack.push({ value: item, depth, parent: node, key, countsInside });
    }
    if (attributeKey !== null) {
      const value = record['value'];
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const typed = value as Record<string, unknown>;
        for (const k of ['intValue', 'doubleValue', 'stringValue']) {
          const raw = typed[k];
          if (raw !== undefined && raw !== null && !isCountLike(raw)) {
            badCounts.push({ path: [...pathOf(node), 'value', k], name: attributeKey, raw });
            typed[k] = null;
          }
        }
      }
    }
  }
  return { tooDeep: false, badCounts };
}

/** A bad count's value for a message: short, and quoted when it was a string. */
export function describeBadCount(raw: unknown): string {
  if (typeof raw === 'string') return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 39)}…` : raw);
  if (typeof raw === 'number')
    return Number.isFinite(raw) ? String(raw) : raw > 0 ? 'a number too large for JSON (Infinity)' : String(raw);
  return JSON.stringify(raw) ?? String(raw);
}

/** The diagnostic message for one bad count. */
export function badCountMessage(bad: BadCount): string {
  return `${bad.name || 'A token count'} is not a whole token count from 0 to 2^53 (${describeBadCount(bad.raw)}); read as unknown.`;
}
