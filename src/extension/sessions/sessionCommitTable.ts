import * as vscode from 'vscode';
import { COMMIT_GRACE_MS, editedFiles } from '../../core/cost/costGroups';
import type { ThreadSpan } from '../../core/cost/costGroups';
import { addRepository, addUnjoined, fileSpan } from '../../core/sessions/sessionCommits';
import type { CommitTable } from '../../core/sessions/sessionCommits';
import type { SessionRow } from '../../core/sessions/sessionQuery';
import { commitsBetween, repositoryOf } from '../../node/gitLog';
import { maxFileBytes } from '../settings';
import { loadTrace } from '../traceLoader';

/**
 * The several-sessions report's cost per commit: each log of the report is read again for the
 * files its edit tools changed (the index keeps no such list), its folder's repository asked
 * with the user's git for the commits over its time (`git log`, no network), and the two
 * joined by the rule of `agent-trace cost --by commit`. A log that cannot be read counts as
 * joined to no commit.
 */
export async function commitTableOf(rows: readonly SessionRow[]): Promise<CommitTable> {
  const graceMs = COMMIT_GRACE_MS;
  const table: CommitTable = {
    commits: [],
    unjoined: { sessions: 0, usd: null },
    noRepository: 0,
    graceMinutes: graceMs / 60_000,
  };
  const byFile = new Map<string, SessionRow[]>();
  for (const r of rows) byFile.set(r.path, [...(byFile.get(r.path) ?? []), r]);
  const byRepo = new Map<string, ThreadSpan[]>();
  const repoOfDir = new Map<string, string | null>();
  for (const [file, fileRows] of byFile) {
    let edited: string[] = [];
    try {
      const parsed = await loadTrace(vscode.Uri.file(file), maxFileBytes(), () => undefined);
      edited = parsed.model.sessions.flatMap((s) => editedFiles(s));
    } catch {
      // Too large, gone or unreadable: no edits known, so joined to no commit (and still counted).
    }
    const span = fileSpan(file, fileRows, edited);
    if (!span) continue;
    let repo: string | null = null;
    if (span.cwd !== null) {
      if (!repoOfDir.has(span.cwd)) repoOfDir.set(span.cwd, await repositoryOf(span.cwd));
      repo = repoOfDir.get(span.cwd) ?? null;
    }
    if (repo === null) {
      table.noRepository += 1;
      addUnjoined(table, [span]);
    } else byRepo.set(repo, [...(byRepo.get(repo) ?? []), span]);
  }
  for (const [repo, spans] of byRepo) {
    const history = await commitsBetween(
      repo,
      Math.min(...spans.map((s) => s.startMs)),
      Math.max(...spans.map((s) => s.endMs)) + graceMs,
    );
    addRepository(table, spans, history, graceMs);
  }
  return table;
}
