"""oracle.py: the serial meaning of a generated .orn program, computed independently of
orionc and the runtime.

The oracle interprets the program one statement at a time, as the language reference
(docs/language.md) defines it, in Python. The only thing it takes from a run of the
compiled program is the order the runtime chose for unordered loops: the trace that
ORN_TRACE=path writes (docs/runtime.md, section 11), and the storage order of dense arrays
that `orionc --explain` prints (a block walks its elements in storage order). So:

  - an @ordered parallel_for runs its iterations in lexicographic key order;
  - an unordered one runs the trace's blocks in (step, round, rank, seq) order, each block's
    elements [first, first + count) in storage order (dense) or key order (sparse); a loop
    the compiler skews (strategy unimodular, transform T) has its blocks in the space
    y = T x - min(y), elements in key order of y;
  - accumulators keep one partial per block, from the identity, combined in block order
    after the loop starting from the value before it (runtime/exec.c); each partial takes
    its updates in the order the runtime ran the block's elements (the trace's), also in
    an @ordered loop, whose iterations themselves run in key order: the in-place
    wavefront runs a band's elements a column block at a time (runtime/sched_skew.c);
    a dense loop whose body only updates accumulators (and assigns its own scalars and the
    value variable) keeps W partials per run of the innermost stored key, whole groups of
    W into lanes, their balanced tree, then the run's rest in order (docs/language.md
    section 13; apply_lanes);
  - a buffer with a custom apply sees, at each flush (the end of a round), each rank's summed
    delta per key, ranks in order (at one rank each delta at once); one with the default
    apply adds at once (the generator
    never reads a buffer's target in a loop that updates the buffer, and gives default-apply
    buffers integer targets, so both are exact);
  - dot, sum and norm of views use eight partial sums (dot of two f32 views sixteen, in
    f32); a `for` loop that only adds into a float (a loop reduction, docs/language.md
    section 13) too (sixteen when the float is f32);
  - random draws use the runtime's streams (rng.py).

Arithmetic is exact where C's is: integers wrap (i32 and i64), f64 is IEEE 754 in source
order (Python floats), f32 the same rounded to binary32 after every operation (r32: a
correctly rounded f64 result of + - * / or sqrt of f32 operands rounds to the correctly
rounded f32 one), conversions truncate. f32 meets f64 only as docs/language.md section 13's
weak floats (is_weak: literals, params and consts, top-level variables read in a loop body,
+ - * / and negation of those): `f32 op weak` converts the weak side to f32 first, and so
does an update `x op= weak` of an f32 x. The generator never writes locals whose type float
inference would change (every f32 local starts from an f32 value). Programs the language
says are in error (a subscript out of range, a division by zero, a float converted to an
integer out of range) raise Invalid: that is a generator bug, never a compiler one.
"""

import math
import re
import struct
from fractions import Fraction

from rng import PROGRAM_STREAM, Rng, rand_at

RANK = {'i32': 0, 'i64': 1, 'f32': 2, 'f64': 3}
FLOATS = ('f32', 'f64')
INF = float('inf')


class Invalid(Exception):
    """The program is not a valid one: the generator's fault."""


class TraceError(Exception):
    """The trace does not fit the program (a run-time failure of the compiled program)."""


class Break(Exception):
    pass


class Continue(Exception):
    pass


class Return(Exception):
    def __init__(self, value):
        self.value = value


def wrap(t, v):
    if t == 'i64':
        return ((v + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)
    if t == 'i32':
        return ((v + (1 << 31)) & ((1 << 32) - 1)) - (1 << 31)
    return v


def r32(x):
    """The f64 x rounded to the nearest f32 (ties to even; beyond the range an infinity)."""
    try:
        return struct.unpack('f', struct.pack('f', x))[0]
    except OverflowError:
        return math.copysign(INF, x)


def r32_exact(q):
    """The rational q (an integer) rounded once to the nearest f32, as C converts."""
    q = Fraction(q)
    if q == 0:
        return 0.0
    sign, a = (-1 if q < 0 else 1), abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, -126) - 23)
    m = a / quantum
    n = m.numerator // m.denominator
    rest = m - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2):
        n += 1
    v = n * quantum
    if v >= Fraction(2) ** 128:
        return math.copysign(INF, sign)
    return sign * float(v)


def conv(to, frm, v):
    """Convert as C does (float to integer truncates toward zero)."""
    if to == frm or to in ('bool', 'str'):
        return v
    if to == 'f64':
        return float(v)
    if to == 'f32':
        return r32(v) if frm == 'f64' else r32_exact(v)
    if frm in FLOATS:
        if v != v or v in (INF, -INF):
            raise Invalid('conversion of %r to %s' % (v, to))
        v = int(v)
        lim = 1 << (63 if to == 'i64' else 31)
        if v < -lim or v >= lim:
            raise Invalid('conversion of %r to %s is out of range' % (v, to))
        return v
    return wrap(to, v)


def wider(a, b):
    return a if RANK[a] >= RANK[b] else b


def fdiv(a, b):
    if b != 0.0:
        return a / b
    if a != a or a == 0.0:
        return math.copysign(float('nan'), -1.0)  # x86's default NaN
    neg = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
    return -INF if neg else INF


def fmt_float(v, f32=False):
    """print's float format (stdlib/print.c, orn_std_fmt_float)."""
    if v != v:
        return 'nan'
    if v in (INF, -INF):
        return '-inf' if v < 0 else 'inf'
    for p in range(9 if f32 else 17):
        e = '%.*e' % (p, v)
        if (r32_exact(Fraction(e)) if f32 else float(e)) == v:
            break
    exp10 = int(e[e.index('e') + 1:])
    if -4 <= exp10 < 16:
        s = '%.*f' % (max(p - exp10, 0), v)
        if '.' not in s:
            s += '.0'
        return s
    return e


SHOW_MAX, SHOW_EDGE = 1000, 3  # stdlib/show.c


def show_elem(t, v):
    return fmt_float(v, t == 'f32') if t in FLOATS else str(v)


def show_dense(t, dims, get):
    """print's text of a dense array or view (stdlib/show.c): nested brackets, long
    dimensions of an array of more than SHOW_MAX elements cut to their ends, a matrix's
    elements right-aligned."""
    nd = len(dims)
    summ = math.prod(dims) > SHOW_MAX
    gap = [summ and n > 2 * SHOW_EDGE for n in dims]
    idx = [[i if not g or i < SHOW_EDGE else n - 2 * SHOW_EDGE + i for i in range(2 * SHOW_EDGE)]
           if g else list(range(n)) for n, g in zip(dims, gap)]
    keys = [()]
    for ix in idx:
        keys = [k + (x,) for k in keys for x in ix]
    text = {k: show_elem(t, get(k)) for k in keys}
    width = max((len(x) for x in text.values()), default=0) if nd > 1 else 0

    def block(d, key):
        sep = ', ' if d == nd - 1 else ',' + '\n' * (nd - 1 - d) + ' ' * (d + 1)
        out = '['
        for i, x in enumerate(idx[d]):
            if i:
                out += sep
            if gap[d] and i == SHOW_EDGE:
                out += '...' + sep
            out += text[key + (x,)].rjust(width) if d == nd - 1 else block(d + 1, key + (x,))
        return out + ']'
    return block(0, ())


def show_sparse(t, items):
    """print's text of stored elements [(key tuple, value)] in key order."""
    n = len(items)
    if n > SHOW_MAX:
        items = items[:SHOW_EDGE] + items[-SHOW_EDGE:]
    parts = []
    for i, (k, v) in enumerate(items):
        if n > SHOW_MAX and i == SHOW_EDGE:
            parts.append('...')
        kt = str(k[0]) if len(k) == 1 else '(' + ', '.join(str(x) for x in k) + ')'
        parts.append(kt + ': ' + show_elem(t, v))
    return '{' + ', '.join(parts) + '}'


def c_g17(v):
    """printf("%.17g") as glibc writes it, NaN sign and infinities included."""
    if v != v:
        return '-nan' if math.copysign(1.0, v) < 0 else 'nan'
    if v in (INF, -INF):
        return '-inf' if v < 0 else 'inf'
    return '%.17g' % v


def c_printf(fmt, args):
    out, ai = [], 0
    for m in re.finditer(r'%(%|[-+ 0#]*\d*(?:\.\d+)?[a-zA-Z])|[^%]+', fmt):
        tok = m.group(0)
        if not tok.startswith('%'):
            out.append(tok)
            continue
        if tok == '%%':
            out.append('%')
            continue
        t, v = args[ai]
        ai += 1
        conv_ch = tok[-1]
        if conv_ch in 'di':
            out.append(tok[:-1].replace('l', '') % v if False else (tok[:-1] + 'd') % v)
        elif conv_ch in 'efg':
            if v != v or v in (INF, -INF):
                s = c_g17(v)
                width = re.match(r'%[-+ 0#]*(\d*)', tok).group(1)
                out.append(s.rjust(int(width)) if width else s)
            else:
                out.append(tok % v)
        elif conv_ch == 's':
            out.append(tok % v)
        else:
            raise Invalid('printf conversion %s' % tok)
    return ''.join(out)


# ---------------------------------------------------------------- arrays and views

class Arr:
    def __init__(self, name, typ, dims, sparse, data):
        self.name, self.type, self.dims, self.sparse = name, typ, tuple(dims), sparse
        self.data = data  # dense: flat row-major list; sparse: {key: value}
        self.perm = list(range(len(dims)))  # storage order (declared dims, outermost first)
        self.strides = []
        s = 1
        for d in reversed(self.dims):
            self.strides.insert(0, s)
            s *= d

    def check(self, key):
        if len(key) != len(self.dims):
            raise Invalid('%s: %d subscripts for %d dimensions' % (self.name, len(key), len(self.dims)))
        for k, n in zip(key, self.dims):
            if k < 0 or k >= n:
                raise Invalid('%s%r is out of range %r' % (self.name, tuple(key), self.dims))

    def get(self, key):
        self.check(key)
        if self.sparse:
            return self.data.get(tuple(key), 0.0 if self.type in FLOATS else 0)
        return self.data[sum(k * s for k, s in zip(key, self.strides))]

    def set(self, key, v):
        self.check(key)
        if self.sparse:
            if tuple(key) not in self.data:
                raise Invalid('%s%r: no such stored element' % (self.name, tuple(key)))
            self.data[tuple(key)] = v
        else:
            self.data[sum(k * s for k, s in zip(key, self.strides))] = v

    def box_elems(self, lo, hi):
        """The elements of a block (lo, hi in storage order for dense arrays) in the order
        the runtime walks them."""
        if self.sparse:
            return sorted(k for k in self.data
                          if all(l <= x < h for x, l, h in zip(k, lo, hi)))
        out = []
        nd = len(self.dims)

        def rec(sd, key):
            if sd == nd:
                out.append(tuple(key))
                return
            for x in range(lo[sd], hi[sd]):
                key[self.perm[sd]] = x
                rec(sd + 1, key)
        rec(0, [0] * nd)
        return out

    def all_keys(self):
        if self.sparse:
            return sorted(self.data)
        out = [()]
        for n in self.dims:
            out = [k + (x,) for k in out for x in range(n)]
        return out

    def save_text(self):
        lines = []
        for k in self.all_keys():
            v = self.get(k)
            lines.append(' '.join(str(x) for x in k) + ' ' +
                         # a NaN's sign is not specified: save writes none (language.md)
                         (('nan' if v != v else c_g17(v)) if self.type == 'f64' else
                          ('nan' if v != v else '%.9g' % v) if self.type == 'f32' else str(v)))
        return ''.join(l + '\n' for l in lines)


class Buf:
    def __init__(self, name, target, apply, flush_every):
        self.name, self.target, self.apply, self.flush_every = name, target, apply, flush_every


class View:
    """A 1-D view A[i, :] or A[:, j]: the fixed key with None at the free dimension."""

    def __init__(self, arr, key):
        if arr is None or len(key) != len(arr.dims):
            raise Invalid('not a view')
        self.arr, self.key = arr, key
        self.free = key.index(None)
        self.n = arr.dims[self.free]
        self.type = arr.type

    def keyat(self, x):
        k = list(self.key)
        k[self.free] = x
        return k

    def values(self):
        return [self.arr.get(self.keyat(x)) for x in range(self.n)]


def lanes(s):
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))


def tree(s, op):
    """The balanced tree of a power-of-two list of partials, left half first."""
    if len(s) == 1:
        return s[0]
    h = len(s) // 2
    return op(tree(s[:h], op), tree(s[h:], op))


def lane_width(body, accs, acc_type, outer, fns):
    """docs/language.md section 13: a loop whose body does nothing but update accumulators,
    assign the value variable and scalars of its own (ifs, element reads and the pure
    built-ins; no other element write, buffer, fn call or random draw) keeps W partials per
    run of the innermost key (codegen/c_loop.c, lane_stmts, lane_width): W, else 0."""
    def ok(stmts):
        for s in stmts:
            if s[0] == 'if':
                if not all(pure(c, fns) and ok(b) for c, b in s[1]):
                    return False
                if s[2] is not None and not ok(s[2]):
                    return False
            elif s[0] == 'assign':
                tg, v = s[1], s[3]
                if tg[0] != 'var' or not pure(v, fns):
                    return False
                if v[0] == 'call' and v[1] in ('zeros', 'fill', 'rand', 'randn'):
                    return False  # a local array
                if tg[1] in outer and tg[1] not in accs:
                    return False  # (the value variable is bound in the loop's own scope)
            else:
                return False
        return True
    if not accs or not ok(body):
        return 0
    return 16 if all(t in ('i32', 'f32') for t in acc_type.values()) else 8


# ---------------------------------------------------------------- trace

class Trace:
    """The loop runs of an ORN_TRACE file, in order."""

    def __init__(self, text):
        self.loops = []
        self.synthetic = text is None
        text = text or ''
        lines = text.split('\n')
        i = 0
        while i < len(lines):
            if not lines[i].strip():
                i += 1
                continue
            m = re.match(r'loop (\d+) line (\d+) run (\d+) ranks (\d+) entries (\d+)'
                         r'(?: strategy (\w+))?$', lines[i])
            if not m:
                raise TraceError('bad trace header %r' % lines[i])
            lid, line, _, ranks, n = (int(x) for x in m.groups()[:5])
            ents = []
            for j in range(n):
                f = [int(x) for x in lines[i + 1 + j].split()]
                nk = (len(f) - 7) // 2
                ents.append({'step': f[0], 'round': f[1], 'rank': f[2], 'block': f[4],
                             'first': f[5], 'count': f[6],
                             'lo': f[7::2][:nk], 'hi': f[8::2][:nk]})
            # the strategy it ran as: a unimodular plan over a dense space runs serially
            # in the space itself (runtime/layout.c, rt_choose_unskewed)
            self.loops.append({'id': lid, 'line': line, 'ranks': ranks, 'entries': ents,
                               'strategy': m.group(6)})
            i += 1 + n
        self.pos = 0
        self.runs = {}

    def next_loop(self, line, arr=None):
        if self.synthetic:
            # no run to follow: the whole space as one block, in storage order
            n = len(arr.dims)
            dims = [arr.dims[arr.perm[d]] for d in range(n)] if not arr.sparse else arr.dims
            return {'id': 0, 'line': line, 'ranks': 1, 'stream': 0, 'entries': [
                {'step': 0, 'round': 0, 'rank': 0, 'block': 0, 'first': 0,
                 'count': len(arr.all_keys()), 'lo': [0] * n, 'hi': list(dims)}]}
        if self.pos >= len(self.loops):
            raise TraceError('the trace has no run of the loop at line %d' % line)
        lp = self.loops[self.pos]
        self.pos += 1
        if lp['line'] != line:
            raise TraceError('the trace has line %d where the loop at line %d runs' % (lp['line'], line))
        n = self.runs.get(lp['id'], 0)
        self.runs[lp['id']] = n + 1
        lp['stream'] = ((lp['id'] & 0xFFFFFFFF) << 32) | n
        return lp


def parse_layouts(explain_text):
    """{array: storage order} from `orionc --explain` (arrays stored as declared are absent)."""
    out = {}
    for m in re.finditer(r'^  (\w+)\s+dimension \d+ is unit stride \(stored as \[([\d, ]+)\]',
                         explain_text, re.M):
        out[m.group(1)] = [int(x) for x in m.group(2).split(',')]
    return out


def parse_transforms(explain_text):
    """{loop line: T} for the loops `orionc --explain` runs skewed (strategy unimodular)."""
    out, line = {}, None
    for l in explain_text.split('\n'):
        m = re.match(r'^\S+:(\d+): (?:@ordered )?parallel_for', l)
        if m:
            line = int(m.group(1))
        m = re.match(r'^  strategy: unimodular, transform (\[\[.*?\]\])', l)
        if m and line is not None:
            out[line] = [[int(x) for x in row.split(',')]
                         for row in re.findall(r'\[([-\d, ]+)\]', m.group(1))]
    return out


def skewed_elems(arr, T):
    """The elements of a loop run in the space y = T x - min(y) (runtime/sched_unimodular.c):
    [(y, x)] sorted by y."""
    keys = arr.all_keys()
    ys = [tuple(sum(T[i][j] * x[j] for j in range(len(x))) for i in range(len(T))) for x in keys]
    off = [min(y[i] for y in ys) for i in range(len(T))] if ys else [0] * len(T)
    return sorted((tuple(v - o for v, o in zip(y, off)), x) for y, x in zip(ys, keys))


# ---------------------------------------------------------------- the interpreter

def identity(t, kind):
    """An accumulator's partial at the start of a block (runtime/exec.c, acc_identity)."""
    if kind == 'sum':
        return 0.0 if t in FLOATS else 0
    if kind == 'prod':
        return 1.0 if t in FLOATS else 1
    big = INF if t in FLOATS else (1 << (63 if t == 'i64' else 31)) - 1
    return big if kind == 'min' else (-big if t in FLOATS else -big - 1)


def combine(t, kind, r, p):
    """acc_combine: r op p, the block's partial p second."""
    if kind == 'sum':
        return r + p if t == 'f64' else r32(r + p) if t == 'f32' else wrap(t, r + p)
    if kind == 'prod':
        return r * p if t == 'f64' else r32(r * p) if t == 'f32' else wrap(t, r * p)
    if kind == 'min':
        return p if p < r else r
    return p if p > r else r


class Loop:
    """State of the parallel_for being run."""

    def __init__(self):
        self.base = 0       # the number of scopes around the body (the top-level code's)
        self.accs = {}      # name -> kind ('sum', 'prod', 'min', 'max')
        self.partial = {}   # block -> {name: value}
        self.cur = None     # the current block's partials
        self.deltas = []    # custom-apply buffer deltas: (round, rank, buffer, key, type, value)
        self.where = None   # (round, rank) of the running iteration
        self.rng = None
        # an @ordered loop's accumulator updates, (position, n, partial, name, type, value):
        # its iterations run in key order, but each partial takes its updates in the order
        # the runtime ran the elements (the trace's), which a schedule that runs a block in
        # pieces (runtime/sched_skew.c: a band's column blocks at successive steps) changes
        self.defer = None
        self.pos = 0


def acc_kinds(body, outer):
    """Accumulators of a loop body: outer scalars it updates, and how."""
    out = {}

    def walk(stmts):
        for s in stmts:
            k = s[0]
            if k == 'assign' and s[1][0] == 'var' and s[1][1] in outer:
                n = s[1][1]
                if s[2] == '+=':
                    out[n] = 'sum'
                elif s[2] == '*=':
                    out[n] = 'prod'
                elif s[2] == '=' and s[3][0] == 'call' and s[3][1] in ('min', 'max'):
                    out[n] = s[3][1]
                else:
                    raise Invalid('outer variable %s written in a loop body' % n)
            elif k == 'if':
                for _, b in s[1]:
                    walk(b)
                if s[2]:
                    walk(s[2])
            elif k in ('for', 'foreach'):
                walk(s[4])
            elif k == 'while':
                walk(s[2])
    walk(body)
    return out


def reads_var(e, name):
    if e is None:
        return False
    k = e[0]
    if k == 'var':
        return e[1] == name
    if k == 'bin':
        return reads_var(e[2], name) or reads_var(e[3], name)
    if k == 'un':
        return reads_var(e[2], name)
    if k == 'call':
        return any(reads_var(a, name) for a in e[2]) or any(reads_var(v, name) for _, v in e[3])
    if k == 'idx':
        return any(reads_var(s, name) for s in e[2] if s is not None)
    return False


def assigned_names(stmts, out=None):
    """The variables a statement list assigns (`x = e`, `x op= e`), anywhere in it."""
    out = set() if out is None else out
    for s in stmts or []:
        k = s[0]
        if k == 'assign' and s[1][0] == 'var':
            out.add(s[1][1])
        elif k == 'if':
            for _, b in s[1]:
                assigned_names(b, out)
            assigned_names(s[2], out)
        elif k in ('for', 'foreach'):
            assigned_names(s[4], out)
        elif k == 'while':
            assigned_names(s[2], out)
    return out


def fixed_bound(e, fns, var, assigned):
    """A bound lang/sema_rewrite.c narrows a range with: pure, no element reads, no div or
    mod, not the loop variable, nothing the body assigns."""
    if e is None:
        return False
    k = e[0]
    if k in ('int', 'float', 'bool', 'lit'):
        return True
    if k == 'var':
        return e[1] != var and e[1] not in assigned
    if k == 'bin':
        return fixed_bound(e[2], fns, var, assigned) and fixed_bound(e[3], fns, var, assigned)
    if k == 'un':
        return fixed_bound(e[2], fns, var, assigned)
    if k == 'call':
        if e[1] in ('rows', 'cols', 'dim', 'len', 'nnz'):  # extents: the array never changes
            return all(a[0] == 'var' or fixed_bound(a, fns, var, assigned) for a in e[2])
        if e[1] in fns or e[1] not in FOLDABLE or e[3]:
            return False
        return all(fixed_bound(a, fns, var, assigned) for a in e[2])
    return False


# the const-foldable built-ins (lang/builtins.def, BI_CONST) but div and mod, which may fail
FOLDABLE = {'sqrt', 'exp', 'log', 'abs', 'pow', 'sin', 'cos', 'tanh', 'floor', 'ceil', 'min',
            'max', 'sigmoid', 'i32', 'i64', 'f32', 'f64'}


def pure(e, fns):
    """No effects: no user function calls, no random draws."""
    if e is None:
        return True
    k = e[0]
    if k == 'bin':
        return pure(e[2], fns) and pure(e[3], fns)
    if k == 'un':
        return pure(e[2], fns)
    if k == 'call':
        if e[1] in fns or e[1] in ('rand', 'randn', 'randint'):
            return False
        return all(pure(a, fns) for a in e[2]) and all(pure(v, fns) for _, v in e[3])
    if k == 'idx':
        return all(pure(s, fns) for s in e[2] if s is not None)
    return True


class Interp:
    def __init__(self, prog, trace, layouts, transforms, nranks):
        self.prog = prog
        self.trace = trace
        self.layouts = layouts
        self.transforms = transforms
        self.nranks = nranks
        self.out = []
        self.files = {}
        self.data = {}
        self.consts = {}
        self.fns = {}
        self.arrays = {}
        self.bufs = {}
        self.globals = {}
        self.scopes = [self.globals]
        self.loop = None
        self.seed = 0
        self.rng = Rng(0, PROGRAM_STREAM)
        self.steps = 0
        self.in_fn = 0

    # ------------------------------------------------------------ variables

    def lookup(self, name, write=False):
        """The scope that holds a variable. A function sees its own scopes, then reads (but
        never assigns) top-level variables: `x = e` in a function declares a local."""
        for sc in reversed(self.scopes):
            if name in sc:
                return sc
        if self.in_fn and not write and name in self.globals:
            return self.globals
        return None

    def is_weak(self, e):
        """A weak float or integer (lang/sema_expr.c, weak): a literal, a param or const,
        in a loop body a variable of the top-level code around it, and negation and
        + - * / of those."""
        k = e[0]
        if k == 'lit':
            return e[1] in ('i64', 'f64')
        if k == 'var':
            if self.in_fn:
                return self.lookup(e[1]) is None and e[1] in self.consts
            for i in range(len(self.scopes) - 1, -1, -1):
                if e[1] in self.scopes[i]:
                    return self.loop is not None and i < self.loop.base
            return e[1] in self.consts
        if k == 'un':
            return e[1] == '-' and self.is_weak(e[2])
        if k == 'bin':
            return e[1] in ('+', '-', '*', '/') and self.is_weak(e[2]) and self.is_weak(e[3])
        return False

    def narrow(self, t, op, e, te, v):
        """An update `x op= e` of an f32 x by a weak f64 e converts e first: (type, value)."""
        if op == '=' or t != 'f32' or te != 'f64' or not self.is_weak(e):
            return te, v
        return 'f32', [r32(x) for x in v] if isinstance(v, list) else r32(v)

    def acc(self, name):
        """Is name an accumulator of the running loop (seen from its body)?"""
        return self.loop is not None and not self.in_fn and name in self.loop.accs

    def run(self):
        for s in self.prog:
            if s[0] == 'fn':
                self.fns[s[1]] = s
            elif s[0] == 'data':
                self.data[s[1]] = s[2]
        self.block(self.prog, new_scope=False)
        return ''.join(self.out), self.files

    def tick(self):
        self.steps += 1
        if self.steps > 20000000:
            raise Invalid('the program runs too long')

    # ------------------------------------------------------------ statements

    def block(self, stmts, new_scope=True):
        if new_scope:
            self.scopes.append({})
        try:
            for s in stmts:
                self.stmt(s)
        finally:
            if new_scope:
                self.scopes.pop()

    def stmt(self, s):
        self.tick()
        k = s[0]
        if k == 'assign':
            self.assign(s)
        elif k == 'if':
            for c, body in s[1]:
                if self.cond(c):
                    self.block(body)
                    return
            if s[2] is not None:
                self.block(s[2])
        elif k == 'for':
            self.for_range(s)
        elif k == 'foreach':
            self.foreach(s)
        elif k == 'while':
            while self.cond(s[1]):
                self.tick()
                try:
                    self.block(s[2])
                except Break:
                    break
                except Continue:
                    continue
        elif k == 'pfor':
            self.pfor(s)
        elif k == 'break':
            raise Break()
        elif k == 'continue':
            raise Continue()
        elif k == 'return':
            raise Return(None if s[1] is None else self.ev(s[1]))
        elif k == 'call':
            self.call(s[1], stmt=True)
        elif k == 'dist':
            self.dist(s)
        elif k in ('const', 'param'):
            self.consts[s[1]] = self.ev(s[2])
        elif k in ('fn', 'data', 'comment'):
            pass
        else:
            raise Invalid('statement %r' % (s,))

    def cond(self, e):
        t, v = self.ev(e)
        if t != 'bool':
            raise Invalid('condition of type %s' % t)
        return v

    def narrowed(self, s):
        """A for whose body is one `if` (no elif, no else) bounding the variable (`j + c OP
        e` joined by `and`, lang/sema_rewrite.c): the for over the range where it holds, its
        body the if's (bounds: (e, offset, lower)); else None."""
        _, var, lo, hi, body = s
        if len(body) != 1 or body[0][0] != 'if' or len(body[0][1]) != 1 or body[0][2]:
            return None
        cond, then = body[0][1][0]
        assigned = assigned_names(body)
        out = []

        def const(e):
            """An integer that folds at compile time (literals, consts, + - *), or None."""
            if e[0] == 'lit':
                return e[2] if e[1] in ('i64', 'i32') else None
            if e[0] == 'var' and self.lookup(e[1]) is None and e[1] in self.consts:
                t, v = self.consts[e[1]]
                return v if t in ('i64', 'i32') else None
            if e[0] == 'un' and e[1] == '-':
                v = const(e[2])
                return None if v is None else -v
            if e[0] == 'bin' and e[1] in ('+', '-', '*'):
                x, y = const(e[2]), const(e[3])
                if x is None or y is None:
                    return None
                return x + y if e[1] == '+' else x - y if e[1] == '-' else x * y
            return None

        def plus(e):
            if e[0] == 'var' and e[1] == var:
                return 0
            if e[0] == 'bin' and e[1] in ('+', '-') and e[2][0] == 'var' and e[2][1] == var:
                c = const(e[3])
                if c is not None:
                    return c if e[1] == '+' else -c
            if e[0] == 'bin' and e[1] == '+' and e[3][0] == 'var' and e[3][1] == var:
                return const(e[2])
            return None

        def terms(c):
            if c[0] == 'bin' and c[1] == 'and':
                return terms(c[2]) and terms(c[3])
            if c[0] != 'bin' or c[1] not in ('<', '<=', '>', '>='):
                return False
            op, a, b = c[1], c[2], c[3]
            off = plus(a)
            if off is None:
                a, b = b, a
                op = {'<': '>', '<=': '>=', '>': '<', '>=': '<='}[op]
                off = plus(a)
                if off is None:
                    return False
            if not fixed_bound(b, self.fns, var, assigned):
                return False
            if self.ev(b)[0] not in ('i64', 'i32'):
                return False
            out.append((b, -off + (1 if op in ('>', '<=') else 0), op in ('>', '>=')))
            return True

        if not terms(cond) or len(out) > 8:
            return None
        return out, then

    def for_range(self, s):
        _, var, lo, hi, body = s
        tl, l = self.ev(lo)
        th, h = self.ev(hi)
        nar = self.narrowed(s)
        if nar is not None:
            for b, off, lower in nar[0]:
                v = self.ev(b)[1] + off
                l, h = (max(l, v), h) if lower else (l, min(h, v))
            s = ('for', var, lo, hi, nar[1])
            body = nar[1]
        red = self.reduction(s)
        if red is not None:
            return self.loop_reduction(s, l, h, red)
        for v in range(l, h):
            self.tick()
            self.scopes.append({var: ['i64', v]})
            try:
                self.block(body, new_scope=False)
            except Break:
                break
            except Continue:
                continue
            finally:
                self.scopes.pop()

    def reduction(self, s):
        """The loop-reduction form (docs/language.md section 13): temporaries, then one
        `x += e` or `x -= e` into a float variable declared outside the loop."""
        body = s[4]
        if not body:
            return None
        last = body[-1]
        if last[0] != 'assign' or last[1][0] != 'var' or last[2] not in ('+=', '-='):
            return None
        name = last[1][1]
        sc = self.lookup(name)
        if sc is None or sc[name][0] not in FLOATS or self.acc(name):
            return None
        temps = set()

        def update(t):
            """An update of temporaries: `t op= e` to one declared before, or an `if`
            whose condition and branches are such (codegen/c_for.c, temp_update)."""
            if t[0] == 'assign':
                return (t[1][0] == 'var' and t[1][1] in temps and not reads_var(t[3], name)
                        and pure(t[3], self.fns))
            if t[0] != 'if':
                return False
            for c, b in t[1]:
                if reads_var(c, name) or not pure(c, self.fns) or not all(map(update, b)):
                    return False
            return t[2] is None or all(map(update, t[2]))

        for t in body[:-1]:
            if t[0] == 'assign' and t[1][0] == 'var' and t[2] == '=' and t[1][1] not in temps \
                    and self.lookup(t[1][1]) is None and t[1][1] != s[1]:
                if reads_var(t[3], name) or not pure(t[3], self.fns):
                    return None
                temps.add(t[1][1])
                continue
            if not update(t):
                return None
        if reads_var(last[3], name) or not pure(last[3], self.fns) or name in temps:
            return None
        return name

    def loop_reduction(self, s, lo, hi, name):
        _, var, _, _, body = s
        sc = self.lookup(name)
        t = sc[name][0]
        W = 16 if t == 'f32' else 8
        parts = [0.0] * W
        sub = body[-1][2] == '-='
        for v in range(lo, hi):
            self.tick()
            self.scopes.append({var: ['i64', v]})
            try:
                for u in body[:-1]:
                    self.stmt(u)
                te, e = self.ev(body[-1][3])
                parts[(v - lo) % W] = self.arith('+', t, parts[(v - lo) % W], t, conv(t, te, e))
            finally:
                self.scopes.pop()
        if t == 'f32':
            # two eight-trees, p0..p7's first (docs/language.md section 13)
            tree = r32(self.tree32(parts[:8]) + self.tree32(parts[8:]))
        else:
            tree = lanes(parts)
        sc[name][1] = self.arith('-' if sub else '+', t, sc[name][1], t, tree)

    @staticmethod
    def tree32(s):
        """lanes() of eight f32 partials, every addition rounded to f32."""
        return tree(s, lambda a, b: r32(a + b))

    def foreach(self, s):
        _, kv, vv, view, body = s
        if view[0] == 'var':
            a = self.array(view[1])  # a whole 1-D array
            v = View(a, [None]) if len(a.dims) == 1 else None
        else:
            v = self.view_of(view)
        # over a dense view (a dist one inside a loop body) or a local 1-D array it is the
        # loop `for kv in 0..n` whose body starts `vv = X[e, kv]` (lang/sema_rewrite.c): a
        # loop reduction when its body is one (a reduction's body assigns nothing that a pure
        # e reads, so e is the same in every iteration)
        subs = [None] if view[0] == 'var' else view[2]
        if not v.arr.sparse and (view[1] not in self.arrays or
                                 (self.loop is not None and not self.in_fn)) and \
                all(pure(x, self.fns) for x in subs if x is not None):
            elem = ('idx', view[1], [('var', kv) if x is None else x for x in subs])
            loop = ('for', kv, None, None, [('assign', ('var', vv), '=', elem)] + list(body))
            red = self.reduction(loop)
            if red is not None:
                return self.loop_reduction(loop, 0, v.n, red)
        if v.arr.sparse:
            inside = self.loop is not None and v.free == 1
            pairs = [x for x in range(v.n) if tuple(v.keyat(x)) in v.arr.data]
        else:
            inside = True
            pairs = list(range(v.n))
        for x in pairs:
            self.tick()
            if not inside and v.arr.get(v.keyat(x)) == 0:
                continue
            self.scopes.append({kv: ['i64', x], vv: [v.type, v.arr.get(v.keyat(x))]})
            try:
                self.block(body, new_scope=False)
            except Break:
                break
            except Continue:
                continue
            finally:
                self.scopes.pop()

    def array(self, name):
        """The dist array or local array variable called name."""
        if name in self.arrays:
            return self.arrays[name]
        sc = self.lookup(name)
        if sc is not None and sc[name][0] == 'arr':
            return sc[name][1]
        raise Invalid('%s is not an array' % name)

    def new_array(self, name, e):
        """zeros, fill or rand: a dense array (local, or dist before its layout)."""
        fn, args, kw = e[1], e[2], dict(e[3])
        typ = args[0][1]
        if fn == 'fill':
            tv, fv = self.ev(args[1])
            dims = [self.ev(a)[1] for a in args[2:]]
        else:
            dims = [self.ev(a)[1] for a in args[1:]]
        n = 1
        for d in dims:
            n *= d
        if fn == 'zeros':
            data = [conv(typ, 'i64', 0)] * n
        elif fn == 'fill':
            data = [conv(typ, tv, fv)] * n
        elif fn == 'rand':
            seed = self.ev(kw['seed'])[1] if 'seed' in kw else 0
            data = [conv(typ, 'f64', rand_at(seed, i)) for i in range(n)]
        else:
            raise Invalid('constructor %s' % fn)
        return Arr(name, typ, dims, False, data)

    def dist(self, s):
        _, name, e = s
        fn, args, kw = e[1], e[2], dict(e[3])
        if fn == 'buffer':
            target = self.arrays[args[0][1]]
            apply = kw['apply'][1] if 'apply' in kw else None
            fe = self.ev(kw['flush_every'])[1] if 'flush_every' in kw else 0
            self.bufs[name] = Buf(name, target, apply, fe)
            return
        if fn == 'load':
            path = self.ev(args[0])[1]
            typ = kw['type'][1] if 'type' in kw else 'f64'
            nd = self.ev(kw['dims'])[1]
            sparse = self.ev(kw['sparse'])[1]
            data, dims = {}, [0] * nd
            for line in self.data[path]:
                f = line.split()
                key = tuple(int(x) for x in f[:nd])
                data[key] = (float(f[nd]) if typ == 'f64' else
                             r32_exact(Fraction(f[nd])) if typ == 'f32' else int(f[nd]))
                dims = [max(d, k + 1) for d, k in zip(dims, key)]
            if not sparse:
                raise Invalid('dense load')
            arr = Arr(name, typ, dims, True, data)
        else:
            arr = self.new_array(name, e)
        if name in self.layouts and not arr.sparse:
            arr.perm = self.layouts[name]
        self.arrays[name] = arr

    # ------------------------------------------------------------ assignment

    def assign(self, s):
        _, target, op, e = s
        if target[0] == 'var':
            return self.assign_var(target[1], op, e)
        name, subs = target[1], target[2]
        if any(x is None for x in subs):
            return self.assign_view(target, op, e)
        key = [self.index(x) for x in subs]
        te, v = self.ev(e)
        if name in self.bufs:
            return self.buffer_add(self.bufs[name], key, op, te, v)
        arr = self.array(name)
        te, v = self.narrow(arr.type, op, e, te, v)
        if op != '=':
            v = self.arith(op[0], arr.type, arr.get(key), te, v)
            te = wider(arr.type, te)
        arr.set(key, conv(arr.type, te, v))

    def acc_apply(self, cur, name, te, v):
        """One update of accumulator name's partial cur by the value v of type te."""
        kind = self.loop.accs[name]
        t = self.loop.acc_type[name]
        if kind in ('min', 'max'):
            w = wider(t, te)
            a, b = conv(w, t, cur[name]), conv(w, te, v)
            r = (a if a <= b else b) if kind == 'min' else (a if a >= b else b)
            cur[name] = conv(t, w, r)
            return
        cur[name] = conv(t, wider(t, te), self.arith('+' if kind == 'sum' else '*', t,
                                                     cur[name], te, v))

    def assign_var(self, name, op, e):
        if self.acc(name):
            # x = min(x, e): only e is evaluated in the body
            te, v = self.ev(e[2][1] if self.loop.accs[name] in ('min', 'max') else e)
            te, v = self.narrow(self.loop.acc_type[name], op, e, te, v)
            if self.loop.defer is not None:
                d = self.loop.defer
                d.append((self.loop.pos, len(d), self.loop.cur, name, te, v))
            else:
                self.acc_apply(self.loop.cur, name, te, v)
            return
        sc = self.lookup(name, write=True)
        if sc is None and op == '=' and e[0] == 'call' and e[1] in ('zeros', 'fill', 'rand') \
                and e[2]:
            self.scopes[-1][name] = ['arr', self.new_array(name, e)]
            return
        te, v = self.ev(e)
        if sc is None:
            if op != '=':
                raise Invalid('%s updated before it is declared' % name)
            self.scopes[-1][name] = [te, v]
            return
        slot = sc[name]
        if slot[0] == 'elem':
            arr, key = slot[1], slot[2]
            te, v = self.narrow(arr.type, op, e, te, v)
            if op != '=':
                v = self.arith(op[0], arr.type, arr.get(key), te, v)
                te = wider(arr.type, te)
            arr.set(key, conv(arr.type, te, v))
            return
        te, v = self.narrow(slot[0], op, e, te, v)
        if op != '=':
            v = self.arith(op[0], slot[0], slot[1], te, v)
            te = wider(slot[0], te)
            if op == '/=' and te not in FLOATS:
                te = 'f64'
        slot[1] = conv(slot[0], te, v)

    def assign_view(self, target, op, e):
        view = self.view_of(target)
        te, vals = self.ev(e)
        te, vals = self.narrow(view.arr.type, op, e, te, vals)
        n = view.n
        if isinstance(vals, list):
            if len(vals) != n:
                raise Invalid('views of different lengths')
        else:
            vals = [vals] * n
        buf = self.bufs.get(target[1])
        for x in range(n):
            key = view.keyat(x)
            if buf is not None:
                self.buffer_add(buf, key, op, te, vals[x])
                continue
            arr = view.arr
            v, t = vals[x], te
            if op != '=':
                v = self.arith(op[0], arr.type, arr.get(key), te, v)
                t = wider(arr.type, te)
            arr.set(key, conv(arr.type, t, v))

    def buffer_add(self, buf, key, op, te, v):
        if op not in ('+=', '-='):
            raise Invalid('buffer %s: %s' % (buf.name, op))
        arr = buf.target
        arr.check(key)
        d = conv(arr.type, te, v)
        if op == '-=':
            d = wrap(arr.type, -d) if arr.type != 'f64' else -d
        if buf.apply is None:
            if arr.type in FLOATS:
                raise Invalid('default-apply buffer of a float array')
            arr.set(key, wrap(arr.type, arr.get(key) + d))
            return
        if self.loop is None or self.nranks == 1:  # one rank: applied at once
            self.apply(buf, key, d)
            return
        rnd, rank = self.loop.where
        self.loop.deltas.append((rnd, rank, buf, tuple(key), d))

    def apply(self, buf, key, d):
        arr = buf.target
        t, v = self.call_user(buf.apply, [(arr.type, arr.get(key)), (arr.type, d)])
        arr.set(key, conv(arr.type, t, v))

    def flush(self):
        """Apply the loop's custom-apply deltas: per round, per rank in order, each key's
        summed delta (summed in the order made)."""
        sums = {}
        order = []
        for rnd, rank, buf, key, d in self.loop.deltas:
            k = (rnd, rank, id(buf), key)
            if k not in sums:
                sums[k] = [buf, key, 0.0 if buf.target.type in FLOATS else 0]
                order.append(k)
            s = sums[k]
            t = buf.target.type
            s[2] = s[2] + d if t == 'f64' else r32(s[2] + d) if t == 'f32' else wrap(t, s[2] + d)
        for k in sorted(order, key=lambda k: (k[0], k[1])):
            buf, key, d = sums[k]
            self.apply(buf, list(key), d)
        self.loop.deltas = []

    # ------------------------------------------------------------ parallel_for

    def pfor(self, s):
        _, ordered, keys, val, space, body, line = s
        arr = self.arrays[space]
        lp = self.trace.next_loop(line, arr)
        if self.loop is not None:
            raise Invalid('nested parallel_for')
        loop = Loop()
        outer = set()
        for sc in self.scopes:
            outer.update(sc)
        loop.accs = acc_kinds(body, outer)
        slots = {n: self.lookup(n)[n] for n in loop.accs}
        loop.acc_type = {n: slots[n][0] for n in loop.accs}
        init = {n: slots[n][1] for n in loop.accs}
        ents = lp['entries']
        # (element key -> entry) for ordered loops; the work list for unordered ones
        work = []
        T = (self.transforms.get(line)
             if not self.trace.synthetic and lp.get('strategy') in (None, 'unimodular') else None)
        skewed = skewed_elems(arr, T) if T else None
        for ei, en in enumerate(ents):
            if skewed is not None:
                elems = [x for y, x in skewed
                         if all(l <= v < h for v, l, h in zip(y, en['lo'], en['hi']))]
            else:
                elems = arr.box_elems(en['lo'], en['hi'])
            if en['first'] + en['count'] > len(elems):
                raise TraceError('loop at line %d: block %d has %d elements, the trace runs %d..%d'
                                 % (line, en['block'], len(elems), en['first'],
                                    en['first'] + en['count']))
            for k in elems[en['first']:en['first'] + en['count']]:
                work.append((k, en))
        seen = {}
        for k, en in work:
            if k in seen:
                raise TraceError('loop at line %d runs key %r twice' % (line, k))
            seen[k] = en
        if set(seen) != set(arr.all_keys()):
            raise TraceError('loop at line %d: the trace runs %d of %d elements'
                             % (line, len(seen), len(arr.all_keys())))
        pos = {}
        # a dense loop that only updates accumulators: W partials per run (lane_width); its
        # updates are deferred and applied in the trace's order with the lanes (apply_lanes)
        W = (lane_width(body, loop.accs, loop.acc_type, outer - {val} if val else outer,
                        self.fns)
             if not arr.sparse and skewed is None else 0)
        if ordered or W:
            pos = {k: i for i, (k, _) in enumerate(work)}
            loop.defer = []
        runs = self.runs_of(arr, work) if W else None
        if ordered:
            work = [(k, seen[k]) for k in sorted(seen)]
        # rounds in trace order, for flushes
        rounds = {}
        for en in ents:
            rounds.setdefault((en['step'], en['round']), len(rounds))
        for en in ents:
            loop.partial.setdefault(en['block'], None)
        self.loop = loop
        loop.base = len(self.scopes)  # scopes below it: the top-level code's
        try:
            for k, en in work:
                blk = en['block']
                if loop.partial[blk] is None:
                    loop.partial[blk] = {n: identity(loop.acc_type[n], loop.accs[n])
                                         for n in loop.accs}
                loop.cur = loop.partial[blk]
                loop.pos = pos.get(k, 0)
                loop.where = (rounds[(en['step'], en['round'])], en['rank'])
                loop.rng = Rng(self.seed, lp['stream'], k)
                sc = {kn: ['i64', kv] for kn, kv in zip(keys, k)}
                if val is not None:
                    sc[val] = ('elem', arr, k)
                self.scopes.append(sc)
                try:
                    self.block(body, new_scope=False)
                except Continue:
                    pass
                finally:
                    self.scopes.pop()
            self.flush()
            if W:
                self.apply_lanes(loop, W, runs, loop.defer)
            elif loop.defer:
                for _, _, cur, name, te, v in sorted(loop.defer, key=lambda u: u[:2]):
                    self.acc_apply(cur, name, te, v)
        finally:
            self.loop = None
        for n, kind in loop.accs.items():
            t = loop.acc_type[n]
            r = init[n]
            for blk in sorted(loop.partial):
                p = loop.partial[blk]
                r = combine(t, kind, r, identity(t, kind) if p is None else p[n])
            slots[n][1] = r

    @staticmethod
    def runs_of(arr, work):
        """Per trace position: (run, index in the run, the run's length, block). A run is
        the elements of one trace entry in one row of its box (storage order: every key but
        the innermost stored one the same), as the generated element loop runs them."""
        inner = arr.perm[-1]
        out, i = [], 0
        while i < len(work):
            k, en = work[i]
            j = i + 1
            while (j < len(work) and work[j][1] is en and
                   all(a == b for d, (a, b) in enumerate(zip(work[j][0], k)) if d != inner)):
                j += 1
            out.extend((i, x, j - i, en['block']) for x in range(j - i))
            i = j
        return out

    def apply_lanes(self, loop, W, runs, events):
        """The accumulator updates (pos, n, partial, name, type, value) of a lanes loop in
        trace order: in a run of length L, element x < (L // W) * W updates lane x mod W
        (each from the identity), then the lanes' balanced tree is combined into the block's
        partial (an all-identity tree too, as the generated code does), then the run's last
        L mod W elements update the partial in order (codegen/c_loop.c, lane_loop). min and
        max go in order: lanes cannot change them."""
        by_pos = {}
        for e in sorted(events, key=lambda u: u[:2]):
            by_pos.setdefault(e[0], []).append(e)
        lane = {}  # (run, name) -> W partials

        def close(run, cur):
            for name, kind in loop.accs.items():
                if kind not in ('sum', 'prod'):
                    continue
                t = loop.acc_type[name]
                parts = lane.pop((run, name), None) or [identity(t, kind)] * W
                if kind == 'sum':
                    op = (lambda a, b: a + b) if t == 'f64' else (
                        (lambda a, b: r32(a + b)) if t == 'f32' else (lambda a, b: wrap(t, a + b)))
                else:
                    op = (lambda a, b: a * b) if t == 'f64' else (
                        (lambda a, b: r32(a * b)) if t == 'f32' else (lambda a, b: wrap(t, a * b)))
                self.acc_apply(cur, name, t, tree(parts, op))

        for p, (run, x, n, blk) in enumerate(runs):
            cur = loop.partial[blk]
            groups = (n // W) * W
            if x == 0 and groups == 0:
                close(run, cur)
            for _, _, _, name, te, v in by_pos.get(p, []):
                if x < groups and loop.accs[name] in ('sum', 'prod'):
                    t = loop.acc_type[name]
                    parts = lane.setdefault((run, name), [identity(t, loop.accs[name])] * W)
                    tmp = {name: parts[x % W]}
                    self.acc_apply(tmp, name, te, v)
                    parts[x % W] = tmp[name]
                else:
                    self.acc_apply(cur, name, te, v)
            if x + 1 == groups:
                close(run, cur)

    # ------------------------------------------------------------ expressions

    def index(self, e):
        t, v = self.ev(e)
        if t not in ('i64', 'i32'):
            raise Invalid('subscript of type %s' % t)
        return v

    def view_of(self, e):
        name = e[1]
        arr = self.bufs[name].target if name in self.bufs else self.array(name)
        key = [None if x is None else self.index(x) for x in e[2]]
        if key.count(None) != 1 or len(key) != 2:
            raise Invalid('view %r' % (e,))
        arr.check([0 if x is None else x for x in key])
        return View(arr, key)

    def arith(self, op, ta, a, tb, b):
        t = wider(ta, tb)
        if t == 'f32':
            return r32(self.arith(op, 'f64', conv('f32', ta, a), 'f64', conv('f32', tb, b)))
        if t == 'f64':
            a, b = float(a), float(b)
            if op == '+':
                return a + b
            if op == '-':
                return a - b
            if op == '*':
                return a * b
            if op == '/':
                return fdiv(a, b)
        else:
            if op == '/':
                raise Invalid('integer division with /')
            if op == '+':
                return wrap(t, a + b)
            if op == '-':
                return wrap(t, a - b)
            if op == '*':
                return wrap(t, a * b)
        raise Invalid('operator %s' % op)

    def ev(self, e):
        k = e[0]
        if k == 'lit':
            return e[1], e[2]
        if k == 'var':
            name = e[1]
            sc = self.lookup(name)
            if sc is None:
                if name in self.consts:
                    return self.consts[name]
                raise Invalid('unknown variable %s' % name)
            slot = sc[name]
            if slot[0] == 'elem':
                arr, key = slot[1], slot[2]
                return arr.type, arr.get(key)
            if self.acc(name):
                raise Invalid('accumulator %s read in its loop' % name)
            return slot[0], slot[1]
        if k == 'bin':
            op = e[1]
            if op == 'and':
                if not self.cond(e[2]):
                    return 'bool', False
                return 'bool', self.cond(e[3])
            if op == 'or':
                if self.cond(e[2]):
                    return 'bool', True
                return 'bool', self.cond(e[3])
            ta, a = self.ev(e[2])
            tb, b = self.ev(e[3])
            if op in ('==', '!=', '<', '<=', '>', '>='):
                if ta == 'bool' or tb == 'bool':
                    r = a == b if op == '==' else a != b
                    return 'bool', r
                t = wider(ta, tb)
                if t in FLOATS:
                    a, b = conv(t, ta, a), conv(t, tb, b)
                return 'bool', {'==': a == b, '!=': a != b, '<': a < b, '<=': a <= b,
                                '>': a > b, '>=': a >= b}[op]
            # f32 op weak f64: the weak side converted to f32 first (a scalar: views are
            # never weak)
            if ta == 'f32' and tb == 'f64' and self.is_weak(e[3]):
                tb, b = 'f32', r32(b)
            elif tb == 'f32' and ta == 'f64' and self.is_weak(e[2]):
                ta, a = 'f32', r32(a)
            if isinstance(a, list) or isinstance(b, list):
                n = len(a) if isinstance(a, list) else len(b)
                la = a if isinstance(a, list) else [a] * n
                lb = b if isinstance(b, list) else [b] * n
                if len(la) != len(lb):
                    raise Invalid('views of different lengths')
                return wider(ta, tb), [self.arith(op, ta, x, tb, y) for x, y in zip(la, lb)]
            return wider(ta, tb), self.arith(op, ta, a, tb, b)
        if k == 'un':
            if e[1] == 'not':
                return 'bool', not self.cond(e[2])
            t, v = self.ev(e[2])
            if isinstance(v, list):
                return t, [-x if t in FLOATS else wrap(t, -x) for x in v]
            return t, (-v if t in FLOATS else wrap(t, -v))
        if k == 'idx':
            if any(x is None for x in e[2]):
                v = self.view_of(e)
                return v.type, v.values()
            name = e[1]
            if name in self.bufs:
                raise Invalid('read of buffer %s' % name)
            arr = self.array(name)
            return arr.type, arr.get([self.index(x) for x in e[2]])
        if k == 'call':
            return self.call(e)
        raise Invalid('expression %r' % (e,))

    def call(self, e, stmt=False):
        name, args = e[1], e[2]
        if name in self.fns:
            return self.call_user(name, [self.ev(a) for a in args])
        if name == 'printf':
            fmt = self.ev(args[0])[1]
            self.out.append(c_printf(fmt, [self.ev(a) for a in args[1:]]))
            return None, None
        if name == 'print':
            parts = []
            for a in args:
                if a[0] == 'var' and a[1] in self.arrays:  # a whole dist array
                    arr = self.arrays[a[1]]
                    parts.append(show_sparse(arr.type, sorted(arr.data.items())) if arr.sparse
                                 else show_dense(arr.type, arr.dims, arr.get))
                    continue
                if a[0] == 'idx' and None in a[2]:  # a view
                    v = self.view_of(a)
                    if v.arr.sparse:
                        f = 1 - v.free
                        parts.append(show_sparse(v.type, [((k[v.free],), x) for k, x in
                                                          sorted(v.arr.data.items())
                                                          if k[f] == v.key[f]]))
                    else:
                        parts.append(show_dense(v.type, [v.n], lambda k: v.arr.get(v.keyat(k[0]))))
                    continue
                t, v = self.ev(a)
                parts.append(fmt_float(v, t == 'f32') if t in FLOATS else
                             ('true' if v else 'false') if t == 'bool' else str(v))
            self.out.append(' '.join(parts) + '\n')
            return None, None
        if name == 'save':
            arr = self.arrays[args[0][1]]
            self.files[self.ev(args[1])[1]] = arr.save_text()
            return None, None
        if name in ('min', 'max'):
            ta, a = self.ev(args[0])
            tb, b = self.ev(args[1])
            t = wider(ta, tb)
            a, b = conv(t, ta, a), conv(t, tb, b)
            if name == 'min':
                return t, a if a <= b else b
            return t, a if a >= b else b
        if name == 'abs':
            t, v = self.ev(args[0])
            if t in FLOATS:
                return t, abs(v)
            return t, wrap(t, -v) if v < 0 else v
        if name in ('div', 'mod'):
            ta, a = self.ev(args[0])
            tb, b = self.ev(args[1])
            t = wider(ta, tb)
            if t in FLOATS:
                raise Invalid('%s of floats' % name)
            if b == 0:
                raise Invalid('division by zero')
            q = abs(a) // abs(b)
            if (a < 0) != (b < 0):
                q = -q
            if name == 'div':
                return t, wrap(t, q)
            return t, wrap(t, a - q * b)
        if name in ('i64', 'i32', 'f64', 'f32'):
            t, v = self.ev(args[0])
            return name, conv(name, t, v)
        if name in ('floor', 'ceil', 'sqrt'):
            # f32 -> f32 (sqrtf is correctly rounded, as sqrt rounded to f32 is), else f64
            t, v = self.ev(args[0])
            rt = 'f32' if t == 'f32' else 'f64'
            v = float(v)
            if name == 'sqrt':
                r = (math.sqrt(v) if v >= 0 else v if v != v else math.copysign(float('nan'), -1.0))
                return rt, r32(r) if rt == 'f32' else r
            if v != v or v in (INF, -INF):
                return rt, v
            r = float(math.floor(v) if name == 'floor' else math.ceil(v))
            if r == 0.0 and (v < 0 or math.copysign(1.0, v) < 0):
                r = -0.0
            return rt, r
        if name == 'rand':
            return 'f64', (self.loop.rng if self.loop else self.rng).uniform()
        if name == 'randint':
            t, n = self.ev(args[0])
            if n < 1:
                raise Invalid('randint(%d)' % n)
            return 'i64', (self.loop.rng if self.loop else self.rng).randint(n)
        if name == 'len':
            if args[0][0] == 'var':
                return 'i64', self.array(args[0][1]).dims[0]
            return 'i64', self.view_of(args[0]).n
        if name == 'set_seed':
            self.seed = self.ev(args[0])[1]
            self.rng = Rng(self.seed, PROGRAM_STREAM)
            return None, None
        if name in ('rows', 'cols', 'dim', 'nnz'):
            a = self.array(args[0][1])
            if name == 'rows':
                return 'i64', a.dims[0]
            if name == 'cols':
                return 'i64', a.dims[1]
            if name == 'dim':
                return 'i64', a.dims[self.ev(args[1])[1]]
            return 'i64', len(a.data)
        if name in ('sum', 'norm'):
            v = self.view_of(args[0])
            s = [0.0] * 8
            for x, val in enumerate(v.values()):
                val = float(val)
                s[x & 7] += val * val if name == 'norm' else val
            r = lanes(s)
            return 'f64', math.sqrt(r) if name == 'norm' else r
        if name == 'dot':
            # a view, or a whole 1-D array read as a vector
            a, b = [View(self.array(x[1]), [None]) if x[0] == 'var' else self.view_of(x)
                    for x in args[:2]]
            if a.n != b.n:
                raise Invalid('views of different lengths')
            if a.type == b.type == 'f32':
                # sixteen f32 partials, two eight-trees, p0..p7's first (language.md 13)
                s = [0.0] * 16
                for x, (p, q) in enumerate(zip(a.values(), b.values())):
                    s[x & 15] = r32(s[x & 15] + r32(p * q))
                return 'f32', r32(self.tree32(s[:8]) + self.tree32(s[8:]))
            s = [0.0] * 8
            for x, (p, q) in enumerate(zip(a.values(), b.values())):
                s[x & 7] += float(p) * float(q)
            return 'f64', lanes(s)
        raise Invalid('unknown function %s' % name)

    def call_user(self, name, args):
        fn = self.fns[name]
        _, _, params, ret, body = fn
        if len(params) != len(args):
            raise Invalid('%s: %d arguments' % (name, len(args)))
        sc = {}
        for (pn, pt), (ta, a) in zip(params, args):
            sc[pn] = [pt, conv(pt, ta, a)]
        saved = self.scopes
        self.scopes = [sc]
        self.in_fn += 1
        try:
            self.block(body, new_scope=False)
            result = None
        except Return as r:
            result = r.value
        finally:
            self.scopes = saved
            self.in_fn -= 1
        if ret is None:
            return None, None
        if result is None:
            raise Invalid('%s returned no value' % name)
        return ret, conv(ret, result[0], result[1])


def evaluate(prog, trace_text, explain_text, nranks):
    """(stdout, {saved path: text}) of the program's serial meaning for this run. Without a
    trace (None), every loop runs as one block in storage order: a check that the program
    is valid before it is compiled (random draws then differ from a real run's)."""
    it = Interp(prog, Trace(trace_text), parse_layouts(explain_text),
                parse_transforms(explain_text), nranks)
    out, files = it.run()
    if it.trace.pos != len(it.trace.loops):
        raise TraceError('the trace has %d loop runs, the program ran %d'
                         % (len(it.trace.loops), it.trace.pos))
    return out, files
