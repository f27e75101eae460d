/*
 * kernels/group_segments.c: the sums of sorted segments of single values
 * (group.h, so_group_segsums), several segments at a time so that the
 * latency of one segment's chain of additions hides behind the others'.
 * Each segment's members are still added one after another in member order:
 * the bits are those of one segment after another.
 */
#include "kernels/group_types.h"

/* Segments of at least this many members on average go through the lanes
 * (each lane takes the next segment when its own ends); shorter ones four at
 * a time with the rests alone, whose bookkeeping costs less a segment
 * (docs/design.md, "Group reductions: speed"). */
#define LANES_MIN_MEMBERS 256

/* m members of four chains, starting at X0 .. X3 (stride s), onto acc[0 .. 3];
 * Q the loop's counter */
#define FOUR_CHAINS(T, UT, X0, X1, X2, X3, Q)                                            \
    {                                                                                    \
        T a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];                            \
        const T *x0 = (X0), *x1 = (X1), *x2 = (X2), *x3 = (X3);                          \
        for (Q = 0; Q < m; Q++) {                                                        \
            a0 = (T)((UT)a0 + (UT)x0[Q * s]);                                            \
            a1 = (T)((UT)a1 + (UT)x1[Q * s]);                                            \
            a2 = (T)((UT)a2 + (UT)x2[Q * s]);                                            \
            a3 = (T)((UT)a3 + (UT)x3[Q * s]);                                            \
        }                                                                                \
        acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;                              \
    }

/* Segments [g0, g1)' sums of single values, four at a time: each segment's
 * additions one chain in member order, the four chains interleaved for the
 * length of the shortest, then each one's rest alone (the bits of one segment
 * after another) */
#define SEG_SUMS(NAME, T, UT)                                                            \
static void                                                                              \
segsums_##NAME(const so_group_loop *L, npy_intp o, const npy_intp *ip, npy_intp g0,      \
               npy_intp g1)                                                              \
{                                                                                        \
    const npy_intp s = L->sn / (npy_intp)sizeof(T);                                      \
    const T *v = (const T *)(L->v + o * L->so);                                          \
    T *r = (T *)L->res + o * L->size;                                                    \
    npy_intp g = g0, j, k, m;                                                            \
    for (; g + 4 <= g1; g += 4) {                                                        \
        const T *x[4];                                                                   \
        T acc[4];                                                                        \
        npy_intp len[4];                                                                 \
        for (j = 0; j < 4; j++) {                                                        \
            x[j] = v + ip[g + j] * s;                                                    \
            len[j] = ip[g + j + 1] - ip[g + j];                                          \
            acc[j] = r[g + j];                                                           \
        }                                                                                \
        m = len[0];                                                                      \
        for (j = 1; j < 4; j++) m = len[j] < m ? len[j] : m;                             \
        FOUR_CHAINS(T, UT, x[0], x[1], x[2], x[3], k)                                    \
        for (j = 0; j < 4; j++) {                                                        \
            T a = acc[j];                                                                \
            for (k = m; k < len[j]; k++) a = (T)((UT)a + (UT)x[j][k * s]);               \
            r[g + j] = a;                                                                \
        }                                                                                \
    }                                                                                    \
    for (; g < g1; g++) {                                                                \
        T a = r[g];                                                                      \
        for (k = ip[g]; k < ip[g + 1]; k++) a = (T)((UT)a + (UT)v[k * s]);               \
        r[g] = a;                                                                        \
    }                                                                                    \
}

/* Segments [g0, g1)' sums of single values in four lanes: each lane one
 * segment's additions, one chain in member order, the four chains interleaved
 * so that one's latency hides another's; a lane that reaches its segment's
 * end stores the sum and takes the next segment, so the lanes stay busy
 * whatever the lengths (the bits of one segment after another).  Lane j:
 * segment seg[j], its next member k[j] and end e[j], its sum acc[j], on[j]
 * while it has a segment. */
#define SEG_LANES(NAME, T, UT)                                                           \
static void                                                                              \
lanes_##NAME(const so_group_loop *L, npy_intp o, const npy_intp *ip, npy_intp g0,        \
             npy_intp g1)                                                                \
{                                                                                        \
    const npy_intp s = L->sn / (npy_intp)sizeof(T);                                      \
    const T *v = (const T *)(L->v + o * L->so);                                          \
    T *r = (T *)L->res + o * L->size;                                                    \
    npy_intp seg[4], k[4], e[4], next = g0, j, q, m;                                     \
    T acc[4];                                                                            \
    int on[4];                                                                           \
    for (j = 0; j < 4; j++) {                                                            \
        on[j] = next < g1;                                                               \
        if (!on[j]) continue;                                                            \
        seg[j] = next;                                                                   \
        k[j] = ip[next];                                                                 \
        e[j] = ip[next + 1];                                                             \
        acc[j] = r[next];                                                                \
        next++;                                                                          \
    }                                                                                    \
    while (on[0] && on[1] && on[2] && on[3]) {                                           \
        m = e[0] - k[0];                                                                 \
        for (j = 1; j < 4; j++) m = e[j] - k[j] < m ? e[j] - k[j] : m;                   \
        FOUR_CHAINS(T, UT, v + k[0] * s, v + k[1] * s, v + k[2] * s, v + k[3] * s, q)    \
        for (j = 0; j < 4; j++) {                                                        \
            k[j] += m;                                                                   \
            if (k[j] < e[j]) continue;                                                   \
            r[seg[j]] = acc[j];                                                          \
            on[j] = next < g1;                                                           \
            if (!on[j]) continue;                                                        \
            seg[j] = next;                                                               \
            k[j] = ip[next];                                                             \
            e[j] = ip[next + 1];                                                         \
            acc[j] = r[next];                                                            \
            next++;                                                                      \
        }                                                                                \
    }                                                                                    \
    /* the segments left in the lanes, one after another */                              \
    for (j = 0; j < 4; j++) {                                                            \
        T a;                                                                             \
        if (!on[j]) continue;                                                            \
        a = acc[j];                                                                      \
        for (q = k[j]; q < e[j]; q++) a = (T)((UT)a + (UT)v[q * s]);                     \
        r[seg[j]] = a;                                                                   \
    }                                                                                    \
}

SEG_SUMS(i64, npy_int64, npy_uint64)
SEG_SUMS(u64, npy_uint64, npy_uint64)
SEG_SUMS(f32, npy_float, npy_float)
SEG_SUMS(f64, npy_double, npy_double)
SEG_LANES(i64, npy_int64, npy_uint64)
SEG_LANES(u64, npy_uint64, npy_uint64)
SEG_LANES(f32, npy_float, npy_float)
SEG_LANES(f64, npy_double, npy_double)

int
so_group_segsums_takes(const so_group_loop *L)
{
    return so_group_fast_takes(L) && L->op == SO_G_SUM && !L->counted && L->inner == 1;
}

void
so_group_segsums(const so_group_loop *L, npy_intp o, const npy_intp *ip, npy_intp g0,
                 npy_intp g1)
{
    if (g1 > g0 && ip[g1] - ip[g0] >= LANES_MIN_MEMBERS * (g1 - g0)) {
        switch (L->type) {
        case SO_GT_I64: lanes_i64(L, o, ip, g0, g1); break;
        case SO_GT_U64: lanes_u64(L, o, ip, g0, g1); break;
        case SO_GT_F32: lanes_f32(L, o, ip, g0, g1); break;
        default: lanes_f64(L, o, ip, g0, g1); break;
        }
        return;
    }
    switch (L->type) {
    case SO_GT_I64: segsums_i64(L, o, ip, g0, g1); break;
    case SO_GT_U64: segsums_u64(L, o, ip, g0, g1); break;
    case SO_GT_F32: segsums_f32(L, o, ip, g0, g1); break;
    default: segsums_f64(L, o, ip, g0, g1); break;
    }
}
