/*
 * call/route_blocks.c: the routing of one chunk of updates to the blocks of a
 * chunked data (scatterops.dask, through _core.route in py/route.c): each
 * index value placed on its axis by mode= (so_mode_position, the rule of the
 * top-level call), turned into a block and an index local to the block, and
 * the chunk's rows grouped by block.  The grouping is a stable counting sort
 * in two passes over the chunk -- count the rows of each block, then write
 * each row at its block's next place -- so that within a block the rows keep
 * the chunk's C order.  The index values are read in their own dtype (no
 * converted copy); the rows of the payloads (the updates, the global
 * positions) are copied byte for byte, whatever their dtype.  Each pass runs
 * without the interpreter's lock (the host's unlock), stoppable between
 * pieces.
 */
#include "call/call.h"

/* a function inlined into each of its callers, so that the arguments they give
 * as constants (the common call's) make a loop of its own */
#if defined(__GNUC__)
#define SO_ROUTE_INLINE static inline __attribute__((always_inline))
#else
#define SO_ROUTE_INLINE static inline
#endif

/* the raw 64 bits of one index value (sign-extended for a signed dtype) */
#define SO_LOAD_INDEX(U, S)                                                        \
    {                                                                              \
        U v;                                                                       \
        memcpy(&v, p, sizeof v);                                                   \
        return is_unsigned ? (npy_uint64)v : (npy_uint64)(npy_int64)(S)v;         \
    }
static inline npy_uint64
load_index(const char *p, int item, int is_unsigned)
{
    switch (item) {
    case 1: SO_LOAD_INDEX(npy_uint8, npy_int8)
    case 2: SO_LOAD_INDEX(npy_uint16, npy_int16)
    case 4: SO_LOAD_INDEX(npy_uint32, npy_int32)
    default: SO_LOAD_INDEX(npy_uint64, npy_int64)
    }
}
#undef SO_LOAD_INDEX

/* the block of axis j that holds pos: the last b with starts[b] <= pos */
static inline npy_intp
block_of(const so_route *r, int j, npy_intp pos)
{
    const npy_intp *st = r->starts[j];
    npy_intp lo = 0, hi = r->nblocks[j] - 1;
#ifdef __SIZEOF_INT128__
    if (r->recip[j]) {              /* pos / width, exact while pos * width < 2^64 */
        npy_intp b = (npy_intp)(((unsigned __int128)(npy_uint64)pos * r->recip[j]) >> 64);
        return b < hi ? b : hi;
    }
#endif
    while (lo < hi) {
        npy_intp mid = lo + (hi - lo + 1) / 2;
        if (st[mid] <= pos) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Row i: 0 with *t its block (flat over the k routed axes) and local[] its
 * local components; 1 if its update is dropped; -1 if a value raises, *bad the
 * component.  k and item are r's, as constants where the caller knows them. */
SO_ROUTE_INLINE int
locate(const so_route *r, npy_intp i, npy_intp *t, npy_intp *local, int *bad, int k, int item)
{
    const char *row = r->idx + i * r->row_stride;
    npy_intp target = 0;
    int j, dropped = 0;
    for (j = 0; j < k; j++) {
        npy_intp pos, b;
        int st = so_mode_position(load_index(row + j * r->col_stride, item, r->is_unsigned),
                          r->is_unsigned, r->size[j], r->mode, &pos);
        if (st < 0) {
            *bad = j;
            return -1;
        }
        if (st > 0) {
            dropped = 1;
            continue;
        }
        b = block_of(r, j, pos);
        local[j] = pos - r->starts[j][b];
        target = target * r->nblocks[j] + b;
    }
    *t = target;
    return dropped;
}

/* Pass 1: count[t] = the rows of block t.  Returns the rows kept, -1 at the
 * first value that raises (*bad_row, *bad_j), -2 if the poll stopped it. */
SO_ROUTE_INLINE npy_intp
count_rows(const so_route *r, npy_intp *count, npy_intp *bad_row, int *bad_j, so_poll *poll,
           int k, int item)
{
    npy_intp local[SO_MAXDIMS], kept = 0, i0, i, t;
    for (i0 = 0; i0 < r->n; i0 += SO_PIECE) {
        const npy_intp end = i0 + SO_PIECE < r->n ? i0 + SO_PIECE : r->n;
        if (so_stopped(poll)) return -2;
        for (i = i0; i < end; i++) {
            int st = locate(r, i, &t, local, bad_j, k, item);
            if (st < 0) {
                *bad_row = i;
                return -1;
            }
            if (st == 0) {
                count[t]++;
                kept++;
            }
        }
    }
    return kept;
}

static inline void
copy_item(char *dst, const char *src, npy_intp item)
{
    switch (item) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, (size_t)item);
    }
}

/* Pass 2: each kept row i at next[t]++ of its block t: its local index (k
 * components, or the flat offset in the block) into local_out (int32 if
 * narrow, else intp), its rows of each payload into that payload's out.
 * Returns 0, or -2 if the poll stopped it. */
SO_ROUTE_INLINE int
place_rows(const so_route *r, npy_intp *next, char *local_out, int narrow,
           const so_payload *pay, int npay, npy_intp kept, so_poll *poll, int k, int item,
           int elements)
{
    npy_intp local[SO_MAXDIMS], i0, i, t, p = 0, a = 0, q = 0;
    const npy_intp lrow = elements ? 1 : k;
    int bad, m, j;
    for (i0 = 0; i0 < r->n; i0 += SO_PIECE) {
        const npy_intp end = i0 + SO_PIECE < r->n ? i0 + SO_PIECE : r->n;
        if (so_stopped(poll)) return -2;
        for (i = i0; i < end; i++) {
            npy_intp d, e, pp, qq;
            int st = locate(r, i, &t, local, &bad, k, item);
            npy_intp ep = p, eq = q;        /* scatter_elements: (p, a, q) is row i */
            if (elements && ++q == r->npost) {
                q = 0;
                if (++a == r->naxis) {
                    a = 0;
                    p++;
                }
            }
            if (st != 0) continue;          /* dropped (none raise: pass 1 saw them) */
            d = next[t]++;
            if (elements) {
                local[0] = (r->pre_map[ep] * r->axis_len[t] + local[0]) * r->block_post +
                           r->post_map[eq];
            }
            for (j = 0; j < lrow; j++) {    /* (local_out is fresh, aligned) */
                if (narrow) ((npy_int32 *)local_out)[d * lrow + j] = (npy_int32)local[j];
                else ((npy_intp *)local_out)[d * lrow + j] = local[j];
            }
            for (m = 0; m < npay; m++) {
                const so_payload *y = &pay[m];
                if (y->pre == 1 && y->post == 1) {
                    copy_item(y->out + d * y->item, y->in + i * y->srow, y->item);
                    continue;
                }
                for (pp = 0; pp < y->pre; pp++) {
                    for (qq = 0; qq < y->post; qq++) {
                        e = (pp * kept + d) * y->post + qq;
                        copy_item(y->out + e * y->item,
                                  y->in + pp * y->spre + i * y->srow + qq * y->spost, y->item);
                    }
                }
            }
        }
    }
    return 0;
}

/* The passes for any call, and for the common one (one 8-byte index component,
 * one payload of single items, int32 local indices) a loop of their own. */
static npy_intp
count_any(const so_route *r, npy_intp *count, npy_intp *bad_row, int *bad_j, so_poll *poll)
{
    if (r->k == 1 && r->item == 8) return count_rows(r, count, bad_row, bad_j, poll, 1, 8);
    return count_rows(r, count, bad_row, bad_j, poll, r->k, r->item);
}

static int
place_any(const so_route *r, npy_intp *next, char *local_out, int narrow,
          const so_payload *pay, int npay, npy_intp kept, so_poll *poll)
{
    if (r->k == 1 && r->item == 8 && !r->elements && narrow && npay == 1 &&
            pay[0].pre == 1 && pay[0].post == 1) {
        return place_rows(r, next, local_out, 1, pay, 1, kept, poll, 1, 8, 0);
    }
    return place_rows(r, next, local_out, narrow, pay, npay, kept, poll, r->k, r->item,
                      r->elements);
}

int
so_route_axis(so_route *r, int j, npy_intp size, const npy_intp *st, npy_intp nstarts,
              npy_intp *ntargets)
{
    const npy_intp nb = nstarts - 1;
    npy_intp b, w;
    if (nb < 1 || st[0] != 0 || st[nb] != size) return SO_ROUTE_BAD_ENDS;
    w = st[1];
    for (b = 0; b < nb; b++) {
        if (st[b + 1] < st[b]) return SO_ROUTE_DECREASING;
        if ((b < nb - 1 && st[b + 1] - st[b] != w) || st[b + 1] - st[b] > w) w = 0;
    }
    r->size[j] = size;
    r->starts[j] = st;
    r->nblocks[j] = nb;
    r->recip[j] = w > 1 && (npy_uint64)size <= NPY_MAX_UINT64 / (npy_uint64)w
                      ? NPY_MAX_UINT64 / (npy_uint64)w + 1 : 0;
    if (*ntargets > NPY_MAX_INT32 / nb) return SO_ROUTE_TOO_MANY_BLOCKS;
    *ntargets *= nb;
    return 0;
}

npy_uint64
so_route_value(const so_route *r, npy_intp row, int j)
{
    return load_index(r->idx + row * r->row_stride + j * r->col_stride, r->item, r->is_unsigned);
}

npy_intp
so_route_count(const so_route *r, npy_intp *count, npy_intp *bad_row, int *bad_j, so_host *h)
{
    so_poll *poll = h->unlock(h);
    const npy_intp kept = count_any(r, count, bad_row, bad_j, poll);
    return h->relock(h) < 0 ? -2 : kept;
}

int
so_route_place(const so_route *r, const npy_intp *count, npy_intp ntargets, char *local_out,
               int narrow, const so_payload *pay, int npay, npy_intp kept, so_host *h)
{
    npy_intp *next = malloc((size_t)(ntargets ? ntargets : 1) * sizeof(npy_intp)), t, start;
    so_poll *poll;
    int stopped;
    if (next == NULL) return -1;
    /* each block's rows start after those of the blocks before it */
    for (t = 0, start = 0; t < ntargets; t++) {
        next[t] = start;
        start += count[t];
    }
    poll = h->unlock(h);
    stopped = place_any(r, next, local_out, narrow, pay, npay, kept, poll);
    stopped = h->relock(h) < 0 || stopped;
    free(next);
    return stopped ? -2 : 0;
}
