#!/usr/bin/env python3
"""Builds docs/seed-claims.md from what scripts/gpu/seed_claims.sh collected on the GPU machine.

Usage: seed_claims_table.py CLAIMS_DIR > seed-claims.md

CLAIMS_DIR holds Nsight Compute CSV exports (pmpp.csv, ladder_ncu.csv, potential_<variant>.csv)
and the timed ladder (ladder.md). Beside each measured number it prints the book's claim and,
for the PMPP kernels, what a per-access model of the kernel's code predicts (the book's
"requests" are lines touched, which modern counters report as sectors, not requests).
"""
import csv
import io
import math
import re
import sys
from pathlib import Path

# --------------------------------------------------------------------------------------------
# Nsight Compute CSV


def read_ncu_csv(path):
    """Rows of an `ncu --csv --page raw` export as dicts (units row and ==PROF== lines skipped)."""
    if not path.exists():
        return []
    lines = [l for l in path.read_text(errors="replace").splitlines()
             if l.startswith('"')]
    if not lines:
        return []
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    rows = []
    for row in reader:
        if not row.get("ID", "").strip():
            continue  # the units row
        rows.append(row)
    return rows


def number(text):
    if text is None:
        return None
    text = text.strip().replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def metric(row, name):
    return number(row.get(name))


def opcode_counts(cell):
    """Per-opcode instance values of sass__inst_executed_per_opcode, as {opcode: count}."""
    counts = {}
    if not cell:
        return counts
    for name, value in re.findall(r"([A-Z][A-Z0-9_.]*)\W{1,3}([0-9][0-9,]*(?:\.[0-9]+)?)", cell):
        v = number(value)
        if v is not None:
            counts[name] = counts.get(name, 0.0) + v
    return counts


def block_threads(row):
    text = row.get("Block Size", "")
    m = re.findall(r"\d+", text)
    if not m:
        return None
    product = 1
    for part in m:
        product *= int(part)
    return product


# --------------------------------------------------------------------------------------------
# Model of PMPP Figs. 10.6 / 10.9 / 10.11 (single block, N/2 threads, float input)


def model_accesses(kernel, n):
    """Warp-level global accesses of the kernel's code: list of (op, [element indices])."""
    threads = n // 2
    warps = max(1, (threads + 31) // 32)
    accesses = []

    def warp_tids(w):
        return range(w * 32, min((w + 1) * 32, threads))

    if kernel == "simple":
        stride = 1
        while stride <= threads:
            for w in range(warps):
                tids = [t for t in warp_tids(w) if t % stride == 0]
                if tids:
                    a = [2 * t for t in tids]
                    accesses += [("ld", a), ("ld", [i + stride for i in a]), ("st", a)]
            stride *= 2
    elif kernel == "convergent":
        stride = threads
        while stride >= 1:
            for w in range(warps):
                tids = [t for t in warp_tids(w) if t < stride]
                if tids:
                    accesses += [("ld", tids), ("ld", [t + stride for t in tids]), ("st", tids)]
            stride //= 2
    elif kernel == "shared":
        for w in range(warps):
            tids = list(warp_tids(w))
            accesses += [("ld", tids), ("ld", [t + threads for t in tids])]
    if kernel in ("simple", "convergent"):
        accesses.append(("ld", [0]))  # *output = input[0]: thread 0 reads the root back
    accesses.append(("out", [0]))     # ... and stores it to another array
    return accesses


def model_counts(kernel, n):
    requests = lines = sectors = 0
    warp_steps = 0
    for op, idx in model_accesses(kernel, n):
        requests += 1
        lines += len({i * 4 // 128 for i in idx})
        sectors += len({i * 4 // 32 for i in idx})
    return {"requests": requests, "lines": lines, "sectors": sectors}


def model_efficiency(kernel, n):
    """The book's resource efficiency: useful additions (N-1) / (32 x warp-steps with any active
    thread), counted from the kernel's own loop."""
    threads = n // 2
    warps = max(1, (threads + 31) // 32)
    steps = 0
    if kernel == "simple":
        stride = 1
        while stride <= threads:
            steps += sum(1 for w in range(warps)
                         if any(t % stride == 0 for t in range(w * 32, min((w + 1) * 32, threads))))
            stride *= 2
    elif kernel == "convergent":
        stride = threads
        while stride >= 1:
            steps += sum(1 for w in range(warps) if w * 32 < min(stride, threads))
            stride //= 2
    return (n - 1) / (32 * steps), steps


BOOK_EFFICIENCY = {"simple": 0.35, "convergent": 0.66}
BOOK_REQUESTS = {("simple", 256): 141, ("convergent", 256): 36, ("shared", 256): 9,
                 ("simple", 2048): 1149, ("convergent", 2048): 204}
PMPP_KERNELS = {"SimpleSumReductionKernel": "simple", "ConvergentSumReductionKernel": "convergent",
                "SharedMemorySumReductionKernel": "shared"}

M_INST = "smsp__inst_executed.sum"
M_THREAD_INST = "smsp__thread_inst_executed.sum"
M_LD_REQ = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
M_ST_REQ = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
M_LD_SEC = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
M_ST_SEC = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"


def fmt(v, digits=0):
    if v is None:
        return "n/a"
    if digits == 0:
        return f"{v:.0f}"
    return f"{v:.{digits}f}"


SUMMARY = []  # (seed, claim, book, measured, counter, verdict), filled by the sections


def divergence_sentence(counts):
    simple, conv, shared = (counts.get((k, 256), (None, None)) for k in
                            ("simple", "convergent", "shared"))
    if None in (simple[0], simple[1], conv[1], shared[1]):
        return "so memory divergence shows in sectors rather than in requests."
    return (f"so the simple kernel issues {simple[0]:.0f} requests, not 141: its memory "
            f"divergence shows as sectors instead — {simple[1]:.0f} sectors against "
            f"{conv[1]:.0f} for the convergent kernel ({simple[1] / conv[1]:.1f}x) and "
            f"{shared[1]:.0f} for the shared-memory one, the book's 141 : 36 : 9 in another unit.")


def pmpp_measured(rows):
    """The ncu rows of the PMPP kernels by (short name, N); one block of N/2 threads."""
    measured = {}
    for row in rows:
        name = next((short for full, short in PMPP_KERNELS.items()
                     if full in row.get("Kernel Name", "")), None)
        threads = block_threads(row)
        if name and threads:
            measured[(name, 2 * threads)] = row
    return measured


def pmpp_efficiency(measured):
    """Resource efficiency: the book, the model of the loop and the counters, with the findings."""
    out = ["### Resource efficiency (useful additions / execution slots)\n"]
    out.append("| kernel | N | book | model of the kernel's loop | measured, whole kernel | counter |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    eff_measured = {}
    for name in ("simple", "convergent"):
        for n in (256, 2048):
            eff, steps = model_efficiency(name, n)
            row = measured.get((name, n))
            value = None
            if row is not None:
                inst, thread_inst = metric(row, M_INST), metric(row, M_THREAD_INST)
                if inst and thread_inst is not None:
                    value = thread_inst / (32.0 * inst)
            eff_measured[(name, n)] = value
            book = f"{BOOK_EFFICIENCY[name]:.0%}" if n == 256 else "—"
            out.append(f"| {name} | {n} | {book} | {eff:.1%} ({n - 1}/(32×{steps})) | "
                       f"{'n/a' if value is None else f'{value:.1%}'} | "
                       f"`{M_THREAD_INST}` / (32 × `{M_INST}`) |")
    out.append("")
    simple_eff, conv_eff = eff_measured.get(("simple", 256)), eff_measured.get(("convergent", 256))
    gap = ("" if simple_eff is None or conv_eff is None else
           f" (here {simple_eff:.1%} against {conv_eff:.1%} at N=256, where the book has 35% "
           "against 66%)")
    out.append("Two differences, both findings. (1) The book's 35% for the simple kernel comes "
               "from a formula (4·5+2+1 = 23 warp-steps) that leaves out the sixth step: at "
               "stride 32 each of the 4 warps still has one active thread, so the printed loop "
               "makes 27 warp-steps and its efficiency is 255/864 = 29.5%; the convergent "
               "kernel's 66% checks out (12 warp-steps). (2) The counter sees every instruction "
               "of the kernel — index arithmetic, the loop test, the modulo, the barriers, the "
               "final store — which every thread of a live warp executes, while the book counts "
               "only the additions; so the measured ratio is far above the model and the gap "
               f"between the kernels shrinks{gap}. The additions are a minority of the "
               "instructions; the control divergence the book describes is real but diluted.\n")
    if simple_eff is not None and conv_eff is not None:
        SUMMARY.append(("000", "resource efficiency, simple vs convergent, N=256", "35% vs 66%",
                        f"model of the code 29.5% vs 66.4%; all instructions {simple_eff:.1%} vs "
                        f"{conv_eff:.1%}", "thread_inst / (32 × inst)",
                        "book's formula drops a step; counters see every instruction"))
    return out


def pmpp_requests(measured):
    """Global memory requests and sectors: the book, the per-access model and the counters."""
    out = ["### Global memory requests\n"]
    out.append("| kernel | N | book (requests) | model: requests / 128-B lines / 32-B sectors | "
               "measured requests (ld+st) | measured sectors (ld+st) |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    exact = True
    counts = {}
    for n in (256, 2048):
        for name in ("simple", "convergent", "shared"):
            model = model_counts(name, n)
            row = measured.get((name, n))

            def pair(a, b):
                if row is None:
                    return None, "n/a"
                x, y = metric(row, a), metric(row, b)
                if x is None and y is None:
                    return None, "n/a"
                return (x or 0) + (y or 0), f"{fmt((x or 0) + (y or 0))} ({fmt(x)}+{fmt(y)})"

            requests, requests_text = pair(M_LD_REQ, M_ST_REQ)
            sectors, sectors_text = pair(M_LD_SEC, M_ST_SEC)
            exact &= requests == model["requests"] and sectors == model["sectors"]
            counts[(name, n)] = (requests, sectors)
            book = BOOK_REQUESTS.get((name, n))
            out.append(f"| {name} | {n} | {book if book is not None else '—'} | "
                       f"{model['requests']} / {model['lines']} / {model['sectors']} | "
                       f"{requests_text} | {sectors_text} |")
    for n, book_text in ((256, "141 vs 36 vs 9"), (2048, "1149 vs 204")):
        names = ("simple", "convergent", "shared") if n == 256 else ("simple", "convergent")
        got = [counts.get((k, n), (None, None)) for k in names]
        if all(r is not None and sec is not None for r, sec in got):
            SUMMARY.append(("000/002", f"global memory requests, N={n}", book_text,
                            "requests " + " vs ".join(f"{r:.0f}" for r, _ in got) + "; sectors "
                            + " vs ".join(f"{sec:.0f}" for _, sec in got) + "; 128-B lines (model) "
                            + " vs ".join(str(model_counts(k, n)["lines"]) for k in names),
                            "l1tex__t_requests / l1tex__t_sectors (global ld+st)",
                            "book's requests = lines touched; ratio reappears in sectors"))
    out.append("")
    out.append(f"Counters: `{M_LD_REQ}` + `{M_ST_REQ}` (a request is one warp-level global "
               f"instruction) and `{M_LD_SEC}` + `{M_ST_SEC}`. The model walks the printed code "
               "warp by warp and counts, per access, one request, the 128-byte lines and the "
               "32-byte sectors its active threads touch; it includes the last two accesses "
               "(thread 0 reads `input[0]` back and stores it to `*output`), which the book's "
               "141/36/1149/204 leave out (the shared-memory kernel keeps only the store, which "
               "its 9 = N/32 + 1 includes). "
               + ("The measured requests and sectors equal the model exactly in every row. "
                  if exact else "Rows where measurement and model differ are a finding to follow up. ")
               + "The book's \"requests\" are the model's 128-byte lines (141+2 = 143, 36+2 = 38, "
               "1149+2 = 1151, 204+2 = 206 with those two accesses): a Fermi-era request per line "
               "touched. On Hopper a request is one instruction however scattered its addresses, "
               + divergence_sentence(counts) + "\n")
    return out


def pmpp_section(rows):
    measured = pmpp_measured(rows)
    out = ["## PMPP ch. 10 (seeds 000, 002): simple, convergent and shared-memory kernels\n",
           "One block of N/2 threads, float input, the kernels as printed "
           "(`kernels/src/reduce/textbook.cu`), one launch each under "
           "`ncu --clock-control none`.\n"]
    return out + pmpp_efficiency(measured) + pmpp_requests(measured)


# --------------------------------------------------------------------------------------------
# PCC ladder

PCC_KERNELS = [
    ("reduceNeighbored", "neighbored", "16.73%", "25.00%", "295.6"),
    ("reduceNeighboredLess", "neighbored-less", "16.75%", "25.00%", "115.3"),
    ("reduceInterleaved", "interleaved", "77.94%", "95.52%", "—"),
    ("reduceUnrolling<2", "unroll2", "—", "—", "—"),
    ("reduceUnrolling<4", "unroll4", "—", "—", "—"),
    ("reduceUnrolling<8", "unroll8", "94.68%", "97.71%", "—"),
    ("reduceUnrollWarps8", "unroll8-warp", "98.99%", "99.40%", "—"),
    ("reduceCompleteUnrollWarps8", "unroll8-complete", "98.99%", "99.40%", "—"),
    ("reduceCompleteUnroll<", "unroll8-template", "98.99%", "99.40%", "—"),
]
M_GLD_EFF = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"
M_GST_EFF = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct"
M_WARPS = "smsp__warps_launched.sum"
M_STALL_BARRIER = "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
M_DURATION = "gpu__time_duration.sum"
M_CYCLES_PER_ISSUE = "smsp__average_warp_latency_per_inst_issued.ratio"


def parse_ladder(ladder_md):
    """{variant: (ms, step, cumulative, book_step, book_cumulative)} from dcs_reduce_bench --ladder."""
    rows = {}
    if not ladder_md.exists():
        return rows
    for line in ladder_md.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 9 and number(cells[2]) is not None:
            rows[cells[0]] = tuple(number(cells[i]) for i in (2, 4, 5, 7, 8))
    return rows


def ladder_findings(ladder):
    if not ladder or "neighbored" not in ladder or "unroll8-template" not in ladder:
        return ""
    g = lambda v, i: ladder[v][i]
    return (
        f"Findings. The ladder keeps the book's order but not its proportions: cumulative "
        f"{g('unroll8-template', 2):.2f}x against the book's {g('unroll8-template', 4):.2f}x. "
        f"Removing divergence is worth more here ({g('neighbored-less', 1):.2f}x against "
        f"{g('neighbored-less', 3):.2f}x): the neighbored kernel executes about 2.5 times the "
        "instructions of neighbored-less (the counts per warp below match the book's within a "
        "few percent) while memory is far from busy "
        f"({16 * 2**20 * 4 / (g('neighbored', 0) * 1e6):.0f} GB/s), so on this GPU the "
        "instruction count shows in the time far more than on the M2070. "
        f"Interleaving gains less ({g('interleaved', 1):.2f}x against "
        f"{g('interleaved', 3):.2f}x) because a strided warp access wastes 32-byte sectors here, "
        "not 128-byte lines. Unrolling 2/4/8 gives "
        f"{g('unroll2', 1):.2f}x/{g('unroll4', 1):.2f}x/{g('unroll8', 1):.2f}x (book "
        f"{g('unroll2', 3):.2f}/{g('unroll4', 3):.2f}/{g('unroll8', 3):.2f}): independent loads in "
        "flight remain the big lever. The warp-level steps (last warp, complete unrolling, "
        f"template) add {g('unroll8-warp', 1):.2f}x, {g('unroll8-complete', 1):.2f}x and "
        f"{g('unroll8-template', 1):.2f}x: a few percent at most, the size of the run-to-run "
        "spread (three ladders on the H200 of 2026-11-21 differed by up to 3% in a row), because once 8 loads are in flight the tree is a small "
        "part of the time. The best of the ladder "
        "reads at "
        f"{16 * 2**20 * 4 / (g('unroll8-template', 0) * 1e6):.0f} GB/s; the warp-shuffle kernel "
        "of dcs reaches the copy rate (bench/results/gpu_reduce_*.md).\n")


def ladder_section(rows, ladder_md):
    out = ["## PCC ch. 3 (seed 003): the reduction ladder\n"]
    if ladder_md.exists():
        out.append("Re-measured with CUDA events (`dcs_reduce_bench --ladder`):\n")
        out.append(ladder_md.read_text().strip().replace("### ", "#### ") + "\n")
        ladder = parse_ladder(ladder_md)
        out.append(ladder_findings(ladder))
        if "unroll8-template" in ladder:
            SUMMARY.append(("003", "speed-up ladder, neighbored → templated unroll 8",
                            f"{ladder['unroll8-template'][4]:.2f}x cumulative",
                            f"{ladder['unroll8-template'][2]:.2f}x cumulative "
                            f"({ladder['neighbored'][0]:.3f} → {ladder['unroll8-template'][0]:.4f} ms)",
                            "CUDA events", "same order, different proportions"))
    else:
        out.append("(ladder timing not collected)\n")
    out.append("#### The book's nvprof metrics, by their Nsight Compute counterparts (one launch "
               "each at 2^24, under ncu)\n")
    out.append("| kernel | gld_efficiency book / measured | gst_efficiency book / measured | "
               "inst_per_warp book / measured | stall_sync book / barrier share of stalls | "
               "barrier stalls per issue | duration under ncu (µs) |")
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    # seed_claims.sh launches the nine kernels once each, in this order; ncu lists launches in
    # order (template arguments may not show in the kernel name).
    for index, (marker, variant, gld, gst, ipw) in enumerate(PCC_KERNELS):
        row = rows[index] if len(rows) == len(PCC_KERNELS) else None
        if row is not None and marker.split("<")[0] not in row.get("Kernel Name", ""):
            row = None
        sync = {"unroll8": "58.37%", "unroll8-warp": "30.60%"}.get(variant, "—")
        if row is None:
            out.append(f"| {variant} | {gld} / n/a | {gst} / n/a | {ipw} / n/a | {sync} / n/a | "
                       "n/a | n/a |")
            continue
        inst, warps = metric(row, M_INST), metric(row, M_WARPS)
        per_warp = inst / warps if inst and warps else None
        duration = metric(row, M_DURATION)
        barrier, cycles = metric(row, M_STALL_BARRIER), metric(row, M_CYCLES_PER_ISSUE)
        share = f"{barrier / cycles:.1%}" if barrier is not None and cycles else "n/a"
        out.append(f"| {variant} | {gld} / {fmt(metric(row, M_GLD_EFF), 1)}% | {gst} / "
                   f"{fmt(metric(row, M_GST_EFF), 1)}% | {ipw} / {fmt(per_warp, 1)} | "
                   f"{sync} / {share} | {fmt(barrier, 2)} | "
                   f"{'n/a' if duration is None else f'{duration / 1e3:.1f}'} |")
    out.append("")
    out.append(f"Counters: gld/gst_efficiency → `{M_GLD_EFF}`, `{M_GST_EFF}` (bytes used per "
               f"sector moved); inst_per_warp → `{M_INST}` / `{M_WARPS}`; stall_sync → "
               f"`{M_STALL_BARRIER}` (warps waiting at a barrier per issued instruction) and its "
               f"share of all stall cycles, `{M_STALL_BARRIER}` / `{M_CYCLES_PER_ISSUE}`; "
               f"duration → `{M_DURATION}` (ncu serialises and replays, so use the event timings "
               "above for speed). The book measured int data on a Fermi Tesla M2070 (L1-cached "
               "128-byte lines); a float kernel on Hopper moves 32-byte sectors, so strided "
               "accesses waste less and the efficiencies are higher (neighbored: 25% of each "
               "sector used, against 16.7% of each line). The instruction counts per warp are a "
               "property of the code, and they agree with the book's. The fully unrolled kernels "
               "keep the book's unconditional `__syncthreads()` after steps that cannot run "
               "(blockDim 512 < 1024), so they wait at one barrier more than reduceUnrollWarps8.\n")
    return out


# --------------------------------------------------------------------------------------------
# Potential kernels (seed 004), when collected

M_FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
M_FMUL = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
M_FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
M_OPCODES = "sass__inst_executed_per_opcode"


POINTS_PER_THREAD = {"gather": 1, "coarsened": 8, "coalesced": 8}  # GatherPolicy, potential/gather.cu


def potential_section(claims):
    params = claims / "potential_params.txt"
    if not params.exists():
        return ["## PMPP ch. 18 (seed 004): potential kernels\n",
                "Not collected in this run: pass `--potential-bench PATH` to "
                "scripts/gpu/seed_claims.sh.\n"]
    values = dict(item.split("=", 1) for item in params.read_text().split() if "=" in item)
    grid, atoms = int(values.get("grid", "0")), int(values.get("atoms", "0"))
    chunk = min(atoms, int(values.get("chunk", "0")))  # 0: unknown, the rows say n/a
    out = ["## PMPP ch. 18 (seed 004): potential kernels\n",
           f"One z-plane launch of each gather-family kernel ({grid}×{grid} points, {chunk or 'an unknown number of'} atoms "
           "in the constant-memory chunk), through `dcs_potential_bench`; per-thread counts are "
           "warp counts × 32 (full warps), normalised per atom per 4 grid points. The book's "
           "16 → 4 constant accesses is for COARSEN_FACTOR 4; these kernels coarsen by 8, for "
           "which the same reasoning gives 2.\n",
           "| kernel | points / thread | constant-load instr. / atom / 4 pts: book / measured | "
           "constant loads per atom per thread (SASS) | FP32 instr. / atom / 4 pts: book / "
           "measured (FFMA+FADD+FMUL) | MUFU / atom / point | store sectors / request |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    book = {"gather": ("16", "48"), "coarsened": ("4", "24"), "coalesced": ("4", "24")}
    measured = {}
    for variant in ("gather", "coarsened", "coalesced"):
        rows = read_ncu_csv(claims / f"potential_{variant}.csv")
        if not rows or not grid or not chunk:
            out.append(f"| {variant} | {POINTS_PER_THREAD[variant]} | {book[variant][0]} / n/a | "
                       f"n/a | {book[variant][1]} / n/a | n/a | n/a |")
            continue
        row = rows[0]
        points = grid * grid
        per4 = chunk * points / 4.0
        ops = opcode_counts(row.get(M_OPCODES, ""))
        mods = opcode_counts(row.get(M_OPCODES + "_with_modifier_all", ""))
        const = sum(v for k, v in ops.items() if k.startswith(("LDC", "ULDC")))
        per_thread = chunk * points / 32 / POINTS_PER_THREAD[variant]  # atom-warp steps
        const_mods = " + ".join(f"{v / per_thread:.2f} {k}" for k, v in sorted(mods.items())
                                if k.startswith(("LDC", "ULDC")) and v / per_thread >= 0.01)
        fp = sum(metric(row, m) or 0 for m in (M_FADD, M_FMUL, M_FFMA))
        mufu = ops.get("MUFU")
        st_req, st_sec = metric(row, M_ST_REQ), metric(row, M_ST_SEC)
        measured[variant] = (const * 32 / per4, fp / per4,
                             st_sec / st_req if st_req else None)
        out.append(
            f"| {variant} | {POINTS_PER_THREAD[variant]} | {book[variant][0]} / "
            f"{const * 32 / per4:.2f} | {const_mods or 'n/a'} | {book[variant][1]} / "
            f"{fp / per4:.2f} | {'n/a' if mufu is None else f'{mufu * 32 / (chunk * points):.2f}'} | "
            f"{'n/a' if not st_req else f'{st_sec / st_req:.2f}'} |")
    if "gather" in measured and "coarsened" in measured:
        g, c = measured["gather"], measured["coarsened"]
        SUMMARY.append(("004", "constant-memory loads per atom per 4 points, gather → coarsened",
                        "16 → 4", f"{g[0]:.2f} → {c[0]:.2f}", "sass__inst_executed_per_opcode "
                        "(LDC*/ULDC*)", "as the book; 2 = its reasoning for 8 points per thread"))
        SUMMARY.append(("004", "FP32 per atom per 4 points, gather → coarsened", "48 → 24",
                        f"{g[1]:.2f} → {c[1]:.2f}", "thread-level FFMA+FADD+FMUL",
                        "instructions, not operations (FMA = 1); 8 points share dy/dz"))
    if "coarsened" in measured and "coalesced" in measured and measured["coalesced"][2]:
        SUMMARY.append(("004", "coalesced stores (sectors per store request), coarsened → "
                        "coalesced", "uncoalesced → coalesced",
                        f"{measured['coarsened'][2]:.2f} → {measured['coalesced'][2]:.2f}",
                        "l1tex__t_sectors / l1tex__t_requests (global st)", "as the book"))
    out.append("")
    out.append(f"Counters: `{M_OPCODES}` and `{M_OPCODES}_with_modifier_all` (instance values per "
               f"SASS opcode; constant loads are the LDC*/ULDC* opcodes), `{M_FFMA}` + `{M_FADD}` + "
               f"`{M_FMUL}` (thread level, predicated on), `{M_ST_SEC}` / `{M_ST_REQ}`. "
               "The atom loads are ULDC, uniform-datapath loads issued once per warp: every "
               "thread of a warp reads the same atom, which is why constant memory suits the "
               "gather form; the count per thread is what the book's count means. ULDC.64 loads "
               "two 32-bit fields at once, so instructions count fields in pairs. The FP32 "
               "counts are instructions (an FFMA is one), not the book's operations; with 8 "
               "points per thread the per-atom work on dy and dz is shared by 8 points instead "
               "of 4. Store sectors per request: 4 is a fully used warp store (32 consecutive "
               "floats); 32 means every thread wrote its own sector — the coarsened kernel's "
               "uncoalesced stores, which the coalesced kernel removes as the book says.\n")
    return out


def main():
    claims = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    device = (claims / "device.txt").read_text().strip() if (claims / "device.txt").exists() else "?"
    out = ["# The seeds' claims, measured\n",
           f"Device and date: {device}\n",
           "Generated by `scripts/gpu/seed_claims.sh` (Nsight Compute with `--clock-control none`) "
           "and `scripts/gpu/seed_claims_table.py`. Every row names its counter; where the "
           "number differs from the book's, the text says why — a difference is a finding.\n"]
    sections = pmpp_section(read_ncu_csv(claims / "pmpp.csv"))
    sections += ladder_section(read_ncu_csv(claims / "ladder_ncu.csv"), claims / "ladder.md")
    sections += potential_section(claims)
    out.append("## Summary\n")
    out.append("| seed | claim | book | measured here | counter | verdict |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    out += [f"| {' | '.join(row)} |" for row in SUMMARY]
    out.append("")
    out += sections
    out.append("## Reproducing\n")
    out.append("On the GPU machine: `scripts/gpu/seed_claims.sh OUTDIR BUILD_DIR` (after building "
               "`dcs_reduce_bench` and `dcs_potential_bench`) writes OUTDIR/seed-claims.md and "
               "keeps the raw `ncu --csv --page raw` exports in OUTDIR/claims; "
               "`scripts/gpu/seed_claims_table.py OUTDIR/claims` rebuilds this page from them "
               "anywhere. The PMPP model is in that script (`model_accesses`).\n")
    dropped = claims / "metrics_dropped.txt"
    if dropped.exists() and dropped.read_text().strip():
        out.append("## Counters this Nsight Compute did not offer\n")
        out.append("\n".join(f"- `{m}`" for m in dropped.read_text().split()) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
