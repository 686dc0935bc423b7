"""reduce.py: shrink a failing program while it keeps failing the same way (a delta reducer
over statements, then over expressions).

Statements are numbered in pre-order; a candidate drops one statement (with what it
contains), replaces an if/for/while by its body, or replaces an expression by a literal. A
candidate is kept when check() gives the same kind of failure (ice, crash or mismatch) at the
same rank count. Candidates that orionc rejects or the oracle finds invalid are simply not
kept, so the result is a valid program.

Usage: reduce.py PROG.orn OUT.orn [--orionc PATH] [--mpiexec PATH]
"""

import argparse
import os
import re
import sys
import tempfile

import check
import orn


def children(s):
    """(rebuild, [blocks]) of a statement with nested blocks."""
    k = s[0]
    if k == 'if':
        blocks = [b for _, b in s[1]] + ([s[2]] if s[2] is not None else [])

        def rebuild(bs):
            arms = [(c, bs[i]) for i, (c, _) in enumerate(s[1])]
            return ('if', arms, bs[len(s[1])] if s[2] is not None else None)
        return rebuild, blocks
    if k in ('for', 'foreach'):
        return (lambda bs: s[:4] + (bs[0],)), [s[4]]
    if k == 'while':
        return (lambda bs: (s[0], s[1], bs[0])), [s[2]]
    if k == 'pfor':
        return (lambda bs: s[:5] + (bs[0], s[6])), [s[5]]
    if k == 'fn':
        return (lambda bs: s[:4] + (bs[0],)), [s[4]]
    return None, []


def count(stmts):
    n = 0
    for s in stmts:
        n += 1
        _, blocks = children(s)
        for b in blocks:
            n += count(b)
    return n


def edit(stmts, target, how, ctr):
    out = []
    for s in stmts:
        me = ctr[0]
        ctr[0] += 1
        if me == target:
            if how == 'drop':
                ctr[0] += sum(count(b) for b in children(s)[1])
                continue
            if how == 'unwrap':
                _, blocks = children(s)
                ctr[0] += sum(count(b) for b in blocks)
                for b in blocks[:1]:
                    out.extend(b)
                continue
        rebuild, blocks = children(s)
        if blocks:
            s = rebuild([edit(b, target, how, ctr) for b in blocks])
        out.append(s)
    return out


# ---------------------------------------------------------------- expressions

def expr_slots(e, out):
    """Pre-order list of the subexpressions of e worth replacing."""
    if e is None or e[0] == 'lit':
        return
    out.append(e)
    if e[0] == 'bin':
        expr_slots(e[2], out)
        expr_slots(e[3], out)
    elif e[0] == 'un':
        expr_slots(e[2], out)
    elif e[0] == 'call':
        for a in e[2]:
            expr_slots(a, out)
    elif e[0] == 'idx':
        for x in e[2]:
            expr_slots(x, out)


def replace_expr(e, target, new, ctr):
    if e is None or e[0] == 'lit':
        return e
    me = ctr[0]
    ctr[0] += 1
    if me == target:
        sub = []
        expr_slots(e, sub)
        ctr[0] += len(sub) - 1
        return new(e)
    k = e[0]
    if k == 'bin':
        return ('bin', e[1], replace_expr(e[2], target, new, ctr), replace_expr(e[3], target, new, ctr))
    if k == 'un':
        return ('un', e[1], replace_expr(e[2], target, new, ctr))
    if k == 'call':
        return ('call', e[1], [replace_expr(a, target, new, ctr) for a in e[2]], e[3])
    if k == 'idx':
        return ('idx', e[1], [replace_expr(x, target, new, ctr) for x in e[2]])
    return e


STMT_EXPRS = {'assign': (3,), 'while': (1,), 'for': (2, 3), 'return': (1,), 'call': (1,)}


def map_exprs(stmts, f):
    """Apply f to every expression slot of every statement, in pre-order."""
    out = []
    for s in stmts:
        k = s[0]
        if k in STMT_EXPRS:
            s = list(s)
            for i in STMT_EXPRS[k]:
                s[i] = f(s[i])
            s = tuple(s)
        elif k == 'if':
            s = ('if', [(f(c), b) for c, b in s[1]], s[2])
        rebuild, blocks = children(s)
        if blocks:
            s = rebuild([map_exprs(b, f) for b in blocks])
        out.append(s)
    return out


def expr_count(prog):
    n = [0]

    def f(e):
        sub = []
        expr_slots(e, sub)
        n[0] += len(sub)
        return e
    map_exprs(prog, f)
    return n[0]


def with_expr(prog, target, new):
    ctr = [0]
    return map_exprs(prog, lambda e: replace_expr(e, target, new, ctr))


def simpler(e):
    """Candidate replacements of an expression: a literal of each type, or an operand."""
    out = [('lit', 'i64', 0), ('lit', 'f64', 0.0), ('lit', 'i64', 1), ('lit', 'bool', True)]
    if e[0] == 'bin':
        out += [e[2], e[3]]
    elif e[0] == 'un':
        out.append(e[2])
    elif e[0] == 'call' and e[2]:
        out += [a for a in e[2] if a[0] != 'var' or e[1] not in ('dim', 'rows', 'cols', 'nnz')]
    return out


# ---------------------------------------------------------------- the reducer

def signature(res):
    """What must stay the same while reducing: for a crash, the first line of the message
    without its numbers (line numbers and keys move as statements go)."""
    if res.kind != 'crash':
        return ''
    first = res.detail.split('\n')[0]
    first = re.sub(r'prog\.orn:\d+', 'prog.orn:L', first)
    return re.sub(r'\d+', '#', first)


class Reducer:
    def __init__(self, orionc, mpiexec, workdir, log=None):
        self.orionc, self.mpiexec, self.workdir = orionc, mpiexec, workdir
        self.tries = 0
        self.log = log

    def same(self, text, want):
        self.tries += 1
        res = check.check(text, self.workdir, self.orionc, self.mpiexec,
                          ranks=(want.ranks,) if want.ranks else (1,), timeout=60)
        return res.kind == want.kind and res.ranks == want.ranks and \
            signature(res) == signature(want)

    def attempt(self, prog, cand, want):
        if cand != prog and self.same(orn.program_str(cand), want):
            if self.log:
                self.log('  %d statements' % count(cand))
            return True
        return False

    def reduce(self, text, want):
        prog = orn.parse_program(text)
        changed = True
        while changed:
            changed = False
            # runs of top-level statements, then of data lines, largest first
            for size in (32, 16, 8, 4, 2):
                i = len(prog) - size
                while i >= 0:
                    cand = prog[:i] + prog[i + size:]
                    if self.attempt(prog, cand, want):
                        prog = cand
                        changed = True
                    i -= size
            for k, st in enumerate(prog):
                if st[0] != 'data':
                    continue
                for size in (16, 4, 1):
                    i = len(prog[k][2]) - size
                    while i >= 0:
                        lines = prog[k][2][:i] + prog[k][2][i + size:]
                        cand = prog[:k] + [('data', st[1], lines)] + prog[k + 1:]
                        if lines and self.attempt(prog, cand, want):
                            prog = cand
                            changed = True
                        i -= size
            for how in ('drop', 'unwrap'):
                i = count(prog) - 1
                while i >= 0:
                    cand = edit(prog, i, how, [0])
                    if cand != prog and self.same(orn.program_str(cand), want):
                        prog = cand
                        changed = True
                        if self.log:
                            self.log('  %d statements' % count(prog))
                    i -= 1
            i = expr_count(prog) - 1
            while i >= 0:
                sub = []
                ctr = [0]

                def grab(e):
                    lst = []
                    expr_slots(e, lst)
                    if ctr[0] <= i < ctr[0] + len(lst):
                        sub.append(lst[i - ctr[0]])
                    ctr[0] += len(lst)
                    return e
                map_exprs(prog, grab)
                for rep in simpler(sub[0]) if sub else []:
                    cand = with_expr(prog, i, lambda e, rep=rep: rep)
                    if cand != prog and self.same(orn.program_str(cand), want):
                        prog = cand
                        changed = True
                        break
                i -= 1
        return orn.program_str(prog)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('prog')
    ap.add_argument('out')
    ap.add_argument('--orionc', default=os.environ.get('ORIONC', 'orionc'))
    ap.add_argument('--mpiexec', default=os.environ.get('MPIEXEC', 'mpirun'))
    a = ap.parse_args()
    text = open(a.prog).read()
    with tempfile.TemporaryDirectory() as tmp:
        want = check.check(text, os.path.join(tmp, 'w'), a.orionc, a.mpiexec)
        if not want.failed():
            print('the program does not fail: %r' % want)
            return 1
        print('reducing: %r' % want)
        red = Reducer(a.orionc, a.mpiexec, os.path.join(tmp, 'r'), log=print)
        out = red.reduce(text, want)
    with open(a.out, 'w') as f:
        f.write(out)
    print('%d checks; %d lines' % (red.tries, out.count('\n')))
    return 0


if __name__ == '__main__':
    sys.exit(main())
