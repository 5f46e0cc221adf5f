#!/usr/bin/env python3
"""Small seeds of the hostile shapes of issue 25 (item 7), written into
fuzz/corpus under their SHA-1 as libFuzzer names its inputs. Each is the
shape, cut down to seed size (tests/import/test_import_bounds.c has the
full-size ones): one-packet .pftrace sequences (plain, and with defaults
each), a batch of empty packets, a sequence clock whose time times its unit
wraps, distributedInfo clock values past 2^61 ns (.pftrace and JSON), a
base time and offsets that fit alone but not merged, a long name (JSON and
.pftrace) and gzip'd white space.

    fuzz/shapes.py [CORPUS]      (default fuzz/corpus)
"""
import gzip
import hashlib
import os
import sys
import zlib


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fld(num, wire, payload):
    tag = varint(num << 3 | wire)
    if wire == 0:
        return tag + varint(payload & (1 << 64) - 1)
    return tag + varint(len(payload)) + payload


def pkt(body):
    return fld(1, 2, body)


THREAD = pkt(fld(10, 0, 2) + fld(60, 2, fld(1, 0, 9) + fld(4, 2, fld(1, 0, 1) + fld(2, 0, 1))))


def begin(ts, name, extra=b""):
    return pkt(fld(10, 0, 2) + fld(8, 0, ts) + extra + fld(11, 2, fld(11, 0, 9) + fld(9, 0, 1) + fld(23, 2, name)))


def batch(inner):
    return pkt(fld(50, 2, zlib.compress(inner, 9)))


def meta(key, v):
    td = pkt(fld(10, 0, 2) + fld(60, 2, fld(1, 0, 5) + fld(2, 2, b"opprof")))
    ann = fld(4, 2, fld(10, 2, key) + fld(4, 0, v))
    return td + pkt(fld(10, 0, 2) + fld(8, 0, 1000) + fld(11, 2, fld(11, 0, 5) + fld(9, 0, 3) + ann))


def snapshot(boot, ts, unit):
    clocks = fld(1, 2, fld(1, 0, 6) + fld(2, 0, boot)) + fld(1, 2, fld(1, 0, 64) + fld(2, 0, ts) + fld(4, 0, unit))
    return fld(6, 2, clocks) + fld(58, 0, 64)


def rank_json(rank, base, off, ts_us):
    return (b'{"baseTimeNanoseconds": %d, "distributedInfo": {"rank": %d, "world_size": 2, "clock_offset_ns": %d, '
            b'"clock_uncertainty_ns": 0, "clock_sync_at_ns": 0}, "traceEvents": [{"ph": "X", "cat": "cpu_op", '
            b'"name": "op", "pid": 1, "tid": 1, "ts": %d, "dur": 1}]}' % (base, rank, off, ts_us))


L61 = 1 << 61
shapes = [
    THREAD + batch(b"".join(pkt(fld(10, 0, 100 + k)) for k in range(2000))) + begin(100, b"op"),
    THREAD + batch(b"".join(pkt(fld(10, 0, 100 + k) + fld(59, 2, fld(58, 0, 64))) for k in range(500))),
    THREAD + batch(pkt(b"") * 8192) + batch(pkt(b"") * 8192) + begin(100, b"op"),
    THREAD + pkt(fld(10, 0, 2) + snapshot(1000, 1 << 62, 1000) + fld(8, 0, 1)
                 + fld(11, 2, fld(11, 0, 9) + fld(9, 0, 1) + fld(23, 2, b"op"))),
    THREAD + begin(100, b"op") + meta(b"clock_offset_ns", -6900000000000000000),
    THREAD + begin(100, b"n" * 4096),
    rank_json(0, L61, L61, L61 // 1000),
    rank_json(1, -L61, -L61, 0),
    rank_json(0, L61, 3 * L61, 0),
    gzip.compress(b'{"traceEvents": [' + b" " * (1 << 16) + b"]}", 9, mtime=0),
    gzip.compress(b'[{"ph": "X", "name": "' + b"a" * (1 << 16) + b'", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]', 9, mtime=0),
]

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
for s in shapes:
    name = hashlib.sha1(s).hexdigest()
    with open(os.path.join(out, name), "wb") as f:
        f.write(s)
    print(name, len(s))
