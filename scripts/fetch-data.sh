#!/bin/sh
# Fetch the real data sets the examples train on, from Debian's package archive, into
# data/ (or $ORN_DATA). Nothing here is committed: MovieLens' terms forbid redistribution.
#
#   scripts/fetch-data.sh [movielens] [kjv] [heart_scale] [grants]   (default: all)
#
# Writes:
#   movielens_small.triplets/.train/.test  "user item rating", 0-based (from r-cran-dslabs);
#                                          test = every 10th rating of each user's list;
#   movielens_small.train_by_item          the training ratings as "item user rating" (ALS)
#   kjv_verse.docword/.vocab               "doc word count" (from bible-kjv-text)
#   heart_scale.libsvm                     (from liblinear-tools)
#   grants_train.libsvm/grants_test.libsvm (from r-cran-modeldata)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${ORN_DATA:-$ROOT/data}
WORK=$DATA/.work
mkdir -p "$DATA" "$WORK/debs" "$WORK/root"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

say() { echo "fetch-data: $*" >&2; }
apt_ready() {
  [ -n "$(ls /var/lib/apt/lists/*_Packages* 2>/dev/null | head -1)" ] || $SUDO apt-get update -qq
}
# fetch_pkg NAME: download (not install) a .deb and unpack it; prints the directory.
fetch_pkg() {
  dest=$WORK/root/$1
  if [ ! -d "$dest" ]; then
    apt_ready
    (cd "$WORK/debs" && apt-get -o APT::Sandbox::User=root download "$1" >/dev/null 2>&1) ||
      { $SUDO apt-get update -qq; (cd "$WORK/debs" && apt-get -o APT::Sandbox::User=root download "$1" >&2); }
    deb=$(ls "$WORK/debs/$1"_*.deb | head -1)
    rm -rf "$dest.tmp"; mkdir -p "$dest.tmp"; dpkg -x "$deb" "$dest.tmp"; mv "$dest.tmp" "$dest"
    say "unpacked $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)"
  fi
  echo "$dest"
}
need_r() {
  command -v Rscript >/dev/null 2>&1 && return
  say "installing R (r-base-core) to read R-packaged data sets"
  apt_ready
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends r-base-core >/dev/null
}

# The training ratings by item, "item user rating": examples/als.orn reads each item's
# users as a row of this file.
movielens_by_item() {
  [ -s "$DATA/movielens_small.train_by_item" ] && return
  awk '{ print $2, $1, $3 }' "$DATA/movielens_small.train" > "$DATA/movielens_small.train_by_item"
}

movielens() {
  [ -s "$DATA/movielens_small.test" ] && { movielens_by_item; say "movielens: present"; return; }
  need_r
  lib=$(fetch_pkg r-cran-dslabs)/usr/lib/R/site-library
  Rscript --vanilla - "$lib" "$DATA/movielens_small.triplets" <<'R'
a <- commandArgs(TRUE); e <- new.env()
invisible(lazyLoad(file.path(a[1], "dslabs", "data", "Rdata"), envir = e))
m <- e$movielens; m <- m[order(m$userId, m$movieId), ]
u <- match(m$userId, sort(unique(m$userId))) - 1L
i <- match(m$movieId, sort(unique(m$movieId))) - 1L
write.table(data.frame(u, i, m$rating), a[2], quote = FALSE, row.names = FALSE, col.names = FALSE)
R
  awk '{ if ($1 != u) { u = $1; n = 0 } if (n++ % 10 == 9) print > "/dev/stderr"; else print }' \
    "$DATA/movielens_small.triplets" > "$DATA/movielens_small.train" 2> "$DATA/movielens_small.test"
  movielens_by_item
  say "movielens: $(wc -l < "$DATA/movielens_small.train") train, $(wc -l < "$DATA/movielens_small.test") test ratings"
}

kjv() {
  [ -s "$DATA/kjv_verse.docword" ] && { say "kjv: present"; return; }
  txt=$(fetch_pkg bible-kjv-text)/usr/lib
  bin=$(fetch_pkg bible-kjv)/usr/bin/bible
  stop=$(fetch_pkg r-cran-tm)/usr/lib/R/site-library/tm/stopwords/SMART.dat
  "$bin" -f -p "$txt" Ge1:1-Rev22:21 < /dev/null > "$WORK/kjv.txt"
  python3 "$ROOT/scripts/text2docword.py" "$WORK/kjv.txt" "$DATA/kjv_verse" --stop "$stop"
}

heart_scale() {
  [ -s "$DATA/heart_scale.libsvm" ] && { say "heart_scale: present"; return; }
  d=$(fetch_pkg liblinear-tools)/usr/share/doc/liblinear-tools/examples
  if [ -f "$d/heart_scale.gz" ]; then gzip -dc "$d/heart_scale.gz" > "$DATA/heart_scale.libsvm"
  else cp "$d/heart_scale" "$DATA/heart_scale.libsvm"; fi
  say "heart_scale: $(wc -l < "$DATA/heart_scale.libsvm") samples"
}

grants() {
  [ -s "$DATA/grants_test.libsvm" ] && { say "grants: present"; return; }
  need_r
  lib=$(fetch_pkg r-cran-modeldata)/usr/lib/R/site-library
  Rscript --vanilla - "$lib" "$DATA" <<'R'
a <- commandArgs(TRUE); e <- new.env()
invisible(lazyLoad(file.path(a[1], "modeldata", "data", "Rdata"), envir = e))
onehot <- function(d) {
  cols <- list()
  for (v in names(d)) {
    x <- d[[v]]
    if (is.factor(x)) for (l in levels(x)) cols[[length(cols) + 1]] <- as.numeric(x == l & !is.na(x))
    else { x <- as.numeric(x); x[is.na(x)] <- 0; cols[[length(cols) + 1]] <- x }
  }
  do.call(cbind, cols)
}
wl <- function(X, y, f) {
  lines <- vapply(seq_len(nrow(X)), function(r) {
    x <- X[r, ]; j <- which(x != 0)
    paste(c(y[r], if (length(j)) paste0(j, ":", sprintf("%.6g", x[j]))), collapse = " ")
  }, "")
  writeLines(lines, f)
}
tr <- e$grants_other; te <- e$grants_test
Xtr <- onehot(tr[, names(tr) != "class"]); Xte <- onehot(te[, names(te) != "class"])
s <- apply(abs(Xtr), 2, max); s[s == 0] <- 1
wl(sweep(Xtr, 2, s, "/"), ifelse(tr$class == "successful", "+1", "-1"), file.path(a[2], "grants_train.libsvm"))
wl(sweep(Xte, 2, s, "/"), ifelse(te$class == "successful", "+1", "-1"), file.path(a[2], "grants_test.libsvm"))
R
  say "grants: $(wc -l < "$DATA/grants_train.libsvm") train, $(wc -l < "$DATA/grants_test.libsvm") test samples"
}

sets=${*:-movielens kjv heart_scale grants}
for s in $sets; do
  case $s in
    movielens|kjv|heart_scale|grants) $s ;;
    *) say "unknown data set '$s' (known: movielens kjv heart_scale grants)"; exit 2 ;;
  esac
done
say "data in $DATA"
