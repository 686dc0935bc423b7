#!/usr/bin/env python3
"""tfevents_check.py LOGDIR [--printed OUT --regex RE --tags T1,T2,... [--step N]]: check the files
log_metric wrote into LOGDIR with a decoder of its own (Python's standard library only, so
it runs where the tensorboard package is not installed; tb_read.py reads the same files
with TensorBoard itself).

- Every events.out.tfevents.* file is a sequence of TFRecords: uint64 length, masked
  CRC-32C of the length, the data, masked CRC-32C of the data (little-endian); both CRCs
  are checked with a table-driven CRC-32C written here (the writer's is bitwise, in C).
- The data of each record decodes as a tensorflow.Event protobuf (wire format parsed here):
  the first event of a file holds file_version "brain.Event:2"; the others hold step and
  summary.value[0] = {tag, simple_value}; wall times do not go back.
- The scalars, in order, are the rows of LOGDIR/metrics.csv (header name,step,value,
  wall_time): same tags, steps and wall times, and each event's value is the CSV value
  rounded to float32 (the CSV holds the value exactly).
- With --printed: every line of OUT that RE matches gives a step (group 1, or N with
  --step) and values (the next groups) for the tags in order; each must equal the CSV
  value printed with as many decimals as OUT shows.

Exits 0 after printing "ok: ...", 1 after printing every failure.
"""
import argparse
import csv
import glob
import math
import os
import re
import struct
import sys


def crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(buf, i):
    v = shift = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def fields(buf):
    """(field number, wire type, value) of a protobuf message."""
    i = 0
    out = []
    while i < len(buf):
        key, i = varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 1:
            v = buf[i:i + 8]
            i += 8
        elif wire == 2:
            n, i = varint(buf, i)
            v = buf[i:i + n]
            i += n
        elif wire == 5:
            v = buf[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % wire)
        if i > len(buf):
            raise ValueError("field %d runs past the end" % num)
        out.append((num, wire, v))
    return out


def records(path):
    data = open(path, "rb").read()
    i = 0
    while i < len(data):
        if len(data) - i < 12:
            raise ValueError("%s: a record header is cut at byte %d" % (path, i))
        head = data[i:i + 8]
        (n,) = struct.unpack("<Q", head)
        (hc,) = struct.unpack("<I", data[i + 8:i + 12])
        if hc != masked(head):
            raise ValueError("%s: the length's CRC at byte %d does not match" % (path, i))
        body = data[i + 12:i + 12 + n]
        if len(body) != n or len(data) < i + 16 + n:
            raise ValueError("%s: the record at byte %d is cut" % (path, i))
        (dc,) = struct.unpack("<I", data[i + 12 + n:i + 16 + n])
        if dc != masked(body):
            raise ValueError("%s: the data's CRC of the record at byte %d does not match" % (path, i))
        yield body
        i += 16 + n


def event(body):
    ev = {"wall_time": None, "step": 0, "file_version": None, "values": []}
    for num, wire, v in fields(body):
        if num == 1 and wire == 1:
            ev["wall_time"] = struct.unpack("<d", v)[0]
        elif num == 2 and wire == 0:
            ev["step"] = v - (1 << 64) if v >= 1 << 63 else v
        elif num == 3 and wire == 2:
            ev["file_version"] = v.decode()
        elif num == 5 and wire == 2:
            for snum, swire, sv in fields(v):
                if snum != 1 or swire != 2:
                    raise ValueError("unexpected Summary field %d" % snum)
                tag, val = None, None
                for vnum, vwire, vv in fields(sv):
                    if vnum == 1 and vwire == 2:
                        tag = vv.decode()
                    elif vnum == 2 and vwire == 5:
                        val = struct.unpack("<f", vv)[0]
                ev["values"].append((tag, val))
        else:
            raise ValueError("unexpected Event field %d (wire type %d)" % (num, wire))
    return ev


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0] if math.isfinite(x) else x


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logdir")
    ap.add_argument("--printed")
    ap.add_argument("--regex")
    ap.add_argument("--tags")
    ap.add_argument("--step", type=int, help="the step of every match (RE then has no step group)")
    args = ap.parse_args()
    errors = []
    files = sorted(glob.glob(os.path.join(args.logdir, "events.out.tfevents.*")))
    if not files:
        print("FAIL: no events.out.tfevents.* in %s" % args.logdir)
        return 1
    scalars = []
    # the files in the order they were written (the CSV's): by their first event's wall
    # time; the names hold the second and the pid, and two runs within one second need
    # not have increasing pids
    decoded = []
    for path in files:
        try:
            decoded.append((path, [event(b) for b in records(path)]))
        except ValueError as e:
            errors.append(str(e))
    decoded.sort(key=lambda pe: (pe[1][0]["wall_time"] or 0.0) if pe[1] else 0.0)
    for path, evs in decoded:
        if not evs or evs[0]["file_version"] != "brain.Event:2" or evs[0]["values"]:
            errors.append("%s: the first event is not file_version brain.Event:2" % path)
        last = 0.0
        for ev in evs:
            if ev["wall_time"] is None or ev["wall_time"] < last:
                errors.append("%s: wall times missing or going back" % path)
            last = ev["wall_time"] or last
        for ev in evs[1:]:
            if len(ev["values"]) != 1:
                errors.append("%s: an event with %d values" % (path, len(ev["values"])))
                continue
            tag, val = ev["values"][0]
            scalars.append((tag, ev["step"], val, ev["wall_time"]))
    with open(os.path.join(args.logdir, "metrics.csv"), newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != ["name", "step", "value", "wall_time"]:
        errors.append("metrics.csv: the header is not name,step,value,wall_time")
    rows = rows[1:]
    if len(rows) != len(scalars):
        errors.append("metrics.csv has %d rows, the event files %d scalars" % (len(rows), len(scalars)))
    for k, (row, sc) in enumerate(zip(rows, scalars)):
        name, step, value, wall = row[0], int(row[1]), float(row[2]), float(row[3])
        tag, estep, evalue, ewall = sc
        if (name, step) != (tag, estep) or not same(f32(value), evalue) or abs(wall - ewall) > 2e-6:
            errors.append("value %d: CSV %r, event %r" % (k, row, sc))
    checked = 0
    if args.printed:
        table = {(r[0], int(r[1])): r[2] for r in rows}
        tags = args.tags.split(",")
        for line in open(args.printed):
            m = re.search(args.regex, line)
            if not m:
                continue
            groups = m.groups()
            if args.step is None:
                step, groups = int(groups[0]), groups[1:]
            else:
                step = args.step
            for tag, shown in zip(tags, groups):
                logged = table.get((tag, step))
                decimals = len(shown.split(".")[1]) if "." in shown else 0
                if logged is None:
                    errors.append("%s at step %d is printed (%s) but not logged" % (tag, step, shown))
                elif "%.*f" % (decimals, float(logged)) != shown:
                    errors.append("%s at step %d: printed %s, logged %s" % (tag, step, shown, logged))
                checked += 1
        if checked == 0:
            errors.append("no line of %s matches %r" % (args.printed, args.regex))
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("ok: %d event file(s), %d scalars equal to metrics.csv, %d printed values match"
          % (len(files), len(scalars), checked))
    return 0


if __name__ == "__main__":
    sys.exit(main())
