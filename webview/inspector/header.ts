import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import { formatCount } from '../../src/core/text/formatNumbers';
import { displayText } from '../../src/core/text/safeText';
import type { TraceHeader } from '../../src/core/view/traceService';
import { LIVE_WINDOW_MS } from '../../src/protocol/messages';
import type { LiveState } from '../../src/protocol/messages';
import { el, fillSelect, icon, replaceChildren } from '../shared/dom';
import type { InspectorHost, InspectorOptions } from './inspectorHost';
import { diagnosticRows, skippedSummary } from './inspectorModel';
import './header.css';

/** What the header asks of the page. */
export interface HeaderHost {
  readonly host: InspectorHost;
  readonly options: InspectorOptions;
  safely(what: string, fn: () => void): void;
  /** Another format was chosen: the host reads the file again, which the page says. */
  readingAgain(text: string): void;
}

/**
 * What the page says of the trace as a whole: the title row (title, file name, format
 * badge, live badge), how the format was found, what it cannot give, the row of controls
 * (the session's, then the format picker), the problem that keeps a trace from showing,
 * and the diagnostics pane at the foot of the page.
 */
export class TraceHeaderView {
  readonly element = el('header', { className: 'header' });
  readonly problem = el('section', { className: 'problem', attrs: { role: 'alert' } });
  readonly diagnostics = el('section', { className: 'diagnostics panel', attrs: { 'aria-label': 'Diagnostics' } });
  private header: TraceHeader | null = null;
  /** The trace's file name; beside the title when the trace has one (the heading never shows only a file's UUID when a title exists). */
  private readonly fileName = el('span', { className: 'file-name' });
  /** The default session's title (the agent's own, else the first prompt typed), from the host. */
  private readonly traceTitle = el('span', { className: 'trace-title' });
  private readonly heading = el('h1', { className: 'trace-heading' }, [this.traceTitle, this.fileName]);
  private readonly formatBadge = el('span', { className: 'badge', attrs: { 'aria-describedby': 'format-evidence' } });
  /** "● live" while the file grew recently (new calls are added as they are written). */
  private readonly liveBadge = el('span', { className: 'badge live-badge', data: { live: '' } });
  /** What the last append brought ("3 new calls at 12:03:04"). */
  private readonly liveText = el('span', { className: 'live-text muted', attrs: { role: 'status' } });
  private liveTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly evidence = el('p', { className: 'evidence muted', attrs: { id: 'format-evidence' } });
  private readonly formatPicker = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly limitations = el('div', { className: 'limitations', attrs: { role: 'note' } });
  private readonly controls = el('div', { className: 'controls' });

  /** `sessionControls`: the session's row of controls, first in the header's controls. */
  constructor(
    private readonly page: HeaderHost,
    sessionControls: HTMLElement,
  ) {
    this.formatPicker.label = 'Format';
    this.formatPicker.id = 'format-picker';
    this.formatPicker.addEventListener('change', () =>
      page.safely('choose a format', () => this.chooseFormat(this.formatPicker.value)),
    );
    this.controls.append(sessionControls);
    if (page.options.formatChoice)
      this.controls.append(
        el('div', { className: 'format-control' }, [
          el('label', { className: 'control-label', text: 'Format', attrs: { for: 'format-picker' } }),
          this.formatPicker,
        ]),
      );
    this.liveBadge.hidden = true;
    this.liveText.hidden = true;
    this.element.append(
      el('div', { className: 'title-row' }, [
        icon('graph', 'title-icon'),
        this.heading,
        this.formatBadge,
        this.liveBadge,
        this.liveText,
      ]),
      this.evidence,
      this.limitations,
      this.controls,
    );
    this.element.hidden = true;
    this.problem.hidden = true;
    this.diagnostics.hidden = true;
  }

  /** Draws the header of a trace just read (or read again). */
  render(h: TraceHeader): void {
    this.header = h;
    this.element.hidden = false;
    this.fileName.textContent = displayText(h.fileName);
    this.fileName.title = h.fileName;
    this.traceTitle.textContent = h.title ? displayText(h.title) : '';
    this.traceTitle.title = h.title ?? '';
    this.traceTitle.hidden = !h.title;
    this.heading.classList.toggle('has-title', Boolean(h.title));
    this.formatBadge.textContent = h.formatLabel ?? 'unknown format';
    const evidence = displayText(
      h.formatChosen ? `Read as ${h.formatLabel ?? 'the chosen format'}, as you chose.` : `Detected: ${h.detection}`,
    );
    this.evidence.textContent = evidence;
    // How the format was detected is a detail (the badge's tooltip; screen readers read it as the badge's description);
    // a format the user chose is said on the page, so a wrong choice shows.
    this.evidence.classList.toggle('visually-hidden', !h.formatChosen);
    this.formatBadge.title = evidence;
    this.renderLimitations(h);
    this.renderProblem(h);
    this.renderFormatPicker(h);
    this.renderDiagnostics(h);
  }

  /** Hides every figure of the trace the header holds: shown again by the next read's answer. */
  hide(): void {
    this.element.hidden = true;
    this.problem.hidden = true;
    this.diagnostics.hidden = true;
    this.liveBadge.hidden = true;
    clearTimeout(this.liveTimer);
  }

  /** The "live" badge: shown while the file grew within LIVE_WINDOW_MS, then hidden by a timer. */
  showLive(live: LiveState | undefined): void {
    clearTimeout(this.liveTimer);
    const ago = live?.grewMsAgo ?? null;
    const left = ago === null ? 0 : LIVE_WINDOW_MS - ago;
    this.liveBadge.hidden = left <= 0 || this.element.hidden;
    if (left <= 0) return;
    this.liveBadge.textContent = '● live';
    this.liveBadge.title =
      'This file is being written: new calls are added as they arrive (only the new bytes are read). Your zoom, scroll and selection stay.';
    this.liveTimer = setTimeout(
      () => this.page.safely('live badge', () => this.showLive({ grewMsAgo: LIVE_WINDOW_MS })),
      left,
    );
  }

  /** Says what an append brought (`added` calls, 0: the last call changed). */
  showAppended(added: number): void {
    this.liveText.textContent = `${added > 0 ? `${formatCount(added)} new ${added === 1 ? 'call' : 'calls'}` : 'updated'} at ${new Date().toLocaleTimeString()}`;
    this.liveText.dataset['added'] = String(added);
    this.liveText.hidden = false;
  }

  private renderProblem(h: TraceHeader): void {
    let title: string | null = null;
    let text = '';
    if (h.problem) {
      title = "This trace can't be shown";
      text = h.problem.message;
    } else if (h.sessionCount === 0) {
      title = 'No sessions found';
      text = h.formatChosen
        ? `Nothing in this file matched ${h.formatLabel ?? 'the chosen format'}. Choose another format, or "Detect automatically".`
        : 'The file was read, but it contains no agent session with LLM calls.';
    }
    this.problem.hidden = title === null;
    this.problem.dataset['problem'] = h.problem?.kind ?? (title ? 'no-sessions' : '');
    replaceChildren(
      this.problem,
      title === null
        ? []
        : [
            icon('error', 'problem-icon'),
            el('div', {}, [el('h2', { text: title }), el('p', { className: 'problem-message', text })]),
          ],
    );
  }

  /** Says what the format cannot give, so a missing figure reads as "not in this format", not as zero. */
  private renderLimitations(h: TraceHeader): void {
    this.limitations.hidden = h.limitations.length === 0;
    replaceChildren(
      this.limitations,
      h.limitations.length === 0
        ? []
        : [
            icon('info', 'limitations-icon'),
            el('div', {}, [
              el('span', {
                className: 'limitations-title',
                text: `What ${h.formatLabel ?? 'this format'} cannot give:`,
              }),
              el(
                'ul',
                {},
                h.limitations.map((text) => el('li', { text })),
              ),
            ]),
          ],
    );
  }

  private renderFormatPicker(h: TraceHeader): void {
    const auto = h.formatChosen ? 'Detect automatically' : `Detect automatically (${h.formatLabel ?? 'no match'})`;
    const options: Array<[string, string]> = [
      ['', auto],
      ...h.formatChoices.map((f): [string, string] => [f.id, f.label]),
    ];
    const current = h.formatChosen && h.format ? h.format : '';
    fillSelect(this.formatPicker, options, current);
  }

  private chooseFormat(value: string): void {
    const h = this.header;
    if (!h) return;
    const current = h.formatChosen && h.format ? h.format : '';
    if (value === current) return;
    const choice = h.formatChoices.find((f) => f.id === value);
    this.formatPicker.dataset['value'] = value;
    this.page.host.notify({ type: 'format/choose', format: choice ? choice.id : null });
    this.page.readingAgain(choice ? `Reading again as ${choice.label}…` : 'Detecting the format again…');
  }

  private renderDiagnostics(h: TraceHeader): void {
    const rows = diagnosticRows(h.diagnostics);
    const skipped = skippedSummary(h.skippedRecords);
    this.diagnostics.hidden = false;
    const heading = el('h2', {}, [
      el('span', { text: 'Diagnostics' }),
      el('span', { className: 'count-badge', text: String(rows.length) }),
    ]);
    const list =
      rows.length === 0
        ? el('p', { className: 'muted', text: 'No problems found while reading this trace.' })
        : el(
            'ul',
            { className: 'diagnostic-list' },
            rows.map((r) => {
              const b = el(
                'button',
                {
                  className: `diagnostic diagnostic-${r.icon}`,
                  attrs: { type: 'button' },
                  title: `Open ${r.location}`,
                  data: { line: String(r.line) },
                },
                [
                  icon(r.icon === 'error' ? 'error' : r.icon === 'warning' ? 'warning' : 'info', `severity-${r.icon}`),
                  el('span', { className: 'location', text: r.location }),
                  el('span', { className: 'message', text: r.message }),
                ],
              );
              b.addEventListener('click', () => {
                if (this.page.options.sourceLinks)
                  this.page.host.notify({ type: 'source/revealLine', file: r.fileIndex, line: r.line });
              });
              return el('li', {}, [b]);
            }),
          );
    replaceChildren(this.diagnostics, [
      heading,
      list,
      skipped ? el('p', { className: 'skipped muted', text: skipped, data: { skipped: '' } }) : null,
    ]);
  }
}
