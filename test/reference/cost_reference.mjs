#!/usr/bin/env node
// Independent reference for the cost of a trace (a different code path from src/core/cost):
// it reads the trace files itself (Claude Code logs grouped by message.id, Codex rollouts by
// differences of total_token_usage, TraceLab rows, canonical llm_call records), takes the raw
// price entries of @pydantic/genai-prices (its provider data, through findProvider only: never
// calcPrice) and src/core/cost/price-supplement.json, and prices each call with its own
// matching, date and tier rules written from the library's documented data format.
// Run: node test/reference/cost_reference.mjs FILE [FILE ...]   → JSON on stdout.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findProvider } from '@pydantic/genai-prices';

const here = dirname(fileURLToPath(import.meta.url));
const supplement = JSON.parse(readFileSync(join(here, '../../src/core/cost/price-supplement.json'), 'utf8'));

/** The library's match rules: equals, starts_with, ends_with, contains (case-insensitive), regex, or, and. */
function matches(rule, name) {
  const n = name.toLowerCase();
  if (rule.or) return rule.or.some((r) => matches(r, name));
  if (rule.and) return rule.and.every((r) => matches(r, name));
  if (rule.equals !== undefined) return n === rule.equals.toLowerCase();
  if (rule.starts_with !== undefined) return n.startsWith(rule.starts_with.toLowerCase());
  if (rule.ends_with !== undefined) return n.endsWith(rule.ends_with.toLowerCase());
  if (rule.contains !== undefined) return n.includes(rule.contains.toLowerCase());
  if (rule.regex !== undefined) return new RegExp(rule.regex).test(name);
  return false;
}

/** The entry in force at `ms`: the last one whose start date has passed, else the first. */
function entryAt(model, ms) {
  if (!Array.isArray(model.prices)) return model.prices;
  for (let i = model.prices.length - 1; i >= 0; i--) {
    const c = model.prices[i].constraint;
    if (!c) return model.prices[i].prices;
    if (c.start_date && ms >= Date.parse(`${c.start_date}T00:00:00Z`)) return model.prices[i].prices;
  }
  return model.prices[0].prices;
}

/** $/Mtok of one price key for a prompt of `prompt` tokens: a tier applies when the prompt exceeds its start. */
function perMtok(value, prompt) {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return value;
  let price = value.base;
  for (const t of [...value.tiers].sort((a, b) => a.start - b.start)) if (prompt > t.start) price = t.price;
  return price;
}

const providers = { anthropic: findProvider({ providerId: 'anthropic' }), openai: findProvider({ providerId: 'openai' }), deepseek: findProvider({ providerId: 'deepseek' }) };

/** The supplement's dated model entries win from their `since` date on; otherwise the library's entry. */
function modelFor(call) {
  for (const m of supplement.models) {
    if (call.ms >= Date.parse(`${m.since}T00:00:00Z`) && matches(m.model.match, call.model)) return m.model;
  }
  return providers[call.provider]?.models.find((m) => matches(m.match, call.model)) ?? null;
}

/** USD of one call, or null when the model has no price. */
function price(call) {
  const model = modelFor(call);
  if (!model) return null;
  const e = entryAt(model, call.ms);
  const prompt = call.uncached + call.read + call.write5m + call.write1h;
  const input = perMtok(e.input_mtok, prompt);
  const read = perMtok(e.cache_read_mtok, prompt) ?? input;
  const write5m = perMtok(e.cache_write_mtok, prompt) ?? input;
  const write1h = perMtok(e.cache_write_1h_mtok, prompt) ?? (e.cache_write_mtok === undefined ? input : null);
  if (write1h === null && call.write1h > 0) return null;
  const tier = supplement.serviceTiers[call.provider]?.multipliers[call.serviceTier ?? 'standard'] ?? 1;
  const geo = supplement.inferenceGeo[call.provider]?.multipliers[call.geo ?? 'global'] ?? 1;
  if (tier === null || geo === null) return null;
  const usd = (call.uncached * input + call.read * read + call.write5m * write5m + call.write1h * (write1h ?? 0) + call.output * perMtok(e.output_mtok, prompt)) / 1e6;
  return usd * tier * geo;
}

function jsonl(path) {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
}

/** Claude Code: one call per message.id (input from its first line, output the largest), sub-agent logs included. */
function claudeCode(path) {
  const files = [path];
  const sub = join(path.replace(/\.jsonl$/, ''), 'subagents');
  if (existsSync(sub)) for (const f of readdirSync(sub).sort()) if (f.endsWith('.jsonl')) files.push(join(sub, f));
  const calls = [];
  for (const f of files) {
    const byId = new Map();
    for (const d of jsonl(f)) {
      if (d.type !== 'assistant' || d.message?.model === '<synthetic>') continue;
      const u = d.message.usage;
      const id = d.message.id;
      if (!byId.has(id)) {
        const split = u.cache_creation;
        byId.set(id, {
          provider: 'anthropic',
          model: d.message.model,
          ms: Date.parse(d.timestamp),
          uncached: u.input_tokens,
          read: u.cache_read_input_tokens ?? 0,
          write5m: split ? split.ephemeral_5m_input_tokens : (u.cache_creation_input_tokens ?? 0),
          write1h: split ? split.ephemeral_1h_input_tokens : 0,
          output: u.output_tokens,
          serviceTier: u.service_tier,
          geo: u.inference_geo || undefined,
        });
      } else byId.get(id).output = Math.max(byId.get(id).output, u.output_tokens);
    }
    calls.push(...byId.values());
  }
  return calls;
}

/** Codex: each non-zero difference of total_token_usage is a call; input includes the cached part. */
function codex(path) {
  const calls = [];
  let model = null;
  let prev = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  for (const d of jsonl(path)) {
    if (d.type === 'turn_context' && d.payload?.model) model = d.payload.model;
    if (d.type !== 'event_msg' || d.payload?.type !== 'token_count' || !d.payload.info) continue;
    const t = d.payload.info.total_token_usage;
    const delta = Object.fromEntries(Object.keys(prev).map((k) => [k, (t[k] ?? 0) - prev[k]]));
    prev = Object.fromEntries(Object.keys(prev).map((k) => [k, t[k] ?? 0]));
    if (Object.values(delta).every((v) => v === 0)) continue;
    calls.push({ provider: 'openai', model, ms: Date.parse(d.timestamp), uncached: delta.input_tokens - delta.cached_input_tokens, read: delta.cached_input_tokens, write5m: 0, write1h: 0, output: delta.output_tokens });
  }
  return calls;
}

/** TraceLab rows: Claude rows split uncached / read / created; Codex rows total / prefix. */
function tracelab(path) {
  return jsonl(path).map((r) => {
    const ms = Date.parse(r.timing_events?.[0]?.timestamp ?? '');
    if (r.provider === 'claude') {
      return { provider: 'anthropic', model: r.model, ms, uncached: r.claude_uncached_input_tokens, read: r.claude_cache_read_input_tokens, write5m: r.claude_cache_creation_input_tokens, write1h: 0, output: r.output_tokens };
    }
    return { provider: 'openai', model: r.model, ms, uncached: r.input_tokens_total - r.prefix_tokens, read: r.prefix_tokens, write5m: 0, write1h: 0, output: r.output_tokens };
  });
}

/** mini-swe-agent: each assistant message with a response usage is a call (prompt_tokens includes the cached part). */
function miniSweAgent(path) {
  const calls = [];
  for (const m of JSON.parse(readFileSync(path, 'utf8')).messages ?? []) {
    const r = m.role === 'assistant' ? m.extra?.response : null;
    if (!r?.usage) continue;
    const cached = r.usage.prompt_tokens_details?.cached_tokens ?? 0;
    const provider = /deepseek/i.test(r.model) ? 'deepseek' : /claude/i.test(r.model) ? 'anthropic' : 'openai';
    calls.push({ provider, model: r.model, ms: m.extra.timestamp * 1000, uncached: r.usage.prompt_tokens - cached, read: cached, write5m: 0, write1h: 0, output: r.usage.completion_tokens });
  }
  return calls;
}

/** Canonical Agent Trace: llm_call records; the session's agent names the provider. */
function canonical(path) {
  const agentOf = new Map();
  const calls = [];
  for (const d of jsonl(path)) {
    if (d.type === 'session') agentOf.set(d.id, d.agent?.name ?? '');
    if (d.type !== 'llm_call') continue;
    const t = d.tokens;
    const write = t.cacheWrite ?? 0;
    const write1h = t.cacheWrite1h ?? 0;
    calls.push({
      session: d.session,
      provider: /claude/i.test(agentOf.get(d.session) ?? '') ? 'anthropic' : 'openai',
      model: d.model,
      ms: d.startMs ?? d.endMs,
      uncached: t.input - (t.cached ?? 0) - write,
      read: t.cached ?? 0,
      write5m: write - write1h,
      write1h,
      output: t.output,
      serviceTier: d.serviceTier,
      geo: d.inferenceGeo,
    });
  }
  return calls;
}

function callsOf(path) {
  if (path.endsWith('.trace.jsonl')) return canonical(path);
  if (path.endsWith('.traj.json')) return miniSweAgent(path);
  const first = jsonl(path)[0];
  if (first.provider !== undefined && first.round_index !== undefined) return tracelab(path);
  if (first.type === 'session_meta') return codex(path);
  return claudeCode(path);
}

const out = [];
for (const path of process.argv.slice(2)) {
  const calls = callsOf(path);
  let total = 0;
  let unpriced = 0;
  const byModel = {};
  const bySession = {};
  for (const c of calls) {
    const usd = price(c);
    if (usd === null) {
      unpriced += 1;
      continue;
    }
    total += usd;
    byModel[c.model] = (byModel[c.model] ?? 0) + usd;
    if (c.session !== undefined) bySession[c.session] = (bySession[c.session] ?? 0) + usd;
  }
  out.push({ file: basename(path), calls: calls.length, unpriced, totalUsd: total, byModel, bySession });
}
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
