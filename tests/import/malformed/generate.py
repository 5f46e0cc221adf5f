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
# Times are kept within 2^61 ns of 0, so that every end, difference and sum
# of two fits in 64 bits (issue 16): each part is refused before the end is.
d = js([ev(ts=9.2e15, dur=9.2e15)])
case("end_overflow.json", d, at(d, b"9200000000000000.0"), '"ts" is out of range')
d = b'[{"ph":"X","name":"a","ts":-9223372036854775,"dur":0,"pid":1,"tid":1},' \
    b'{"ph":"X","name":"b","ts":9223372036854775,"dur":0,"pid":1,"tid":1}]'
case("ts_span_overflow.json", d, at(d, b"-922"), '"ts" is out of range')
d = js([ev(ts=0, dur=9223372036854775)])
case("dur_2_pow_63_ns.json", d, at(d, b"922"), '"dur" is out of range')
d = js([ev(ts=2305843009213694)])
case("ts_just_past_2_pow_61_ns.json", d, at(d, b"230"), '"ts" is out of range')
d = js({"distributedInfo": {"rank": 0, "world_size": 2, "clock_offset_ns": 9223372036854775807,
                            "clock_uncertainty_ns": 1, "clock_sync_at_ns": 0}, "traceEvents": [ev()]})
case("clock_offset_int64_max.json", d, at(d, b"9223372036854775807"),
     'distributedInfo "clock_offset_ns" is out of range')
d = js({"distributedInfo": {"rank": 1, "world_size": 2, "clock_offset_ns": -9223372036854775808,
                            "clock_uncertainty_ns": 1, "clock_sync_at_ns": 0}, "traceEvents": [ev()]})
case("clock_offset_int64_min.json", d, at(d, b"-9223372036854775808"),
     'distributedInfo "clock_offset_ns" is out of range')
# memory events: their times meet the same bound (the memory timestamps)
d = b'[{"ph":"i","s":"t","name":"[memory]","ts":-9223372036854775,"pid":1,"tid":1,"args":{"Bytes":1}},' \
    b'{"ph":"i","s":"t","name":"[memory]","ts":9223372036854775,"pid":1,"tid":1,"args":{"Bytes":1}}]'
case("memory_ts_span_overflow.json", d, at(d, b"-922"), '"ts" is out of range')
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
# zero padding after the stream is accepted (as gzip does); anything after it is not
case("gzip_zero_padding_then_garbage.json.gz", gz + b"\0" * 512 + b"x", len(gz) + 512,
     "data after the zero padding")
case("gzip_header_only.json.gz", gz[:10], 10, "truncated gzip stream")
case("gzip_magic_only.json.gz", b"\x1f\x8b", 2, "truncated gzip stream")
case("gzip_of_garbage.json.gz", gzip.compress(b"\x00not json", mtime=0), 0, "unexpected byte 0x00")

# Hostile input (issue 9): deep nesting of every kind, strings and numbers far
# longer than the file that holds them or than any time, NaN / Infinity /
# 1e400 spellings, gzip headers and trailers that claim what is not there.
d = b'{"a": ' * 2000
case("deep_objects.json", d, 6 * 256, "nesting deeper than 256")
d = b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"Input Dims": ' + b"[" * 300 + b"]" * 300 + b"}}]"
case("deep_input_dims.json", d, at(d, b"[[[") + 256 - 3, "nesting deeper than 256")
d = b'[{"ph": "X", "name": "' + b"a" * (64 << 10)
case("string_never_ends.json", d, at(d, b'"a'), "unterminated string")
# 15 MiB of string (under the 16 MiB token bound) from a 15 KiB file: the reader
# holds what it decodes, never what a file claims, and stops at the end of the data.
d = gzip.compress(b'[{"ph": "X", "name": "' + b"a" * (15 << 20), 9, mtime=0)
case("gzip_string_never_ends.json.gz", d, 21, "unterminated string")
gz1 = gzip.compress(js([ev()]), mtime=0)
case("gzip_isize_1gib.json.gz", gz1[:-4] + (1 << 30).to_bytes(4, "little"), None, "incorrect length check")
case("gzip_crc_wrong.json.gz", gz1[:-8] + b"\0\0\0\0" + gz1[-4:], None, "incorrect data check")
d = b"\x1f\x8b\x08\x08" + b"\0" * 4 + b"\0\x03" + b"n" * 5000  # FNAME that never ends
case("gzip_name_never_ends.json.gz", d, len(d), "truncated gzip stream")
d = b"\x1f\x8b\x08\x04" + b"\0" * 4 + b"\0\x03" + (65535).to_bytes(2, "little") + b"x" * 100  # FEXTRA of 64 KiB
case("gzip_extra_claims_64k.json.gz", d, len(d), "truncated gzip stream")
d = b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": NaN}]'
case("dur_nan.json", d, at(d, b"NaN"), "unexpected 'N'")
d = b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": -Infinity}]'
case("dur_minus_infinity.json", d, at(d, b"-Inf"), "invalid number '-'")
d = b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1e99999999999999999999, "dur": 2}]'
case("ts_exponent_huge.json", d, at(d, b"1e9"), '"ts" is out of range')
d = b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1' + b"0" * 5000 + b', "dur": 2}]'
case("ts_5000_digits.json", d, at(d, b"10"), '"ts" is out of range')
d = b'[{"ph": "X", "name": "a", "pid": 9223372036854775808, "tid": 1, "ts": 1, "dur": 2}]'
case("pid_2_pow_63.json", d, at(d, b"922"), '"pid" is not an integer in range')
# found by the fuzzer: a multi-byte sequence cut by the end of the data, then a
# gzip trailer that does not match; the UTF-8 error comes first however the
# bytes arrive (it did not when the reader asked for four bytes at once).
for n in (1, 2):
    gz = gzip.compress(b'[{"ph": "X", "name": "' + b"z" * 3000 + b"\xe0\xc0P"[: n + 1], mtime=0)
    case(f"gzip_utf8_cut_then_crc{n}.json.gz", gz[:-8] + b"\xff" * 4 + gz[-4:], 3022, "invalid UTF-8")
# found by the fuzzer: a stream cut just after a long match; zlib still held
# part of the match when the compressed bytes ran out, and a reader with a
# small buffer lost it (and so reported the truncation, not the event's error).
import base64
d = base64.b64decode("H4sIAAAAAAACA+3MMQrCMABA0auUzB10cMlJBBEJbaEOqUHTSby7yeQNnN72+cO7vENZQxzCOYxDmFLtPZX99ih9bCkv/aS6"
                     "bDHm3F+5z20dW9VfvXocWs37s+XpMw5kMplMJpPJZDKZTCaTyWQymUwmk8lkMmU=")
case("gzip_truncated_in_a_match.json.gz", d, 6751, 'event has no "pid"')
d = b'{"traceEvents": [], "traceEvents": [{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}'
case("duplicate_trace_events.json", d, at(d, b"[", 1), 'a second "traceEvents" array')

# Hostile input the reader accepts, each with a documented behaviour that
# tests/import/test_import_hostile.c checks: ../accepted/.
accepted = {
    # a negative duration is an empty range
    "negative_dur.json": js([ev(name="a", ts=0, dur=-5), ev(name="b", ts=20)]),
    # a member given twice: the last one counts, as in Python's json
    "duplicate_keys.json": b'[{"ph": "X", "name": "x", "name": "y", "pid": 1, "tid": 1, "ts": 0, "dur": 2, '
                           b'"ts": 7, "dur": 3}, {"ph": "X", "name": "z", "pid": 1, "tid": 1, "ts": 0, "dur": 1}]',
    # ... a whole "args" object too
    "duplicate_args.json": b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 2, "args": {"flops": 5}, '
                           b'"args": {"Input Dims": [[1]]}}]',
    # times below a nanosecond round to 0; negative times are rebased
    "ts_tiny.json": b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1e-400, "dur": 2}]',
    "ts_negative.json": js([ev(name="a", ts=-100), ev(name="b", ts=50), ev(name="c", ts=-0.0)]),
    # 5000 fraction digits: exact decimal arithmetic, 1.000...01 us is 1000 ns
    "ts_5000_fraction_digits.json": b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1.' + b"0" * 5000
                                    + b'1, "dur": 2}, {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 0, "dur": 1}]',
    # NaN, Infinity and 1e400 spelled as strings where the reader looks at nothing
    "nan_in_unused_fields.json": b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2, '
                                 b'"args": {"x": "NaN", "y": 1e400, "z": [-1e400, "Infinity"]}, "id": 1e400}]',
    # 255 levels of nesting in a value the reader skips: within the bound
    "deep_255_skipped.json": b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"x": '
                             + b"[" * 253 + b"]" * 253 + b"}}]",
    # opprof's own metadata
    "incomplete_dropped.json": b'{"incomplete": true, "droppedEvents": 12, "traceEvents": [' + js([ev()])[1:-1] + b"]}",
    # sums past 64 bits (issue 16): each value is valid, their sums saturate
    # and the table says so
    "dur_sum_saturates.json": js([ev(name="n", ts=0, dur=2305843009213693, tid=t) for t in range(5)]),
    # five kernels of just under 2^61 ns: opprof diff's device total saturates too
    "device_sum_saturates.json": js([ev(cat="kernel", name="k", pid=0, tid=7, ts=0, dur=2305843009213693)
                                     for _ in range(5)] + [ev(name="n", ts=0, dur=1)]),
    "memory_bytes_int64_max.json": js([ev(name="op", ts=0, dur=10)] + [
        {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": k,
         "args": {"Bytes": 9223372036854775807, "Addr": k}} for k in (1, 2)]),
    "incomplete_other_types.json": b'{"incomplete": "yes", "droppedEvents": "many", "traceEvents": [' + js([ev()])[1:-1]
                                   + b"]}",
}
acc_dir = os.path.join(HERE, "..", "accepted")
os.makedirs(acc_dir, exist_ok=True)
for name, doc in accepted.items():
    with open(os.path.join(acc_dir, name), "wb") as g:
        g.write(doc)

# a gzip stream followed by the zero padding a tape or block device adds
with open(os.path.join(acc_dir, "gzip_zero_padding.json.gz"), "wb") as g:
    g.write(gzip.compress(js([ev(name="padded")]), mtime=0) + b"\0" * 1000)

with open(os.path.join(HERE, "expected.txt"), "w") as f:
    f.write("# file<TAB>byte offset (- when it depends on zlib)<TAB>text the message contains\n")
    for name, doc, off, msg in cases:
        with open(os.path.join(HERE, name), "wb") as g:
            g.write(doc)
        f.write(f"{name}\t{'-' if off is None else off}\t{msg}\n")
print(len(cases), "refused,", len(accepted), "accepted")
