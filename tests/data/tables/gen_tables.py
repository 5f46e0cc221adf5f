#!/usr/bin/env python3
"""Prints, with PyTorch itself, the tables test_table_cases.c expects.

Each CASE.case describes events (the format is in README.md beside it). This
script builds the same events as torch.autograd FunctionEvents, applying the
rules of opprof's event model (call tree per thread, memory inside an
operator counted for it and every enclosing one, kernels charged to the
operator around their launch, free-standing memory as "[memory]" events) and
writes key_averages().table(...) for every `table` line to CASE.tables.

Needs Debian's python3-torch (1.13): /usr/bin/python3 gen_tables.py *.case
"""
import ast
import sys

from torch.autograd import DeviceType
from torch.autograd.profiler_util import EventList, FunctionEvent

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def parse(path):
    case = {"options": set(), "by_shape": False, "stack_n": 0, "ev": [], "mem": [], "tables": []}
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        f = line.split("|")
        if f[0] == "options":
            case["options"] = set(x for x in f[1].split(",") if x)
        elif f[0] == "avg":
            case["by_shape"] = f[1] == "1"
            case["stack_n"] = int(f[2])
        elif f[0] == "ev":
            tid, cat, start, dur, flops, corr, shapes, stack, name = f[1:10]
            case["ev"].append({"tid": int(tid), "cat": cat, "s": int(start), "e": int(start) + int(dur),
                               "flops": int(flops or 0), "corr": int(corr or 0),
                               "shapes": ast.literal_eval(shapes) if shapes else [],
                               "stack": stack.split(";") if stack else [],
                               # the profiler renames at parse time (_rewrite_name)
                               "name": "ProfilerStep*" if name.startswith("ProfilerStep#") else name})
        elif f[0] == "mem":
            case["mem"].append({"tid": int(f[1]), "ts": int(f[2]), "bytes": int(f[3])})
        elif f[0] == "table":
            case["tables"].append((f[1] or None, int(f[2])))
    return case


def innermost(host, tid, s, e, skip_launch=False):
    best = None
    for h in host:
        if h["tid"] != tid or not (h["s"] <= s and e <= h["e"]):
            continue
        if skip_launch and h["cat"] in LAUNCH_CATS:
            continue
        if best is None or (h["s"], -h["e"]) > (best["s"], -best["e"]):
            best = h
    return best


def build(case):
    host = [e for e in case["ev"] if e["cat"] not in DEVICE_CATS]
    out = []
    for e in case["ev"]:
        dev = e["cat"] in DEVICE_CATS
        mem = 0
        if not dev:
            mem = sum(m["bytes"] for m in case["mem"] if m["tid"] == e["tid"] and e["s"] <= m["ts"] <= e["e"])
        fe = FunctionEvent(id=len(out), name=e["name"], thread=e["tid"], start_us=e["s"], end_us=e["e"],
                           input_shapes=e["shapes"], stack=e["stack"], cpu_memory_usage=mem,
                           device_type=DeviceType.CUDA if dev else DeviceType.CPU, flops=e["flops"])
        e["fe"] = fe
        out.append(fe)
    for k in case["ev"]:
        if k["cat"] not in DEVICE_CATS or not k["corr"]:
            continue
        launches = [h for h in host if h["cat"] in LAUNCH_CATS and h["corr"] == k["corr"]]
        if launches:
            op = innermost(host, launches[-1]["tid"], launches[-1]["s"], launches[-1]["e"], skip_launch=True)
            if op is not None:
                op["fe"].append_kernel(k["name"], 0, k["e"] - k["s"])
    for m in case["mem"]:
        if innermost(host, m["tid"], m["ts"], m["ts"]) is None:
            out.append(FunctionEvent(id=len(out), name="[memory]", thread=m["tid"], start_us=m["ts"],
                                     end_us=m["ts"], input_shapes=[], stack=[], cpu_memory_usage=m["bytes"]))
    out.sort(key=lambda fe: [fe.time_range.start, -fe.time_range.end])
    el = EventList(out, profile_memory="memory" in case["options"], with_flops="flops" in case["options"])
    el._build_tree()
    return el.key_averages(group_by_input_shapes=case["by_shape"], group_by_stack_n=case["stack_n"])


def main():
    for path in sys.argv[1:]:
        case = parse(path)
        ka = build(case)
        with open(path[: -len(".case")] + ".tables", "w", encoding="utf-8") as f:
            for key, limit in case["tables"]:
                f.write("#### %s %d\n" % (key or "", limit))
                f.write(ka.table(sort_by=key, row_limit=limit))


if __name__ == "__main__":
    main()
