/*
 * plan/dedup.c: under reduction="none" only the last write to an element is
 * visible, so earlier writes of a whole slice need not be made at all.
 *
 * When every group is a slice (a block of at least SO_DEDUP_MIN_BYTES), and the
 * group dims are some leading dims that address out directly (scatter_update's
 * data.shape[:axis]) followed by dims that only read indices, this pass walks
 * the index dims once, keeps for each destination the last update position
 * that writes it, and replaces those dims in the plan by the list of winners.
 * The walk then copies each visible slice exactly once per leading position.
 * The result is the same as writing every slice in C order.
 *
 * The same walk counts the hits of each destination for reduction="mean"
 * (so_count_hits): one count per slice, not per element.
 */
#include "plan/plan.h"
#include "base/nditer.h"

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

/* What gather_destinations keeps for each destination (see there). */
enum { SO_LAST_WRITER, SO_COUNT_HITS };

/* Walk the index dims in C order and run VISIT for each group, with oo its
 * destination offset in out, su its update offset, and flat its index values
 * as one number in the C order of the components; poll is asked every
 * SO_PIECE groups, and stopped the walk ends early (the caller asks again). */
#define SO_WALK_INDEX(p, lead, poll, VISIT)                                           \
    do {                                                                              \
        /* the innermost index dim as a plain loop, the outer ones counted */        \
        so_nditer it_;                                                                \
        const int nd_ = (p)->gnd - (lead), last_ = (p)->gnd - 1;                      \
        const npy_intp n_ = nd_ > 0 ? (p)->gshape[last_] : 1;                         \
        const npy_intp si_ = nd_ > 0 ? (p)->gs_idx[last_] : 0;                        \
        const npy_intp su_ = nd_ > 0 ? (p)->gs_upd[last_] : 0;                        \
        npy_intp i_;                                                                  \
        int j_;                                                                       \
        so_nd_init(&it_, nd_ > 0 ? nd_ - 1 : 0, (p)->gshape + (lead), 2,              \
                   (const npy_intp *const[]){(p)->gs_idx + (lead), (p)->gs_upd + (lead)}); \
        int stop_ = 0;                                                                \
        do {                                                                          \
            for (i_ = 0; i_ < n_ && !stop_; i_++) {                                   \
                const char *pi = (p)->idx + it_.off[0] + i_ * si_;                    \
                npy_intp su = it_.off[1] + i_ * su_, oo = 0, flat = 0;                \
                for (j_ = 0; j_ < (p)->k; j_++) {                                     \
                    npy_intp v_ = so_clamp(so_load_intp(pi + j_ * (p)->istep), (p)->isize[j_]); \
                    oo += v_ * (p)->is_out[j_];                                       \
                    flat = flat * (p)->isize[j_] + v_;                                \
                }                                                                     \
                VISIT;                                                                \
                if ((i_ & (SO_PIECE - 1)) == SO_PIECE - 1) stop_ = so_stopped(poll);   \
            }                                                                         \
            stop_ = stop_ || so_stopped(poll);                                        \
        } while (!stop_ && so_nd_next(&it_));                                         \
    } while (0)

/* Few possible destinations (the index space is at most a few times the number
 * of groups): one slot per index value, no hashing, found in order. */
#define SO_DIRECT_MAX ((npy_intp)1 << 26)

static so_slot *
gather_direct(const so_plan *p, int lead, int mode, npy_intp nflat, npy_intp *n_out,
              so_poll *poll)
{
    npy_intp *val = malloc(sizeof *val * (size_t)nflat), f, n = 0;
    npy_intp *key = malloc(sizeof *key * (size_t)nflat);
    char *seen = calloc((size_t)nflat, 1);
    so_slot *table = NULL;
    if (val == NULL || key == NULL || seen == NULL) goto done;
    SO_WALK_INDEX(p, lead, poll, {
        if (!seen[flat]) {
            seen[flat] = 1;
            key[flat] = oo;
            val[flat] = 0;
            n++;
        }
        val[flat] = mode == SO_LAST_WRITER ? su : val[flat] + 1;
    });
    table = malloc(sizeof *table * (size_t)(n + 1));
    if (table == NULL) goto done;
    n = 0;
    for (f = 0; f < nflat; f++) {
        if (seen[f]) {
            table[n].key = key[f];
            table[n].src = val[f];
            table[n].order = n;
            n++;
        }
    }
    *n_out = n;
done:
    free(val);
    free(key);
    free(seen);
    return table;
}

static so_slot *
gather_hashed(const so_plan *p, int lead, int mode, npy_intp ndest, npy_intp *n_out,
              so_poll *poll)
{
    npy_intp cap, i, n = 0, pos = 0;
    so_slot *table;
    for (cap = 16; cap < 2 * ndest; cap *= 2) {
    }
    table = malloc(sizeof *table * (size_t)cap);
    if (table == NULL) {
        return NULL;
    }
    for (i = 0; i < cap; i++) {
        table[i].order = -1;
    }
    SO_WALK_INDEX(p, lead, poll, {
        npy_uintp h;
        (void)flat;
        for (h = mix(oo) & (npy_uintp)(cap - 1); table[h].order >= 0 && table[h].key != oo;
             h = (h + 1) & (npy_uintp)(cap - 1)) {
        }
        if (table[h].order < 0) {
            n++;
            table[h].key = oo;
            table[h].src = 0;
        }
        table[h].src = mode == SO_LAST_WRITER ? su : table[h].src + 1;
        table[h].order = pos++;
    });
    {
        npy_intp w = 0;
        for (i = 0; i < cap; i++) {
            if (table[i].order >= 0) {
                table[w++] = table[i];
            }
        }
    }
    *n_out = n;
    return table;
}

/*
 * Walk the index dims (the group dims after the leading ones that address out
 * directly) once, in C order, and gather one entry per destination offset:
 * with SO_LAST_WRITER the update offset of the last group that writes it, with
 * SO_COUNT_HITS the number of groups that hit it.  Returns the entries as
 * (offset, value) pairs sorted by offset, in a malloc'd array, or NULL when the
 * plan is not of that shape (or memory is short).
 */
static npy_intp *
gather_destinations(const so_plan *p, int mode, int *lead_out, npy_intp *n_out, so_poll *poll)
{
    npy_intp nidx = 1, ndest = 1, nflat = 1, i, n = 0;
    int lead = 0, d, j, sorted = 1, direct;
    so_slot *table;
    npy_intp *pairs;

    while (lead < p->gnd && p->gs_idx[lead] == 0 && p->gs_out[lead] != 0) {
        lead++;
    }
    for (d = lead; d < p->gnd; d++) {
        if (p->gs_out[d] != 0 || p->gshape[d] == 0) {
            return NULL;
        }
        nidx *= p->gshape[d];
    }
    for (j = 0; j < p->k && ndest < nidx; j++) {
        ndest *= p->isize[j];   /* distinct destinations cannot outnumber these */
    }
    if (ndest > nidx) ndest = nidx;
    for (j = 0; j < p->k && nflat <= SO_DIRECT_MAX; j++) {
        nflat *= p->isize[j];
    }
    direct = nflat <= SO_DIRECT_MAX && nflat <= 4 * nidx + 4096;
    table = direct ? gather_direct(p, lead, mode, nflat, &n, poll)
                   : gather_hashed(p, lead, mode, ndest, &n, poll);
    if (table == NULL || so_stopped(poll)) {
        free(table);
        return NULL;
    }
    for (i = 1; i < n && sorted; i++) {
        sorted = table[i - 1].key < table[i].key;
    }
    if (!sorted) {
        /* by destination: sequential writes */
        qsort(table, (size_t)n, sizeof *table, by_key);
        for (i = 1; i < n && direct; i++) {
            if (table[i - 1].key == table[i].key) {
                /* two index values, one destination (an out whose strides
                 * overlap): only the hashed walk keeps them as one */
                free(table);
                table = gather_hashed(p, lead, mode, ndest, &n, NULL);
                if (table == NULL) {
                    return NULL;
                }
                qsort(table, (size_t)n, sizeof *table, by_key);
                direct = 0;
            }
        }
    }
    pairs = malloc(sizeof *pairs * (size_t)(2 * n + 1));
    if (pairs != NULL) {
        for (i = 0; i < n; i++) {
            pairs[2 * i] = table[i].key;
            pairs[2 * i + 1] = table[i].src;
        }
    }
    free(table);
    *lead_out = lead;
    *n_out = n;
    return pairs;
}

int
so_dedup(so_plan *p, npy_intp itemsize, so_poll *poll)
{
    npy_intp block = itemsize, nidx = 1, nwin;
    int lead, d;

    p->nwin = -1;
    if (p->mask != NULL || p->bnd == 0 || p->out_overlaps) {
        return 0;
    }
    for (d = 0; d < p->bnd; d++) {
        block *= p->bshape[d];
    }
    for (d = 0; d < p->gnd; d++) {
        nidx *= p->gshape[d];
    }
    if (block < SO_DEDUP_MIN_BYTES || nidx < 2) {
        return 0;
    }
    p->win = gather_destinations(p, SO_LAST_WRITER, &lead, &nwin, poll);
    if (p->win == NULL) {
        return 0;               /* not needed for a right answer: write every slice */
    }
    p->nwin = nwin;
    p->gnd = lead;              /* the index dims are now the winner list */
    return 1;
}

npy_intp *
so_count_hits(const so_plan *p, int *lead, npy_intp *n, so_poll *poll)
{
    int d;
    if (p->out_overlaps) {
        return NULL;            /* slices that share bytes: count per element */
    }
    for (d = 0; d < p->bnd; d++) {
        if (p->bs_out[d] == 0) {
            return NULL;        /* a block that hits one element several times */
        }
    }
    return gather_destinations(p, SO_COUNT_HITS, lead, n, poll);
}
