import type { SessionsWebviewMessage } from './sessionsMessages';

/**
 * The panels render trace text (titles, paths), so the host treats every message from
 * them as untrusted: shape, type and range are checked here before any handler sees
 * it; anything else is refused with a reason (the host logs it). Pure, for unit tests.
 * Nothing the page sends is used as a path or as text to save: an export writes what
 * the host computed, and `open` names a session by an id the host handed out (the host
 * also checks that id belongs to the panel).
 */

export type CheckedMessage = { ok: true; value: SessionsWebviewMessage } | { ok: false; error: string };

/** Longest error text the page may ask the host to log. */
export const MAX_LOG_CHARS = 64 * 1024;

export function checkSessionsMessage(data: unknown): CheckedMessage {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { ok: false, error: 'the message is not an object' };
  const m = data as Record<string, unknown>;
  switch (m['type']) {
    case 'ready':
      return { ok: true, value: { type: 'ready' } };
    case 'export':
      if (m['format'] !== 'csv' && m['format'] !== 'json') return { ok: false, error: 'export.format is not "csv" or "json"' };
      return { ok: true, value: { type: 'export', format: m['format'] } };
    case 'open': {
      const id = m['sessionId'];
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return { ok: false, error: 'open.sessionId is not a whole number ≥ 0' };
      return { ok: true, value: { type: 'open', sessionId: id } };
    }
    case 'log/error': {
      const message = m['message'];
      if (typeof message !== 'string') return { ok: false, error: 'log/error.message is not a string' };
      return { ok: true, value: { type: 'log/error', message: message.slice(0, MAX_LOG_CHARS) } };
    }
    default:
      return { ok: false, error: `unknown message type ${JSON.stringify(String(m['type'])).slice(0, 80)}` };
  }
}
