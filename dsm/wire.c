/* wire.c: a held tile's storage as one message, and a message as a tile's storage.
 *
 * Schedules that move tiles between ranks (the runtime's 2-D rotation and the wavefront's
 * column blocks) send a tile's storage and receive it elsewhere. A dense tile is its values:
 * the buffer itself travels, no copy on either side. A sparse tile is packed into one buffer
 * -- a header (form, element count), then rowptr and cols (CSR, also 3-D runs) or the listed
 * keys, then the values -- and unpacked into a tile of the same form on arrival. Every rank
 * knows every tile's box and element count (replicated metadata), so a receiver can size its
 * buffer without a message (orn_dsm_tile_wire_max); a keys-form tile's row index (built on
 * demand) stays behind and is rebuilt when asked for. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "dsm_int.h"

enum { WIRE_KEYS = 0, WIRE_CSR = 1, WIRE_HEAD = 16 };

static size_t round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static size_t csr_bytes(const OrnDsmTile *t)
{
    return (size_t)(t->hi[0] - t->lo[0] + 1) * sizeof(int64_t) +
           round8((size_t)t->n * sizeof(int32_t));
}

static size_t keys_bytes(const OrnDsmArray *a, const OrnDsmTile *t)
{
    return (size_t)t->n * (size_t)a->ndim * sizeof(int64_t);
}

size_t orn_dsm_tile_wire_max(const OrnDsmArray *a, int64_t t)
{
    const OrnDsmTile *tl = &a->tiles[t];
    size_t vals = (size_t)tl->n * a->esize;
    if (!a->sparse) return vals;
    size_t c = csr_bytes(tl), k = keys_bytes(a, tl);
    return WIRE_HEAD + (c > k ? c : k) + vals;
}

void *orn_dsm_tile_take(OrnDsmArray *a, int64_t t, size_t *bytes)
{
    OrnDsmTile *tl = &a->tiles[t];
    size_t vals = (size_t)tl->n * a->esize;
    char *msg;
    orn_dsm_touch(a);
    if (!a->sparse) {
        orn_dsm_tile_unpad(a, t); /* the values must be their own allocation */
        msg = tl->vals;
        *bytes = vals;
    } else {
        int csr = tl->cols != NULL;
        size_t idx = csr ? csr_bytes(tl) : keys_bytes(a, tl);
        *bytes = WIRE_HEAD + idx + vals;
        msg = orn_xmalloc(*bytes);
        int64_t head[2] = {csr ? WIRE_CSR : WIRE_KEYS, tl->n};
        memcpy(msg, head, sizeof head);
        char *at = msg + WIRE_HEAD;
        if (csr) {
            size_t rp = (size_t)(tl->hi[0] - tl->lo[0] + 1) * sizeof(int64_t);
            memcpy(at, tl->rowptr, rp);
            if (tl->n) memcpy(at + rp, tl->cols, (size_t)tl->n * sizeof(int32_t));
        } else if (tl->n) {
            memcpy(at, tl->keys, idx);
        }
        if (vals) memcpy(at + idx, tl->vals, vals);
        free(tl->vals);
        free(tl->keys);
        free(tl->rowptr);
        free(tl->cols);
        tl->keys = NULL;
        tl->rowptr = NULL;
        tl->cols = NULL;
    }
    tl->vals = NULL;
    tl->held = 0;
    return msg;
}

int orn_dsm_tile_give(OrnDsmArray *a, int64_t t, void *msg)
{
    OrnDsmTile *tl = &a->tiles[t];
    size_t vals = (size_t)tl->n * a->esize;
    orn_dsm_touch(a);
    tl->held = 1;
    if (!a->sparse) {
        tl->vals = msg;
        return 1;
    }
    int64_t head[2];
    memcpy(head, msg, sizeof head);
    if (head[1] != tl->n || (head[0] != WIRE_CSR && head[0] != WIRE_KEYS)) {
        tl->held = 0;
        return -1;
    }
    const char *at = (const char *)msg + WIRE_HEAD;
    size_t idx;
    if (head[0] == WIRE_CSR) {
        size_t rp = (size_t)(tl->hi[0] - tl->lo[0] + 1) * sizeof(int64_t);
        tl->rowptr = orn_xmalloc(rp);
        memcpy(tl->rowptr, at, rp);
        tl->cols = orn_xmalloc(tl->n ? (size_t)tl->n * sizeof(int32_t) : 1);
        if (tl->n) memcpy(tl->cols, at + rp, (size_t)tl->n * sizeof(int32_t));
        idx = csr_bytes(tl);
    } else {
        idx = keys_bytes(a, tl);
        tl->keys = orn_xmalloc(idx ? idx : 1);
        if (idx) memcpy(tl->keys, at, idx);
    }
    tl->vals = orn_xmalloc(vals ? vals : 1);
    if (vals) memcpy(tl->vals, at + idx, vals);
    return 0;
}
