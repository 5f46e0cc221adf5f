#!/usr/bin/python3
"""PyTorch's own Chrome trace exporter, timed: the reference of bench_export.

Profiles a loop of small operators with torch.profiler until about N events
are recorded, then times prof.export_chrome_trace(path) (the export only, not
the profiling), several times. Prints one line:
    events=<n> bytes=<size of the file> seconds=<median> runs=<r> torch=<version>
Usage: bench_export_torch.py [N=1000000] [RUNS=3] [DIR=/tmp]
"""
import os
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
out_dir = sys.argv[3] if len(sys.argv) > 3 else "/tmp"

a = torch.ones(4)
b = torch.ones(4)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(n):
        torch.add(a, b)  # one aten::add event each
events = len(prof.events())  # the list export walks, built once here
path = os.path.join(out_dir, "opprof_bench_torch_trace.%d.json" % os.getpid())
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    prof.export_chrome_trace(path)
    times.append(time.perf_counter() - t0)
size = os.path.getsize(path)
os.remove(path)
print("events=%d bytes=%d seconds=%.6f runs=%d torch=%s" % (events, size, statistics.median(times), runs,
                                                             torch.__version__))
