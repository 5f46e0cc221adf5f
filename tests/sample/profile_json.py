#!/usr/bin/env python3
"""Reads the V8 CPU profiles of a Chrome trace (opprof's samples) strictly,
as speedscope and Chrome's trace viewer take them, and prints one line per
thread's profile:

  profile pid=P tid=T name=NAME samples=N idle=I functions=F1,F2,...

samples: the non-"(idle)" samples; functions: the nodes' functionName
values, sorted. Exits 1, saying why, when the structure is wrong: a chunk
before its Profile, a node whose parent is not yet defined, a sample of an
unknown node, samples and timeDeltas of different lengths, or a negative
delta, a first event without pid, tid, ph and cat (speedscope's test
for a Chrome timeline), or one function with two call frames (its line:
speedscope keys a function by name, url and line)."""
import json
import sys


def main(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    # speedscope (1.25) reads the CPU profiles only of a file whose first
    # event has pid, tid, ph and cat (isChromeTimeline); else it imports the
    # file as plain trace events and finds an empty profile.
    if events and not all(k in events[0] for k in ("pid", "tid", "ph", "cat")):
        sys.exit("the first event lacks one of pid, tid, ph, cat (speedscope then sees no profile): %r"
                 % events[0])
    names = {}
    profiles = {}
    order = []
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    for e in events:
        if e.get("ph") != "P":
            continue
        if e.get("cat") != "disabled-by-default-v8.cpu_profiler":
            sys.exit("profile event of category %r" % e.get("cat"))
        key = e["id"]
        if not isinstance(e["pid"], int) or not isinstance(e["tid"], int):
            sys.exit("pid and tid must be numbers (speedscope)")
        data = e["args"]["data"]
        if e["name"] == "Profile":
            if key in profiles:
                sys.exit("profile %s twice" % key)
            profiles[key] = {"pid": e["pid"], "tid": e["tid"], "nodes": {}, "samples": 0, "idle": 0,
                             "t": data["startTime"]}
            order.append(key)
        elif e["name"] == "ProfileChunk":
            p = profiles.get(key)
            if p is None:
                sys.exit("chunk of %s before its Profile" % key)
            if (e["pid"], e["tid"]) != (p["pid"], p["tid"]):
                sys.exit("chunk of %s on another thread" % key)
            cp = data["cpuProfile"]
            for n in cp.get("nodes", []):
                if "parent" in n and n["parent"] not in p["nodes"]:
                    sys.exit("node %d before its parent %d" % (n["id"], n["parent"]))
                if n["id"] in p["nodes"]:
                    sys.exit("node %d twice" % n["id"])
                p["nodes"][n["id"]] = n["callFrame"]["functionName"]
                cf = n["callFrame"]
                where = (cf.get("url"), cf.get("lineNumber"), cf.get("columnNumber"))
                seen = p.setdefault("frames", {}).setdefault((cf["functionName"], cf.get("url")), where)
                if seen != where:
                    sys.exit("%s has two call frames, %r and %r: viewers list it twice" %
                             (cf["functionName"], seen, where))
            deltas = data["timeDeltas"]
            if len(deltas) != len(cp["samples"]):
                sys.exit("%d samples, %d timeDeltas" % (len(cp["samples"]), len(deltas)))
            for s, d in zip(cp["samples"], deltas):
                if s not in p["nodes"]:
                    sys.exit("sample of unknown node %d" % s)
                if d < 0:
                    sys.exit("negative time delta %r" % d)
                p["t"] += d
                if p["nodes"][s] == "(idle)":
                    p["idle"] += 1
                else:
                    p["samples"] += 1
    for key in order:
        p = profiles[key]
        fns = sorted(set(v for v in p["nodes"].values() if not v.startswith("(")))
        print("profile pid=%d tid=%d name=%s samples=%d idle=%d functions=%s" %
              (p["pid"], p["tid"], names.get((p["pid"], p["tid"]), "-"), p["samples"], p["idle"], ",".join(fns)))


if __name__ == "__main__":
    main(sys.argv[1])
