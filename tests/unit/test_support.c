/* test_support.c: arena, interning and growable strings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "check.h"
#include "intern.h"
#include "strbuf.h"

static void test_arena(void)
{
    OrnArena *a = orn_arena_new();
    CHECK(orn_arena_used(a) == 0);
    unsigned char *p = orn_arena_alloc(a, 3);
    CHECK(p != NULL);
    CHECK(((uintptr_t)p & 15) == 0);
    CHECK(p[0] == 0 && p[1] == 0 && p[2] == 0);
    unsigned char *q = orn_arena_alloc(a, 1);
    CHECK(((uintptr_t)q & 15) == 0);
    CHECK(q != p);
    /* a large block gets a chunk of its own and small ones keep using the current chunk */
    unsigned char *big = orn_arena_alloc(a, 1 << 20);
    big[(1 << 20) - 1] = 7;
    CHECK(big[0] == 0);
    unsigned char *r = orn_arena_alloc(a, 16);
    CHECK(r != NULL && r[15] == 0);
    int dirty = 0;
    for (int i = 0; i < 10000; i++) {
        int *x = orn_arena_alloc(a, sizeof *x);
        dirty += *x != 0;
        *x = i + 1;
    }
    CHECK(dirty == 0); /* every allocation is zero-filled, across chunks */
    CHECK(orn_arena_used(a) >= (1 << 20) + 10000 * 16);
    char *s = orn_arena_strndup(a, "hello world", 5);
    CHECK(strcmp(s, "hello") == 0);
    char *e = orn_arena_strndup(a, "", 0);
    CHECK(e[0] == 0);
    orn_arena_free(a);
    orn_arena_free(NULL);
}

/* heap blocks of 1 KiB or more on a cache line; zeroed ones zero at every size */
static void test_heap(void)
{
    static const size_t sizes[] = {1, 100, 1024, 4000, 1 << 20, (size_t)70 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        unsigned char *m = orn_xmalloc(n);
        m[0] = m[n - 1] = 1;
        CHECK(n < 1024 || ((uintptr_t)m & 63) == 0);
        unsigned char *z = orn_xcalloc(n, 1);
        CHECK(n < 1024 || n >= ((size_t)64 << 20) || ((uintptr_t)z & 63) == 0);
        int nonzero = 0;
        for (size_t j = 0; j < n; j += 4093) nonzero += z[j] != 0;
        CHECK(nonzero == 0 && z[n - 1] == 0);
        free(m);
        free(z);
    }
    CHECK(orn_try_zalloc(SIZE_MAX / 2, 4) == NULL); /* n * size overflows */
    double *d = orn_try_zalloc(3000, sizeof(double));
    CHECK(d && ((uintptr_t)d & 63) == 0 && d[2999] == 0.0);
    free(d);
    /* data arrays: on a page from 4 KiB, on a line from 256 bytes, zeroed */
    for (size_t n = 32; n <= 600000; n = n * 5 + 3) {
        void *off = malloc(40); /* the heap's next block off a page */
        double *v = orn_try_zalloc_data(n, sizeof(double));
        free(off);
        CHECK(v && v[0] == 0.0 && v[n - 1] == 0.0);
        CHECK(n * 8 < 256 || ((uintptr_t)v & 63) == 0);
        CHECK(n * 8 < 4096 || ((uintptr_t)v & 4095) == 0);
        free(v);
    }
    CHECK(orn_try_zalloc_data(SIZE_MAX / 2, 4) == NULL);
}

static void test_intern(void)
{
    OrnArena *a = orn_arena_new();
    OrnInterner *in = orn_intern_new(a);
    const OrnName *x = orn_intern_cstr(in, "loss");
    const OrnName *y = orn_intern(in, "loss_", 4);
    CHECK(x == y);
    CHECK(x->len == 4 && strcmp(x->s, "loss") == 0);
    const OrnName *z = orn_intern_cstr(in, "lost");
    CHECK(z != x);
    CHECK(orn_intern_count(in) == 2);
    const OrnName *empty = orn_intern(in, "", 0);
    CHECK(empty->len == 0 && empty->s[0] == 0);
    /* many names force the table to grow; every name keeps its identity */
    const OrnName *names[2000];
    char buf[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(buf, sizeof buf, "name_%d", i);
        names[i] = orn_intern_cstr(in, buf);
    }
    int same = 0;
    for (int i = 0; i < 2000; i++) {
        snprintf(buf, sizeof buf, "name_%d", i);
        same += orn_intern_cstr(in, buf) == names[i];
    }
    CHECK(same == 2000);
    CHECK(orn_intern_count(in) == 2003);
    CHECK(orn_intern_cstr(in, "loss") == x);
    orn_intern_free(in);
    orn_arena_free(a);
}

static void test_strbuf(void)
{
    OrnBuf b;
    orn_buf_init(&b);
    CHECK(b.len == 0);
    orn_buf_puts(&b, "ab");
    orn_buf_putc(&b, 'c');
    orn_buf_printf(&b, "%d-%s", 42, "x");
    CHECK(strcmp(b.data, "abc42-x") == 0);
    CHECK(b.len == 7);
    orn_buf_clear(&b);
    CHECK(b.len == 0 && b.data[0] == 0);
    for (int i = 0; i < 1000; i++) orn_buf_putc(&b, 'z');
    CHECK(b.len == 1000 && b.data[1000] == 0);
    orn_buf_clear(&b);
    orn_buf_json_str(&b, "a\"b\\c\n\t\x01", 8);
    CHECK(strcmp(b.data, "\"a\\\"b\\\\c\\n\\t\\u0001\"") == 0);
    orn_buf_clear(&b);
    orn_buf_put(&b, "a\0b", 3);
    CHECK(b.len == 3 && b.data[1] == 0 && b.data[2] == 'b');
    orn_buf_free(&b);
    CHECK(b.data == NULL && b.cap == 0);
}

/* Escaped for messages: control bytes and malformed UTF-8 as \xNN, the rest as is. */
static void test_escaped(void)
{
    static const struct {
        const char *in;
        size_t n;
        const char *out;
    } cases[] = {
        {"plain 1.5e3 'x'", 15, "plain 1.5e3 'x'"},
        {"a\x1b[31mb\n\t\x7f", 10, "a\\x1b[31mb\\x0a\\x09\\x7f"},
        {"nul\0x", 5, "nul\\x00x"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
         "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"\xff\xfe", 2, "\\xff\\xfe"},
        {"\xc3", 1, "\\xc3"},                            /* truncated sequence */
        {"\xc0\xaf", 2, "\\xc0\\xaf"},                   /* overlong '/' */
        {"\xed\xa0\x80", 3, "\\xed\\xa0\\x80"},          /* a surrogate */
        {"\xf4\x90\x80\x80", 4, "\\xf4\\x90\\x80\\x80"}, /* above U+10FFFF */
        {"\xc2\x9b", 2, "\\xc2\\x9b"},                   /* C1 control (CSI) */
        {"\xe2\x80\xae", 3, "\\xe2\\x80\\xae"},          /* right-to-left override */
    };
    OrnBuf b, c;
    orn_buf_init(&b);
    orn_buf_init(&c);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        orn_buf_clear(&b);
        orn_buf_escaped(&b, cases[i].in, cases[i].n);
        CHECK(b.len && strcmp(b.data, cases[i].out) == 0);
        /* idempotent */
        orn_buf_clear(&c);
        orn_buf_escaped(&c, b.data, b.len);
        CHECK(c.len && strcmp(c.data, b.data) == 0);
    }
    orn_buf_free(&b);
    orn_buf_free(&c);
}

int main(void)
{
    test_arena();
    test_heap();
    test_intern();
    test_strbuf();
    test_escaped();
    return check_report("test_support");
}
