import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import type { VscodeTextfield } from '@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js';
import type { TtlReplay } from '../../src/core/cost/cacheTtlWhatIf';
import type { AnalysisView, SessionCostFigures } from '../../src/core/view/traceView';
import type { InspectorPanel, PanelContext, PanelSection, PanelSession } from '../inspector/panel';
import type { PersistedState } from '../inspector/inspectorModel';
import { el, replaceChildren, table } from '../shared/dom';
import {
  DEFAULT_CUSTOM_TTL_MIN,
  idealRows,
  idealSummary,
  parseTtlMinutes,
  parseWriteMultiple,
  ttlBasisText,
  ttlRows,
} from './costModel';
import type { CustomTtl, TtlRow } from './costModel';
import './cost.css';

/** What the cost panel asks of the page around it. */
export interface CostPanelHost {
  /** Selects a call on the timeline (an expired call's number was clicked). */
  pickCall(index: number): void;
  /** The user changed the extra TTL: the app stores it with the webview state. */
  customChanged(custom: CustomTtl): void;
  /** The shown session replayed under the user's TTL, by whoever holds its calls (the trace worker); null without prices. */
  replayCustom(custom: CustomTtl): Promise<TtlReplay | null>;
  /** A replay that could not be had, to be said. */
  failed(e: unknown): void;
}

/** What the panel draws of a session: how many calls, its cost and TTL replays, its ideal-cache curve (with the analyses). */
export interface CostPanelSession {
  callCount: number;
  cost: SessionCostFigures | null;
  idealCache: AnalysisView['idealCache'] | null;
}

/** Expired calls listed by number; the rest are counted. */
const CALLS_LISTED = 12;

/**
 * The "Cost and cache TTL" panel: the session replayed under the provider's 5-minute and
 * 1-hour TTLs and one the user types (replayed by the trace worker, which holds the calls), and
 * the session in an ideal idle-TTL cache beside TraceLab's published figures. Trace text
 * never reaches it as HTML: every string goes in through textContent.
 */
export class CostPanel implements InspectorPanel {
  readonly element = el('section', { className: 'cost panel', attrs: { 'aria-label': 'Cost and cache TTL' } });
  readonly sections: readonly PanelSection[] = [{ slot: 'below', element: this.element }];
  private readonly minutes = document.createElement('vscode-textfield') as VscodeTextfield;
  private readonly write = document.createElement('vscode-textfield') as VscodeTextfield;
  private readonly fieldError = el('p', {
    className: 'field-error',
    attrs: { 'aria-live': 'polite' },
    data: { fieldError: 'ttl' },
  });
  private readonly body = el('div', { className: 'cost-body' });
  private session: CostPanelSession | null = null;
  private custom: CustomTtl = { minutes: DEFAULT_CUSTOM_TTL_MIN, writeMultiple: null };
  /** The last replay of the user's TTL, for which session and TTL. */
  private customRow: { session: CostPanelSession; custom: CustomTtl; replay: TtlReplay | null } | null = null;
  /** Counts replays asked for: an answer to an older one is dropped. */
  private asked = 0;

  constructor(private readonly host: CostPanelHost) {
    this.minutes.id = 'cost-ttl-minutes';
    this.minutes.label = 'Your TTL (minutes)';
    this.minutes.setAttribute('inputmode', 'decimal');
    this.minutes.dataset['field'] = 'ttl-minutes';
    this.write.id = 'cost-ttl-write';
    this.write.label = 'Its write price, × the input price';
    this.write.title = 'Empty: the 5-minute write price for a TTL up to 5 minutes, else the 1-hour write price';
    this.write.setAttribute('inputmode', 'decimal');
    this.write.placeholder = 'default';
    this.write.dataset['field'] = 'ttl-write';
    this.fieldError.hidden = true;
    for (const f of [this.minutes, this.write]) f.addEventListener('input', () => this.readFields());
    this.element.append(el('h2', { text: 'Cost and the provider’s cache TTL' }), this.body);
    this.element.hidden = true;
  }

  restore(saved: PersistedState): void {
    this.setCustom(saved.costTtl ?? null);
  }

  /** Drawn with the session's body (its analyses hold the ideal cache); hidden while it comes. */
  showSession(s: PanelSession | null): void {
    if (!s) return;
    if (!s.body) this.element.hidden = true;
    else
      this.render({
        callCount: s.body.columns.flags.length,
        cost: s.intro.cost,
        idealCache: s.body.analysis.idealCache ?? null,
      });
  }

  /** The TTL the user chose before (from the webview state). */
  setCustom(custom: CustomTtl | null): void {
    if (custom) this.custom = custom;
    this.minutes.value = String(this.custom.minutes);
    this.write.value = this.custom.writeMultiple === null ? '' : String(this.custom.writeMultiple);
  }

  render(session: CostPanelSession | null): void {
    this.session = session;
    this.element.hidden = session === null || session.callCount === 0;
    if (!session || this.element.hidden) return;
    replaceChildren(this.body, [...this.ttlPart(session), ...this.idealPart(session)]);
  }

  private readFields(): void {
    const minutes = parseTtlMinutes(this.minutes.value);
    const write = parseWriteMultiple(this.write.value);
    const problem = typeof minutes === 'string' ? minutes : typeof write === 'string' ? write : null;
    this.fieldError.hidden = problem === null;
    this.fieldError.textContent = problem ?? '';
    this.minutes.invalid = typeof minutes === 'string';
    this.write.invalid = typeof write === 'string';
    // A value the replay cannot use keeps the last good row on screen.
    if (typeof minutes === 'string' || typeof write === 'string') return;
    this.custom = { minutes, writeMultiple: write };
    this.host.customChanged(this.custom);
    this.render(this.session);
  }

  private ttlPart(session: CostPanelSession): HTMLElement[] {
    const cost = session.cost;
    if (!cost) return [el('p', { className: 'muted', text: 'Prices were not loaded for this view.' })];
    const what = cost.ttl;
    const labelled = (field: VscodeTextfield, text: string, unit: string): HTMLElement =>
      el('div', { className: 'cost-field' }, [
        el('label', { className: 'control-label', text, attrs: { for: field.id } }),
        el('div', { className: 'field-row' }, [field, el('span', { className: 'unit muted', text: unit })]),
      ]);
    const controls = el('div', { className: 'cost-controls' }, [
      labelled(this.minutes, 'Your TTL', 'min'),
      labelled(this.write, 'Its write price (empty: the provider’s 5-minute or 1-hour price)', '× input'),
      this.fieldError,
    ]);
    if (what.actualUsd === null) {
      return [
        el('p', {
          className: 'muted',
          data: { ttlSentence: '' },
          text: 'The cache TTL what-if needs priced calls, and no call of this session has a price (see Diagnostics, or add one with the agentTrace.prices setting).',
        }),
      ];
    }
    // The user's row comes from the worker (it holds the calls); until it answers, the provider's two rows show alone.
    const known =
      this.customRow !== null && this.customRow.session === session && this.customRow.custom === this.custom;
    if (!known) this.askReplay(session);
    const rows = ttlRows(what, known ? this.customRow!.replay : null).map((r) => this.ttlRow(r));
    return [
      el('p', { className: 'ttl-sentence', text: what.sentence ?? '', data: { ttlSentence: '' } }),
      el('p', { className: 'muted', text: ttlBasisText(what) }),
      el('div', { className: 'table-wrap' }, [
        table(
          'ttl-table',
          'The session replayed under other cache TTLs',
          ['TTL', 'Write price', 'Cost', 'Against the log', 'Found the cache expired', 'Written again'],
          rows,
          2,
        ),
      ]),
      controls,
    ];
  }

  private askReplay(session: CostPanelSession): void {
    const custom = this.custom;
    const ask = ++this.asked;
    this.host.replayCustom(custom).then(
      (replay) => {
        if (ask !== this.asked || this.session !== session || this.custom !== custom) return;
        this.customRow = { session, custom, replay };
        this.render(session);
      },
      (e: unknown) => {
        if (ask === this.asked) this.host.failed(e);
      },
    );
  }

  private ttlRow(r: TtlRow): HTMLTableRowElement {
    const listed = r.expiredCalls.slice(0, CALLS_LISTED).map((i) => {
      const b = el('button', {
        className: 'link-button call-chip',
        text: String(i + 1),
        attrs: { type: 'button' },
        title: `Select call ${i + 1}`,
        data: { call: String(i) },
      });
      b.addEventListener('click', () => this.host.pickCall(i));
      return b;
    });
    const more =
      r.expiredCalls.length > CALLS_LISTED
        ? el('span', { className: 'muted', text: `+${r.expiredCalls.length - CALLS_LISTED} more` })
        : null;
    return el('tr', { className: `ttl-row tone-${r.tone}`, data: { ttlRow: r.key } }, [
      el('th', { attrs: { scope: 'row' }, text: r.key === 'custom' ? `${r.ttl} (yours)` : r.ttl }),
      el('td', { text: r.writePrice }),
      el('td', { className: 'num', text: r.cost, data: { col: 'cost' } }),
      el('td', { className: 'num', text: r.change, data: { col: 'change' } }),
      el('td', { className: 'num', data: { col: 'expired', count: String(r.expiredCalls.length) } }, [
        el('span', { text: r.expired }),
        ...(listed.length > 0 ? [el('span', { className: 'muted', text: ': ' }), ...listed, more] : []),
      ]),
      el('td', { className: 'num', text: r.rewrite, data: { col: 'rewrite' } }),
    ]);
  }

  private idealPart(session: CostPanelSession): HTMLElement[] {
    const curve = session.idealCache;
    if (!curve) return [];
    const heading = el('h3', { text: 'Against TraceLab’s measurements' });
    if (curve.steps === 0)
      return [
        heading,
        el('p', {
          className: 'muted',
          text: 'No call has both a predecessor and a measurable idle gap, so the ideal-cache figures cannot be computed.',
        }),
      ];
    const rows = idealRows(curve).map((r) =>
      el('tr', { data: { idealRow: r.ttl } }, [
        el('th', { attrs: { scope: 'row' }, text: r.ttl }),
        el('td', { className: 'num', text: r.hitRate, data: { col: 'hitRate' } }),
        el('td', { className: 'num muted', text: r.publishedHitRate }),
        el('td', { className: 'num', text: r.amplification, data: { col: 'amplification' } }),
        el('td', { className: 'num muted', text: r.publishedAmplification }),
      ]),
    );
    return [
      heading,
      el('p', {
        className: 'muted',
        text: `An ideal prefix cache whose only flaw is an idle TTL, computed the way TraceLab did on real Claude Code and Codex sessions (uw-syfi/TraceLab, eviction_tradeoff): a call after a gap within the TTL prefills only its new tokens, one after a longer gap its whole prompt. ${curve.steps} of this session's calls count.`,
      }),
      el('div', { className: 'table-wrap' }, [
        table(
          'ideal-table',
          'Ideal cache with an idle TTL, against TraceLab',
          ['Idle TTL', 'Hit rate', 'TraceLab', 'Prefill amplification', 'TraceLab'],
          rows,
        ),
      ]),
      el('p', { className: 'ideal-summary', text: idealSummary(curve), data: { idealSummary: '' } }),
    ];
  }
}

/** The cost panel of the inspector page, wired to it. */
export function costPanel(page: PanelContext): InspectorPanel {
  return new CostPanel({
    pickCall: (index) => page.safely('select a call', () => page.focusCall(index)),
    customChanged: (custom) => page.saveState({ costTtl: custom }),
    replayCustom: (custom) => {
      const id = page.sessionId();
      return id === null
        ? Promise.resolve(null)
        : page.host.request('customTtl', {
            sessionId: id,
            minutes: custom.minutes,
            writeMultiple: custom.writeMultiple,
          });
    },
    failed: (e) => page.reportError('replay your cache TTL', e),
  });
}
