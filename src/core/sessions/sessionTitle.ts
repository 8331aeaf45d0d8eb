import type { Session } from '../trace/model';

/**
 * A session's title as a person would name it. Agents title some sessions themselves
 * (Claude Code's `summary`, `ai-title` and `custom-title` records, Codex's thread names,
 * Gemini CLI's and OpenCode's `title`), but not all of those are names: Claude Code
 * writes the failed summarising request's error as the summary ("API Error: 401 …"),
 * and some producers title a session by its id. Those are skipped for the first prompt
 * the user typed; when there is neither, the caller says what the session is (its agent
 * and start) instead of showing a file's UUID.
 */

/** Longest title kept: enough for a tooltip; labels clip it further. */
export const TITLE_MAX = 200;

/** A UUID, a bare long hex id or a rollout-like file name: an id, not a name. */
const ID_LIKE =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}|(?:rollout|session|agent)-[\w:.-]*\d[\w:.-]*)(?:\.jsonl?)?$/i;

/**
 * What an agent writes where a title should be when the request that makes the title
 * failed: Claude Code's summary of an errored request ("API Error: …", "Invalid API key ·
 * Please run /login", "Request was aborted.", "Prompt is too long", "Credit balance is
 * too low"). Public session viewers skip the same records (they fall back to the first
 * message too).
 */
const ERROR_TITLE =
  /^(?:API Error\b|Invalid API key\b|Request (?:was )?(?:aborted|interrupted|timed out)\b|Prompt is too long\b|Credit balance is too low\b|Claude AI usage limit reached\b|\[Request interrupted)/i;

/** How much of a candidate title is looked at (enough for TITLE_MAX after injected blocks are dropped). */
const CLEAN_MAX = 8192;

/** Box-drawing characters (U+2500–U+257F): a pasted terminal panel's frame, not words. */
const BOX_DRAWING = /[\u2500-\u257f]+/g;

/** Tags agents wrap injected context in (`<system-reminder>…</system-reminder>`): dropped with their content. */
const INJECTED_BLOCK = /<(system-reminder|environment_context|user_instructions|session_context)>[\s\S]*?<\/\1>/gi;

/**
 * A candidate title made readable: injected blocks and box-drawing frames dropped,
 * whitespace collapsed to single spaces, clipped. Null when nothing readable is left.
 */
export function cleanTitle(text: string | null | undefined): string | null {
  if (!text) return null;
  // Only the start can show: a 10 MiB title is cut before the patterns run over it.
  const cleaned = text
    .slice(0, CLEAN_MAX)
    .replace(INJECTED_BLOCK, ' ')
    .replace(BOX_DRAWING, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (cleaned === '' || !/[\p{L}\p{N}]/u.test(cleaned)) return null;
  return cleaned.length > TITLE_MAX ? `${cleaned.slice(0, TITLE_MAX - 1)}…` : cleaned;
}

/** True for an id or a file named by one (`ae4a77f8-….jsonl`, `rollout-2026-…-<uuid>.jsonl`): it tells a person nothing. */
export function isIdName(name: string): boolean {
  return ID_LIKE.test(name.trim());
}

/** True when a title names nothing: an id or a file name made of one, or an error an agent wrote in its place. */
export function isPlaceholderTitle(title: string): boolean {
  const t = title.trim();
  return ID_LIKE.test(t) || ERROR_TITLE.test(t);
}

/**
 * What an editor tab showing a trace is called: the session's title when the file is
 * named by an id (a UUID says nothing), else null (the file name stays). Plain text is
 * the caller's job.
 */
export function tabTitle(fileName: string, title: string | null): string | null {
  return title !== null && isIdName(fileName) ? title : null;
}

/**
 * The title to show for a session: the agent's own title when it is a name, else the
 * first prompt typed (a sub-agent's: the task it was given), else null (show what the
 * session is, never its id).
 */
export function sessionTitle(
  session: Pick<Session, 'title' | 'id'> & { turns: ReadonlyArray<{ preview: string }> },
): string | null {
  const own = cleanTitle(session.title);
  if (own !== null && !isPlaceholderTitle(own) && own !== session.id) return own;
  // A typed prompt is the user's own words, whatever they say ("Error: … fix it" included): only empty ones are passed over.
  for (const turn of session.turns) {
    const prompt = cleanTitle(turn.preview);
    if (prompt !== null) return prompt;
  }
  return null;
}

/**
 * What a trace is called in the inspector's heading: the title of its session when it holds
 * one main session (with its sub-agents), or when the file is named by an id; null when the
 * file's own name says more (a named file of several sessions is not its first one's).
 */
export function traceTitle(
  fileName: string,
  sessions: ReadonlyArray<Pick<Session, 'role'>>,
  first: (Pick<Session, 'title' | 'id'> & { turns: ReadonlyArray<{ preview: string }> }) | undefined,
): string | null {
  if (!first) return null;
  const mains = sessions.filter((s) => s.role === 'main').length;
  return mains <= 1 || isIdName(fileName) ? sessionTitle(first) : null;
}
