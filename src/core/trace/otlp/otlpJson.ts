import { arr, isObject, obj, str } from '../json';
import type { JsonObject } from '../json';

/** An OTLP attribute value turned into plain JSON (int64 beyond 2^53 stays a decimal string). */
export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };

/** A span's attributes by key. */
export type Attributes = Map<string, AttrValue>;

/** A JSON path into the value a span came from (for `doc.locate`). */
export type SpanPath = Array<string | number>;

/** One OTLP span, read from OTLP/JSON (opentelemetry-proto `trace.proto`, JSON mapping). */
export interface OtlpSpan {
  /** Lower-case hex, 32 characters when well formed. */
  traceId: string;
  /** Lower-case hex, 16 characters when well formed. */
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer; 0 or null when unspecified. */
  kind: number | null;
  /** Exact nanoseconds since the epoch, for ordering; null when absent or 0. */
  startNs: bigint | null;
  endNs: bigint | null;
  attributes: Attributes;
  /** Attributes of the span's resource (`service.name`, …). */
  resource: Attributes;
  events: OtlpEvent[];
  /** True when `status.code` is ERROR. */
  statusError: boolean;
  statusMessage: string | null;
  /** Where the span sits in the value it was read from. */
  path: SpanPath;
}

/** A span event (`exception` events carry the error text of failed spans). */
export interface OtlpEvent {
  name: string;
  timeNs: bigint | null;
  attributes: Attributes;
}

/** Problems found while reading spans out of one TracesData value. */
export interface SpanProblem {
  path: SpanPath;
  message: string;
}

const DECIMAL = /^\s*-?\d+\s*$/;
const HEX = /^[0-9a-fA-F]+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const NS_PER_MS = 1_000_000n;

/**
 * Nanoseconds from an OTLP `*TimeUnixNano` field: a decimal string (int64) or, from
 * lenient writers, a number. Parsed with BigInt so that ordering survives values past
 * 2^53, where `Number("1767225600000000001")` already equals `…000`. 0 means "not set".
 */
export function parseNanos(value: unknown): bigint | null {
  let ns: bigint | null = null;
  if (typeof value === 'string' && DECIMAL.test(value)) ns = BigInt(value.trim());
  else if (typeof value === 'number' && Number.isFinite(value) && value >= 0) ns = BigInt(Math.round(value));
  return ns !== null && ns > 0n ? ns : null;
}

/** Epoch milliseconds of a nanosecond time: whole ms exactly, the sub-ms rest as a fraction. */
export function nanosToMs(ns: bigint | null): number | null {
  if (ns === null) return null;
  return Number(ns / NS_PER_MS) + Number(ns % NS_PER_MS) / 1e6;
}

/** Compares two nanosecond times; unknown times sort last. */
export function compareNanos(a: bigint | null, b: bigint | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A trace or span id as lower-case hex. OTLP/JSON writes hex; some exporters follow the
 * plain protobuf JSON mapping and write base64, which is converted so that parent links
 * between files of both kinds still match. Empty means "no id".
 */
export function normalizeId(value: unknown): string | null {
  const s = str(value);
  if (s === null || s === '') return null;
  if (HEX.test(s)) return /^0+$/.test(s) ? null : s.toLowerCase();
  // 16-byte trace ids are 24 base64 characters, 8-byte span ids 12.
  if ((s.length === 24 || s.length === 12) && BASE64.test(s)) return base64ToHex(s);
  return s;
}

function base64ToHex(s: string): string {
  let bits = 0;
  let acc = 0;
  let hex = '';
  for (const ch of s.replace(/=+$/, '')) {
    acc = (acc << 6) | BASE64_ALPHABET.indexOf(ch);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      hex += ((acc >> bits) & 0xff).toString(16).padStart(2, '0');
    }
  }
  return hex;
}

/**
 * One OTLP `AnyValue` as plain JSON: `{stringValue}`, `{intValue}` (int64: a decimal
 * string, kept as a string when it does not fit a double exactly), `{doubleValue}`,
 * `{boolValue}`, `{arrayValue:{values}}`, `{kvlistValue:{values}}`, `{bytesValue}`.
 */
export function anyValue(value: unknown): AttrValue {
  const v = obj(value);
  if (!v) return null;
  if ('stringValue' in v) return str(v['stringValue']);
  if ('intValue' in v) return intValue(v['intValue']);
  if ('doubleValue' in v) {
    const d = v['doubleValue'];
    if (typeof d === 'number') return d;
    // The protobuf JSON mapping writes NaN and infinities as strings.
    return typeof d === 'string' && d.trim() !== '' && Number.isFinite(Number(d)) ? Number(d) : null;
  }
  if ('boolValue' in v) return typeof v['boolValue'] === 'boolean' ? v['boolValue'] : null;
  if ('arrayValue' in v) return (arr(obj(v['arrayValue'])?.['values']) ?? []).map(anyValue);
  if ('kvlistValue' in v) return Object.fromEntries(keyValues(obj(v['kvlistValue'])?.['values']));
  if ('bytesValue' in v) return str(v['bytesValue']);
  return null;
}

function intValue(raw: unknown): AttrValue {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : null;
  if (typeof raw !== 'string' || !DECIMAL.test(raw)) return null;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : raw.trim();
}

function keyValues(list: unknown): Array<[string, AttrValue]> {
  const out: Array<[string, AttrValue]> = [];
  for (const kv of arr(list) ?? []) {
    const key = isObject(kv) ? str(kv['key']) : null;
    if (key !== null) out.push([key, anyValue((kv as JsonObject)['value'])]);
  }
  return out;
}

/** The `attributes` list of a resource, scope, span or event as a map. */
export function attributes(list: unknown): Attributes {
  return new Map(keyValues(list));
}

function spanKind(value: unknown): number | null {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  const names = [
    'SPAN_KIND_UNSPECIFIED',
    'SPAN_KIND_INTERNAL',
    'SPAN_KIND_SERVER',
    'SPAN_KIND_CLIENT',
    'SPAN_KIND_PRODUCER',
    'SPAN_KIND_CONSUMER',
  ];
  const i = typeof value === 'string' ? names.indexOf(value) : -1;
  return i >= 0 ? i : null;
}

function isErrorStatus(code: unknown): boolean {
  return code === 2 || code === 'STATUS_CODE_ERROR' || code === '2';
}

/** True when the value is a `TracesData` (`{"resourceSpans": [...]}`). */
export function isTracesData(value: unknown): value is JsonObject {
  return isObject(value) && Array.isArray(value['resourceSpans']);
}

/** True when the value is one `ResourceSpans` (some writers put one per line). */
export function isResourceSpans(value: unknown): value is JsonObject {
  return isObject(value) && (Array.isArray(value['scopeSpans']) || Array.isArray(value['instrumentationLibrarySpans']));
}

/**
 * Every span of a `TracesData` or a single `ResourceSpans` value, with its path from
 * `base`. Handles `scopeSpans` and the older `instrumentationLibrarySpans`. Spans
 * without trace or span id are reported and left out.
 */
export function readSpans(value: unknown, base: SpanPath, problems: SpanProblem[]): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  if (isTracesData(value)) {
    arr(value['resourceSpans'])!.forEach((rs, i) =>
      readResourceSpans(rs, [...base, 'resourceSpans', i], spans, problems),
    );
  } else if (isResourceSpans(value)) {
    readResourceSpans(value, base, spans, problems);
  }
  return spans;
}

function readResourceSpans(value: unknown, path: SpanPath, out: OtlpSpan[], problems: SpanProblem[]): void {
  const rs = obj(value);
  if (!rs) return;
  const resource = attributes(obj(rs['resource'])?.['attributes']);
  for (const key of ['scopeSpans', 'instrumentationLibrarySpans']) {
    (arr(rs[key]) ?? []).forEach((scope, j) => {
      (arr(obj(scope)?.['spans']) ?? []).forEach((span, k) => {
        const spanPath = [...path, key, j, 'spans', k];
        const read = readSpan(span, resource, spanPath);
        if (typeof read === 'string') problems.push({ path: spanPath, message: read });
        else out.push(read);
      });
    });
  }
}

function readSpan(value: unknown, resource: Attributes, path: SpanPath): OtlpSpan | string {
  const s = obj(value);
  if (!s) return 'span is not an object; skipped.';
  const traceId = normalizeId(s['traceId']);
  const spanId = normalizeId(s['spanId']);
  if (traceId === null || spanId === null) return 'span without "traceId" or "spanId"; skipped.';
  const status = obj(s['status']);
  return {
    traceId,
    spanId,
    parentSpanId: normalizeId(s['parentSpanId']),
    name: str(s['name']) ?? '',
    kind: spanKind(s['kind']),
    startNs: parseNanos(s['startTimeUnixNano']),
    endNs: parseNanos(s['endTimeUnixNano']),
    attributes: attributes(s['attributes']),
    resource,
    events: (arr(s['events']) ?? []).filter(isObject).map((e) => ({
      name: str(e['name']) ?? '',
      timeNs: parseNanos(e['timeUnixNano']),
      attributes: attributes(e['attributes']),
    })),
    statusError: status !== null && isErrorStatus(status['code']),
    statusMessage: status ? str(status['message']) || null : null,
    path,
  };
}

/** One OTLP log record (opentelemetry-proto `logs.proto`, JSON mapping): an event of an agent's telemetry. */
export interface OtlpLogRecord {
  /** The event's name: the record's `eventName` (OTLP 1.5+), else its `event.name` attribute, else a string body. */
  names: string[];
  /** Exact nanoseconds since the epoch: `timeUnixNano`, else `observedTimeUnixNano`. */
  timeNs: bigint | null;
  attributes: Attributes;
  resource: Attributes;
  body: AttrValue;
  path: SpanPath;
}

/** True when the value is a `LogsData` (`{"resourceLogs": [...]}`). */
export function isLogsData(value: unknown): value is JsonObject {
  return isObject(value) && Array.isArray(value['resourceLogs']);
}

/** True when the value is one `ResourceLogs`. */
export function isResourceLogs(value: unknown): value is JsonObject {
  return isObject(value) && Array.isArray(value['scopeLogs']);
}

/** Every log record of a `LogsData` or a single `ResourceLogs` value, with its path from `base`. */
export function readLogRecords(value: unknown, base: SpanPath): OtlpLogRecord[] {
  const out: OtlpLogRecord[] = [];
  const one = (rl: unknown, path: SpanPath): void => {
    const r = obj(rl);
    if (!r) return;
    const resource = attributes(obj(r['resource'])?.['attributes']);
    (arr(r['scopeLogs']) ?? []).forEach((scope, j) => {
      (arr(obj(scope)?.['logRecords']) ?? []).forEach((record, k) => {
        const l = obj(record);
        if (!l) return;
        const attrs = attributes(l['attributes']);
        const body = anyValue(l['body']);
        const names = [
          str(l['eventName']),
          typeof attrs.get('event.name') === 'string' ? (attrs.get('event.name') as string) : null,
          typeof body === 'string' ? body : null,
        ].filter((n): n is string => n !== null && n !== '');
        out.push({
          names,
          timeNs: parseNanos(l['timeUnixNano']) ?? parseNanos(l['observedTimeUnixNano']),
          attributes: attrs,
          resource,
          body,
          path: [...path, 'scopeLogs', j, 'logRecords', k],
        });
      });
    });
  };
  if (isLogsData(value)) arr(value['resourceLogs'])!.forEach((rl, i) => one(rl, [...base, 'resourceLogs', i]));
  else if (isResourceLogs(value)) one(value, base);
  return out;
}
