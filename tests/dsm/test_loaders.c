/* test_loaders.c: the parallel loaders against a straightforward serial parser (every
 * rank reads a byte range; results must not depend on the rank count), strict errors with
 * the global line number (errors deep in the file land in later ranks' ranges), and
 * save/load round trips (text and binary) including corrupt files. */
#include <math.h>

#include "harness.h"

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int cmp_rec(const void *a, const void *b, int nd)
{
    const int64_t *x = a, *y = b;
    for (int d = 0; d < nd; d++)
        if (x[d] != y[d]) return x[d] < y[d] ? -1 : 1;
    return 0;
}
static int cmp2(const void *a, const void *b)
{
    return cmp_rec(a, b, 2);
}

/* ---------------------------------------------------------------- triplets */

static void make_triplets(TestEnv *t, const char *path, int lines)
{
    if (t->rank) goto done;
    FILE *f = fopen(path, "wb");
    CHECK(t, f != NULL);
    fprintf(f, "# ratings\n");
    for (int i = 0; i < lines; i++) {
        uint64_t h = mix((uint64_t)i);
        int r = (int)(h % 61), c = i; /* distinct keys: the column is the line */
        const char *sep = h % 3 == 0 ? "\t" : h % 3 == 1 ? " " : "   ";
        const char *eol = h % 7 == 0 ? "\r\n" : "\n";
        if (h % 11 == 0) fprintf(f, "\n   \n");
        if (h % 13 == 0) fprintf(f, "  # comment %d\n", i);
        fprintf(f, "%s%d%s%d%s%.7g%s", h % 5 == 0 ? "  " : "", r, sep, c, sep,
                (double)(h % 10000) / 97.0, i == lines - 1 ? "" : eol);
    }
    CHECK(t, fclose(f) == 0);
done:
    OK(t, orn_dsm_barrier(t->dsm));
}

/* The serial parser: fgets + sscanf. Records are {row, col, value bits}. */
static int64_t serial_triplets(const char *path, int64_t **out)
{
    FILE *f = fopen(path, "rb");
    char line[512];
    int64_t n = 0, cap = 1024;
    int64_t *rec = malloc((size_t)cap * 24);
    while (f && fgets(line, sizeof line, f)) {
        long long r, c;
        float v;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || !*p) continue;
        if (sscanf(p, "%lld %lld %f", &r, &c, &v) != 3) continue;
        if (n == cap) rec = realloc(rec, (size_t)(cap *= 2) * 24);
        rec[3 * n] = r;
        rec[3 * n + 1] = c;
        rec[3 * n + 2] = 0;
        memcpy(&rec[3 * n + 2], &v, 4);
        n++;
    }
    if (f) fclose(f);
    /* sort by key */
    int64_t *keys = malloc((size_t)(n ? n : 1) * 24);
    memcpy(keys, rec, (size_t)n * 24);
    qsort(keys, (size_t)n, 24, cmp2);
    free(rec);
    *out = keys;
    return n;
}

static void test_triplets(TestEnv *t)
{
    char path[512];
    t_path(t, path, sizeof path, "load.triplets");
    make_triplets(t, path, 731);
    OrnDsmArray *a = NULL;
    OK(t, orn_dsm_load_triplets(t->dsm, path, 0, &a));
    int64_t *want, nw = serial_triplets(path, &want);
    int64_t n, *keys;
    void *vals;
    OK(t, orn_dsm_gather(a, &n, &keys, &vals));
    CHECK(t, n == nw && n == 731 && a->nnz == n);
    CHECK(t, a->type == ORN_DSM_F32 && a->ndim == 2 && a->sparse);
    int64_t maxr = 0;
    for (int64_t i = 0; i < n; i++) {
        CHECK(t, keys[2 * i] == want[3 * i] && keys[2 * i + 1] == want[3 * i + 1]);
        CHECK(t, !memcmp((float *)vals + i, &want[3 * i + 2], 4));
        if (want[3 * i] > maxr) maxr = want[3 * i];
    }
    CHECK(t, a->dims[0] == maxr + 1 && a->dims[1] == 731);
    free(want);
    free(keys);
    free(vals);
    orn_dsm_free(a);
}

/* ---------------------------------------------------------------- libsvm, docword */

static void test_libsvm(TestEnv *t)
{
    char path[512];
    t_path(t, path, sizeof path, "load.libsvm");
    if (t->rank == 0) {
        FILE *f = fopen(path, "wb");
        for (int s = 0; s < 211; s++) {
            if (s % 50 == 3) fprintf(f, "# comment\n");
            fprintf(f, "%s", s % 3 ? "+1" : "-1.5");
            int last = 0;
            for (int j = 0; j < s % 6; j++) {
                last += 1 + (int)(mix((uint64_t)(s * 10 + j)) % 7);
                fprintf(f, " %d:%g", last, (double)((s + j) % 9) - 4.0);
            }
            fprintf(f, "%s\n", s % 4 == 0 ? "  " : "");
        }
        fclose(f);
    }
    OK(t, orn_dsm_barrier(t->dsm));
    OrnDsmArray *X = NULL, *y = NULL;
    OK(t, orn_dsm_load_libsvm(t->dsm, path, 0, &X, &y));
    CHECK(t, y->dims[0] == 211 && X->dims[0] == 211 && !y->sparse && X->sparse);
    int64_t nx, ny, *kx, *ky;
    void *vx, *vy;
    OK(t, orn_dsm_gather(X, &nx, &kx, &vx));
    OK(t, orn_dsm_gather(y, &ny, &ky, &vy));
    /* serial: re-parse */
    FILE *f = fopen(path, "rb");
    char line[4096];
    int64_t s = 0, m = 0, maxf = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        char *p = line, *end;
        float lab = strtof(p, &end);
        CHECK(t, ((float *)vy)[s] == lab);
        p = end;
        for (;;) {
            while (*p == ' ') p++;
            if (*p == '\n' || !*p) break;
            long idx = strtol(p, &end, 10);
            p = end + 1;
            float v = strtof(p, &end);
            p = end;
            CHECK(t, kx[2 * m] == s && kx[2 * m + 1] == idx - 1 && ((float *)vx)[m] == v);
            if (idx > maxf) maxf = idx;
            m++;
        }
        s++;
    }
    fclose(f);
    CHECK(t, s == 211 && m == nx && X->dims[1] == maxf);
    free(kx);
    free(vx);
    free(ky);
    free(vy);
    orn_dsm_free(X);
    orn_dsm_free(y);
}

static void test_docword(TestEnv *t)
{
    char path[512];
    t_path(t, path, sizeof path, "load.docword");
    if (t->rank == 0) {
        FILE *f = fopen(path, "wb");
        for (int d = 0; d < 60; d++)
            for (int w = d % 3; w < 30; w += 4) fprintf(f, "%d %d %d\n", d, w, 1 + (d + w) % 4);
        fclose(f);
    }
    OK(t, orn_dsm_barrier(t->dsm));
    OrnDsmArray *Z = NULL;
    OK(t, orn_dsm_load_docword(t->dsm, path, &Z));
    CHECK(t, Z->type == ORN_DSM_I32 && Z->ndim == 3 && Z->sparse);
    CHECK(t, Z->dims[0] == 60 && Z->dims[1] == 30 && Z->dims[2] == 4);
    int64_t n, *k;
    void *v;
    OK(t, orn_dsm_gather(Z, &n, &k, &v));
    int64_t m = 0;
    for (int d = 0; d < 60; d++)
        for (int w = d % 3; w < 30; w += 4)
            for (int j = 0; j < 1 + (d + w) % 4; j++, m++)
                CHECK(t, k[3 * m] == d && k[3 * m + 1] == w && k[3 * m + 2] == j &&
                             ((int32_t *)v)[m] == 0);
    CHECK(t, m == n);
    /* Runs (key 2 implied, dsm.h): distinct values, then grids -- cut along key 2 too,
     * owners that keep tiles local (refine.c) and that move them -- leave every element
     * with its value; single elements are found; balancing along key 2 counts them. */
    int32_t *val = malloc((size_t)n * sizeof *val);
    for (int64_t i = 0; i < n; i++) {
        val[i] = (int32_t)(i * 7 + 1);
        OK(t, orn_dsm_set(Z, k + 3 * i, &val[i]));
    }
    int grids[][3] = {{1, 1, 1}, {4, 3, 1}, {8, 6, 1}, {2, 2, 3}, {3, 1, 4}, {5, 2, 2}};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        for (int local = 0; local < 2; local++) {
            OrnDsmPart p;
            OK(t, orn_dsm_part_init(&p, 3, grids[g]));
            for (int d = 0; d < 3; d++)
                orn_dsm_bounds_uniform(p.bounds[d], Z->dims[d], grids[g][d]);
            for (int64_t q = 0; q < p.ntiles; q++) {
                int grid[3];
                orn_dsm_part_unravel(&p, q, grid);
                p.owner[q] = local ? grid[0] * t->size / grids[g][0]
                                   : (int)((q * 5 + g) % (uint64_t)t->size);
            }
            OK(t, orn_dsm_repartition(Z, &p));
            orn_dsm_part_free(&p);
            int64_t n2, *k2;
            void *v2;
            OK(t, orn_dsm_gather(Z, &n2, &k2, &v2));
            CHECK(t, n2 == n);
            for (int64_t i = 0; i < n && n2 == n; i++)
                CHECK(t, !memcmp(k2 + 3 * i, k + 3 * i, 24) && ((int32_t *)v2)[i] == val[i]);
            free(k2);
            free(v2);
            for (int64_t i = 0; i < n; i += 37) {
                int32_t x = 0;
                OK(t, orn_dsm_get(Z, k + 3 * i, &x));
                CHECK(t, x == val[i]);
            }
            int64_t absent[3] = {0, 0, 1}, bounds[3];
            int32_t x = 5;
            OK(t, orn_dsm_get(Z, absent, &x)); /* (0, 0) has one occurrence */
            CHECK(t, x == 0);
            OK(t, orn_dsm_balance(Z, 2, 2, bounds));
            CHECK(t, bounds[0] == 0 && bounds[1] == 1 && bounds[2] == 4);
        }
    }
    free(val);
    free(k);
    free(v);
    orn_dsm_free(Z);
}

/* ---------------------------------------------------------------- malformed files */

typedef struct Bad {
    const char *name, *kind; /* triplets, libsvm, docword, text */
    int line;                /* the bad line (1-based) is written at this position */
    const char *bad;         /* its content */
    const char *want;        /* expected message after "path:line: " */
} Bad;

#define NONFINITE " (allow_nonfinite = true accepts nan and inf)"
#define F32OVER   " (largest magnitude 3.40282347e+38; allow_nonfinite = true loads it as infinity)"

static void test_malformed(TestEnv *t)
{
    static const Bad cases[] = {
        {"fields", "triplets", 300, "1 2", "expected 3 fields 'row col value', found 2"},
        {"fields4", "triplets", 2, "1 2 3 4", "expected 3 fields 'row col value', found 4"},
        {"row", "triplets", 377, "-1 2 3", "expected a non-negative integer row index, found '-1'"},
        {"col", "triplets", 150, "1 x 3",
         "expected a non-negative integer column index, found 'x'"},
        {"value", "triplets", 399, "1 2 3.0abc", "expected a number as value, found '3.0abc'"},
        {"label", "libsvm", 201, "yes 1:2", "expected a numeric label, found 'yes'"},
        {"pair", "libsvm", 333, "+1 1:2 5",
         "expected 'index:value' with an integer index >= 1, found '5'"},
        {"zero", "libsvm", 12, "+1 0:2",
         "expected 'index:value' with an integer index >= 1, found '0:2'"},
        {"order", "libsvm", 250, "+1 3:1 2:1",
         "expected feature indices in increasing order, found 2 after 3"},
        {"count", "docword", 390, "3 4 0", "expected a positive integer count, found '0'"},
        {"doc", "docword", 111, "3.5 4 1",
         "expected a non-negative integer document id, found '3.5'"},
        /* values that are not finite, numbers too large for their field */
        {"nan", "triplets", 310, "1 2 nan", "value 'nan' is not a finite number" NONFINITE},
        {"inf", "triplets", 77, "1 2 -Infinity",
         "value '-Infinity' is not a finite number" NONFINITE},
        {"f32over", "triplets", 390, "1 2 1e39", "value '1e39' overflows f32" F32OVER},
        {"bigrow", "triplets", 205, "99999999999999999999 2 1",
         "row index '99999999999999999999' is too large (at most 9223372036854775806)"},
        {"bigcol", "triplets", 3, "1 9223372036854775807 1",
         "column index '9223372036854775807' is too large (at most 9223372036854775806)"},
        {"nanlabel", "libsvm", 222, "NaN 1:2", "label 'NaN' is not a finite number" NONFINITE},
        {"infval", "libsvm", 399, "+1 1:2 4:inf",
         "feature value 'inf' is not a finite number" NONFINITE},
        {"overval", "libsvm", 5, "+1 3:-3.5e38", "feature value '-3.5e38' overflows f32" F32OVER},
        {"bigidx", "libsvm", 150, "+1 99999999999999999999:1",
         "feature index '99999999999999999999' is too large (at most 9223372036854775806)"},
        {"bigcount", "docword", 275, "3 4 2147483649",
         "count '2147483649' is too large (at most 2147483648)"},
        {"bigdoc", "docword", 33, "99999999999999999999 4 1",
         "document id '99999999999999999999' is too large (at most 9223372036854775806)"},
        {"textnan", "text", 280, "5 1000 nan", "value 'nan' is not a finite number" NONFINITE},
        {"textover", "text", 12, "5 1000 1e39", "value '1e39' overflows f32" F32OVER},
        {"textbig", "texti32", 100, "5 1000 2147483648",
         "value '2147483648' is too large for i32 (-2147483648 to 2147483647)"},
        {"textsmall", "texti32", 399, "5 1000 -2147483649",
         "value '-2147483649' is too large in magnitude for i32 (-2147483648 to 2147483647)"},
        /* bytes of the file are escaped in the message */
        {"escape", "triplets", 120, "1 2 \x1b[31m\xff\x01",
         "expected a number as value, found '\\x1b[31m\\xff\\x01'"},
    };
    char path[512];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const Bad *b = &cases[c];
        char name[64];
        int text = !strncmp(b->kind, "text", 4);
        snprintf(name, sizeof name, "bad_%s.%s", b->name, b->kind);
        t_path(t, path, sizeof path, name);
        if (text) strcat(path, ".txt"); /* load() reads text from .txt files */
        if (t->rank == 0) {
            FILE *f = fopen(path, "wb");
            for (int i = 1; i <= 400; i++) {
                if (i == b->line)
                    fprintf(f, "%s\n", b->bad);
                else if (!strcmp(b->kind, "libsvm"))
                    fprintf(f, "+1 %d:0.5 %d:1\n", 1 + i % 3, 5 + i % 4);
                else if (!strcmp(b->kind, "docword"))
                    fprintf(f, "%d %d %d\n", i, i % 7, 1 + i % 2);
                else if (!strcmp(b->kind, "texti32"))
                    fprintf(f, "%d %d %d\n", i % 13, i, -i);
                else
                    fprintf(f, "%d %d %d.5\n", i % 13, i, i);
                /* a later second error must not win */
                if (i == 399 && b->line < 399) fprintf(f, "garbage\n");
            }
            fclose(f);
        }
        OK(t, orn_dsm_barrier(t->dsm));
        OrnDsmArray *a = NULL, *y = NULL;
        int st;
        if (!strcmp(b->kind, "triplets"))
            st = orn_dsm_load_triplets(t->dsm, path, 0, &a);
        else if (!strcmp(b->kind, "libsvm"))
            st = orn_dsm_load_libsvm(t->dsm, path, 0, &a, &y);
        else if (!strcmp(b->kind, "docword"))
            st = orn_dsm_load_docword(t->dsm, path, &a);
        else
            st = orn_dsm_load(t->dsm, path, strcmp(b->kind, "text") ? ORN_DSM_I32 : ORN_DSM_F32, 0,
                              &a);
        char want[1024];
        snprintf(want, sizeof want, "%s:%d: %s", path, b->line, b->want);
        if (st != ORN_E_PARSE || strcmp(orn_dsm_error(t->dsm), want) != 0)
            fprintf(stderr, "rank %d: case %s: got %d '%s', want '%s'\n", t->rank, b->name, st,
                    orn_dsm_error(t->dsm), want);
        CHECK(t, st == ORN_E_PARSE && !strcmp(orn_dsm_error(t->dsm), want));
        CHECK(t, a == NULL && y == NULL);
    }
    /* Duplicates far apart (different ranks' ranges): the later line is named. */
    t_path(t, path, sizeof path, "dup.triplets");
    if (t->rank == 0) {
        FILE *f = fopen(path, "wb");
        for (int i = 1; i <= 300; i++) fprintf(f, "%d %d 1\n", i == 280 ? 5 : i, 0);
        fclose(f);
    }
    OK(t, orn_dsm_barrier(t->dsm));
    OrnDsmArray *a = NULL;
    char want[1024];
    snprintf(want, sizeof want, "%s:280: duplicate key (5, 0), first on line 5", path);
    CHECK(t, orn_dsm_load_triplets(t->dsm, path, 0, &a) == ORN_E_PARSE);
    CHECK(t, !strcmp(orn_dsm_error(t->dsm), want));
    /* The same within one row, columns out of order (found while the row is sorted). */
    t_path(t, path, sizeof path, "dup_row.triplets");
    if (t->rank == 0) {
        FILE *f = fopen(path, "wb");
        for (int i = 1; i <= 300; i++) fprintf(f, "7 %d 1\n", i == 250 ? 40 : 300 - i);
        fclose(f);
    }
    OK(t, orn_dsm_barrier(t->dsm));
    snprintf(want, sizeof want, "%s:260: duplicate key (7, 40), first on line 250", path);
    CHECK(t, orn_dsm_load_triplets(t->dsm, path, 0, &a) == ORN_E_PARSE);
    CHECK(t, !strcmp(orn_dsm_error(t->dsm), want));
    /* docword: a (doc, word) pair twice duplicates its first occurrences. */
    t_path(t, path, sizeof path, "dup.docword");
    if (t->rank == 0) {
        FILE *f = fopen(path, "wb");
        for (int i = 1; i <= 200; i++)
            fprintf(f, "%d %d %d\n", i == 190 ? 0 : i / 10, i == 190 ? 3 : i, 1 + i % 3);
        fclose(f);
    }
    OK(t, orn_dsm_barrier(t->dsm));
    snprintf(want, sizeof want, "%s:190: duplicate key (0, 3, 0), first on line 3", path);
    CHECK(t, orn_dsm_load_docword(t->dsm, path, &a) == ORN_E_PARSE);
    if (strcmp(orn_dsm_error(t->dsm), want))
        fprintf(stderr, "got '%s', want '%s'\n", orn_dsm_error(t->dsm), want);
    CHECK(t, !strcmp(orn_dsm_error(t->dsm), want));
    /* Coordinates beyond 32 bits: records widen, tiles list their keys. */
    t_path(t, path, sizeof path, "wide.triplets");
    if (t->rank == 0) {
        FILE *f = fopen(path, "wb");
        for (int i = 0; i < 100; i++)
            fprintf(f, "%d %lld %d\n", i % 9, i == 50 ? 5000000000LL : (long long)(99 - i), i);
        fclose(f);
    }
    OK(t, orn_dsm_barrier(t->dsm));
    OK(t, orn_dsm_load_triplets(t->dsm, path, 0, &a));
    if (a) {
        int64_t n = 0, *keys = NULL;
        void *vals = NULL;
        CHECK(t, a->dims[0] == 9 && a->dims[1] == 5000000001LL && a->nnz == 100);
        OK(t, orn_dsm_gather(a, &n, &keys, &vals));
        CHECK(t, n == 100);
        int sorted = 1, found = 0;
        for (int64_t i = 0; i < n; i++) {
            if (i && cmp2(keys + 2 * (i - 1), keys + 2 * i) >= 0) sorted = 0;
            if (keys[2 * i] == 50 % 9 && keys[2 * i + 1] == 5000000000LL)
                found = ((float *)vals)[i] == 50.0f;
        }
        CHECK(t, sorted && found);
        free(keys);
        free(vals);
        orn_dsm_free(a);
        a = NULL;
    }
    /* A row index far beyond the data: an error, not an allocation of its row offsets; the
     * same on every rank (rank 0 reports it), naming the line. */
    t_path(t, path, sizeof path, "far_row.triplets");
    t_write_file(t, path, "0 0 1\n999999999999999 1 2\n3 1 2\n");
    CHECK(t, orn_dsm_load_triplets(t->dsm, path, 0, &a) == ORN_E_PARSE && a == NULL);
    snprintf(want, sizeof want, "%s:2: row index 999999999999999 is too large: ", path);
    CHECK(t, !strncmp(orn_dsm_error(t->dsm), want, strlen(want)));
    /* Missing file, empty file. */
    t_path(t, path, sizeof path, "no_such_file");
    CHECK(t, orn_dsm_load_triplets(t->dsm, path, 0, &a) == ORN_E_IO);
    CHECK(t, strstr(orn_dsm_error(t->dsm), "cannot open") != NULL);
    t_path(t, path, sizeof path, "empty.triplets");
    t_write_file(t, path, "# nothing here\n\n");
    CHECK(t, orn_dsm_load_triplets(t->dsm, path, 0, &a) == ORN_E_PARSE);
    snprintf(want, sizeof want, "%s: expected lines 'row col value', found none", path);
    CHECK(t, !strcmp(orn_dsm_error(t->dsm), want));
}

/* ---------------------------------------------------------------- save / load */

static void same_array(TestEnv *t, OrnDsmArray *a, OrnDsmArray *b)
{
    CHECK(t, a->type == b->type && a->ndim == b->ndim && a->sparse == b->sparse);
    for (int d = 0; d < a->ndim; d++) CHECK(t, a->dims[d] == b->dims[d]);
    int64_t na, nb, *ka, *kb;
    void *va, *vb;
    OK(t, orn_dsm_gather(a, &na, &ka, &va));
    OK(t, orn_dsm_gather(b, &nb, &kb, &vb));
    CHECK(t, na == nb);
    if (a->sparse) CHECK(t, !memcmp(ka, kb, (size_t)na * (size_t)a->ndim * 8));
    CHECK(t, !memcmp(va, vb, (size_t)na * a->esize));
    free(ka);
    free(kb);
    free(va);
    free(vb);
}

static void roundtrip(TestEnv *t, OrnDsmArray *a, const char *name)
{
    static const char *const ext[] = {".txt", ".tsv", ".bin"};
    for (int e = 0; e < 3; e++) {
        char file[96], path[512];
        snprintf(file, sizeof file, "%s%s", name, ext[e]);
        t_path(t, path, sizeof path, file);
        /* t_path appends .npN: put it before the extension */
        snprintf(path, sizeof path, "%s/%s.np%d%s", t->dir, name, t->size, ext[e]);
        OK(t, orn_dsm_save(a, path));
        OrnDsmArray *b = NULL;
        OK(t, orn_dsm_load(t->dsm, path, e < 2 ? (int)a->type : ORN_DSM_ANYTYPE, 0, &b));
        same_array(t, a, b);
        orn_dsm_free(b);
    }
}

static void test_saveload(TestEnv *t)
{
    OrnDsmArray *a = NULL;
    int64_t d2[2] = {13, 9}, d3[3] = {4, 5, 3}, d1[1] = {101};
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 2, d2, 1, 1, &a));
    roundtrip(t, a, "dense_f32");
    orn_dsm_free(a);
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 3, d3, 2, 1, &a));
    roundtrip(t, a, "dense_f64");
    /* f64 text infers f64 without a hint */
    char path[512];
    snprintf(path, sizeof path, "%s/infer.np%d.txt", t->dir, t->size);
    OK(t, orn_dsm_save(a, path));
    OrnDsmArray *b = NULL;
    OK(t, orn_dsm_load(t->dsm, path, ORN_DSM_ANYTYPE, 0, &b));
    same_array(t, a, b);
    orn_dsm_free(b);
    orn_dsm_free(a);
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_I32, 1, d1, 3, 1, &a));
    roundtrip(t, a, "dense_i32");
    orn_dsm_free(a);
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_I64, 2, d2, 4, 0, &a));
    roundtrip(t, a, "dense_i64");
    orn_dsm_free(a);
    /* sparse: a loaded docword (i32, 3-D) and triplets (f32) */
    char src[512];
    t_path(t, src, sizeof src, "load.triplets");
    OK(t, orn_dsm_load_triplets(t->dsm, src, 0, &a));
    roundtrip(t, a, "sparse_f32");
    orn_dsm_free(a);
    t_path(t, src, sizeof src, "load.docword");
    OK(t, orn_dsm_load_docword(t->dsm, src, &a));
    roundtrip(t, a, "sparse_i32");
    orn_dsm_free(a);

    /* The text format exactly: key coordinates, value, single spaces, key order. */
    int64_t dims[2] = {3, 4}, keys[6] = {2, 0, 0, 3, 1, 1};
    float vals[3] = {0.1f, -2.5f, 1e-7f};
    int64_t n = t->rank == 0 ? 3 : 0;
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 2, dims, 1, n, keys, vals, NULL, NULL, &a));
    snprintf(path, sizeof path, "%s/exact.np%d.txt", t->dir, t->size);
    OK(t, orn_dsm_save(a, path));
    orn_dsm_free(a);
    if (t->rank == 0) {
        char buf[256] = {0};
        FILE *f = fopen(path, "rb");
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        CHECK(t, got > 0);
        CHECK(t, !strcmp(buf, "0 3 -2.5\n1 1 1.00000001e-07\n2 0 0.100000001\n"));
    }
    /* f64 prints %.17g */
    double dv[2] = {0.1, 1.0 / 3.0};
    int64_t dk[2] = {0, 1}, d1b[1] = {2};
    n = t->rank == t->size - 1 ? 2 : 0;
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F64, 1, d1b, 0, n, dk, dv, NULL, NULL, &a));
    OK(t, orn_dsm_save(a, path));
    orn_dsm_free(a);
    if (t->rank == 0) {
        char buf[256] = {0};
        FILE *f = fopen(path, "rb");
        CHECK(t, fread(buf, 1, sizeof buf - 1, f) > 0);
        fclose(f);
        CHECK(t, !strcmp(buf, "0 0.10000000000000001\n1 0.33333333333333331\n"));
    }
    OK(t, orn_dsm_barrier(t->dsm));

    /* Corrupt binaries. */
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 2, d2, 9, 0, &a));
    snprintf(path, sizeof path, "%s/corrupt.np%d.bin", t->dir, t->size);
    OK(t, orn_dsm_save(a, path));
    orn_dsm_free(a);
    long size = 0;
    char *data = NULL;
    if (t->rank == 0) {
        FILE *f = fopen(path, "rb");
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        fseek(f, 0, SEEK_SET);
        data = malloc((size_t)size);
        CHECK(t, fread(data, 1, (size_t)size, f) == (size_t)size);
        fclose(f);
    }
    struct {
        const char *what;
        long at; /* byte to flip, or -1: truncate by one byte */
        int code;
    } bad[] = {{"checksum mismatch", 100, ORN_E_FORMAT},
               {"truncated or corrupt", -1, ORN_E_FORMAT},
               {"not an Orion array file", 2, ORN_E_FORMAT},
               {"corrupt header", 20, ORN_E_FORMAT}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cpath[512];
        snprintf(cpath, sizeof cpath, "%s/corrupt%zu.np%d.bin", t->dir, i, t->size);
        if (t->rank == 0) {
            FILE *f = fopen(cpath, "wb");
            if (bad[i].at >= 0) data[bad[i].at] ^= 0x55;
            fwrite(data, 1, (size_t)(bad[i].at >= 0 ? size : size - 1), f);
            if (bad[i].at >= 0) data[bad[i].at] ^= 0x55;
            fclose(f);
        }
        OK(t, orn_dsm_barrier(t->dsm));
        OrnDsmArray *c = NULL;
        int st = orn_dsm_load(t->dsm, cpath, ORN_DSM_ANYTYPE, 0, &c);
        if (st != bad[i].code || !strstr(orn_dsm_error(t->dsm), bad[i].what))
            fprintf(stderr, "rank %d: corrupt case %zu: %d %s\n", t->rank, i, st,
                    orn_dsm_error(t->dsm));
        CHECK(t, st == bad[i].code && strstr(orn_dsm_error(t->dsm), bad[i].what));
        CHECK(t, c == NULL);
    }
    free(data);
    /* A type mismatch with the hint. */
    CHECK(t, orn_dsm_load(t->dsm, path, ORN_DSM_F64, 0, &a) == ORN_E_ARG);
    /* Text with inconsistent fields. */
    snprintf(path, sizeof path, "%s/badtext.np%d.txt", t->dir, t->size);
    t_write_file(t, path, "0 0 1\n0 1 2\n1 0\n");
    CHECK(t, orn_dsm_load(t->dsm, path, ORN_DSM_ANYTYPE, 0, &a) == ORN_E_PARSE);
    char want[600];
    snprintf(want, sizeof want, "%s:3: expected 3 fields (2 key coordinates and a value), found 2",
             path);
    CHECK(t, !strcmp(orn_dsm_error(t->dsm), want));
    /* Text with a missing element loads as sparse, integers infer i64. */
    t_write_file(t, path, "0 0 1\n1 1 2\n");
    OK(t, orn_dsm_load(t->dsm, path, ORN_DSM_ANYTYPE, 0, &a));
    CHECK(t, a->sparse && a->type == ORN_DSM_I64 && a->nnz == 2);
    orn_dsm_free(a);
}

/* ---------------------------------------------------------------- non-finite values */

/* Value of the element with key (r, c) of a 2-D array (every rank), or 0 if absent. */
static double value_at(TestEnv *t, OrnDsmArray *a, int64_t r, int64_t c)
{
    int64_t n = 0, *keys = NULL;
    void *vals = NULL;
    double v = 0;
    OK(t, orn_dsm_gather(a, &n, &keys, &vals));
    for (int64_t i = 0; i < n; i++) {
        int64_t lin = keys ? -1 : i;
        if (keys ? keys[2 * i] == r && keys[2 * i + 1] == c : lin == r * a->dims[1] + c)
            v = a->type == ORN_DSM_F32 ? ((float *)vals)[i] : ((double *)vals)[i];
    }
    free(keys);
    free(vals);
    return v;
}

/* With ORN_DSM_ALLOW_NONFINITE, nan, inf and overflowing numbers load (as infinities);
 * binary files holding them are refused without it, naming the element and its key. */
static void test_nonfinite(TestEnv *t)
{
    char path[512], want[1024];
    OrnDsmArray *a = NULL, *y = NULL, *b = NULL;
    t_path(t, path, sizeof path, "nonfinite.triplets");
    t_write_file(t, path, "0 0 1.5\n0 1 nan\n1 0 -inf\n1 1 1e39\n2 0 -1e39\n2 2 Infinity\n");
    CHECK(t, orn_dsm_load_triplets(t->dsm, path, 0, &a) == ORN_E_PARSE);
    snprintf(want, sizeof want, "%s:2: value 'nan' is not a finite number" NONFINITE, path);
    CHECK(t, !strcmp(orn_dsm_error(t->dsm), want));
    OK(t, orn_dsm_load_triplets(t->dsm, path, ORN_DSM_ALLOW_NONFINITE, &a));
    if (a) {
        CHECK(t, a->nnz == 6 && value_at(t, a, 0, 0) == 1.5);
        CHECK(t, isnan(value_at(t, a, 0, 1)));
        CHECK(t, value_at(t, a, 1, 0) == -INFINITY && value_at(t, a, 1, 1) == INFINITY);
        CHECK(t, value_at(t, a, 2, 0) == -INFINITY && value_at(t, a, 2, 2) == INFINITY);
    }
    /* saved as text and binary, both read back only with the flag */
    static const char *const ext[] = {"txt", "bin"};
    for (int e = 0; e < 2 && a; e++) {
        snprintf(path, sizeof path, "%s/nonfinite.np%d.%s", t->dir, t->size, ext[e]);
        OK(t, orn_dsm_save(a, path));
        CHECK(t, orn_dsm_load(t->dsm, path, ORN_DSM_F32, 0, &b) != ORN_OK && b == NULL);
        if (e == 0)
            snprintf(want, sizeof want, "%s:2: value 'nan' is not a finite number" NONFINITE, path);
        else
            snprintf(want, sizeof want,
                     "load: %s: element 1 (key (0, 1)) is nan, not a finite number" NONFINITE,
                     path);
        if (strcmp(orn_dsm_error(t->dsm), want))
            fprintf(stderr, "rank %d: got '%s', want '%s'\n", t->rank, orn_dsm_error(t->dsm), want);
        CHECK(t, !strcmp(orn_dsm_error(t->dsm), want));
        OK(t, orn_dsm_load(t->dsm, path, ORN_DSM_F32, ORN_DSM_ALLOW_NONFINITE, &b));
        if (b) same_array(t, a, b);
        orn_dsm_free(b);
        b = NULL;
    }
    orn_dsm_free(a);
    a = NULL;
    /* a dense f64 binary: the element is the row-major index, whichever rank reads it */
    int64_t dims[2] = {7, 5}, n = t->rank == 0 ? 35 : 0;
    int64_t *keys = malloc(35 * 2 * sizeof *keys);
    double *vals = malloc(35 * sizeof *vals);
    for (int64_t i = 0; i < 35; i++) {
        keys[2 * i] = i / 5;
        keys[2 * i + 1] = i % 5;
        vals[i] = i == 29 ? -INFINITY : i == 33 ? NAN : 0.25 * (double)i;
    }
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F64, 2, dims, 0, n, keys, vals, NULL, NULL, &a));
    free(keys);
    free(vals);
    snprintf(path, sizeof path, "%s/nonfinite_dense.np%d.bin", t->dir, t->size);
    OK(t, orn_dsm_save(a, path));
    CHECK(t, orn_dsm_load(t->dsm, path, ORN_DSM_F64, 0, &b) == ORN_E_FORMAT && b == NULL);
    snprintf(want, sizeof want,
             "load: %s: element 29 (key (5, 4)) is -inf, not a finite number" NONFINITE, path);
    if (strcmp(orn_dsm_error(t->dsm), want))
        fprintf(stderr, "rank %d: got '%s', want '%s'\n", t->rank, orn_dsm_error(t->dsm), want);
    CHECK(t, !strcmp(orn_dsm_error(t->dsm), want));
    OK(t, orn_dsm_load(t->dsm, path, ORN_DSM_F64, ORN_DSM_ALLOW_NONFINITE, &b));
    if (b) same_array(t, a, b);
    orn_dsm_free(b);
    orn_dsm_free(a);
    /* libsvm: a label and a value */
    t_path(t, path, sizeof path, "nonfinite.libsvm");
    t_write_file(t, path, "+1 1:0.5\nnan 2:1\n-1 1:inf 3:2\n");
    CHECK(t, orn_dsm_load_libsvm(t->dsm, path, 0, &a, &y) == ORN_E_PARSE);
    snprintf(want, sizeof want, "%s:2: label 'nan' is not a finite number" NONFINITE, path);
    CHECK(t, !strcmp(orn_dsm_error(t->dsm), want));
    OK(t, orn_dsm_load_libsvm(t->dsm, path, ORN_DSM_ALLOW_NONFINITE, &a, &y));
    if (a) CHECK(t, a->nnz == 4 && value_at(t, a, 2, 0) == INFINITY);
    orn_dsm_free(a);
    orn_dsm_free(y);
}

/* No message is "save: save: ...": a DSM save error already names the operation. */
static void test_prefixes(TestEnv *t)
{
    char path[512];
    int64_t d1[1] = {10};
    OrnDsmArray *a = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 1, d1, 1, 1, &a));
    snprintf(path, sizeof path, "%s/no_such_dir/a.bin", t->dir);
    int st = orn_dsm_save(a, path);
    CHECK(t, st == ORN_E_IO && !strncmp(orn_dsm_error(t->dsm), "save: ", 6));
    orn_dsm_fail_ctx(t->dsm, st, "save"); /* what a program adds: nothing here */
    CHECK(t, !strncmp(orn_dsm_error(t->dsm), "save: ", 6) &&
                 !strstr(orn_dsm_error(t->dsm), "save: save"));
    orn_dsm_fail_ctx(t->dsm, st, "prog.orn:3");
    CHECK(t, !strncmp(orn_dsm_error(t->dsm), "prog.orn:3: save: ", 18));
    orn_dsm_free(a);
}

int main(int argc, char **argv)
{
    TestEnv t;
    t_init(&t, &argc, &argv);
    test_triplets(&t);
    test_libsvm(&t);
    test_docword(&t);
    /* again with records exchanged in many small rounds (dsm/build.c) */
    setenv("ORN_ROUND_BYTES", "200", 1);
    test_triplets(&t);
    test_libsvm(&t);
    test_docword(&t);
    unsetenv("ORN_ROUND_BYTES");
    test_malformed(&t);
    test_nonfinite(&t);
    test_prefixes(&t);
    test_saveload(&t);
    return t_finish(&t, "test_loaders");
}
