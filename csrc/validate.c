/*
 * validate.c: the one pass that checks every index value before anything is
 * written.  It finds the first value (in C order of indices) outside
 * [-size, size); the Python layer turns that position into the IndexError.
 * After this pass the kernels trust every index.
 */
#include "scatterops.h"

/*
 * idx: native npy_intp, any shape and strides.  With one bound, every value is
 * checked against it; with nbounds > 1 the last dim of idx has nbounds entries
 * and entry j is checked against bounds[j] (scatter_nd's index tuples).
 */
npy_intp
so_find_bad_index(PyArrayObject *idx, const npy_intp *bounds, int nbounds)
{
    const int nd = PyArray_NDIM(idx);
    const npy_intp *shape = PyArray_DIMS(idx), *st = PyArray_STRIDES(idx);
    npy_intp cnt[SO_MAXDIMS];
    npy_intp n, s, pos = 0, i;
    const char *p = PyArray_BYTES(idx);
    int d, last = nd - 1;

    if (PyArray_SIZE(idx) == 0) {
        return -1;
    }
    if (nd == 0) {
        npy_intp v = so_load_intp(p);
        return (v < -bounds[0] || v >= bounds[0]) ? 0 : -1;
    }
    n = shape[last];
    s = st[last];
    for (d = 0; d < nd; d++) {
        cnt[d] = 0;
    }
    for (;;) {
        if (nbounds == 1) {
            const npy_intp b = bounds[0];
            for (i = 0; i < n; i++) {
                npy_intp v = so_load_intp(p + i * s);
                if (v < -b || v >= b) {
                    return pos + i;
                }
            }
        }
        else {
            for (i = 0; i < n; i++) {
                npy_intp v = so_load_intp(p + i * s), b = bounds[i];
                if (v < -b || v >= b) {
                    return pos + i;
                }
            }
        }
        pos += n;
        for (d = last - 1; d >= 0; d--) {
            p += st[d];
            if (++cnt[d] < shape[d]) {
                break;
            }
            p -= st[d] * shape[d];
            cnt[d] = 0;
        }
        if (d < 0) {
            return -1;
        }
    }
}
