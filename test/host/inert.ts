import * as assert from 'node:assert/strict';
import { RAW_CONTROL } from '../support/hostileCorpus';

// What VS Code itself acts on in text it renders: `[text](command:…)` links
// (base/common/linkedText.ts, used by notifications) and `$(icon)` (iconLabels.ts, used by
// CodeLens, tree items, quick picks and the status bar). Shared by the hostile-corpus suites.

export const VSCODE_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;
export const VSCODE_ICON = /(?<!\\)\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g;
/** The icons the extension writes itself, at the start of its own titles. */
export const OWN_ICONS = new Set([
  'pulse',
  'error',
  'circle-slash',
  'warning',
  'loading~spin',
  'info',
  'folder-opened',
]);

/** A string VS Code will render: no raw control or bidi character, no link it would run, no icon but the extension's own, clipped. */
export function assertInert(text: string, where: string, max = 1000): void {
  assert.doesNotMatch(text, RAW_CONTROL, `${where}: a raw control or bidi character`);
  assert.doesNotMatch(text, VSCODE_LINK, `${where}: a link VS Code would run`);
  for (const m of text.matchAll(VSCODE_ICON))
    assert.ok(OWN_ICONS.has(m[1]!) && m.index === 0, `${where}: the icon ${m[0]} comes from the trace`);
  assert.ok(text.length <= max, `${where}: ${text.length} characters`);
}
