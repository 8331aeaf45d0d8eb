import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import type { VscodeTextfield } from '@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js';
import { formatCount } from '../../src/core/text/formatNumbers';
import { displayText } from '../../src/core/text/safeText';
import type { SessionEntry, SessionPage } from '../../src/core/view/sessionList';
import type { TraceHeader } from '../../src/core/view/traceService';
import { SESSION_PAGE_SIZE } from '../../src/protocol/messages';
import { el, replaceChildren } from '../shared/dom';
import type { InspectorHost } from './inspectorHost';

/** What the picker asks of the page. */
export interface SessionPickerHost {
  readonly host: InspectorHost;
  /** The user picked a session. */
  switchSession(id: string): void;
  safely(what: string, fn: () => void): void;
}

/** The session shown, as the picker lists it. */
export interface PickedSession {
  id: string;
  role: string;
}

/**
 * The session picker: the page of sessions the host sent (all of them, unless there are
 * thousands: then a query asks the host for the ones whose id or title matches). Its row
 * holds the controls of the session shown too (the panels' `controls` sections).
 */
export class SessionPicker {
  readonly element = el('div', { className: 'session-controls' });
  private sessions: SessionPage = { total: 0, offset: 0, entries: [] };
  private header: TraceHeader | null = null;
  private current: PickedSession | null = null;
  private query = '';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly picker = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly find = document.createElement('vscode-textfield') as VscodeTextfield;
  private readonly note = el('span', { className: 'picker-note muted' });

  constructor(private readonly page: SessionPickerHost) {
    // The combobox inside the select's shadow root takes its accessible name from `label`, not from the host's aria-label.
    this.picker.label = 'Session';
    this.picker.id = 'session-picker';
    this.picker.addEventListener('change', () =>
      page.safely('switch session', () => page.switchSession(this.picker.value)),
    );
    this.find.placeholder = 'Find a session';
    this.find.label = 'Find a session by id or title';
    this.find.id = 'session-find';
    this.find.addEventListener('input', () =>
      page.safely('find a session', () => {
        clearTimeout(this.timer);
        this.timer = setTimeout(
          () => page.safely('find a session', () => void this.findSessions(this.find.value)),
          250,
        );
      }),
    );
    this.element.append(
      el('label', { className: 'control-label', text: 'Session', attrs: { for: 'session-picker' } }),
      this.picker,
      this.find,
      this.note,
    );
  }

  /** The trace's header and first page of sessions (a new or grown trace). */
  setTrace(header: TraceHeader, sessions: SessionPage): void {
    this.header = header;
    this.sessions = sessions;
  }

  /** Lists the sessions with the one shown selected (null: none). */
  render(current: PickedSession | null): void {
    const h = this.header;
    if (!h) return;
    this.current = current;
    const entries: SessionEntry[] = [...this.sessions.entries];
    const id = current?.id ?? null;
    // The session shown is always in the list, found or not.
    if (current && !entries.some((e) => e.id === current.id))
      entries.unshift({
        id: current.id,
        label: `${current.role === 'main' ? 'main session' : 'sub-agent'} ${current.id}`,
        depth: 0,
      });
    this.element.hidden = h.sessionCount === 0;
    replaceChildren(
      this.picker,
      entries.map((o) => {
        const option = document.createElement('vscode-option');
        option.value = o.id;
        option.textContent = displayText(o.label);
        option.selected = o.id === id;
        option.dataset['depth'] = String(o.depth);
        return option;
      }),
    );
    if (id !== null) this.picker.value = id;
    this.picker.dataset['value'] = id ?? '';
    const many = h.sessionCount > SESSION_PAGE_SIZE;
    this.find.hidden = !many;
    this.note.hidden = !many && this.query === '';
    this.note.textContent =
      this.query !== ''
        ? `${formatCount(this.sessions.total)} ${this.sessions.total === 1 ? 'session matches' : 'sessions match'}${this.sessions.total > this.sessions.entries.length ? `; the first ${formatCount(this.sessions.entries.length)} are listed` : ''}`
        : many
          ? `${formatCount(h.sessionCount)} sessions; the first ${formatCount(this.sessions.entries.length)} are listed, find the others by id or title`
          : '';
  }

  private async findSessions(query: string): Promise<void> {
    this.query = query.trim();
    const page = await this.page.host.request('sessionList', {
      query: this.query,
      offset: 0,
      limit: SESSION_PAGE_SIZE,
    });
    if (query.trim() !== this.query) return;
    this.sessions = page;
    this.render(this.current);
  }
}
