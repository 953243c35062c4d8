#!/usr/bin/env python3
"""Writes the SYNTHETIC run records the report and compare tests read.

Every number here is made up (shaped like an H100 run so the report and plots
have something realistic to draw); none was measured. The records say so with
"synthetic_fixture": true, and the report prints that warning at the top.

    python3 tests/data/make_synthetic_fixtures.py build/rec/memlab   # rewrites tests/data/synthetic_*.json

Each experiment entry carries the declaration that memlab (`memlab list --json`) prints,
as a record written by that build would; ctest's record.schema test fails when a fixture's
declarations differ from the build's, so the fixtures cannot drift from the experiments.
"""
import json
import math
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20261122)

D2D = 2950.0        # GB/s, the made-up cudaMemcpy D2D ceiling
FP32 = 51.2         # TFLOP/s, the made-up FP32 peak
SETASIDE = 39321600  # persisting L2 max (bytes)


def noise():
    return round(rng.uniform(0.002, 0.012), 4)


def row(exp, variant, params, ms, nbytes=0.0, flops=0.0, verified="passed", peer=None, peer_ms=None,
        ceiling=False, predicted=None, extra=None, skipped=None, error=None):
    n = noise()
    r = {"experiment": exp, "variant": variant, "params": params,
         "median_ms": ms, "noise": n, "min_ms": ms * (1 - 2 * n) if ms else None,
         "max_ms": ms * (1 + 3 * n) if ms else None, "samples": rng.randint(10, 400),
         "bytes": nbytes, "flops": flops,
         "gbps": nbytes / (ms * 1e6) if (ms and nbytes) else None,
         "tflops": flops / (ms * 1e9) if (ms and flops) else None,
         "verified": verified,
         "verification": {"error": 0, "tolerance": 0, "metric": "mismatches", "detail": ""},
         "peer": peer, "peer_median_ms": peer_ms, "ratio_to_peer": None, "ratio_to_ceiling": None,
         "predicted": predicted, "extra": extra or {}, "skipped": skipped, "error": error, "cold": True,
         "repro": "memlab run %s -a %s" % (exp, ",".join("%s=%s" % kv for kv in params.items()))}
    if peer and peer_ms and ms:
        r["ratio_to_peer"] = peer_ms / ms
    if ceiling and r["gbps"]:
        r["peer"] = "cudaMemcpy D2D"
        r["ratio_to_peer"] = r["ratio_to_ceiling"] = r["gbps"] / D2D
    if skipped or error:
        for k in ("median_ms", "min_ms", "max_ms", "gbps", "tflops", "noise"):
            r[k] = None
        r["samples"] = 0
        r["verified"] = "not_verified"
    return r


def complete():
    rows, exps = [], []

    def exp(i, d, seed, status="completed"):
        exps.append({"id": i, "description": d, "seed_ref": seed, "status": status})

    exp("ceilings.d2d_copy", "measured bandwidth ceiling: cudaMemcpy device-to-device", "")
    nb = 2 * 512 << 20
    rows.append(row("ceilings.d2d_copy", "", {"mib": 512}, nb / (D2D * 1e6), nb,
                    predicted={"gbps": 3352.3, "model": "theoretical DRAM bandwidth"}))
    fl = 2.0 * 132 * 2048 * 4096
    exp("ceilings.fp32_fma", "measured arithmetic ceiling: FP32 FMA rate", "")
    rows.append(row("ceilings.fp32_fma", "", {}, fl / (FP32 * 1e9), 0, fl, verified="not_verified",
                    extra={"blocks": 528, "threads": 512, "iterations": 4096}))

    exp("coalescing.offset", "offsetCopy: a copy shifted by `offset` floats", "000 §9.2.1.3")
    n = 1 << 27
    for off in range(0, 33):
        sectors = 4 if off % 8 == 0 else 5
        g = (2890.0 if sectors == 4 else 2745.0) * rng.uniform(0.99, 1.01)
        nbytes = 2 * 4 * n
        rows.append(row("coalescing.offset", "", {"offset": off, "elements": n}, nbytes / (g * 1e6),
                        nbytes, ceiling=True,
                        predicted={"sectors_per_request": sectors, "gbps": D2D * 4 / sectors}))
    exp("coalescing.stride", "strideCopy: every stride-th float", "000 §9.2.1.4")
    for s in range(1, 33):
        eff = D2D / min(s, 8) * (0.97 if s < 8 else 0.82)
        g = eff * rng.uniform(0.98, 1.02)
        nbytes = 2 * 4 * (n // 4)
        rows.append(row("coalescing.stride", "", {"stride": s, "elements": n // 4}, nbytes / (g * 1e6), nbytes,
                        ceiling=True, predicted={"sectors_per_request": min(s, 8) * 4, "gbps": D2D / min(s, 8)}))

    exp("gemm.seed_thread_tile", "Seed 001: TILE_SIZE x TILE_SIZE outputs per thread", "001 §1-2")
    m = 2048
    p100 = {1: 3.282611, 2: 2.271091, 4: 2.107053, 8: 2.077536, 16: 7.368474, 32: 25.815271, 64: 83.601498}
    for t, ms, regs, spill in [(1, 1.9, 32, 0), (2, 0.85, 40, 0), (4, 0.61, 72, 0), (8, 0.66, 168, 0),
                               (16, 3.1, 255, 720), (32, 14.2, 255, 3900), (64, 61.0, 255, 16200)]:
        rows.append(row("gemm.seed_thread_tile", "", {"tile": t, "n": m}, ms,
                        3 * 4 * m * m, 2.0 * m ** 3, peer="cublas", peer_ms=0.36,
                        extra={"registers": regs, "local_bytes": spill, "seed_p100_ms": p100[t]}))
    exp("gemm.seed_smem_tile", "Seed 001/004: shared-memory tiles", "001 §3, 004")
    for t, ms in [(1, 31.0, ), (2, 5.2), (4, 1.4), (8, 0.98), (16, 0.84), (32, 0.88)]:
        rows.append(row("gemm.seed_smem_tile", "", {"tile": t, "shape": "1024"}, ms,
                        3 * 4 * m * m, 2.0 * m ** 3, peer="cublas", peer_ms=0.36, extra={"seed_p100_ms": {1: 62.395489, 2: 10.850624, 4: 2.765997, 8: 2.107232, 16: 1.849939, 32: 1.928793}[t]}))
        rows.append(row("gemm.seed_smem_tile", "", {"tile": t, "shape": "1000x1100x900"}, ms * 0.95,
                        3 * 4 * m * m, 2.0 * m ** 3, peer="cublas", peer_ms=0.36))
    exp("gemm.guide_ab", "The Guide's C = AB with a thin A (M x 32) and B (32 x N)", "000 §9.2.3.2")
    for v, g in [("simple", 1490.0), ("coalesced", 1710.0), ("shared_ab", 2380.0)]:
        nbytes = 4 * (8192 * 32 * 2 + 8192 * 8192)
        rows.append(row("gemm.guide_ab", v, {"m": 8192}, nbytes / (g * 1e6), nbytes,
                        2.0 * 8192 * 8192 * 32, extra={"guide_v100_gbps": 0}))
    exp("gemm.guide_aat", "The Guide's C = A A^T", "000 §9.2.3.3")
    for v, g in [("simple", 210.0), ("coalesced", 1650.0), ("padded", 2310.0)]:
        nbytes = 4 * (8192 * 32 + 8192 * 8192)
        rows.append(row("gemm.guide_aat", v, {"m": 8192}, nbytes / (g * 1e6), nbytes, 2.0 * 8192 * 8192 * 32))

    exp("gemm.ladder", "FP32 GEMM ladder against cuBLAS", "001, 004, 000 §9.2.3", status="failed")
    ladder = [("naive", 0.018), ("coalesced", 0.11), ("smem_tiled", 0.16), ("blocktile_1d", 0.37),
              ("blocktile_2d", 0.62), ("vectorized", 0.71), ("smem_padded", 0.78), ("warp_tiled", 0.89),
              ("cp_async_128x128", 0.965)]
    shapes = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
              (4097, 4097, 4097), (3000, 5000, 2000)]
    for (mm, nn, kk) in shapes:
        flops = 2.0 * mm * nn * kk
        eff = 0.93 if mm >= 4096 else (0.78 if mm == 2048 else 0.55)
        cub = flops / (FP32 * eff * 1e9)
        for v, frac in ladder:
            f = frac * (0.9 if (mm % 128) else 1.0) * rng.uniform(0.97, 1.02)
            ms = cub / f
            shape = str(mm) if mm == nn == kk else "%dx%dx%d" % (mm, nn, kk)
            r = row("gemm.ladder", v, {"shape": shape}, ms, 4.0 * (mm * kk + kk * nn + 2 * mm * nn),
                    flops, peer="cublas", peer_ms=cub, extra={"registers": 32 + 16 * ladder.index((v, frac))})
            if v == "cp_async_128x128" and mm == 4097:
                r["verified"] = "failed"
                r["verification"] = {"error": 0.0213, "tolerance": 0.0041, "metric": "max_rel_error",
                                     "detail": "first mismatch at (4096, 17)"}
            rows.append(r)

    exp("transfer.bandwidth", "Host-device copies by size and host memory kind", "000 §9.1.1")
    for mem, peak in [("pageable", 14.5), ("pinned", 53.0), ("registered", 52.5), ("write_combined", 52.0)]:
        for d in ["h2d", "d2h", "both"]:
            link = 63.0 * (2 if d == "both" else 1)
            pk = peak * (0.93 if d == "d2h" else 1.0) * (1.6 if d == "both" else 1.0)
            for e in range(12, 31, 2):
                size = 1 << e
                lat = (9e-3 if mem == "pageable" else 4e-3)
                ms = lat + size / (pk * 1e6)
                nbytes = size * (2 if d == "both" else 1)
                rows.append(row("transfer.bandwidth", mem, {"bytes": size, "direction": d},
                                ms, nbytes, verified="passed", predicted={"link_gbps": link}))
    exp("transfer.overlap", "Staged concurrent copy and execute over nStreams", "000 §9.1.3")
    timeline_done = False
    for variant, ratio in [(v, q) for v in ("guide_staged", "staged_transform") for q in (0.25, 1.0, 4.0)]:
        tt = 8.0
        te = tt * ratio
        for ns in [1, 2, 4, 8, 16]:
            guide = te + tt / ns if te >= tt else tt + te / ns
            flow = max(tt / 2, te) + (tt + te - max(tt / 2, te)) / ns
            ms = flow * rng.uniform(1.01, 1.09) * (1.0 if variant == "guide_staged" else 1.04)
            extra = {"stages_alone": {"tT_ms": tt, "tE_ms": te}, "async_engine_count": 3}
            if variant == "guide_staged" and ns == 4 and ratio == 1.0 and not timeline_done:
                timeline_done = True
                tl = []
                chunk_t, chunk_e = tt / 2 / ns, te / ns
                t0 = 0.0
                for s in range(ns):
                    a = s * chunk_t
                    tl.append({"stream": s, "op": "h2d", "ready_ms": 0.0, "start_ms": a, "end_ms": a + chunk_t})
                    b = max(a + chunk_t, s * chunk_e + chunk_t)
                    tl.append({"stream": s, "op": "kernel", "ready_ms": a + chunk_t, "start_ms": b, "end_ms": b + chunk_e})
                    c = b + chunk_e
                    tl.append({"stream": s, "op": "d2h", "ready_ms": c, "start_ms": c, "end_ms": c + chunk_t})
                extra["timeline"] = tl
            pred = {"ms": flow, "guide_ms": guide, "sequential_ms": te + tt} if variant == "guide_staged" else {"ms": flow}
            rows.append(row("transfer.overlap", variant, {"bytes": 1 << 27, "te_over_tt": ratio, "streams": ns}, ms,
                            2 << 27, peer="sequential (default stream)", peer_ms=te + tt, predicted=pred, extra=extra))
    exp("transfer.uva", "Pointer attributes and peer-to-peer copies", "000 §9.1.5")
    rows.append(row("transfer.uva", "peer_access", {"bytes": 1 << 28}, None, skipped="needs 2 or more GPUs; this machine has 1"))
    rows.append(row("transfer.uva", "peer_no_access", {"bytes": 1 << 28}, None, skipped="needs 2 or more GPUs; this machine has 1"))

    exp("smem.bank_stride", "A warp reading shared memory with stride s", "003")
    for s in range(1, 33):
        deg = math.gcd(s, 32)
        rows.append(row("smem.bank_stride", "", {"elem_bits": 32, "stride": s},
                        0.0021 * deg * rng.uniform(0.97, 1.05), verified="passed",
                        predicted={"wavefronts": deg, "conflict_degree": deg, "gcd_rule_degree": deg}))

    exp("reduce.sum", "Sum of floats: the reduction ladder against CUB", "003")
    for v, frac in [("interleaved", 0.21), ("sequential", 0.33), ("first_add", 0.61), ("warp_shuffle", 0.79),
                    ("vectorized", 0.93), ("single_pass", 1.02)]:
        for e in [20, 24, 28]:
            nbytes = 4.0 * (1 << e)
            cubms = nbytes / (2750e6 if e == 28 else 1900e6)
            rows.append(row("reduce.sum", v, {"dtype": "float", "elements": 1 << e}, cubms / frac, nbytes,
                            float(1 << e), peer="cub", peer_ms=cubms))
    exp("l2.persist", "The Guide's sliding-window benchmark", "000 §9.2.2")
    for pol, fn in [("none", lambda f: 1.0), ("hit_ratio_1", lambda f: 1.45 if f <= 1 else 0.92),
                    ("scaled_ratio", lambda f: 1.45 if f <= 1 else 1.0 + 0.45 / f)]:
        for f in [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]:
            g = 1800.0 * fn(f) * rng.uniform(0.98, 1.02)
            nbytes = 1.5 * (1 << 30)
            rows.append(row("l2.persist", pol, {"persist_fraction": f, "streaming_mib": 1024}, nbytes / (g * 1e6), nbytes,
                            extra={"hit_ratio": 1.0 if pol == "hit_ratio_1" else round(min(1.0, 1 / f), 3)}))
    exp("async.copy_compute", "Copy-and-compute through shared memory", "002")
    for v in ["plain", "cg_memcpy_async", "cuda_barrier", "pipeline_1stage", "pipeline_3stage", "bulk_copy"]:
        for c in [0, 16, 64, 256]:
            base = 1.6 + 0.05 * c
            speed = {"plain": 1.0, "cg_memcpy_async": 1.05, "cuda_barrier": 1.08, "pipeline_1stage": 1.06,
                     "pipeline_3stage": 1.4 if 4 < c < 128 else 1.1,
                     "bulk_copy": 1.45 if 4 < c < 128 else 1.12}[v]
            rows.append(row("async.copy_compute", v, {"aligned": 1, "blocks_per_sm": 2, "element_bytes": 16,
                                                      "fmas": c, "mib": 128}, base / speed,
                            2.0 * (1 << 30), 2.0 * c * (1 << 28), extra={"stages": 3 if v == "pipeline_3stage" else 1}))

    return {"format_version": 2, "synthetic_fixture": True,
            "note": "SYNTHETIC TEST FIXTURE: made-up numbers shaped like an H100 run; not a measurement",
            "memlab": {"version": "0.1.0", "git_revision": "synthetic000"},
            "command_line": "memlab run all -o results/synthetic (synthetic fixture)",
            "started": "2026-11-22T01:00:00Z", "finished": "2026-11-22T01:17:42Z",
            "device": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "sm_count": 132, "l2_bytes": 52428800,
                       "persisting_l2_max_bytes": SETASIDE, "smem_per_sm_bytes": 233472,
                       "smem_per_block_optin_bytes": 232448, "regs_per_sm": 65536, "async_engine_count": 3,
                       "can_map_host_memory": True, "unified_addressing": True, "integrated": False,
                       "dram_peak_gbps": 3352.3},
            "timing": {"cold": True, "max_noise": 0.01},
            "ceilings": {"d2d_copy_gbps": D2D, "fp32_peak_tflops": FP32},
            "experiments": exps, "rows": rows}


def partial():
    """An interrupted run: no finish time, aborted experiments, rows without timing or verification,
    an error row, rows of an experiment missing from the list and a row without an experiment id.
    (Rows of the wrong shape are the reader's tests: tests/cpu/test_report.cpp.)"""
    full = complete()
    keep = {"coalescing.offset", "gemm.seed_thread_tile"}
    rows = [r for r in full["rows"] if r["experiment"] in keep][:12]
    del rows[0]["median_ms"]                 # a row without its timing
    del rows[1]["verified"]                  # ... without a verification status
    rows.append({"experiment": "transfer.overlap", "variant": "staged", "params": {}})   # bare row
    rows.append({"experiment": "", "variant": "orphan", "params": {}, "median_ms": 1.0})  # no experiment id
    rows.append({"experiment": "gemm.seed_thread_tile", "variant": "", "params": {"tile": 64},
                 "median_ms": None, "error": "cudaErrorLaunchOutOfResources: too many resources requested"})
    rows.append({"experiment": "smem.unlisted", "variant": "", "params": {"stride": 1}, "median_ms": 0.5,
                 "verified": "passed"})  # an experiment the record does not list
    return {"format_version": 2, "synthetic_fixture": True,
            "note": "SYNTHETIC TEST FIXTURE: an interrupted run with malformed rows",
            "memlab": {"version": "0.1.0"}, "command_line": "memlab run coalescing gemm transfer",
            "started": "2026-11-22T01:00:00Z", "finished": None,
            "aborted": "cudaErrorIllegalAddress: an illegal memory access was encountered (sticky; the run stopped)",
            "device": {"name": "NVIDIA H100 80GB HBM3"},
            "ceilings": {"d2d_copy_gbps": None, "fp32_peak_tflops": None},
            "experiments": [
                {"id": "coalescing.offset", "status": "completed"},
                {"id": "gemm.seed_thread_tile", "status": "aborted"},
                {"id": "transfer.overlap", "status": "aborted"},
                {"id": "l2.persist", "status": "aborted"}],
            "rows": rows}


def declare(rec, decls):
    """Each experiment entry gets its declaration, as the runner writes it."""
    for e in rec["experiments"]:
        d = decls[e["id"]]
        for k in ("description", "seed_ref", "axes", "metrics", "headline", "seed_figures", "prose", "plots", "ceiling"):
            e[k] = d[k]
        e.setdefault("points", sum(1 for r in rec["rows"] if r.get("experiment") == e["id"]))
        e.setdefault("status", "completed")
    return rec


def main():
    if len(sys.argv) != 2:
        print("usage: make_synthetic_fixtures.py MEMLAB_EXE", file=sys.stderr)
        return 2
    out = subprocess.run([sys.argv[1], "list", "--json"], check=True, capture_output=True, text=True).stdout
    decls = {d["id"]: d for d in json.loads(out)}
    for name, rec in [("synthetic_run_h100.json", declare(complete(), decls)),
                      ("synthetic_run_partial.json", declare(partial(), decls))]:
        with open(os.path.join(HERE, name), "w") as f:
            json.dump(rec, f, indent=None, separators=(",", ":"))
            f.write("\n")
        print("wrote", name)


if __name__ == "__main__":
    sys.exit(main())
