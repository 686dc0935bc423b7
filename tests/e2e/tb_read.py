#!/usr/bin/env python3
"""tb_read.py LOGDIR TAG... : read log_metric's event files in LOGDIR with TensorBoard's own
reader (tensorboard.backend.event_processing.event_accumulator, from the tensorboard
package: run it with the Python of scripts/tb-venv.sh) and check that TensorBoard sees
exactly what the program logged, as LOGDIR/metrics.csv has it: the scalar tags (TAG... must
be among them), and for every tag the same steps, in order, with the CSV's values rounded
to float32 (TensorBoard's simple_value) and the same wall times.

Prints each tag's scalars and "ok: ...", exit 0; or every difference, exit 1."""
import csv
import math
import os
import struct
import sys

from tensorboard.backend.event_processing import event_accumulator as ea


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0] if math.isfinite(x) else x


def main():
    logdir, want_tags = sys.argv[1], sys.argv[2:]
    acc = ea.EventAccumulator(logdir, size_guidance={ea.SCALARS: 0})  # 0: keep every value
    acc.Reload()
    tags = acc.Tags()["scalars"]
    with open(os.path.join(logdir, "metrics.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    logged = {}
    for r in rows:
        logged.setdefault(r["name"], []).append((int(r["step"]), float(r["value"]), float(r["wall_time"])))
    errors = []
    if sorted(tags) != sorted(logged):
        errors.append("TensorBoard's tags %s, the CSV's %s" % (sorted(tags), sorted(logged)))
    for t in want_tags:
        if t not in tags:
            errors.append("no scalar %r in TensorBoard's view" % t)
    n = 0
    for tag in tags:
        seen = [(s.step, s.value, s.wall_time) for s in acc.Scalars(tag)]
        want = logged.get(tag, [])
        print("%s: %s" % (tag, " ".join("%d:%.6g" % (s, v) for s, v, _ in seen)))
        if [s for s, _, _ in seen] != [s for s, _, _ in want]:
            errors.append("%s: steps %s in TensorBoard, %s in the CSV"
                          % (tag, [s for s, _, _ in seen], [s for s, _, _ in want]))
            continue
        for (s, v, w), (_, cv, cw) in zip(seen, want):
            if not (v == f32(cv) or (math.isnan(v) and math.isnan(cv))):
                errors.append("%s step %d: TensorBoard %r, CSV %r (as f32 %r)" % (tag, s, v, cv, f32(cv)))
            if abs(w - cw) > 2e-6:
                errors.append("%s step %d: wall time %r in TensorBoard, %r in the CSV" % (tag, s, w, cw))
            n += 1
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("ok: TensorBoard reads %d scalars under %d tags, equal to metrics.csv" % (n, len(tags)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
