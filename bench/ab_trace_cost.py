#!/usr/bin/python3
"""Two builds of opprof, alternating, on one program: the table-only run and
the --trace x.pftrace run of each, so that a change to the trace path is
judged against its parent on the same machine in the same minutes (this VM's
speed drifts by 30% between runs minutes apart).

For each build: the median over REPS rounds of the table-only run's wall
time, the trace run's, their ratio, the end's time (OPPROF_STREAM_STATS),
and "Self CPU time total" of both tables. The program is taken from the
second build's bin/ (the same binary under both).

    /usr/bin/python3 bench/ab_trace_cost.py OLD_BUILD NEW_BUILD [PROGRAM [REPS]]
        (default twothread_work, 5 rounds)
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_trace_cost import parse_table  # noqa: E402


def timed(cmd, env=None):
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
    return time.monotonic() - t0, p.stderr


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    builds = {"old": sys.argv[1], "new": sys.argv[2]}
    prog = os.path.join(sys.argv[2], "bin", sys.argv[3] if len(sys.argv) > 3 else "twothread_work")
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    for b in builds.values():
        if not os.access(os.path.join(b, "bin", "opprof"), os.X_OK):
            sys.exit(f"ab_trace_cost: no {b}/bin/opprof")
    tmp = tempfile.mkdtemp(prefix="ab_trace_cost_")
    table, traced, out = (os.path.join(tmp, n) for n in ("t.txt", "x.txt", "x.pftrace"))
    env = dict(os.environ, OPPROF_STREAM_STATS="1")
    res = {k: {"table": [], "trace": [], "end": [], "self_t": [], "self_x": []} for k in builds}
    with open("/proc/loadavg") as f:
        print("load before:", " ".join(f.read().split()[:3]), f"on {os.cpu_count()} CPUs;", prog, f"{reps} rounds")
    for _ in range(reps):
        for k, b in builds.items():
            opprof = os.path.join(b, "bin", "opprof")
            tt, _ = timed([opprof, "exec", "--table", table, "--", prog])
            tx, err = timed([opprof, "exec", "--table", traced, "--trace", out, "--", prog], env)
            m = re.search(r"written in ([0-9.]+) s", err)
            d = res[k]
            d["table"].append(tt)
            d["trace"].append(tx)
            d["end"].append(float(m.group(1)) if m else float("nan"))
            d["self_t"].append(parse_table(table)[1] or float("nan"))
            d["self_x"].append(parse_table(traced)[1] or float("nan"))
    med = statistics.median
    for k, b in builds.items():
        d = res[k]
        print(f"{k} ({b}): table {med(d['table']):.3f} s, trace {med(d['trace']):.3f} s "
              f"(trace/table {med(d['trace']) / med(d['table']):.2f}x), end {med(d['end']):.3f} s; "
              f"Self CPU time total: table {med(d['self_t']):.3f} s, trace {med(d['self_x']):.3f} s "
              f"({100 * (med(d['self_x']) / med(d['self_t']) - 1):+.1f}%)")
    for name in ("trace", "end"):
        print(f"new/old {name}: {med(res['new'][name]) / med(res['old'][name]):.3f}x")


if __name__ == "__main__":
    main()
