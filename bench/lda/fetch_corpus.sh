#!/bin/sh
# bench/lda/fetch_corpus.sh OUT.docword: the real corpus of the lda workload, the English
# long descriptions of Debian 12 packages (the archive's i18n/Translation-en index; about
# 60k documents, 2.1M tokens after stop words and rare words are dropped), written as
# "doc word count" lines. Needs one `apt-get update` with Acquire::Languages=en when the
# index is missing. The stop list is SMART's, from Debian's r-cran-tm (unpacked, not
# installed). Exits non-zero if the index cannot be had (bench/run.sh then falls back).
set -eu
OUT=$1
WORK=$(dirname "$OUT")/lda-work
mkdir -p "$WORK"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
L=/var/lib/apt/lists
TR=$(ls $L/*_debian_dists_bookworm_main_i18n_Translation-en* 2>/dev/null | head -1 || true)
if [ -z "$TR" ]; then
  $SUDO apt-get -qq -o Acquire::Languages=en update >&2
  TR=$(ls $L/*_debian_dists_bookworm_main_i18n_Translation-en* | head -1)
fi
if [ ! -d "$WORK/tm" ]; then
  (cd "$WORK" && apt-get -qq -o APT::Sandbox::User=root download r-cran-tm >&2)
  dpkg -x "$(ls "$WORK"/r-cran-tm_*.deb | head -1)" "$WORK/tm"
fi
STOP=$(find "$WORK/tm" -name SMART.dat | head -1)
/usr/lib/apt/apt-helper cat-file "$TR" | python3 -c '
import collections, re, sys
stop = {l.strip().lower().replace("\x27", "") for l in open(sys.argv[1], errors="replace")}
docs, seen, md5, buf = [], set(), None, []
def flush():
    if md5 and md5 not in seen and buf:
        seen.add(md5)
        docs.append([w for w in re.findall("[a-z]+", " ".join(buf).lower())
                     if len(w) >= 3 and w not in stop])
for l in sys.stdin:
    l = l.rstrip("\n")
    if l.startswith("Package: "): flush(); md5, buf = None, []
    elif l.startswith("Description-md5: "): md5 = l[17:]
    elif l.startswith("Description-en: "): buf.append(l[16:])
    elif l.startswith(" ") and l != " .": buf.append(l[1:])
flush()
df = collections.Counter()
for d in docs: df.update(set(d))
keep = {w for w, c in df.items() if c >= 5 and c <= 0.5 * len(docs)}
docs = [[w for w in d if w in keep] for d in docs]
docs = [d for d in docs if len(d) >= 10]
vocab = {}
for d in docs:
    for w in d: vocab.setdefault(w, len(vocab))
ntok = 0
with open(sys.argv[2], "w") as f:
    for k, d in enumerate(docs):
        for i, c in sorted(collections.Counter(vocab[w] for w in d).items()):
            f.write(f"{k} {i} {c}\n")
        ntok += len(d)
print(f"fetch_corpus: {len(docs)} documents, {len(vocab)} words, {ntok} tokens", file=sys.stderr)
' "$STOP" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
