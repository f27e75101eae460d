/*
 * kernels/assign.c: the kernels for reduction "none".  One body serves every dtype: it
 * moves item-size chunks, specialised (as NumPy's put/take do) for 1, 2, 4, 8
 * and 16 bytes so the compiler emits plain moves, with memcpy for the rest.
 * Object dtype has its own kernel that keeps reference counts right.
 */
#include "kernels/kernels.h"

/* Contiguous rows are one memcpy; out never overlaps updates (the Python layer
 * copies updates first when it would). */
#define DEFINE_ASSIGN(N)                                                            \
static void                                                                         \
assign_block_##N(char *o, npy_intp os, const char *u, npy_intp us, npy_intp n,     \
                 npy_intp isz)                                                      \
{                                                                                   \
    npy_intp i;                                                                     \
    if (os == N && us == N) {                                                       \
        memcpy(o, u, (size_t)(n * N));                                              \
        return;                                                                     \
    }                                                                               \
    for (i = 0; i < n; i++) {                                                       \
        memcpy(o + i * os, u + i * us, N);                                          \
    }                                                                               \
}                                                                                   \
static void                                                                         \
assign_elem_##N(char *o, npy_intp os, const char *idx, npy_intp is, npy_intp size, \
                npy_intp aos, const char *u, npy_intp us, npy_intp n, npy_intp isz) \
{                                                                                   \
    npy_intp i;                                                                     \
    if (os == 0 && is == (npy_intp)sizeof(npy_intp) && us == N) {                   \
        for (i = 0; i < n; i++) {                                                   \
            npy_intp j = so_clamp(so_load_intp(idx + i * sizeof(npy_intp)), size);   \
            memcpy(o + j * aos, u + i * N, N);                                      \
        }                                                                           \
        return;                                                                     \
    }                                                                               \
    for (i = 0; i < n; i++) {                                                       \
        npy_intp j = so_clamp(so_load_intp(idx + i * is), size);                     \
        memcpy(o + i * os + j * aos, u + i * us, N);                                \
    }                                                                               \
}                                                                                   \
static void                                                                         \
assign_list_##N(char *o, const char *u, const npy_intp *oo, const npy_intp *uo,    \
                npy_intp n, npy_intp isz)                                           \
{                                                                                   \
    npy_intp q;                                                                     \
    for (q = 0; q < n; q++) {                                                       \
        memcpy(o + oo[q], u + uo[q], N);                                            \
    }                                                                               \
}

DEFINE_ASSIGN(1)
DEFINE_ASSIGN(2)
DEFINE_ASSIGN(4)
DEFINE_ASSIGN(8)
DEFINE_ASSIGN(16)

static void
assign_block_any(char *o, npy_intp os, const char *u, npy_intp us, npy_intp n, npy_intp isz)
{
    npy_intp i;
    if (os == isz && us == isz) {
        memcpy(o, u, (size_t)(n * isz));
        return;
    }
    for (i = 0; i < n; i++) {
        memcpy(o + i * os, u + i * us, (size_t)isz);
    }
}

static void
assign_elem_any(char *o, npy_intp os, const char *idx, npy_intp is, npy_intp size,
                npy_intp aos, const char *u, npy_intp us, npy_intp n, npy_intp isz)
{
    npy_intp i;
    for (i = 0; i < n; i++) {
        npy_intp j = so_clamp(so_load_intp(idx + i * is), size);
        memcpy(o + i * os + j * aos, u + i * us, (size_t)isz);
    }
}

/* Object dtype: take a reference to the new value before dropping the old one
 * (the old value's destructor may run Python code). NULL slots count as None,
 * as in NumPy. Runs with the GIL held. */
static void
assign_one_object(char *o, const char *u)
{
    PyObject *newv, *oldv;
    memcpy(&newv, u, sizeof newv);
    memcpy(&oldv, o, sizeof oldv);
    if (newv == NULL) {
        newv = Py_None;
    }
    Py_INCREF(newv);
    memcpy(o, &newv, sizeof newv);
    Py_XDECREF(oldv);
}

static void
assign_block_object(char *o, npy_intp os, const char *u, npy_intp us, npy_intp n, npy_intp isz)
{
    npy_intp i;
    for (i = 0; i < n; i++) {
        assign_one_object(o + i * os, u + i * us);
    }
}

static void
assign_elem_object(char *o, npy_intp os, const char *idx, npy_intp is, npy_intp size,
                   npy_intp aos, const char *u, npy_intp us, npy_intp n, npy_intp isz)
{
    npy_intp i;
    for (i = 0; i < n; i++) {
        npy_intp j = so_clamp(so_load_intp(idx + i * is), size);
        assign_one_object(o + i * os + j * aos, u + i * us);
    }
}

void
so_assign_kernel(so_kernel *kn, npy_intp itemsize, int is_object)
{
    kn->itemsize = itemsize;
    kn->needs_gil = is_object;
    kn->list = NULL;
    kn->first = NULL;
    if (is_object) {
        kn->block = assign_block_object;
        kn->elem = assign_elem_object;
        return;
    }
    switch (itemsize) {
        case 1:  kn->block = assign_block_1;  kn->elem = assign_elem_1; kn->list = assign_list_1; break;
        case 2:  kn->block = assign_block_2;  kn->elem = assign_elem_2; kn->list = assign_list_2; break;
        case 4:  kn->block = assign_block_4;  kn->elem = assign_elem_4; kn->list = assign_list_4; break;
        case 8:  kn->block = assign_block_8;  kn->elem = assign_elem_8; kn->list = assign_list_8; break;
        case 16: kn->block = assign_block_16; kn->elem = assign_elem_16; kn->list = assign_list_16; break;
        default: kn->block = assign_block_any; kn->elem = assign_elem_any; break;
    }
}
