/*
 * kernels/group_fast.c: the member loops of the common group reductions
 * (group.h, so_group_fast): one loop per op, computing type and kind of ids
 * (int64, int32, or one segment's group), values read as typed contiguous
 * members or rows, and only the bookkeeping the op needs.  Each loop gives
 * the bits of so_group_members' loop for the same op: the cells take their
 * members in member order, one IEEE operation each.
 *
 * Max and min start each cell at the least (greatest) value of the type, so
 * that its first member always replaces it, exactly as the first member is
 * taken as it is: x > -inf, x < +inf and a NaN compare false, so the rule "x
 * unless the cell is greater or a NaN" takes every first x.  Argmax and argmin
 * start their cells so too, and each position at -1 (no member yet).
 */
#include "kernels/group_types.h"

#include <math.h>
#include <string.h>

int
so_group_fast_takes(const so_group_loop *L)
{
    const npy_intp isz = so_group_itemsize(L->type);
    int op_ok, type_ok, layout_ok;
    if (L->skipnan) return 0;
    op_ok = L->op == SO_G_SUM || L->op == SO_G_MAX || L->op == SO_G_MIN || L->op == SO_G_FIRST ||
            L->op == SO_G_LAST || L->op == SO_G_ARGMAX || L->op == SO_G_ARGMIN ||
            L->op == SO_G_COUNT ||
            (L->op == SO_G_DEV && !L->counted && (L->type == SO_GT_F32 || L->type == SO_GT_F64));
    type_ok = L->type == SO_GT_I64 || L->type == SO_GT_U64 || L->type == SO_GT_F32 ||
              L->type == SO_GT_F64;
    layout_ok = L->sn % isz == 0 && L->so % isz == 0 && (L->inner == 1 || L->si == isz);
    return op_ok && type_ok && layout_ok;
}

/* the member's group: the id of member n of a loop over ids, or g0.  The id
 * arrays are read through locals (IDS): a store to a cell may alias *L for
 * the compiler, which would reload L->gid at every member. */
#define IDS                                                                              \
    const npy_intp *const gid_ = L->gid;                                                 \
    const npy_int32 *const gid32_ = L->gid32;                                            \
    (void)gid_; (void)gid32_
#define ID_I64(n) (gid_[n])
#define ID_I32(n) ((npy_intp)gid32_[n])
#define ID_SEG(n) ((void)(n), g0)

/* The row loops prefetch the cells of the member this many ahead: a row's
 * cells are a random place in a table that outgrows the caches (message
 * passing), and the loop alone keeps too few rows in flight to hide the wait. */
#define ROW_AHEAD 8

/* FAST's step on single values: xv the value, r its cell */
#define AT_ONE(T, ...)                                                                   \
    const T xv = v[m * s];                                                               \
    T *r = res + g;                                                                      \
    (void)xv; (void)r;                                                                   \
    __VA_ARGS__

/* One loop: for each member n of [n0, n1) with its cell row r (T *) of group
 * g (index kc = o * size + g of its count or seen flag), x (const T *) its
 * value row; STEP1 the op on one value (inner == 1: xv, r[0]), STEPI on
 * element i of a row; FOUR 1 to take single values four at a time (AT_FOUR),
 * 0 one at a time (argmax and argmin, docs/design.md). */
#define FAST(NAME, T, IDF, FOUR, STEP1, STEPI)                                           \
static npy_intp                                                                          \
NAME(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g0)          \
{                                                                                        \
    const npy_intp size = L->size, inner = L->inner;                                     \
    const int stop = L->stop_bad;                                                        \
    /* a table of cells in L1 needs no prefetch */                                       \
    const int ahead = size * inner * (npy_intp)sizeof(T) > so_cache_bytes(1);            \
    const npy_intp s = L->sn / (npy_intp)sizeof(T);                                      \
    const T *v = (const T *)(L->v + o * L->so);                                          \
    T *res = (T *)L->res + o * size * inner;                                             \
    npy_intp *cnt = L->cnt != NULL ? L->cnt + o * size : NULL;                           \
    npy_bool *seen = L->seen != NULL ? L->seen + o * size : NULL;                        \
    npy_intp *pos = L->pos != NULL ? L->pos + o * size * inner : NULL;                   \
    const T *mean = L->mean != NULL ? (const T *)L->mean + o * size * inner : NULL;      \
    npy_intp n, i;                                                                       \
    (void)g0; (void)cnt; (void)seen; (void)pos; (void)i; (void)ahead; (void)mean;        \
    if (inner == 1) {                                                                    \
        IDS;                                                                             \
        for (n = n0; FOUR && n + 4 <= n1; n += 4)                                        \
            AT_FOUR(IDF, if (stop) return m, AT_ONE(T, STEP1))                           \
        for (; n < n1; n++) AT_MEMBER(n, IDF(n), if (stop) return m, AT_ONE(T, STEP1))   \
        return -1;                                                                       \
    }                                                                                    \
    for (n = n0; n < n1; n++) {                                                          \
        /* per member: a row loop with L->gid held in a register is longer */            \
        IDS;                                                                             \
        const npy_intp g = IDF(n);                                                       \
        if (ahead && n + ROW_AHEAD < n1) {                                               \
            const npy_intp ga = IDF(n + ROW_AHEAD);                                      \
            if ((npy_uintp)ga < (npy_uintp)size) {                                       \
                const char *ra = (const char *)(res + ga * inner);                       \
                npy_intp b_;                                                             \
                for (b_ = 0; b_ < inner * (npy_intp)sizeof(T); b_ += 64)                 \
                    __builtin_prefetch(ra + b_, 1);                                      \
            }                                                                            \
        }                                                                                \
        if ((npy_uintp)g >= (npy_uintp)size) {                                           \
            if (stop) return n;                                                          \
            continue;                                                                    \
        }                                                                                \
        {                                                                                \
            const T *restrict x = v + n * s;                                             \
            T *restrict r = res + g * inner;                                             \
            (void)x; (void)r;                                                            \
            STEPI;                                                                       \
        }                                                                                \
    }                                                                                    \
    return -1;                                                                           \
}

#define ROW(STMT) for (i = 0; i < inner; i++) { STMT; }

/* the ops, on a value xv and its cell r[0] (or x[i], r[i] of a row) */
#define SUM1(T, UT) r[0] = (T)((UT)r[0] + (UT)xv)
#define SUMI(T, UT) ROW(r[i] = (T)((UT)r[i] + (UT)x[i]))
/* keep the cell if it is greater (less) or a NaN, else take x: two selects
 * on the values, which the compiler makes without a branch (a maxss / minss
 * and a blend for floats, cmov for integers): the outcome is random */
#define KEEP(T, ISNAN, CMP, R, X)                                                        \
    do {                                                                                 \
        const T c_ = (R), x_ = (X);                                                      \
        const T m_ = c_ CMP x_ ? c_ : x_;                                                \
        (R) = ISNAN(c_) ? c_ : m_;                                                       \
    } while (0)
/* Max, min, and first and last of single values, mark a group seen only when
 * a member leaves its cell at the start (max: a member equal to the least
 * value; first, last: a member with the start's bits), a branch that is
 * almost never taken in place of a store each member; so_group_fast_seen then
 * marks every cell that moved off its start.  The first element of a row
 * stands for the row: a group with members whose first cell is still at the
 * start had a member at the start there. */
#define MAX1(T, ISNAN, LO) KEEP(T, ISNAN, >, r[0], xv); if (xv == (LO)) seen[g] = 1
#define MAXI(T, ISNAN, LO) ROW(KEEP(T, ISNAN, >, r[i], x[i])) if (x[0] == (LO)) seen[g] = 1
#define MIN1(T, ISNAN, HI) KEEP(T, ISNAN, <, r[0], xv); if (xv == (HI)) seen[g] = 1
#define MINI(T, ISNAN, HI) ROW(KEEP(T, ISNAN, <, r[i], x[i])) if (x[0] == (HI)) seen[g] = 1
/* FIRST1: a segment's members (L->backward: groups' members run backward,
 * first_back) */
#define FIRST1 if (!seen[g]) { r[0] = xv; seen[g] = 1; }
#define FIRSTI if (!seen[g]) { ROW(r[i] = x[i]) seen[g] = 1; }
#define LAST1(BITS, SB) r[0] = xv; if (BITS(xv) == (SB)) seen[g] = 1
#define LASTI ROW(r[i] = x[i]) seen[g] = 1
/* ARG1: take x if it is better, a NaN against a number, or equal to a cell
 * still at its start (LO, HI) with no member yet: the position is read only
 * on a tie, and the first member always taken */
#define ARG1(ISNAN, BETTER)                                                              \
    if (xv BETTER r[0] || (ISNAN(xv) && !ISNAN(r[0])) || (xv == r[0] && pos[g] < 0)) {  \
        r[0] = xv;                                                                       \
        pos[g] = m;                                                                      \
    }
#define ARGI(ISNAN, BETTER)                                                              \
    ROW(if (x[i] BETTER r[i] || (ISNAN(x[i]) && !ISNAN(r[i])) ||                         \
            (x[i] == r[i] && pos[g * inner + i] < 0)) {                                  \
        r[i] = x[i];                                                                     \
        pos[g * inner + i] = n;                                                          \
    })
/* DEV: the squared deviation from the cell's mean, counted by the first pass */
#define DEV1(T) { const T d_ = xv - mean[g]; r[0] = r[0] + d_ * d_; }
#define DEVI(T) ROW(const T d_ = x[i] - mean[g * inner + i]; r[i] = r[i] + d_ * d_)
#define COUNT1 cnt[g]++

/* First of single values by ids (L->backward): the members from the last to
 * the first, each stored as last's are, so that the first member's store is
 * the one that stays; the caller walks the pieces backward too.  A bad id
 * (L->stop_bad) is remembered, not a stop: the one returned is the first. */
#define FIRST_BACK1(T, BITS, SB)                                                         \
    const T xv = v[m * s];                                                               \
    res[g] = xv;                                                                         \
    if (BITS(xv) == (SB)) seen[g] = 1
#define FIRST_BACK(NAME, T, IDF, BITS, SB)                                               \
static npy_intp                                                                          \
NAME(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g0)          \
{                                                                                        \
    const npy_intp size = L->size, s = L->sn / (npy_intp)sizeof(T);                      \
    const int stop = L->stop_bad;                                                        \
    const T *v = (const T *)(L->v + o * L->so);                                          \
    T *res = (T *)L->res + o * size;                                                     \
    npy_bool *seen = L->seen + o * size;                                                 \
    npy_intp n, bad = -1;                                                                \
    IDS;                                                                                 \
    (void)g0;                                                                            \
    for (n = n1 - 1; n >= n0; n--)                                                       \
        AT_MEMBER(n, IDF(n), if (stop) bad = m, FIRST_BACK1(T, BITS, SB))                \
    return bad;                                                                          \
}

/* the loops of one (type, kind of ids): SUM without and with counts, MAX,
 * MIN, FIRST, LAST, ARGMAX, ARGMIN, COUNT */
#define FAST_SET(NAME, T, UT, ISNAN, IDF, BITS, LO, HI, SB)                              \
FAST(sum_##NAME, T, IDF, 1, SUM1(T, UT), SUMI(T, UT))                                    \
FAST(sumc_##NAME, T, IDF, 1, SUM1(T, UT); cnt[g]++, SUMI(T, UT) cnt[g]++)                \
FAST(max_##NAME, T, IDF, 1, MAX1(T, ISNAN, LO), MAXI(T, ISNAN, LO))                      \
FAST(min_##NAME, T, IDF, 1, MIN1(T, ISNAN, HI), MINI(T, ISNAN, HI))                      \
FAST(first_##NAME, T, IDF, 1, FIRST1, FIRSTI)                                            \
FAST(last_##NAME, T, IDF, 1, LAST1(BITS, SB), LASTI)                                     \
FAST(argmax_##NAME, T, IDF, 0, ARG1(ISNAN, >), ARGI(ISNAN, >))                           \
FAST(argmin_##NAME, T, IDF, 0, ARG1(ISNAN, <), ARGI(ISNAN, <))                           \
FAST(dev_##NAME, T, IDF, 1, DEV1(T), DEVI(T))                                            \
static npy_intp                                                                          \
run_##NAME(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g0)    \
{                                                                                        \
    switch (L->op) {                                                                     \
    case SO_G_SUM:                                                                       \
        if (L->counted) return sumc_##NAME(L, o, n0, n1, g0);                            \
        return sum_##NAME(L, o, n0, n1, g0);                                             \
    case SO_G_MAX: return max_##NAME(L, o, n0, n1, g0);                                  \
    case SO_G_MIN: return min_##NAME(L, o, n0, n1, g0);                                  \
    case SO_G_FIRST: return first_##NAME(L, o, n0, n1, g0);                              \
    case SO_G_LAST: return last_##NAME(L, o, n0, n1, g0);                                \
    case SO_G_ARGMAX: return argmax_##NAME(L, o, n0, n1, g0);                            \
    case SO_G_DEV: return dev_##NAME(L, o, n0, n1, g0);                                  \
    default: return argmin_##NAME(L, o, n0, n1, g0);                                     \
    }                                                                                    \
}

/* A segment's sum of single values: the cell in a register, the same
 * additions in the same order */
#define SEG_SUM(NAME, T, UT)                                                             \
static void                                                                              \
segsum_##NAME(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g)  \
{                                                                                        \
    const npy_intp s = L->sn / (npy_intp)sizeof(T);                                      \
    const T *v = (const T *)(L->v + o * L->so);                                          \
    T *r = (T *)L->res + o * L->size + g;                                                \
    T acc = *r;                                                                          \
    npy_intp n;                                                                          \
    if (s == 1) for (n = n0; n < n1; n++) acc = (T)((UT)acc + (UT)v[n]);                 \
    else for (n = n0; n < n1; n++) acc = (T)((UT)acc + (UT)v[n * s]);                    \
    *r = acc;                                                                            \
}

/* the mean's sum and count of a group side by side */
#define PAIR1 pr[g].s = pr[g].s + v[m * s]; pr[g].c++
#define PAIR_LOOP(NAME, T, PT, IDF)                                                      \
static npy_intp                                                                          \
pairs_##NAME(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g0)  \
{                                                                                        \
    const npy_intp size = L->size, s = L->sn / (npy_intp)sizeof(T);                      \
    const T *v = (const T *)(L->v + o * L->so);                                          \
    struct PT *pr = (struct PT *)L->pairs + o * size;                                    \
    const int stop = L->stop_bad;                                                        \
    npy_intp n;                                                                          \
    IDS;                                                                                 \
    (void)g0;                                                                            \
    for (n = n0; n + 4 <= n1; n += 4) AT_FOUR(IDF, if (stop) return m, PAIR1)            \
    for (; n < n1; n++) AT_MEMBER(n, IDF(n), if (stop) return m, PAIR1)                  \
    return -1;                                                                           \
}
PAIR_LOOP(f32_i64, npy_float, pair_f32, ID_I64)
PAIR_LOOP(f32_i32, npy_float, pair_f32, ID_I32)
PAIR_LOOP(f32_seg, npy_float, pair_f32, ID_SEG)
PAIR_LOOP(f64_i64, npy_double, pair_f64, ID_I64)
PAIR_LOOP(f64_i32, npy_double, pair_f64, ID_I32)
PAIR_LOOP(f64_seg, npy_double, pair_f64, ID_SEG)

#define FAST_TYPE(NAME, T, UT, ISNAN)                                                    \
FAST_SET(NAME##_i64, T, UT, ISNAN, ID_I64, bits_##NAME, LO_##NAME, HI_##NAME, SB_##NAME) \
FAST_SET(NAME##_i32, T, UT, ISNAN, ID_I32, bits_##NAME, LO_##NAME, HI_##NAME, SB_##NAME) \
FAST_SET(NAME##_seg, T, UT, ISNAN, ID_SEG, bits_##NAME, LO_##NAME, HI_##NAME, SB_##NAME) \
FIRST_BACK(first_back_##NAME##_i64, T, ID_I64, bits_##NAME, SB_##NAME)                   \
FIRST_BACK(first_back_##NAME##_i32, T, ID_I32, bits_##NAME, SB_##NAME)                   \
SEG_SUM(NAME, T, UT)

FAST_TYPE(i64, npy_int64, npy_uint64, NO_NAN)
FAST_TYPE(u64, npy_uint64, npy_uint64, NO_NAN)
FAST_TYPE(f32, npy_float, npy_float, IS_NAN)
FAST_TYPE(f64, npy_double, npy_double, IS_NAN)

/* COUNT reads no values: one loop per kind of ids */
#define COUNT_LOOP(NAME, IDF)                                                            \
static npy_intp                                                                          \
NAME(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g0)          \
{                                                                                        \
    const npy_intp size = L->size;                                                       \
    const int stop = L->stop_bad;                                                        \
    npy_intp *cnt = L->cnt + o * size;                                                   \
    npy_intp n;                                                                          \
    IDS;                                                                                 \
    (void)g0;                                                                            \
    for (n = n0; n < n1; n++) {                                                          \
        const npy_intp g = IDF(n);                                                       \
        if ((npy_uintp)g < (npy_uintp)size) cnt[g]++;                                    \
        else if (stop) return n;                                                         \
    }                                                                                    \
    return -1;                                                                           \
}
COUNT_LOOP(count_i64, ID_I64)
COUNT_LOOP(count_i32, ID_I32)

npy_intp
so_group_fast(const so_group_loop *L, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g)
{
    /* ids: 0 int64, 1 int32, 2 one segment */
    const int ids = g >= 0 ? 2 : L->gid32 != NULL ? 1 : 0;
    if (L->op == SO_G_COUNT) {
        if (ids == 2) {
            if (n1 > n0) L->cnt[o * L->size + g] += n1 - n0;
            return -1;
        }
        return ids == 1 ? count_i32(L, o, n0, n1, g) : count_i64(L, o, n0, n1, g);
    }
#define BY_IDS(NAME)                                                                     \
    if (L->backward) {                                                                   \
        return ids == 1 ? first_back_##NAME##_i32(L, o, n0, n1, g)                       \
                        : first_back_##NAME##_i64(L, o, n0, n1, g);                      \
    }                                                                                    \
    if (ids == 2 && L->op == SO_G_SUM && !L->counted && L->inner == 1) {                 \
        segsum_##NAME(L, o, n0, n1, g);                                                  \
        return -1;                                                                       \
    }                                                                                    \
    switch (ids) {                                                                       \
    case 0: return run_##NAME##_i64(L, o, n0, n1, g);                                    \
    case 1: return run_##NAME##_i32(L, o, n0, n1, g);                                    \
    default: return run_##NAME##_seg(L, o, n0, n1, g);                                   \
    }
    if (L->pairs != NULL) {
        if (L->type == SO_GT_F32) {
            if (ids == 0) return pairs_f32_i64(L, o, n0, n1, g);
            if (ids == 1) return pairs_f32_i32(L, o, n0, n1, g);
            return pairs_f32_seg(L, o, n0, n1, g);
        }
        if (ids == 0) return pairs_f64_i64(L, o, n0, n1, g);
        if (ids == 1) return pairs_f64_i32(L, o, n0, n1, g);
        return pairs_f64_seg(L, o, n0, n1, g);
    }
    switch (L->type) {
    case SO_GT_I64: BY_IDS(i64)
    case SO_GT_U64: BY_IDS(u64)
    case SO_GT_F32: BY_IDS(f32)
    default: BY_IDS(f64)
    }
#undef BY_IDS
}
