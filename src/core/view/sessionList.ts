import { formatCount } from '../text/formatNumbers';
import type { Session } from '../trace/model';

/** One entry of the session picker. */
export interface SessionEntry {
  id: string;
  label: string;
  /** 0 for a main session, 1 for its sub-agents, 2 for theirs and deeper. */
  depth: number;
}

/** A page of the session picker: the entries matching a query, in tree order. */
export interface SessionPage {
  /** Entries matching the query (all of them, not only this page's). */
  total: number;
  offset: number;
  entries: SessionEntry[];
}

/** Depth shown in the picker: deeper sub-agents are drawn at the second level. */
const MAX_DEPTH = 2;

/** Short session id for labels: the first block of a UUID, other ids whole. */
export function shortSessionId(id: string): string {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id) ? id.slice(0, 8) : id;
}

function callsText(n: number): string {
  return `${formatCount(n)} ${n === 1 ? 'call' : 'calls'}`;
}

/** "└ sub-agent aac57f5 · title · 3 calls". */
export function sessionLabel(s: Pick<Session, 'id' | 'role' | 'title'>, calls: number, depth: number): string {
  const kind = s.role === 'main' ? 'main session' : s.role === 'compaction' ? 'compaction agent' : 'sub-agent';
  const title = s.title ? ` · ${s.title}` : '';
  // The select collapses leading spaces, so a corner glyph shows the nesting.
  return `${depth > 0 ? '└ ' : ''}${kind} ${shortSessionId(s.id)}${title} · ${callsText(calls)}`;
}

/**
 * The picker's order: each main session followed by its sub-agents (depth first, in
 * model order); sessions whose parent is absent start a tree of their own, and anything
 * left (a parent cycle) comes last. Linear in the sessions and iterative, so 50,000
 * conversations or a 20,000-deep chain of sub-agents cost one pass and no deep stack.
 */
export function sessionTreeOrder(
  sessions: readonly Pick<Session, 'id' | 'parentId'>[],
): { index: number; depth: number }[] {
  const byId = new Map<string, number>();
  sessions.forEach((s, i) => {
    if (!byId.has(s.id)) byId.set(s.id, i);
  });
  const children = new Map<number, number[]>();
  sessions.forEach((s, i) => {
    if (s.parentId === null || s.parentId === s.id) return;
    const parent = byId.get(s.parentId);
    if (parent === undefined) return;
    const list = children.get(parent);
    if (list) list.push(i);
    else children.set(parent, [i]);
  });
  const placed = new Uint8Array(sessions.length);
  const out: { index: number; depth: number }[] = [];
  const visit = (root: number): void => {
    // Reversed pushes keep the children in model order when popped.
    const stack: { index: number; depth: number }[] = [{ index: root, depth: 0 }];
    while (stack.length > 0) {
      const { index, depth } = stack.pop()!;
      if (placed[index]) continue;
      placed[index] = 1;
      out.push({ index, depth });
      const kids = children.get(index);
      if (!kids) continue;
      for (let k = kids.length - 1; k >= 0; k--)
        if (!placed[kids[k]!]) stack.push({ index: kids[k]!, depth: Math.min(depth + 1, MAX_DEPTH) });
    }
  };
  sessions.forEach((s, i) => {
    const parent = s.parentId === null ? undefined : byId.get(s.parentId);
    if (parent === undefined || s.parentId === s.id) visit(i);
  });
  sessions.forEach((_, i) => visit(i));
  return out;
}
