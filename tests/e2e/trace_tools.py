#!/usr/bin/env python3
"""trace_tools.py ROOT: scripts/trace_check.py and scripts/trace2svg.py on synthetic traces.

The validator must pass a well-formed trace and fail each broken one (bad nesting,
overlapping siblings, a missing rank, spans of an unnamed process, loop parts longer than
the loop, malformed JSON, a negative duration, a B without its E) with the reason; the
renderer must draw every rank's row in the kinds' colours with tooltips, an axis and a
legend, crop to a window, and merge spans narrower than a pixel.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile
import xml.dom.minidom

ROOT = sys.argv[1]
CHECK = os.path.join(ROOT, "scripts", "trace_check.py")
SVG = os.path.join(ROOT, "scripts", "trace2svg.py")
failures = []


def meta(rank):
    pid = rank + 1
    return [{"ph": "M", "pid": pid, "tid": pid, "name": "process_name",
             "args": {"name": "rank %d (host, pid %d)" % (rank, 100 + rank)}}]


def x(rank, name, cat, ts, dur, **args):
    pid = rank + 1
    return {"name": name, "cat": cat, "ph": "X", "pid": pid, "tid": pid, "ts": ts, "dur": dur,
            "args": args}


def good():
    ev = []
    for r in range(2):
        ev += meta(r)
        ev.append(x(r, "load_triplets (a.orn:3)", "io", 0, 50, path="a.txt"))
        ev.append(x(r, "allreduce", "transfer", 10, 5, peer="all", sent=48, received=48))
        ev.append(x(r, "a.orn:7 (2d)", "loop", 100, 100, compute_s=40e-6, wait_s=20e-6,
                    transfer_s=10e-6, flush_s=0.0))
        ev.append(x(r, "setup", "phase", 101, 9))
        ev.append(x(r, "repartition", "transfer", 102, 6, sent=1024, received=1024))
        ev.append(x(r, "block", "compute", 110, 20, tile=r, elements=5))
        ev.append(x(r, "wait for a rotated block", "wait", 130, 20, peer=1 - r, block=0))
        ev.append(x(r, "block", "compute", 150, 20, tile=2 + r, elements=5))
        ev.append(x(r, "send a rotated block", "transfer", 170, 4, peer=1 - r, sent=1024))
        # a B/E pair is a span too
        ev.append({"name": "flush W", "cat": "flush", "ph": "B", "pid": r + 1, "tid": r + 1, "ts": 180})
        ev.append({"ph": "E", "pid": r + 1, "tid": r + 1, "ts": 190, "args": {"deltas": 3}})
    return {"traceEvents": ev, "displayTimeUnit": "ms", "otherData": {"ranks": 2}}


def run(args, path):
    p = subprocess.run([sys.executable] + args + [path], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(name, trace, rc_want, text=None, extra=(), raw=None):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        if raw is not None:
            f.write(raw)
        else:
            json.dump(trace, f)
        path = f.name
    rc, out = run([CHECK] + list(extra), path)
    os.unlink(path)
    if rc != rc_want or (text and text not in out):
        failures.append("%s: exit %d (want %d), output: %s (want %r)" % (name, rc, rc_want, out.strip(), text))


def edit(fn):
    t = copy.deepcopy(good())
    fn(t["traceEvents"])
    return t


def find(ev, rank, name):
    return next(e for e in ev if e.get("pid") == rank + 1 and e.get("name") == name)


# the validator
expect("good", good(), 0, "ok: 2 ranks", ["--require", "loop,compute,wait,transfer,flush,io"])
expect("nesting", edit(lambda ev: find(ev, 1, "setup").update(dur=30)), 1, "not nested")
expect("siblings", edit(lambda ev: find(ev, 0, "wait for a rotated block").update(ts=125)), 1,
       "not nested")
expect("past the loop", edit(lambda ev: find(ev, 0, "send a rotated block").update(dur=40)), 1,
       "not nested")
expect("missing rank", good(), 1, "no process for rank 2", ["--ranks", "3"])
expect("rank without spans", edit(lambda ev: ev.extend(meta(2))), 1, "no spans from rank 2",
       ["--ranks", "3"])


def drop_rank1(ev):
    ev[:] = [e for e in ev if e.get("pid") != 2]


expect("rank removed", edit(drop_rank1), 1, "no process for rank 1")
expect("unnamed process", edit(lambda ev: ev.append(x(5, "block", "compute", 0, 1))), 1,
       "no process_name")
expect("loop arguments", edit(lambda ev: find(ev, 0, "a.orn:7 (2d)")["args"].update(compute_s=1e-3)),
       1, "more than the loop")


def crowd(ev):
    # children that do not overlap but add up to more than the loop cannot exist when the
    # nesting holds; what the sum check catches is a loop whose runtime totals overflow it
    find(ev, 1, "a.orn:7 (2d)")["args"].update(wait_s=90e-6)


expect("loop totals", edit(crowd), 1, "more than the loop")
expect("required kind", good(), 1, "no 'counter' spans from rank 0", ["--require", "counter"])
expect("malformed JSON", None, 1, "not a readable JSON", raw='{"traceEvents": [')
expect("array form", None, 1, "not an object", raw="[]")
expect("negative dur", edit(lambda ev: find(ev, 0, "block").update(dur=-1)), 1, "dur >= 0")
expect("B without E", edit(lambda ev: ev.append({"name": "x", "cat": "wait", "ph": "B", "pid": 1,
                                                  "tid": 1, "ts": 195})), 1, "never ends")

# the renderer
with tempfile.TemporaryDirectory() as d:
    src, out = os.path.join(d, "t.json"), os.path.join(d, "t.svg")
    json.dump(good(), open(src, "w"))
    rc, msg = run([SVG, "-o", out], src)
    if rc != 0:
        failures.append("trace2svg failed: " + msg)
    else:
        doc = xml.dom.minidom.parse(out)

        def own(e):
            return "".join(c.data for c in e.childNodes if c.nodeType == c.TEXT_NODE)

        fills = [r.getAttribute("fill") for r in doc.getElementsByTagName("rect")]
        titles = [own(t) for t in doc.getElementsByTagName("title")]
        texts = " ".join(own(t) for t in doc.getElementsByTagName("text"))
        for colour, kind in (("#2e9e44", "compute"), ("#d9412b", "wait"), ("#2f6fce", "transfer"),
                             ("#f08c1a", "flush"), ("#8a5cc7", "io"), ("#9a9a9a", "loop")):
            if fills.count(colour) < 3:  # two ranks and the legend
                failures.append("svg: too few %s bars (%s)" % (kind, colour))
        for want in ("rank 0", "rank 1", "time", "compute", "wait", "transfer", "100 us"):
            if want not in texts:
                failures.append("svg: no text %r" % want)
        if not any("sent: 1.0 KiB" in t and "peer: 0" in t for t in titles):
            failures.append("svg: no tooltip with bytes and peer")
        if any(s.tagName in ("script", "image", "a") for s in doc.getElementsByTagName("*")):
            failures.append("svg: not standalone")
    # a window: spans outside it are not drawn
    rc, msg = run([SVG, "-o", out, "--start", "0.1", "--end", "0.2"], src)
    if rc == 0:
        titles = [t.firstChild.data for t in xml.dom.minidom.parse(out).getElementsByTagName("title")
                  if t.firstChild]
        if any(t.startswith("load_triplets") for t in titles):
            failures.append("svg --start/--end: a span outside the window is drawn")
    else:
        failures.append("trace2svg with a window failed: " + msg)
    # 20000 spans of 0.1 us side by side: merged, not 20000 rects
    ev = meta(0) + [x(0, "block", "compute", i * 0.1, 0.1) for i in range(20000)]
    json.dump({"traceEvents": ev, "displayTimeUnit": "ms"}, open(src, "w"))
    rc, msg = run([SVG, "-o", out], src)
    if rc != 0:
        failures.append("trace2svg of many spans failed: " + msg)
    else:
        n = len(xml.dom.minidom.parse(out).getElementsByTagName("rect"))
        if n > 200:
            failures.append("svg: %d rects for 20000 spans narrower than a pixel" % n)
    rc, msg = run([SVG, "-o", out], os.path.join(d, "missing.json"))
    if rc == 0:
        failures.append("trace2svg of a missing file succeeded")

for f in failures:
    print("FAIL: " + f, file=sys.stderr)
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
