#!/usr/bin/env python3
"""The house rules of docs/DESIGN.md, checked against the code (make check-floors).

1. Floors: a file under src/ includes headers of its own folder and of the
   folders below it only, in the order of DESIGN's layout block (the first
   src/ line is the top floor); nn/ and cli/ include no header of src/.
2. The seam: a file of the analysis library (the folders above the
   "--- libopprof," line of that block) includes the recording client's
   headers (its folders below that line, src/common apart: the ground of
   both) only when DESIGN's seam block lists them; the names marked OP_SEAM
   are those the block lists, each in the header it names; and, given
   --lib, libopprof.so exports no op_ symbol the block does not list.
3. Tests: a folder of tests/ is an area's (with its CMakeLists.txt), data/ or
   support/; a flat tests/test_AREA_*.c has no folder tests/AREA/ beside it.

Usage: scripts/check_floors.py [--root DIR] [--lib build/lib/libopprof.so]
Prints each breach and exits 1 when there is one.
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SEAM_DECL = re.compile(r'\bOP_SEAM\b[^;{]*?\b(op_[a-z0-9_]+)\s*(?:\(|\[|;)')
NAME = re.compile(r'\bop_[a-z0-9_]+\b')


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def fenced(text, info):
    """The lines of the first ``` block whose info string is `info`."""
    m = re.search(r"^```" + re.escape(info) + r"[ \t]*\n(.*?)^```", text, re.M | re.S)
    return m.group(1).splitlines() if m else None


def layout(design):
    """Folders of src/ from the top floor down, and those of the client."""
    block = None
    for m in re.finditer(r"^```\n(.*?)^```", design, re.M | re.S):
        if re.search(r"^src/\w+/", m.group(1), re.M):
            block = m.group(1).splitlines()
            break
    if block is None:
        sys.exit("check_floors: no layout block with src/ folders in docs/DESIGN.md")
    order, client, in_client = [], set(), False
    for line in block:
        if line.lstrip().startswith("--- libopprof,"):
            in_client = True
        m = re.match(r"src/(\w+)/", line)
        if m:
            order.append(m.group(1))
            if in_client and m.group(1) != "common":
                client.add(m.group(1))
    return order, client


def seam(design):
    """header -> listed names, from the ```seam block."""
    lines = fenced(design, "seam")
    if lines is None:
        sys.exit("check_floors: no ```seam block in docs/DESIGN.md")
    listed = {}
    for line in lines:
        parts = line.split(None, 1)
        if not parts or parts[0].startswith("#"):
            continue
        listed[parts[0]] = set(NAME.findall(parts[1] if len(parts) > 1 else ""))
    return listed


def sources(root, top):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--lib", help="libopprof.so whose exported op_ symbols to check")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    design = read(os.path.join(root, "docs", "DESIGN.md"))
    order, client = layout(design)
    floor = {d: len(order) - i for i, d in enumerate(order)}  # the ground is 1
    listed = seam(design)
    names = set().union(*listed.values()) if listed else set()
    bad = []

    src = os.path.join(root, "src")
    for path in sources(root, "src"):
        rel = os.path.relpath(path, src)
        own = rel.split(os.sep)[0]
        if own not in floor:
            bad.append(f"src/{rel}: folder src/{own} is not in DESIGN's layout")
            continue
        text = read(path)
        for inc in INCLUDE.findall(text):
            top = inc.split("/")[0]
            if top not in floor:
                continue
            if floor[top] > floor[own]:
                bad.append(f"src/{rel}: includes {inc}, a floor above src/{own}")
            if own not in client and top in client and inc not in listed:
                bad.append(f"src/{rel}: the analysis library includes {inc}, which DESIGN's seam does not list")
        if path.endswith(".h"):
            for name in SEAM_DECL.findall(text):
                if name not in listed.get(rel, set()):
                    bad.append(f"src/{rel}: {name} is marked OP_SEAM but DESIGN's seam does not list it there")
    for header, want in listed.items():
        path = os.path.join(src, header)
        if not os.path.exists(path):
            bad.append(f"DESIGN's seam lists src/{header}, which does not exist")
            continue
        have = set(SEAM_DECL.findall(read(path)))
        for name in sorted(want - have):
            bad.append(f"DESIGN's seam lists {name} in src/{header}, which does not mark it OP_SEAM")

    for top in ("nn", "cli"):
        for path in sources(root, top):
            for inc in INCLUDE.findall(read(path)):
                if inc.split("/")[0] in floor:
                    bad.append(f"{os.path.relpath(path, root)}: includes {inc}; {top}/ uses the public API only")

    tests = os.path.join(root, "tests")
    if os.path.isdir(tests):
        for f in sorted(os.listdir(tests)):
            area = os.path.join(tests, f)
            if (os.path.isdir(area) and f not in ("data", "support", "__pycache__")
                    and not os.path.exists(os.path.join(area, "CMakeLists.txt"))):
                bad.append(f"tests/{f}/ has no CMakeLists.txt: a folder is an area's tests, or data/, or support/")
            m = re.match(r"test_([a-z0-9]+)_.*\.c$", f)
            if m and os.path.exists(os.path.join(tests, m.group(1), "CMakeLists.txt")):
                bad.append(f"tests/{f}: area {m.group(1)} has a folder, tests/{m.group(1)}/; its tests live there")

    if a.lib:
        out = subprocess.run(["nm", "-D", "--defined-only", a.lib], capture_output=True, text=True, check=True).stdout
        exported = {line.split()[-1] for line in out.splitlines() if line.split() and line.split()[-1].startswith("op_")}
        for name in sorted(exported - names):
            bad.append(f"{a.lib} exports {name}, which DESIGN's seam does not list")
        for name in sorted(names - exported):
            bad.append(f"DESIGN's seam lists {name}, which {a.lib} does not export")

    for b in bad:
        print("check-floors:", b)
    counted = f"{len(order)} floors, {len(names)} seam names in {len(listed)} headers"
    if a.lib:
        counted += f", {os.path.basename(a.lib)} checked"
    print(f"check-floors: {'FAILED' if bad else 'ok'} ({counted})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
