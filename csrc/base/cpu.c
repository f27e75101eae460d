/*
 * base/cpu.c: which instruction sets the CPU has and the OS supports (CPUID and
 * XGETBV), asked once per feature; the SCATTEROPS_NO_* variables turn one off.
 */
#include "base/base.h"

#include <stdlib.h>
#if defined(__GNUC__) && defined(__x86_64__)
#include <cpuid.h>
#endif


/* Whether the CPU has the instructions and the OS saves the registers they use,
 * asked with CPUID and XGETBV, which every compiler here knows (clang 14 has no
 * __builtin_cpu_supports("f16c")).  SCATTEROPS_NO_F16C=1 / SCATTEROPS_NO_AVX512=1
 * turn one off (the tests compare both ways).  The answer is kept: every thread
 * that races to it writes the same value. */
int
so_cpu_has(int feature)
{
    static int known[3] = {-1, -1, -1};
    if (known[feature] < 0) {
        const char *env = getenv(feature == SO_CPU_F16C     ? "SCATTEROPS_NO_F16C"
                                 : feature == SO_CPU_AVX2   ? "SCATTEROPS_NO_AVX2"
                                                            : "SCATTEROPS_NO_AVX512");
        int have = 0;
#if defined(__GNUC__) && defined(__x86_64__)
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
        known[feature] = have && !(env != NULL && env[0] == '1');
    }
    return known[feature];
}

