import type { WhatIfDocument, WhatIfPoint } from '../../src/core/share/whatIfDocument';
import type { SessionView } from '../../src/core/view/traceView';
import { formatCount } from '../../src/core/text/formatNumbers';
import { POLICY_CHOICES } from '../../src/core/sim/policies';
import type { PolicyId as WhatIfPolicyId } from '../../src/core/sim/policies';
import { el, replaceChildren, table } from '../shared/dom';
import type { Palette } from '../shared/palette';
import { CliffChart, ScenarioBarsChart } from '../whatIf/whatIfCharts';
import { cliffChartModel, gpuRows, headlineFigures, pointOf, policyRows, scenarioBars } from '../whatIf/whatIfModel';

/**
 * The what-if scenario and cliff the user ran, in the report: the what-if panel's own
 * figures, charts and policy table (whatIfModel, whatIfCharts) drawn from the results the
 * panel handed over, without controls or a simulator (a report runs no worker).
 */
export class ReportWhatIf {
  readonly element = el('section', { className: 'report-whatif panel', attrs: { 'aria-label': 'What-if scenario' } });
  private bars: ScenarioBarsChart | null = null;
  private cliff: CliffChart | null = null;

  constructor(private palette: Palette) {}

  /** Draws the document for its session (`session` is that session's view, for the traced bars), or hides the section. */
  render(doc: WhatIfDocument | null, session: SessionView | null): void {
    this.bars?.destroy();
    this.cliff?.destroy();
    this.bars = null;
    this.cliff = null;
    this.element.hidden = doc === null;
    if (!doc) {
      replaceChildren(this.element, []);
      return;
    }
    const r = doc.scenario;
    const policy = (
      POLICY_CHOICES.some((c) => c.id === doc.input.params.policy) ? doc.input.params.policy : 'vllm-lru'
    ) as WhatIfPolicyId;
    const fleet = r.gpus && r.gpus > 1 ? `, ${r.gpus} GPUs behind the ${r.router ?? 'unnamed'} router` : '';
    const sentence =
      doc.sentence ??
      `${r.replicas} session${r.replicas === 1 ? '' : 's'}, ${formatCount(r.capacityTokens)}-token KV cache${fleet}, ${policy}.`;
    const figures = el(
      'dl',
      { className: 'whatif-figures' },
      headlineFigures(r, doc.alone).map((f) =>
        el('div', { className: 'figure', title: f.hint }, [
          el('dt', { text: f.label }),
          el('dd', {
            text: f.text,
            className: f.text === 'unknown' ? 'unknown' : '',
            data: { figure: f.name, value: JSON.stringify(f.value) },
          }),
          el('dd', { className: 'figure-note muted', text: f.note }),
        ]),
      ),
    );
    const parts: Array<HTMLElement | null> = [
      el('h2', { text: `What if${doc.input.session ? `: session ${doc.input.session}` : ''}` }),
      el('p', { className: 'whatif-sentence', text: sentence, data: { whatIfSentence: '' } }),
      figures,
      doc.input.notes.length > 0
        ? el(
            'ul',
            { className: 'whatif-notes muted' },
            doc.input.notes.map((n) => el('li', { text: n })),
          )
        : null,
    ];
    // The session's calls under the scenario beside the same calls as traced.
    if (session && r.calls.length > 0 && doc.callIndexes.length === r.calls.length) {
      const wrap = el('div', {
        className: 'whatif-chart whatif-bars-chart',
        attrs: {
          role: 'img',
          'aria-label': `${r.calls.length} calls under the scenario beside the same calls as traced`,
        },
      });
      const canvas = el('canvas', { attrs: { 'aria-hidden': 'true' } });
      wrap.appendChild(canvas);
      parts.push(
        el('section', { className: 'whatif-bars', attrs: { 'aria-label': 'Calls under the scenario' } }, [
          el('h3', { text: 'The session under the scenario, call by call' }),
          wrap,
        ]),
      );
      this.element.hidden = false;
      replaceChildren(this.element, parts);
      this.bars = new ScenarioBarsChart(wrap, canvas, this.palette, () => {});
      this.bars.render(scenarioBars(session.calls, r.calls, doc.callIndexes), r.calls, null);
    } else replaceChildren(this.element, parts);
    const gpus = gpuRows(r.perGpu);
    if (gpus) {
      const body = gpus.map((row) =>
        el('tr', { data: { gpu: row.gpu } }, [
          el('th', { attrs: { scope: 'row' }, text: `GPU ${row.gpu}` }),
          ...[
            row.cells.calls,
            row.cells.sessions,
            row.cells.busy,
            row.cells.hitRate,
            row.cells.ideal,
            row.cells.recomputed,
          ].map((text) => el('td', { className: 'num', text })),
        ]),
      );
      const caption = `${r.gpus ?? gpus.length} GPUs behind the ${r.router ?? 'unnamed'} router`;
      this.element.append(
        el('section', { className: 'whatif-gpus-section' }, [
          el('h3', { text: caption }),
          table(
            'whatif-gpu-table',
            caption,
            ['GPU', 'Calls', 'Sessions', 'Busy', 'Hit rate', 'Ideal', 'Recomputed'],
            body,
          ),
        ]),
      );
    }
    if (doc.sweep && doc.sweep.points.length > 0) {
      const sw = doc.sweep;
      const lines = new Map<WhatIfPolicyId, Array<{ value: number; result: WhatIfPoint }>>();
      for (const c of POLICY_CHOICES) if (sw.lines[c.id]) lines.set(c.id, sw.lines[c.id]!);
      const current = {
        x: sw.axis === 'replicas' ? r.replicas : sw.axis === 'gpus' ? (r.gpus ?? 1) : r.capacityTokens,
        result: pointOf(r),
      };
      const wrap = el('div', {
        className: 'whatif-chart whatif-cliff-chart',
        attrs: { role: 'img', 'aria-label': 'Hit rate and prefill share against the sweep' },
      });
      const canvas = el('canvas', { attrs: { 'aria-hidden': 'true' } });
      wrap.appendChild(canvas);
      this.element.append(
        el('section', { className: 'whatif-cliff', attrs: { 'aria-label': 'The cliff' } }, [
          el('h3', {
            text: `The cliff: hit rate and prefill share against ${sw.axis === 'replicas' ? 'concurrent sessions' : sw.axis === 'gpus' ? 'GPUs behind the router' : 'KV capacity'}`,
          }),
          wrap,
          el('p', {
            className: 'whatif-cliff-summary',
            text: sw.cliff?.summary ?? 'No cliff in the points run.',
            data: { cliffSummary: '' },
          }),
        ]),
      );
      this.cliff = new CliffChart(wrap, canvas, this.palette, () => {});
      this.cliff.render(cliffChartModel(sw.axis, policy, sw.points, lines, sw.cliff, current));
    }
    const results = new Map<WhatIfPolicyId, { result: WhatIfPoint } | { error: string }>();
    for (const p of doc.policies) {
      if (!POLICY_CHOICES.some((c) => c.id === p.policy)) continue;
      if (p.result) results.set(p.policy as WhatIfPolicyId, { result: p.result });
      else if (p.error) results.set(p.policy as WhatIfPolicyId, { error: p.error });
    }
    if (results.size > 0) {
      const rows = policyRows(policy, results)
        .filter((row) => row.state !== 'running')
        .map((row) =>
          el('tr', { data: { policy: row.policy } }, [
            el('th', { attrs: { scope: 'row' } }, [
              el('span', { text: row.label }),
              row.current ? el('span', { className: 'figure-tag', text: 'current' }) : null,
            ]),
            ...(row.state === 'error'
              ? [el('td', { className: 'error-text', text: row.error ?? 'failed', attrs: { colspan: '5' } })]
              : [
                  row.cells.hitRate,
                  row.cells.vsIdeal,
                  row.cells.recomputed,
                  row.cells.prefillShare,
                  row.cells.slowdown,
                ].map((text) => el('td', { className: 'num', text }))),
          ]),
        );
      this.element.append(
        el('section', { className: 'whatif-policy-section' }, [
          el('h3', { text: 'The same scenario under every policy' }),
          table(
            'whatif-policy-table',
            'The same scenario under every policy',
            ['Policy', 'Hit rate', 'vs ideal', 'Recomputed', 'Prefill share', 'Slowdown'],
            rows,
          ),
        ]),
      );
    }
    if (doc.command)
      this.element.append(
        el('p', { className: 'muted', text: 'Reproduce with:' }),
        el('pre', { className: 'whatif-command', text: doc.command }),
      );
  }

  setPalette(palette: Palette): void {
    this.palette = palette;
    this.bars?.setPalette(palette);
    this.cliff?.setPalette(palette);
  }
}
