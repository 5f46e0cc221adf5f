#!/usr/bin/python3
"""Prints the reference table of tests/test_schedule.c from torch itself.

For each configuration it runs torch.profiler.profile with that schedule over
a loop of N steps (one aten::add per step, then p.step()) and records:
  - the action torch.profiler.schedule gives each step 0..N,
  - each on_trace_ready call: p.step_num, how many ProfilerStep events and
    how many aten::add events the ready trace holds,
  - the warnings torch printed.
Run with Debian's python3-torch (1.13): /usr/bin/python3 torch_reference.py
skip_first_wait is newer than 1.13: for those rows the schedule function is
the newer torch's formula (step += wait after skip_first), wrapped the same
way, and the profiler machinery is 1.13's (unchanged since).
"""
import warnings

import torch
from torch.profiler import ProfilerAction, ProfilerActivity, profile, schedule

LETTER = {ProfilerAction.NONE: "N", ProfilerAction.WARMUP: "W",
          ProfilerAction.RECORD: "R", ProfilerAction.RECORD_AND_SAVE: "S"}


def newer_schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    base = schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=0)

    def fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        return base(step)
    return fn


def pattern_schedule(pattern):
    inv = {v: k for k, v in LETTER.items()}
    return lambda step: inv[pattern[step]] if step < len(pattern) else ProfilerAction.NONE


def run(label, nsteps, sched):
    calls = []

    def handler(p):
        names = [e.name for e in p.events()]
        calls.append((p.step_num, sum(n.startswith("ProfilerStep") for n in names),
                      sum(n == "aten::add" for n in names)))

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = sched() if sched else None
        kw = {"schedule": s} if s else {}
        with profile(activities=[ProfilerActivity.CPU], on_trace_ready=handler, **kw) as p:
            for _ in range(nsteps):
                torch.add(torch.ones(2), 1)
                p.step()
        msgs = sorted({str(x.message) for x in w if "schedule" in str(x.message) or "warmup" in str(x.message)})
    actions = "".join(LETTER[s(i)] for i in range(nsteps + 1)) if s else ""
    ready = ", ".join("{%d, %d, %d}" % c for c in calls)
    print('    {"%s", %d, "%s", {%s}, %d, "%s"},' % (label, nsteps, actions, ready, len(calls), " | ".join(msgs)))


run("none", 3, None)
run("seed", 30, lambda: schedule(skip_first=10, wait=5, warmup=1, active=3, repeat=2))
run("doc", 8, lambda: schedule(wait=1, warmup=1, active=2, repeat=1))
run("stop_in_record", 7, lambda: schedule(wait=0, warmup=1, active=2))
run("no_warmup", 12, lambda: schedule(wait=2, warmup=0, active=1, repeat=3))
run("stop_in_save", 20, lambda: schedule(skip_first=3, wait=1, warmup=2, active=3))
run("stop_in_warmup", 17, lambda: schedule(skip_first=3, wait=1, warmup=2, active=3))
run("every_step", 4, lambda: schedule(wait=0, warmup=0, active=1))
run("skip_first_wait", 16, lambda: newer_schedule(skip_first=2, wait=3, warmup=1, active=2, repeat=2, skip_first_wait=1))
run("odd", 9, lambda: pattern_schedule("WNRNRWRSWN"))
