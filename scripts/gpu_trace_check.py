#!/usr/bin/env python3
"""Checks a trace written with CUDA activity (opprof run ... --activities cpu,cuda --trace FILE).

    gpu_trace_check.py TRACE [OP ...]      (OPs default: aten::conv2d aten::batch_norm aten::linear)

The trace must parse as JSON (gzip when it ends in .gz), use numeric pid/tid,
hold kernel events, and each OP must have kernels charged to it: a kernel's
launch is the cuda_runtime/cuda_driver event with the same args.correlation,
and the kernel belongs to every CPU event on the launch's thread that
encloses the launch (or, without a launch, to the CPU event with its
"External id"), as ../shared/tools/ref_summary.py defines. Prints TRACE lines;
exits 1 when a check fails.
"""
import gzip
import json
import sys
from collections import defaultdict

CPU = {"cpu_op", "user_annotation"}
LAUNCH = {"cuda_runtime", "cuda_driver"}
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}


def main():
    path = sys.argv[1]
    ops = sys.argv[2:] or ["aten::conv2d", "aten::batch_norm", "aten::linear"]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    ok = True
    bad_ids = [e for e in events if not isinstance(e.get("pid", 0), int) or not isinstance(e.get("tid", 0), int)]
    if bad_ids:
        print("TRACE FAIL: %d events with a non-numeric pid or tid" % len(bad_ids))
        ok = False
    xs = [e for e in events if e.get("ph") == "X"]
    cpu = [e for e in xs if e.get("cat") in CPU]
    launches = [e for e in xs if e.get("cat") in LAUNCH]
    device = [e for e in xs if e.get("cat") in DEVICE]
    kernels = [e for e in device if e.get("cat") == "kernel"]
    flows = [e for e in events if e.get("cat") == "ac2g" and e.get("ph") in ("s", "f")]
    props = data.get("deviceProperties", []) if isinstance(data, dict) else []
    print("TRACE events %d cpu %d launches %d kernels %d copies %d memsets %d flows %d deviceProperties %d" % (
        len(events), len(cpu), len(launches), len(kernels),
        sum(e.get("cat") == "gpu_memcpy" for e in device), sum(e.get("cat") == "gpu_memset" for e in device),
        len(flows), len(props)))
    by_corr = {}
    for e in launches:
        c = e.get("args", {}).get("correlation")
        if c is not None:
            by_corr[c] = e
    by_thread = defaultdict(list)
    for e in cpu:
        by_thread[(e["pid"], e["tid"])].append(e)
    by_ext = {}
    for e in cpu:
        x = e.get("args", {}).get("External id")
        if x is not None and x not in by_ext:
            by_ext[x] = e

    def enclosing(thread, ts, end):
        return [c for c in by_thread[thread] if c["ts"] <= ts and c["ts"] + c.get("dur", 0) >= end]

    linked = defaultdict(lambda: [0, 0.0])
    unlinked = 0
    for k in kernels:
        args = k.get("args", {})
        launch = by_corr.get(args.get("correlation"))
        if launch is not None:
            owners = enclosing((launch["pid"], launch["tid"]), launch["ts"], launch["ts"] + launch.get("dur", 0))
        elif args.get("External id") in by_ext:
            op = by_ext[args["External id"]]
            owners = enclosing((op["pid"], op["tid"]), op["ts"], op["ts"] + op.get("dur", 0))
        else:
            owners = []
        if not owners:
            unlinked += 1
        for name in {o["name"] for o in owners}:
            linked[name][0] += 1
            linked[name][1] += k.get("dur", 0)
    print("TRACE kernels_without_operator %d" % unlinked)
    # Kernels sit on their stream's track (Kineto: pid = device, tid = stream),
    # and each launch with a kernel has an ac2g flow: "s" on the launch's
    # thread, "f" on the stream track, with the correlation as the id.
    off_track = [k for k in kernels if "stream" in k.get("args", {}) and k["tid"] != k["args"]["stream"]]
    if off_track:
        print("TRACE FAIL: %d kernels are not on their stream's track" % len(off_track))
        ok = False
    starts = {(f.get("id"), f["pid"], f["tid"]) for f in flows if f["ph"] == "s"}
    ends = {(f.get("id"), f["pid"], f["tid"]) for f in flows if f["ph"] == "f"}
    flowed = 0
    for k in kernels:
        c = k.get("args", {}).get("correlation")
        launch = by_corr.get(c)
        if launch is None:
            continue
        if (c, launch["pid"], launch["tid"]) in starts and (c, k["pid"], k["tid"]) in ends:
            flowed += 1
    with_launch = sum(k.get("args", {}).get("correlation") in by_corr for k in kernels)
    print("TRACE kernels_with_launch %d with_flow %d" % (with_launch, flowed))
    if flowed != with_launch:
        print("TRACE FAIL: %d launched kernels lack a launch -> kernel flow" % (with_launch - flowed))
        ok = False
    for op in ops:
        n, us = linked.get(op, (0, 0.0))
        print("TRACE linked[%s] kernels %d cuda_us %.1f" % (op, n, us))
        if n == 0:
            print("TRACE FAIL: no kernel is charged to %s" % op)
            ok = False
    if not kernels:
        print("TRACE FAIL: no kernel events")
        ok = False
    print("TRACE %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
