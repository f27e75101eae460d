/*
 * kernels/widen.c: the index dtypes that have no loops of their own in
 * indexed.c and mean_indexed.c (int8, int16, uint8, uint16, uint32, uint64)
 * and rows.c (those and int32) are read through a wider one: a chunk of them
 * is copied into a buffer of int32 (int8, int16, uint8, uint16: every value
 * fits; rows.c: int64) or int64 (uint32; uint64, whose values above int64's
 * range become int64's maximum, outside any out, as they were), and the loop
 * of that type runs on the buffer.  A chunk of uint64 values that all fit in
 * int64 needs no copy: the int64 loop reads it in place.  The loops are
 * specialised by dtype, reduction and index dtype; one or two index dtypes
 * instead of eight keep the build short, and the copy, a loop the compiler
 * vectorises over a chunk in L1, is a small part of the updates (or rows) it
 * feeds.
 */
#include "kernels/ops.h"

#define WIDEN(NAME, IT, WT, VALUE)                                                    \
static void                                                                           \
widen_##NAME(char *w, const char *idx, npy_intp n)                                    \
{                                                                                     \
    const IT *restrict ix = (const IT *)(const void *)idx;                            \
    WT *restrict out = (WT *)(void *)w;                                               \
    npy_intp k;                                                                       \
    for (k = 0; k < n; k++) out[k] = VALUE(ix[k]);                                    \
}
#define AS_IS(v) (v)
/* v, or int64's maximum when v is above it: written with a shift and masks
 * (no compare of unsigned 64-bit values, which SSE2 and AVX2 lack) so that
 * the copy vectorises */
#define CLAMP_U64(v) ((npy_int64)(((v) & (((v) >> 63) - 1)) | ((0 - ((v) >> 63)) & NPY_MAX_INT64)))
WIDEN(i8, npy_int8, npy_int32, AS_IS)
WIDEN(i16, npy_int16, npy_int32, AS_IS)
WIDEN(u8, npy_uint8, npy_int32, AS_IS)
WIDEN(u16, npy_uint16, npy_int32, AS_IS)
WIDEN(u32, npy_uint32, npy_int64, AS_IS)
WIDEN(u64, npy_uint64, npy_int64, CLAMP_U64)
WIDEN(i8_64, npy_int8, npy_int64, AS_IS)
WIDEN(i16_64, npy_int16, npy_int64, AS_IS)
WIDEN(i32_64, npy_int32, npy_int64, AS_IS)
WIDEN(u8_64, npy_uint8, npy_int64, AS_IS)
WIDEN(u16_64, npy_uint16, npy_int64, AS_IS)
WIDEN(i32, npy_int32, npy_int32, AS_IS)
WIDEN(i64, npy_int64, npy_int64, AS_IS)

int
so_wide_index_type(int itype)
{
    switch (itype) {
        case SO_IX_i8: case SO_IX_i16: case SO_IX_u8: case SO_IX_u16: return SO_IX_i32;
        case SO_IX_u32: case SO_IX_u64: return SO_IX_i64;
    }
    return itype;
}

/* the copies by index type: to int32 or int64 (so_wide_index_type), and all to int64 */
typedef void (*widen_fn)(char *w, const char *idx, npy_intp n);
static const widen_fn to_wide[SO_IX_NTYPES] = {
    widen_i8, widen_i16, widen_i32, widen_i64, widen_u8, widen_u16, widen_u32, widen_u64};
static const widen_fn to_int64[SO_IX_NTYPES] = {
    widen_i8_64, widen_i16_64, widen_i32_64, widen_i64, widen_u8_64, widen_u16_64, widen_u32,
    widen_u64};

void
so_widen_index(int itype, char *w, const char *idx, npy_intp n)
{
    to_wide[itype](w, idx, n);
}

void
so_widen_index64(int itype, char *w, const char *idx, npy_intp n)
{
    to_int64[itype](w, idx, n);
}

/* Whether n uint64 values all fit in int64: then they are their own int64
 * copy, and the loop reads them where they are. */
static int
u64_fits_int64(const char *idx, npy_intp n)
{
    const npy_uint64 *restrict ix = (const npy_uint64 *)(const void *)idx;
    npy_uint64 any = 0;
    npy_intp k;
    for (k = 0; k < n; k++) any |= ix[k];
    return (any >> 63) == 0;
}

npy_intp
so_indexed_widened(so_indexed_fn wide, int itype, npy_intp usz, char *o, npy_intp aos,
                   npy_intp size, const char *idx, const char *u, npy_intp n)
{
    npy_int64 w[SO_WIDE_CHUNK];
    const npy_intp isz = so_index_size(itype);
    npy_intp c, pos;
    for (c = 0; c < n; c += SO_WIDE_CHUNK) {
        npy_intp m = n - c < SO_WIDE_CHUNK ? n - c : SO_WIDE_CHUNK;
        const char *ix = idx + c * isz;
        if (itype != SO_IX_u64 || !u64_fits_int64(ix, m)) {
            so_widen_index(itype, (char *)w, ix, m);
            ix = (const char *)w;
        }
        pos = wide(o, aos, size, ix, u + c * usz, m);
        if (pos >= 0) return c + pos;
    }
    return -1;
}
