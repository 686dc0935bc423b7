#!/usr/bin/env python3
"""Validate `orionc --explain=json` against the contract's schema (design/language-core.md
section 8) on every program given: one JSON object on stdout, with the required keys and
types, entries in the contract's vocabulary, and a plan that is consistent with itself.

usage: check_explain_json.py ORIONC FILE.orn...
Programs that do not compile (exit 1 with nothing on stdout) are skipped."""
import json
import subprocess
import sys

STRATEGIES = {"1d", "2d", "2d_ordered", "unimodular", "serial"}
ROLES = {"partitioned", "rotated", "replicated", "prefetched", "buffered", "remote"}
NDIMS = {"1d": {1}, "2d": {2}, "2d_ordered": {2}, "unimodular": {1, 2}, "serial": {0}}


def fail(path, msg):
    print(f"{path}: {msg}", file=sys.stderr)
    return 1


def check_loop(path, i, lp):
    where = f"loop {i} (line {lp.get('line')})"
    errors = 0
    types = {"line": int, "iteration_space": str, "ordered": bool, "dependence_vectors": list,
             "strategy": str, "partition_dims": list, "arrays": dict, "accumulators": list,
             "notes": list}
    for key, ty in types.items():
        if key not in lp:
            errors += fail(path, f"{where}: missing '{key}'")
        elif not isinstance(lp[key], ty) or (ty is int and isinstance(lp[key], bool)):
            errors += fail(path, f"{where}: '{key}' is not {ty.__name__}")
    if "transform" not in lp:
        errors += fail(path, f"{where}: missing 'transform'")
    if errors:
        return errors
    nkeys = len(lp.get("keys", [])) or None
    for v in lp["dependence_vectors"]:
        if not isinstance(v, list) or (nkeys and len(v) != nkeys):
            errors += fail(path, f"{where}: bad vector {v}")
            continue
        for e in v:
            if not ((isinstance(e, int) and not isinstance(e, bool)) or e in ("*", "+", "0+")):
                errors += fail(path, f"{where}: bad vector entry {e!r}")
    st = lp["strategy"]
    if st not in STRATEGIES:
        errors += fail(path, f"{where}: unknown strategy {st!r}")
    elif len(lp["partition_dims"]) not in NDIMS[st]:
        errors += fail(path, f"{where}: {st} with partition dims {lp['partition_dims']}")
    for d in lp["partition_dims"]:
        if not isinstance(d, int) or d < 0 or (nkeys and d >= nkeys):
            errors += fail(path, f"{where}: bad partition dim {d!r}")
    t = lp["transform"]
    if st == "unimodular":
        ok = isinstance(t, list) and all(isinstance(r, list) and len(r) == len(t) and
                                         all(isinstance(x, int) for x in r) for r in t)
        if not ok or (nkeys and len(t) != nkeys):
            errors += fail(path, f"{where}: bad transform {t!r}")
        elif len(t) == 2 and abs(t[0][0] * t[1][1] - t[0][1] * t[1][0]) != 1:
            errors += fail(path, f"{where}: transform {t} is not unimodular")
    elif t is not None:
        errors += fail(path, f"{where}: transform must be null for {st}")
    for name, role in lp["arrays"].items():
        if role not in ROLES:
            errors += fail(path, f"{where}: array {name} has unknown role {role!r}")
    if lp["arrays"].get(lp["iteration_space"]) != "partitioned":
        errors += fail(path, f"{where}: the iteration space is not partitioned")
    if not all(isinstance(a, str) for a in lp["accumulators"]):
        errors += fail(path, f"{where}: accumulators must be names")
    if not all(isinstance(n, str) and n for n in lp["notes"]):
        errors += fail(path, f"{where}: notes must be strings")
    return errors


def main():
    orionc, files = sys.argv[1], sys.argv[2:]
    errors = checked = loops = 0
    for path in files:
        r = subprocess.run([orionc, "--explain=json", path], capture_output=True, text=True)
        if r.returncode == 1 and not r.stdout:
            continue
        if r.returncode not in (0, 1):
            errors += fail(path, f"orionc exited {r.returncode}: {r.stderr}")
            continue
        try:
            doc = json.loads(r.stdout)
        except json.JSONDecodeError as e:
            errors += fail(path, f"not one JSON object: {e}")
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("file"), str) or \
                not isinstance(doc.get("loops"), list):
            errors += fail(path, "top level must be {\"file\": str, \"loops\": list}")
            continue
        for i, lp in enumerate(doc["loops"]):
            errors += check_loop(path, i, lp)
        checked += 1
        loops += len(doc["loops"])
    print(f"explain=json: {checked} programs, {loops} loops checked against the schema")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
