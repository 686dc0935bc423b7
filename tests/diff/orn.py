"""orn.py: the syntax tree of the .orn subset that the differential tester generates, its
printer and its parser.

The generator (gen.py) builds trees, the printer turns them into .orn text, and the oracle
(oracle.py) parses that text back: what the oracle runs is exactly what orionc compiled, and
regression tests (regress/*.orn, possibly edited by hand) go through the same path.

Expressions are tuples:
    ('lit', type, value)        type 'i64' 'f64' 'bool' 'str'
    ('var', name)
    ('bin', op, a, b)           + - * / == != < <= > >= and or
    ('un', op, a)               '-' or 'not'
    ('call', name, args, kw)    kw: list of (name, expr)
    ('idx', name, subs)         subs: expr, or None for ':'
Statements are tuples too:
    ('assign', target, op, expr)        op '=' '+=' '-=' '*=' '/='; target var or idx
    ('if', [(cond, body), ...], else_body or None)
    ('for', var, lo, hi, body)
    ('foreach', kvar, vvar, view, body)
    ('while', cond, body)
    ('pfor', ordered, keys, value or None, space, body, line)
    ('break',) ('continue',) ('return', expr or None)
    ('call', callexpr)
    ('dist', name, expr)
    ('fn', name, params [(name, type)], ret or None, body)
    ('const', name, expr)
    ('param', name, literal)
    ('data', path, [line, ...])         a data file embedded as '#@file path' then '#| line'
A program is a list of statements. Line numbers of parallel_for statements are filled in by
the parser (the trace names loops by line).
"""

import re

PREC = {'or': 1, 'and': 2, '==': 4, '!=': 4, '<': 4, '<=': 4, '>': 4, '>=': 4,
        '+': 5, '-': 5, '*': 6, '/': 6}
UNARY_PREC = {'not': 3, '-': 7}


# ---------------------------------------------------------------- printer

def fmt_float(x):
    """A float literal the lexer accepts ('1.0', '2.5e-3'; never '.5' or '5.')."""
    s = repr(float(x))
    if 'e' in s:
        m, e = s.split('e')
        if '.' not in m:
            m += '.0'
        return m + 'e' + e
    return s


def expr_str(e, prec=0):
    k = e[0]
    if k == 'lit':
        t, v = e[1], e[2]
        if t == 'bool':
            return 'true' if v else 'false'
        if t == 'str':
            return '"' + ''.join(UNESC.get(c, c) for c in v) + '"'
        if t == 'f64':
            s = fmt_float(v)
        else:
            s = str(v)
        if s.startswith('-'):
            return '(' + s + ')' if prec > 0 else s
        return s
    if k == 'var':
        return e[1]
    if k == 'bin':
        p = PREC[e[1]]
        # comparisons do not chain: both sides bind tighter
        lp = p + 1 if p == 4 else p
        s = expr_str(e[2], lp) + ' ' + e[1] + ' ' + expr_str(e[3], p + 1)
        return '(' + s + ')' if p < prec else s
    if k == 'un':
        p = UNARY_PREC[e[1]]
        s = ('not ' if e[1] == 'not' else '-') + expr_str(e[2], p)
        return '(' + s + ')' if p < prec else s
    if k == 'call':
        parts = [expr_str(a) for a in e[2]] + [n + ' = ' + expr_str(v) for n, v in e[3]]
        return e[1] + '(' + ', '.join(parts) + ')'
    if k == 'idx':
        return e[1] + '[' + ', '.join(':' if s is None else expr_str(s) for s in e[2]) + ']'
    raise ValueError('bad expression %r' % (e,))


class Printer:
    def __init__(self):
        self.lines = []

    def emit(self, depth, text):
        self.lines.append('    ' * depth + text)

    def block(self, body, depth):
        for s in body:
            self.stmt(s, depth)

    def stmt(self, s, d):
        k = s[0]
        if k == 'assign':
            self.emit(d, '%s %s %s' % (expr_str(s[1]), s[2], expr_str(s[3])))
        elif k == 'if':
            for i, (c, body) in enumerate(s[1]):
                self.emit(d, ('if ' if i == 0 else 'elif ') + expr_str(c))
                self.block(body, d + 1)
            if s[2] is not None:
                self.emit(d, 'else')
                self.block(s[2], d + 1)
            self.emit(d, 'end')
        elif k == 'for':
            self.emit(d, 'for %s in %s..%s' % (s[1], expr_str(s[2], 5), expr_str(s[3], 5)))
            self.block(s[4], d + 1)
            self.emit(d, 'end')
        elif k == 'foreach':
            self.emit(d, 'for (%s, %s) in %s' % (s[1], s[2], expr_str(s[3])))
            self.block(s[4], d + 1)
            self.emit(d, 'end')
        elif k == 'while':
            self.emit(d, 'while ' + expr_str(s[1]))
            self.block(s[2], d + 1)
            self.emit(d, 'end')
        elif k == 'pfor':
            keys = s[2][0] if len(s[2]) == 1 else '(' + ', '.join(s[2]) + ')'
            head = ('@ordered ' if s[1] else '') + 'parallel_for ' + keys
            if s[3] is not None:
                head += ', ' + s[3]
            self.emit(d, head + ' in ' + s[4])
            self.block(s[5], d + 1)
            self.emit(d, 'end')
        elif k in ('break', 'continue'):
            self.emit(d, k)
        elif k == 'return':
            self.emit(d, 'return' + ('' if s[1] is None else ' ' + expr_str(s[1])))
        elif k == 'call':
            self.emit(d, expr_str(s[1]))
        elif k == 'dist':
            self.emit(d, 'dist %s = %s' % (s[1], expr_str(s[2])))
        elif k in ('const', 'param'):
            self.emit(d, '%s %s = %s' % (k, s[1], expr_str(s[2])))
        elif k == 'fn':
            ps = ', '.join('%s: %s' % p for p in s[2])
            self.emit(d, 'fn %s(%s)%s' % (s[1], ps, ' -> ' + s[3] if s[3] else ''))
            self.block(s[4], d + 1)
            self.emit(d, 'end')
        elif k == 'data':
            self.emit(d, '#@file ' + s[1])
            for line in s[2]:
                self.emit(d, '#| ' + line)
        elif k == 'comment':
            self.emit(d, '# ' + s[1])
        else:
            raise ValueError('bad statement %r' % (s,))


def program_str(prog):
    p = Printer()
    p.block(prog, 0)
    return '\n'.join(p.lines) + '\n'


# ---------------------------------------------------------------- parser

TOKEN = re.compile(r'\s*(?:(\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)|(\d+)|([A-Za-z_]\w*)|'
                   r'("(?:[^"\\]|\\.)*")|(\.\.|==|!=|<=|>=|\+=|-=|\*=|/=|->|[-+*/<>=(),:\[\]@;]))')


ESC = {'n': '\n', 't': '\t', '"': '"', '\\': '\\'}


UNESC = {v: '\\' + k for k, v in ESC.items()}


class ParseError(Exception):
    pass


def tokenize(line, lineno):
    out, pos = [], 0
    while pos < len(line):
        if line[pos:].strip() == '' or line[pos:].lstrip().startswith('#'):
            break
        m = TOKEN.match(line, pos)
        if not m:
            raise ParseError('line %d: cannot read %r' % (lineno, line[pos:]))
        pos = m.end()
        f, i, n, s, o = m.groups()
        if f is not None:
            out.append(('float', float(f)))
        elif i is not None:
            out.append(('int', int(i)))
        elif n is not None:
            out.append(('name', n))
        elif s is not None:
            out.append(('str', re.sub(r'\\(.)', lambda m: ESC[m.group(1)], s[1:-1])))
        else:
            out.append(('op', o))
    return out


class ExprParser:
    def __init__(self, toks, lineno):
        self.t = toks
        self.i = 0
        self.lineno = lineno

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else ('eof', None)

    def next(self):
        tok = self.peek()
        self.i += 1
        return tok

    def want(self, v):
        tok = self.next()
        if tok[1] != v or tok[0] not in ('op', 'name'):
            raise ParseError('line %d: expected %r, found %r' % (self.lineno, v, tok))

    def at(self, v):
        tok = self.peek()
        return tok[0] in ('op', 'name') and tok[1] == v

    def expr(self, prec=1):
        if self.at('not') and prec <= 3:
            self.next()
            left = ('un', 'not', self.expr(3))
        else:
            left = self.unary()
        while True:
            tok = self.peek()
            op = tok[1] if tok[0] in ('op', 'name') else None
            p = PREC.get(op)
            if p is None or p < prec:
                return left
            self.next()
            right = self.expr(p + 1)
            left = ('bin', op, left, right)

    def unary(self):
        if self.at('-'):
            self.next()
            tok = self.peek()
            if tok[0] in ('int', 'float') and not self.at_postfix(1):
                self.next()
                return ('lit', 'i64' if tok[0] == 'int' else 'f64', -tok[1])
            return ('un', '-', self.unary())
        return self.primary()

    def at_postfix(self, k):
        tok = self.peek(k)
        return tok[0] == 'op' and tok[1] in ('(', '[')

    def primary(self):
        tok = self.next()
        if tok[0] == 'int':
            return ('lit', 'i64', tok[1])
        if tok[0] == 'float':
            return ('lit', 'f64', tok[1])
        if tok[0] == 'str':
            return ('lit', 'str', tok[1])
        if tok[0] == 'op' and tok[1] == '(':
            e = self.expr()
            self.want(')')
            return e
        if tok[0] == 'name':
            n = tok[1]
            if n in ('true', 'false'):
                return ('lit', 'bool', n == 'true')
            if self.at('('):
                self.next()
                args, kw = [], []
                while not self.at(')'):
                    if self.peek()[0] == 'name' and self.peek(1) == ('op', '='):
                        k = self.next()[1]
                        self.next()
                        kw.append((k, self.expr()))
                    else:
                        args.append(self.expr())
                    if not self.at(')'):
                        self.want(',')
                self.next()
                return ('call', n, args, kw)
            if self.at('['):
                self.next()
                subs = []
                while not self.at(']'):
                    if self.at(':'):
                        self.next()
                        subs.append(None)
                    else:
                        subs.append(self.expr())
                    if not self.at(']'):
                        self.want(',')
                self.next()
                return ('idx', n, subs)
            return ('var', n)
        raise ParseError('line %d: unexpected %r' % (self.lineno, tok))

    def done(self):
        if self.i != len(self.t):
            raise ParseError('line %d: trailing %r' % (self.lineno, self.t[self.i:]))


def parse_program(text):
    """Parse the generated subset; returns the statement list (ParseError if not)."""
    lines = text.split('\n')
    pos = [0]

    def expr_of(toks, lineno):
        p = ExprParser(toks, lineno)
        e = p.expr()
        p.done()
        return e

    def block(enders):
        body = []
        while pos[0] < len(lines):
            lineno = pos[0] + 1
            raw = lines[pos[0]]
            stripped = raw.strip()
            if stripped.startswith('#@file '):
                path = stripped[7:].strip()
                pos[0] += 1
                data = []
                while pos[0] < len(lines) and lines[pos[0]].strip().startswith('#|'):
                    data.append(lines[pos[0]].strip()[2:].strip())
                    pos[0] += 1
                body.append(('data', path, data))
                continue
            toks = tokenize(raw, lineno)
            pos[0] += 1
            if not toks:
                continue
            head = toks[0][1] if toks[0][0] in ('name', 'op') else None
            if head in enders:
                return body, head, toks, lineno
            body.append(statement(toks, lineno))
        if enders != ('<eof>',):
            raise ParseError('unexpected end of input (missing end)')
        return body, '<eof>', [], len(lines)

    def body_until_end():
        body, ender, _, lineno = block(('end',))
        return body

    def statement(toks, lineno):
        head = toks[0][1] if toks[0][0] in ('name', 'op') else None
        if head == 'if':
            arms, els = [], None
            cond = expr_of(toks[1:], lineno)
            while True:
                body, ender, etoks, eline = block(('elif', 'else', 'end'))
                arms.append((cond, body))
                if ender == 'elif':
                    cond = expr_of(etoks[1:], eline)
                    continue
                if ender == 'else':
                    els = body_until_end()
                return ('if', arms, els)
        if head == 'while':
            cond = expr_of(toks[1:], lineno)
            return ('while', cond, body_until_end())
        if head == 'for':
            if toks[1] == ('op', '('):
                k, v = toks[2][1], toks[4][1]
                if toks[3] != ('op', ',') or toks[5] != ('op', ')') or toks[6] != ('name', 'in'):
                    raise ParseError('line %d: bad for' % lineno)
                view = expr_of(toks[7:], lineno)
                return ('foreach', k, v, view, body_until_end())
            var = toks[1][1]
            if toks[2] != ('name', 'in'):
                raise ParseError('line %d: bad for' % lineno)
            dots = [i for i, t in enumerate(toks) if t == ('op', '..')]
            if len(dots) != 1:
                raise ParseError('line %d: bad range' % lineno)
            lo = expr_of(toks[3:dots[0]], lineno)
            hi = expr_of(toks[dots[0] + 1:], lineno)
            return ('for', var, lo, hi, body_until_end())
        if head == '@' or head == 'parallel_for':
            ordered = False
            if head == '@':
                if toks[1] != ('name', 'ordered'):
                    raise ParseError('line %d: only @ordered is generated' % lineno)
                ordered = True
                toks = toks[2:]
            i = 1
            if toks[i] == ('op', '('):
                keys = []
                i += 1
                while toks[i] != ('op', ')'):
                    keys.append(toks[i][1])
                    i += 1
                    if toks[i] == ('op', ','):
                        i += 1
                i += 1
            else:
                keys = [toks[i][1]]
                i += 1
            val = None
            if toks[i] == ('op', ','):
                val = toks[i + 1][1]
                i += 2
            if toks[i] != ('name', 'in'):
                raise ParseError('line %d: bad parallel_for' % lineno)
            space = toks[i + 1][1]
            return ('pfor', ordered, keys, val, space, body_until_end(), lineno)
        if head in ('break', 'continue'):
            return (head,)
        if head == 'return':
            return ('return', expr_of(toks[1:], lineno) if len(toks) > 1 else None)
        if head == 'dist':
            if toks[2] != ('op', '='):
                raise ParseError('line %d: bad dist' % lineno)
            return ('dist', toks[1][1], expr_of(toks[3:], lineno))
        if head in ('const', 'param'):
            return (head, toks[1][1], expr_of(toks[3:], lineno))
        if head == 'fn':
            name = toks[1][1]
            i = 3
            params = []
            while toks[i] != ('op', ')'):
                params.append((toks[i][1], toks[i + 2][1]))
                i += 3
                if toks[i] == ('op', ','):
                    i += 1
            ret = toks[i + 2][1] if i + 1 < len(toks) and toks[i + 1] == ('op', '->') else None
            return ('fn', name, params, ret, body_until_end())
        # assignment or call
        for j, t in enumerate(toks):
            if t[0] == 'op' and t[1] in ('=', '+=', '-=', '*=', '/='):
                depth = 0
                for u in toks[:j]:
                    if u[1] in ('(', '['):
                        depth += 1
                    elif u[1] in (')', ']'):
                        depth -= 1
                if depth == 0:
                    return ('assign', expr_of(toks[:j], lineno), t[1], expr_of(toks[j + 1:], lineno))
        e = expr_of(toks, lineno)
        if e[0] != 'call':
            raise ParseError('line %d: expression statement is not a call' % lineno)
        return ('call', e)

    body, ender, _, _ = block(('<eof>',))
    return body


def data_files(prog):
    """{path: text} of the data files embedded in a program."""
    return {s[1]: ''.join(l + '\n' for l in s[2]) for s in prog if s[0] == 'data'}
