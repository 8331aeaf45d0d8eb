import type { CallDetail, CallRow, LoopView, ToolDetail } from '../../src/core/view/traceView';
import { formatCount, formatPercent } from '../../src/core/text/formatNumbers';
import { loopAttemptText, missText } from '../analysis/analysisModel';
import { el, icon, linkButton } from '../shared/dom';
import { toolDurationText } from '../inspector/inspectorModel';
import { callHitRate, callTimeText } from './timelineModel';
import { displayText } from '../../src/core/text/safeText';
import { TRANSCRIPT_MAX_CHARS } from '../../src/core/view/transcript';
import { transcriptItems } from './transcriptModel';
import type { TranscriptState } from './transcriptModel';

/** What the details pane can ask the app to do. */
export interface DetailsActions {
  revealCall(): void;
  revealTool(toolId: string): void;
  /** Opens or closes the call's transcript (the app reads it from the host when open). */
  toggleTranscript?(open: boolean): void;
  /** Asks for more of each clipped text. */
  moreTranscript?(): void;
}

/** Details of a call: loading, loaded or failed. */
export type DetailsState =
  | { kind: 'loading' }
  | { kind: 'loaded'; detail: CallDetail }
  | { kind: 'error'; message: string };

/** The hint shown while no call is selected. */
export function detailsPlaceholder(): HTMLElement {
  return el('p', {
    className: 'muted placeholder',
    text: 'Select a call to see its prompt and tool calls: click a bar, or focus the chart and use ← →.',
  });
}

/** The pane for one call: its figures at once, tools once loaded. */
export function renderCallDetails(
  call: CallRow,
  count: number,
  state: DetailsState,
  actions: DetailsActions,
  loops: readonly LoopView[] = [],
  transcript: TranscriptState | null = null,
): HTMLElement[] {
  const head = el('div', { className: 'details-head' }, [
    el('h3', { text: `Call ${call.index + 1} of ${count}` }),
    call.model ? el('span', { className: 'muted', text: call.model }) : null,
    el('span', { className: 'spacer' }),
    linkButton('Show source', actions.revealCall, {
      title: 'Open the line of this call in the trace file',
      data: { action: 'reveal-call' },
    }),
  ]);
  const hit = callHitRate(call);
  const figures = el('dl', { className: 'call-figures' }, [
    ...pair('Time', callTimeText(call)),
    ...pair('Input', formatCount(call.input)),
    ...pair('Cached', formatCount(call.cached)),
    ...pair('Appended', formatCount(call.appended)),
    ...pair('Cache write', formatCount(call.cacheWrite)),
    ...pair('Output', formatCount(call.output)),
    ...pair('Hit', formatPercent(hit)),
  ]);
  const out: HTMLElement[] = [head, figures];
  // What the analyses say about this call, known at once (they came with the bars).
  const notes = [
    ...(call.loops ?? []).flatMap((i) => {
      const loop = loops[i];
      return loop
        ? [
            el('li', { className: 'call-note note-loop', data: { loop: String(i) } }, [
              icon('sync', 'loop-icon'),
              el('span', { text: loopAttemptText(loop, call.index) }),
            ]),
          ]
        : [];
    }),
    call.miss
      ? el('li', { className: 'call-note note-miss', data: { miss: call.miss.cause } }, [
          el('span', { className: 'swatch swatch-miss', attrs: { 'aria-hidden': 'true' } }),
          el('span', { text: missText(call.miss, call.appended) }),
        ])
      : null,
  ].filter((n): n is HTMLLIElement => n !== null);
  if (notes.length > 0) out.push(el('ul', { className: 'call-notes' }, notes));
  if (state.kind === 'loading') {
    out.push(el('p', { className: 'muted', text: 'Loading tool calls…', attrs: { 'aria-busy': 'true' } }));
  } else if (state.kind === 'error') {
    out.push(
      el('p', { className: 'inline-error', attrs: { role: 'alert' } }, [
        icon('error'),
        el('span', { text: `Could not load this call's details: ${state.message}` }),
      ]),
    );
  } else {
    const d = state.detail;
    if (d.turnPreview !== null) {
      out.push(el('h4', { text: call.turn !== null ? `Prompt of turn ${call.turn + 1}` : 'Prompt' }));
      out.push(el('blockquote', { className: 'prompt', text: d.turnPreview }));
    }
    out.push(el('h4', { text: d.tools.length === 0 ? 'No tool calls' : `Tool calls (${d.tools.length})` }));
    if (d.tools.length > 0)
      out.push(
        el(
          'ul',
          { className: 'tools' },
          d.tools.map((t) => toolItem(t, actions)),
        ),
      );
  }
  if (transcript) out.push(transcriptSection(transcript, actions));
  return out;
}

/**
 * The call's transcript: its prompt, the model's answer, its tool calls' input and their
 * results, read again from the trace on demand. Trace text, drawn as text only.
 */
function transcriptSection(state: TranscriptState, actions: DetailsActions): HTMLElement {
  const open = state.kind !== 'closed';
  const toggle = linkButton(open ? 'Hide' : 'Show', () => actions.toggleTranscript?.(!open), {
    title: open
      ? 'Hide the transcript'
      : 'Show what was sent and answered in this call: its prompt, the model\u2019s text, its tool calls\u2019 input and output',
    data: { action: 'toggle-transcript' },
    attrs: { 'aria-expanded': String(open) },
  });
  const head = el('div', { className: 'transcript-head' }, [el('h4', { text: 'Transcript' }), toggle]);
  const body: (HTMLElement | null)[] = [];
  if (state.kind === 'loading')
    body.push(
      el('p', { className: 'muted', text: 'Reading the call\u2019s records…', attrs: { 'aria-busy': 'true' } }),
    );
  else if (state.kind === 'error')
    body.push(
      el('p', { className: 'inline-error', attrs: { role: 'alert' } }, [
        icon('error'),
        el('span', { text: `Could not read the transcript: ${state.message}` }),
      ]),
    );
  else if (state.kind === 'loaded') {
    const items = transcriptItems(state.transcript);
    body.push(
      items.length === 0
        ? null
        : el(
            'ol',
            { className: 'transcript-entries' },
            items.map((item) =>
              el('li', { className: `transcript-entry entry-${item.kind}`, data: { entry: item.kind } }, [
                el('div', { className: 'entry-head' }, [
                  el('span', { className: 'entry-title', text: item.title }),
                  el('span', { className: 'muted', text: item.where }),
                ]),
                el('pre', {
                  className: 'entry-text',
                  text: displayText(item.text, TRANSCRIPT_MAX_CHARS),
                  attrs: { tabindex: '0', 'aria-label': `${item.title}, ${item.where}` },
                }),
                item.more === null
                  ? null
                  : item.more.startsWith('Show more')
                    ? linkButton(item.more, () => actions.moreTranscript?.(), { data: { action: 'transcript-more' } })
                    : el('p', { className: 'muted', text: item.more }),
              ]),
            ),
          ),
      ...state.transcript.notes.map((n) => el('p', { className: 'muted transcript-note', text: n })),
    );
  }
  return el(
    'section',
    { className: 'transcript', data: { transcript: state.kind }, attrs: { 'aria-label': 'Transcript of the call' } },
    [head, ...body],
  );
}

function pair(label: string, value: string): HTMLElement[] {
  return [
    el('div', { className: 'call-figure' }, [
      el('dt', { text: label }),
      el('dd', { text: value, className: value === 'unknown' ? 'unknown' : '' }),
    ]),
  ];
}

function toolItem(t: ToolDetail, actions: DetailsActions): HTMLElement {
  const status = t.failed === true ? 'failed' : t.failed === false ? 'ok' : 'no result';
  const target = t.targetFile ?? t.command;
  const meta = [
    status,
    t.exitCode !== null ? `exit ${t.exitCode}` : null,
    toolDurationText(t.durationMs),
    t.resultChars !== null ? `${formatCount(t.resultChars)} chars` : null,
  ]
    .filter((s): s is string => s !== null)
    .join(' · ');
  return el('li', { className: `tool${t.failed === true ? ' tool-failed' : ''}`, data: { tool: t.id } }, [
    el('div', { className: 'tool-head' }, [
      icon(
        t.failed === true ? 'error' : t.failed === false ? 'pass' : 'circle-large-outline',
        t.failed === true ? 'failed-icon' : 'ok-icon',
      ),
      el('span', { className: 'tool-name', text: t.name }),
      target !== null ? el('code', { className: 'tool-target', text: target, title: target }) : null,
    ]),
    el('div', { className: 'tool-meta' }, [
      el('span', { className: 'muted', text: meta }),
      el('span', { className: 'spacer' }),
      linkButton('Show source', () => actions.revealTool(t.id), {
        title: `Open ${t.file}:${t.line + 1}`,
        data: { action: 'reveal-tool' },
      }),
    ]),
    // Focusable: a long error scrolls, and the keyboard must reach it.
    t.errorText !== null
      ? el('pre', {
          className: 'tool-error',
          text: t.errorText,
          attrs: { tabindex: '0', 'aria-label': `Error of ${t.name}` },
        })
      : null,
  ]);
}
