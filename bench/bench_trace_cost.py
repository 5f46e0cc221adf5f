#!/usr/bin/python3
"""Asking for a trace must not change the answer (issue 27, items 1 and 2).

For each program (bench/twothread_work: two threads busy, qsort with a ~10 ns
comparator and a matrix-vector product per step, ~31M calls; bench/
wholeprog_work: 30.1M calls on one thread), in one run, one after another:

  plain       the program alone
  table       opprof exec --table (sums only)
  trace       opprof exec --table --trace x.pftrace (spooled, written at exit)
  filtered    the same with --min-duration 1us (two-thread program only)

and prints the whole run's wall time of each against the table-only run's,
"Self CPU time total" and each function's self time (those over 1% of the
total) of the trace run against the table-only run's, the call counts of
both, and the end's encoding throughput (OPPROF_STREAM_STATS). Targets from
issue 27: trace run <= 2x the table-only run, self times within 10%, same
counts.

    /usr/bin/python3 bench/bench_trace_cost.py [BUILD_DIR]   (default: build)
"""
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def secs(text):
    m = re.fullmatch(r"(-?[0-9.]+)(ns|us|ms|s)", text)
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def parse_table(path):
    """Rows {name: (self_s, calls)} and the "Self CPU time total" of a table file."""
    rows, total = {}, None
    with open(path) as f:
        for line in f:
            m = re.match(r"Self CPU time total: (\S+)", line.strip())
            if m:
                total = secs(m.group(1))
                continue
            tok = line.split()
            if len(tok) == 7 and secs(tok[2]) is not None and tok[-1].isdigit():
                rows[tok[0]] = (secs(tok[2]), int(tok[-1]))
    return rows, total


def run(cmd, env=None):
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
    return wall, p.stderr


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def bench(build, tmp, prog, args, filtered):
    opprof = os.path.join(build, "bin", "opprof")
    exe = [os.path.join(build, "bin", prog)] + args
    name = prog
    plain, _ = run(exe)
    t_table = os.path.join(tmp, name + ".table.txt")
    table, _ = run([opprof, "exec", "--table", t_table, "--row-limit", "-1", "--sort", "self_cpu_time_total", "--"] + exe)
    env = dict(os.environ, OPPROF_STREAM_STATS="1")
    t_trace = os.path.join(tmp, name + ".trace.txt")
    pf = os.path.join(tmp, name + ".pftrace")
    trace, err = run([opprof, "exec", "--table", t_trace, "--row-limit", "-1", "--sort", "self_cpu_time_total",
                      "--trace", pf, "--"] + exe, env)
    stats = re.search(r"stream stats: .*", err)
    print("%s (%s): plain %.3f s, table %.3f s (%.2fx plain), trace %.3f s: trace/table %.2fx, file %.1f MB"
          % (name, " ".join(args) or "defaults", plain, table, table / plain, trace, trace / table,
             os.path.getsize(pf) / 1e6))
    if stats:
        print("  " + stats.group(0))
    rows_a, tot_a = parse_table(t_table)
    rows_b, tot_b = parse_table(t_trace)
    print("  Self CPU time total: table %.3f s, trace %.3f s: %+.1f%%" % (tot_a, tot_b, 100 * (tot_b / tot_a - 1)))
    worst = 0.0
    same = True
    for fn, (self_a, calls_a) in sorted(rows_a.items(), key=lambda kv: -kv[1][0]):
        self_b, calls_b = rows_b.get(fn, (0.0, -1))
        same = same and calls_a == calls_b
        if self_a < 0.01 * tot_a:
            continue
        d = 100 * (self_b / self_a - 1)
        worst = max(worst, abs(d))
        print("  %-12s self %.3f s -> %.3f s (%+.1f%%), calls %d / %d" % (fn, self_a, self_b, d, calls_a, calls_b))
    print("  worst self-time change %.1f%%; counts %s" % (worst, "equal" if same else "DIFFER"))
    if filtered:
        pf2 = os.path.join(tmp, name + ".filtered.pftrace")
        t_f = os.path.join(tmp, name + ".filtered.txt")
        ftime, err = run([opprof, "exec", "--table", t_f, "--row-limit", "-1", "--trace", pf2, "--min-duration", "1us",
                          "--"] + exe, env)
        stats = re.search(r"stream stats: .*", err)
        rows_f, _ = parse_table(t_f)
        print("  --min-duration 1us: %.3f s (%.2fx table), file %.2f MB, counts %s%s"
              % (ftime, ftime / table, os.path.getsize(pf2) / 1e6,
                 "equal" if all(rows_f.get(k, (0, -1))[1] == v[1] for k, v in rows_a.items()) else "DIFFER",
                 "\n  " + stats.group(0) if stats else ""))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    print("machine: %s, %s, %d cores; load before: %s" % (platform.node(), cpu_model(), os.cpu_count(), loadavg()))
    with tempfile.TemporaryDirectory(prefix="opprof_trace_cost_") as tmp:
        bench(build, tmp, "twothread_work", [], True)
        bench(build, tmp, "wholeprog_work", [], False)
    print("load after: %s" % loadavg())


if __name__ == "__main__":
    main()
