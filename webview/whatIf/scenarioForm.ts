import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import type { VscodeButton } from '@vscode-elements/elements/dist/vscode-button/vscode-button.js';
import type { VscodeCheckbox } from '@vscode-elements/elements/dist/vscode-checkbox/vscode-checkbox.js';
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import type { VscodeTextfield } from '@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js';
import { formatCount } from '../../src/core/text/formatNumbers';
import { GPU_PRESETS, MODEL_PRESETS } from '../../src/core/sim/params';
import { POLICY_CHOICES, POLICY_PARAMS, usedPolicyValues } from '../../src/core/sim/policies';
import type { PolicyParam } from '../../src/core/sim/policies';
import { el, replaceChildren } from '../shared/dom';
import {
  derivedCapacity,
  fieldText,
  kvBytesText,
  MAX_REPLICAS,
  parseField,
  readScenario,
  ROUTER_CHOICES,
  scenarioDigest,
  stepTimesText,
  TOOL_WAIT_STOPS,
  withField,
} from './whatIfModel';
import type { NumericField, Scenario } from './whatIfModel';
import type { WhatIfCalibration } from '../../src/protocol/messages';
import { invalidMessage } from './whatIfRuns';

/** What the form needs from the panel around it. */
export interface ScenarioFormHost {
  /** The scenario changed from the controls (or through `update`): the panel saves and runs it. */
  changed(next: Scenario): void;
  /** A field holds text that is not a value: the panel marks its results as not updated. */
  stale(message: string): void;
  /** The workload's block size (a block-hash trace has its own; else 16). */
  blockSize(): number;
  /** True for a block-hash trace: no session controls, the sweep is over capacity. */
  blockTrace(): boolean;
  /** Runs an event handler, reporting what it throws instead of losing it. */
  safely(what: string, fn: () => void): void;
  /** Asks the host for a calibration file (its open dialog); null when cancelled, rejected with why when the file is not one. */
  pickCalibration(): Promise<WhatIfCalibration | null>;
}

/** What the form says beside a policy's field: its unit, and the word it also takes ("s or auto"). */
function fieldUnit(p: PolicyParam): string | undefined {
  const unit = p.formUnit ?? p.unit;
  if (p.word === undefined) return unit;
  return unit === undefined ? `or ${p.word}` : `${unit} or ${p.word}`;
}

/** A numeric control: its text box, its slider (if any) and the message under it. */
interface Field {
  wrap: HTMLElement;
  input: VscodeTextfield;
  slider: HTMLInputElement | null;
  /** The slider position of a value (identity unless the slider steps through stops). */
  toPos: (value: number) => number;
  /** The slider's spoken value, when its position is not the value itself. */
  valueText: ((value: number) => string) | null;
  message: HTMLElement;
}

/**
 * The what-if panel's scenario form: the GPU and model, sessions and policy controls,
 * and the sweep axis. Owns the scenario the controls describe and the fields whose text
 * is not a value yet (`invalid`: they keep what the person typed, with its message);
 * tells the panel of every change (which saves it per file and runs it).
 */
export class ScenarioForm {
  /** The groups of controls, in order (GPU and model, sessions, policy). */
  readonly groups: HTMLElement[];
  /** The sweep axis select, drawn by the panel in the cliff section's head. */
  readonly axisSelect = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private current: Scenario = readScenario(null);
  private readonly invalid = new Set<NumericField>();
  private readonly fields = new Map<NumericField, Field>();
  private readonly gpuSelect = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly modelSelect = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly modelNote = el('p', { className: 'field-note muted', data: { modelNote: '' } });
  private readonly capacityTyped = document.createElement('vscode-checkbox') as VscodeCheckbox;
  private readonly capacityNote = el('p', { className: 'field-note muted', data: { capacityNote: '' } });
  private readonly staggerMode = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly policySelect = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly policyNote = el('p', { className: 'field-note muted' });
  private readonly policyParams = el('div', { className: 'policy-params' });
  private readonly sessionsGroup = el('fieldset', { className: 'whatif-group' });
  private readonly routerSelect = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly routerNote = el('p', { className: 'field-note muted', data: { routerNote: '' } });
  private readonly stepsNote = el('p', {
    className: 'field-note muted',
    attrs: { id: 'whatif-steps-note' },
    data: { stepsNote: '' },
  });
  private readonly stepsError = el('p', {
    className: 'field-error',
    attrs: { id: 'whatif-steps-error', 'aria-live': 'polite' },
    data: { fieldError: 'calibration' },
  });
  private readonly loadCalibration = document.createElement('vscode-button') as VscodeButton;
  private readonly dropCalibration = document.createElement('vscode-button') as VscodeButton;

  /** `digest` is the one-line summary of the scenario beside the panel's title. */
  constructor(
    private readonly host: ScenarioFormHost,
    private readonly digest: HTMLElement,
  ) {
    this.groups = this.build();
  }

  /** The scenario the controls describe. */
  get scenario(): Scenario {
    return this.current;
  }

  /** A restored scenario (the settings' defaults, a file's saved one): the controls start over from it. */
  restore(scenario: Scenario): void {
    this.current = scenario;
    this.invalid.clear();
    this.write();
  }

  /** A scenario adjusted by the panel itself (not a person's choice): shown, not reported as a change. */
  adjust(scenario: Scenario): void {
    this.current = scenario;
  }

  /** A new scenario (from the controls, or a point picked on the cliff chart): reported, then shown. */
  update(next: Scenario, rewrite = true): void {
    this.current = next;
    this.host.changed(next);
    if (rewrite) this.write();
    else this.show();
  }

  /** Fields whose text is not a value: nothing runs until they are fixed. */
  invalidFields(): ReadonlySet<NumericField> {
    return this.invalid;
  }

  /** Drops a field's typed text (a value is about to be set for it). */
  forget(name: NumericField): void {
    this.invalid.delete(name);
  }

  /** True for the panel's numeric fields (a resolve error either names one or the whole scenario). */
  isField = (name: string): name is NumericField => this.fields.has(name as NumericField);

  /** Clears the messages of every field that holds a value. */
  clearErrors(): void {
    for (const name of this.fields.keys()) if (!this.invalid.has(name)) this.setError(name, null);
  }

  private build(): HTMLElement[] {
    const gpuOptions: Array<[string, string]> = [
      ...GPU_PRESETS.map((g): [string, string] => [g.id, g.label]),
      ['custom', 'Custom memory…'],
    ];
    const modelOptions: Array<[string, string]> = [
      ...MODEL_PRESETS.map((m): [string, string] => [m.id, `${m.label} · ${kvBytesText(m.kvBytesPerToken)} KV/token`]),
      ['custom', 'Custom model…'],
    ];
    this.capacityTyped.label = 'Type the capacity in tokens';
    this.capacityTyped.id = 'whatif-capacity-typed';
    this.capacityTyped.addEventListener('change', () =>
      this.host.safely('type the capacity', () => this.capacityTypedChanged(this.capacityTyped.checked)),
    );
    const hardware = el('fieldset', { className: 'whatif-group' }, [
      el('legend', { text: 'GPU and model' }),
      this.selectControl(this.gpuSelect, 'whatif-gpu', 'GPU', gpuOptions, (v) =>
        this.update({ ...this.current, gpu: v }),
      ),
      this.field('gpuMemoryGiB', 'GPU memory', { unit: 'GiB' }).wrap,
      this.selectControl(this.modelSelect, 'whatif-model', 'Model', modelOptions, (v) =>
        this.update({ ...this.current, model: v }),
      ),
      this.modelNote,
      this.field('customKvBytesPerToken', 'KV bytes per token', { unit: 'B' }).wrap,
      this.field('customWeightsGiB', 'Weights', { unit: 'GiB' }).wrap,
      this.stepTimesControl(),
      this.field('capacityTokens', 'KV capacity', { unit: 'tokens' }).wrap,
      this.capacityTyped,
      this.capacityNote,
      this.field('gpus', 'GPUs', { unit: 'each with this cache' }).wrap,
      this.selectControl(
        this.routerSelect,
        'whatif-router',
        'Router',
        ROUTER_CHOICES.map((c): [string, string] => [c.id, c.label]),
        (v) => {
          const choice = ROUTER_CHOICES.find((c) => c.id === v);
          if (choice) this.update({ ...this.current, router: choice.id });
        },
      ),
      this.routerNote,
    ]);
    const stops = TOOL_WAIT_STOPS;
    const waitToPos = (v: number): number => {
      let best = 0;
      stops.forEach((s, i) => {
        if (Math.abs(Math.log(s / v)) < Math.abs(Math.log(stops[best]! / v))) best = i;
      });
      return best;
    };
    this.sessionsGroup.append(
      el('legend', { text: 'Sessions' }),
      this.field('replicas', 'Concurrent sessions (N)', { slider: { min: 1, max: MAX_REPLICAS, step: 1 } }).wrap,
      this.field('staggerS', 'Start stagger', { unit: 's' }).wrap,
      this.selectControl(
        this.staggerMode,
        'whatif-stagger-mode',
        'Stagger',
        [
          ['fixed', 'Fixed gaps'],
          ['random', 'Random gaps (seeded)'],
        ],
        (v) => this.update({ ...this.current, staggerMode: v === 'random' ? 'random' : 'fixed' }),
      ),
      this.field('seed', 'Seed').wrap,
      this.field('toolWaitScale', 'Tool-wait scale', {
        unit: '×',
        slider: {
          min: 0,
          max: stops.length - 1,
          step: 1,
          toValue: (pos) => stops[pos] ?? 1,
          toPos: waitToPos,
          valueText: (v) => `×${v}`,
        },
      }).wrap,
    );
    this.fields.get('toolWaitScale')!.slider!.dataset['stops'] = stops.join(',');
    const policy = el('fieldset', { className: 'whatif-group' }, [
      el('legend', { text: 'Policy' }),
      this.selectControl(
        this.policySelect,
        'whatif-policy',
        'Policy',
        POLICY_CHOICES.map((c): [string, string] => [c.id, c.label]),
        (v) => {
          const choice = POLICY_CHOICES.find((c) => c.id === v);
          if (choice) this.update({ ...this.current, policy: choice.id });
        },
      ),
      this.policyNote,
      this.policyParams,
    ]);
    // Each policy's fields, from its declaration (policies.ts).
    this.policyParams.append(
      ...POLICY_PARAMS.map((p) => this.field(p.key, p.formLabel ?? p.label, { unit: fieldUnit(p) }).wrap),
    );
    this.buildAxisSelect();
    return [hardware, this.sessionsGroup, policy];
  }

  /**
   * Step times: the presets', or a calibration file fitted on the person's own server
   * (`agent-trace calibrate RESULTS -o CAL.json`), which the host opens when asked.
   */
  private stepTimesControl(): HTMLElement {
    this.loadCalibration.id = 'whatif-calibration-load';
    this.loadCalibration.secondary = true;
    this.loadCalibration.textContent = 'Load calibration…';
    this.loadCalibration.setAttribute('aria-describedby', 'whatif-steps-note');
    this.dropCalibration.id = 'whatif-calibration-drop';
    this.dropCalibration.secondary = true;
    this.dropCalibration.textContent = 'Use the presets’';
    this.stepsError.hidden = true;
    this.loadCalibration.addEventListener('click', () =>
      this.host.safely('load a calibration', () => this.askCalibration()),
    );
    this.dropCalibration.addEventListener('click', () =>
      this.host.safely('use the presets’ step times', () => {
        this.setStepsError(null);
        this.update({ ...this.current, calibration: null });
      }),
    );
    return el('div', { className: 'whatif-field', data: { control: 'whatif-steps' } }, [
      el('span', { className: 'control-label', text: 'Step times' }),
      this.stepsNote,
      el('div', { className: 'field-row' }, [this.loadCalibration, this.dropCalibration]),
      this.stepsError,
    ]);
  }

  private askCalibration(): void {
    this.setStepsError(null);
    this.loadCalibration.disabled = true;
    this.host
      .pickCalibration()
      .then(
        (picked) => {
          if (picked) this.update({ ...this.current, calibration: picked });
        },
        (e: unknown) => this.setStepsError(`Could not use that file: ${e instanceof Error ? e.message : String(e)}`),
      )
      .finally(() => {
        this.loadCalibration.disabled = false;
      });
  }

  private setStepsError(message: string | null): void {
    this.stepsError.hidden = message === null;
    this.stepsError.textContent = message ?? '';
  }

  /** The sweep's axis is a scenario choice too; it sits in the cliff section's head. */
  private buildAxisSelect(): void {
    this.axisSelect.id = 'whatif-axis';
    this.axisSelect.setAttribute('aria-label', 'Sweep');
    this.axisSelect.label = 'Sweep';
    this.selectOptions.set(this.axisSelect, [
      ['replicas', 'against N'],
      ['capacity', 'against KV capacity'],
    ]);
    replaceChildren(this.axisSelect, [
      this.option('replicas', 'against N', true),
      this.option('capacity', 'against KV capacity', false),
    ]);
    this.axisSelect.addEventListener('change', () =>
      this.host.safely('choose the sweep', () =>
        this.update({ ...this.current, sweepAxis: this.axisSelect.value === 'capacity' ? 'capacity' : 'replicas' }),
      ),
    );
  }

  private option(value: string, label: string, selected: boolean): HTMLElement {
    const o = document.createElement('vscode-option');
    o.value = value;
    o.textContent = label;
    o.selected = selected;
    return o;
  }

  private selectControl(
    sel: VscodeSingleSelect,
    id: string,
    label: string,
    options: Array<[string, string]>,
    onChange: (value: string) => void,
  ): HTMLElement {
    sel.id = id;
    sel.setAttribute('aria-label', label);
    // The combobox inside the select's shadow root takes its accessible name from `label`.
    sel.label = label;
    this.selectOptions.set(sel, options);
    replaceChildren(
      sel,
      options.map(([v, l]) => this.option(v, l, false)),
    );
    sel.addEventListener('change', () => this.host.safely(`change ${label}`, () => onChange(sel.value)));
    return el('div', { className: 'whatif-field', data: { control: id } }, [
      el('label', { className: 'control-label', text: label, attrs: { for: id } }),
      sel,
    ]);
  }

  /** A labelled text box with a message line; `slider` adds a range input bound to it. */
  private field(
    name: NumericField,
    label: string,
    options: {
      unit?: string;
      slider?: {
        min: number;
        max: number;
        step: number;
        toValue?: (pos: number) => number;
        toPos?: (value: number) => number;
        valueText?: (value: number) => string;
      };
    } = {},
  ): Field {
    const id = `whatif-${name}`;
    const input = document.createElement('vscode-textfield') as VscodeTextfield;
    input.id = id;
    input.label = label;
    input.setAttribute('inputmode', 'decimal');
    input.dataset['field'] = name;
    const message = el('p', {
      className: 'field-error',
      attrs: { id: `${id}-error`, 'aria-live': 'polite' },
      data: { fieldError: name },
    });
    message.hidden = true;
    let slider: HTMLInputElement | null = null;
    const row = el('div', { className: 'field-row' }, [
      input,
      options.unit ? el('span', { className: 'unit muted', text: options.unit }) : null,
    ]);
    if (options.slider) {
      const sl = options.slider;
      slider = el('input', {
        className: 'whatif-slider',
        attrs: {
          type: 'range',
          min: String(sl.min),
          max: String(sl.max),
          step: String(sl.step),
          'aria-label': `${label} (slider)`,
        },
        data: { slider: name },
      });
      const toValue = sl.toValue ?? ((pos: number) => pos);
      slider.addEventListener('input', () =>
        this.host.safely(`move ${label}`, () => {
          const value = toValue(Number(slider!.value));
          input.value = String(value);
          this.fieldChanged(name, String(value));
        }),
      );
      row.prepend(slider);
    }
    input.addEventListener('input', () =>
      this.host.safely(`edit ${label}`, () => this.fieldChanged(name, input.value)),
    );
    const wrap = el('div', { className: 'whatif-field', data: { control: name } }, [
      el('label', { className: 'control-label', text: label, attrs: { for: id } }),
      row,
      message,
    ]);
    const f: Field = {
      wrap,
      input,
      slider,
      toPos: options.slider?.toPos ?? ((value: number) => value),
      valueText: options.slider?.valueText ?? null,
      message,
    };
    this.fields.set(name, f);
    return f;
  }

  /** Writes the scenario into the controls (after a restore, or a change that shows or hides fields). */
  write(): void {
    const s = this.current;
    this.setSelect(this.gpuSelect, s.gpu);
    this.setSelect(this.modelSelect, s.model);
    this.setSelect(this.staggerMode, s.staggerMode);
    this.setSelect(this.policySelect, s.policy);
    this.setSelect(this.routerSelect, s.router);
    this.setSelect(this.axisSelect, s.sweepAxis);
    this.capacityTyped.checked = s.capacityTyped;
    for (const [name, f] of this.fields) {
      if (!this.invalid.has(name)) {
        f.input.value = fieldText(name, s);
        this.setError(name, null);
      }
      if (f.slider) {
        const v = Number(s[name]);
        f.slider.value = String(f.toPos(v));
        if (f.valueText) f.slider.setAttribute('aria-valuetext', f.valueText(v));
      }
    }
    this.show();
  }

  /**
   * Selects a value by giving the select fresh options, the chosen one marked: a select
   * reads its options when they are slotted, and one inside the closed section never
   * does, so setting `value` alone leaves it blank once the section opens (vscode-elements 2.5).
   */
  private setSelect(sel: VscodeSingleSelect, value: string): void {
    const options = this.selectOptions.get(sel) ?? [];
    replaceChildren(
      sel,
      options.map(([v, l]) => this.option(v, l, v === value)),
    );
    sel.value = value;
    sel.dataset['value'] = value;
  }

  private readonly selectOptions = new Map<VscodeSingleSelect, Array<[string, string]>>();

  /** Shows the fields the current choices use, and the notes beside them. */
  show(): void {
    const s = this.current;
    const block = this.host.blockTrace();
    const visible = (name: NumericField, on: boolean): void => {
      this.fields.get(name)!.wrap.hidden = !on;
    };
    visible('gpuMemoryGiB', s.gpu === 'custom');
    visible('customKvBytesPerToken', s.model === 'custom');
    visible('customWeightsGiB', s.model === 'custom');
    visible('seed', s.staggerMode === 'random');
    // A policy's fields show when it is chosen and they do something (adaptive's only with an adaptive cap).
    const used = usedPolicyValues(s.policy, s);
    for (const p of POLICY_PARAMS) visible(p.key, p.key in used);
    this.sessionsGroup.hidden = block;
    const capacity = this.fields.get('capacityTokens')!;
    capacity.input.disabled = !s.capacityTyped;
    const derived = derivedCapacity(s, this.blockSizeOf(s));
    if (!s.capacityTyped && !this.invalid.has('capacityTokens'))
      capacity.input.value = derived === null ? '—' : formatCount(derived);
    const model = MODEL_PRESETS.find((m) => m.id === s.model);
    this.modelNote.textContent = model
      ? `${kvBytesText(model.kvBytesPerToken)} of KV per token, ${model.weightsGiB} GiB of weights.`
      : 'Step costs of the engine defaults (Qwen3-32B on an H100).';
    this.capacityNote.textContent = s.capacityTyped
      ? `From the GPU and the model it would be ${derived === null ? 'nothing (the weights do not fit)' : `${formatCount(derived)} tokens`}.`
      : s.gpu === 'custom'
        ? `From ${s.gpuMemoryGiB} GiB × 0.9 minus weights and 3 GiB; step costs of an H100.`
        : 'From the GPU memory × 0.9, minus the weights and 3 GiB, in whole blocks.';
    this.policyNote.textContent = POLICY_CHOICES.find((c) => c.id === s.policy)?.hint ?? '';
    // The router only matters with more than one GPU.
    this.routerSelect.disabled = s.gpus <= 1;
    this.routerNote.textContent =
      s.gpus <= 1 ? 'One GPU: nothing to route.' : (ROUTER_CHOICES.find((c) => c.id === s.router)?.hint ?? '');
    this.axisSelect.disabled = block;
    this.stepsNote.textContent = stepTimesText(s);
    this.dropCalibration.hidden = s.calibration === null;
    this.digest.textContent = scenarioDigest(s, block);
  }

  /** Shows a field's message (null clears it). */
  setError(name: NumericField, message: string | null): void {
    const f = this.fields.get(name);
    if (!f) return;
    f.input.invalid = message !== null;
    f.message.hidden = message === null;
    f.message.textContent = message ?? '';
    if (message === null) f.input.removeAttribute('aria-describedby');
    else f.input.setAttribute('aria-describedby', f.message.id);
    f.wrap.classList.toggle('invalid', message !== null);
  }

  private fieldChanged(name: NumericField, text: string): void {
    const parsed = parseField(name, text, this.blockSizeOf(this.current));
    if (!parsed.ok) {
      this.invalid.add(name);
      this.setError(name, parsed.message);
      this.host.stale(invalidMessage(this.invalid));
      return;
    }
    this.invalid.delete(name);
    this.setError(name, null);
    const f = this.fields.get(name)!;
    if (f.slider && document.activeElement !== f.slider) {
      const v = Number(parsed.value);
      if (name === 'replicas') f.slider.value = String(v);
    }
    this.update(withField(this.current, name, parsed.value), false);
  }

  /** The block size a run of `s` uses: a block-hash trace's own, else the model's (a Mamba hybrid's raised one), as paramsFor. */
  private blockSizeOf(s: Scenario): number {
    if (this.host.blockTrace()) return this.host.blockSize();
    return MODEL_PRESETS.find((m) => m.id === s.model)?.blockSizeTokens ?? this.host.blockSize();
  }

  private capacityTypedChanged(typed: boolean): void {
    if (typed === this.current.capacityTyped) return;
    let next = { ...this.current, capacityTyped: typed };
    // Typing starts from the capacity the GPU and model give.
    const derived = derivedCapacity(this.current, this.blockSizeOf(this.current));
    if (typed && derived !== null) next = { ...next, capacityTokens: derived };
    this.invalid.delete('capacityTokens');
    this.update(next);
    if (typed) this.fields.get('capacityTokens')!.input.value = formatCount(this.current.capacityTokens);
  }
}
