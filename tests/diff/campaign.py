#!/usr/bin/env python3
"""campaign.py: differential testing of whole programs (docs/testing.md).

Generates programs (gen.py) with seeds SEED, SEED + 1, ..., compiles each with orionc, runs
it under mpiexec at every rank count, and compares what it prints and saves with the
oracle's serial meaning of that run (oracle.py, check.py). Prints a summary:

    programs, runs per rank count, ok, mismatches, crashes (and ice: orionc failed
    internally), and generator bugs counted apart: rejected (orionc refused a generated
    program), invalid or unstable (the oracle found the program in error)

Failures are kept under --out (the program, and with --reduce a minimized one). The exit
status is 1 if any program failed, or, with --strict, was a generator bug; 0 otherwise.

    campaign.py --count 2000 --seed 1000 --out /tmp/campaign        # a long campaign
    campaign.py --count 30 --seed 1 --size small --strict           # what CI runs
    campaign.py --regress tests/diff/regress/*.orn                  # regression programs
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check  # noqa: E402
import gen  # noqa: E402
import reduce as reducer  # noqa: E402

KINDS = ('ok', 'mismatch', 'crash', 'ice', 'known', 'reject', 'invalid', 'unstable')


def one(args):
    """Worker: generate (or read) and check one program."""
    name, text, workdir, a = args
    t0 = time.time()
    if text is None:
        text = gen.generate(name, a['size'])
    res = check.check(text, workdir, a['orionc'], a['mpiexec'], ranks=a['ranks'],
                      timeout=a['timeout'])
    return name, text, res.kind, res.detail, res.ranks, res.strategies, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--count', type=int, default=100)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--size', default='medium', choices=('small', 'medium'))
    ap.add_argument('--ranks', default='1,2,3,4')
    ap.add_argument('--jobs', type=int, default=1)
    ap.add_argument('--timeout', type=int, default=120, help='seconds per compile or run')
    ap.add_argument('--orionc', default=os.environ.get('ORIONC', 'orionc'))
    ap.add_argument('--mpiexec', default=os.environ.get('MPIEXEC', 'mpiexec'))
    ap.add_argument('--out', help='keep failing programs (and the summary) here')
    ap.add_argument('--reduce', action='store_true', help='minimize failing programs')
    ap.add_argument('--strict', action='store_true', help='generator bugs fail too')
    ap.add_argument('--regress', nargs='*', help='check these programs instead')
    ap.add_argument('--known', action='append', default=[], metavar='REGEX',
                    help='a failure whose message matches is a known bug reported elsewhere: '
                         'counted and printed, but it does not fail the campaign')
    ap.add_argument('--quiet', action='store_true')
    a = ap.parse_args()
    ranks = tuple(int(x) for x in a.ranks.split(','))
    opts = {'size': a.size, 'orionc': a.orionc, 'mpiexec': a.mpiexec, 'ranks': ranks,
            'timeout': a.timeout}
    tmp = tempfile.mkdtemp(prefix='orn-diff-')
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    if a.regress is not None:
        work = [(os.path.basename(p), open(p).read(), os.path.join(tmp, 'w%d' % i), opts)
                for i, p in enumerate(a.regress)]
    else:
        work = [(a.seed + i, None, os.path.join(tmp, 'w%d' % i), opts) for i in range(a.count)]
    counts = {k: 0 for k in KINDS}
    strategies = {}
    failures = []
    t0 = time.time()
    done = 0
    try:
        with concurrent.futures.ProcessPoolExecutor(max_workers=a.jobs) as ex:
            for name, text, kind, detail, rk, strats, secs in ex.map(one, work):
                done += 1
                orig = kind
                if kind in ('mismatch', 'crash', 'ice') and any(re.search(k, detail) for k in a.known):
                    kind = 'known'
                counts[kind] += 1
                for st in strats:
                    strategies[st] = strategies.get(st, 0) + 1
                if kind != 'ok':
                    where = '' if rk is None else ' -n %d' % rk
                    failures.append({'program': name, 'kind': kind, 'ranks': rk,
                                     'detail': detail.split('\n')[0][:300]})
                    print('%s %s%s: %s' % (name, kind, where, detail.split('\n')[0][:300]),
                          flush=True)
                    if a.out:
                        base = os.path.join(a.out, '%s_%s' % (kind, name))
                        with open(base + '.orn', 'w') as f:
                            f.write(text)
                        with open(base + '.txt', 'w') as f:  # the whole message (MPI's stack)
                            f.write(detail + '\n')
                        if a.reduce and kind in ('mismatch', 'crash', 'ice', 'known'):
                            want = check.Result(orig, detail, rk)
                            red = reducer.Reducer(a.orionc, a.mpiexec, os.path.join(tmp, 'r'))
                            with open(base + '.min.orn', 'w') as f:
                                f.write(red.reduce(text, want))
                elif not a.quiet and done % 50 == 0:
                    print('%d programs, %.0f s: %s' % (done, time.time() - t0,
                          ', '.join('%s %d' % (k, counts[k]) for k in KINDS if counts[k])),
                          flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    secs = time.time() - t0
    summary = {
        'programs': done, 'seed': a.seed, 'size': a.size, 'ranks': list(ranks),
        'seconds': round(secs, 1), 'counts': counts, 'strategies': strategies,
        'failures': failures,
    }
    print('programs %d (seeds %s), rank counts %s, %.0f s' % (
        done, 'regress' if a.regress is not None else '%d..%d' % (a.seed, a.seed + a.count - 1),
        ','.join(str(n) for n in ranks), secs))
    print('  ok %d, mismatches %d, crashes %d, internal compiler errors %d' % (
        counts['ok'], counts['mismatch'], counts['crash'], counts['ice']))
    if a.known:
        print('  known failures (--known) %d' % counts['known'])
    print('  generator bugs: rejected by orionc %d, invalid %d, unstable %d' % (
        counts['reject'], counts['invalid'], counts['unstable']))
    print('  parallel_for loops of the programs that passed, by strategy: %s' % (
        ', '.join('%s %d' % kv for kv in sorted(strategies.items(), key=lambda kv: -kv[1]))
        or 'none'))
    if a.out:
        with open(os.path.join(a.out, 'summary.json'), 'w') as f:
            json.dump(summary, f, indent=1)
    bad = counts['mismatch'] + counts['crash'] + counts['ice']
    if a.strict:
        bad += counts['reject'] + counts['invalid'] + counts['unstable']
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
