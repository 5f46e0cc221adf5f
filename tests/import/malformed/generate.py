#!/usr/bin/env python3
"""Writes the malformed-trace corpus and expected.txt (file, byte offset, message).

Each case is a trace the reader must refuse with OPPROF_E_PARSE and the message
"PATH: byte OFFSET: ..." on one line; the CLI must exit 2. Offsets count from 0
in the JSON text (in the compressed bytes for gzip errors). Run it again after
changing a case; the files are committed so the tests need no Python.
"""
import gzip, io, os

HERE = os.path.dirname(os.path.abspath(__file__))

def ev(**kw):
    base = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5}
    base.update(kw)
    return base

def js(v):
    import json
    return json.dumps(v).encode()

def at(doc, needle, nth=0):
    i = -1
    for _ in range(nth + 1):
        i = doc.index(needle, i + 1)
    return i

cases = []
def case(name, doc, off, msg):
    cases.append((name, doc, off, msg))

good = b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]'
case("empty.json", b"", 0, "empty input")
case("whitespace.json", b"  \n\t", 4, "empty input")
case("truncated_array.json", good[:30], good[:30].rindex(b'"'), "unterminated string")
case("truncated_after_value.json", good[:-1], len(good) - 1, "unexpected end of input")
d = b'{"traceEvents": [' + good[1:-1] + b', '
case("truncated_object.json", d, len(d), "unexpected end of input")
case("not_a_trace.json", b"42", 0, "a trace is a JSON array of events")
case("no_trace_events.json", b'{"schemaVersion": 1}', 19, 'no "traceEvents" array')
d = b'{"traceEvents": {"a": 1}}'
case("trace_events_not_array.json", d, at(d, b"{", 1), '"traceEvents" is not an array')
d = b'[{"ph": "f"}, 5]'
case("event_not_object.json", d, at(d, b"5"), "an event is not an object")
d = b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2},]'
case("trailing_comma.json", d, at(d, b"]"), "unexpected ']'")
d = b'[{"ph" "X"}]'
case("missing_colon.json", d, at(d, b'"X"'), "expected ':'")
d = b'[{ph: "X"}]'
case("unquoted_key.json", d, 2, "member name in quotes")
d = good + b" []"
case("trailing_data.json", d, len(good) + 1, "after the JSON value")
d = b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": NaN}]'
case("nan.json", d, at(d, b"NaN"), "unexpected 'N'")
d = b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": Infinity}]'
case("infinity.json", d, at(d, b"Inf"), "unexpected 'I'")
d = js([ev(ts=1e300)]).replace(b"1e+300", b"1e400")
case("ts_1e400.json", d, at(d, b"1e400"), '"ts" is out of range')
d = js([ev(dur=-1e300)]).replace(b"-1e+300", b"-1e400")
case("dur_minus_1e400.json", d, at(d, b"-1e400"), '"dur" is out of range')
d = js([ev(ts=9.3e15)])
case("ts_overflow_ns.json", d, at(d, b"9300000000000000.0"), '"ts" is out of range')
d = js([ev(ts="10")])
case("ts_string.json", d, at(d, b'"10"'), '"ts" is not a number')
d = js([ev(name=5)])
case("name_number.json", d, at(d, b"5,"), '"name" is not a string')
d = js([ev(pid=1.5)])
case("pid_fraction.json", d, at(d, b"1.5"), '"pid" is not an integer')
d = js([ev(pid=[1])])
case("pid_array.json", d, at(d, b"[1]"), '"pid" is neither an integer nor a string')
d = js([ev(args=[1, 2])])
case("args_array.json", d, at(d, b"[1, 2]"), '"args" is not an object')
d = js([ev(args={"correlation": "7"})])
case("correlation_string.json", d, at(d, b'"7"'), '"args.correlation" is not a number')
d = js([ev(args={"External id": 1e30})])
case("external_id_huge.json", d, at(d, b"1e+30"), '"args.External id" is not an integer')
d = js([ev(args={"Input Dims": "[1, 2]"})])
case("input_dims_string.json", d, at(d, b'"[1, 2]"'), '"args.Input Dims" is not an array')
d = js([ev(args={"flops": -5})])
case("flops_negative.json", d, at(d, b"-5"), '"args.flops" is out of range')
e = ev(); del e["ts"]
d = js([e])
case("missing_ts.json", d, 1, 'event has no "ts"')
e = ev(); del e["name"]
d = js([{"ph": "f", "pid": 1}, e])
case("missing_name.json", d, at(d, b"{", 1), 'event has no "name"')
e = ev(); del e["tid"]
d = js([e])
case("missing_tid.json", d, 1, 'event has no "tid"')
d = js([{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 3, "args": {"Addr": 5}}])
case("memory_without_bytes.json", d, 1, 'event has no "args.Bytes"')
d = js([{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 3, "args": {"Bytes": 0.5}}])
case("memory_bytes_fraction.json", d, at(d, b"0.5"), '"args.Bytes" is not an integer')
d = js([ev(ts=9.2e15, dur=9.2e15)])
case("end_overflow.json", d, 1, "ends past the largest time")
d = b'{"skipped": ' + b"[" * 100000
case("deep_arrays.json", d, 12 + 255, "nesting deeper than 256")
d = b'[{"ph": "X", "args": ' + b'{"a": ' * 300 + b"1" + b"}" * 300 + b"}]"
case("deep_args.json", d, len(b'[{"ph": "X", "args": ') + 254 * 6, "nesting deeper than 256")
d = b'[{"ph": "X", "name": "a\xffb", "pid": 1, "tid": 1, "ts": 1}]'
case("utf8_invalid_byte.json", d, at(d, b"\xff"), "invalid UTF-8")
d = b'[{"ph": "X", "name": "a\xc0\x80b", "pid": 1, "tid": 1, "ts": 1}]'
case("utf8_overlong.json", d, at(d, b"\xc0"), "invalid UTF-8")
d = b'[{"ph": "X", "name": "a\xed\xa0\x80b", "pid": 1, "tid": 1, "ts": 1}]'
case("utf8_surrogate.json", d, at(d, b"\xed"), "invalid UTF-8")
d = b'[{"ph": "X", "name": "a\\ud800b", "pid": 1, "tid": 1, "ts": 1}]'
case("lone_surrogate_escape.json", d, at(d, b"\\u"), "lone UTF-16 surrogate")
d = b'[{"ph": "X", "name": "a\x01b", "pid": 1, "tid": 1, "ts": 1}]'
case("control_char.json", d, at(d, b"\x01"), "control character")
d = b'[{"ph": "X", "name": "a\\qb", "pid": 1, "tid": 1, "ts": 1}]'
case("bad_escape.json", d, at(d, b"\\q"), "invalid escape")
d = b'[{"ph": "X", "name": "abc}]'
case("unterminated_string.json", d, at(d, b'"abc'), "unterminated string")
d = b'[{"ph": "X", "ts": 01}]'
case("leading_zero.json", d, at(d, b"01"), "invalid number '01'")
d = b'[{"ph": "X", "ts": 1.}]'
case("number_dot.json", d, at(d, b"1."), "invalid number")
d = b'[{"ph": "X", "ts": tru}]'
case("bad_literal.json", d, at(d, b"tru"), "invalid literal")
d = b'[{"ph": "f"}\x00]'
case("nul_byte.json", d, at(d, b"\x00"), "unexpected byte 0x00")

# gzip: corrupt data after a valid header, a stream cut short, garbage after it.
gz = gzip.compress(js([ev() for _ in range(200)]), mtime=0)
bad = bytearray(gz); bad[20:40] = b"\xff" * 20
case("gzip_corrupt.json.gz", bytes(bad), None, "corrupt gzip stream")
case("gzip_truncated.json.gz", gz[: len(gz) // 2], len(gz) // 2, "truncated gzip stream")
case("gzip_trailing_garbage.json.gz", gz + b"garbage", len(gz), "data after the end of the gzip stream")
case("gzip_header_only.json.gz", gz[:10], 10, "truncated gzip stream")
case("gzip_magic_only.json.gz", b"\x1f\x8b", 2, "truncated gzip stream")
case("gzip_of_garbage.json.gz", gzip.compress(b"\x00not json", mtime=0), 0, "unexpected byte 0x00")

with open(os.path.join(HERE, "expected.txt"), "w") as f:
    f.write("# file<TAB>byte offset (- when it depends on zlib)<TAB>text the message contains\n")
    for name, doc, off, msg in cases:
        with open(os.path.join(HERE, name), "wb") as g:
            g.write(doc)
        f.write(f"{name}\t{'-' if off is None else off}\t{msg}\n")
print(len(cases), "cases")
