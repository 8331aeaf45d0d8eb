import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import type { VscodeProgressBar } from '@vscode-elements/elements/dist/vscode-progress-bar/vscode-progress-bar.js';
import { displayText } from '../../src/core/text/safeText';
import { el, icon, linkButton, replaceChildren } from '../shared/dom';
import { progressText } from './inspectorModel';
import './loadState.css';

/** What the load state asks of the page. */
export interface LoadStateHost {
  /** Stop reading the file. */
  cancel(): void;
  /** Read the file again (`ignoreSizeLimit`: above agentTrace.maxFileSizeMB too). */
  retry(ignoreSizeLimit: boolean): void;
  /** Hides every figure of the trace: what was shown is not what the file holds now. */
  hideFigures(): void;
  safely(what: string, fn: () => void): void;
}

/**
 * The page before and around the trace: the progress bar while the file is read, why
 * reading stopped (with a way to read again), the note of a file that was truncated or
 * replaced, and the banner of an error. Sets `aria-busy` on the page's root while reading.
 */
export class LoadState {
  readonly loading = el('div', { className: 'loading-block' });
  readonly stopped = el('section', { className: 'load-stopped', attrs: { role: 'alert' } });
  /** Why the figures were dropped and read again (a truncated, replaced or deleted file). */
  readonly resetNote = el('p', { className: 'reset-note', attrs: { role: 'alert' } });
  readonly errorBanner = el('div', { className: 'error-banner', attrs: { role: 'alert' } });
  private readonly progressBar = document.createElement('vscode-progress-bar') as VscodeProgressBar;
  private readonly progressLabel = el('p', { className: 'muted', text: 'Loading trace…' });
  private readonly cancelButton: HTMLButtonElement;

  constructor(
    private readonly root: HTMLElement,
    private readonly host: LoadStateHost,
  ) {
    this.cancelButton = linkButton('Cancel', () => host.safely('cancel', () => this.cancel()), {
      data: { action: 'cancel-load' },
      title: 'Stop reading this file',
    });
    this.progressBar.setAttribute('aria-label', 'Reading trace');
    this.progressBar.indeterminate = true;
    this.loading.append(
      this.progressBar,
      el('div', { className: 'progress-row' }, [this.progressLabel, this.cancelButton]),
    );
    this.errorBanner.hidden = true;
    this.stopped.hidden = true;
    this.resetNote.hidden = true;
  }

  showProgress(bytesRead: number, totalBytes: number | null): void {
    if (totalBytes !== null && totalBytes > 0) {
      this.progressBar.indeterminate = false;
      this.progressBar.max = totalBytes;
      this.progressBar.value = Math.min(bytesRead, totalBytes);
    } else {
      this.progressBar.indeterminate = true;
    }
    this.progressLabel.textContent = progressText(bytesRead, totalBytes);
    this.cancelButton.hidden = false;
    this.stopped.hidden = true;
    this.loading.hidden = false;
    this.root.setAttribute('aria-busy', 'true');
  }

  private cancel(): void {
    this.host.cancel();
    this.progressLabel.textContent = 'Cancelling…';
  }

  /** Reading stopped: says why, with a way to read again (above the size limit too). */
  showStopped(reason: 'cancelled' | 'failed', message: string, overSizeLimit: boolean): void {
    this.loading.hidden = true;
    // What was shown before is not what the file holds now (or not what was asked for): it goes.
    this.host.hideFigures();
    this.root.setAttribute('aria-busy', 'false');
    const retry = (label: string, ignoreSizeLimit: boolean, action: string): HTMLButtonElement =>
      linkButton(label, () => this.host.safely('read again', () => this.retry(ignoreSizeLimit)), { data: { action } });
    const lines: HTMLElement[] = [el('p', { className: 'problem-message', text: message })];
    if (overSizeLimit) {
      lines.push(
        el('p', {
          className: 'muted',
          text: 'The limit (agentTrace.maxFileSizeMB) guards the memory of VS Code’s extension host. The inspector reads in a worker that stops, with a message, if the trace needs more memory than it allows; the CLI (agent-trace analyze) reads any size.',
        }),
      );
    }
    lines.push(
      el('p', {}, [
        overSizeLimit
          ? retry('Open anyway', true, 'open-anyway')
          : retry(reason === 'cancelled' ? 'Read the file again' : 'Try again', false, 'retry-load'),
      ]),
    );
    replaceChildren(this.stopped, [
      icon(reason === 'cancelled' ? 'circle-slash' : 'error', 'problem-icon'),
      el('div', {}, [
        el('h2', { text: reason === 'cancelled' ? 'Reading was cancelled' : "This trace can't be shown" }),
        ...lines,
      ]),
    ]);
    this.stopped.dataset['reason'] = reason;
    this.stopped.hidden = false;
  }

  private retry(ignoreSizeLimit: boolean): void {
    this.stopped.hidden = true;
    this.host.retry(ignoreSizeLimit);
    this.showProgress(0, null);
  }

  /**
   * The followed file was truncated, replaced or deleted: its figures are dropped at once
   * (they are of a file that is no longer there) and the reason said; the host reads it
   * again from scratch, or says it cannot.
   */
  showReset(reason: 'truncated' | 'replaced' | 'deleted', message: string): void {
    this.host.hideFigures();
    this.resetNote.textContent = displayText(message);
    this.resetNote.dataset['reset'] = reason;
    this.resetNote.hidden = false;
    this.progressLabel.textContent =
      reason === 'deleted' ? 'Looking for the file…' : 'Reading the file again from the start…';
    this.progressBar.indeterminate = true;
    this.cancelButton.hidden = true;
    this.stopped.hidden = true;
    this.loading.hidden = false;
    this.root.setAttribute('aria-busy', 'true');
    this.root.dataset['painted'] = 'reset';
  }

  /** The file is being read again (another format was chosen): says so over the figures still shown. */
  readingAgain(text: string): void {
    this.progressLabel.textContent = text;
    this.loading.hidden = false;
  }

  /** The trace is here: no progress bar, no stopped note. */
  loaded(): void {
    this.loading.hidden = true;
    this.stopped.hidden = true;
  }

  /** A request the host refused or could not carry out: said at the top of the panel, which keeps showing the trace. */
  showHostError(message: string): void {
    replaceChildren(this.errorBanner, [
      icon('warning'),
      el('span', { text: `The extension could not do that: ${message}` }),
    ]);
    this.errorBanner.hidden = false;
    // How many answers of this kind came, for tests and for anyone inspecting the page.
    this.errorBanner.dataset['hostErrors'] = String(Number(this.errorBanner.dataset['hostErrors'] ?? '0') + 1);
  }

  /** A failure of the page itself. */
  showError(what: string, message: string): void {
    replaceChildren(this.errorBanner, [
      icon('error'),
      el('span', { text: `Something went wrong (${what}): ${message}` }),
    ]);
    this.errorBanner.hidden = false;
    this.root.setAttribute('aria-busy', 'false');
  }
}
