#!/usr/bin/env python3
"""Runs a workload through the SGLang radix-cache oracle and prints what the
simulator's sglang-lru engine reports, so the two can be compared figure by figure.

The oracle (SGLang's own RadixCache, KV allocators and admission policy, driven by a
hand-written mirror of SGLang's non-overlap scheduler loop) is NOT part of this
repository: its folder is given with --oracle-dir. This script only imports it,
replays the workload the way the simulator does (N staggered copies of the
workload's sessions, the shared prefix as the first tokens of every copy), and
observes it without changing a decision:

* prefill tokens per call (every extend chunk, re-prefills after a retraction too);
* the step-time parts (prefill, decode, fixed) and the decode context;
* --steps FILE writes one JSON line per engine step (prefill or decode, which
  requests with how many tokens, which were retracted, tokens evicted), the shape of
  the simulator's RadixStepLog, so test/oracle/radixStepDiff.ts can find the first
  step where the two part.

Input: one JSON object on stdin
  {"workload": <workload JSON as `simulate --emit-workload` writes>,
   "replicas": N, "staggerS": S, "params": <EngineParams subset>}
Output: one JSON object on stdout.
Python 3.10+, no packages.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import sys


def load_oracle(oracle_dir: str):
    path = os.path.join(oracle_dir, "oracle.py")
    if not os.path.isfile(path):
        raise SystemExit(f"no oracle.py in {oracle_dir}")
    spec = importlib.util.spec_from_file_location("sglang_oracle", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sglang_oracle"] = mod
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(mod)
    return mod


def oracle_trace(workload: dict, replicas: int, stagger_s: float) -> dict:
    """N copies of every workload session, copy r starting r * stagger later (the
    simulator's fixed stagger); outputs of 0 tokens become 1 (a token is always sampled)."""
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
    times: equal hash ids after equal prefixes become equal token blocks (the simulator
    interns each block by its parent and hash); prompt tokens past the hashed blocks
    are fresh."""
    bs = workload["blockSizeTokens"]
    interned: dict = {}
    fresh = [2 * 10**12]
    sessions = []
    for q in workload["requests"]:
        n = q["promptTokens"]
        toks, parent = [], 0
        for h in q["hashes"][: n // bs]:
            key = interned.setdefault((parent, h), len(interned) + 1)
            parent = key
            toks.extend(range(10**12 + key * bs, 10**12 + key * bs + bs))
        rest = n - len(toks)
        toks.extend(range(fresh[0], fresh[0] + rest))
        fresh[0] += rest
        sessions.append({"id": q["id"], "start_s": float(q["arrivalS"]),
                         "calls": [{"tokens": toks, "output_tokens": max(1, q["outputTokens"])}]})
    return {"shared_prefix_tokens": 0, "sessions": sessions}


def oracle_args(o, p: dict):
    """The oracle's command line for the simulator's parameters: the pool in tokens,
    SGLang's page size, chunked prefill = the step's token budget, running requests =
    max_num_seqs, context length = max_model_len, the same step costs."""
    return o.parse_args([
        "--capacity-tokens", str(int(p.get("capacityTokens", 255_008))),
        "--page-size", str(int(p.get("sglangPageSizeTokens", 1))),
        "--chunked-prefill-size", str(int(p.get("maxNumBatchedTokens", 8192))),
        "--max-running-requests", str(int(p.get("maxNumSeqs", 1024))),
        "--context-len", str(int(p.get("maxModelLenTokens", 1_000_000))),
        "--step-fixed-ms", repr(float(p.get("stepFixedMs", 23.0))),
        "--prefill-us-per-token", repr(float(p.get("prefillUsPerToken", 133.0))),
        "--kv-read-ns-per-token", repr(float(p.get("kvReadNsPerToken", 92.0))),
        "--decode-us-per-seq", repr(float(p.get("decodeUsPerSeq", 0.0))),
        "--per-call",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle-dir", required=True)
    ap.add_argument("--steps", help="write the per-step schedule here (JSON lines)")
    cli = ap.parse_args()
    job = json.load(sys.stdin)
    p = job.get("params", {})
    o = load_oracle(cli.oracle_dir)
    w = job["workload"]
    trace = oracle_block_trace(w) if "requests" in w else oracle_trace(w, int(job.get("replicas", 1)), float(job.get("staggerS", 0)))
    eng = o.Engine(oracle_args(o, p), o.build_calls(trace))
    prefill = observe(o, eng, cli.steps)
    crash = None
    try:
        eng.run()
    except o.OracleCrash as e:  # where SGLang itself raises
        crash = str(e)
    out = eng.report()
    if crash:
        out["crash"] = crash
    st = eng.st
    out["t_prefill_s"] = st["t_prefill"]
    out["t_decode_s"] = st["t_decode"]
    out["t_fixed_s"] = st["t_fixed"]
    out["decode_context_tokens"] = st["decode_ctx"]
    for c in out.get("per_call", []):
        c["prefill_computed"] = prefill.get((c["session"], c["call"]), 0)
    if eng.step_log:
        eng.step_log.close()
    json.dump(out, sys.stdout)
    print()


def observe(o, eng, steps_path) -> dict:
    """Instruments the engine without changing a decision: prefill per call (by
    session id and call index), the decode context, and (optionally) a step log."""
    prefill: dict = {}
    eng.st["decode_ctx"] = 0
    eng.step_log = open(steps_path, "w") if steps_path else None
    ids = {id(c): (s["id"], c.idx) for s in eng.sessions for c in s["calls"]}
    pending = {"retracted": [], "evicted": 0}

    real_evict = eng.evict_from_tree_cache

    def evict_from_tree_cache(num_tokens):
        before = eng.st["evicted_tokens"]
        real_evict(num_tokens)
        pending["evicted"] += eng.st["evicted_tokens"] - before

    eng.evict_from_tree_cache = evict_from_tree_cache
    real_release = eng.release_req

    def release_req(req, remaining):
        pending["retracted"].append(req.rid)
        real_release(req, remaining)

    eng.release_req = release_req
    real_run_batch = eng.run_batch

    def run_batch(batch):
        t0 = eng.now
        extend = batch.forward_mode == o.EXTEND
        entries = []
        for r in batch.reqs:
            if extend:
                n = r.extend_range.length
                key = ids[id(r.call)]
                prefill[key] = prefill.get(key, 0) + n
            else:
                n = 1
                eng.st["decode_ctx"] += r.kv_committed_len - 1
            entries.append([r.rid, n])
        step = eng.st["steps"]
        real_run_batch(batch)
        if eng.step_log:
            eng.step_log.write(json.dumps({
                "step": step, "t": t0, "mode": "prefill" if extend else "decode", "reqs": entries,
                "retracted": pending["retracted"], "evicted": pending["evicted"]}) + "\n")
        pending["retracted"] = []
        pending["evicted"] = 0

    eng.run_batch = run_batch
    return prefill


if __name__ == "__main__":
    main()
