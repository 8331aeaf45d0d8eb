import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import type { VscodeButton } from '@vscode-elements/elements/dist/vscode-button/vscode-button.js';
import type { VscodeProgressBar } from '@vscode-elements/elements/dist/vscode-progress-bar/vscode-progress-bar.js';
import type { WhatIfSession } from './whatIfModel';
import type { WhatIfDocument } from '../../src/core/share/whatIfDocument';
import type { ScenarioResult } from '../../src/core/sim/scenario';
import { POLICY_CHOICES } from '../../src/core/sim/policies';
import { paramsAsPrinted } from '../../src/core/sim/params';
import type { PolicyId } from '../../src/core/sim/policies';
import type {
  WebviewNotification,
  WhatIfCalibration,
  WhatIfDefaults,
  WhatIfWorkload,
} from '../../src/protocol/messages';
import { el, icon, replaceChildren, table } from '../shared/dom';
import { mergeState } from '../inspector/inspectorModel';
import type { PersistedState } from '../inspector/inspectorModel';
import type { InspectorPanel, PanelContext, PanelSection, PanelSession } from '../inspector/panel';
import { BODY_TIMEOUT_MS } from '../inspector/inspectorHost';
import type { SessionBody } from '../../src/core/view/traceService';
import type { InspectorSettings } from '../../src/protocol/messages';
import type { Palette } from '../shared/palette';
import { isNavigationKey, moveSelection } from '../timeline/timelineModel';
import { ScenarioForm } from './scenarioForm';
import { CliffChart, DENSE_CALLS, ScenarioBarsChart } from './whatIfCharts';
import {
  BUILTIN_DEFAULTS,
  capNote,
  cliCommand,
  cliffChartModel,
  cliffPointText,
  gpuRows,
  headlineFigures,
  pointOf,
  policyRows,
  readScenario,
  scenarioBars,
  scenarioSentence,
  skippedText,
} from './whatIfModel';
import type { ResolvedScenario, Scenario, TracedCall } from './whatIfModel';
import './whatIf.css';
import { WhatIfRunner } from './whatIfRunner';
import { newScenarioRun, newSweepRun, planRuns, reduceLaneFailure, reduceWorkerMessage } from './whatIfRuns';
import type { RunEffects, WhatIfRuns, WorkloadState } from './whatIfRuns';
import type { FromWorker, LaneName, PointResult } from '../../src/protocol/whatIfWorkerProtocol';

/** What the panel needs from the inspector around it. */
export interface WhatIfHost {
  /** Asks the host for the session's workload. */
  workload(sessionId: string): Promise<WhatIfWorkload>;
  /** Asks the host to show its open dialog for a calibration file; null when cancelled. */
  pickCalibration(): Promise<WhatIfCalibration | null>;
  /** Selects a call of the current session in the timeline (and reveals its source line when asked). */
  pickCall(callIndex: number, reveal: boolean): void;
  notify(message: WebviewNotification): void;
  getState(): unknown;
  setState(state: unknown): void;
  reportError(what: string, error: unknown): void;
}

/** Delay that coalesces a burst of control changes (a slider drag) into one run. */
const RUN_DELAY_MS = 40;
/**
 * Least time between two runs for a session that is still growing: an agent appends every
 * few seconds, and a run restarted at each append would never finish.
 */
export const LIVE_RERUN_MS = 10_000;

/**
 * The what-if panel: a collapsible section under the timeline that replays the selected
 * session as N sessions sharing one GPU's KV cache. It wires the parts and draws the
 * results: the scenario form (scenarioForm.ts) owns the scenario, which this view saves
 * per file in the webview state; the run planner and reducer (whatIfRuns.ts) decide which
 * jobs a scenario needs and fold the workers' messages into the runs. Owns the workload
 * the host sent, the latest run of each worker lane and the results' DOM; the workers own
 * the simulation (see WhatIfRunner), the inspector owns the call selection.
 */
export class WhatIfView implements InspectorPanel {
  readonly element = el('details', { className: 'whatif', attrs: { 'aria-label': 'What-if simulator' } });
  readonly sections: readonly PanelSection[] = [{ slot: 'below', element: this.element }];
  private defaults: WhatIfDefaults = BUILTIN_DEFAULTS;
  private open = false;
  private trace: object | null = null;
  private session: WhatIfSession | null = null;
  private generation = 0;
  private workloadState: WorkloadState | null = null;
  private runner: WhatIfRunner | null = null;
  private readonly runs: WhatIfRuns = { scenario: null, sweep: null };
  private timer: ReturnType<typeof setTimeout> | undefined;
  private frame: number | null = null;
  private selectedCall: number | null = null;
  /** The session grew (a live file) since the workload in hand: simulate it again once the runs in flight are done. */
  private grown = false;
  private grownTimer: ReturnType<typeof setTimeout> | undefined;
  private lastGrownRunMs = -Infinity;
  /** Runs for the grown session are keyed apart from the earlier ones, which had fewer calls. */
  private workloadVersion = 0;
  /** The sweep drawn while the grown session's sweep runs (its curve stays until the new one is complete). */
  private previousSweep: WhatIfRuns['sweep'] = null;

  private readonly digest = el('span', { className: 'fp-digest muted whatif-digest' });
  private readonly body = el('div', { className: 'whatif-body' });
  private readonly controls = el('div', {
    className: 'whatif-controls',
    attrs: { role: 'group', 'aria-label': 'Scenario' },
  });
  private readonly form = new ScenarioForm(
    {
      changed: (next) => {
        this.host.setState(mergeState(this.host.getState(), { whatIf: next }));
        this.schedule();
      },
      stale: (message) => this.markStale(message),
      blockSize: () => this.blockSize(),
      blockTrace: () => this.isBlockTrace(),
      safely: (what, fn) => this.safely(what, fn),
      pickCalibration: () => this.host.pickCalibration(),
    },
    this.digest,
  );
  private readonly results = el('div', { className: 'whatif-results' });
  private readonly copyButton = document.createElement('vscode-button') as VscodeButton;
  private readonly exportButton = document.createElement('vscode-button') as VscodeButton;
  private readonly commandBox = el('pre', {
    className: 'whatif-command',
    attrs: { tabindex: '0', 'aria-label': 'The agent-trace simulate command of this scenario' },
  });
  private readonly scenarioError = el('p', {
    className: 'inline-error whatif-scenario-error',
    attrs: { role: 'alert' },
  });

  private readonly sentence = el('p', { className: 'whatif-sentence', data: { whatIfSentence: '' } });
  private readonly status = el('p', { className: 'whatif-status muted', attrs: { 'aria-live': 'polite' } });
  private readonly figures = el('dl', { className: 'whatif-figures' });
  private readonly notes = el('ul', { className: 'whatif-notes muted' });
  private readonly fitNote = el('p', {
    className: 'tokens-note whatif-fit-note',
    attrs: { role: 'note' },
    data: { fitNote: '' },
  });
  private readonly barsSection = el('section', {
    className: 'whatif-bars',
    attrs: { 'aria-label': 'Calls under the scenario' },
  });
  private readonly barsWrap = el('div', {
    className: 'whatif-chart whatif-bars-chart',
    attrs: { tabindex: '0', role: 'application' },
  });
  private readonly barsCanvas = el('canvas', { attrs: { 'aria-hidden': 'true' } });
  private readonly barsNote = el('p', { className: 'muted field-note' });
  private readonly tracedLegend = el('span', { text: 'as traced (faint)' });
  private readonly cliffWrap = el('div', {
    className: 'whatif-chart whatif-cliff-chart',
    attrs: { tabindex: '0', role: 'application' },
  });
  private readonly cliffCanvas = el('canvas', { attrs: { 'aria-hidden': 'true' } });
  private readonly sweepProgress = document.createElement('vscode-progress-bar') as VscodeProgressBar;
  private readonly sweepStatus = el('p', { className: 'muted whatif-sweep-status', attrs: { 'aria-live': 'polite' } });
  private readonly cliffSummary = el('p', { className: 'whatif-cliff-summary', data: { cliffSummary: '' } });
  /** Why this sweep's admission cap differs from the other sweep's. */
  private readonly capNote = el('p', { className: 'whatif-cap-note muted', data: { capNote: '' } });
  private readonly cliffLegend = el('div', {
    className: 'legend whatif-cliff-legend',
    attrs: { 'aria-hidden': 'true' },
  });
  private readonly skippedNote = el('p', { className: 'muted field-note', data: { sweepSkipped: '' } });
  private readonly copySweepButton = document.createElement('vscode-button') as VscodeButton;
  private readonly policyTable = el('div', { className: 'table-wrap whatif-policies' });
  private readonly gpuSection = el('section', { className: 'whatif-gpu-section', attrs: { 'aria-label': 'Each GPU' } });
  private readonly gpuTable = el('div', { className: 'table-wrap whatif-gpus' });
  private readonly live = el('div', {
    className: 'visually-hidden',
    attrs: { 'aria-live': 'polite', 'aria-atomic': 'true' },
  });
  private readonly bars: ScenarioBarsChart;
  /** What the bars show now: a frame with the same result, session and workload leaves them be. */
  private barsShown: { result: ScenarioResult; session: WhatIfSession; data: WhatIfWorkload } | null = null;
  private readonly cliff: CliffChart;

  constructor(
    private readonly host: WhatIfHost,
    private readonly workerUri: string | null,
    palette: Palette,
  ) {
    this.barsWrap.appendChild(this.barsCanvas);
    this.cliffWrap.appendChild(this.cliffCanvas);
    this.bars = new ScenarioBarsChart(this.barsWrap, this.barsCanvas, palette, (bar) =>
      this.safely('select a call', () => this.pickBar(bar, true)),
    );
    this.cliff = new CliffChart(this.cliffWrap, this.cliffCanvas, palette, (value) =>
      this.safely('pick a sweep point', () => this.pickPoint(value)),
    );
    this.build();
  }

  restore(saved: PersistedState, settings: InspectorSettings): void {
    this.setDefaults(settings.whatIf, saved.whatIf);
    this.setOpen(saved.whatIfOpen ?? false);
  }

  showSession(s: PanelSession | null): void {
    if (s)
      this.setContext(s.trace, { summary: s.intro.summary, traced: s.body ? tracedCalls(s.body) : [] }, s.keepView);
  }

  selectionChanged(callIndex: number | null): void {
    this.select(callIndex);
  }

  reportDocument(): WhatIfDocument | null {
    return this.currentDocument();
  }

  /** The settings' defaults (with `init`); a file's saved scenario wins over them. */
  setDefaults(defaults: WhatIfDefaults | undefined, saved: unknown): void {
    this.defaults = defaults ?? BUILTIN_DEFAULTS;
    this.form.restore(readScenario(saved, this.defaults));
  }

  /** Restores whether the section is open. */
  setOpen(open: boolean): void {
    this.open = open;
    this.element.open = open;
  }

  /**
   * The trace (any object that changes when it is read again) or the session changed: a new
   * workload when the section is open. `grew`: the same session with calls appended (a live
   * file): the results in hand stay on screen, marked as behind, and the grown session is
   * simulated again when the runs in flight are done, at most every LIVE_RERUN_MS.
   */
  setContext(trace: object, session: WhatIfSession | null, grew = false): void {
    const sameSession = session !== null && this.session?.summary.id === session.summary.id;
    const held = grew && sameSession && this.workloadState?.status === 'ready';
    if (trace !== this.trace && !held) this.generation += 1;
    this.trace = trace;
    if (held && session.summary.llmCalls !== this.session!.summary.llmCalls) this.grown = true;
    if (!held) this.cancelGrown();
    this.session = session;
    this.element.hidden = session === null || session.summary.llmCalls === 0;
    this.refresh();
    if (this.grown) this.simulateGrown();
  }

  private cancelGrown(): void {
    this.grown = false;
    clearTimeout(this.grownTimer);
    this.grownTimer = undefined;
    this.previousSweep = null;
  }

  /** Fetches the grown session's workload and runs the scenario on it, once nothing is running and LIVE_RERUN_MS has passed. */
  private simulateGrown(): void {
    if (!this.grown || !this.open || !this.session || this.grownTimer !== undefined) return;
    if (
      this.runs.scenario?.status === 'running' ||
      this.runs.sweep?.status === 'running' ||
      this.workloadState?.status !== 'ready'
    )
      return;
    const wait = this.lastGrownRunMs + LIVE_RERUN_MS - performance.now();
    const calls = this.session.summary.llmCalls;
    this.markBehind(`The session has grown to ${calls} calls since these results.`);
    if (wait > 0) {
      this.grownTimer = setTimeout(() => {
        this.grownTimer = undefined;
        this.safely('simulate the grown session', () => this.simulateGrown());
      }, wait);
      return;
    }
    this.grown = false;
    this.lastGrownRunMs = performance.now();
    const key = this.workloadState.key;
    const id = this.session.summary.id;
    this.markBehind(`The session has grown to ${calls} calls: simulating it again…`);
    this.host.workload(id).then(
      (data) =>
        this.safely('simulate the grown session', () => {
          if (this.workloadState?.key !== key || this.session?.summary.id !== id) return;
          const sr = this.runs.scenario;
          const old = this.workloadState.status === 'ready' ? this.workloadState.data : null;
          if (sr?.result && old && this.session)
            this.previousResult = {
              result: sr.result,
              alone: sr.alone,
              scenario: sr.scenario,
              resolved: sr.resolved,
              data: old,
              session: this.session,
            };
          if (this.runs.sweep?.status === 'done') this.previousSweep = this.runs.sweep;
          this.workloadVersion += 1;
          this.workloadState = { key, status: 'ready', data };
          this.runner?.setWorkload(data.workload);
          this.runNow();
        }),
      (e: unknown) =>
        this.safely('simulate the grown session', () =>
          this.markBehind(
            `The grown session could not be read for the what-if: ${e instanceof Error ? e.message : String(e)}`,
          ),
        ),
    );
  }

  /** Says the results on screen are for fewer calls than the session now has (without hiding them). */
  private markBehind(text: string): void {
    this.element.dataset['behind'] = 'true';
    this.status.textContent = text;
  }

  /** The inspector's selected call (timeline, keyboard, CodeLens): highlighted in the bars. */
  select(callIndex: number | null): void {
    this.selectedCall = callIndex;
    this.bars.select(this.barOf(callIndex));
  }

  setPalette(palette: Palette): void {
    this.bars.setPalette(palette);
    this.cliff.setPalette(palette);
  }

  dispose(): void {
    this.runner?.dispose();
    this.runner = null;
  }

  // ---- building the DOM ----

  private safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.host.reportError(what, e);
    }
  }

  private build(): void {
    const summary = el('summary', { className: 'fp-summary whatif-summary' }, [
      icon('chevron-right', 'fp-chevron'),
      el('h2', { text: 'What if: N sessions like this on one GPU, or on several' }),
      this.digest,
    ]);
    this.element.append(summary, this.body);
    this.element.addEventListener('toggle', () =>
      this.safely('toggle the what-if panel', () => {
        if (this.element.open === this.open) return;
        this.open = this.element.open;
        this.host.setState(mergeState(this.host.getState(), { whatIfOpen: this.open }));
        // The selects read their options only once visible (see setSelect).
        if (this.open) this.form.write();
        if (this.open) {
          this.refresh();
          this.simulateGrown();
        } else {
          this.runner?.cancel('scenario');
          this.runner?.cancel('compare');
          this.runner?.cancel('sweep');
        }
      }),
    );
    this.buildControls();
    this.buildResults();
    this.body.append(this.controls, this.results);
  }

  private buildControls(): void {
    this.copyButton.textContent = 'Copy as CLI';
    this.copyButton.setAttribute('icon', 'copy');
    this.copyButton.id = 'whatif-copy-cli';
    this.copyButton.title = 'Copy the agent-trace simulate command that reproduces this scenario';
    this.copyButton.addEventListener('click', () => this.safely('copy the command', () => this.copyCommand()));
    this.exportButton.textContent = 'Export JSON';
    this.exportButton.setAttribute('icon', 'save');
    this.exportButton.setAttribute('secondary', '');
    this.exportButton.id = 'whatif-export';
    this.exportButton.title = 'Save the scenario and its results as JSON';
    this.exportButton.addEventListener('click', () => this.safely('export the scenario', () => this.exportJson()));
    this.commandBox.hidden = true;
    this.scenarioError.hidden = true;
    this.controls.append(
      ...this.form.groups,
      this.scenarioError,
      el('div', { className: 'whatif-actions' }, [this.copyButton, this.exportButton]),
      this.commandBox,
    );
  }

  private buildResults(): void {
    this.sweepProgress.setAttribute('aria-label', 'Sweep progress');
    this.sweepProgress.hidden = true;
    const legend = el('div', { className: 'legend whatif-legend', attrs: { 'aria-hidden': 'true' } }, [
      ...(
        [
          ['traced', 'as traced (faint)'],
          ['hit', 'hit'],
          ['reloaded', 'reloaded from CPU'],
          ['recomputed', 'recomputed'],
          ['appended', 'appended'],
          ['output', 'output'],
        ] as const
      ).map(([k, label]) =>
        el('span', { className: 'legend-item', data: { whatifLegend: k } }, [
          el('span', { className: `swatch swatch-whatif-${k}` }),
          k === 'traced' ? this.tracedLegend : el('span', { text: label }),
        ]),
      ),
    ]);
    this.barsWrap.addEventListener('keydown', (e) => this.safely('keyboard', () => this.onBarsKey(e)));
    this.cliffWrap.addEventListener('keydown', (e) => this.safely('keyboard', () => this.onCliffKey(e)));
    this.cliffWrap.addEventListener('blur', () => this.cliff.setCursor(null));
    this.barsSection.append(
      el('div', { className: 'timeline-head' }, [el('h3', { text: 'This session, call by call' }), legend]),
      this.barsWrap,
      this.barsNote,
    );
    this.copySweepButton.textContent = 'Copy sweep as CLI';
    this.copySweepButton.setAttribute('icon', 'copy');
    this.copySweepButton.setAttribute('secondary', '');
    this.copySweepButton.id = 'whatif-copy-sweep';
    this.copySweepButton.addEventListener('click', () =>
      this.safely('copy the sweep command', () => this.copySweepCommand()),
    );
    const cliffHead = el('div', { className: 'timeline-head whatif-cliff-head' }, [
      el('h3', { text: 'The cliff: hit rate and prefill share' }),
      el('div', { className: 'whatif-field inline' }, [
        el('label', { className: 'control-label', text: 'Sweep', attrs: { for: 'whatif-axis' } }),
        this.form.axisSelect,
      ]),
    ]);
    const cliffSection = el('section', { className: 'whatif-cliff', attrs: { 'aria-label': 'The cliff' } }, [
      cliffHead,
      this.cliffLegend,
      this.sweepProgress,
      this.cliffWrap,
      this.cliffSummary,
      this.capNote,
      this.sweepStatus,
      this.skippedNote,
      this.copySweepButton,
    ]);
    const policies = el(
      'section',
      { className: 'whatif-policy-section', attrs: { 'aria-label': 'Policy comparison' } },
      [el('h3', { text: 'The same scenario under every policy' }), this.policyTable],
    );
    this.fitNote.hidden = true;
    this.gpuSection.append(el('h3', { text: 'Each GPU: its load and hit rate' }), this.gpuTable);
    this.gpuSection.hidden = true;
    this.results.append(
      this.sentence,
      this.status,
      this.fitNote,
      this.figures,
      this.gpuSection,
      this.barsSection,
      cliffSection,
      policies,
      this.notes,
      this.live,
    );
  }

  // ---- running ----

  private isBlockTrace(): boolean {
    return this.workloadState?.status === 'ready' && this.workloadState.data.workload.kind === 'requests';
  }

  private blockSize(): number {
    const w = this.workloadState?.status === 'ready' ? this.workloadState.data.workload : null;
    return w?.kind === 'requests' ? w.blockSizeTokens : 16;
  }

  /** Fetches the workload when needed and runs the scenario. */
  private refresh(): void {
    this.form.show();
    if (!this.open || !this.session || this.session.summary.llmCalls === 0) return;
    const key = `${this.generation}\u0000${this.session.summary.id}`;
    if (this.workloadState?.key === key) {
      this.schedule();
      return;
    }
    this.workloadState = { key, status: 'loading' };
    // Another session or another version of the trace: nothing of the old results applies.
    this.runs.scenario = null;
    this.runs.sweep = null;
    this.previousResult = null;
    this.cliff.destroy();
    this.destroyBars();
    this.status.textContent = 'Reading the workload…';
    this.host.workload(this.session.summary.id).then(
      (data) => this.safely('read the workload', () => this.workloadArrived(key, data)),
      (e: unknown) =>
        this.safely('read the workload', () => {
          if (this.workloadState?.key !== key) return;
          this.workloadState = { key, status: 'error', message: e instanceof Error ? e.message : String(e) };
          this.renderAll();
        }),
    );
    this.renderAll();
  }

  private workloadArrived(key: string, data: WhatIfWorkload): void {
    if (this.workloadState?.key !== key) return;
    this.workloadState = { key, status: 'ready', data };
    if (!this.runner && this.workerUri)
      this.runner = new WhatIfRunner(this.workerUri, {
        message: (m) => this.safely('simulate', () => this.onWorker(m)),
        failed: (lane, seq, error) => this.safely('simulate', () => this.onFailed(lane, seq, error)),
      });
    this.runner?.setWorkload(data.workload);
    if (data.workload.kind === 'requests' && this.form.scenario.sweepAxis !== 'capacity')
      this.form.adjust({ ...this.form.scenario, sweepAxis: 'capacity' });
    replaceChildren(
      this.notes,
      data.notes.map((n) => el('li', { text: n })),
    );
    this.form.write();
    this.runNow();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.safely('run the scenario', () => this.runNow()), RUN_DELAY_MS);
  }

  private markStale(text: string): void {
    this.results.classList.add('stale');
    this.status.textContent = text;
  }

  /** Plans the scenario's runs (whatIfRuns.ts) and starts those that changed. */
  private runNow(): void {
    const w = this.workloadState;
    if (!this.open || w?.status !== 'ready') return;
    const plan = planRuns(this.form.scenario, w.data, this.form.invalidFields(), this.form.isField);
    if (plan.kind === 'invalid') {
      this.markStale(plan.message);
      return;
    }
    if (!this.runner) {
      this.showScenarioError('The simulator cannot run here: this page has no worker script.');
      return;
    }
    this.form.clearErrors();
    if (plan.kind === 'unresolved') {
      for (const [name, message] of plan.fieldErrors) this.form.setError(name, message);
      this.showScenarioError(plan.message);
      return;
    }
    if (plan.kind === 'no-fit') {
      if (plan.capacityField) this.form.setError('capacityTokens', plan.message);
      this.showScenarioError(plan.message);
      return;
    }
    this.showScenarioError(null);
    this.results.classList.remove('stale');
    this.fitNote.hidden = plan.fitNote === null;
    this.fitNote.textContent = plan.fitNote ?? '';
    const scenario = this.form.scenario;
    const scenarioPlan = { ...plan.scenario, key: `${this.workloadVersion}\u0000${plan.scenario.key}` };
    const sweepPlan = { ...plan.sweep, key: `${this.workloadVersion}\u0000${plan.sweep.key}` };
    if (this.runs.scenario?.key !== scenarioPlan.key) {
      const seq = this.runner.runScenario({ spec: scenarioPlan.spec, alone: scenarioPlan.alone });
      this.runner.cancel('compare');
      const previous = this.runs.scenario;
      this.runs.scenario = newScenarioRun(seq, scenarioPlan, scenario, plan.resolved);
      // Keep the previous figures on screen, marked as updating, until the new ones arrive.
      if (previous?.result)
        this.previousResult = {
          result: previous.result,
          alone: previous.alone,
          scenario: previous.scenario,
          resolved: previous.resolved,
          data: this.previousResult?.data,
          session: this.previousResult?.session,
        };
      this.results.classList.add('updating');
    }
    if (this.runs.sweep?.key !== sweepPlan.key) {
      const seq = this.runner.runSweep(sweepPlan.request);
      this.runs.sweep = newSweepRun(seq, sweepPlan, scenario, plan.resolved);
    }
    this.renderAll();
  }

  /** The last complete result, shown (marked as updating) while a new run is on its way; with the workload and session it was run on when the session has grown since. */
  private previousResult: {
    result: ScenarioResult;
    alone: PointResult | null;
    scenario: Scenario;
    resolved: ResolvedScenario;
    data?: WhatIfWorkload | undefined;
    session?: WhatIfSession | undefined;
  } | null = null;

  private showScenarioError(message: string | null): void {
    this.scenarioError.hidden = message === null;
    replaceChildren(this.scenarioError, message === null ? [] : [icon('error'), el('span', { text: message })]);
    if (message !== null) this.markStale(`Not updated: ${message}`);
  }

  private onWorker(m: FromWorker): void {
    const effects = reduceWorkerMessage(this.runs, m);
    const sr = this.runs.scenario;
    if (effects.startCompare && sr && this.runner) sr.compareSeq = this.runner.runCompare({ policies: sr.others });
    this.applyEffects(effects);
  }

  private onFailed(lane: LaneName, seq: number, error: string): void {
    this.applyEffects(reduceLaneFailure(this.runs, lane, seq, error));
  }

  private applyEffects(effects: RunEffects): void {
    if (effects.resultArrived) {
      this.results.classList.remove('updating');
      this.previousResult = null;
      if (!this.grown && this.grownTimer === undefined) delete this.element.dataset['behind'];
    }
    if (effects.scenarioFailed) this.results.classList.remove('updating');
    if (effects.changed) this.renderSoon();
    // Runs done: a session that grew meanwhile is simulated again.
    if (this.grown && this.runs.scenario?.status !== 'running' && this.runs.sweep?.status !== 'running')
      this.simulateGrown();
  }

  // ---- rendering ----

  /** Results arrive in bursts (a sweep's points): draw once per frame. */
  private renderSoon(): void {
    if (this.frame !== null) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.safely('show the what-if results', () => this.renderAll());
    });
  }

  private renderAll(): void {
    const w = this.workloadState;
    this.element.dataset['state'] = w?.status ?? 'closed';
    if (!w || w.status === 'loading') {
      this.status.textContent = 'Reading the workload…';
      return;
    }
    if (w.status === 'error') {
      this.showScenarioError(w.message);
      this.status.textContent = `This session cannot be simulated: ${w.message}`;
      this.sentence.textContent = '';
      return;
    }
    this.renderScenario(w.data);
    this.renderSweep();
  }

  private shown(): {
    result: ScenarioResult;
    alone: PointResult | null;
    scenario: Scenario;
    resolved: ResolvedScenario;
    data?: WhatIfWorkload | undefined;
    session?: WhatIfSession | undefined;
  } | null {
    const sr = this.runs.scenario;
    if (sr?.result) return { result: sr.result, alone: sr.alone, scenario: sr.scenario, resolved: sr.resolved };
    return this.previousResult;
  }

  private renderScenario(data: WhatIfWorkload): void {
    const sr = this.runs.scenario;
    const shown = this.shown();
    const block = data.workload.kind === 'requests';
    const w = this.element.dataset;
    if (sr?.status === 'error') {
      this.status.textContent = `The simulation failed: ${sr.error ?? 'unknown error'}`;
      this.status.classList.add('error-text');
    } else {
      this.status.classList.remove('error-text');
      if (!this.results.classList.contains('stale') && this.element.dataset['behind'] !== 'true') {
        this.status.textContent = sr?.result
          ? `Simulated in ${Math.round(sr.ms ?? 0)} ms (fast engine, in a worker).`
          : 'Simulating…';
      }
    }
    w['scenarioSeq'] = String(sr?.seq ?? '');
    w['compareStatus'] = sr?.compareStatus ?? '';
    w['scenarioStatus'] = sr?.result ? (sr.status === 'running' ? 'partial' : sr.status) : (sr?.status ?? '');
    if (!shown) {
      replaceChildren(this.figures, []);
      this.sentence.textContent = '';
      this.barsSection.hidden = true;
      return;
    }
    const r = shown.result;
    this.sentence.textContent = scenarioSentence(shown.scenario, shown.resolved, r, shown.alone, block);
    w['replicas'] = String(r.replicas);
    w['capacity'] = String(r.capacityTokens);
    w['scenarioPolicy'] = shown.scenario.policy;
    w['gpus'] = String(r.gpus ?? 1);
    replaceChildren(
      this.figures,
      headlineFigures(r, shown.alone).map((f) =>
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
    this.renderGpus(r);
    this.renderBars(r, shown.data ?? data, block, shown.session ?? this.session);
    this.renderPolicies(shown.scenario.policy);
  }

  private renderGpus(r: ScenarioResult): void {
    const rows = gpuRows(r.perGpu);
    this.gpuSection.hidden = rows === null;
    if (rows === null) {
      replaceChildren(this.gpuTable, []);
      return;
    }
    const body = rows.map((row) =>
      el('tr', { data: { gpu: row.gpu } }, [
        el('th', { attrs: { scope: 'row' }, text: `GPU ${row.gpu}` }),
        el('td', {
          className: 'num',
          text: row.cells.calls,
          data: { whatifGpuCol: 'calls', value: JSON.stringify(row.values.requests) },
        }),
        el('td', { className: 'num', text: row.cells.sessions }),
        el('td', {
          className: 'num',
          text: row.cells.busy,
          data: { whatifGpuCol: 'busy', value: JSON.stringify(row.values.utilization) },
        }),
        el('td', {
          className: 'num',
          text: row.cells.hitRate,
          data: { whatifGpuCol: 'hitRate', value: JSON.stringify(row.values.hitRate) },
        }),
        el('td', { className: 'num', text: row.cells.ideal }),
        el('td', { className: 'num', text: row.cells.recomputed }),
      ]),
    );
    replaceChildren(this.gpuTable, [
      table(
        'whatif-gpu-table',
        `${r.gpus} GPUs behind the ${r.router} router`,
        ['GPU', 'Calls', 'Sessions', 'Busy', 'Hit rate', 'Ideal', 'Recomputed'],
        body,
      ),
    ]);
  }

  private renderBars(r: ScenarioResult, data: WhatIfWorkload, block: boolean, session: WhatIfSession | null): void {
    this.barsSection.hidden = block || !session || r.calls.length === 0;
    this.barsNote.hidden = !block;
    if (this.barsSection.hidden || !session) {
      this.destroyBars();
      return;
    }
    const shown = this.barsShown;
    if (shown && shown.result === r && shown.session === session && shown.data === data) return;
    const model = scenarioBars(session.traced, r.calls, data.callIndexes);
    this.tracedLegend.textContent = model.labels.length > DENSE_CALLS ? 'as traced (lines)' : 'as traced (faint)';
    this.bars.render(model, r.calls, this.barOf(this.selectedCall));
    this.barsWrap.setAttribute(
      'aria-label',
      `${r.calls.length} calls of this session under the scenario, each beside the same call as traced. Left and Right arrows select a call (in the timeline too), Enter shows its source.`,
    );
    this.barsNote.textContent = '';
    this.barsShown = { result: r, session, data };
  }

  private destroyBars(): void {
    this.bars.destroy();
    this.barsShown = null;
  }

  private renderPolicies(current: PolicyId): void {
    const sr = this.runs.scenario;
    const rows = policyRows(current, sr?.policies ?? new Map());
    const stopped = sr?.compareStatus === 'error';
    const body = rows.map((row) => {
      const tr = el('tr', { data: { policy: row.policy, policyState: row.state } }, [
        el('th', { attrs: { scope: 'row' } }, [
          el('span', { text: row.label }),
          row.current ? el('span', { className: 'figure-tag', text: 'current' }) : null,
        ]),
        ...(row.state === 'error'
          ? [
              el('td', {
                className: 'error-text',
                text: row.error ?? 'failed',
                attrs: { colspan: '5' },
                data: { policyError: row.policy },
              }),
            ]
          : row.state === 'running'
            ? [
                el('td', {
                  className: 'muted',
                  text: stopped ? 'not run: the comparison stopped' : 'running…',
                  attrs: { colspan: '5' },
                }),
              ]
            : [
                el('td', {
                  className: 'num',
                  text: row.cells.hitRate,
                  data: { whatifCol: 'hitRate', value: JSON.stringify(row.values.hitRate) },
                }),
                el('td', { className: 'num', text: row.cells.vsIdeal }),
                el('td', {
                  className: 'num',
                  text: row.cells.recomputed,
                  data: { whatifCol: 'recomputed', value: JSON.stringify(row.values.recomputed) },
                }),
                el('td', {
                  className: 'num',
                  text: row.cells.prefillShare,
                  data: { whatifCol: 'prefillShare', value: JSON.stringify(row.values.prefillShare) },
                }),
                el('td', {
                  className: 'num',
                  text: row.cells.slowdown,
                  data: { whatifCol: 'slowdown', value: JSON.stringify(row.values.slowdown) },
                }),
              ]),
      ]);
      if (row.current) tr.setAttribute('aria-current', 'true');
      return tr;
    });
    replaceChildren(this.policyTable, [
      table(
        'whatif-policy-table',
        'The same scenario under every policy',
        ['Policy', 'Hit rate', 'vs ideal', 'Recomputed', 'Prefill share', 'Slowdown'],
        body,
      ),
    ]);
  }

  private renderSweep(): void {
    const run = this.runs.sweep;
    const shown = this.shown();
    const w = this.cliffWrap.dataset;
    if (!run) return;
    w['sweepStatus'] = run.status;
    w['sweepSeq'] = String(run.seq);
    if (run.status !== 'running') this.previousSweep = null;
    // A grown session's sweep draws over the earlier curve only once it is complete.
    const sw = this.previousSweep ?? run;
    const current = shown
      ? {
          x: sw.axis === 'replicas' ? shown.result.replicas : shown.result.capacityTokens,
          result: pointOf(shown.result),
        }
      : null;
    const model = cliffChartModel(sw.axis, sw.scenario.policy, sw.main, sw.lines, sw.cliff, current);
    if (sw.main.length > 0 || current) this.cliff.render(model);
    const item = (className: string, text: string, key: string): HTMLElement =>
      el('span', { className: 'legend-item', data: { whatifLegend: key } }, [
        el('span', { className: `swatch swatch-line ${className}` }),
        el('span', { text }),
      ]);
    const others = model.series.filter((x) => !x.main);
    const short = (x: (typeof model.series)[number]): string =>
      x.kind === 'prefill'
        ? 'prefill share'
        : x.kind === 'ideal'
          ? 'ideal hit rate'
          : `hit rate (${POLICY_CHOICES.find((c) => c.id === x.policy)?.short ?? x.policy})`;
    replaceChildren(this.cliffLegend, [
      ...model.series
        .filter((x) => x.main)
        .map((x) =>
          item(
            x.kind === 'prefill' ? 'line-prefill' : x.kind === 'ideal' ? 'line-ideal' : `line-policy-${x.policy} main`,
            short(x),
            x.key,
          ),
        ),
      others.length > 0 ? el('span', { className: 'legend-item muted', text: 'others:' }) : null,
      ...others.map((x) =>
        item(`line-policy-${x.policy}`, POLICY_CHOICES.find((c) => c.id === x.policy)?.short ?? x.policy, x.key),
      ),
      current
        ? el('span', { className: 'legend-item', data: { whatifLegend: 'current' } }, [
            el('span', { className: 'swatch swatch-current' }),
            el('span', { text: 'this scenario' }),
          ])
        : null,
      model.knee !== null ? item('line-knee', 'cliff', 'knee') : null,
      model.suggested !== null ? item('line-suggested', 'suggested cap', 'suggested') : null,
    ]);
    this.cliffWrap.setAttribute(
      'aria-label',
      `Hit rate and prefill share against ${sw.axis === 'replicas' ? 'the number of sessions' : 'the KV capacity'}. Left and Right arrows step through the points; Enter runs that point as the scenario.`,
    );
    const running = run.status === 'running';
    this.sweepProgress.hidden = !running;
    if (running) {
      this.sweepProgress.indeterminate = false;
      this.sweepProgress.max = Math.max(1, run.total);
      this.sweepProgress.value = run.done;
    }
    this.cliffSummary.textContent = sw.cliff ? sw.cliff.summary : sw.status === 'error' ? '' : 'Looking for the cliff…';
    const workload = this.workloadState?.status === 'ready' ? this.workloadState.data.workload : null;
    const note = capNote(sw.axis, sw.cliff, workload, sw.resolved.params.capacityTokens, sw.resolved.replicas);
    this.capNote.hidden = note === null;
    this.capNote.textContent = note ?? '';
    const lineErrors = [...sw.lineErrors].map(
      ([p, e]) => `${POLICY_CHOICES.find((c) => c.id === p)?.short ?? p}: ${e}`,
    );
    this.sweepStatus.textContent =
      run.status === 'error'
        ? `The sweep failed: ${run.error ?? 'unknown error'}`
        : running
          ? `Sweeping${sw !== run ? ' the grown session' : ''}: ${run.done} of ${run.total} points${run.cliff ? ' (the cliff is found; now the other policies)' : ''}…`
          : `Swept ${sw.run.length} points in ${((sw.ms ?? 0) / 1000).toFixed(1)} s${lineErrors.length > 0 ? `. Not drawn: ${lineErrors.join('; ')}` : ''}.`;
    this.sweepStatus.classList.toggle('error-text', run.status === 'error');
    const skipped = skippedText(sw.axis, sw.skipped, sw.stoppedBy);
    this.skippedNote.hidden = skipped === null;
    this.skippedNote.textContent = skipped ?? '';
    this.copySweepButton.hidden = sw.cliff === null || this.workloadState?.status !== 'ready';
  }

  // ---- selection, keyboard, actions ----

  private barOf(callIndex: number | null): number | null {
    const w = this.workloadState;
    if (callIndex === null || w?.status !== 'ready') return null;
    const k = w.data.callIndexes.indexOf(callIndex);
    return k < 0 ? null : k;
  }

  private pickBar(bar: number, reveal: boolean): void {
    const w = this.workloadState;
    if (w?.status !== 'ready') return;
    const callIndex = w.data.callIndexes[bar];
    if (callIndex === undefined) return;
    this.host.pickCall(callIndex, reveal);
  }

  private onBarsKey(e: KeyboardEvent): void {
    const w = this.workloadState;
    if (w?.status !== 'ready') return;
    const count = w.data.callIndexes.length;
    const bar = this.barOf(this.selectedCall);
    if (isNavigationKey(e.key)) {
      e.preventDefault();
      const next = moveSelection(bar, e.key, count);
      if (next !== null) this.pickBar(next, false);
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.pickBar(bar ?? 0, bar !== null);
    }
  }

  private onCliffKey(e: KeyboardEvent): void {
    // The points on screen: the earlier curve while a grown session's sweep runs.
    const sw = this.previousSweep ?? this.runs.sweep;
    if (!sw || sw.main.length === 0) return;
    const xs = [...sw.main].sort((a, b) => a.value - b.value);
    if (isNavigationKey(e.key)) {
      e.preventDefault();
      const next = moveSelection(this.cliff.cursor, e.key, xs.length);
      this.cliff.setCursor(next);
      const p = next === null ? undefined : xs[next];
      if (p) this.live.textContent = cliffPointText(sw.axis, p.value, p.result, sw.cliff);
    } else if ((e.key === 'Enter' || e.key === ' ') && this.cliff.cursor !== null) {
      e.preventDefault();
      const p = xs[this.cliff.cursor];
      if (p) this.pickPoint(p.value);
    }
  }

  /** A point of the cliff chart becomes the scenario: its N, or its capacity typed in. */
  private pickPoint(value: number): void {
    const sw = this.runs.sweep;
    if (!sw) return;
    this.form.forget(sw.axis === 'replicas' ? 'replicas' : 'capacityTokens');
    if (sw.axis === 'replicas') this.form.update({ ...this.form.scenario, replicas: value });
    else this.form.update({ ...this.form.scenario, capacityTyped: true, capacityTokens: value });
  }

  /** The command of the scenario on screen (the one the figures show). */
  private command(): string | null {
    const w = this.workloadState;
    const shown = this.shown();
    if (w?.status !== 'ready' || !shown) return null;
    return cliCommand(shown.scenario, shown.resolved, {
      filePath: w.data.filePath,
      sessionId: w.data.sessionId,
      format: w.data.format,
    });
  }

  private copyCommand(): void {
    const text = this.command();
    if (text === null) {
      this.status.textContent = 'Nothing to copy yet: the scenario has not run.';
      return;
    }
    this.host.notify({ type: 'clipboard/write', text });
    this.commandBox.hidden = false;
    this.commandBox.textContent = text;
    this.commandBox.dataset['command'] = text;
    this.live.textContent = 'Copied the agent-trace simulate command.';
  }

  private copySweepCommand(): void {
    const w = this.workloadState;
    const sw = this.runs.sweep;
    if (w?.status !== 'ready' || !sw || sw.run.length === 0) return;
    const text = cliCommand(
      sw.scenario,
      sw.resolved,
      { filePath: w.data.filePath, sessionId: w.data.sessionId, format: w.data.format },
      { axis: sw.axis, values: sw.run },
    );
    this.host.notify({ type: 'clipboard/write', text });
    this.commandBox.hidden = false;
    this.commandBox.textContent = text;
    this.commandBox.dataset['command'] = text;
    this.live.textContent = 'Copied the agent-trace simulate sweep command.';
  }

  /**
   * The scenario shown and its results, with the sweep and its cliff, as "Export JSON"
   * saves them and the HTML report draws them; null before anything has run.
   */
  currentDocument(): WhatIfDocument | null {
    const w = this.workloadState;
    const shown = this.shown();
    if (w?.status !== 'ready' || !shown) return null;
    const sr = this.runs.scenario;
    const sw = this.runs.sweep;
    const p = shown.resolved.params;
    const block = w.data.workload.kind === 'requests';
    const doc = {
      command: this.command(),
      sentence: scenarioSentence(shown.scenario, shown.resolved, shown.result, shown.alone, block),
      input: {
        file: w.data.filePath,
        format: w.data.format,
        session: w.data.sessionId,
        workloadKind: w.data.workload.kind,
        notes: w.data.notes,
        gpu: shown.scenario.gpu,
        model: shown.scenario.model,
        gpuMemoryGiB: shown.scenario.gpu === 'custom' ? shown.scenario.gpuMemoryGiB : null,
        capacityTyped: shown.scenario.capacityTyped,
        params: paramsAsPrinted(p),
        replicas: shown.resolved.replicas,
      },
      scenario: shown.result,
      alone: shown.alone,
      callIndexes: w.data.callIndexes,
      policies: POLICY_CHOICES.map((c) => {
        const got = sr?.policies.get(c.id);
        return { policy: c.id, ...(got ? got : { error: 'not run' }) };
      }),
      sweep: sw
        ? {
            axis: sw.axis,
            values: sw.values,
            run: sw.run,
            skipped: sw.skipped,
            stoppedBy: sw.stoppedBy,
            cliff: sw.cliff,
            points: sw.main,
            lines: Object.fromEntries(sw.lines),
          }
        : null,
    };
    return doc as WhatIfDocument & typeof doc;
  }

  private exportJson(): void {
    const w = this.workloadState;
    const doc = this.currentDocument();
    if (w?.status !== 'ready' || !doc) {
      this.status.textContent = 'Nothing to export yet: the scenario has not run.';
      return;
    }
    const base = (w.data.filePath.split(/[\\/]/).pop() ?? 'trace').replace(/\.(jsonl|json|traj)$/i, '');
    this.host.notify({
      type: 'whatif/export',
      fileName: `${base}.whatif.json`,
      json: JSON.stringify(doc, null, 2) + '\n',
    });
    this.live.textContent = 'Exporting the scenario as JSON.';
  }
}

/** The traced figures of a session's calls for the what-if bars, read from the timeline columns. */
function tracedCalls(body: SessionBody): ArrayLike<TracedCall | undefined> {
  const c = body.columns;
  const value = (v: number): number | null => (Number.isNaN(v) ? null : v);
  return new Proxy([] as (TracedCall | undefined)[], {
    get(target, key) {
      if (key === 'length') return c.flags.length;
      if (typeof key === 'string' && /^\d+$/.test(key)) {
        const i = Number(key);
        return i < c.flags.length
          ? { cached: value(c.cached[i]!), appended: value(c.appended[i]!), output: value(c.output[i]!) }
          : undefined;
      }
      return Reflect.get(target, key) as unknown;
    },
  });
}

/** The what-if panel of the inspector page (none where the page runs no simulator: the HTML report). */
export function whatIfPanel(page: PanelContext): InspectorPanel | null {
  if (!page.options.whatIf) return null;
  const view = new WhatIfView(
    {
      workload: (sessionId) => page.host.request('whatIfWorkload', { sessionId }, { timeoutMs: BODY_TIMEOUT_MS }),
      // The answer waits on a person in a file dialog: far longer than a query.
      pickCalibration: () => page.host.request('whatif/calibration', {}, { timeoutMs: 60 * 60_000 }),
      pickCall: (index, reveal) => page.safely('select a call', () => page.select(index, { reveal })),
      notify: (message) => page.host.notify(message),
      getState: () => page.host.getState(),
      setState: (state) => page.host.setState(state),
      reportError: (what, error) => page.reportError(what, error),
    },
    page.workerUri,
    page.palette,
  );
  view.element.hidden = true;
  return view;
}
