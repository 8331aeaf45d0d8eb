import type { Finding, SecretDetector } from './finding';
import { decodeLiteral, encodeLiteral, forEachStringLiteral } from './jsonStrings';
import { entropyFindings } from './entropyRules';
import { gitleaksFindings } from './gitleaksRules';
import { ownFindings } from './ownRules';
import { privateKeyFindings } from './privateKeys';
import { CONTEXT_REACH, idContextAt, TraceIds } from './idContext';
import { isIdKey, STRICT_KINDS, strictFindings } from './strictRules';
import { decodedBlobs, joinedPieces, lastRunStart, originalOffset, originalSpan } from './views';

/**
 * What was redacted, by kind: never a value. `occurrences` counts every replaced
 * place, `distinct` the different values behind them.
 */
export interface RedactionSummary {
  occurrences: number;
  byKind: Record<string, { occurrences: number; distinct: number }>;
  /** JSON strings (or plain texts) that changed. */
  stringsChanged: number;
  /** Which detectors ran, for the reader of the summary ("secretlint preset-recommend 13.0.4 + own rules"). */
  detectors: string;
}

/** Strings shorter than this cannot hold anything a rule finds (the shortest, `/home/ab`, has 8 characters). */
const MIN_SCANNED_LENGTH = 8;
/** A decoded string that is a number written as text (OTLP's int64 values): never a secret, and its figure must stay. */
const NUMBER_TEXT = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** Joins the strings of a batch: no rule matches across an empty line, and a finding that does is cut at its string's end. */
const SEPARATOR = '\n\n';
/** Characters of decoded text per detector run: large enough to amortise the rules' set-up, small enough to bound memory. */
const BATCH_CHARS = 1 << 20;

/**
 * Characters of string values remembered (Redactor's `known`): a value scanned once and
 * found clean, or with findings no id can explain away, is not scanned again. Beyond it,
 * values are scanned again.
 */
const MAX_KNOWN_CHARS = 32 * 2 ** 20;

/**
 * Kinds whose findings a value's next scan might not repeat, so a value holding one is never
 * remembered with its findings: strict mode's shapes, which default mode leaves once an id
 * learnt later explains them, and base64, a blob taken for what was found inside it, shapes
 * included. Strict mode does not remember them either: one rule for both modes.
 */
const ID_DEPENDENT_KINDS: ReadonlySet<string> = new Set([...STRICT_KINDS, 'base64']);

/** How many base64 layers are decoded inside one another (a base64 `.env` inside a base64 Kubernetes secret is two). */
const MAX_DECODE_DEPTH = 2;
/** Our own detectors, run in every runtime (src/core): rules, gitleaks' rule set, private keys, entropy. */
const CORE_DETECTORS: SecretDetector[] = [
  { detect: ownFindings },
  { detect: gitleaksFindings },
  { detect: privateKeyFindings },
  { detect: entropyFindings },
];
/**
 * The detectors run on values put back together across line breaks: those that need a
 * prefix or a keyword. Joining lines makes long runs of ordinary text (two hashes on two
 * lines), so the entropy rule, which needs neither, does not run there.
 */
const JOINED_DETECTORS: SecretDetector[] = [{ detect: ownFindings }, { detect: gitleaksFindings }];

/**
 * How much redaction takes. Both take bare hex, UUIDs, long numbers, short random tokens and
 * `user:password` pairs (strictRules.ts) outside the trace's own id fields; `default` leaves
 * those the trace explains as ids (idContext.ts: declared in its structure or file names, or
 * in an id's context: a commit hash in git's output, a session UUID as a file name…);
 * `strict` takes them too.
 */
export type RedactionMode = 'default' | 'strict';

/** Options of a redactor. */
export interface RedactorOptions {
  /** `strict` takes every bare hex, UUID, long number and short random token outside the trace's own id fields, ids the trace explains included. */
  mode?: RedactionMode;
  /** Told each value replaced, with its kind: for the bench's list of what strict mode takes in the real samples; exports never set it. */
  onRedacted?: (kind: string, value: string) => void;
  /** Told each value of an id's shape that default mode leaves, and why (`declared`, `git`, `file name`…): for the bench; exports never set it. */
  onLeftAsId?: (reason: string, kind: string, value: string) => void;
}

/** What follows a line break inside a value it continues: key characters with a digit, no `=` before its padding (not `BACKUP=true`, not a word). */
const CONTINUATION = /^(?=[^\n]*\d)[A-Za-z0-9+/_-]+={0,2}$/;

/** redactCountedValues' `ids` bits: the value was learnt from as an id (learnIdValues said so). */
export const ID_LEARNT = 1;
/** redactCountedValues' `ids` bits: the value stood as an id field's value. */
export const ID_FIELD = 2;

/** What `placeholder` writes for a kind other than home-user. */
const PLACEHOLDER_TEXT = /\[REDACTED:[a-z0-9-]{1,40}#\d{1,9}\]/g;

/** A string holding a JSON object or array with escapes of its own (what a rule would misread). */
function isNestedJson(value: string): boolean {
  const first = value.charCodeAt(0);
  if ((first !== 0x7b && first !== 0x5b) || value.indexOf('\\') === -1) return false;
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}

/** The text a kind's findings are replaced by. No quote or backslash, so JSON nested inside a string stays valid. */
function placeholder(kind: string, n: number): string {
  return kind === 'home-user' ? (n === 1 ? 'USER' : `USER${n}`) : `[REDACTED:${kind}#${n}]`;
}

/** What a batch's scan saw of ids left for their context (Redactor.remember). */
interface BatchScan {
  /** Around each id left for the text around it: the span of text that was read. */
  contextIds: Array<[number, number]>;
  /** An id left for its context in text that is not the batch's own (a decoded blob), or another scan of the same text at once. */
  elsewhere: boolean;
}

/** Strings waiting to be scanned together, with the characters they count toward the batch's size (remembered clean values too) and of their joined text. */
interface PendingBatch {
  items: PendingString[];
  chars: number;
  joined: number;
}

function newBatch(): PendingBatch {
  return { items: [], chars: 0, joined: 0 };
}

interface PendingString {
  /** Index of the text in the batch's list, and where the literal is in it. */
  text: number;
  start: number;
  end: number;
  /** Decoded value; for a literal that is not valid JSON, its raw inner text. */
  value: string;
  decoded: boolean;
  /** The literal has its closing quote (a line cut inside a string has not). */
  closed: boolean;
  /** Already changed (JSON nested in it was redacted): written back even if the batch finds nothing more. */
  rewritten: boolean;
  /** Where the value starts in the joined batch. */
  at: number;
  /** How many equal texts this one stands for (redactDistinctJsonTexts): its findings count that many times. */
  weight: number;
  /** The value of a JSON key that names an id (`"uuid": "…"`): strict mode's kinds are not taken in it. */
  idValue: boolean;
  /** JSON inside the string (redacted as JSON first): never remembered with findings. */
  nested: boolean;
  /** Its findings, remembered from an earlier scan: not scanned again, only replaced in its turn. */
  known?: Finding[];
  /** Not to be remembered (an id the caller says occurs once: redactCountedValues' `ids`, ID_LEARNT). */
  forget?: boolean;
}

/**
 * Redacts secrets in JSON texts (a JSONL line, a whole JSON document) string literal by
 * string literal: each literal is decoded, scanned, and re-encoded only if something was
 * found, so everything outside strings (every number, the structure) stays byte for byte
 * and a reader sees the same records. Decoding first matters: a secret followed by `\n`
 * in the raw text would read as glued to the letter `n`, and rules anchored on word
 * boundaries would miss it.
 *
 * The same value is always replaced by the same placeholder (`[REDACTED:aws#2]`), so
 * two ids that were equal stay equal and two that differed stay different.
 * One redactor per export: its summary counts everything it redacted.
 */
export class Redactor {
  private readonly detectors: SecretDetector[];
  /** Strict mode's shapes (default mode: those no id explains), run after the detectors on every text but a batch of id fields' values. */
  private readonly shapes: SecretDetector;
  private readonly joinedDetectors: SecretDetector[];
  private readonly numbering = new Map<string, Map<string, number>>();
  private readonly counts = new Map<string, number>();
  private changed = 0;
  private readonly onRedacted: ((kind: string, value: string) => void) | undefined;
  private readonly onLeftAsId: RedactorOptions['onLeftAsId'];
  /** The ids the trace declares (first pass: learnIds, learnFileName; every redactJsonTexts call learns from its texts too). */
  private readonly ids = new TraceIds();
  /**
   * String values scanned (each keyed with whether it stood as an id field's value), with
   * what was found in them (none: clean), not scanned again. A clean value stays clean: the
   * detectors read the value alone (the batch's separator stops every rule: see below for
   * the readings that cross it), and the only state they read, the ids learnt, only ever
   * grows, which only ever takes findings away (unexplainedShapes). A value's findings stay
   * its findings when none is of a kind ids can take away (ID_DEPENDENT_KINDS): the others'
   * detectors never read the ids. Remembered findings are replaced in the value's turn, so
   * they are numbered as a scan's would be. Off while onLeftAsId listens (the bench counts
   * every value left as an id, each time).
   */
  private readonly known = new Map<string, Finding[]>();
  /** The same for values that stood as an id field's value (strict kinds are not taken there): kept apart, keyed by the value itself. */
  private readonly knownIdValues = new Map<string, Finding[]>();
  private knownChars = 0;
  /**
   * The batches being scanned (redactBatch), by their joined text: where in each an id was
   * recognised by the text around it, and whether one was recognised somewhere else than a
   * batch itself (in a decoded blob), after which no value of the batch is remembered.
   */
  private readonly scans = new Map<string, BatchScan>();

  /** The redaction mode this redactor runs in. */
  readonly mode: RedactionMode;

  constructor(
    extra: readonly SecretDetector[],
    private readonly detectorNames: string,
    options: RedactorOptions = {},
  ) {
    this.mode = options.mode ?? 'default';
    this.onRedacted = options.onRedacted;
    this.onLeftAsId = options.onLeftAsId;
    this.detectors = [...extra, ...CORE_DETECTORS];
    this.shapes = { detect: this.mode === 'strict' ? strictFindings : (text: string) => this.unexplainedShapes(text) };
    this.joinedDetectors = [...extra, ...JOINED_DETECTORS];
  }

  /**
   * The first pass: remembers the ids these JSON texts declare (values of id-named keys,
   * OTLP id attributes), so that default mode leaves them wherever they appear. A streamed
   * export calls it over the whole trace before redacting it; redactJsonTexts also calls it
   * on its own texts.
   */
  learnIds(texts: readonly string[]): void {
    // Strict mode leaves no id but the trace's own id fields, which it reads on the spot.
    if (this.mode === 'strict') return;
    for (const t of texts) this.ids.learnJson(t);
  }

  /**
   * Remembers values the caller knows to be ids (the Parquet export's id columns): as learnIds of `{"id": value}` for
   * each. Per value, whether redactCountedValues may be told it was learnt from (ID_LEARNT in its `ids`).
   */
  learnIdValues(values: readonly string[]): boolean[] {
    if (this.mode === 'strict') return values.map(() => false);
    return values.map((v) => this.ids.learnIdValue(v));
  }

  /** Remembers the ids in a trace file's name (`<session uuid>.jsonl`, `agent-<id>.jsonl`). */
  learnFileName(name: string): void {
    this.ids.learnFileName(name);
  }

  /**
   * Redacts each text (JSON lines, or whole JSON documents); same order, same count. The
   * texts' ids are learnt first, unless the caller did it over the whole trace already
   * (`idsLearned`: a streamed file's first pass).
   */
  async redactJsonTexts(texts: readonly string[], options: { idsLearned?: boolean } = {}): Promise<string[]> {
    if (!options.idsLearned) this.learnIds(texts);
    return this.redactTexts(texts);
  }

  /**
   * As redactJsonTexts, but each distinct text is scanned once and its result given to every
   * equal text: the same output and the same summary (a repeat's findings count as often as
   * it occurs; onRedacted hears each distinct one once). For many equal texts, as the team
   * tables' columns hold (a session id on every call row, the same command run again).
   */
  async redactDistinctJsonTexts(texts: readonly string[]): Promise<string[]> {
    const index = new Map<string, number>();
    const distinct: string[] = [];
    const weights: number[] = [];
    const slot = texts.map((t) => {
      let i = index.get(t);
      if (i === undefined) {
        index.set(t, (i = distinct.length));
        distinct.push(t);
        weights.push(0);
      }
      weights[i]! += 1;
      return i;
    });
    const redacted = await this.redactCountedJsonTexts(distinct, weights);
    return slot.map((i) => redacted[i]!);
  }

  /**
   * The work of redactDistinctJsonTexts once the caller has counted the texts: `distinct`
   * (in order of first occurrence), each occurring `weights[i]` times. The export's parse
   * threads count their trace's texts and send only these here, to the one redactor of
   * the export (src/node/team/exportPool.ts).
   */
  async redactCountedJsonTexts(distinct: readonly string[], weights: readonly number[]): Promise<string[]> {
    // Each text learnt from once per redactor: the export's texts repeat from trace to trace.
    if (this.mode !== 'strict') for (const t of distinct) this.ids.learnJsonOnce(t);
    return this.redactTexts(distinct, weights);
  }

  /**
   * redactCountedJsonTexts of each value's JSON literal (`JSON.stringify(value)`), taken and
   * given back as values: the same redacted values, summary and ids learnt (and, without
   * `ids`, memory), without writing each value as JSON and reading it back. The export's
   * cells are such values.
   * `ids`: for each value, ID_LEARNT (learnIdValues just said it learnt from it) and
   * ID_FIELD (it stood as an id field's value: an id column's) as bits. Values learnt from are
   * neither learnt from again nor looked up in, or added to, the memory of scanned values: an
   * id occurs once in a whole export, and a million of them would fill that memory (the same
   * findings either way: a remembered value's findings are its scan's). An id field's value is
   * the trace's structure, as under an id key in JSON: strict kinds are not taken there, even
   * past the bound on the ids remembered (MAX_DECLARED_IDS), which a large export passes.
   */
  async redactCountedValues(
    distinct: readonly string[],
    weights: readonly number[],
    ids?: ArrayLike<number>,
  ): Promise<string[]> {
    if (this.mode !== 'strict')
      for (let i = 0; i < distinct.length; i++)
        this.ids.learnValueOnce(distinct[i]!, ((ids?.[i] ?? 0) & ID_LEARNT) !== 0);
    return this.redactTexts(distinct, weights, true, ids);
  }

  /** Strict mode's shapes that nothing in the trace explains as an id: what default mode takes of them. */
  private unexplainedShapes(text: string): Finding[] {
    return strictFindings(text).filter((f) => {
      const value = text.slice(f.start, f.end);
      const declared = this.ids.how(value);
      const reason = declared ?? idContextAt(text, f.start, f.end, f.kind);
      if (declared === null && reason !== null) {
        // Left by the text around it, which may reach into the batch's next or previous value: see redactBatch.
        const scan = this.scans.get(text);
        if (scan) scan.contextIds.push([f.start - CONTEXT_REACH.before, f.end + CONTEXT_REACH.after]);
        else for (const other of this.scans.values()) other.elsewhere = true;
      }
      if (reason !== null) this.onLeftAsId?.(reason, f.kind, value);
      return reason === null;
    });
  }

  /**
   * Redacts each text: JSON texts, their string literals one by one; or, with `values`, plain
   * values, each as the one literal of its JSON (`JSON.stringify(value)`) would be, without
   * writing that JSON and reading it back (decoded, such a literal is the value itself).
   */
  private async redactTexts(
    texts: readonly string[],
    weights?: readonly number[],
    values = false,
    ids?: ArrayLike<number>,
  ): Promise<string[]> {
    const out = texts.slice();
    // Values that stood as id fields' values (ids: ID_FIELD) go into batches of their own: strict kinds are never
    // taken in them, so those batches skip the shapes (redactBatch), and most of an export's characters are ids.
    // Only values: a JSON text's literals are rewritten in place, from its last to its first, within one batch.
    const batches = { mixed: newBatch(), ids: newBatch() };
    const flush = async (batch: PendingBatch): Promise<void> => {
      if (batch.items.length > 0) await this.redactBatch(batch.items, out, values);
      batch.items = [];
      batch.chars = 0;
      batch.joined = 0;
    };
    /**
     * One string value (the literal at [start, end) of text t, or the whole value): remembered,
     * or put in the batch; a promise only for JSON inside the value, redacted first.
     */
    const take = (
      t: number,
      start: number,
      end: number,
      value: string,
      decoded: boolean,
      closed: boolean,
      idValue: boolean,
      weight: number,
      forget = false,
    ): Promise<void> | undefined => {
      if (value.length < MIN_SCANNED_LENGTH || NUMBER_TEXT.test(value)) return undefined;
      const batch = values && idValue ? batches.ids : batches.mixed;
      const memory = idValue ? this.knownIdValues : this.known;
      const known = !forget && memory.size > 0 ? memory.get(value) : undefined;
      if (known !== undefined) {
        // Scanned before: not scanned again, but counted toward the batch as if it were, so the
        // batches (and the order in which new secrets are numbered) are those without the memory;
        // a value with findings keeps its place in the batch, where they are replaced in turn.
        batch.chars += value.length + SEPARATOR.length;
        if (known.length > 0)
          batch.items.push({
            text: t,
            start,
            end,
            value,
            decoded,
            closed,
            rewritten: false,
            at: batch.joined,
            weight,
            idValue,
            nested: false,
            known,
          });
        return undefined;
      }
      const push = (scanned: string, rewritten: boolean, nested: boolean): void => {
        batch.chars += scanned.length + SEPARATOR.length;
        batch.joined += scanned.length + SEPARATOR.length;
        batch.items.push({
          text: t,
          start,
          end,
          value: scanned,
          decoded,
          closed,
          rewritten,
          at: batch.joined - scanned.length - SEPARATOR.length,
          weight,
          idValue,
          nested,
          forget,
        });
      };
      if (!decoded || !isNestedJson(value)) {
        push(value, false, false);
        return undefined;
      }
      // JSON inside a string (tool arguments): its own escapes would hide secrets from the rules, so redact it as JSON.
      return this.redactTexts([value], [weight]).then(([inner]) => push(inner!, inner !== value, true));
    };
    for (let t = 0; t < texts.length; t++) {
      const text = texts[t]!;
      const weight = weights?.[t] ?? 1;
      if (values) {
        // As the one literal of JSON.stringify(text) would be: decoded, closed, no key before it.
        const flags = ids?.[t] ?? 0;
        const nested = take(t, 0, 0, text, true, true, (flags & ID_FIELD) !== 0, weight, (flags & ID_LEARNT) !== 0);
        if (nested) await nested;
      } else {
        const spans: Array<[number, number, boolean]> = [];
        let previous: [number, number] | null = null;
        forEachStringLiteral(text, (start, end) => {
          // A value right after a key (`"key": "value"`) whose key names an id: the trace's structure, never a shape finding.
          const idValue =
            previous !== null &&
            start - previous[1] <= 16 &&
            /^\s*:\s*$/.test(text.slice(previous[1], start)) &&
            isIdKey(text.slice(previous[0] + 1, previous[1] - 1));
          if (end - start >= MIN_SCANNED_LENGTH + 2) spans.push([start, end, idValue]);
          previous = [start, end];
        });
        for (const [start, end, idValue] of spans) {
          const raw = text.slice(start, end);
          const decoded = decodeLiteral(raw);
          const closed = raw.length >= 2 && raw.endsWith('"');
          // A literal that is not valid JSON (a cut or hand-broken line) is still scanned, raw.
          const value = decoded ?? raw.slice(1, closed ? -1 : undefined);
          const nested = take(t, start, end, value, decoded !== null, closed, idValue, weight);
          if (nested) await nested;
        }
      }
      if (batches.mixed.chars >= BATCH_CHARS) await flush(batches.mixed);
      if (batches.ids.chars >= BATCH_CHARS) await flush(batches.ids);
    }
    await flush(batches.mixed);
    await flush(batches.ids);
    return out;
  }

  /** Redacts one plain text (not JSON): a file name, a message. */
  async redactPlainText(text: string): Promise<string> {
    if (text.length < MIN_SCANNED_LENGTH) return text;
    const findings = await this.detect(text);
    return findings.length === 0 ? text : this.apply(text, findings);
  }

  summary(): RedactionSummary {
    const byKind: RedactionSummary['byKind'] = {};
    let occurrences = 0;
    for (const [kind, n] of [...this.counts].sort(([a], [b]) => a.localeCompare(b))) {
      byKind[kind] = { occurrences: n, distinct: this.numbering.get(kind)?.size ?? 0 };
      occurrences += n;
    }
    return { occurrences, byKind, stringsChanged: this.changed, detectors: this.detectorNames };
  }

  /**
   * Every finding in `text`: the detectors on the text itself, then on its other views
   * (src/core/redact/views.ts): values split across lines put back together, and base64
   * blobs decoded (a blob hiding a secret is redacted whole, as kind `base64`). `shapes`
   * false: not the shapes on the text itself (a batch of id fields' values only); a decoded
   * blob is still read with them, since a shape inside it takes the blob whole as `base64`.
   */
  private async detect(text: string, depth = 0, shapes = true): Promise<Finding[]> {
    const all: Finding[] = [];
    for (const d of this.detectors) for (const f of await d.detect(text)) if (f.end > f.start) all.push(f);
    if (shapes) for (const f of await this.shapes.detect(text)) if (f.end > f.start) all.push(f);
    const direct = all.length;
    for (const piece of joinedPieces(text)) {
      for (const d of this.joinedDetectors) {
        for (const f of await d.detect(piece.text)) {
          if (f.end <= f.start) continue;
          const [start, end] = originalSpan(piece, f.start, f.end);
          // Only a finding that crosses a break is new; it is taken when the text alone showed
          // nothing there, or when what follows the break reads as more of the value (a wrapped
          // key) rather than the next line's own text (`TOKEN=…` then a line `next`).
          const tailStart = originalOffset(piece, f.end - 1) - (f.end - 1 - lastRunStart(piece, f.end - 1));
          if (tailStart <= start) continue;
          // Strict mode's shapes are not a reading of the value (half a wrapped key can be hex on its own).
          const seen = all
            .slice(0, direct)
            .some((g) => g.start < tailStart && g.end > start && !STRICT_KINDS.has(g.kind));
          if (seen && !CONTINUATION.test(text.slice(tailStart, end))) continue;
          all.push({ kind: f.kind, start, end });
        }
      }
    }
    if (depth < MAX_DECODE_DEPTH) {
      // First in the list: where a rule also took the blob itself, the placeholder says base64.
      const blobs: Finding[] = [];
      for (const blob of decodedBlobs(text)) {
        if ((await this.detect(blob.text, depth + 1)).length > 0)
          blobs.push({ kind: 'base64', start: blob.start, end: blob.end });
      }
      if (blobs.length > 0) return [...blobs, ...all];
    }
    return all;
  }

  /** `values`: each text of `out` is a value, replaced whole (redactTexts). */
  private async redactBatch(batch: PendingString[], out: string[], values: boolean): Promise<void> {
    // The strings scanned (by their index in the batch); the others' findings are remembered.
    const scanned: number[] = [];
    batch.forEach((s, i) => {
      if (s.known === undefined) scanned.push(i);
    });
    const joined = scanned.map((i) => batch[i]!.value).join(SEPARATOR);
    // Two batches of the same text scanned at once (concurrent calls) remember nothing.
    const scan: BatchScan = { contextIds: [], elsewhere: this.scans.has(joined) };
    let findings: Finding[] = [];
    if (scanned.length > 0) {
      this.scans.set(joined, scan);
      try {
        // A batch of id fields' values only: no shape found in it would be taken (below), so none is looked for.
        // Not while onLeftAsId listens: it hears every shape left as an id.
        const shapes = this.onLeftAsId !== undefined || scanned.some((i) => !batch[i]!.idValue);
        findings = await this.detect(joined, 0, shapes);
      } finally {
        if (this.scans.get(joined) === scan) this.scans.delete(joined);
      }
    }
    /** The batch index of the scanned string holding `offset` of the joined text (binary search over the starts). */
    const at = (offset: number): number => {
      let lo = 0;
      let hi = scanned.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (batch[scanned[mid]!]!.at <= offset) lo = mid;
        else hi = mid - 1;
      }
      return scanned[lo]!;
    };
    // Each finding belongs to the string it starts in, cut at that string's end.
    const perString = new Map<number, Finding[]>();
    /** Strings a finding reached into or out of: what they hold depends on their neighbours in this batch. */
    const crossed = new Set<number>();
    for (const f of findings) {
      const lo = at(f.start);
      const s = batch[lo]!;
      if (f.end > s.at + s.value.length) {
        const hi = at(f.end - 1);
        for (const i of scanned) if (i >= lo && i <= hi) crossed.add(i);
      }
      const start = f.start - s.at;
      if (start >= s.value.length) continue; // in a separator
      if (s.idValue && STRICT_KINDS.has(f.kind)) continue; // the trace's own ids: its structure, not a secret
      const list = perString.get(lo) ?? [];
      list.push({ kind: f.kind, start, end: Math.min(f.end - s.at, s.value.length) });
      perString.set(lo, list);
    }
    this.remember(batch, perString, at, scan, crossed);
    batch.forEach((s, i) => {
      if (s.known !== undefined) perString.set(i, s.known.slice());
      else if (s.rewritten && !perString.has(i)) perString.set(i, []);
    });
    // Rewrite each text from its last literal to its first, so earlier offsets stay valid.
    const indexes = [...perString.keys()].sort((a, b) => b - a);
    for (const i of indexes) {
      const s = batch[i]!;
      const found = perString.get(i)!;
      const redacted = found.length > 0 ? this.apply(s.value, found, s.weight) : s.value;
      if (redacted === s.value && !s.rewritten) continue;
      if (values) {
        out[s.text] = redacted;
        continue;
      }
      // Raw text goes back raw: the placeholders hold no quote or backslash.
      const literal = s.decoded ? encodeLiteral(redacted) : `"${redacted}${s.closed ? '"' : ''}`;
      const text = out[s.text]!;
      out[s.text] = text.slice(0, s.start) + literal + text.slice(s.end);
    }
  }

  /**
   * Remembers the batch's scanned values in which nothing was found (and nothing nested was
   * rewritten) as clean, and those whose findings are all of kinds no id can take away
   * (ID_DEPENDENT_KINDS), not JSON, with those findings. Not those where an id was left for
   * the text around it when that text reached past the value's own ends, nor those a finding
   * reached into or out of (`crossed`): in another batch, next to other values, the same
   * value might read otherwise.
   */
  private remember(
    batch: PendingString[],
    perString: Map<number, Finding[]>,
    at: (offset: number) => number,
    scan: BatchScan,
    crossed: ReadonlySet<number>,
  ): void {
    if (this.onLeftAsId || scan.elsewhere) return;
    const unsure = new Set<number>(crossed);
    for (const [from, to] of scan.contextIds) {
      const i = at(Math.max(0, from + CONTEXT_REACH.before));
      const s = batch[i]!;
      if (from < s.at || to > s.at + s.value.length) unsure.add(i);
    }
    batch.forEach((s, i) => {
      if (s.known !== undefined || s.rewritten || s.forget || unsure.has(i)) return;
      const found = perString.get(i) ?? [];
      if (found.length > 0 && (s.nested || found.some((f) => ID_DEPENDENT_KINDS.has(f.kind)))) return;
      if (this.knownChars + s.value.length > MAX_KNOWN_CHARS) return;
      const memory = s.idValue ? this.knownIdValues : this.known;
      if (memory.has(s.value)) return;
      memory.set(
        s.value,
        found.map((f) => ({ ...f })),
      );
      this.knownChars += s.value.length;
    });
  }

  /** Replaces the findings in `value`; overlapping findings merge, the earliest (then longest) naming the kind. */
  private apply(value: string, all: Finding[], weight = 1): string {
    // A placeholder written by an earlier pass (JSON nested in a string) is not a secret to number again.
    const placed: Array<[number, number]> = [];
    for (const m of value.matchAll(PLACEHOLDER_TEXT)) placed.push([m.index, m.index + m[0].length]);
    const findings =
      placed.length === 0 ? all : all.filter((f) => !placed.some(([s, e]) => f.start >= s && f.end <= e));
    if (findings.length === 0) return value;
    findings.sort((a, b) => a.start - b.start || b.end - a.end);
    let out = '';
    let pos = 0;
    let i = 0;
    while (i < findings.length) {
      const first = findings[i]!;
      let end = first.end;
      let j = i + 1;
      while (j < findings.length && findings[j]!.start < end) end = Math.max(end, findings[j++]!.end);
      const start = Math.max(first.start, pos);
      const secret = value.slice(first.start, end);
      this.onRedacted?.(first.kind, secret);
      out += value.slice(pos, start) + placeholder(first.kind, this.number(first.kind, secret));
      this.counts.set(first.kind, (this.counts.get(first.kind) ?? 0) + weight);
      pos = end;
      i = j;
    }
    this.changed += weight;
    return out + value.slice(pos);
  }

  private number(kind: string, secret: string): number {
    let values = this.numbering.get(kind);
    if (!values) this.numbering.set(kind, (values = new Map()));
    let n = values.get(secret);
    if (n === undefined) values.set(secret, (n = values.size + 1));
    return n;
  }
}
