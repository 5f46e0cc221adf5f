#!/usr/bin/env python3
"""opprof exec --sample against the plain run and against perf record.

    bench/bench_sample.py [BUILD]        (BUILD: the build folder, default build)

1. tests/sample/s73.c (-O2, not instrumented): the main thread calls work_a
   7 times and work_b 3 times in every 10 iterations, a second thread
   sleeps 10 ms at a time. Prints work_a:work_b from the sampled table
   (7:3 is 2.333), the sleeping thread's function against work_a, and the
   sampled run's wall and CPU time against the plain run's (median of
   REPS=5 each, alternating, same run: the best of a few picked the plain
   run's lucky outliers on this VM), and the fixed cost of opprof exec --sample
   on a program that does nothing (S73_ITERATIONS=100000 by default).
2. Top five functions' shares (self samples / all) under perf record -e
   cpu-clock (the reference, when perf is installed: Debian's linux-perf)
   and under opprof exec --sample --no-inline (perf names the symbol, not
   what was inlined into it), on s73 and on a real C program, the CPython
   interpreter running this script (sys.executable: not instrumented; one
   with a symbol table, as pyenv builds it; Debian's stripped python3 leaves
   perf bare addresses for its static functions) running a pure-Python LZW
   compressor (PYTHONHASHSEED=0 in both tools' runs). Prints each mean
   share over REPS runs of each tool and the largest difference in points.
3. Sampling on top of recording ranges: bench_wholeprog's program
   (wholeprog_work, -finstrument-functions, 30M calls) under opprof exec
   with and without --sample at the default rate, alternating, median of
   REPS each: wall and CPU time, and the ratio (target <= 1.03x).
Never a test: the figures depend on the machine and its load, printed first.
"""
import os
import shutil
import subprocess
import sys
from statistics import median
import tempfile
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
OPPROF = os.path.join(BUILD, "bin", "opprof")
S73 = os.path.join(BUILD, "tests", "s73")
N = os.environ.get("S73_ITERATIONS", "100000")
REPS = int(os.environ.get("REPS", "5"))

LZW = r"""
import random
random.seed(1)
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
text = " ".join(random.choice(words) for _ in range(400000))
def lzw(data):
    table = {chr(i): i for i in range(256)}
    w, out = "", []
    for c in data:
        wc = w + c
        if wc in table:
            w = wc
        else:
            out.append(table[w])
            table[wc] = len(table)
            w = c
    if w:
        out.append(table[w])
    return out
for _ in range(3):
    codes = lzw(text)
print(len(codes))
"""


def run(argv, **kw):
    """Wall seconds and CPU seconds (children's user + sys) of argv."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, **kw)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench_sample: {argv} failed")
    return wall, ru.ru_utime + ru.ru_stime


def opprof_shares(argv, tmp, name, inline=True):
    """Self and total time per function (ms) from opprof exec --sample's CSV;
    inline=False: --no-inline, functions as the binary's symbols (perf's view)."""
    csv = os.path.join(tmp, name + ".csv")
    flags = [] if inline else ["--no-inline"]
    subprocess.run([OPPROF, "exec", "--sample"] + flags + ["--format", "csv", "--row-limit", "-1", "--table", csv, "--"] + argv,
                   check=True, stdout=subprocess.DEVNULL)
    self_ms, total_ms = {}, {}
    with open(csv) as f:
        next(f)
        for line in f:
            # name may hold commas only when quoted; the numbers follow it
            if line.startswith('"'):
                end = line.index('",', 1)
                fname, rest = line[1:end].replace('""', '"'), line[end + 2:]
            else:
                fname, rest = line.split(",", 1)
            fields = rest.split(",")
            self_ms[fname] = float(fields[1]) / 1000
            total_ms[fname] = float(fields[2]) / 1000
    return self_ms, total_ms


def perf_shares(argv, tmp, name):
    data = os.path.join(tmp, name + ".perf")
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", data, "--"] + argv, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "symbol", "-q"],
                         check=True, capture_output=True, text=True).stdout
    shares = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].endswith("%") and parts[1] in ("[.]", "[k]"):
            sym = parts[2].split("@")[0]  # perf keeps the symbol's version, opprof does not
            shares[sym] = shares.get(sym, 0.0) + float(parts[0][:-1])
    return shares


def compare(title, argv, tmp, name):
    """Mean shares over REPS alternating runs of each: a memory-bound program's
    shares move by a point or two from run to run on this VM, under either tool."""
    ref, ours_ms = {}, {}
    for _ in range(REPS):
        for sym, share in perf_shares(argv, tmp, name).items():
            ref[sym] = ref.get(sym, 0.0) + share / REPS
        self_ms, _ = opprof_shares(argv, tmp, name, inline=False)  # perf names the symbol, not what was inlined
        total_run = sum(self_ms.values()) or 1.0
        for sym, ms in self_ms.items():
            ours_ms[sym] = ours_ms.get(sym, 0.0) + ms / total_run / REPS
    self_ms, total = ours_ms, 1.0
    print(f"\n{title}: top five of perf record -e cpu-clock, share of samples, mean of {REPS} runs each (points)")
    print(f"  {'function':40s} {'perf':>7s} {'opprof':>7s} {'diff':>6s}")
    worst = 0.0
    for sym, share in sorted(ref.items(), key=lambda kv: -kv[1])[:5]:
        ours = 100.0 * self_ms.get(sym, 0.0) / total
        worst = max(worst, abs(ours - share))
        print(f"  {sym[:40]:40s} {share:7.2f} {ours:7.2f} {ours - share:+6.2f}")
    print(f"  largest difference: {worst:.2f} points (target <= 5)")


def main():
    if not os.access(S73, os.X_OK) or not os.access(OPPROF, os.X_OK):
        sys.exit(f"bench_sample: build first ({S73}, {OPPROF})")
    with open("/proc/loadavg") as f:
        print("machine load (1, 5, 15 min):", " ".join(f.read().split()[:3]), f"on {os.cpu_count()} CPUs")
    tmp = tempfile.mkdtemp(prefix="bench_sample_")
    try:
        self_ms, total_ms = opprof_shares([S73, N], tmp, "s73")
        a, b, s = total_ms.get("work_a", 0), total_ms.get("work_b", 0), total_ms.get("sleeper_spin", 0)
        print(f"s73 {N}: work_a {a:.0f} ms, work_b {b:.0f} ms: ratio {a / b:.3f} (7:3 = 2.333, "
              f"{100 * (a / b / (7 / 3) - 1):+.1f}%); sleeper_spin {s:.0f} ms = {100 * s / a:.2f}% of work_a")
        plain, sampled = [], []
        for _ in range(REPS):
            plain.append(run([S73, N]))
            sampled.append(run([OPPROF, "exec", "--sample", "--table", os.path.join(tmp, "t"), "--", S73, N]))
        pw, pc = median(w for w, _ in plain), median(c for _, c in plain)
        sw, sc = median(w for w, _ in sampled), median(c for _, c in sampled)
        print(f"wall, median of {REPS}: plain {pw:.3f} s, --sample {sw:.3f} s: {sw / pw:.3f}x (target <= 1.05x); "
              f"CPU {pc:.3f} s vs {sc:.3f} s: {sc / pc:.3f}x")
        fixed = min(run([OPPROF, "exec", "--sample", "--table", os.path.join(tmp, "t"), "--", "true"], stderr=subprocess.DEVNULL)[1]
                    for _ in range(REPS))
        print(f"fixed cost of opprof exec --sample -- true: {fixed:.3f} s of CPU (start, symbolization at the end)")
        work = os.path.join(BUILD, "bin", "wholeprog_work")
        if os.access(work, os.X_OK):
            ranges, both = [], []
            table = os.path.join(tmp, "w")
            for _ in range(REPS):
                ranges.append(run([OPPROF, "exec", "--table", table, "--", work]))
                both.append(run([OPPROF, "exec", "--sample", "--table", table, "--", work]))
            rw, rc = median(w for w, _ in ranges), median(c for _, c in ranges)
            bw, bc = median(w for w, _ in both), median(c for _, c in both)
            print(f"wholeprog_work (30M instrumented calls), median of {REPS}: opprof exec {rw:.3f} s, "
                  f"with --sample {bw:.3f} s: {bw / rw:.3f}x wall (target <= 1.03x); "
                  f"CPU {rc:.3f} s vs {bc:.3f} s: {bc / rc:.3f}x")
        if not shutil.which("perf"):
            print("perf not installed (scripts/deps.sh bench): no reference shares")
            return
        compare(f"s73 {N}", [S73, N], tmp, "s73p")
        py = os.path.join(tmp, "lzw.py")
        with open(py, "w") as f:
            f.write(LZW)
        # the same string hashes in every run: with random seeds the dict's probe
        # chains, and so its lookup's share, differ between the two tools' runs
        os.environ["PYTHONHASHSEED"] = "0"
        compare(f"python3 (pure-Python LZW, {sys.executable})", [sys.executable, py], tmp, "py")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
