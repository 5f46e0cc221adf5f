#!/usr/bin/env python3
"""Writes, with PyTorch itself, the folded stacks test_stacks_folded.c expects.

For CASE.case (format in its header) it builds torch.autograd FunctionEvents
and calls EventList.export_stacks(path, "self_cpu_time_total"):
  CASE.folded      each event's stack is [its name] + its frames, so the
                   name ends the line as opprof writes it (OPPROF_STACKS_CALLS)
  CASE.ops.folded  each event's stack is its name and the names of the
                   operators around it (OPPROF_STACKS_OPERATORS)

Needs Debian's python3-torch (1.13): /usr/bin/python3 gen_folded.py *.case
"""
import sys

from torch.autograd.profiler_util import EventList, FunctionEvent


def parse(path):
    evs = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        f = line.split("|")
        if f[0] == "ev":
            tid, start, dur, frames, name = f[1:6]
            evs.append({"tid": int(tid), "s": int(start) / 1000.0, "e": (int(start) + int(dur)) / 1000.0,
                        "frames": frames.split("^") if frames else [], "name": name})
    evs.sort(key=lambda e: (e["s"], -e["e"]))
    return evs


def events(evs, stack_of):
    out = [FunctionEvent(id=i, name=e["name"], thread=e["tid"], start_us=e["s"], end_us=e["e"],
                         input_shapes=[], stack=[]) for i, e in enumerate(evs)]
    el = EventList(out)
    el._build_tree()
    for fe, e in zip(out, evs):
        fe.stack = stack_of(fe, e)
    return el


def ancestry(fe):
    names = []
    while fe is not None:
        names.append(fe.name)
        fe = fe.cpu_parent
    return names


def main():
    for path in sys.argv[1:]:
        base = path[: -len(".case")]
        evs = parse(path)
        events(evs, lambda fe, e: [e["name"]] + e["frames"] if e["frames"] else []).export_stacks(
            base + ".folded", "self_cpu_time_total")
        events(evs, lambda fe, e: ancestry(fe)).export_stacks(base + ".ops.folded", "self_cpu_time_total")


if __name__ == "__main__":
    main()
