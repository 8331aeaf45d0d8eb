#!/usr/bin/env python3
"""Runs a workload through the vLLM prefix-cache oracle and prints what the
simulator reports, so the two can be compared figure by figure.

The oracle (vLLM's own KV-cache code driven by a hand-written mirror of vLLM v1's
FCFS scheduler) is NOT part of this repository: its folder is given with
--oracle-dir. This script only imports it, replays the workload the way the
simulator does (N staggered copies of the workload's sessions, the shared prefix
as the first tokens of every copy), and observes it:

* the ideal hit is measured where vLLM looks the cache up (at a request's first
  admission, docs/design/simulator.md §1.4), next to the oracle's own (at arrival);
* --steps FILE writes one JSON line per engine step (what was scheduled,
  preempted and admitted), the same shape as the simulator's step log, so
  test/oracle/stepDiff.ts can find the first step where the two part;
* --mirror-as-is leaves the oracle's scheduler mirror exactly as shipped;
* a `kvLayout` in the params (a hybrid model: full-attention layers next to
  sliding-window, chunked-local or Mamba ones) replaces the oracle's one
  full-attention group by vLLM's own KV-cache groups (kv_cache_groups in that
  order, one pool), so vLLM's HybridKVCacheCoordinator and its
  SlidingWindowManager, ChunkedLocalAttentionManager or MambaManager make every
  cache decision; a Mamba layout with "prefixCaching": false runs vLLM's
  KVCacheCoordinatorNoPrefixCache with the Mamba groups' blocks max_model_len
  long (what vLLM's model config does for a hybrid model without Mamba prefix
  caching).

Input: one JSON object on stdin
  {"workload": <workload JSON as `simulate --emit-workload` writes>,
   "replicas": N, "staggerS": S, "params": <EngineParams subset>}
Output: one JSON object on stdout.
Python 3.10+, no packages.
"""
from __future__ import annotations

import argparse
import contextlib
from dataclasses import replace
import importlib.util
import io
import json
import os
import sys


def load_oracle(oracle_dir: str):
    path = os.path.join(oracle_dir, "oracle.py")
    if not os.path.isfile(path):
        raise SystemExit(f"no oracle.py in {oracle_dir}")
    spec = importlib.util.spec_from_file_location("vllm_oracle", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vllm_oracle"] = mod
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(mod)
    return mod


def oracle_trace(workload: dict, replicas: int, stagger_s: float) -> dict:
    """N copies of every workload session, copy r starting r * stagger later (the
    simulator's fixed stagger); outputs of 0 tokens become 1 (vLLM samples one)."""
    sessions = []
    for r in range(replicas):
        for s in workload["sessions"]:
            sessions.append({
                "id": f"{s['id']}#{r + 1}",
                "start_s": float(s.get("startS", 0)) + r * stagger_s,
                "calls": [{"prompt_tokens": c["promptTokens"],
                           "prefix_tokens": c["prefixTokens"],
                           "output_tokens": max(1, c["outputTokens"]),
                           "tool_wait_s": c["toolWaitS"]} for c in s["calls"]],
            })
    return {"shared_prefix_tokens": workload["sharedPrefixTokens"], "sessions": sessions}


def oracle_block_trace(workload: dict) -> dict:
    """A block-hash workload (Mooncake, Bailian) as one-call sessions at their arrival
    times. Equal hash ids become equal token blocks (as the oracle's own --hash-trace
    does), so vLLM's hash chain makes block j shared exactly when every hash up to j is;
    prompt tokens past the hashed blocks are fresh."""
    bs = workload["blockSizeTokens"]
    fresh = [2 * 10**12]
    sessions = []
    for q in workload["requests"]:
        n = q["promptTokens"]
        toks = []
        for h in q["hashes"][: n // bs]:
            toks.extend(range(10**12 + int(h) * bs, 10**12 + int(h) * bs + bs))
        rest = n - len(toks)
        toks.extend(range(fresh[0], fresh[0] + rest))
        fresh[0] += rest
        sessions.append({"id": q["id"], "start_s": float(q["arrivalS"]),
                         "calls": [{"tokens": toks, "output_tokens": max(1, q["outputTokens"])}]})
    return {"shared_prefix_tokens": 0, "sessions": sessions}


def engine_args(p: dict, block_size: int, capacity: int, free_order: str):
    return argparse.Namespace(
        block_size=block_size, kv_heads=8, head_dim=128,
        num_blocks=capacity // block_size + 1,  # + vLLM's reserved null block
        max_model_len=p.get("maxModelLenTokens", 1_000_000),
        no_prefix_caching=False, pin_ttl_s=0.0, per_call=False,
        max_num_batched_tokens=p.get("maxNumBatchedTokens", 8192),
        max_num_seqs=p.get("maxNumSeqs", 1024),
        step_fixed_ms=p.get("stepFixedMs", 23.0),
        prefill_us_per_token=p.get("prefillUsPerToken", 133.0),
        kv_read_ns_per_token=p.get("kvReadNsPerToken", 92.0),
        decode_us_per_seq=p.get("decodeUsPerSeq", 0.0),
        free_order=free_order)


def use_hybrid_groups(o, eng, a, layout: dict) -> None:
    """The model's KV-cache groups, in vLLM's order (the kind of the first layer first),
    sharing one block pool of the same size; the same manager options as the oracle's."""
    from vllm.v1.kv_cache_interface import ChunkedLocalAttentionSpec, MambaSpec, SlidingWindowSpec
    common = dict(block_size=eng.bs, num_kv_heads=a.kv_heads, head_size=a.head_dim, dtype=o.torch.bfloat16)
    full = o.FullAttentionSpec(**common)
    caching = layout.get("prefixCaching", True) is not False
    if layout["other"] == "sliding-window":
        other = SlidingWindowSpec(**common, sliding_window=int(layout["windowTokens"]))
    elif layout["other"] == "chunked-local":
        other = ChunkedLocalAttentionSpec(**common, attention_chunk_size=int(layout["windowTokens"]))
    elif layout["other"] == "mamba":
        # A Mamba2 state (shapes and dtype only size the page; the page is padded to the
        # attention page, as vLLM's model config pads it). With prefix caching its blocks are
        # the attention blocks; without, max_model_len long (one block per request).
        page = full.page_size_bytes
        other = MambaSpec(block_size=eng.bs if caching else a.max_model_len,
                          shapes=((3, 64), (8, 16, 16)), dtypes=(o.torch.bfloat16, o.torch.bfloat16),
                          page_size_padded=page)
    else:
        raise SystemExit(f"unknown kvLayout.other {layout['other']}")
    fulls = [full] * int(layout["fullGroups"])
    others = [other] * int(layout["otherGroups"])
    specs = others + fulls if layout.get("otherFirst") else fulls + others
    groups = [o.KVCacheGroupSpec([f"layers.{i}"], s) for i, s in enumerate(specs)]
    cfg = o.KVCacheConfig(num_blocks=a.num_blocks, kv_cache_tensors=[], kv_cache_groups=groups)
    with contextlib.redirect_stdout(io.StringIO()):
        eng.kvm = o.KVCacheManager(cfg, max_model_len=a.max_model_len, hash_block_size=eng.bs,
                                   enable_caching=caching, enable_hybrid_free_queue=False, log_stats=True)
    # The ideal (a never-evicting cache) is read from a full-attention group: a chunked-local
    # group never caches the blocks a hit skipped.
    eng.ideal_group = specs.index(full)


def layer_spec(o, layer: dict, bs: int, heads: int, head_size: int, mamba: dict | None = None):
    """One layer's KVCacheSpec as vLLM's attention layer declares it (bf16 KV); a Mamba
    layer's MambaSpec from its state shapes and dtype sizes, its page padded as given."""
    from vllm.v1.kv_cache_interface import ChunkedLocalAttentionSpec, MambaSpec, MLAAttentionSpec, SlidingWindowSpec
    common = dict(block_size=bs, num_kv_heads=heads, head_size=head_size, dtype=o.torch.bfloat16)
    kind = layer["kind"]
    if kind == "mamba":
        dtype = {2: o.torch.bfloat16, 4: o.torch.float32}
        return MambaSpec(block_size=int(mamba["blockSize"]), shapes=tuple(tuple(s) for s in mamba["shapes"]),
                         dtypes=tuple(dtype[int(b)] for b in mamba["dtypeBytes"]),
                         page_size_padded=mamba.get("pagePadded"))
    if kind == "full":
        return o.FullAttentionSpec(**common)
    if kind == "mla":
        return MLAAttentionSpec(**common)
    if kind == "sliding-window":
        return SlidingWindowSpec(**common, sliding_window=int(layer["window"]))
    if kind == "chunked-local":
        return ChunkedLocalAttentionSpec(**common, attention_chunk_size=int(layer["window"]))
    raise SystemExit(f"unknown layer kind {kind}")


def kv_config(o, c: dict) -> dict:
    """vLLM's own KV-cache grouping and block count for a model's layers: the groups (kind,
    window, layers) in vLLM's order, the bytes of one pool block, and num_blocks for the
    given memory (kv_cache_utils: get_kv_cache_groups, get_kv_cache_config_from_groups)."""
    from types import SimpleNamespace
    bs = int(c.get("blockSize", 16))
    specs = {f"model.layers.{i}.attn": layer_spec(o, layer, bs, int(c["numKvHeads"]), int(c["headSize"]),
                                                  c.get("mamba"))
             for i, layer in enumerate(c["layers"])}
    cfg = SimpleNamespace(cache_config=SimpleNamespace(num_gpu_blocks_override=None),
                          model_config=SimpleNamespace(max_model_len=int(c.get("maxModelLen", 131072))),
                          scheduler_config=SimpleNamespace(max_num_batched_tokens=8192,
                                                           disable_hybrid_kv_cache_manager=False),
                          parallel_config=SimpleNamespace(decode_context_parallel_size=1,
                                                          prefill_context_parallel_size=1))
    kcu = o.kcu
    groups = kcu.get_kv_cache_groups(cfg, specs)
    config = kcu.get_kv_cache_config_from_groups(cfg, groups, int(c["availableBytes"]))
    out_groups = []
    for g in groups:
        s = g.kv_cache_spec
        kind = type(s).__name__
        window = getattr(s, "sliding_window", None) if kind == "SlidingWindowSpec" else \
            getattr(s, "attention_chunk_size", None) if kind == "ChunkedLocalAttentionSpec" else None
        out_groups.append({"spec": kind, "window": window, "layers": len(g.layer_names)})
    group_size = max(len(g.layer_names) for g in groups)
    out = {"groups": out_groups, "numBlocks": config.num_blocks,
           "poolBlockBytes": groups[0].kv_cache_spec.page_size_bytes * group_size}
    mamba = [g.kv_cache_spec for g in groups if type(g.kv_cache_spec).__name__ == "MambaSpec"]
    if mamba:
        # A Mamba state's bytes as MambaSpec counts them (shapes × dtype sizes), before padding,
        # and each group's block size.
        out["mambaStateBytes"] = replace(mamba[0], page_size_padded=None).page_size_bytes
        out["blockSizes"] = [g.kv_cache_spec.block_size for g in groups]
    return out


def use_mla_group(o, eng, a, head_size: int) -> None:
    """The oracle's one group as MLA layers declare it (one latent "head"): vLLM gives it the
    same FullAttentionManager, so only the bytes per block differ, and the pool's size carries them."""
    from vllm.v1.kv_cache_interface import MLAAttentionSpec
    spec = MLAAttentionSpec(block_size=eng.bs, num_kv_heads=1, head_size=head_size, dtype=o.torch.bfloat16)
    cfg = o.KVCacheConfig(num_blocks=a.num_blocks, kv_cache_tensors=[],
                          kv_cache_groups=[o.KVCacheGroupSpec(["layers"], spec)])
    with contextlib.redirect_stdout(io.StringIO()):
        eng.kvm = o.KVCacheManager(cfg, max_model_len=a.max_model_len, hash_block_size=eng.bs,
                                   enable_caching=True, enable_hybrid_free_queue=False, log_stats=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle-dir", required=True)
    ap.add_argument("--steps", help="write the per-step schedule here (JSON lines)")
    ap.add_argument("--per-call", action="store_true", help="list every call")
    ap.add_argument("--mirror-as-is", action="store_true",
                    help="do not correct the oracle's scheduler mirror (see CORRECTIONS)")
    cli = ap.parse_args()
    job = json.load(sys.stdin)
    p = job.get("params", {})
    bs = int(p.get("blockSizeTokens", 16))
    capacity = int(p.get("capacityTokens", 255_008))
    # The simulator says "current" for what the oracle calls "split" (vLLM after PR #42656).
    free_order = {"current": "split", "legacy": "legacy"}[p.get("freeOrder", "current")]

    o = load_oracle(cli.oracle_dir)
    apply_snapshot_shims()
    if "kvConfig" in job:
        with contextlib.redirect_stdout(io.StringIO()):  # the oracle's logger prints padding warnings
            out = kv_config(o, job["kvConfig"])
        json.dump(out, sys.stdout)
        print()
        return
    o.EVER_CACHED.clear()
    o.install_free_order(free_order)
    w = job["workload"]
    if "requests" in w:
        bs = int(w["blockSizeTokens"])  # a block-hash trace keeps its own block size
        trace = oracle_block_trace(w)
    else:
        trace = oracle_trace(w, int(job.get("replicas", 1)), float(job.get("staggerS", 0)))
    args = engine_args(p, bs, capacity, free_order)
    eng = o.Engine(args, o.build_calls(trace))
    eng.ideal_group = 0
    if job.get("mla"):
        use_mla_group(o, eng, args, int(job["mla"]["headSize"]))
    if p.get("kvLayout"):
        use_hybrid_groups(o, eng, args, p["kvLayout"])
    if not cli.mirror_as_is:
        apply_corrections(o, eng)
    observe(o, eng, cli.steps)
    eng.run()
    out = eng.report()
    out["kv_cache_managers"] = [type(m).__name__ for m in eng.kvm.coordinator.single_type_managers]
    out["kv_cache_specs"] = [type(g.kv_cache_spec).__name__ for g in eng.kvm.coordinator.kv_cache_config.kv_cache_groups]
    calls = [c for s in eng.sessions for c in s["calls"] if c.req is not None]
    prompt = sum(len(c.prompt) for c in calls)
    ideal_adm = sum(eng.seen[(c.sess, c.idx)]["ideal_at_admission"] for c in calls)
    out["ideal_at_admission_hit_tokens"] = ideal_adm
    out["ideal_at_admission_hit_rate"] = ideal_adm / prompt if prompt else 0.0
    out["recomputed_prefill_tokens_at_admission_ideal"] = out["prefill_tokens_computed"] - (prompt - ideal_adm)
    out["t_prefill_s"] = eng.st["t_prefill"]
    out["t_decode_s"] = eng.st["t_decode"]
    out["t_fixed_s"] = eng.st["t_fixed"]
    out["decode_context_tokens"] = eng.st["decode_ctx"]
    out["decode_steps"] = eng.st["decode_steps"]
    out["corrections"] = [] if cli.mirror_as_is else CORRECTIONS
    out["snapshot_shims"] = SNAPSHOT_SHIMS
    if cli.per_call:
        out["per_call"] = [{
            "session": eng.sessions[c.sess]["id"], "call": c.idx, "prompt": len(c.prompt),
            "admit_hit": c.admit_hit, "ideal_hit_at_arrival": c.ideal_hit,
            "ideal_hit_at_admission": eng.seen[(c.sess, c.idx)]["ideal_at_admission"],
            "prefill_computed": eng.seen[(c.sess, c.idx)]["prefill_computed"],
            "preemptions": c.req.num_preemptions, "first_sched_s": c.first_sched, "finish_s": c.finish}
            for c in calls]
    if cli.steps:
        eng.step_log.close()
    json.dump(out, sys.stdout)
    print()


# The oracle's vLLM snapshot added an argument to two calls (a research `cook_flag`, an
# `enable_hybrid_free_queue` switch) and missed two callees, so vLLM's MambaManager and its
# KVCacheCoordinatorNoPrefixCache cannot run there as shipped. The harness adapts the
# signatures only, passing the values that keep vLLM's own path (cook_flag 0, no hybrid free
# queue); no decision changes. Upstream vLLM has neither argument.
SNAPSHOT_SHIMS: list[str] = [
    "MambaManager.allocate_new_blocks: accepts the snapshot coordinator's cook_flag (always 0) and drops it",
    "KVCacheCoordinatorNoPrefixCache.__init__: passes enable_hybrid_free_queue=False to the base class, "
    "which the snapshot's subclass omits",
]


def apply_snapshot_shims() -> None:
    from vllm.v1.core import kv_cache_coordinator as kcc
    from vllm.v1.core.single_type_kv_cache_manager import MambaManager
    real_allocate = MambaManager.allocate_new_blocks

    def allocate_new_blocks(self, request_id, num_tokens, cook_flag=0):
        assert cook_flag == 0, "the oracle never sets cook_flag"
        return real_allocate(self, request_id, num_tokens)

    MambaManager.allocate_new_blocks = allocate_new_blocks

    def no_prefix_cache_init(self, kv_cache_config, max_model_len, use_eagle, enable_kv_cache_events,
                             dcp_world_size, pcp_world_size, hash_block_size):
        kcc.KVCacheCoordinator.__init__(self, kv_cache_config, max_model_len, use_eagle, False, False,
                                        enable_kv_cache_events, dcp_world_size=dcp_world_size,
                                        pcp_world_size=pcp_world_size, hash_block_size=hash_block_size)
        self.num_single_type_manager = len(self.single_type_managers)

    kcc.KVCacheCoordinatorNoPrefixCache.__init__ = no_prefix_cache_init


# Where the oracle's hand-written scheduler mirror departs from vLLM's scheduler.py,
# the harness corrects it (each entry: what, and vLLM's lines). Empty while none is known.
CORRECTIONS: list[str] = []


def apply_corrections(o, eng) -> None:
    """Corrections of the oracle's scheduler mirror (none of vLLM's own files is touched)."""


def observe(o, eng, steps_path) -> None:
    """Instruments the engine without changing a decision: the ideal at the moment of
    each lookup, prefill per call, decode context, and (optionally) a step log."""
    # Call has __slots__: what the harness learns per call lives here, by (session, call).
    eng.seen = {(c.sess, c.idx): {"ideal_at_admission": 0, "prefill_computed": 0, "lookup_mark": 0}
                for s in eng.sessions for c in s["calls"]}
    eng.st["decode_ctx"] = 0
    eng.st["decode_steps"] = 0
    eng.step_log = open(steps_path, "w") if steps_path else None
    lookups: list = []
    preempted: list = []
    # When each block hash first entered the cache (vLLM's own insert, observed): the ideal
    # of a lookup is the run of leading blocks cached before it, computed only for the
    # lookup that admits a request (a blocked head is looked up again every step).
    first_cached: dict = {}
    real_insert = o._bp.BlockHashToBlockMap.insert

    def insert(self, key, block):
        if key not in first_cached:
            first_cached[key] = len(first_cached)
        real_insert(self, key, block)

    o._bp.BlockHashToBlockMap.insert = insert
    real_lookup = eng.kvm.get_computed_blocks

    def get_computed_blocks(req):
        blocks, hit = real_lookup(req)
        c = eng.calls_by_rid[req.request_id]
        eng.seen[(c.sess, c.idx)]["lookup_mark"] = len(first_cached)
        lookups.append((req.request_id, hit))
        return blocks, hit

    def ideal_at(req, mark) -> int:
        n = 0
        for h in req.block_hashes[: (req.num_tokens - 1) // eng.bs]:
            seq = first_cached.get(o.kcu.make_block_hash_with_group_id(h, eng.ideal_group))
            if seq is None or seq >= mark:
                break
            n += 1
        return n * eng.bs

    eng.kvm.get_computed_blocks = get_computed_blocks
    real_preempt = eng._preempt_last

    def preempt_last():
        v = real_preempt()
        preempted.append(v.request_id)
        return v

    eng._preempt_last = preempt_last
    real_schedule = eng.schedule_step

    def schedule_step():
        lookups.clear()
        preempted.clear()
        waiting_before = {r.request_id for r in eng.waiting}
        sched = real_schedule()
        admitted = []
        for r, n in sched:
            if r.request_id in waiting_before:
                c = eng.calls_by_rid[r.request_id]
                if r.num_preemptions == 0:
                    seen = eng.seen[(c.sess, c.idx)]
                    seen["ideal_at_admission"] = ideal_at(r, seen["lookup_mark"])
                admitted.append(r.request_id)
        eng._last = (list(lookups), list(preempted), admitted)
        return sched

    eng.schedule_step = schedule_step
    real_execute = eng.execute

    def execute(sched):
        t0 = eng.now
        entries = []
        for r, n in sched:
            is_decode = (n == 1 and r.num_output_tokens > 0
                         and r.num_computed_tokens == r.num_tokens - 1)
            if is_decode:
                eng.st["decode_ctx"] += r.num_computed_tokens
            else:
                c = eng.calls_by_rid[r.request_id]
                eng.seen[(c.sess, c.idx)]["prefill_computed"] += n
            entries.append([r.request_id, n, 1 if is_decode else 0])
        if any(e[2] for e in entries):
            eng.st["decode_steps"] += 1
        real_execute(sched)
        if eng.step_log:
            lookups_, preempted_, admitted = eng._last
            eng.step_log.write(json.dumps({
                "step": eng.st["steps"] - 1, "t": t0, "sched": entries,
                "preempted": preempted_, "admitted": admitted,
                "lookups": [[rid, hit] for rid, hit in lookups_]}) + "\n")

    eng.execute = execute


if __name__ == "__main__":
    main()
