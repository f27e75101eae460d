/*
 * base/cpu.c: which instruction sets the CPU has and the OS supports (CPUID and
 * XGETBV), asked once per feature; a feature can be turned off (the
 * SCATTEROPS_NO_* switches, parsed by the Python side and set through
 * py/settings.c).  A portable build (SO_X86_VECTOR 0) has none.  Also the
 * sizes of a core's L1 data and L2 caches, for the cost model of walk/split.c.
 */
#include "base/base.h"

#include <stdio.h>
#include <unistd.h>

#if SO_X86_VECTOR
#include <cpuid.h>
#endif

/* -1: not asked yet; else whether the feature may be used */
static int known[SO_CPU_NFEATURES] = {-1, -1, -1};
static int disabled[SO_CPU_NFEATURES];

void
so_cpu_disable(int feature)
{
    disabled[feature] = 1;
    known[feature] = 0;
}

/* Whether the CPU has the instructions and the OS saves the registers they use,
 * asked with CPUID and XGETBV, which every compiler here knows (clang 14 has no
 * __builtin_cpu_supports("f16c")).  The answer is kept: every thread that
 * races to it writes the same value. */
int
so_cpu_has(int feature)
{
    if (known[feature] < 0) {
        int have = 0;
#if SO_X86_VECTOR
        unsigned int a = 0, b = 0, c = 0, d = 0, xlo = 0, xhi = 0, state = 0;
        if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE)) {
            if (feature == SO_CPU_F16C) {
                have = (c & bit_F16C) && (c & bit_AVX);
                state = 0x6;       /* XMM and YMM */
            }
            else if (feature == SO_CPU_AVX2) {
                have = (c & bit_AVX) && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
                state = 0x6;
            }
            else {
                have = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) &&
                       (b & bit_AVX512DQ);
                state = 0xE6;      /* XMM, YMM, opmask and ZMM */
            }
            if (have) {
                __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
                have = (xlo & state) == state;
            }
        }
#endif
        known[feature] = have && !disabled[feature];
    }
    return known[feature];
}

/* A cache's size from sysfs (cpu0's index i of the given level and a data or
 * unified type), or 0. */
static long
sysfs_cache_bytes(int level)
{
    int i;
    for (i = 0; i < 8; i++) {
        char path[96], type[32] = "";
        int lv = 0;
        long kib = 0;
        FILE *f;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if ((f = fopen(path, "r")) == NULL) return 0;
        if (fscanf(f, "%d", &lv) != 1) lv = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if ((f = fopen(path, "r")) != NULL) {
            if (fscanf(f, "%31s", type) != 1) type[0] = 0;
            fclose(f);
        }
        if (lv != level || strcmp(type, "Instruction") == 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if ((f = fopen(path, "r")) == NULL) return 0;
        if (fscanf(f, "%ldK", &kib) != 1) kib = 0;
        fclose(f);
        return kib * 1024;
    }
    return 0;
}

/* Asked once (every thread that races to it writes the same value): sysconf,
 * then sysfs, else 32 KiB, 1 MiB and 32 MiB. */
npy_intp
so_cache_bytes(int level)
{
    static npy_intp known_bytes[4];
    static const long fallback[4] = {0, 32L << 10, 1L << 20, 32L << 20};
    if (level < 1 || level > 3) return 0;
    if (known_bytes[level] == 0) {
        long b = 0;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && \
        defined(_SC_LEVEL3_CACHE_SIZE)
        b = sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE
                    : level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE);
#endif
        if (b <= 0) b = sysfs_cache_bytes(level);
        if (b <= 0) b = fallback[level];
        known_bytes[level] = (npy_intp)b;
    }
    return known_bytes[level];
}
