/*
 * call/groups.c: how a group reduction runs (groups.h).  Each function is a
 * fixed sequence of passes over the members, each pass the member loops of
 * kernels/group.h walked in member order, in pieces between which the poll is
 * asked:
 *   sum, prod, max, min, first, last, any, all, count, argmax, argmin: one pass;
 *   mean: the sum, then one division per cell;
 *   var, std: the mean (into scratch), then the sum of squared deviations;
 *   logsumexp: the max m (into scratch), then the sum s of exp(x - m), the
 *   terms computed a piece at a time into a buffer that NumPy's exp loop
 *   turns over in place; then log(s) by NumPy's log loop, and m + log(s);
 *   softmax: as logsumexp, the terms written into the result, which the last
 *   pass divides by s (log: less log(s)).
 * The common cases run kernels/group_fast.c's loops (so_group_fast_takes),
 * the rest kernels/group.c's; this file's pass_members is the one place that
 * picks a member loop.  Under mode="raise" the first pass checks the ids: the
 * fast loops as they read each one (L.stop_bad), the others a piece's ids
 * just before they take its members; a bad id stops the call.
 * Segments are walked segment by segment, and split over threads by segment:
 * each cell is still summed in member order by one thread, so the bits do not
 * depend on the thread count.  Groups are split over threads by members only
 * for the ops whose partial results join exactly (integer sum and product,
 * max, min, argmax, argmin, first, last, any, all, count): each thread into
 * its own partial, joined in member order.  A float sum of unsorted groups
 * stays on one thread: a stable partition by group block would make it exact
 * on several, but costs more than a second thread gains here
 * (docs/design.md, "Group reductions: speed").
 */
#include "call/groups.h"
#include "call/cost.h"

#include <stdlib.h>

/* The members of a piece: about SO_PIECE items. */
static npy_intp
piece_members(const so_group_loop *L)
{
    npy_intp p = SO_PIECE / (L->inner > 0 ? L->inner : 1);
    return p > 0 ? p : 1;
}

int
so_group_unlocks(npy_intp n, npy_intp cells)
{
    return n >= SO_GIL_RELEASE_MIN || cells >= SO_GIL_RELEASE_MIN;
}

/* What a pass does with a piece: members [n0, n1) of outer row o, all of
 * group g (a segment) or each of its gid (g < 0); returns the member whose
 * bad id stopped it (a first pass whose loop checks the ids, L.stop_bad), or
 * -1. */
typedef struct pass pass;
struct pass {
    npy_intp (*fn)(const pass *p, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g);
    so_group_loop L;
    const so_group_call *c;
    char *m;                    /* the maxima (logsumexp, softmax) */
    char *terms;                /* a piece's exp terms */
    char *sums;                 /* softmax: the sums s */
    int log;
    int fast;                   /* pass_members: so_group_fast runs L */
    int segsums;                /* segments: so_group_segsums runs them, a batch at a time */
    int check;                  /* the ids checked: by the member loop itself
                                 * (L.stop_bad), else each piece's first */
};

static npy_intp
pass_members(const pass *p, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g)
{
    if (p->fast) return so_group_fast(&p->L, o, n0, n1, g);
    so_group_members(&p->L, o, n0, n1, g);
    return -1;
}

/* NumPy's loop on n contiguous items of buf, in place */
static void
run_ufunc(const so_group_ufunc_loop *u, char *buf, npy_intp n, npy_intp isz)
{
    char *args[2] = {buf, buf};
    npy_intp steps[2] = {isz, isz};
    if (n > 0) u->fn(args, &n, steps, u->data);
}

static npy_intp
pass_lse_terms(const pass *p, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g)
{
    npy_intp k = so_group_diffs(&p->L, p->m, p->terms, o, n0, n1);
    (void)g;
    run_ufunc(&p->c->exp, p->terms, k, so_group_itemsize(p->L.type));
    so_group_add_terms(&p->L, p->sums, p->terms, o, n0, n1);
    return -1;
}

/* softmax: the result holds x - m; the sums take exp of it (log: the result
 * keeps x - m and the exp goes into terms) */
static npy_intp
pass_softmax_terms(const pass *p, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g)
{
    const npy_intp isz = so_group_itemsize(p->L.type);
    char *at = p->L.res + (o * p->L.n + n0) * p->L.inner * isz;
    npy_intp k = so_group_diffs(&p->L, p->m, at, o, n0, n1);
    (void)g;
    if (p->log) {
        memcpy(p->terms, at, (size_t)(k * isz));
        at = p->terms;
    }
    run_ufunc(&p->c->exp, at, k, isz);
    so_group_add_terms(&p->L, p->sums, at, o, n0, n1);
    return -1;
}

static npy_intp
pass_scale(const pass *p, npy_intp o, npy_intp n0, npy_intp n1, npy_intp g)
{
    (void)g;
    so_group_scale(&p->L, p->L.res, p->sums, p->log, o, n0, n1);
    return -1;
}

/* A share of a pass for one thread: segments [g0, g1) of every outer row, or
 * (groups) members [n0, n1); bad: the first bad id's member, or -1. */
typedef struct {
    const pass *p;
    so_poll *poll;
    npy_intp g0, g1, n0, n1;
    int stopped;
    npy_intp bad;
} share;

static void *
run_share(void *arg)
{
    share *s = (share *)arg;
    const pass *p = s->p;
    const so_group_loop *L = &p->L;
    const npy_intp piece = piece_members(L), *ip = p->c->indptr;
    /* values without rows (an empty axis before the grouped one) still have
     * their ids checked: one row that only checks */
    const npy_intp rows = L->outer > 0 || !p->check || ip != NULL ? L->outer : 1;
    npy_intp o, n0, g, done = 0;
    for (o = 0; o < rows; o++) {
        if (ip == NULL) {
            if (L->backward && L->outer > 0) {
                /* the pieces from the last; the first bad id is the last met */
                npy_intp k = (s->n1 - s->n0 + piece - 1) / piece, b;
                while (k-- > 0) {
                    const npy_intp a = s->n0 + k * piece, e = a + piece < s->n1 ? a + piece : s->n1;
                    if (so_stopped(s->poll)) goto stop;
                    if ((b = p->fn(p, o, a, e, -1)) >= 0) s->bad = b;
                }
                if (s->bad >= 0) return NULL;
                continue;
            }
            for (n0 = s->n0; n0 < s->n1; n0 += piece) {
                const npy_intp n1 = n0 + piece < s->n1 ? n0 + piece : s->n1;
                if (so_stopped(s->poll)) goto stop;
                if (p->check && o == 0 && (!L->stop_bad || L->outer == 0) &&
                    (s->bad = so_group_bad_id(L, n0, n1)) >= 0) return NULL;
                if (L->outer > 0 && (s->bad = p->fn(p, o, n0, n1, -1)) >= 0) return NULL;
            }
            continue;
        }
        for (g = s->g0; g < s->g1; g++) {
            npy_intp a, b, ge = g, m = 0;
            /* segsums: a batch of whole segments of at most a piece of members
             * (a longer segment alone, in pieces, below) */
            while (p->segsums && ge < s->g1 && m + (ip[ge + 1] - ip[ge]) <= piece) {
                m += ip[ge + 1] - ip[ge];
                ge++;
            }
            if (ge > g) {
                if (so_stopped(s->poll)) goto stop;
                so_group_segsums(L, o, ip, g, ge);
                g = ge - 1;
                continue;
            }
            a = ip[g];
            b = ip[g + 1];
            for (n0 = a; n0 < b; n0 += piece) {
                const npy_intp n1 = n0 + piece < b ? n0 + piece : b;
                done += n1 - n0;
                if (done >= piece) {
                    done = 0;
                    if (so_stopped(s->poll)) goto stop;
                }
                p->fn(p, o, n0, n1, g);
            }
        }
    }
    return NULL;
stop:
    s->stopped = 1;
    return NULL;
}

/* The end of a pass's shares: 1 if the poll stopped one, 2 if one met a bad
 * id (*bad: the first), else 0. */
static int
shares_end(const share *shares, int n, npy_intp *bad)
{
    int t, rc = 0;
    for (t = 0; t < n; t++) {
        if (shares[t].bad >= 0 && (rc != 2 || shares[t].bad < *bad)) {
            *bad = shares[t].bad;
            rc = 2;
        }
    }
    for (t = 0; t < n && rc == 0; t++) rc = shares[t].stopped;
    return rc;
}

/* Groups on n threads, each into its own partial result (thread 0 into the
 * call's), members split into n ranges, the partials joined in member order:
 * for the ops whose partials join exactly (kernels/group_combine.c).  As
 * shares_end, or -1 out of memory. */
static int
run_partials(const pass *p, share *shares, int n, so_poll *poll, npy_intp *bad)
{
    const so_group_loop *L = &p->L;
    const npy_intp ncells = L->outer * L->size * L->inner, isz = so_group_itemsize(L->type);
    const npy_intp ncnt = L->outer * L->size * (L->skipnan ? L->inner : 1);
    const int boolean = L->op == SO_G_ANY || L->op == SO_G_ALL;
    pass *passes = (pass *)calloc((size_t)n, sizeof(pass));
    int t, stopped = 0, failed = passes == NULL;
    for (t = 0; t < n && !failed; t++) {
        passes[t] = *p;
        shares[t].p = &passes[t];
        shares[t].poll = poll;
        shares[t].stopped = 0;
        shares[t].bad = -1;
        shares[t].n0 = L->n / n * t;
        shares[t].n1 = t == n - 1 ? L->n : L->n / n * (t + 1);
        if (t == 0) continue;
        passes[t].L.res = (char *)calloc((size_t)(ncells > 0 ? ncells : 1), boolean ? 1 : (size_t)isz);
        passes[t].L.cnt = L->cnt == NULL ? NULL
                          : (npy_intp *)calloc((size_t)(ncnt > 0 ? ncnt : 1), sizeof(npy_intp));
        passes[t].L.seen = L->seen == NULL ? NULL : (npy_bool *)calloc((size_t)(ncnt > 0 ? ncnt : 1), 1);
        passes[t].L.pos = L->pos == NULL ? NULL
                          : (npy_intp *)calloc((size_t)(ncells > 0 ? ncells : 1), sizeof(npy_intp));
        failed = passes[t].L.res == NULL || (L->cnt != NULL && passes[t].L.cnt == NULL) ||
                 (L->seen != NULL && passes[t].L.seen == NULL) ||
                 (L->pos != NULL && passes[t].L.pos == NULL);
        if (failed) break;
        if (L->op == SO_G_ALL) memset(passes[t].L.res, 1, (size_t)ncells);
        if (L->op == SO_G_PROD) so_group_ones(L->type, passes[t].L.res, ncells);
        if (p->fast) so_group_fast_start(&passes[t].L, passes[t].L.res, passes[t].L.pos, ncells);
    }
    if (!failed) {
        so_run_tasks_polled(run_share, shares, sizeof(share), n, poll);
        stopped = shares_end(shares, n, bad);
        for (t = 0; t < n && !stopped && p->fast; t++) so_group_fast_seen(&passes[t].L, ncnt);
        for (t = 1; t < n && !stopped; t++) so_group_combine(&passes[0].L, &passes[t].L, ncells, ncnt);
    }
    for (t = 1; passes != NULL && t < n; t++) {
        free(passes[t].L.res);
        free(passes[t].L.cnt);
        free(passes[t].L.seen);
        free(passes[t].L.pos);
    }
    free(passes);
    return failed ? -1 : stopped;
}

/* Run pass p over every member: segments split into up to nthreads shares of
 * about equal members; groups on several threads where the op's partials join
 * exactly and pay (so_group_partials_pay: run_partials), else on one.
 * As shares_end, or -1 out of memory. */
static int
run_pass(const pass *p, int nthreads, so_poll *poll, npy_intp *bad)
{
    const npy_intp *ip = p->c->indptr, size = p->L.size;
    const npy_intp work = p->L.outer * p->L.n * p->L.inner;
    const npy_intp ncells = p->L.outer * size * p->L.inner;
    share one = {p, poll, 0, size, 0, p->L.n, 0, -1}, *shares;
    int n = nthreads, t, stopped = 0;
    npy_intp members, g = 0;
    const int partials = ip == NULL && p->fn == pass_members &&
                         so_group_combines(p->L.op, p->L.type) &&
                         so_group_partials_pay(work, ncells, so_group_partial_bytes(&p->L),
                                               p->L.pos != NULL);
    if ((ip == NULL && !partials) || work < 2 * SO_PIECE) n = 1;
    if (ip != NULL && n > size) n = (int)size;
    shares = (share *)so_task_array(&one, sizeof(share), &n);
    if (n > 1 && ip == NULL) {
        stopped = run_partials(p, shares, n, poll, bad);
        so_task_array_free(shares, &one);
        return stopped;
    }
    if (n > 1) {
        members = ip[size] - ip[0];
        for (t = 0; t < n; t++) {
            const npy_intp end = ip[0] + members / n * (t + 1);
            shares[t] = one;
            shares[t].g0 = g;
            while (g < size && (t == n - 1 || ip[g + 1] <= end)) g++;
            shares[t].g1 = t == n - 1 ? size : g;
        }
    }
    so_run_tasks_polled(run_share, shares, sizeof(share), n, poll);
    stopped = shares_end(shares, n, bad);
    so_task_array_free(shares, &one);
    return stopped;
}

/* The counts start at 0 for each counting pass. */
static void
zero_counts(so_group_call *c)
{
    memset(c->cnt, 0, (size_t)c->ncnt * sizeof(npy_intp));
}

/* The first pass of a call, p's op chosen: which member loop runs it, what
 * the cells keep (counts, seen flags or positions) and start at, and the ids'
 * check.  As run_pass. */
static int
first_pass(so_group_call *c, pass *p, npy_intp ncells, int nthreads, so_poll *poll)
{
    const int op = p->L.op;
    npy_intp k;
    int rc;
    p->fast = so_group_fast_takes(&p->L);
    p->segsums = c->indptr != NULL && so_group_segsums_takes(&p->L);
    p->check = c->check_ids;
    /* the fast loops check each id as they read it */
    p->L.stop_bad = p->check && p->fast;
    p->L.backward = c->indptr == NULL && so_group_runs_backward(&p->L);
    if (p->fast && (op == SO_G_MAX || op == SO_G_MIN || op == SO_G_FIRST || op == SO_G_LAST)) {
        c->seen = (npy_bool *)calloc((size_t)(c->ncnt > 0 ? c->ncnt : 1), 1);
        if (c->seen == NULL) return -1;
        p->L.counted = 0;
    }
    else if (p->fast && (op == SO_G_ARGMAX || op == SO_G_ARGMIN)) {
        p->L.counted = 0;
    }
    else if (p->L.counted || !p->fast || c->func == SO_GF_VAR || c->func == SO_GF_STD) {
        /* pairs: the counts' memory holds the pairs first (so_group_unpair) */
        const size_t per = so_group_pairs_take(&p->L) ? (size_t)so_group_pair_size(p->L.type)
                                                       : sizeof(npy_intp);
        c->cnt = (npy_intp *)calloc((size_t)(c->ncnt > 0 ? c->ncnt : 1), per);
        if (c->cnt == NULL) return -1;
        if (per != sizeof(npy_intp)) p->L.pairs = (char *)c->cnt;
    }
    p->L.cnt = c->cnt;
    p->L.seen = c->seen;
    if (p->fast) so_group_fast_start(&p->L, p->L.res, p->L.pos, ncells);
    rc = run_pass(p, nthreads, poll, &c->bad);
    if (rc == 0 && p->fast) so_group_fast_seen(&p->L, c->ncnt);
    p->check = 0;
    p->L.backward = 0;
    p->L.stop_bad = 0;
    p->segsums = 0;
    if (p->L.pairs != NULL && rc == 0) so_group_unpair(&p->L, c->ncnt);
    p->L.pairs = NULL;
    if (rc != 0 || !p->fast || (op != SO_G_ARGMAX && op != SO_G_ARGMIN)) return rc;
    /* the empty cells of a fast argmax: those still at position -1 */
    c->seen = (npy_bool *)malloc((size_t)(c->ncnt > 0 ? c->ncnt : 1));
    if (c->seen == NULL) return -1;
    for (k = 0; k < c->ncnt; k++) c->seen[k] = p->L.pos[k * p->L.inner] >= 0;
    return 0;
}

int
so_group_run(so_group_call *c, int nthreads, so_poll *poll)
{
    const so_group_loop *L0 = &c->L;
    const npy_intp ncells = L0->outer * L0->size * L0->inner, isz = so_group_itemsize(L0->type);
    const npy_intp per = L0->skipnan ? 1 : L0->inner;
    pass p;
    npy_intp k, nscratch = 0;
    memset(&p, 0, sizeof p);
    p.fn = pass_members;
    p.L = *L0;
    p.c = c;
    c->ncnt = L0->outer * L0->size * (L0->skipnan ? L0->inner : 1);
    c->bad = -1;
    switch (c->func) {
    case SO_GF_ARGMAX: case SO_GF_ARGMIN: case SO_GF_VAR: case SO_GF_STD:
    case SO_GF_LOGSUMEXP:
        nscratch = ncells;
        break;
    case SO_GF_SOFTMAX: case SO_GF_LOG_SOFTMAX:
        nscratch = 2 * ncells + (piece_members(L0) + 1) * L0->inner;
        break;
    default:
        break;
    }
    c->scratch = (char *)calloc((size_t)(nscratch > 0 ? nscratch : 1), (size_t)isz);
    if (c->scratch == NULL) return -1;
    p.L.counted = !c->fill_is_start;
    switch (c->func) {
    case SO_GF_SUM: case SO_GF_MEAN:
        memset(p.L.res, 0, (size_t)(ncells * isz));
        p.L.op = c->half ? SO_G_SUM_HALF : SO_G_SUM;
        break;
    case SO_GF_PROD:
        so_group_ones(L0->type, p.L.res, ncells);
        p.L.op = c->half ? SO_G_PROD_HALF : SO_G_PROD;
        break;
    case SO_GF_MAX: p.L.op = c->half ? SO_G_MAX_HALF : SO_G_MAX; break;
    case SO_GF_MIN: p.L.op = c->half ? SO_G_MIN_HALF : SO_G_MIN; break;
    case SO_GF_FIRST: p.L.op = SO_G_FIRST; break;
    case SO_GF_LAST: p.L.op = SO_G_LAST; break;
    case SO_GF_ANY: case SO_GF_ALL:
        memset(p.L.res, c->func == SO_GF_ALL, (size_t)ncells);
        p.L.op = c->func == SO_GF_ALL ? SO_G_ALL : SO_G_ANY;
        break;
    case SO_GF_COUNT: p.L.op = SO_G_COUNT; break;
    case SO_GF_ARGMAX: case SO_GF_ARGMIN:
        p.L.pos = (npy_intp *)p.L.res;
        p.L.res = c->scratch;
        p.L.op = c->func == SO_GF_ARGMAX ? SO_G_ARGMAX : SO_G_ARGMIN;
        break;
    case SO_GF_VAR: case SO_GF_STD:
        p.L.res = c->scratch;
        p.L.op = SO_G_SUM;
        break;
    default:        /* logsumexp, softmax: the maxima first */
        p.L.res = c->scratch;
        p.L.op = SO_G_MAX;
        break;
    }
    if ((k = first_pass(c, &p, ncells, nthreads, poll)) != 0) return (int)k;
    switch (c->func) {
    case SO_GF_MEAN:
        so_group_divide(L0->type, p.L.res, c->cnt, ncells, per);
        break;
    case SO_GF_COUNT:
        for (k = 0; k < ncells; k++) ((npy_intp *)L0->res)[k] = c->cnt[k / per];
        break;
    case SO_GF_VAR: case SO_GF_STD:
        so_group_divide(L0->type, c->scratch, c->cnt, ncells, per);
        p.L.res = L0->res;
        p.L.mean = c->scratch;
        p.L.op = SO_G_DEV;
        /* the fast loop keeps the first pass's counts; the other counts again */
        k = p.L.counted;
        p.L.counted = 0;
        p.fast = k && so_group_fast_takes(&p.L);
        if (!p.fast) {
            p.L.counted = (int)k;
            zero_counts(c);
        }
        memset(p.L.res, 0, (size_t)(ncells * isz));
        if ((k = run_pass(&p, nthreads, poll, &c->bad)) != 0) return (int)k;
        so_group_var(L0->type, p.L.res, c->cnt, ncells, per, c->ddof, c->func == SO_GF_STD);
        break;
    case SO_GF_LOGSUMEXP:
        p.m = c->scratch;
        p.sums = L0->res;
        p.terms = (char *)malloc((size_t)((piece_members(L0) + 1) * L0->inner * isz + isz));
        if (p.terms == NULL) return -1;
        memset(p.sums, 0, (size_t)(ncells * isz));
        p.fn = pass_lse_terms;
        k = run_pass(&p, nthreads, poll, &c->bad);
        free(p.terms);
        if (k) return 1;
        run_ufunc(&c->log, p.sums, ncells, isz);
        so_group_lse(L0->type, p.sums, p.m, ncells);
        break;
    case SO_GF_SOFTMAX: case SO_GF_LOG_SOFTMAX:
        p.m = c->scratch;
        p.sums = c->scratch + ncells * isz;
        p.terms = c->scratch + 2 * ncells * isz;
        p.log = c->func == SO_GF_LOG_SOFTMAX;
        p.L.res = L0->res;
        p.fn = pass_softmax_terms;
        if (run_pass(&p, nthreads, poll, &c->bad)) return 1;
        if (p.log) run_ufunc(&c->log, p.sums, ncells, isz);
        p.fn = pass_scale;
        if (run_pass(&p, nthreads, poll, &c->bad)) return 1;
        break;
    default:
        break;
    }
    return 0;
}

void
so_group_fill_empty(const so_group_call *c, char *result, npy_intp isz, const char *fill)
{
    const so_group_loop *L = &c->L;
    const npy_intp ncells = L->outer * L->size * L->inner, per = L->skipnan ? 1 : L->inner;
    npy_intp k;
    for (k = 0; !c->fill_is_start && k < ncells; k++) {
        if (c->seen != NULL ? !c->seen[k / per] : c->cnt[k / per] == 0) {
            memcpy(result + k * isz, fill, (size_t)isz);
        }
    }
}

void
so_group_free(so_group_call *c)
{
    free(c->cnt);
    free(c->seen);
    free(c->scratch);
    c->cnt = NULL;
    c->seen = NULL;
    c->scratch = NULL;
}
