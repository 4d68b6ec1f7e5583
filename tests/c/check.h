/* The check macro and helpers of the C core's unit tests (tests/c/test_*.c): each failed CHECK
 * prints one line; report() prints the closing "N passed, N failed" line and gives the exit code. */
#ifndef MBDCP_TESTS_CHECK_H
#define MBDCP_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>

static int n_pass, n_fail;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            n_pass++;                                                                                                  \
        } else {                                                                                                       \
            n_fail++;                                                                                                  \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                                     \
        }                                                                                                              \
    } while (0)

static inline int near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

static inline int report(void)
{
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}

#endif /* MBDCP_TESTS_CHECK_H */
