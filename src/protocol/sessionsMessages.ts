import type { SessionComparison } from '../core/sessions/compareSessions';
import type { SessionsReport } from '../core/sessions/sessionsReport';

/**
 * The protocol of the Agent Sessions panels (the several-sessions report and the
 * comparison of two sessions): one page script, two kinds of content. The host sends
 * data; the page sends back only what the checks in sessionsValidate.ts accept.
 */

/** What a panel shows. */
export type SessionsPanelContent =
  | { kind: 'report'; title: string; report: SessionsReport }
  | { kind: 'compare'; comparison: SessionComparison };

/** Host → page. */
export type SessionsHostMessage =
  /** Answer to `ready`, and again when the sessions changed (a live session grew). */
  { type: 'show'; content: SessionsPanelContent };

/** Page → host. */
export type SessionsWebviewMessage =
  | { type: 'ready' }
  /** Save the report (CSV or JSON) or the comparison (JSON): the host asks where and writes what it computed itself. */
  | { type: 'export'; format: 'csv' | 'json' }
  /** Open one of the panel's sessions in the inspector, by the id the host gave it. */
  | { type: 'open'; sessionId: number }
  | { type: 'log/error'; message: string };
