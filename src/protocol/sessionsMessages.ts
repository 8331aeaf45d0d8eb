import type { SessionsContext } from '../core/context/contextAcrossSessions';
import type { SessionComparison } from '../core/sessions/compareSessions';
import type { CommitTable } from '../core/sessions/sessionCommits';
import type { SessionsReport } from '../core/sessions/sessionsReport';
import type { ResponseMessage } from './messages';

/**
 * The protocol of the Agent Sessions panels (the several-sessions report and the
 * comparison of two sessions): one page script, two kinds of content. Both ends are a
 * `Channel` (channel.ts), as the inspector's are. The host sends data; the page sends
 * back only what the checks in sessionsValidate.ts accept. Every message is a
 * notification: the page asks for nothing it draws (the host sends the content whole),
 * and an action it asks for is carried out, or refused or failed and said with
 * `host/error` (as the inspector's `source/reveal` and `whatif/export` are).
 */

/** What a panel shows. */
export type SessionsPanelContent =
  | { kind: 'report'; title: string; report: SessionsReport }
  | { kind: 'compare'; comparison: SessionComparison };

/** Notifications from the host. */
export type SessionsHostNotification =
  /** Answer to `ready`, and again when the sessions changed (a live session grew). */
  | { type: 'show'; content: SessionsPanelContent }
  /** The report's cost per commit, once git has been asked (after `show`, and again with it). */
  | { type: 'commits'; table: CommitTable }
  /** The report's context anatomy over its sessions (by tool, MCP server, file, with priced suggestions), once counted. */
  | { type: 'context'; context: SessionsContext }
  /** Counting it failed: why, for the section to say (the rest of the report stays). */
  | { type: 'context/failed'; message: string }
  /** A message of the page was refused, or what it asked for failed: why, for the panel to say. */
  | { type: 'host/error'; message: string };

/** Notifications from the page. */
export type SessionsWebviewNotification =
  /** The page has loaded and listens; the host answers with `show`. */
  | { type: 'ready' }
  /** Save the report (CSV or JSON) or the comparison (JSON): the host asks where and writes what it computed itself. */
  | { type: 'export'; format: 'csv' | 'json' }
  /** Open one of the panel's sessions in the inspector, by the id the host gave it. */
  | { type: 'open'; sessionId: number }
  /** Something failed inside the page; the host logs it. */
  | { type: 'log/error'; message: string };

/** Requests the page sends: none (the content comes whole with `show`). */
export type SessionsWebviewRequests = Record<never, never>;
/** Requests the host sends: none. */
export type SessionsHostRequests = Record<never, never>;

/** Everything the host can post to a sessions page. */
export type SessionsHostMessage = SessionsHostNotification;
/** Everything a sessions page can post to the host (a response only to a request of the host's, of which there are none). */
export type SessionsWebviewMessage = SessionsWebviewNotification | ResponseMessage;
