/**
 * An incremental JSON parser for values too large, or nested too deeply, for the
 * usual tools: `JSON.parse` and jsonc-parser need the whole text as one string, which
 * JavaScript caps at about 512 M characters, and jsonc-parser (like anything that walks
 * a value recursively) overflows the stack on a few thousand levels of nesting.
 *
 * Text arrives in pieces of any size (a line, part of a line); the parser keeps an
 * explicit stack, never recursion, and builds the same value `JSON.parse` would
 * (including own `__proto__` keys and last-wins duplicate keys). A subtree nested
 * deeper than `maxDepth` is left out (read as null) and reported with its line, so one
 * hostile record cannot take the rest of the document down. On a syntax error it stops
 * and keeps what it built so far: a truncated document reads up to its cut.
 */

/** Where something starts: 0-based line and byte offset of the file (characters stand in for bytes within a line). */
export interface StreamPosition {
  line: number;
  offset: number;
}

/** What the parser made of its input once it ends. */
export interface StreamResult {
  /** The value (partial when `error` is set); undefined when no value started. */
  value: unknown;
  /** The first syntax error, if any: parsing stopped there. */
  error: { message: string; at: StreamPosition } | null;
  /** Where subtrees deeper than the limit were left out (at most MAX_REPORTED_PRUNES). */
  pruned: StreamPosition[];
  /** How many subtrees were left out in all. */
  prunedCount: number;
}

/** Nesting a trace record never needs; deeper subtrees are left out. Far below what recursive code can walk. */
export const MAX_JSON_DEPTH = 512;
/** The longest string JavaScript can hold (V8, 64-bit), in UTF-16 code units. */
export const MAX_STRING_CHARS = 536_870_888;
/** Containers deeper than this get no recorded position (their ancestors' stands in): bounds memory on huge documents. */
const POSITION_DEPTH = 16;
const MAX_REPORTED_PRUNES = 20;

const enum State {
  Value,
  KeyOrEnd,
  Key,
  Colon,
  AfterValue,
  String,
  Number,
  Literal,
  Skip,
  Done,
  Failed,
}

interface Frame {
  container: Record<string, unknown> | unknown[];
  isArray: boolean;
  /** The key the next value of an object goes under. */
  key: string;
}

const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
// eslint-disable-next-line no-control-regex -- JSON forbids raw control characters in strings: this finds them
const CONTROL = /[\u0000-\u001f]/;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function describe(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  return code < 0x20 || code === 0x7f ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `"${ch}"`;
}

/** Sets a key like JSON.parse does: an own property, even for "__proto__". */
function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

export class StreamingJsonParser {
  private state = State.Value;
  private readonly stack: Frame[] = [];
  private root: unknown = undefined;
  private started = false;
  private error: StreamResult['error'] = null;
  private readonly prunedAt: StreamPosition[] = [];
  private prunedCount = 0;
  private readonly positions = new WeakMap<object, StreamPosition>();

  // The token being read, which may span pieces.
  private parts: string[] = [];
  private partChars = 0;
  private stringIsKey = false;
  private escape: string | null = null;
  private token = '';
  // Next '"' and '\\' in the current piece, found once per piece and reused: scanning from
  // every string start would be quadratic on long lines of many short strings.
  private piece = 0;
  private scanPiece = -1;
  private nextQuote = -1;
  private nextSlash = -1;
  // Skipping a subtree that is too deep.
  private skipDepth = 0;
  private skipInString = false;
  private skipEscaped = false;

  // Where the current piece sits in the file.
  private line = 0;
  private lineOffset = 0;
  private column = 0;

  constructor(
    private readonly maxDepth = MAX_JSON_DEPTH,
    /** Longest string kept; the default is JavaScript's own limit (tests set it low). */
    private readonly maxStringChars = MAX_STRING_CHARS,
  ) {}

  /** The next text continues at the start of this line of the file. */
  startLine(line: number, offset: number): void {
    this.line = line;
    this.lineOffset = offset;
    this.column = 0;
  }

  /** True once the value is complete or parsing failed: later text can only be whitespace or an error. */
  get settled(): boolean {
    return this.state === State.Done || this.state === State.Failed;
  }

  /** True while inside an object or array that is not closed yet. */
  get inContainer(): boolean {
    return this.stack.length > 0;
  }

  get failed(): boolean {
    return this.state === State.Failed;
  }

  /** Where a container (object or array) of the value starts, if recorded. */
  positionOf(container: object): StreamPosition | undefined {
    return this.positions.get(container);
  }

  /** Feeds the next piece of text. */
  write(text: string): void {
    this.piece += 1;
    let i = 0;
    const n = text.length;
    while (i < n && this.state !== State.Failed) {
      switch (this.state) {
        case State.String:
          i = this.readString(text, i);
          continue;
        case State.Skip:
          i = this.skip(text, i);
          continue;
        case State.Number:
        case State.Literal: {
          const start = i;
          while (i < n && /[0-9A-Za-z+\-.]/.test(text[i]!)) i++;
          this.token += text.slice(start, i);
          if (this.token.length > 400)
            return this.fail(`a number or word longer than 400 characters ("${this.token.slice(0, 20)}…")`, start);
          if (i < n) this.finishToken(i);
          continue;
        }
        default:
          break;
      }
      const c = text.charCodeAt(i);
      if (isSpace(c)) {
        i++;
        continue;
      }
      const ch = text[i]!;
      switch (this.state) {
        case State.Value:
          i = this.startValue(i, ch);
          break;
        case State.KeyOrEnd:
        case State.Key:
          if (ch === '"') {
            this.beginString(true);
            i++;
          } else if (ch === '}' && this.state === State.KeyOrEnd) {
            this.close(i);
            i++;
          } else return this.fail(`expected a property name in double quotes, found ${describe(ch)}`, i);
          break;
        case State.Colon:
          if (ch !== ':') return this.fail(`expected ":" after a property name, found ${describe(ch)}`, i);
          this.state = State.Value;
          i++;
          break;
        case State.AfterValue: {
          const top = this.stack[this.stack.length - 1];
          if (!top) return this.fail(`unexpected ${describe(ch)} after the end of the JSON value`, i);
          if (ch === ',') this.state = top.isArray ? State.Value : State.Key;
          else if ((ch === ']' && top.isArray) || (ch === '}' && !top.isArray)) this.close(i);
          else return this.fail(`expected "," or "${top.isArray ? ']' : '}'}", found ${describe(ch)}`, i);
          i++;
          break;
        }
        case State.Done:
          return this.fail(`unexpected ${describe(ch)} after the end of the JSON value`, i);
        default:
          return this.fail(`unexpected ${describe(ch)}`, i);
      }
    }
    this.column += n;
  }

  /** Ends the input and returns the value, the first error and what was left out. */
  end(): StreamResult {
    if (this.state === State.Number || this.state === State.Literal) this.finishToken(0);
    if (this.state !== State.Done && this.state !== State.Failed && (this.started || this.stack.length > 0)) {
      this.fail('the JSON ends before its value is complete (cut off?)', 0);
    }
    return { value: this.root, error: this.error, pruned: this.prunedAt, prunedCount: this.prunedCount };
  }

  private at(index: number): StreamPosition {
    return { line: this.line, offset: this.lineOffset + this.column + index };
  }

  private fail(message: string, index: number): void {
    if (this.state === State.Failed) return;
    const at = this.at(index);
    this.error = { message, at };
    this.state = State.Failed;
  }

  private startValue(i: number, ch: string): number {
    if (ch === '{' || ch === '[') {
      if (this.stack.length >= this.maxDepth) {
        if (this.prunedAt.length < MAX_REPORTED_PRUNES) this.prunedAt.push(this.at(i));
        this.prunedCount += 1;
        this.skipDepth = 1;
        this.skipInString = false;
        this.skipEscaped = false;
        this.state = State.Skip;
        return i + 1;
      }
      const container: Frame['container'] = ch === '[' ? [] : {};
      if (this.stack.length < POSITION_DEPTH) this.positions.set(container, this.at(i));
      this.place(container);
      this.stack.push({ container, isArray: ch === '[', key: '' });
      this.state = ch === '[' ? State.Value : State.KeyOrEnd;
      return i + 1;
    }
    if (ch === ']') {
      const top = this.stack[this.stack.length - 1];
      // "[]": the array closes before its first value.
      if (top?.isArray && top.container.length === 0) {
        this.close(i);
        return i + 1;
      }
      this.fail('expected a value, found "]"', i);
      return i + 1;
    }
    if (ch === '"') {
      this.beginString(false);
      return i + 1;
    }
    if (ch === '-' || (ch >= '0' && ch <= '9')) {
      this.state = State.Number;
      this.token = '';
      this.started = true;
      return i;
    }
    if (ch === 't' || ch === 'f' || ch === 'n') {
      this.state = State.Literal;
      this.token = '';
      this.started = true;
      return i;
    }
    this.fail(`expected a value, found ${describe(ch)}`, i);
    return i + 1;
  }

  private beginString(isKey: boolean): void {
    this.state = State.String;
    this.stringIsKey = isKey;
    this.parts = [];
    this.partChars = 0;
    this.escape = null;
    this.started = true;
  }

  private addPart(part: string, index: number): boolean {
    if (part === '') return true;
    this.partChars += part.length;
    if (this.partChars > this.maxStringChars) {
      this.fail(
        `a string longer than ${this.maxStringChars.toLocaleString('en-US')} characters, the most JavaScript can hold`,
        index,
      );
      return false;
    }
    this.parts.push(part);
    return true;
  }

  private readString(text: string, i: number): number {
    const n = text.length;
    while (i < n) {
      if (this.escape !== null) {
        // An escape may be split across pieces: "\u00" + "e9".
        this.escape += text[i]!;
        i++;
        if (this.escape.length === 1) {
          if (this.escape === 'u') continue;
          const plain = ESCAPES[this.escape];
          if (plain === undefined) {
            this.fail(`bad escape "\\${this.escape}" in a string`, i - 1);
            return n;
          }
          if (!this.addPart(plain, i)) return n;
          this.escape = null;
        } else if (this.escape.length === 5) {
          const hex = this.escape.slice(1);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            this.fail(`bad escape "\\u${hex}" in a string`, i - 1);
            return n;
          }
          if (!this.addPart(String.fromCharCode(parseInt(hex, 16)), i)) return n;
          this.escape = null;
        }
        continue;
      }
      if (this.scanPiece !== this.piece) {
        this.scanPiece = this.piece;
        this.nextQuote = text.indexOf('"', i);
        this.nextSlash = text.indexOf('\\', i);
      }
      if (this.nextQuote !== -1 && this.nextQuote < i) this.nextQuote = text.indexOf('"', i);
      if (this.nextSlash !== -1 && this.nextSlash < i) this.nextSlash = text.indexOf('\\', i);
      const quote = this.nextQuote;
      const slash = this.nextSlash;
      const stop = quote === -1 ? slash : slash === -1 ? quote : Math.min(quote, slash);
      const end = stop === -1 ? n : stop;
      const chunk = text.slice(i, end);
      if (CONTROL.test(chunk)) {
        const at = i + chunk.search(CONTROL);
        this.fail(`${describe(text[at]!)} (a control character) inside a string`, at);
        return n;
      }
      if (!this.addPart(chunk, i)) return n;
      if (stop === -1) return n;
      if (stop === slash) {
        this.escape = '';
        i = stop + 1;
        continue;
      }
      // The closing quote.
      const value = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
      this.parts = [];
      if (this.stringIsKey) {
        this.stack[this.stack.length - 1]!.key = value;
        this.state = State.Colon;
      } else {
        this.place(value);
        this.state = this.stack.length === 0 ? State.Done : State.AfterValue;
      }
      return stop + 1;
    }
    return n;
  }

  private finishToken(index: number): void {
    const t = this.token;
    this.token = '';
    let value: unknown;
    if (this.state === State.Literal) {
      if (t === 'true') value = true;
      else if (t === 'false') value = false;
      else if (t === 'null') value = null;
      else return this.fail(`"${t.slice(0, 20)}" is not a JSON value`, index);
    } else {
      if (!NUMBER_TEXT.test(t)) return this.fail(`"${t.slice(0, 20)}" is not a JSON number`, index);
      value = Number(t);
    }
    this.place(value);
    this.state = this.stack.length === 0 ? State.Done : State.AfterValue;
  }

  private close(index: number): void {
    this.stack.pop();
    this.state = this.stack.length === 0 ? State.Done : State.AfterValue;
    void index;
  }

  /** Puts a value where the grammar says: the root, the next array slot, or the pending key. */
  private place(value: unknown): void {
    this.started = true;
    const top = this.stack[this.stack.length - 1];
    if (!top) this.root = value;
    else if (top.isArray) (top.container as unknown[]).push(value);
    else setKey(top.container as Record<string, unknown>, top.key, value);
  }

  private skip(text: string, i: number): number {
    const n = text.length;
    for (; i < n; i++) {
      const ch = text[i]!;
      if (this.skipInString) {
        if (this.skipEscaped) this.skipEscaped = false;
        else if (ch === '\\') this.skipEscaped = true;
        else if (ch === '"') this.skipInString = false;
      } else if (ch === '"') this.skipInString = true;
      else if (ch === '{' || ch === '[') this.skipDepth++;
      else if (ch === '}' || ch === ']') {
        this.skipDepth--;
        if (this.skipDepth === 0) {
          this.place(null);
          this.state = this.stack.length === 0 ? State.Done : State.AfterValue;
          return i + 1;
        }
      }
    }
    return n;
  }
}

/** Parses one whole text with the streaming parser (for tests and small inputs). */
export function parseJsonStreaming(text: string, maxDepth = MAX_JSON_DEPTH): StreamResult {
  const p = new StreamingJsonParser(maxDepth);
  p.write(text);
  return p.end();
}
