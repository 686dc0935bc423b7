"""check.py: one program through orionc, mpirun -n 1..4 and the oracle.

check(text, workdir, orionc, mpiexec, ranks) first runs the oracle without a trace (every
loop as one block: is the program valid?), then returns a Result whose `kind` is one of
    ok          every run printed and saved what the oracle computed
    reject      orionc refused the program (exit 1): a generator bug
    invalid     the oracle found the program in error (subscript out of range, ...): a
                generator bug
    unstable    the oracle met a value it cannot mirror exactly: a generator bug
    ice         orionc failed internally (exit 3: the generated C does not compile, ...)
    crash       a run exited non-zero, was killed, or timed out
    mismatch    a run's output or saved arrays differ from the oracle's, or its trace does
                not fit the program
and `detail`, a short text saying where.
"""

import os
import re
import shutil
import subprocess

import orn
import oracle


class Result:
    def __init__(self, kind, detail='', ranks=None, strategies=()):
        self.kind, self.detail, self.ranks = kind, detail, ranks
        self.strategies = list(strategies)  # of the program's loops, from --explain

    def failed(self):
        return self.kind in ('ice', 'crash', 'mismatch')

    def __repr__(self):
        return '%s%s: %s' % (self.kind, '' if self.ranks is None else ' -n %d' % self.ranks,
                             self.detail)


def first_diff(a, b):
    al, bl = a.split('\n'), b.split('\n')
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return 'line %d: got %r, oracle %r' % (i + 1, x, y)
    return 'got %d lines, oracle %d' % (len(al), len(bl))


def run(cmd, cwd, timeout, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')
    except subprocess.TimeoutExpired:
        return 'timeout', '', ''


def check(text, workdir, orionc, mpiexec, ranks=(1, 2, 3, 4), timeout=60, keep=False,
          precheck=True):
    if os.path.isdir(workdir):
        shutil.rmtree(workdir)
    os.makedirs(workdir)
    try:
        return check_in(text, workdir, orionc, mpiexec, ranks, timeout, precheck)
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def check_in(text, workdir, orionc, mpiexec, ranks, timeout, precheck):
    try:
        prog = orn.parse_program(text)
    except orn.ParseError as e:
        return Result('reject', 'the oracle cannot parse it: %s' % e)
    if precheck:
        try:
            oracle.evaluate(prog, None, '', 1)
        except oracle.Invalid as e:
            return Result('invalid', 'before compiling: %s' % e)
        except (OverflowError, ValueError, ZeroDivisionError, RecursionError) as e:
            return Result('unstable', 'before compiling: %s: %s' % (type(e).__name__, e))
        except Exception as e:  # names the oracle does not know: not a program orionc takes
            return Result('invalid', 'before compiling: %s: %s' % (type(e).__name__, e))
    src = os.path.join(workdir, 'prog.orn')
    with open(src, 'w') as f:
        f.write(text)
    rc, explain, err = run([orionc, '--explain', 'prog.orn'], workdir, timeout)
    if rc != 0:
        kind = 'ice' if rc == 3 or rc == 'timeout' or (isinstance(rc, int) and rc < 0) else 'reject'
        return Result(kind, 'orionc --explain exited %s: %s' % (rc, err.strip()[-2000:]))
    strategies = re.findall(r'^  strategy: (\w+)', explain, re.M)
    rc, _, err = run([orionc, 'prog.orn', '-o', 'prog'], workdir, timeout)
    if rc != 0:
        kind = 'reject' if rc == 1 and 'error:' in err and 'internal' not in err else 'ice'
        return Result(kind, 'orionc exited %s: %s' % (rc, err.strip()[-2000:]))
    env = dict(os.environ)
    env.setdefault('ORN_TIMEOUT', '60')
    for n in ranks:
        rdir = os.path.join(workdir, 'n%d' % n)
        os.makedirs(rdir)
        for path, data in orn.data_files(prog).items():
            with open(os.path.join(rdir, path), 'w') as f:
                f.write(data)
        env['ORN_TRACE'] = 'trace.txt'
        rc, out, err = run([mpiexec, '-n', str(n), '../prog'], rdir, timeout, env)
        if rc != 0:
            return Result('crash', 'exit %s: %s' % (rc, (err.strip() or out.strip())[-2000:]), n)
        try:
            with open(os.path.join(rdir, 'trace.txt')) as f:
                trace = f.read()
        except OSError:
            trace = ''
        try:
            want_out, want_files = oracle.evaluate(orn.parse_program(text), trace, explain, n)
        except oracle.Invalid as e:
            return Result('invalid', str(e), n)
        except oracle.TraceError as e:
            return Result('mismatch', 'trace: %s' % e, n)
        except (OverflowError, ValueError, ZeroDivisionError) as e:
            return Result('unstable', '%s: %s' % (type(e).__name__, e), n)
        if out != want_out:
            return Result('mismatch', 'stdout %s' % first_diff(out, want_out), n)
        for path, want in sorted(want_files.items()):
            try:
                with open(os.path.join(rdir, path)) as f:
                    got = f.read()
            except OSError:
                return Result('mismatch', '%s was not saved' % path, n)
            if got != want:
                return Result('mismatch', '%s %s' % (path, first_diff(got, want)), n)
    return Result('ok', strategies=strategies)
