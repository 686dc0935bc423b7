#!/usr/bin/env python3
"""trace_check.py: validate a Chrome trace-event file written by an Orion timeline
(--timeline=FILE, $ORN_TIMELINE; docs/observability.md). Python 3 standard library only.

    scripts/trace_check.py trace.json [--ranks N] [--require CAT,CAT...] [--quiet] [--overlap]

Checks, and reports every failure (exit 1; 0 when the trace passes, 2 on bad usage):
  - the file is JSON, an object {"traceEvents": [...], "displayTimeUnit": ...};
  - every event has ph, pid, tid; every span (ph "X", or a B/E pair) has a name, a numeric
    ts and a dur >= 0; B and E events pair up per (pid, tid);
  - events from every rank: ranks 0..N-1 each a process (its process_name "rank R ...")
    with spans, and no spans from a process without one (N from --ranks, else
    otherData.ranks, else the processes named);
  - spans are properly nested per (pid, tid): a span that starts inside another ends inside
    it (children inside their parents, siblings disjoint);
  - per loop span (cat "loop"): its outermost compute, wait, transfer and flush spans add up
    to no more than the loop (a small tolerance), and so do the runtime's own totals in its
    arguments (compute_s, wait_s, transfer_s, flush_s);
  - --require: each category given has at least one span on every rank;
  - transfers in flight (cat "flight": "b"/"e" pairs with an id, dsm/xferq.h) pair up per
    (pid, id), end no earlier than they begin, and carry their bytes.
--overlap also prints, per rank, how much of the time its sends were in flight (the union of
their intervals, each from its queueing to its completion) it spent computing (its compute
spans): the share of its outgoing communication that ran behind computation. (A receive is
posted ahead, often long before its sender starts: its interval is not the link's time.)
"""
import argparse
import json
import re
import sys

EPS_US = 0.002  # timestamps are rounded to whole nanoseconds
REL_TOL = 1e-3  # the loop accounting's relative tolerance
WORK = ("compute", "wait", "transfer", "flush")


class Span:
    __slots__ = ("name", "cat", "pid", "tid", "ts", "dur", "args", "children", "index")

    def __init__(self, ev, index, dur):
        self.name = ev.get("name")
        self.cat = ev.get("cat", "")
        self.pid = ev.get("pid")
        self.tid = ev.get("tid")
        self.ts = ev.get("ts")
        self.dur = dur
        self.args = ev.get("args") or {}
        self.children = []
        self.index = index

    @property
    def end(self):
        return self.ts + self.dur

    def where(self):
        return "span #%d %r (cat %r, pid %s, tid %s, ts %.3f, dur %.3f)" % (
            self.index, self.name, self.cat, self.pid, self.tid, self.ts, self.dur)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def load(path, errors):
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        errors.append("not a readable JSON file: %s" % e)
        return None
    if not isinstance(data, dict):
        errors.append("the top level is not an object {\"traceEvents\": [...]}")
        return None
    if not isinstance(data.get("traceEvents"), list):
        errors.append("no traceEvents list")
        return None
    if data.get("displayTimeUnit") not in ("ms", "ns"):
        errors.append("displayTimeUnit is %r, not \"ms\" or \"ns\"" % data.get("displayTimeUnit"))
    return data


def collect_spans(events, errors):
    """X events, and B/E pairs matched per (pid, tid), as Spans; process names by pid."""
    spans, names, open_b = [], {}, {}
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            errors.append("event #%d is not an object" % i)
            continue
        ph = ev.get("ph")
        if ph is None or "pid" not in ev:
            errors.append("event #%d has no ph or pid" % i)
            continue
        if ph == "M":
            if ev.get("name") == "process_name":
                names[ev["pid"]] = (ev.get("args") or {}).get("name", "")
            continue
        if ph not in ("X", "B", "E"):
            continue  # instants, counters, flows: not spans
        if "tid" not in ev:
            errors.append("event #%d has no tid" % i)
            continue
        if ph != "E" and not isinstance(ev.get("name"), str):
            errors.append("event #%d has no name" % i)
            continue
        if not is_num(ev.get("ts")):
            errors.append("event #%d (%r) has no numeric ts" % (i, ev.get("name")))
            continue
        key = (ev["pid"], ev["tid"])
        if ph == "X":
            dur = ev.get("dur")
            if not is_num(dur) or dur < 0:
                errors.append("event #%d (%r) has no dur >= 0" % (i, ev.get("name")))
                continue
            spans.append(Span(ev, i, float(dur)))
        elif ph == "B":
            open_b.setdefault(key, []).append((i, ev))
        else:
            stack = open_b.get(key)
            if not stack:
                errors.append("event #%d: an E with no open B on pid %s tid %s" % (i, key[0], key[1]))
                continue
            j, b = stack.pop()
            merged = dict(b)
            args = dict(b.get("args") or {})
            args.update(ev.get("args") or {})
            merged["args"] = args
            if ev["ts"] < b["ts"]:
                errors.append("event #%d: E before its B (#%d)" % (i, j))
                continue
            spans.append(Span(merged, j, float(ev["ts"] - b["ts"])))
    for key, stack in open_b.items():
        for j, b in stack:
            errors.append("event #%d: B %r on pid %s tid %s never ends" % (j, b.get("name"), key[0], key[1]))
    return spans, names


def collect_flights(events, errors):
    """Flights ("b"/"e" pairs of cat "flight") per pid: [(ts0, ts1, args)]."""
    flights, open_f = {}, {}
    for i, ev in enumerate(events):
        if not isinstance(ev, dict) or ev.get("cat") != "flight" or ev.get("ph") not in ("b", "e"):
            continue
        key = (ev.get("pid"), ev.get("id"))
        if key[1] is None or not is_num(ev.get("ts")):
            errors.append("event #%d: a flight without an id or a numeric ts" % i)
            continue
        if ev["ph"] == "b":
            if key in open_f:
                errors.append("event #%d: flight id %r begins twice on pid %s" % (i, key[1], key[0]))
            open_f[key] = (i, ev)
            continue
        if key not in open_f:
            errors.append("event #%d: a flight end with no begin (id %r, pid %s)" % (i, key[1], key[0]))
            continue
        j, b = open_f.pop(key)
        if ev["ts"] < b["ts"]:
            errors.append("event #%d: flight %r ends before it begins" % (i, key[1]))
            continue
        args = b.get("args") or {}
        if not is_num(args.get("bytes")):
            errors.append("event #%d: flight %r without its bytes" % (j, key[1]))
        flights.setdefault(key[0], []).append((float(b["ts"]), float(ev["ts"]), args))
    for key, (j, b) in open_f.items():
        errors.append("event #%d: flight %r on pid %s never ends" % (j, key[1], key[0]))
    return flights


def union(intervals):
    """Disjoint sorted intervals covering the given ones."""
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def covered(intervals, by):
    """Length of intervals (disjoint, sorted) covered by `by` (disjoint, sorted)."""
    total, j = 0.0, 0
    for a, b in intervals:
        while j < len(by) and by[j][1] <= a:
            j += 1
        k = j
        while k < len(by) and by[k][0] < b:
            total += min(b, by[k][1]) - max(a, by[k][0])
            k += 1
    return total


def print_overlap(spans, flights, rank_of):
    for pid, r in sorted(rank_of.items(), key=lambda x: x[1]):
        fl = flights.get(pid, [])
        sent = sum(f[2].get("bytes", 0) for f in fl if f[2].get("dir") == "send")
        recv = sum(f[2].get("bytes", 0) for f in fl if f[2].get("dir") == "receive")
        busy = union([(a, b) for a, b, g in fl if g.get("dir") == "send"])
        comp = union([(s.ts, s.end) for s in spans if s.pid == pid and s.cat == "compute"])
        t_busy = sum(b - a for a, b in busy)
        t_both = covered(busy, comp)
        t_comp = sum(b - a for a, b in comp)
        print("rank %d: %d transfers (%.2f MB sent, %.2f MB received); sends in flight %.1f ms, "
              "%.1f ms of it (%.0f %%) while computing; computing %.1f ms" % (
                  r, len(fl), sent / 1e6, recv / 1e6, t_busy / 1e3, t_both / 1e3,
                  100.0 * t_both / t_busy if t_busy else 0.0, t_comp / 1e3))


def nest(spans, errors):
    """Build the tree per (pid, tid); report spans that overlap without nesting."""
    by_thread = {}
    for s in spans:
        by_thread.setdefault((s.pid, s.tid), []).append(s)
    roots = []
    for key in sorted(by_thread, key=str):
        lst = sorted(by_thread[key], key=lambda s: (s.ts, -s.dur, s.index))
        stack = []
        for s in lst:
            while stack and s.ts >= stack[-1].end - EPS_US:
                stack.pop()
            if stack:
                parent = stack[-1]
                if s.end > parent.end + EPS_US:
                    errors.append("not nested: %s starts inside %s but ends %.3f us after it" % (
                        s.where(), parent.where(), s.end - parent.end))
                    continue
                parent.children.append(s)
            else:
                roots.append(s)
            stack.append(s)
    return roots


def work_spans(span):
    """The outermost compute, wait, transfer and flush spans below span."""
    out = []
    for c in span.children:
        if c.cat in WORK:
            out.append(c)
        else:
            out.extend(work_spans(c))
    return out


def all_spans(roots):
    stack = list(roots)
    while stack:
        s = stack.pop()
        yield s
        stack.extend(s.children)


def check_loops(roots, errors):
    loops = 0
    for s in all_spans(roots):
        if s.cat != "loop":
            continue
        loops += 1
        limit = s.dur * (1 + REL_TOL) + EPS_US
        parts = work_spans(s)
        total = sum(p.dur for p in parts)
        if total > limit:
            errors.append("%s: its compute, wait, transfer and flush spans add up to %.3f us, more "
                          "than the loop" % (s.where(), total))
        own = [s.args.get(k) for k in ("compute_s", "wait_s", "transfer_s", "flush_s")]
        if all(is_num(v) for v in own):
            if any(v < 0 for v in own):
                errors.append("%s: a negative time in its arguments" % s.where())
            elif sum(own) * 1e6 > limit:
                errors.append("%s: compute_s + wait_s + transfer_s + flush_s = %.3f us, more than "
                              "the loop" % (s.where(), sum(own) * 1e6))
    return loops


def main(argv):
    ap = argparse.ArgumentParser(description="Validate an Orion timeline (Chrome trace-event JSON).")
    ap.add_argument("trace")
    ap.add_argument("--ranks", type=int, help="the number of ranks the trace must hold")
    ap.add_argument("--require", default="", help="categories every rank must have spans of (comma-separated)")
    ap.add_argument("--quiet", action="store_true", help="print failures only")
    ap.add_argument("--overlap", action="store_true",
                    help="print per rank the share of its transfers' time in flight spent computing")
    a = ap.parse_args(argv)
    errors = []
    data = load(a.trace, errors)
    if data is None:
        for e in errors:
            print("%s: %s" % (a.trace, e), file=sys.stderr)
        return 1
    spans, names = collect_spans(data["traceEvents"], errors)
    flights = collect_flights(data["traceEvents"], errors)
    # each rank is one process, named "rank R ..." by its process_name
    rank_of = {}
    for pid, name in names.items():
        m = re.match(r"rank (\d+)\b", name or "")
        if not m:
            errors.append("the process_name of pid %r does not name a rank: %r" % (pid, name))
        elif int(m.group(1)) in rank_of.values():
            errors.append("two processes are named rank %s" % m.group(1))
        else:
            rank_of[pid] = int(m.group(1))
    for pid in sorted({s.pid for s in spans} - set(rank_of), key=str):
        errors.append("spans from pid %r, which has no process_name naming its rank" % pid)
    ranks = a.ranks
    if ranks is None:
        ranks = (data.get("otherData") or {}).get("ranks")
    if not isinstance(ranks, int):
        ranks = len(rank_of)
    for r in range(ranks):
        pids = [p for p, q in rank_of.items() if q == r]
        if not pids:
            errors.append("no process for rank %d" % r)
        elif not any(s.pid == pids[0] for s in spans):
            errors.append("no spans from rank %d" % r)
    for pid, r in rank_of.items():
        if r >= ranks:
            errors.append("a process for rank %d, but the trace has %d ranks" % (r, ranks))
    roots = nest(spans, errors)
    loops = check_loops(roots, errors)
    for cat in [c for c in a.require.split(",") if c]:
        for pid, r in sorted(rank_of.items(), key=lambda x: x[1]):
            if not any(s.pid == pid and s.cat == cat for s in spans):
                errors.append("no %r spans from rank %d" % (cat, r))
    if errors:
        for e in errors[:50]:
            print("%s: %s" % (a.trace, e), file=sys.stderr)
        if len(errors) > 50:
            print("%s: ... and %d more" % (a.trace, len(errors) - 50), file=sys.stderr)
        return 1
    if not a.quiet:
        print("%s: ok: %d ranks, %d spans, %d loop runs, properly nested" % (a.trace, ranks, len(spans), loops))
    if a.overlap:
        print_overlap(spans, flights, rank_of)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
