"""scalar_gen.py: random top-level scalar code for the REPL, whose pieces the evaluator runs
(tools/repl/eval.c) and, with ORN_REPL_COMPILE=1, the code generator and the C compiler: the
two must print the same (tests/repl/scalar_diff.sh). i32, i64, f32, f64 and bool values from
literals chosen at the edges (wrapping integers, -0.0, subnormals, 3.4e38, 2^24 + 1), mixed
with weak floats and integers in + - * /, unary minus, abs, min, max, sqrt, floor, ceil,
pow, div, mod, conversions, comparisons, and/or/not; variables, compound updates, if/else
and for. No transcendental functions other than sqrt: a C compiler may fold exp(c) with
another rounding than libm's.

Usage: scalar_gen.py SEED [LINES] > prog.in
"""
import random
import sys

r = random.Random(int(sys.argv[1]))
N = int(sys.argv[2]) if len(sys.argv) > 2 else 40
vars_ = {'i32': [], 'i64': [], 'f32': [], 'f64': [], 'bool': []}
out = []
def lit(t):
    if t == 'i64': return str(r.choice([0, 1, 2, -3, 7, 100, 2147483647, -2147483648, 9223372036854775807]))
    if t == 'i32': return 'i32(%d)' % r.choice([0, 1, -1, 5, 2147483647, -2147483648])
    if t == 'f64': return r.choice(['0.0', '1.0', '0.1', '-0.0', '2.5', '1e300', '3.0', '0.5', '1e-310', '-7.25', '16777217.0'])
    if t == 'f32': return 'f32(%s)' % r.choice(['0.0', '0.1', '1.0', '-0.0', '3.4e38', '1e-40', '2.5', '0.3', '16777216.0'])
    return r.choice(['true', 'false'])
def ex(t, d):
    if d <= 0 or r.random() < 0.25:
        if vars_[t] and r.random() < 0.6: return r.choice(vars_[t])
        return lit(t)
    c = r.random()
    if t == 'bool':
        if c < 0.3: return '(%s %s %s)' % (ex('bool', d-1), r.choice(['and', 'or']), ex('bool', d-1))
        if c < 0.4: return '(not %s)' % ex('bool', d-1)
        ot = r.choice(['i32', 'i64', 'f32', 'f64'])
        ot2 = r.choice([ot, 'f64', 'i64', 'weak'])
        b = lit('f64') if ot2 == 'weak' else ex(ot2, d-1)
        return '(%s %s %s)' % (ex(ot, d-1), r.choice(['<', '<=', '>', '>=', '==', '!=']), b)
    if t in ('f32', 'f64'):
        if c < 0.45:
            op = r.choice(['+', '-', '*', '/'])
            rt = r.choice([t, t, 'i64', 'i32', 'weak', 'bool'])
            a = ex(t, d-1)
            b = lit('f64') if rt == 'weak' else ex(rt, d-1)
            if rt == 'bool': b = 'f64(%s)' % ('1' if r.random() < 0.5 else '0')
            if r.random() < 0.5: a, b = b, a
            return '(%s %s %s)' % (a, op, b)
        if c < 0.55: return '(-%s)' % ex(t, d-1)
        if c < 0.62: return 'abs(%s)' % ex(t, d-1)
        if c < 0.7: return '%s(%s, %s)' % (r.choice(['min', 'max']), ex(t, d-1), r.choice([ex(t, d-1), lit('f64')]))
        if c < 0.75: return 'sqrt(abs(%s))' % ex(t, d-1)
        if c < 0.8: return '%s(%s)' % (r.choice(['floor', 'ceil']), ex(t, d-1))
        if c < 0.9: return '%s(%s)' % (t, ex(r.choice(['i32', 'i64', 'f32', 'f64']), d-1))
        if c < 0.95: return 'pow(%s, %s)' % (ex(t, d-1), r.choice(['2.0', '0.5', '3', '-1.0']))
        return '(%s - %s)' % (r.choice(['0.0', '0', '-0.0']), ex(r.choice(['i64', t]), d-1))
    if c < 0.5:
        op = r.choice(['+', '-', '*'])
        return '(%s %s %s)' % (ex(t, d-1), op, ex(r.choice([t, 'i32']), d-1))
    if c < 0.6: return '(-%s)' % ex(t, d-1)
    if c < 0.7: return 'abs(%s)' % ex(t, d-1)
    if c < 0.8: return '%s(%s, %s)' % (r.choice(['div', 'mod']), ex(t, d-1), r.choice(['3', '-7', '1']))
    if c < 0.9: return '%s(%s)' % (t, 'floor(min(max(%s, -1000.0), 1000.0))' % ex(r.choice(['f32', 'f64']), d-1))
    return '%s(%s, %s)' % (r.choice(['min', 'max']), ex(t, d-1), ex(t, d-1))
n = 0
def stmt(ind):
    global n
    t = r.choice(['i32', 'i64', 'f32', 'f64', 'f64', 'f32', 'bool'])
    e = ex(t, r.randint(1, 4))
    c = r.random()
    if c < 0.3 and ind == '':
        name = 'v%d' % n; n += 1
        out.append('%s = %s(%s)' % (name, t, e) if t in ('i32', 'f32') else '%s = %s' % (name, e))
        vars_[t].append(name)
        out.append('print(%s)' % name)
    elif c < 0.5 and any(vars_[k] for k in ('i32', 'i64', 'f32', 'f64')):
        vt = r.choice([k for k in ('i32', 'i64', 'f32', 'f64') if vars_[k]])
        v = r.choice(vars_[vt])
        et = r.choice([vt, 'f64', 'i64', 'weak'])
        if vt in ('i32', 'i64') and et in ('f64', 'weak'): et = 'i64'
        op = r.choice(['+=', '-=', '*=', '='])
        if vt in ('i32', 'i64') and op == '=': op = '+='
        rhs = lit('f64') if et == 'weak' else ex(et, 2)
        out.append('%s%s %s %s' % (ind, v, op, rhs))
        out.append('%sprint(%s)' % (ind, v))
    elif c < 0.6 and ind == '':
        out.append('if %s' % ex('bool', 2))
        stmt('    ')
        out.append('else')
        stmt('    ')
        out.append('end')
    elif c < 0.7 and ind == '':
        k = 'k%d' % n; n += 1
        out.append('for %s in 0..%d' % (k, r.randint(0, 5)))
        stmt('    ')
        out.append('end')
    else:
        out.append('%sprint(%s)' % (ind, e))
for i in range(N):
    stmt('')
print('\n'.join(out))
