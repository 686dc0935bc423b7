#!/usr/bin/env python3
"""Turn the KJV text (lines "Book1:1 text") into a bag-of-words corpus for LDA.

usage: text2docword.py KJV.txt OUTPREFIX --stop STOPLIST [--min-df 5] [--max-df 0.5]
                       [--min-len 3] [--min-doc 3]
writes OUTPREFIX.docword ("doc word count", 0-based, sorted by doc then word),
       OUTPREFIX.vocab (word k on line k+1). One document per verse.
Standard library only.
"""
import argparse
import collections
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("inp")
ap.add_argument("out")
ap.add_argument("--stop", required=True)
ap.add_argument("--min-df", type=int, default=5)
ap.add_argument("--max-df", type=float, default=0.5)
ap.add_argument("--min-len", type=int, default=3)
ap.add_argument("--min-doc", type=int, default=3)
a = ap.parse_args()

stop = set()
for line in open(a.stop, encoding="utf-8", errors="replace"):
    w = line.strip().lower()
    if w and not w.startswith("#"):
        stop.add(w.replace("'", ""))

verse = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")
tok = re.compile(r"[a-z]+")
docs = []
for line in open(a.inp, encoding="latin-1"):
    m = verse.match(line.rstrip("\n"))
    if not m:
        continue
    words = [w for w in tok.findall(m.group(4).lower().replace("'", ""))
             if len(w) >= a.min_len and w not in stop]
    docs.append(words)

df = collections.Counter()
for d in docs:
    df.update(set(d))
keep = {w for w, c in df.items() if c >= a.min_df and c <= a.max_df * len(docs)}
docs = [[w for w in d if w in keep] for d in docs]
docs = [d for d in docs if len(d) >= a.min_doc]
df = collections.Counter()
for d in docs:
    df.update(set(d))
vocab = sorted(df, key=lambda w: (-df[w], w))
wid = {w: i for i, w in enumerate(vocab)}
ntok = 0
with open(a.out + ".docword", "w") as f:
    for k, d in enumerate(docs):
        for i, c in sorted(collections.Counter(wid[w] for w in d).items()):
            f.write(f"{k} {i} {c}\n")
        ntok += len(d)
with open(a.out + ".vocab", "w") as f:
    f.writelines(w + "\n" for w in vocab)
print(f"fetch-data: kjv: {len(docs)} docs, {len(vocab)} words, {ntok} tokens", file=sys.stderr)
