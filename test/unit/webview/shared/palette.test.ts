import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildPalette, isHighContrast, mixOver, withAlpha } from '../../../../webview/shared/palette';

describe('chart palette from theme variables', () => {
  it('uses the theme variables, falling back to Dark Modern for missing ones', () => {
    const vars: Record<string, string> = { '--vscode-charts-blue': ' #1a85ff ', '--vscode-foreground': '#3b3b3b' };
    const p = buildPalette((n) => vars[n] ?? '', false);
    assert.equal(p.cached, '#1a85ff');
    // charts-foreground is absent, so the context line takes the foreground.
    assert.equal(p.context, '#3b3b3b');
    assert.equal(p.appended, '#d18616');
    assert.equal(p.barBorder, null);
  });

  it('paints retry loops in charts-red (else the error colour) and cache misses in charts-orange', () => {
    const vars: Record<string, string> = { '--vscode-charts-red': '#e51400', '--vscode-charts-orange': '#ff9b28' };
    assert.deepEqual(
      [buildPalette((n) => vars[n] ?? '', false).loop, buildPalette((n) => vars[n] ?? '', false).miss],
      ['#e51400', '#ff9b28'],
    );
    const noRed: Record<string, string> = { '--vscode-errorForeground': '#f48771' };
    assert.equal(buildPalette((n) => noRed[n] ?? '', true).loop, '#f48771');
  });

  it('outlines bars with contrastBorder only in high contrast', () => {
    const read = (n: string): string => (n === '--vscode-contrastBorder' ? '#6fc3df' : '');
    assert.equal(buildPalette(read, true).barBorder, '#6fc3df');
    assert.equal(buildPalette(read, false).barBorder, null);
  });

  it('recognises both high-contrast body classes', () => {
    assert.ok(isHighContrast('vscode-high-contrast'));
    assert.ok(isHighContrast('foo vscode-high-contrast-light'));
    assert.ok(!isHighContrast('vscode-dark'));
  });

  it('multiplies alpha into hex and rgb colours and leaves other forms alone', () => {
    assert.equal(withAlpha('#3794ff', 0.5), 'rgba(55, 148, 255, 0.5)');
    assert.equal(withAlpha('#fff', 1), 'rgba(255, 255, 255, 1)');
    assert.equal(withAlpha('#cccccc80', 0.5), 'rgba(204, 204, 204, 0.251)');
    assert.equal(withAlpha('rgba(1, 2, 3, 0.5)', 0.5), 'rgba(1, 2, 3, 0.25)');
    assert.equal(withAlpha('rgb(1 2 3 / 50%)', 1), 'rgba(1, 2, 3, 0.5)');
    assert.equal(withAlpha('red', 0.5), 'red');
  });

  it('blends a translucent colour over the background into one opaque colour', () => {
    // 55 × 0.5 + 31 × 0.5 = 43, 148 × 0.5 + 31 × 0.5 = 89.5 → 90, 255 × 0.5 + 31 × 0.5 = 143.
    assert.equal(mixOver('#3794ff', 0.5, '#1f1f1f'), 'rgb(43, 90, 143)');
    assert.equal(mixOver('#3794ff', 1, '#ffffff'), 'rgb(55, 148, 255)');
    assert.equal(mixOver('red', 0.5, '#000000'), 'red');
  });
});
