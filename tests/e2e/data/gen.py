#!/usr/bin/env python3
"""Writes the tiny synthetic inputs of the end-to-end tests (committed; rerun to recreate).

ratings.train/.test  "user item rating": 60 users x 45 items, rank-3 truth plus noise,
                     ratings in [1, 5] rounded to halves; every 10th rating of a user is test
tokens.docword       "doc word count": 40 documents over 70 words from 4 topics
tiny.libsvm          "label idx:value ...": 90 samples, 12 features, two separable-ish classes
user.features        "user feature value": sparse side features of the 60 users (8 features)
item.features        "item feature value": sparse side features of the 45 items (6 features)
seq_a.txt, seq_b.txt "index symbol": two sequences over 4 symbols (230 and 190 long), the
                     second a mutated copy of part of the first (edit distance)
"""
import random

rnd = random.Random(20261122)

def ratings():
    U, I, K = 60, 45, 3
    wu = [[rnd.gauss(0, 1) for _ in range(K)] for _ in range(U)]
    hi = [[rnd.gauss(0, 1) for _ in range(K)] for _ in range(I)]
    train, test = [], []
    for u in range(U):
        items = sorted(rnd.sample(range(I), rnd.randint(8, 25)))
        for n, i in enumerate(items):
            r = 3.0 + 0.6 * sum(a * b for a, b in zip(wu[u], hi[i])) + rnd.gauss(0, 0.3)
            r = min(5.0, max(1.0, round(r * 2) / 2))
            (test if n % 10 == 9 else train).append((u, i, r))
    with open("ratings.train", "w") as f:
        f.write("# synthetic ratings: user item rating\n")
        for t in train:
            f.write("%d %d %.1f\n" % t)
    with open("ratings.test", "w") as f:
        for t in test:
            f.write("%d %d %.1f\n" % t)

def docword():
    D, V, T = 40, 70, 4
    topics = [[rnd.random() ** 3 if w % T == t else 0.02 for w in range(V)] for t in range(T)]
    with open("tokens.docword", "w") as f:
        for d in range(D):
            mix = [rnd.random() for _ in range(T)]
            counts = {}
            for _ in range(rnd.randint(15, 40)):
                t = rnd.choices(range(T), weights=mix)[0]
                w = rnd.choices(range(V), weights=topics[t])[0]
                counts[w] = counts.get(w, 0) + 1
            for w in sorted(counts):
                f.write("%d %d %d\n" % (d, w, counts[w]))

def libsvm():
    F = 12
    truth = [rnd.gauss(0, 1) for _ in range(F)]
    with open("tiny.libsvm", "w") as f:
        for _ in range(90):
            feats = sorted(rnd.sample(range(F), rnd.randint(3, 8)))
            vals = {j: round(rnd.uniform(-1, 1), 3) for j in feats}
            z = sum(truth[j] * v for j, v in vals.items()) + rnd.gauss(0, 0.3)
            label = "+1" if z > 0 else "-1"
            f.write(label + "".join(" %d:%g" % (j + 1, vals[j]) for j in feats) + "\n")

def features():
    for path, n, nf, lo, hi in (("user.features", 60, 8, 2, 4), ("item.features", 45, 6, 1, 3)):
        with open(path, "w") as f:
            f.write("# sparse side features: row feature value\n")
            for r in range(n):
                for c in sorted(rnd.sample(range(nf), rnd.randint(lo, hi))):
                    f.write("%d %d %g\n" % (r, c, rnd.choice([0.5, 1, 1.5, -0.5, 0.25])))

def sequences():
    a = [rnd.randrange(4) for _ in range(230)]
    b = list(a[25:])
    for _ in range(40):
        k = rnd.randrange(len(b))
        op = rnd.randrange(3)
        if op == 0:
            b[k] = rnd.randrange(4)
        elif op == 1:
            del b[k]
        else:
            b.insert(k, rnd.randrange(4))
    b = b[:190]
    for path, s in (("seq_a.txt", a), ("seq_b.txt", b)):
        with open(path, "w") as f:
            for i, v in enumerate(s):
                f.write("%d %d\n" % (i, v))

ratings()
docword()
libsvm()
features()
sequences()
