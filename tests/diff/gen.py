"""gen.py: random valid .orn programs for differential testing (in the style of Csmith and
YARPGen: every program is valid by construction, and its meaning is fixed).

A program has dense and sparse dist arrays of 1 to 3 dimensions (sparse ones are loaded
from data embedded in the program, see orn.py), buffers with default and custom apply
functions, user functions (scalar helpers, readers and writers of dist arrays, apply
functions), top-level scalars, and top-level code with nested for/if/while around
parallel_for loops, unordered and @ordered. Loop bodies have private locals, nested
for/if/while, accumulators (+=, *=, min, max), element reads and writes with affine
subscripts (a*k + c, with coefficients and offsets, guarded by an `if` where they could
leave the array), subscripts the analyzer cannot see through, views and element-wise view
statements, loop reductions and random draws. The program ends by printing every top-level
scalar and saving every dist array.

f32 arrays, scalars, accumulators and loop reductions compute in f32 among themselves and
with weak floats (docs/language.md section 13: literals, params, top-level variables read
in a loop body, and arithmetic of those): `g * 0.1`, `A[k] += lr * 2.0` are f32. Other f64
values enter f32 code only through f32(...), and f32 data enters f64 code only through
f64(...); f32 locals start from f32 values, so float inference never changes a type. f32
arrays are dense or sparse (load type = f32); dense ones are buffer targets as f64 ones are
(a custom apply, integer-valued deltas); their views meet only f32 views and scalars (dot
of two dense f32 views is f32; sum, norm and dot with an f64 view are f64).

Rules that keep the meaning exact (oracle.py):
  - a loop that updates a buffer never reads or writes the buffer's target, and the target
    is never its iteration space (reads may be stale by up to a flush: not generated);
  - default-apply buffers have integer targets; a float target has a custom apply, and its
    deltas are small integers (so per-rank sums are exact);
  - float values that flow into integers are clamped first (f64 -> i64 of a huge value is
    undefined in C); integer divisors are never zero; float division is by constants.

Usage: gen.py SEED [--size small|medium] > prog.orn
"""

import random
import sys

import orn

INT_T = ('i64', 'i64', 'i64', 'i32')


def lit(v):
    if isinstance(v, bool):
        return ('lit', 'bool', v)
    if isinstance(v, int):
        return ('lit', 'i64', v)
    return ('lit', 'f64', float(v))


def var(n):
    return ('var', n)


def call(f, *args, **kw):
    return ('call', f, list(args), list(kw.items()))


def b(op, x, y):
    return ('bin', op, x, y)


def clamp(e, lo=-1.0e6, hi=1.0e6):
    return call('min', call('max', e, lit(lo)), lit(hi))


def f32lit(v):
    return call('f32', lit(float(v)))


def clamp32(e, lo=-1.0e6, hi=1.0e6):
    """clamp of an f32 expression, its bounds f32 too."""
    return call('min', call('max', e, f32lit(lo)), f32lit(hi))


def fmt_of(t):
    return '%.17g' if t in ('f64', 'f32') else '%d'


def affine(a, k, c):
    """a * k + c, printed as a person would write it."""
    if a == 0:
        return lit(c)
    if a == 1:
        t = var(k)
    elif a == -1:
        if c > 0:
            return b('-', lit(c), var(k))
        t = ('un', '-', var(k))
    else:
        t = b('*', lit(a), var(k))
    if c > 0:
        return b('+', t, lit(c))
    if c < 0:
        return b('-', t, lit(-c))
    return t


class ArrI:
    def __init__(self, name, typ, dims, sparse, keys=None, local=False):
        self.name, self.type, self.dims, self.sparse, self.keys = name, typ, dims, sparse, keys
        self.buf = None
        self.local = local  # a local (replicated) array: a variable, not a dist array


class BufI:
    def __init__(self, name, target, apply, flush):
        self.name, self.target, self.apply, self.flush = name, target, apply, flush


class FnI:
    def __init__(self, name, params, ret, kind):
        self.name, self.params, self.ret, self.kind = name, params, ret, kind
        self.reads, self.writes, self.bufs = set(), set(), set()


class VarI:
    def __init__(self, name, typ, role, rng=None, arr=None):
        self.name, self.type, self.role, self.rng = name, typ, role, rng
        self.arr = arr  # role 'larr': the local array


class LoopCtx:
    def __init__(self, space, ordered, bufs):
        self.space, self.ordered, self.bufs = space, ordered, bufs
        self.noread = {bf.target.name for bf in bufs}
        self.accs = {}  # name -> (kind, type)
        # A loop shape (pfor): None (any access), or {array: [key or None per dimension]}:
        # those arrays are written and read only at the keys given (stencil: the space is
        # read at neighbours too), other dist arrays only read; the dependences then leave
        # room for 1d, 2d, wavefront and skewed schedules.
        self.rule = None
        self.shape = 'random'


class Ctx:
    """Where code is being generated: the scopes, the loop, the function."""

    def __init__(self):
        self.scopes = [{}]
        self.loop = None
        self.fn = None
        self.guards = None
        self.pure = False      # no user calls, no random draws (loop reductions)
        self.in_iter = False   # inside a for/while (break is legal)
        self.depth = 0
        self.loop_base = 0     # scopes from here on belong to the loop body

    def visible(self):
        out = {}
        for sc in self.scopes:
            out.update(sc)
        return out

    def declare(self, v):
        self.scopes[-1][v.name] = v


class Gen:
    def __init__(self, seed, size='medium'):
        self.r = random.Random(seed)
        self.seed = seed
        self.count = {}
        self.arrays = []
        self.bufs = []
        self.fns = []
        self.big = size != 'small'
        self.nloops = 0
        self.debug = False
        self.max_loops = self.r.randint(3, 7) if self.big else self.r.randint(2, 4)

    # ------------------------------------------------------------ helpers

    def fresh(self, prefix):
        n = self.count.get(prefix, 0)
        self.count[prefix] = n + 1
        return '%s%d' % (prefix, n)

    def chance(self, p):
        return self.r.random() < p

    def pick(self, xs):
        return self.r.choice(xs)

    # ------------------------------------------------------------ the program

    def program(self):
        r = self.r
        prog = [('comment', 'diffgen seed %d' % self.seed)]
        self.sizes = [r.randint(2, 9) for _ in range(3)]
        # consts and params: read anywhere, functions included
        self.consts = []
        for _ in range(self.pick([0, 1, 2])):
            name = self.fresh('C')
            v = self.pick(self.sizes)
            prog.append(('const', name, lit(v)))
            self.consts.append(VarI(name, 'i64', 'const'))
            self.const_value = getattr(self, 'const_value', {})
            self.const_value[name] = v
        for _ in range(self.pick([0, 1, 1, 2])):
            name = self.fresh('P')
            if self.chance(0.5):
                prog.append(('param', name, lit(r.randint(-3, 9))))
                self.consts.append(VarI(name, 'i64', 'const'))
            else:
                prog.append(('param', name, lit(self.pick([0.5, -1.25, 3.0]))))
                self.consts.append(VarI(name, 'f64', 'const'))
        # dense arrays
        for _ in range(r.randint(2, 5)):
            nd = self.pick([1, 1, 2, 2, 2, 3])
            dims = [self.pick(self.sizes) + self.pick([0, 0, 0, 1, 2]) for _ in range(nd)]
            self.arrays.append(ArrI(self.fresh('A'),
                                    self.pick(INT_T + ('f64', 'f64', 'f64', 'f32', 'f32')),
                                    dims, False))
        # sparse arrays, loaded from embedded data
        for _ in range(self.pick([0, 1, 1, 2])):
            nd = self.pick([1, 2, 2, 2, 3])
            dims = [max(2, self.pick(self.sizes)) for _ in range(nd)]
            a = ArrI(self.fresh('S'), self.pick(('i64', 'i32', 'f64', 'f64', 'f32')), dims, True)
            a.keys, lines = self.sparse_data(dims, a.type)
            a.path = a.name + '.txt'
            prog.append(('data', a.path, lines))
            self.arrays.append(a)
        # functions (each creator adds to self.fns)
        for _ in range(r.randint(0, 3)):
            self.helper_fn()
        if self.chance(0.3):
            self.recursive_fn()
        dense = [a for a in self.arrays if not a.sparse]
        for _ in range(r.randint(0, 2)):
            self.reader_fn()
        # buffers (after their apply functions)
        decls = []
        for a in self.arrays:
            if a.sparse:
                decls.append(('dist', a.name, call('load', ('lit', 'str', a.path),
                                                   type=var(a.type), dims=lit(len(a.dims)),
                                                   sparse=lit(True))))
            else:
                decls.append(('dist', a.name, self.ctor(a)))
        for a in r.sample(dense, min(len(dense), self.pick([0, 1, 1, 2]))):
            if a.type in ('f64', 'f32') or self.chance(0.4):
                ap = self.apply_fn(a.type)
            else:
                ap = None
            kw = {}
            if ap is not None:
                kw['apply'] = var(ap.name)
            flush = self.pick([0, 0, 1, 2, 3, 5])
            if flush:
                kw['flush_every'] = lit(flush)
            bf = BufI(self.fresh('B'), a, ap, flush)
            a.buf = bf
            self.bufs.append(bf)
            decls.append(('dist', bf.name, call('buffer', var(a.name), **kw)))
        for _ in range(r.randint(0, 2)):
            self.writer_fn()
        # functions read dist arrays declared before them; all are visible everywhere
        prog += decls
        prog += [f.node for f in self.fns]
        ctx = Ctx()
        for c in self.consts:
            ctx.declare(c)
        if self.chance(0.25):
            prog.append(('call', call('set_seed', lit(r.randint(1, 1000)))))
        # initial values of dense arrays
        for a in dense:
            if self.chance(0.7):
                prog += self.init_loop(ctx, a)
        # local (replicated) arrays, filled by top-level loops
        for _ in range(self.pick([0, 0, 1, 2])):
            prog += self.local_array(ctx, init=True)
        # top-level scalars
        for _ in range(r.randint(1, 4)):
            prog += self.top_decl(ctx)
        body = []
        tries = 0
        while self.nloops < self.max_loops and tries < 40:
            tries += 1
            body += self.top_stmt(ctx, 0)
        prog += body
        # outputs
        for v in sorted(ctx.scopes[0].values(), key=lambda v: v.name):
            if v.role in ('const', 'larr'):
                continue
            if v.type in ('f64', 'f32') and self.chance(0.3):
                prog.append(('call', call('print', ('lit', 'str', v.name), var(v.name))))
            elif v.type in ('f64', 'f32'):
                prog.append(('call', call('printf', ('lit', 'str', v.name + ' %.17g\n'), var(v.name))))
            elif self.chance(0.3):
                prog.append(('call', call('print', ('lit', 'str', v.name), var(v.name))))
            else:
                prog.append(('call', call('printf', ('lit', 'str', v.name + ' %d\n'), var(v.name))))
        for a in self.arrays:
            prog.append(('call', call('save', var(a.name), ('lit', 'str', a.name + '.out.txt'))))
            # print of the whole array or of a row or column (stdlib/show.c), now and then
            if self.chance(0.25):
                prog.append(('call', call('print', ('lit', 'str', a.name), var(a.name))))
            elif len(a.dims) == 2 and self.chance(0.15):
                d = self.r.randint(0, 1)
                fixed = lit(self.r.randint(0, a.dims[1 - d] - 1))
                prog.append(('call', call('print', ('idx', a.name, [None, fixed] if d == 0
                                                   else [fixed, None]))))
        # local arrays: every element printed
        for v in sorted(ctx.scopes[0].values(), key=lambda v: v.name):
            if v.role == 'larr':
                prog += self.print_local(v.arr)
        return prog

    def print_local(self, a):
        js = [self.fresh('j') for _ in a.dims]
        fmt = '%s' % a.name + ' %d' * len(a.dims) + (' %.17g\n' if a.type == 'f64' else ' %d\n')
        body = [('call', call('printf', ('lit', 'str', fmt), *[var(j) for j in js],
                              ('idx', a.name, [var(j) for j in js])))]
        for j, n in reversed(list(zip(js, a.dims))):
            body = [('for', j, lit(0), lit(n), body)]
        return body

    def local_array(self, ctx, init):
        """L = zeros/fill/rand(...) without dist; at top level, filled by a for loop."""
        nd = self.pick([1, 1, 2])
        dims = [self.pick(self.sizes) for _ in range(nd)]
        t = self.pick(['i64', 'f64', 'i32'])
        name = self.fresh('L')
        a = ArrI(name, t, dims, False, local=True)
        c = self.r.random()
        if c < 0.5:
            e = call('zeros', var(t), *[lit(d) for d in dims])
        elif c < 0.8 or t != 'f64':
            e = call('fill', var(t), lit(2.5 if t == 'f64' else 3), *[lit(d) for d in dims])
        else:
            e = call('rand', var(t), *[lit(d) for d in dims], seed=lit(self.r.randint(0, 50)))
        out = [('assign', var(name), '=', e)]
        ctx.declare(VarI(name, 'arr', 'larr', arr=a))
        if init:
            js = [self.fresh('j') for _ in dims]
            val = b('+', b('*', var(js[0]), lit(self.r.randint(1, 7))), lit(self.r.randint(-3, 3)))
            if nd == 2:
                val = b('-', val, var(js[1]))
            if t == 'f64':
                val = b('*', call('f64', val), lit(0.5))
            body = [('assign', ('idx', name, [var(j) for j in js]), '=', val)]
            for j, n in reversed(list(zip(js, dims))):
                body = [('for', j, lit(0), lit(n), body)]
            out += body
        return out

    def sparse_data(self, dims, typ):
        keys = set()
        vol = 1
        for d in dims:
            vol *= d
        want = max(1, int(vol * self.r.uniform(0.2, 0.6)))
        # every dimension reaches its extent, and the array is not full
        for d in range(len(dims)):
            keys.add(tuple(dims[e] - 1 if e == d else self.r.randrange(dims[e])
                           for e in range(len(dims))))
        while len(keys) < want:
            keys.add(tuple(self.r.randrange(n) for n in dims))
        if len(keys) >= vol:
            keys.discard(tuple(0 for _ in dims))
            if len(keys) >= vol or not all(any(k[d] == dims[d] - 1 for k in keys)
                                           for d in range(len(dims))):
                dims[0] += 1
                keys.add(tuple(dims[e] - 1 if e == 0 else 0 for e in range(len(dims))))
        lines = []
        for k in sorted(keys):
            v = self.r.randint(-9, 9) or 1
            if typ in ('f64', 'f32') and self.chance(0.5):
                v = orn.fmt_float(v / 4.0)
            lines.append(' '.join(str(x) for x in k) + ' ' + str(v))
        return keys, lines

    def ctor(self, a):
        dims = [lit(d) for d in a.dims]
        c = self.r.random()
        if c < 0.5:
            return call('zeros', var(a.type), *dims)
        if c < 0.8 or a.type not in ('f64', 'f32'):
            v = self.r.randint(-3, 7)
            return call('fill', var(a.type), lit(float(v) / 2 if a.type in ('f64', 'f32') else v),
                        *dims)
        return call('rand', var(a.type), *dims, seed=lit(self.r.randint(0, 99)))

    def init_loop(self, ctx, a):
        keys = [self.fresh('k') for _ in a.dims]
        v = self.fresh('v')
        terms = [b('*', lit(self.r.randint(-5, 9)), var(k)) for k in keys]
        e = terms[0]
        for t in terms[1:]:
            e = b('+', e, t)
        e = b('+', e, lit(self.r.randint(-4, 4)))
        if a.type in ('f64', 'f32'):
            e = b('*', call('f64', e), lit(self.pick([0.5, 0.25, 1.5, 1.0])))
        if a.type == 'f32':
            e = call('f32', e)
        return [('pfor', False, keys, v, a.name, [('assign', var(v), '=', e)], None)]

    # ------------------------------------------------------------ functions

    def helper_fn(self):
        name = self.fresh('h')
        ret = self.pick(['i64', 'f64'])
        params = [(self.fresh('p'), self.pick(['i64', 'i64', 'f64'])) for _ in range(self.r.randint(1, 3))]
        fn = FnI(name, params, ret, 'helper')
        ctx = Ctx()
        ctx.fn = fn
        for c in self.consts:
            ctx.declare(c)
        for pn, pt in params:
            ctx.declare(VarI(pn, pt, 'param'))
        body = []
        for _ in range(self.r.randint(0, 2)):
            body += self.local_decl(ctx)
        if self.chance(0.5):
            c = self.gen_bool(ctx, 2)
            body.append(('if', [(c, [('return', self.gen_typed(ctx, ret, 2))])], None))
        body.append(('return', self.gen_typed(ctx, ret, 3)))
        fn.node = ('fn', name, params, ret, body)
        self.fns.append(fn)
        return fn

    def recursive_fn(self):
        """fn f(p: i64) -> i64 calling itself on p - 1 (p is small: the callers pass a mod)."""
        name = self.fresh('h')
        p = self.fresh('p')
        fn = FnI(name, [(p, 'i64')], 'i64', 'helper')
        fn.recursive = True
        base = lit(self.r.randint(-2, 3))
        step = self.pick([b('*', var(p), call(name, b('-', var(p), lit(1)))),
                          b('+', call(name, b('-', var(p), lit(1))), b('*', var(p), lit(3))),
                          b('-', call(name, b('-', var(p), lit(2))), var(p))])
        body = [('if', [(b('<=', var(p), lit(1)), [('return', base)])], None), ('return', step)]
        fn.node = ('fn', name, fn.params, 'i64', body)
        self.fns.append(fn)
        return fn

    def reader_fn(self):
        arrs = [a for a in self.arrays]
        a = self.pick(arrs)
        name = self.fresh('r')
        params = [(self.fresh('p'), 'i64') for _ in a.dims]
        ret = 'f64' if a.type == 'f64' else 'i64'
        fn = FnI(name, params, ret, 'reader')
        fn.reads.add(a.name)
        subs = [self.clamp_sub(var(pn), n) for (pn, _), n in zip(params, a.dims)]
        e = ('idx', a.name, subs)
        if a.type == 'f32':
            ret = fn.ret = 'f64'
            e = call('f64', e)
        if self.chance(0.5):
            e = b(self.pick(['+', '*', '-']), e, lit(self.r.randint(1, 3)))
        fn.node = ('fn', name, params, ret, [('return', e)])
        self.fns.append(fn)
        return fn

    def writer_fn(self):
        """Writes one element of a dense array, or updates a buffer."""
        name = self.fresh('w')
        cands = [a for a in self.arrays if not a.sparse]
        a = self.pick(cands)
        params = [(self.fresh('p'), 'i64') for _ in a.dims] + [(self.fresh('p'), 'i64')]
        fn = FnI(name, params, None, 'writer')
        subs = [self.clamp_sub(var(pn), n) for (pn, _), n in zip(params, a.dims)]
        val = var(params[-1][0])
        if a.buf is not None and self.chance(0.6):
            fn.bufs.add(a.buf.name)
            d = call('mod', val, lit(11))
            if a.type in ('f64', 'f32'):
                d = call(a.type, d)
            body = [('assign', ('idx', a.buf.name, subs), self.pick(['+=', '-=']), d)]
        else:
            fn.writes.add(a.name)
            if a.type == 'f32':
                val = call('f32', val)
            body = [('assign', ('idx', a.name, subs), self.pick(['=', '+=']), val)]
        fn.node = ('fn', name, params, None, body)
        self.fns.append(fn)
        return fn

    def apply_fn(self, t):
        name = self.fresh('ap')
        o, d = var('old'), var('delta')
        if t in ('f64', 'f32'):
            # (f32: the literals are weak, so old * 0.5 is f32; min(old + d, 50.0) is f64,
            # converted to f32 on return)
            e = self.pick([b('+', b('*', o, lit(0.5)), d), b('+', call('max', o, d), lit(1.0)),
                           call('min', b('+', o, d), lit(50.0)), b('-', o, b('*', lit(2.0), d))])
        else:
            e = self.pick([b('+', o, b('*', lit(2), d)), call('max', o, d),
                           call('mod', b('+', o, d), lit(1000)), b('-', o, d),
                           b('+', b('*', o, lit(3)), d)])
        fn = FnI(name, [('old', t), ('delta', t)], t, 'apply')
        fn.node = ('fn', name, fn.params, t, [('return', e)])
        self.fns.append(fn)
        return fn

    def clamp_sub(self, e, n):
        if self.chance(0.5):
            return call('min', call('max', e, lit(0)), lit(n - 1))
        return call('mod', b('+', call('mod', e, lit(n)), lit(n)), lit(n))

    def callable_fns(self, ctx, kind):
        out = []
        for f in self.fns:
            if f.kind != kind or f is ctx.fn or not hasattr(f, 'node'):
                continue
            if ctx.fn is not None:
                continue  # functions call no functions (no recursion through helpers)
            if ctx.loop is not None:
                if (f.reads | f.writes) & ctx.loop.noread:
                    continue
                if f.bufs - {bf.name for bf in ctx.loop.bufs}:
                    continue
                if f.writes & {a.name for a in self.arrays if a.sparse}:
                    continue
                if ctx.loop.rule is not None and f.reads & set(ctx.loop.rule):
                    continue
            elif f.bufs and ctx.scopes and False:
                continue
            out.append(f)
        return out

    # ------------------------------------------------------------ subscripts

    def index_vars(self, ctx):
        return [v for v in ctx.visible().values() if v.rng is not None and v.rng[1] > v.rng[0]]

    def gen_sub(self, ctx, n):
        """A subscript in [0, n): affine in an index variable where possible."""
        ivs = self.index_vars(ctx)
        c = self.r.random()
        keys = [v for v in ivs if v.role == 'key' and v.rng[1] <= n]
        if keys and self.chance(0.25):
            return var(self.pick(keys).name)
        if ivs and c < 0.5:
            v = self.pick(ivs)
            a = self.pick([1, 1, 1, 1, 2, -1, 3, -2])
            lo, hi = v.rng[0], v.rng[1] - 1
            vmin, vmax = min(a * lo, a * hi), max(a * lo, a * hi)
            cmin, cmax = -vmin, n - 1 - vmax
            if a == 1 and self.chance(0.12):
                # clamped to the edge (analyzer/access.c: a halo when v is a key; the code
                # generator's guards leave the min and max out of the interior)
                e = affine(1, v.name, self.r.randint(-2, 2))
                if self.chance(0.5):
                    return call('min', call('max', e, lit(0)), lit(n - 1))
                return call('max', lit(0), call('min', e, lit(n - 1)))
            if cmin <= cmax:
                cs = [x for x in range(cmin, cmax + 1) if abs(x) <= 3] or [cmin, cmax]
                return affine(a, v.name, self.pick(cs))
            if ctx.guards is not None and a in (1, -1):
                off = self.r.randint(-2, 2) + (n - 1 if a == -1 else 0)
                e = affine(a, v.name, off)
                if vmin + off < 0:
                    ctx.guards.append(b('>=', e, lit(0)))
                if vmax + off > n - 1:
                    ctx.guards.append(b('<', e, lit(n)))
                return e
        if ivs and c < 0.6 and len(ivs) >= 2:
            v, w = self.r.sample(ivs, 2)
            if v.rng[1] - 1 + w.rng[1] - 1 <= n - 1 and v.rng[0] + w.rng[0] >= 0:
                return b('+', var(v.name), var(w.name))
        if c < 0.8:
            return lit(self.r.randrange(n))
        e = self.gen_int(ctx, 1)
        return self.clamp_sub(e, n)

    def rule_of(self, ctx, a):
        lp = ctx.loop
        return lp.rule.get(a.name) if lp is not None and lp.rule is not None else None

    def elem(self, ctx, a, write=False):
        rule = self.rule_of(ctx, a)
        if rule is None:
            return ('idx', a.name, [self.gen_sub(ctx, n) for n in a.dims])
        subs = []
        for k, n in zip(rule, a.dims):
            if k is None:
                subs.append(self.gen_sub(ctx, n))
                continue
            off = 0
            if ctx.loop.shape == 'stencil' and not write and ctx.guards is not None:
                off = self.pick([0, -1, 1, -1, 0])
            e = affine(1, k, off)
            if off < 0:
                ctx.guards.append(b('>=', e, lit(0)))
            elif off > 0:
                ctx.guards.append(b('<', e, lit(n)))
            subs.append(e)
        return ('idx', a.name, subs)

    # ------------------------------------------------------------ expressions

    def local_arrays(self, ctx, writable):
        """Visible local arrays; writable: not from outside the loop being generated."""
        out = []
        base = ctx.loop_base if ctx.loop is not None else 0
        for i, sc in enumerate(ctx.scopes):
            for v in sc.values():
                if v.role == 'larr' and (not writable or i >= base):
                    out.append(v.arr)
        return out

    def readable_arrays(self, ctx, types):
        if ctx.fn is not None:
            return []
        out = []
        for a in self.arrays + self.local_arrays(ctx, False):
            if a.type not in types:
                continue
            if ctx.loop is not None and a.name in ctx.loop.noread:
                continue
            out.append(a)
        return out

    def vars_of(self, ctx, types):
        return [v for v in ctx.visible().values()
                if v.type in types and v.role not in ('acc',)]

    def gen_typed(self, ctx, t, d):
        if t == 'f64':
            return self.gen_float(ctx, d)
        if t == 'f32':
            return self.gen_f32(ctx, d)
        if t == 'bool':
            return self.gen_bool(ctx, d)
        e = self.gen_int(ctx, d)
        return call('i32', e) if t == 'i32' else e

    def gen_int(self, ctx, d):
        r = self.r.random()
        if d <= 0 or r < 0.35:
            return self.int_atom(ctx)
        if r < 0.65:
            op = self.pick(['+', '-', '*', '+', '-'])
            return b(op, self.gen_int(ctx, d - 1), self.gen_int(ctx, d - 1))
        if r < 0.72:
            return call(self.pick(['div', 'mod']), self.gen_int(ctx, d - 1), self.divisor(ctx))
        if r < 0.8:
            return call(self.pick(['min', 'max']), self.gen_int(ctx, d - 1), self.gen_int(ctx, d - 1))
        if r < 0.84:
            return call('abs', self.gen_int(ctx, d - 1))
        if r < 0.88:
            return ('un', '-', self.gen_int(ctx, d - 1))
        if r < 0.92:
            return call('i64', clamp(self.gen_float(ctx, d - 1), -1.0e9, 1.0e9))
        if r < 0.95:
            return call('i32', self.gen_int(ctx, d - 1))
        fs = [f for f in self.callable_fns(ctx, 'helper') + self.callable_fns(ctx, 'reader')
              if f.ret == 'i64'] if not ctx.pure else []
        if fs:
            return self.fn_call(ctx, self.pick(fs), d - 1)
        return self.int_atom(ctx)

    def divisor(self, ctx):
        if self.chance(0.6):
            return lit(self.pick([2, 3, 5, 7, -3, 4, 16]))
        return b('+', call('mod', self.gen_int(ctx, 0), lit(5)), lit(6))

    def fn_call(self, ctx, f, d):
        if getattr(f, 'recursive', False):
            return call(f.name, call('mod', self.gen_int(ctx, d), lit(self.r.randint(3, 12))))
        args = []
        for _, pt in f.params:
            args.append(self.gen_int(ctx, d) if pt == 'i64' else self.gen_float(ctx, d))
        return call(f.name, *args)

    def int_atom(self, ctx):
        r = self.r.random()
        vs = self.vars_of(ctx, ('i64', 'i32'))
        if vs and r < 0.45:
            return var(self.pick(vs).name)
        if r < 0.65:
            arrs = self.readable_arrays(ctx, ('i64', 'i32'))
            if arrs:
                return self.elem(ctx, self.pick(arrs))
        if r < 0.7 and self.arrays and ctx.fn is None:
            a = self.pick(self.arrays)
            if len(a.dims) == 2 and self.chance(0.5):
                return call(self.pick(['rows', 'cols']), var(a.name))
            if a.sparse and self.chance(0.5):
                return call('nnz', var(a.name))
            return call('dim', var(a.name), lit(self.r.randrange(len(a.dims))))
        if r < 0.74 and not ctx.pure and ctx.fn is None:
            return call('randint', lit(self.r.randint(1, 20)))
        if r < 0.77:
            return lit(self.pick([1 << 40, -(1 << 33) + 5, 9223372036854775807, 2147483647,
                                  1000003]))
        return lit(self.r.randint(-5, 20))

    def gen_float(self, ctx, d):
        r = self.r.random()
        if d <= 0 or r < 0.3:
            return self.float_atom(ctx)
        if r < 0.6:
            op = self.pick(['+', '-', '*', '+'])
            return b(op, self.gen_float(ctx, d - 1),
                     self.gen_float(ctx, d - 1) if self.chance(0.7) else self.gen_int(ctx, d - 1))
        if r < 0.65:
            return b('/', self.gen_float(ctx, d - 1), lit(self.pick([2.0, 4.0, 3.0, -8.0, 0.5])))
        if r < 0.72:
            return call(self.pick(['min', 'max']), self.gen_float(ctx, d - 1),
                        self.gen_float(ctx, d - 1) if self.chance(0.7) else self.gen_int(ctx, d - 1))
        if r < 0.76:
            return call(self.pick(['abs', 'floor']), self.gen_float(ctx, d - 1))
        if r < 0.79:
            return call('sqrt', call('abs', self.gen_float(ctx, d - 1)))
        if r < 0.83:
            return ('un', '-', self.gen_float(ctx, d - 1))
        if r < 0.9:
            return call('f64', self.gen_int(ctx, d - 1))
        if r < 0.95:
            v = self.view_reduce(ctx)
            if v is not None:
                return v
        fs = [f for f in self.callable_fns(ctx, 'helper') + self.callable_fns(ctx, 'reader')
              if f.ret == 'f64'] if not ctx.pure else []
        if fs:
            return self.fn_call(ctx, self.pick(fs), d - 1)
        return self.float_atom(ctx)

    def float_atom(self, ctx):
        r = self.r.random()
        vs = self.vars_of(ctx, ('f64', 'f32'))
        if vs and r < 0.4:
            v = self.pick(vs)
            return var(v.name) if v.type == 'f64' else call('f64', var(v.name))
        if r < 0.65:
            arrs = self.readable_arrays(ctx, ('f64', 'f32'))
            if arrs:
                a = self.pick(arrs)
                e = self.elem(ctx, a)
                return e if a.type == 'f64' else call('f64', e)
        if r < 0.7 and not ctx.pure and ctx.fn is None:
            return call('rand')
        if r < 0.8:
            return call('f64', self.int_atom(ctx))
        return lit(self.pick([0.5, 1.5, -2.25, 3.0, 0.1, 1e3, -0.75, 7.0]))

    def weak(self, ctx, d=1):
        """A weak float (docs/language.md section 13): a literal, an f64 param, in a loop body
        a top-level f64 variable, and negation and + - * of those."""
        r = self.r.random()
        if d > 0 and r < 0.2:
            return b(self.pick(['+', '-', '*']), self.weak(ctx, d - 1), self.weak(ctx, d - 1))
        if d > 0 and r < 0.25:
            return ('un', '-', self.weak(ctx, d - 1))
        ps = [c for c in self.consts if c.type == 'f64']
        if ps and r < 0.45:
            return var(self.pick(ps).name)
        if ctx.loop is not None and ctx.fn is None and r < 0.7:
            tops = [v for i, sc in enumerate(ctx.scopes[:ctx.loop_base]) for v in sc.values()
                    if v.type == 'f64' and v.role in ('top', 'local')]
            if tops:
                return var(self.pick(tops).name)
        if r < 0.8:
            return lit(self.pick([2, 3, -1, 10]))
        return lit(self.pick([0.1, 0.5, 1.5, 3.0, 1e-3, 0.3, -0.7]))

    def gen_f32(self, ctx, d):
        """An f32 expression: f32 operands and weak floats (other f64 and integer values
        through f32(...))."""
        r = self.r.random()
        if d <= 0 or r < 0.3:
            return self.f32_atom(ctx)
        if r < 0.38:
            x, w = self.gen_f32(ctx, d - 1), self.weak(ctx)
            op = self.pick(['+', '-', '*', '*'])
            return b(op, x, w) if self.chance(0.5) else b(op, w, x)
        if r < 0.62:
            op = self.pick(['+', '-', '*', '+'])
            return b(op, self.gen_f32(ctx, d - 1), self.gen_f32(ctx, d - 1))
        if r < 0.67:
            return b('/', self.gen_f32(ctx, d - 1), f32lit(self.pick([2.0, 4.0, 3.0, -8.0, 0.5])))
        if r < 0.74:
            return call(self.pick(['min', 'max']), self.gen_f32(ctx, d - 1), self.gen_f32(ctx, d - 1))
        if r < 0.78:
            return call(self.pick(['abs', 'floor']), self.gen_f32(ctx, d - 1))
        if r < 0.81:
            return call('sqrt', call('abs', self.gen_f32(ctx, d - 1)))
        if r < 0.85:
            return ('un', '-', self.gen_f32(ctx, d - 1))
        if r < 0.9:
            return call('f32', self.gen_int(ctx, d - 1))
        if r < 0.95:
            v = self.view_reduce(ctx, f32=True)
            if v is not None:
                return clamp32(v)
        return call('f32', clamp(self.gen_float(ctx, d - 1)))

    def f32_atom(self, ctx):
        r = self.r.random()
        vs = self.vars_of(ctx, ('f32',))
        if vs and r < 0.4:
            return var(self.pick(vs).name)
        if r < 0.7:
            arrs = self.readable_arrays(ctx, ('f32',))
            if arrs:
                return self.elem(ctx, self.pick(arrs))
        if r < 0.78:
            return call('f32', self.float_atom(ctx))
        if r < 0.9:
            # an integer (a key, a loop variable) times a step that f32 does not hold
            # exactly: values whose sums round differently in every order
            return b('*', call('f32', self.int_atom(ctx)), f32lit(self.pick([0.1, 0.3, 0.7, 1.1])))
        return f32lit(self.pick([0.5, 1.5, -2.25, 3.0, 0.1, 1e3, -0.75, 7.0, 1e-3]))

    def views2(self, ctx):
        return [a for a in self.readable_arrays(ctx, ('i64', 'i32', 'f64', 'f32'))
                if len(a.dims) == 2]

    def view_ok(self, ctx, a, free):
        rule = self.rule_of(ctx, a)
        return rule is None or rule[free] is None

    def view_pairs(self, ctx, n=None, types=('i64', 'i32', 'f64', 'f32')):
        """(array, free dimension) of the views this code may read, of length n if given."""
        return [(x, f) for x in self.views2(ctx) for f in (0, 1)
                if x.type in types and self.view_ok(ctx, x, f) and (n is None or x.dims[f] == n)]

    def view(self, ctx, a, free):
        """A[i, :] (free 1) or A[:, j] (free 0); under a loop shape the fixed subscript is
        the array's key there."""
        subs = [None, None]
        rule = self.rule_of(ctx, a)
        fixed = 1 - free
        if rule is not None and rule[fixed] is not None:
            subs[fixed] = var(rule[fixed])
        else:
            subs[fixed] = self.gen_sub(ctx, a.dims[fixed])
        return ('idx', a.name, subs)

    def view_reduce(self, ctx, f32=False):
        """sum, norm or dot of views: f64 (an f32 dot of two dense f32 views converted), or
        with f32 the dot of two dense f32 views (None where there are none); a sparse f32
        view is dotted with other types only (in f64)."""
        pairs = self.view_pairs(ctx, types=('f32',) if f32 else ('i64', 'i32', 'f64', 'f32'))
        if f32:
            pairs = [(a, f) for a, f in pairs if not a.sparse]
        if not pairs:
            return None
        a, free = self.pick(pairs)
        n = a.dims[free]
        if f32 or self.chance(0.4):
            # an f32 dot: two dense f32 views
            if a.type == 'f32' and not a.sparse and (f32 or self.chance(0.7)):
                xs = [(x, f) for x, f in self.view_pairs(ctx, n, ('f32',)) if not x.sparse]
            else:
                xs = self.view_pairs(ctx, n, ('i64', 'i32', 'f64') if a.type == 'f32' else
                                     ('i64', 'i32', 'f64', 'f32'))
            # a whole dense 1-D dist array of that length, read whole (dot(A[i, :], x)) where
            # the loop shape leaves its key free
            xs += [(x, None) for x in self.readable_arrays(ctx, {t for x, _ in xs for t in [x.type]}
                                                           if xs else ())
                   if len(x.dims) == 1 and not x.sparse and not x.local and x.dims[0] == n and
                   self.view_ok(ctx, x, 0)] if self.chance(0.5) else []
            if not xs:
                return None if f32 else call(self.pick(['sum', 'norm']), self.view(ctx, a, free))
            x, f = self.pick(xs)
            if f is None:
                ends = [self.view(ctx, a, free), var(x.name)]
                if self.chance(0.5):
                    ends.reverse()
                e = call('dot', *ends)
                return call('f64', e) if a.type == x.type == 'f32' and not f32 else e
            e = call('dot', self.view(ctx, a, free), self.view(ctx, x, f))
            return call('f64', e) if a.type == x.type == 'f32' and not f32 else e
        return call(self.pick(['sum', 'sum', 'norm']), self.view(ctx, a, free))

    def gen_bool(self, ctx, d):
        r = self.r.random()
        if d <= 0 or r < 0.55:
            if self.chance(0.6):
                return b(self.pick(['<', '<=', '>', '>=', '==', '!=']), self.gen_int(ctx, 1),
                         self.gen_int(ctx, 1))
            if self.chance(0.25):
                return b(self.pick(['<', '<=', '>', '>=', '==', '!=']), self.gen_f32(ctx, 1),
                         self.gen_f32(ctx, 1))
            return b(self.pick(['<', '<=', '>', '>=']), self.gen_float(ctx, 1),
                     self.gen_float(ctx, 1) if self.chance(0.6) else self.gen_int(ctx, 1))
        if r < 0.85:
            return b(self.pick(['and', 'or']), self.gen_bool(ctx, d - 1), self.gen_bool(ctx, d - 1))
        if r < 0.95:
            return ('un', 'not', self.gen_bool(ctx, d - 1))
        return lit(self.chance(0.5))

    # ------------------------------------------------------------ statements

    def guarded(self, ctx, make):
        """Run make() collecting the guards of its subscripts; wrap the result in an if."""
        saved = ctx.guards
        ctx.guards = []
        before = set(ctx.scopes[-1])
        try:
            stmts = make()
            gs = ctx.guards
        finally:
            ctx.guards = saved
        if not gs:
            return stmts
        # what the statements declared is local to the if
        for n in set(ctx.scopes[-1]) - before:
            del ctx.scopes[-1][n]
        c = gs[0]
        for g in gs[1:]:
            c = b('and', c, g)
        return [('if', [(c, stmts)], None)]

    def local_decl(self, ctx):
        t = self.pick(['i64', 'i64', 'f64', 'f64', 'i32', 'f32'])
        name = self.fresh({'f64': 'y', 'f32': 'g'}.get(t, 'x'))
        e = self.gen_typed(ctx, t, 2)
        if t == 'f64' and self.chance(0.5):
            e = clamp(e)
        if t == 'f32' and self.chance(0.5):
            e = clamp32(e)
        stmts = [('assign', var(name), '=', e)]
        ctx.declare(VarI(name, t, 'local'))
        return stmts

    def writable_vars(self, ctx):
        """Variables a statement here may assign: in a loop body only its own locals (and
        the value variable); outer ones are accumulators or read-only."""
        out = []
        base = ctx.loop_base if ctx.loop is not None else 0
        for i, sc in enumerate(ctx.scopes):
            for v in sc.values():
                if v.role == 'value' or (i >= base and v.role in ('local', 'top')):
                    out.append(v)
        return out

    def var_update(self, ctx):
        vs = self.writable_vars(ctx)
        if not vs:
            return self.local_decl(ctx)
        v = self.pick(vs)
        if v.type == 'f64':
            op = self.pick(['=', '+=', '-=', '*=', '=', '/='])
            e = self.gen_float(ctx, 2) if self.chance(0.7) else self.gen_int(ctx, 2)
            if op == '/=':
                e = lit(self.pick([2.0, -4.0, 3.0, 0.25]))
            elif op == '*=':
                e = clamp(e, -4.0, 4.0)
            elif self.chance(0.7):
                e = clamp(e)
            if op == '=' and self.chance(0.5):
                e = clamp(b('+', var(v.name), e))
        elif v.type == 'f32':
            op = self.pick(['=', '+=', '-=', '*=', '=', '/='])
            e = self.gen_f32(ctx, 2)
            if op == '/=':
                e = f32lit(self.pick([2.0, -4.0, 3.0, 0.25])) if self.chance(0.5) else \
                    lit(self.pick([2.0, -4.0, 3.0, 0.25, 0.1]))
            elif op != '=' and self.chance(0.25):
                e = self.weak(ctx)  # x op= weak: in f32
            elif op == '*=':
                e = clamp32(e, -4.0, 4.0)
            elif self.chance(0.7):
                e = clamp32(e)
            if op == '=' and self.chance(0.5):
                e = clamp32(b('+', var(v.name), e))
        else:
            op = self.pick(['=', '+=', '-=', '*='])
            e = self.gen_int(ctx, 2)
        return [('assign', var(v.name), op, e)]

    def dense_writable(self, ctx):
        out = []
        lp = ctx.loop
        for a in self.arrays:
            if a.sparse:
                continue
            if lp is not None and a.name in lp.noread:
                continue
            if lp is not None and lp.rule is not None and (
                    a.name not in lp.rule or (lp.shape == 'stencil' and a is lp.space)):
                continue
            out.append(a)
        return out + self.local_arrays(ctx, True)

    def value_for(self, ctx, t, d=2):
        """An expression to store into an element of type t."""
        if t == 'f32':
            e = self.gen_f32(ctx, d)
            return clamp32(e) if self.chance(0.75) else e
        if t == 'f64':
            e = self.gen_float(ctx, d) if self.chance(0.8) else self.gen_int(ctx, d)
            return clamp(e) if self.chance(0.75) else e
        if self.chance(0.2):
            return clamp(self.gen_float(ctx, d), -1.0e9, 1.0e9)
        return self.gen_int(ctx, d)

    def elem_store(self, ctx):
        arrs = self.dense_writable(ctx)
        if not arrs:
            return self.var_update(ctx)
        a = self.pick(arrs)
        target = self.elem(ctx, a, write=True)
        op = self.pick(['=', '=', '+=', '-='])
        if a.type == 'f32' and op != '=' and self.chance(0.25):
            return [('assign', target, op, self.weak(ctx))]  # in f32
        return [('assign', target, op, self.int_update(op, a.type, self.value_for(ctx, a.type)))]

    @staticmethod
    def int_update(op, t, e):
        """e as the value of `x op= e` into an integer x: a clamped float converted first,
        so that x's own value, however large, is not converted to f64 and back (out of
        range near the integer's limits)."""
        if op != '=' and t not in ('f64', 'f32') and e[0] == 'call' and e[1] == 'min':
            return call('i64', e)
        return e

    def buffer_update(self, ctx, bufs):
        bf = self.pick(bufs)
        a = bf.target
        if len(a.dims) == 2 and a.type not in ('f64', 'f32') and self.chance(0.3):
            # B[i, :] += element-wise expression of views of the same length
            free = self.r.randrange(2)
            subs = [None, None]
            subs[1 - free] = self.gen_sub(ctx, a.dims[1 - free])
            srcs = self.view_pairs(ctx, a.dims[free], ('i64', 'i32'))
            if srcs:
                x, f = self.pick(srcs)
                e = b(self.pick(['+', '*', '-']), self.view(ctx, x, f), self.gen_int(ctx, 1))
                return [('assign', ('idx', bf.name, subs), self.pick(['+=', '-=']), e)]
        target = ('idx', bf.name, [self.gen_sub(ctx, n) for n in a.dims])
        if a.type in ('f64', 'f32'):
            d = call(a.type, call('mod', self.gen_int(ctx, 1), lit(self.pick([7, 13, 100]))))
        else:
            d = self.gen_int(ctx, 2)
        return [('assign', target, self.pick(['+=', '+=', '-=']), d)]

    def view_stmt(self, ctx):
        """A[i, :] op= element-wise expression of views and scalars."""
        targets = [(a, f) for a in self.dense_writable(ctx)
                   if len(a.dims) == 2 for f in (0, 1) if self.view_ok(ctx, a, f)]
        if not targets:
            return self.elem_store(ctx)
        a, free = self.pick(targets)
        n = a.dims[free]
        target = self.view(ctx, a, free)
        srcs = self.view_pairs(ctx, n, {'f64': ('i64', 'i32', 'f64'), 'f32': ('f32',)}.get(
            a.type, ('i64', 'i32')))
        if not srcs:
            return self.elem_store(ctx)
        x, f = self.pick(srcs)
        e = self.view(ctx, x, f)
        for _ in range(self.r.randint(0, 2)):
            if self.chance(0.5):
                y, g = self.pick(srcs)
                term = self.view(ctx, y, g)
            elif a.type == 'f64':
                term = clamp(self.gen_float(ctx, 1), -100.0, 100.0)
            elif a.type == 'f32':
                term = (clamp32(self.gen_f32(ctx, 1), -100.0, 100.0) if self.chance(0.6) else
                        self.weak(ctx))
            else:
                term = self.gen_int(ctx, 1)
            e = b(self.pick(['+', '-', '*']), e, term)
        if a.type == 'f64' and self.chance(0.5):
            e = b('*', e, lit(self.pick([0.5, 0.25, -1.0])))
        elif a.type == 'f32' and self.chance(0.5):
            e = b('*', e, f32lit(self.pick([0.5, 0.1, -1.0, 0.3])) if self.chance(0.5) else
                  lit(self.pick([0.5, 0.1, -1.0, 0.3])))
        return [('assign', target, self.pick(['=', '+=', '-=']), e)]

    def acc_update(self, ctx):
        name = self.pick(sorted(ctx.loop.accs))
        kind, t = ctx.loop.accs[name]
        if t == 'f64':
            e = self.gen_float(ctx, 2) if self.chance(0.7) else self.gen_int(ctx, 2)
        elif t == 'f32':
            e = self.gen_f32(ctx, 2)
        else:
            e = self.gen_int(ctx, 2)
        if kind == 'sum':
            if t == 'f32' and self.chance(0.2):
                return [('assign', var(name), '+=', self.weak(ctx))]  # in f32
            return [('assign', var(name), '+=', clamp(e) if t == 'f64' else
                     clamp32(e) if t == 'f32' else e)]
        if kind == 'prod':
            if t in ('f64', 'f32'):
                e = b('+', lit(1.0), b('*', call('f64', call('mod', self.gen_int(ctx, 1), lit(3))),
                                       lit(0.5)))
            if t == 'f32':
                e = call('f32', e)
            return [('assign', var(name), '*=', e)]
        return [('assign', var(name), '=', call(kind, var(name), e))]

    def fn_stmt(self, ctx):
        fs = self.callable_fns(ctx, 'writer')
        if ctx.loop is not None and ctx.loop.rule is not None:
            fs = []  # writers write at subscripts of their own
        if not fs or ctx.pure:
            return self.elem_store(ctx)
        f = self.pick(fs)
        return [('call', call(f.name, *[self.gen_int(ctx, 1) for _ in f.params]))]

    def if_stmt(self, ctx, depth, body_gen):
        def make():
            arms = [(self.gen_bool(ctx, 2), None)]
            for _ in range(self.pick([0, 0, 1, 2])):
                arms.append((self.gen_bool(ctx, 1), None))
            return arms
        arms = []
        heads = self.guarded_value(ctx, make)
        guards, conds = heads
        for c, _ in conds:
            arms.append((c, self.sub_block(ctx, depth, body_gen)))
        els = self.sub_block(ctx, depth, body_gen) if self.chance(0.4) else None
        s = [('if', arms, els)]
        return self.wrap(guards, s)

    def guarded_value(self, ctx, make):
        saved = ctx.guards
        ctx.guards = []
        try:
            v = make()
            gs = ctx.guards
        finally:
            ctx.guards = saved
        return gs, v

    def wrap(self, gs, stmts):
        if not gs:
            return stmts
        c = gs[0]
        for g in gs[1:]:
            c = b('and', c, g)
        return [('if', [(c, stmts)], None)]

    def sub_block(self, ctx, depth, body_gen, pre=None, n=None):
        ctx.scopes.append({})
        try:
            if pre:
                for v in pre:
                    ctx.declare(v)
            out = []
            for _ in range(n if n is not None else self.r.randint(1, 3)):
                out += body_gen(ctx, depth + 1)
            return out
        finally:
            ctx.scopes.pop()

    def for_stmt(self, ctx, depth, body_gen):
        v = self.fresh('j')
        if self.chance(0.85):
            lo = self.pick([0, 0, 0, 1, 2])
            hi = lo + self.pick([0, 1, 2, 3, 4, 5, 6])
        else:
            lo, hi = 3, 1
        loexpr, hiexpr = lit(lo), lit(hi)
        if lo == 0 and self.chance(0.3) and self.arrays:
            a = self.pick(self.arrays)
            d = self.r.randrange(len(a.dims))
            hi = a.dims[d]
            hiexpr = call('dim', var(a.name), lit(d))
        iv = VarI(v, 'i64', 'loopvar', (lo, hi) if hi > lo else None)
        saved = ctx.in_iter
        ctx.in_iter = True
        try:
            body = self.sub_block(ctx, depth, body_gen, pre=[iv])
        finally:
            ctx.in_iter = saved
        return [('for', v, loexpr, hiexpr, body)]

    def while_stmt(self, ctx, depth, body_gen):
        c = self.fresh('c')
        k = self.r.randint(1, 4)
        ctx.declare(VarI(c, 'i64', 'counter'))
        pre = [('assign', var(c), '=', lit(0))]

        def make():
            cond = b('<', var(c), lit(k))
            if self.chance(0.5):
                cond = b('and', cond, self.gen_bool(ctx, 1))
            return cond
        gs, cond = self.guarded_value(ctx, make)
        saved = ctx.in_iter
        ctx.in_iter = True
        try:
            body = [('assign', var(c), '+=', lit(1))] + self.sub_block(ctx, depth, body_gen)
        finally:
            ctx.in_iter = saved
        return pre + self.wrap(gs, [('while', cond, body)])

    def foreach_stmt(self, ctx, depth, body_gen):
        pairs = self.view_pairs(ctx)
        if not pairs:
            return self.for_stmt(ctx, depth, body_gen)
        a, free = self.pick(pairs)
        if a.sparse and ctx.loop is not None and ctx.loop.space is a and self.chance(0.7) and \
                self.view_ok(ctx, a, 1):
            free = 1
        gs, view = self.guarded_value(ctx, lambda: self.view(ctx, a, free))
        k, x = self.fresh('j'), self.fresh('z')
        pre = [VarI(k, 'i64', 'loopvar', (0, a.dims[free])), VarI(x, a.type, 'elemcopy')]
        saved = ctx.in_iter
        ctx.in_iter = True
        try:
            body = self.sub_block(ctx, depth, body_gen, pre=pre)
        finally:
            ctx.in_iter = saved
        return self.wrap(gs, [('foreach', k, x, view, body)])

    def reduction_stmt(self, ctx):
        """A loop reduction: temporaries, then y += e (docs/language.md section 13)."""
        y = self.fresh('y')
        j = self.fresh('j')
        lo = self.pick([0, 0, 1])
        hi = lo + self.r.randint(1, 11)
        if self.chance(0.3):
            hi = lo + self.r.randint(12, 40)  # past the sixteen partials
        # or over a dense view: `for (j, z) in A[e, :]` is such a loop (lang/sema_rewrite.c)
        dense = [(a, f) for a, f in self.view_pairs(ctx) if not a.sparse]
        gs, view, z = [], None, None
        if dense and self.chance(0.35):
            a, free = self.pick(dense)
            gs, view = self.guarded_value(ctx, lambda: self.view(ctx, a, free))
            lo, hi, z = 0, a.dims[free], self.fresh('z')
        t = 'f32' if self.chance(0.35) else 'f64'
        ctx.declare(VarI(y, t, 'local'))
        init = self.pick([0.0, 0.5, -1.0])
        pre = [('assign', var(y), '=', f32lit(init) if t == 'f32' else lit(init))]
        ctx.scopes.append({j: VarI(j, 'i64', 'loopvar', (lo, hi))})
        if view is not None:
            ctx.scopes[-1][z] = VarI(z, a.type, 'elemcopy')
        saved = ctx.pure
        ctx.pure = True
        try:
            def make():
                body = []
                for _ in range(self.r.randint(0, 2)):
                    tt = self.pick(['f64', t])
                    u = self.fresh('y' if tt == 'f64' else 'g')
                    body.append(('assign', var(u), '=', self.gen_typed(ctx, tt, 2)))
                    ctx.declare(VarI(u, tt, 'local'))
                body.append(('assign', var(y), self.pick(['+=', '+=', '-=']),
                             self.gen_typed(ctx, t, 2)))
                return body
            # no guards: an if would break the reduction form, and guards on j cannot
            # go outside the loop
            saved_guards = ctx.guards
            ctx.guards = None
            body = make()
            if view is None and self.chance(0.3):
                # a range test around it: the for over that range (lang/sema_rewrite.c)
                t = b(self.pick(['>=', '>']), affine(1, j, self.r.randint(-1, 1)),
                      lit(lo + self.r.randint(-1, 3)))
                if self.chance(0.6):
                    u = b(self.pick(['<', '<=']), var(j), lit(hi - self.r.randint(0, 3)))
                    t = b('and', t, u) if self.chance(0.5) else b('and', u, t)
                body = [('if', [(t, body)], None)]
        finally:
            ctx.guards = saved_guards
            ctx.pure = saved
            ctx.scopes.pop()
        if view is not None:
            return pre + self.wrap(gs, [('foreach', j, z, view, body)])
        return pre + [('for', j, lit(lo), lit(hi), body)]

    def body_stmt(self, ctx, depth):
        """One statement of a parallel_for body (or of a block nested in one)."""
        r = self.r.random()
        deep = depth < 3 and ctx.depth < 4
        lp = ctx.loop
        if lp.accs and r < 0.12:
            return self.guarded(ctx, lambda: self.acc_update(ctx))
        if lp.bufs and r < 0.22:
            return self.guarded(ctx, lambda: self.buffer_update(ctx, lp.bufs))
        if r < 0.3:
            return self.guarded(ctx, lambda: self.local_decl(ctx))
        if r < 0.32:
            return self.local_array(ctx, init=False)
        if r < 0.42:
            return self.guarded(ctx, lambda: self.var_update(ctx))
        if r < 0.58:
            return self.guarded(ctx, lambda: self.elem_store(ctx))
        if r < 0.63:
            return self.guarded(ctx, lambda: self.view_stmt(ctx))
        if r < 0.67:
            return self.guarded(ctx, lambda: self.fn_stmt(ctx))
        if r < 0.7:
            return self.reduction_stmt(ctx)
        if r < 0.73:
            if ctx.in_iter:
                return [('if', [(self.gen_bool(ctx, 1), [(self.pick(['break', 'continue']),)])], None)]
            if self.chance(0.5):
                return [('if', [(self.gen_bool(ctx, 1), [('continue',)])], None)]
            return self.guarded(ctx, lambda: self.local_decl(ctx))
        if not deep:
            return self.guarded(ctx, lambda: self.elem_store(ctx))
        ctx.depth += 1
        try:
            if r < 0.83:
                return self.if_stmt(ctx, depth, self.body_stmt)
            if r < 0.91:
                return self.for_stmt(ctx, depth, self.body_stmt)
            if r < 0.96:
                return self.foreach_stmt(ctx, depth, self.body_stmt)
            return self.while_stmt(ctx, depth, self.body_stmt)
        finally:
            ctx.depth -= 1

    def shape(self, lp, keys):
        """Pick the loop's shape: 'random' accesses (mostly 1d or serial), or a rule that
        leaves room for parallel schedules: 'map' (arrays written at the first key: 1d),
        'sgd' (W[u, :] and H[i, :] over a 2-D space: 2d), 'stencil' (the space read at
        neighbours, written through the value only: wavefront or skewed when ordered)."""
        space = lp.space
        shape = lp.shape
        free = [a for a in self.arrays if not a.sparse and a is not space and a.name not in lp.noread]
        if shape == 'sgd' and len(space.dims) == 2:
            ws = [a for a in free if a.dims[0] >= space.dims[0]]
            hs = [a for a in free if a.dims[0] >= space.dims[1]]
            pairs = [(w, h) for w in ws for h in hs if w is not h]
            if pairs:
                w, h = self.pick(pairs)
                lp.rule = {space.name: list(keys)}
                lp.rule[w.name] = [keys[0]] + [None] * (len(w.dims) - 1)
                lp.rule[h.name] = [keys[1]] + [None] * (len(h.dims) - 1)
                lp.ordered = self.chance(0.15)
                return
            shape = 'map'
        if shape == 'stencil' and not space.sparse:
            lp.rule = {space.name: list(keys)}
            lp.ordered = lp.ordered or self.chance(0.6)
            return
        if shape in ('map', 'sgd', 'stencil'):
            lp.rule = {space.name: list(keys)}
            for a in self.r.sample(free, min(len(free), self.pick([1, 1, 2]))):
                if a.dims[0] >= space.dims[0]:
                    lp.rule[a.name] = [keys[0]] + [None] * (len(a.dims) - 1)
            lp.shape = 'map'

    def shape_stmts(self, ctx, keys, value):
        """The statements that make a loop its shape: updates of W[u, ...] from H[i, ...] and
        back (sgd), the value from the space's neighbours (stencil), a write at the first key
        (map)."""
        lp = ctx.loop
        out = []
        if lp.shape == 'stencil' and value is not None:
            def make():
                e = None
                for _ in range(self.r.randint(2, 4)):
                    t = self.elem(ctx, lp.space)
                    if lp.space.type == 'f64':
                        t = b('*', t, lit(self.pick([0.25, 0.5, 1.0])))
                    elif lp.space.type == 'f32':
                        t = b('*', t, f32lit(self.pick([0.25, 0.5, 1.0])))
                    e = t if e is None else b(self.pick(['+', '+', '-']), e, t)
                if lp.space.type == 'f64':
                    e = clamp(e)
                elif lp.space.type == 'f32':
                    e = clamp32(e)
                return [('assign', var(value), '=', e)]
            out += self.guarded(ctx, make)
        elif lp.shape in ('sgd', 'map'):
            for name in lp.rule:
                a = next(x for x in self.arrays if x.name == name)
                if a is lp.space or (lp.shape == 'map' and self.chance(0.2)):
                    continue
                out += self.guarded(ctx, lambda a=a: self.rule_store(ctx, a))
        return out

    def rule_store(self, ctx, a):
        """An update of array a's element in an sgd or map loop."""
        target = self.elem(ctx, a, write=True)
        op = self.pick(['+=', '-=', '='])
        return [('assign', target, op, self.int_update(op, a.type, self.value_for(ctx, a.type, 1)))]

    def pfor(self, ctx):
        self.nloops += 1
        shape = self.pick(['random', 'random', 'map', 'sgd', 'sgd', 'stencil', 'stencil'])
        spaces = self.arrays
        if shape == 'sgd':
            spaces = [a for a in self.arrays if len(a.dims) == 2] or spaces
        elif shape == 'stencil':
            spaces = [a for a in self.arrays if not a.sparse] or spaces
        space = self.pick(spaces)
        ordered = self.chance(0.3)
        bufs = [bf for bf in self.bufs if bf.target is not space]
        bufs = self.r.sample(bufs, min(len(bufs), self.pick([0, 1, 1, 2])))
        lp = LoopCtx(space, ordered, bufs)
        lp.shape = shape
        keys = [self.fresh('k') for _ in space.dims]
        self.shape(lp, keys)
        if lp.rule is None:
            lp.shape = 'random'
        pre = []
        # accumulators: fresh top-level scalars, or existing ones
        for _ in range(self.pick([0, 0, 1, 1, 2, 3])):
            kind = self.pick(['sum', 'sum', 'prod', 'min', 'max'])
            t = self.pick(['i64', 'f64', 'f64', 'i32', 'f32'])
            tops = [v for v in ctx.visible().values()
                    if v.role == 'top' and v.name not in lp.accs and v.type == t]
            if tops and self.chance(0.3):
                name = self.pick(tops).name
            else:
                name = self.fresh({'f64': 'y', 'f32': 'g'}.get(t, 'x'))
                init = {'sum': 0, 'prod': 1, 'min': 10 ** 6, 'max': -10 ** 6}[kind]
                e = lit(float(init) if t in ('f64', 'f32') else init)
                if t in ('i32', 'f32'):
                    e = call(t, e)
                pre.append(('assign', var(name), '=', e))
                ctx.declare(VarI(name, t, 'top'))
            lp.accs[name] = (kind, t)
        value = self.fresh('v') if self.chance(0.85) else None
        saved = ctx.loop
        ctx.loop = lp
        saved_iter = ctx.in_iter
        ctx.in_iter = False
        hidden = {}
        for name in lp.accs:
            for sc in ctx.scopes:
                if name in sc:
                    hidden[name] = sc[name]
                    sc[name] = VarI(name, sc[name].type, 'acc')
        ctx.scopes.append({})
        saved_base = ctx.loop_base
        ctx.loop_base = len(ctx.scopes)
        for k, n in zip(keys, space.dims):
            ctx.declare(VarI(k, 'i64', 'key', (0, n)))
        if value is not None:
            ctx.declare(VarI(value, space.type, 'value' if space.name not in lp.noread else 'x'))
        try:
            body = []
            for _ in range(self.r.randint(1, 5 if self.big else 3)):
                body += self.body_stmt(ctx, 0)
            body += self.shape_stmts(ctx, keys, value)
        finally:
            ctx.scopes.pop()
            ctx.loop = saved
            ctx.loop_base = saved_base
            ctx.in_iter = saved_iter
            for name, v in hidden.items():
                for sc in ctx.scopes:
                    if name in sc:
                        sc[name] = v
        note = [('comment', 'shape ' + lp.shape)] if self.debug else []
        return pre + note + [('pfor', lp.ordered, keys, value, space.name, body, None)]

    # ------------------------------------------------------------ top level

    def top_decl(self, ctx):
        t = self.pick(['i64', 'i64', 'f64', 'f64', 'i32', 'f32'])
        name = self.fresh({'f64': 'y', 'f32': 'g'}.get(t, 'x'))
        e = self.gen_typed(ctx, t, 2)
        if t == 'f64':
            e = clamp(e)
        elif t == 'f32':
            e = clamp32(e)
        ctx.declare(VarI(name, t, 'top' if len(ctx.scopes) == 1 else 'local'))
        return [('assign', var(name), '=', e)]

    def top_stmt(self, ctx, depth):
        r = self.r.random()
        if r < 0.4 and self.nloops < self.max_loops:
            return self.pfor(ctx)
        if r < 0.5:
            return self.guarded(ctx, lambda: self.top_decl(ctx))
        if r < 0.6:
            return self.guarded(ctx, lambda: self.var_update(ctx))
        if r < 0.67:
            return self.guarded(ctx, lambda: self.elem_store(ctx))
        if r < 0.73:
            return self.guarded(ctx, lambda: self.fn_stmt(ctx))
        if r < 0.76:
            vs = self.vars_of(ctx, ('i64', 'i32', 'f64', 'f32'))
            if vs:
                v = self.pick(vs)
                fmt = '%s %s\n' % (v.name, fmt_of(v.type))
                return [('call', call('printf', ('lit', 'str', fmt), var(v.name)))]
            return []
        if depth >= 2:
            return self.guarded(ctx, lambda: self.top_decl(ctx))
        if r < 0.86:
            return self.for_stmt(ctx, depth, self.top_stmt)
        if r < 0.93:
            return self.if_stmt(ctx, depth, self.top_stmt)
        return self.while_stmt(ctx, depth, self.top_stmt)


def generate(seed, size='medium'):
    return orn.program_str(Gen(seed, size).program())


if __name__ == '__main__':
    size = 'medium'
    if '--size' in sys.argv:
        size = sys.argv[sys.argv.index('--size') + 1]
    sys.stdout.write(generate(int(sys.argv[1]), size))
