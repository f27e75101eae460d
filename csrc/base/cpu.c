/*
 * base/cpu.c: which instruction sets the CPU has and the OS supports (CPUID and
 * XGETBV), asked once per feature; a feature can be turned off (the
 * SCATTEROPS_NO_* switches, parsed by the Python side and set through
 * py/settings.c).  A portable build (SO_X86_VECTOR 0) has none.
 */
#include "base/base.h"

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
