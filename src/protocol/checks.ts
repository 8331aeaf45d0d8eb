import type { CallRef } from './messages';

// The helpers every check of a page's message is built from (validate.ts, sessionsValidate.ts,
// traceQueryChecks.ts): each returns the value when it has the shape, type and range asked
// for, and refuses the message with a reason otherwise. Pure and small: the HTML report's
// page bundles them with the trace queries' checks.

/** A checked message, or why it was refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** Longest id (session, tool call) a message may carry. */
export const MAX_ID_CHARS = 4096;
/** Largest call index, line and file index a message may name. */
export const MAX_CALL_INDEX = 100_000_000;
export const MAX_LINE = 2 ** 31 - 1;
export const MAX_FILE_INDEX = 1_000_000;
/** Longest clipboard text (a simulate command line) and what-if export. */
export const MAX_CLIPBOARD_CHARS = 16 * 1024;
export const MAX_EXPORT_CHARS = 64 * 2 ** 20;
export const MAX_EXPORT_NAME_CHARS = 255;
/** Longest search or session-find query. */
export const MAX_QUERY_CHARS = 1000;
/** Largest offset into the session list. */
export const MAX_SESSION_OFFSET = 100_000_000;
/** Longest error text the webview may ask the host to log (it is clipped further in the log). */
export const MAX_LOG_CHARS = 64 * 1024;

/** A message refused by a check (refuse); any other error in a check is a bug. */
export class Refused extends Error {}

/** Refuses the message being checked, saying why (checkWith turns it into `{ ok: false, error }`). */
export function refuse(message: string): never {
  throw new Refused(message);
}

/** Runs a check built from the helpers here: a refusal becomes `{ ok: false, error }`, anything else is a bug and throws. */
export function checkWith<T>(check: () => T): Checked<T> {
  try {
    return { ok: true, value: check() };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: e.message };
    throw e;
  }
}

export function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse(`${what} is not an object`);
  return value as Record<string, unknown>;
}

export function string(value: unknown, what: string, max: number): string {
  if (typeof value !== 'string') refuse(`${what} is not a string`);
  if (value.length > max) refuse(`${what} is longer than ${max} characters`);
  return value;
}

export function integer(value: unknown, what: string, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max)
    refuse(`${what} is not a whole number from 0 to ${max}`);
  return value;
}

/** A finite number in (min, max] (or [min, max] when `zeroOk`). */
export function number(value: unknown, what: string, min: number, max: number, zeroOk = false): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value > max || value < min || (!zeroOk && value === min))
    refuse(`${what} is not a number ${zeroOk ? 'from' : 'above'} ${min}${zeroOk ? ' to' : ', at most'} ${max}`);
  return value;
}

export function boolean(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') refuse(`${what} is not true or false`);
  return value;
}

/** The `sessionId` of a message's params. */
export function sessionId(p: Record<string, unknown>): string {
  return string(p['sessionId'], 'params.sessionId', MAX_ID_CHARS);
}

/** A call named by its session and index. */
export function callRef(value: unknown, what: string): CallRef {
  const r = record(value, what);
  return {
    sessionId: string(r['sessionId'], `${what}.sessionId`, MAX_ID_CHARS),
    callIndex: integer(r['callIndex'], `${what}.callIndex`, MAX_CALL_INDEX),
  };
}
