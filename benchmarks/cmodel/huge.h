/*
 * benchmarks/cmodel/huge.h: the large arrays of the C models that stand in for
 * NumPy's: 2 MiB aligned and madvised for huge pages, as NumPy's large arrays
 * are, and zeroed (so touched).  Include after model.h, with _DEFAULT_SOURCE
 * defined (madvise).
 */
#ifndef SO_CMODEL_HUGE_H
#define SO_CMODEL_HUGE_H
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *
big(size_t bytes)
{
    void *p = NULL;
    size_t huge = (size_t)1 << 21;
    bytes = (bytes + huge - 1) / huge * huge;
    if (posix_memalign(&p, huge, bytes) != 0) exit(1);
    madvise(p, bytes, MADV_HUGEPAGE);
    memset(p, 0, bytes);
    return p;
}
#endif
