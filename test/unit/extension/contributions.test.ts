import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DEFAULT_ANALYSIS_OPTIONS } from '../../../src/core/analysis/sessionAnalysis';
import { DEFAULT_INTENT_MAPPING } from '../../../src/core/analysis/toolTaxonomy';
import { GPU_PRESETS, MODEL_PRESETS } from '../../../src/core/sim/params';
import { POLICY_IDS } from '../../../src/core/sim/policies';
import { MIN_LOOP_ATTEMPTS, SETTING_DEFAULTS } from '../../../src/extension/settingDefaults';
import { USER_PRICE_FIELDS } from '../../../src/core/cost/userPrices';
import { AGENTS } from '../../../src/node/sessions/agentRegistry';
import {
  WHATIF_DEFAULTS,
  WHATIF_MAX_REPLICAS,
  WHATIF_MAX_TOOL_WAIT_SCALE,
  WHATIF_MIN_TOOL_WAIT_SCALE,
} from '../../../src/protocol/messages';
import { repoRoot } from '../../support/helpers';

// package.json's contributions are written by hand; the code has its own presets and
// defaults. Like rust-analyzer's check that its generated config matches package.json,
// these tests fail when the two drift: a preset added in code but not offered by the
// setting, a default changed on one side only. (That the commands package.json lists are
// the ones the extension registers is checked in the extension host: test/host.)

interface Property {
  type?: string;
  default?: unknown;
  enum?: string[];
  enumDescriptions?: string[];
  minimum?: number;
  maximum?: number;
}

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  contributes: {
    configuration: Array<{ title: string; properties: Record<string, Property> }>;
    commands: Array<{ command: string; category?: string }>;
    menus: Record<string, Array<{ command: string }>>;
  };
};
const properties: Record<string, Property> = Object.assign(
  {},
  ...manifest.contributes.configuration.map((c) => c.properties),
);
const setting = (key: string): Property => {
  const p = properties[`agentTrace.${key}`];
  assert.ok(p, `package.json has no setting agentTrace.${key}`);
  return p;
};

describe('package.json settings equal the code', () => {
  it('lists exactly the settings the code reads', () => {
    const read = [
      ...Object.keys(SETTING_DEFAULTS),
      'analysis.minLoopAttempts',
      'analysis.cacheTtlMinutes',
      'analysis.toolIntent',
      ...Object.keys(WHATIF_DEFAULTS).map((k) => `whatIf.${k}`),
    ].map((k) => `agentTrace.${k}`);
    assert.deepEqual(Object.keys(properties).sort(), read.sort());
  });

  it('agentTrace.prices entries have exactly the fields the price reader accepts, no others', () => {
    const items = (
      setting('prices') as Property & {
        items: { properties: Record<string, unknown>; additionalProperties: boolean; required: string[] };
      }
    ).items;
    assert.deepEqual(Object.keys(items.properties), [...USER_PRICE_FIELDS]);
    assert.equal(items.additionalProperties, false);
    assert.deepEqual(items.required, ['model']);
  });

  it("the defaults of the extension's own settings", () => {
    for (const [key, value] of Object.entries(SETTING_DEFAULTS)) assert.deepEqual(setting(key).default, value, key);
  });

  it("each agent of the registry has its folder setting, with the registry's default, and the status bar offers every agent", () => {
    for (const agent of AGENTS)
      assert.equal(setting(`sessionRoots.${agent.settingKey}`).default, agent.defaultRoot, agent.id);
    assert.deepEqual(
      (setting('statusBar.agents') as { items?: { enum?: string[] } }).items?.enum,
      AGENTS.map((a) => a.id),
    );
  });

  it('analysis defaults and limits are the core analysis defaults', () => {
    assert.equal(setting('analysis.minLoopAttempts').default, DEFAULT_ANALYSIS_OPTIONS.minLoopAttempts);
    assert.equal(setting('analysis.minLoopAttempts').minimum, MIN_LOOP_ATTEMPTS);
    assert.equal(setting('analysis.cacheTtlMinutes').default, DEFAULT_ANALYSIS_OPTIONS.cacheTtlMs / 60_000);
    assert.deepEqual(setting('analysis.toolIntent').default, DEFAULT_INTENT_MAPPING);
  });

  it('the what-if defaults are the panel built-in ones', () => {
    for (const [key, value] of Object.entries(WHATIF_DEFAULTS))
      assert.equal(setting(`whatIf.${key}`).default, value, key);
  });

  it('the what-if ranges are the panel ranges', () => {
    assert.deepEqual(
      [setting('whatIf.replicas').minimum, setting('whatIf.replicas').maximum],
      [1, WHATIF_MAX_REPLICAS],
    );
    assert.deepEqual(
      [setting('whatIf.toolWaitScale').minimum, setting('whatIf.toolWaitScale').maximum],
      [WHATIF_MIN_TOOL_WAIT_SCALE, WHATIF_MAX_TOOL_WAIT_SCALE],
    );
    assert.equal(setting('whatIf.staggerS').minimum, 0);
  });

  it('the GPU, model and policy choices are the presets and policies, in order, each described', () => {
    const gpu = setting('whatIf.gpu');
    assert.deepEqual(
      gpu.enum,
      GPU_PRESETS.map((g) => g.id),
    );
    assert.deepEqual(
      gpu.enumDescriptions,
      GPU_PRESETS.map((g) => g.label),
    );
    const model = setting('whatIf.model');
    assert.deepEqual(
      model.enum,
      MODEL_PRESETS.map((m) => m.id),
    );
    // "Qwen3-32B (bf16), 256 KiB KV per token": the label, then KV bytes per token in KiB.
    assert.deepEqual(
      model.enumDescriptions,
      MODEL_PRESETS.map((m) => `${m.label}, ${m.kvBytesPerToken / 1024} KiB KV per token`),
    );
    const policy = setting('whatIf.policy');
    assert.deepEqual(policy.enum, [...POLICY_IDS]);
    assert.equal(policy.enumDescriptions?.length, POLICY_IDS.length);
  });
});

describe('package.json commands and menus', () => {
  it('every command is in the Agent Trace category, and menus name only contributed commands', () => {
    const ids = new Set(manifest.contributes.commands.map((c) => c.command));
    for (const c of manifest.contributes.commands) {
      // agentTrace.<command>, or agentTrace.sessions.<command> for the Agent Sessions view.
      assert.match(c.command, /^agentTrace\.(sessions\.)?[a-zA-Z]+$/);
      assert.equal(c.category, 'Agent Trace', c.command);
    }
    for (const [menu, items] of Object.entries(manifest.contributes.menus))
      for (const item of items) assert.ok(ids.has(item.command), `${menu}: ${item.command}`);
  });
});
