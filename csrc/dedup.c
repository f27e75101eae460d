/*
 * dedup.c: under reduction="none" only the last write to an element is
 * visible, so earlier writes of a whole slice need not be made at all.
 *
 * When every group is a slice (a block of at least SO_DEDUP_MIN_BYTES), and the
 * group dims are some leading dims that address out directly (scatter_update's
 * data.shape[:axis]) followed by dims that only read indices, this pass walks
 * the index dims once, keeps for each destination the last update position
 * that writes it, and replaces those dims in the plan by the list of winners.
 * The engine then copies each visible slice exactly once per leading position.
 * The result is the same as writing every slice in C order.
 */
#include "scatterops.h"

#define SO_DEDUP_MIN_BYTES 64

typedef struct {
    npy_intp key;     /* destination offset in out */
    npy_intp src;     /* update offset of the last writer so far */
    npy_intp order;   /* C-order position of that writer (for a stable result order) */
} so_slot;

static int
by_key(const void *a, const void *b)
{
    npy_intp x = ((const so_slot *)a)->key, y = ((const so_slot *)b)->key;
    return (x > y) - (x < y);
}

static npy_uintp
mix(npy_intp key)
{
    npy_uintp h = (npy_uintp)key;
    h ^= h >> 31;
    h *= (npy_uintp)0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    return h;
}

int
so_dedup(so_plan *p, npy_intp itemsize)
{
    npy_intp block = itemsize, nidx = 1, cap, i, nwin = 0, cnt[SO_MAXDIMS];
    int lead = 0, d, nd;
    so_slot *table;

    p->nwin = -1;
    if (p->mask != NULL || p->bnd == 0) {
        return 0;
    }
    for (d = 0; d < p->bnd; d++) {
        block *= p->bshape[d];
    }
    if (block < SO_DEDUP_MIN_BYTES) {
        return 0;
    }
    while (lead < p->gnd && p->gs_idx[lead] == 0 && p->gs_out[lead] != 0) {
        lead++;
    }
    for (d = lead; d < p->gnd; d++) {
        if (p->gs_out[d] != 0 || p->gshape[d] == 0) {
            return 0;
        }
        nidx *= p->gshape[d];
    }
    if (nidx < 2) {
        return 0;
    }
    for (cap = 16; cap < 2 * nidx; cap *= 2) {
    }
    table = malloc(sizeof *table * (size_t)cap);
    if (table == NULL) {
        return 0;               /* not needed for a right answer: write every slice */
    }
    for (i = 0; i < cap; i++) {
        table[i].key = -1;
        table[i].order = -1;
    }

    /* walk the index dims in C order */
    nd = p->gnd - lead;
    for (d = 0; d < nd; d++) cnt[d] = 0;
    {
        const char *pi = p->idx;
        npy_intp su = 0, pos = 0;
        for (;;) {
            npy_intp oo = 0;
            npy_uintp h;
            int j;
            for (j = 0; j < p->k; j++) {
                oo += so_wrap(so_load_intp(pi + j * p->istep), p->isize[j]) * p->is_out[j];
            }
            for (h = mix(oo) & (npy_uintp)(cap - 1); table[h].order >= 0 && table[h].key != oo;
                 h = (h + 1) & (npy_uintp)(cap - 1)) {
            }
            if (table[h].order < 0) {
                nwin++;
            }
            table[h].key = oo;
            table[h].src = su;
            table[h].order = pos++;
            for (d = nd - 1; d >= 0; d--) {
                int g = lead + d;
                pi += p->gs_idx[g];
                su += p->gs_upd[g];
                if (++cnt[d] < p->gshape[g]) break;
                pi -= p->gs_idx[g] * p->gshape[g];
                su -= p->gs_upd[g] * p->gshape[g];
                cnt[d] = 0;
            }
            if (d < 0) break;
        }
    }
    /* compact the winners and order them by destination (sequential writes) */
    {
        npy_intp w = 0;
        for (i = 0; i < cap; i++) {
            if (table[i].order >= 0) {
                table[w++] = table[i];
            }
        }
    }
    qsort(table, (size_t)nwin, sizeof *table, by_key);
    p->win = malloc(sizeof *p->win * (size_t)(2 * nwin));
    if (p->win == NULL) {
        free(table);
        return 0;
    }
    for (i = 0; i < nwin; i++) {
        p->win[2 * i] = table[i].key;
        p->win[2 * i + 1] = table[i].src;
    }
    free(table);
    p->nwin = nwin;
    p->gnd = lead;              /* the index dims are now the winner list */
    return 1;
}
