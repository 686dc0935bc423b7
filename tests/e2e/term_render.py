#!/usr/bin/env python3
"""term_render.py TYPESCRIPT: what a terminal shows at the end of a session that script(1)
recorded: the text of every line once carriage returns, "ESC [ K" (erase to the end of the
line) and newlines have acted, as a terminal applies them. The lines script itself adds
("Script started ...", "Script done ...") and blank lines at the end are left out. Any other escape sequence is an
error (the progress line uses only these two controls).

Prints the lines on stdout (exit 0), or what it cannot render on stderr (exit 1)."""
import sys


def render(data):
    lines, line, col, i = [], [], 0, 0
    while i < len(data):
        c = data[i]
        if c == "\r":
            col = 0
        elif c == "\n":
            lines.append("".join(line).rstrip(" "))
            line, col = [], 0
        elif c == "\x1b":
            if data[i + 1:i + 3] != "[K":
                raise ValueError("escape sequence %r at offset %d" % (data[i:i + 6], i))
            del line[col:]
            i += 2
        else:
            if col < len(line):
                line[col] = c
            else:
                line.extend(" " * (col - len(line)))
                line.append(c)
            col += 1
        i += 1
    if line:
        lines.append("".join(line).rstrip(" "))
    return lines


def main():
    text = open(sys.argv[1], encoding="utf-8", errors="replace", newline="").read()
    try:
        lines = render(text)
    except ValueError as e:
        print("term_render.py: %s" % e, file=sys.stderr)
        return 1
    lines = [ln for ln in lines if not ln.startswith(("Script started on ", "Script done on "))]
    while lines and not lines[-1]:  # script's blank line before "Script done"
        lines.pop()
    for ln in lines:
        print(ln)
    return 0


if __name__ == "__main__":
    sys.exit(main())
