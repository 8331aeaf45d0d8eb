import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clipText, displayText, terminalJson, terminalText, uiText } from '../../../../src/core/text/safeText';
import { COMMAND_LINK, PAYLOADS, RAW_CONTROL } from '../../../support/hostileCorpus';

// What each surface would act on, checked against the patterns VS Code itself uses:
// notifications link `[text](command:…)` (base/common/linkedText.ts), labels render
// `$(name)` (base/common/iconLabels.ts); terminals act on ESC and the C1 CSI.
const VSCODE_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;
const VSCODE_ICON = /(\\)?\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g;

describe('safeText', () => {
  it('terminalText shows every control and bidi character as a visible escape, keeping newlines and tabs', () => {
    const out = terminalText(`a\tb\n${PAYLOADS.ansi} ${PAYLOADS.bidi}\u2028x\u007f`);
    assert.doesNotMatch(out, RAW_CONTROL);
    assert.ok(out.startsWith('a\tb\n\\x1b[2J\\x1b]0;pwned\\x07'));
    assert.ok(out.includes('\\x9b31m') && out.includes('\\u202egnp.exe') && out.includes('\\u2028x\\x7f'));
    assert.equal(terminalText('plain — text ✓'), 'plain — text ✓');
  });

  it('terminalJson escapes what JSON.stringify leaves raw, and reads back as the same value', () => {
    const value = { s: `${PAYLOADS.ansi}${PAYLOADS.bidi}\u2028\u0085é` };
    const out = terminalJson(JSON.stringify(value));
    assert.doesNotMatch(out, RAW_CONTROL);
    assert.doesNotMatch(out, /[\u2028\u2029\u0085]/);
    assert.deepEqual(JSON.parse(out), value);
  });

  it('uiText leaves no link VS Code would run and no icon it would render, one line, clipped', () => {
    const out = uiText(
      `${COMMAND_LINK} ${PAYLOADS.terminal} ${PAYLOADS.codicon} ${PAYLOADS.bidi} ${PAYLOADS.ansi}\nsecond line`,
    );
    assert.deepEqual([...out.matchAll(VSCODE_LINK)], []);
    assert.deepEqual([...out.matchAll(VSCODE_ICON)], []);
    assert.doesNotMatch(out, RAW_CONTROL);
    assert.doesNotMatch(out, /\n/);
    // What the user reads is still what the trace says (the zero-width space is invisible).
    assert.ok(out.replace(/\u200b/g, '').startsWith(COMMAND_LINK));
    assert.equal(uiText('x'.repeat(100_000), { max: 300 }).length, 300);
    assert.equal(uiText('x'.repeat(10 * 2 ** 20)).length, 300);
    assert.equal(uiText('line 1\nline 2', { multiline: true }), 'line 1\nline 2');
    assert.equal(uiText('ok text'), 'ok text');
  });

  it('displayText escapes bidi and control characters for the panel and clips a 10 MiB value', () => {
    assert.equal(displayText(`a\u202eb`), 'a\\u202eb');
    assert.equal(displayText('x'.repeat(10 * 2 ** 20)).length, 4000);
    assert.equal(displayText('tab\tand\nnewline'), 'tab\tand\nnewline');
  });

  it('clipText never splits a surrogate pair', () => {
    assert.equal(clipText('ab😀cd', 4), 'ab…');
    assert.equal(clipText('abc', 3), 'abc');
  });
});
