#!/usr/bin/env python3
"""trace2svg.py: render an Orion timeline (Chrome trace-event JSON, --timeline=FILE) as a
standalone SVG Gantt chart: one row per rank, time left to right. Python 3 standard library
only; the SVG has no scripts, fonts or links, so it opens offline in any browser.

    scripts/trace2svg.py trace.json -o timeline.svg [--width PX] [--start MS] [--end MS]
                         [--title TEXT]

Each rank's row has two lanes: a thin one for loop runs and loads, saves and checkpoints,
and a main one for what the rank was doing -- compute (blocks), waiting on a peer, transfers
and buffer flushes -- in distinct colours; blank is anything else (code between loops, a
loop's own bookkeeping). Hover over a bar for its name, duration and arguments (bytes,
peer, block). Bars narrower than a pixel are merged with their neighbours of the same kind.
--start/--end crop to a window (milliseconds from the start of the trace).
"""
import argparse
import html
import json
import math
import re
import sys

COLORS = {
    "compute": "#2e9e44",
    "wait": "#d9412b",
    "transfer": "#2f6fce",
    "flush": "#f08c1a",
    "loop": "#9a9a9a",
    "io": "#8a5cc7",
    "phase": "#c8c8c8",
}
LEGEND = [
    ("compute", "compute (loop bodies, by block)"),
    ("wait", "wait (for a peer: rotated blocks, barriers)"),
    ("transfer", "transfer (collectives, exchanges, sends)"),
    ("flush", "buffer flush"),
    ("loop", "parallel_for run"),
    ("io", "load, save, checkpoint"),
]
WORK = ("compute", "wait", "transfer", "flush")
TOP = ("loop", "io")


def spans_of(events):
    """(pid, tid) -> spans [ts, dur, name, cat, args] from X events and B/E pairs."""
    out, open_b, names = {}, {}, {}
    for ev in events:
        if not isinstance(ev, dict):
            continue
        ph = ev.get("ph")
        if ph == "M" and ev.get("name") == "process_name":
            names[ev.get("pid")] = (ev.get("args") or {}).get("name", "")
        key = (ev.get("pid"), ev.get("tid"))
        if ph == "X":
            out.setdefault(key, []).append(
                [float(ev["ts"]), float(ev.get("dur", 0)), ev.get("name", ""), ev.get("cat", ""),
                 ev.get("args") or {}])
        elif ph == "B":
            open_b.setdefault(key, []).append(ev)
        elif ph == "E" and open_b.get(key):
            b = open_b[key].pop()
            args = dict(b.get("args") or {})
            args.update(ev.get("args") or {})
            out.setdefault(key, []).append(
                [float(b["ts"]), float(ev["ts"]) - float(b["ts"]), b.get("name", ""),
                 b.get("cat", ""), args])
    return out, names


def outermost(spans, cats):
    """The spans of the given categories not inside another of them (per thread)."""
    spans = sorted(spans, key=lambda s: (s[0], -s[1]))
    res, end = [], -math.inf
    for s in spans:
        if s[3] not in cats:
            continue
        if s[0] < end:
            continue
        res.append(s)
        end = s[0] + s[1]
    return res


def fmt_us(us):
    if us >= 1e6:
        return "%.3f s" % (us / 1e6)
    if us >= 1e3:
        return "%.3f ms" % (us / 1e3)
    return "%.1f us" % us


def fmt_bytes(b):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or unit == "GiB":
            return ("%d %s" % (b, unit)) if unit == "B" else ("%.1f %s" % (b, unit))
        b /= 1024.0
    return str(b)


def tooltip(s):
    ts, dur, name, cat, args = s
    lines = ["%s" % name, "%s, %s" % (cat, fmt_us(dur))]
    for k, v in args.items():
        if k in ("sent", "received") and isinstance(v, (int, float)):
            v = fmt_bytes(v)
        lines.append("%s: %s" % (k, v))
    return "\n".join(lines)


def fmt_tick(us, step):
    """A tick label with as many decimals as the step needs."""
    unit, div = ("s", 1e6) if step >= 1e5 else ("ms", 1e3) if step >= 100 else ("us", 1.0)
    v, st = us / div, step / div
    dec = max(0, -int(math.floor(math.log10(st) + 1e-9))) if st > 0 else 0
    return "%.*f %s" % (dec, v, unit)


def nice_step(span_us, target):
    raw = span_us / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def merge(bars, min_px):
    """Consecutive bars of one category closer than a pixel and narrower than min_px: one."""
    out = []
    for b in bars:  # b: [x0, x1, cat, title, count, seconds]
        if out:
            p = out[-1]
            if (p[2] == b[2] and b[0] - p[1] < 1.0 and
                    (p[1] - p[0] < min_px or b[1] - b[0] < min_px)):
                p[1] = max(p[1], b[1])
                p[4] += b[4]
                p[5] += b[5]
                continue
        out.append(b)
    return out


def render(data, width, start_ms, end_ms, title):
    spans, names = spans_of(data.get("traceEvents", []))
    def rank(pid):
        m = re.match(r"rank (\d+)", names.get(pid, ""))
        return int(m.group(1)) if m else None

    rows = sorted({k[0] for k in spans}, key=lambda p: (rank(p) is None, rank(p) or 0, str(p)))
    all_spans = [s for v in spans.values() for s in v]
    if not all_spans:
        raise ValueError("the trace has no spans")
    t_lo = min(s[0] for s in all_spans)
    t_hi = max(s[0] + s[1] for s in all_spans)
    if start_ms is not None:
        t_lo = start_ms * 1e3
    if end_ms is not None:
        t_hi = end_ms * 1e3
    if t_hi <= t_lo:
        raise ValueError("empty time window")
    label_w, right, top, lane_top, lane_main, gap = 150, 20, 56, 7, 20, 12
    row_h = lane_top + 2 + lane_main + gap
    plot_w = width - label_w - right
    legend_h = 22 * ((len(LEGEND) + 2) // 3) + 10
    axis_h = 34
    height = top + row_h * len(rows) + axis_h + legend_h
    scale = plot_w / (t_hi - t_lo)

    def x(t):
        return label_w + (t - t_lo) * scale

    out = []
    w = out.append
    w('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
      'font-family="sans-serif" font-size="12">' % (width, height, width, height))
    w('<rect width="100%" height="100%" fill="#ffffff"/>')
    w('<text x="%d" y="20" font-size="15" font-weight="bold">%s</text>' % (label_w, html.escape(title)))
    other = data.get("otherData") or {}
    w('<text x="%d" y="38" fill="#555">%d ranks, %s shown (%s to %s from the start); hover over a bar '
      'for details%s</text>' % (
          label_w, len(rows), fmt_us(t_hi - t_lo), fmt_us(t_lo), fmt_us(t_hi),
          ("; %d spans dropped" % other["dropped_spans"]) if other.get("dropped_spans") else ""))
    # grid and axis
    step = nice_step(t_hi - t_lo, 10)
    axis_y = top + row_h * len(rows)
    t = math.ceil(t_lo / step) * step
    while t <= t_hi + 1e-9:
        xx = x(t)
        w('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#e4e4e4"/>' % (xx, top - 4, xx, axis_y))
        w('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#333"/>' % (xx, axis_y, xx, axis_y + 5))
        w('<text x="%.2f" y="%d" text-anchor="middle">%s</text>' % (xx, axis_y + 18, fmt_tick(t, step)))
        t += step
    w('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>' % (label_w, axis_y, label_w + plot_w, axis_y))
    w('<text x="8" y="%d" fill="#555">time</text>' % (axis_y + 18))
    w('<clipPath id="plot"><rect x="%d" y="0" width="%d" height="%d"/></clipPath>' % (label_w, plot_w, height))
    for i, pid in enumerate(rows):
        y0 = top + i * row_h
        label = "rank %d" % rank(pid) if rank(pid) is not None else "pid %s" % pid
        full = names.get(pid, label)
        w('<text x="8" y="%d" font-weight="bold"><title>%s</title>%s</text>' % (
            y0 + lane_top + 2 + lane_main - 5, html.escape(full), html.escape(label)))
        w('<rect x="%d" y="%d" width="%d" height="%d" fill="#f6f6f6"/>' % (
            label_w, y0 + lane_top + 2, plot_w, lane_main))
        thread = [s for k, v in spans.items() if k[0] == pid for s in v]
        w('<g clip-path="url(#plot)">')
        for lane, cats, y, h in (("top", TOP, y0, lane_top), ("main", WORK, y0 + lane_top + 2, lane_main)):
            bars = []
            for s in outermost(thread, cats):
                if s[0] + s[1] < t_lo or s[0] > t_hi:
                    continue
                x0, x1 = x(s[0]), x(s[0] + s[1])
                bars.append([x0, x1, s[3], tooltip(s), 1, s[1]])
            for x0, x1, cat, tip, n, dur in merge(bars, 2.0):
                if n > 1:
                    tip = "%d %s spans, %s in all" % (n, cat, fmt_us(dur))
                edge = ' stroke="#ffffff" stroke-width="0.5"' if lane == "top" else ""
                w('<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"%s><title>%s</title></rect>' % (
                    x0, y, max(x1 - x0, 0.6), h, COLORS.get(cat, "#444"), edge, html.escape(tip)))
        w('</g>')
    # legend
    ly = axis_y + axis_h
    for j, (cat, text) in enumerate(LEGEND):
        lx = label_w + (j % 3) * 330
        yy = ly + 22 * (j // 3)
        w('<rect x="%d" y="%d" width="14" height="14" fill="%s"/>' % (lx, yy, COLORS[cat]))
        w('<text x="%d" y="%d">%s</text>' % (lx + 20, yy + 12, html.escape(text)))
    w('</svg>')
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description="Render an Orion timeline as a standalone SVG Gantt chart.")
    ap.add_argument("trace")
    ap.add_argument("-o", "--output", required=True, help="the SVG file to write")
    ap.add_argument("--width", type=int, default=1400, help="pixels (default 1400)")
    ap.add_argument("--start", type=float, help="window start, ms from the start of the trace")
    ap.add_argument("--end", type=float, help="window end, ms from the start of the trace")
    ap.add_argument("--title", help="the chart's title (default: the trace's file name)")
    a = ap.parse_args(argv)
    try:
        with open(a.trace, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
        svg = render(data, max(a.width, 400), a.start, a.end, a.title or "Orion timeline: %s" % a.trace)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("trace2svg: %s: %s" % (a.trace, e), file=sys.stderr)
        return 1
    with open(a.output, "w", encoding="utf-8") as f:
        f.write(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
