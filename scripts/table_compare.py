#!/usr/bin/env python3
"""Compares two key-averages tables (opprof's PyTorch-format text tables).

    table_compare.py A.txt B.txt

Equal means: the same columns, the same rows in the same order with the same
names and calls, and every time within what rounding each event's times to
the nanosecond in a trace file can move it (2 ns per call, or 1e-4 of the
value) and every percentage within 0.01. Prints the largest differences and
exits 1 when the tables differ.
"""
import re
import sys

UNITS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def parse(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    seps = [i for i, l in enumerate(lines) if l.startswith("---")]
    if len(seps) < 3:
        raise SystemExit("%s: not a table (fewer than three rule lines)" % path)
    header = [c for c in re.split(r"\s{2,}", lines[seps[0] + 1].strip()) if c]
    rows = []
    for l in lines[seps[1] + 1:seps[2]]:
        rows.append([c for c in re.split(r"\s{2,}", l.strip()) if c])
    totals = [l for l in lines[seps[2] + 1:] if l.strip()]
    return header, rows, totals


def value(cell):
    m = re.fullmatch(r"(-?[0-9.]+)(ns|us|ms|s)", cell)
    if m:
        return "time", float(m.group(1)) * UNITS[m.group(2)]
    m = re.fullmatch(r"(-?[0-9.]+)%", cell)
    if m:
        return "pct", float(m.group(1))
    return "text", cell


def main():
    ha, ra, ta = parse(sys.argv[1])
    hb, rb, tb = parse(sys.argv[2])
    bad = []
    if ha != hb:
        bad.append("columns differ: %s / %s" % (ha, hb))
    if len(ra) != len(rb):
        bad.append("%d rows / %d rows" % (len(ra), len(rb)))
    calls_col = ha.index("# of Calls") if "# of Calls" in ha else None
    worst = 0.0
    for i, (a, b) in enumerate(zip(ra, rb)):
        if len(a) != len(b):
            bad.append("row %d: %d cells / %d cells" % (i + 1, len(a), len(b)))
            continue
        calls = int(a[calls_col]) if calls_col is not None and a[calls_col].isdigit() else 1
        for col, (x, y) in enumerate(zip(a, b)):
            kx, vx = value(x)
            ky, vy = value(y)
            name = ha[col] if col < len(ha) else str(col)
            if kx != ky or (kx == "text" and vx != vy):
                bad.append("row %d (%s), %s: %r / %r" % (i + 1, a[0], name, x, y))
            elif kx == "time":
                tol = max(0.002 * 2 * calls, 1e-4 * abs(vx), 0.0011)
                worst = max(worst, abs(vx - vy))
                if abs(vx - vy) > tol:
                    bad.append("row %d (%s), %s: %s / %s" % (i + 1, a[0], name, x, y))
            elif kx == "pct" and abs(vx - vy) > 0.011:
                bad.append("row %d (%s), %s: %s / %s" % (i + 1, a[0], name, x, y))
    for x, y in zip(ta, tb):
        (kx, vx), (ky, vy) = value(x.split(": ")[-1]), value(y.split(": ")[-1])
        if x.split(":")[0] != y.split(":")[0] or kx != ky or (kx == "time" and abs(vx - vy) > max(1e-4 * vx, 0.01)):
            bad.append("total: %r / %r" % (x, y))
    for b in bad[:20]:
        print("DIFF", b)
    print("%d rows, %d columns, largest time difference %.3f us%s" % (
        len(ra), len(ha), worst, "" if not bad else ", %d differences" % len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
