import type { SessionsWebviewNotification } from './sessionsMessages';
import { checkWith, integer, MAX_LOG_CHARS, record, refuse, string } from './checks';
import type { Checked } from './checks';

/**
 * The panels render trace text (titles, paths), so the host treats every message from
 * them as untrusted, with the same checks as the inspector's (validate.ts): the page's
 * `Channel` on the host refuses what is no message or a request (the page may send
 * none), and every notification's shape, type and range are checked here before any
 * handler sees it; anything else is refused with a reason (the host logs it and tells
 * the page with `host/error`). Pure, for unit tests. Nothing the page sends is
 * used as a path or as text to save: an export writes what the host computed, and
 * `open` names a session by an id the host handed out (the host also checks that id
 * belongs to the panel).
 */

/** A notification of the page, checked, or why it was refused. */
export type CheckedSessionsNotification = Checked<SessionsWebviewNotification>;

export { MAX_LOG_CHARS };

/** Largest session id the index hands out (SQLite rowids are 64-bit; a page cannot name more than it was given). */
export const MAX_SESSION_ID = Number.MAX_SAFE_INTEGER;

/** Checks a notification from a sessions page: its shape, type and range, the fields the host uses and no others. */
export function checkSessionsNotification(data: unknown): CheckedSessionsNotification {
  return checkWith<SessionsWebviewNotification>(() => {
    const m = record(data, 'the message');
    const type = string(m['type'], 'type', 64);
    switch (type) {
      case 'ready':
        return { type };
      case 'export': {
        const format = m['format'];
        if (format !== 'csv' && format !== 'json') refuse('export.format is not "csv" or "json"');
        return { type, format };
      }
      case 'open':
        return { type, sessionId: integer(m['sessionId'], 'open.sessionId', MAX_SESSION_ID) };
      case 'log/error':
        return { type, message: string(m['message'], 'log/error.message', MAX_LOG_CHARS) };
      default:
        return refuse(`unknown message type ${JSON.stringify(type.slice(0, 64))}`);
    }
  });
}
