#!/usr/bin/env python3
"""Strict checks of a Chrome trace written by opprof; used by the C tests.

    check_trace.py FILE [RAW]  (.gz is read as gzip)

Fails (exit 1, reason on stderr) unless the file is strict JSON: no control
characters inside strings, no NaN or Infinity, no duplicate keys, valid UTF-8;
and unless it has Kineto's shape: an object with schemaVersion,
deviceProperties, displayTimeUnit, baseTimeNanoseconds, traceEvents and
droppedEvents; every event with a known ph (X, i, M, and s/f ac2g flows) and
numeric pid and tid; every ts
and dur written with exactly three decimals.

With RAW, the bytes of that file decoded as UTF-8 with errors="replace"
(Python's, which replaces each maximal ill-formed subsequence by one U+FFFD)
must equal the name of the first "X" event.

On success prints one JSON line (ASCII only) that the tests compare:
  {"x": [[cat, name, ts, dur], ...], "args": [args of each X event], "mem": [args of each
   [memory] event], "meta": [[name, pid, tid, value], ...], "top": {other top-level keys}}
"""
import gzip
import json
import re
import sys

NUM3 = re.compile(r"^-?(0|[1-9][0-9]*)\.[0-9]{3}$")


def no_dupes(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key in %r" % keys)
    return dict(pairs)


def bad_constant(name):
    raise ValueError("non-standard number " + name)


floats = []


def keep_float(text):
    floats.append(text)
    return float(text)


def main(path):
    raw = open(path, "rb").read()
    if path.endswith(".gz"):
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8")  # strict: invalid UTF-8 raises
    doc = json.loads(text, object_pairs_hook=no_dupes, parse_constant=bad_constant, parse_float=keep_float)
    if not isinstance(doc, dict):
        raise ValueError("top level is not an object")
    for key, kind in (("schemaVersion", int), ("deviceProperties", list), ("displayTimeUnit", str),
                      ("baseTimeNanoseconds", int), ("traceEvents", list), ("droppedEvents", int)):
        if not isinstance(doc.get(key), kind):
            raise ValueError("top-level %s missing or not %s" % (key, kind.__name__))
    for f in floats:
        if not NUM3.match(f):
            raise ValueError("number %s is not written with three decimals" % f)
    out = {"x": [], "args": [], "mem": [], "meta": [], "instant": [],
           "top": {k: v for k, v in doc.items() if k != "traceEvents"}}
    idx = []
    for ev in doc["traceEvents"]:
        ph = ev.get("ph")
        for k in ("pid", "tid"):
            if type(ev.get(k)) is not int:
                raise ValueError("%s of %r is not an integer" % (k, ev))
        if type(ev.get("ts")) is not float:
            raise ValueError("ts of %r is not a number with decimals" % ev)
        if ph == "X":
            if type(ev.get("dur")) is not float or ev["dur"] < 0:
                raise ValueError("bad dur in %r" % ev)
            out["x"].append([ev["cat"], ev["name"], ev["ts"], ev["dur"]])
            out["args"].append(ev["args"])
            idx.append(ev["args"]["Ev Idx"])
        elif ph == "i" and ev.get("name") == "[memory]":
            if ev.get("s") != "t" or ev.get("cat") != "cpu_instant_event":
                raise ValueError("bad memory event %r" % ev)
            out["mem"].append(ev["args"])
            idx.append(ev["args"]["Ev Idx"])
        elif ph == "i":
            out["instant"].append(ev["name"])
        elif ph == "M":
            out["meta"].append([ev["name"], ev["pid"], ev["tid"], list(ev["args"].values())[0]])
        elif ph in ("s", "f"):  # ac2g flows from a launch to the device activity it launched
            if ev.get("cat") != "ac2g" or ev.get("name") != "ac2g" or type(ev.get("id")) is not int or \
                    (ph == "f") != (ev.get("bp") == "e"):
                raise ValueError("bad flow event %r" % ev)
            out.setdefault("flows", []).append([ph, ev["id"], ev["pid"], ev["tid"], ev["ts"]])
        else:
            raise ValueError("unexpected ph in %r" % ev)
    if idx != list(range(len(idx))):
        raise ValueError("Ev Idx values are not 0, 1, 2, ...")
    if len(sys.argv) > 2:
        want = open(sys.argv[2], "rb").read().decode("utf-8", errors="replace")
        if out["x"][0][1] != want:
            raise ValueError("the first name differs from %s decoded (lengths %d, %d)"
                             % (sys.argv[2], len(out["x"][0][1]), len(want)))
        out["x"][0][1] = "(matched %d characters)" % len(want)
    print(json.dumps(out, ensure_ascii=True, sort_keys=True))


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except Exception as e:  # noqa: BLE001 - any failure is a failed check
        print("check_trace: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        sys.exit(1)
