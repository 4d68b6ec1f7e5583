/* Unit tests of coulomb.h, built with -fsanitize=address,undefined in CI (tests/c/run.sh).
 * Prints one line per failure and a closing "N passed, N failed" line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mbdcp/mbdcp.h"

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

static int near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

/* A = diag(2, 0.5, 0.5): the three regimes in closed form. */
static void test_local_cases(void)
{
    const double A[9] = {2, 0, 0, 0, 0.5, 0, 0, 0, 0.5};
    double r[3] = {0, 0, 0};
    MbdcpFcCase which;
    const double up[3] = {0.3, 0.2, -0.1};
    CHECK(mbdcp_fc_local_solve(A, up, 0.4, 1, r, &which) == MBDCP_OK && which == MBDCP_FC_TAKEOFF);
    CHECK(r[0] == 0.0 && r[1] == 0.0 && r[2] == 0.0);
    const double st[3] = {-1.0, 0.05, -0.02};
    CHECK(mbdcp_fc_local_solve(A, st, 0.4, 1, r, &which) == MBDCP_OK && which == MBDCP_FC_STICK);
    CHECK(near(r[0], 0.5, 1e-15) && near(r[1], -0.1, 1e-15) && near(r[2], 0.04, 1e-15));
    const double sl[3] = {-1.0, 0.6, 0.8};
    r[0] = r[1] = r[2] = 0.0;
    CHECK(mbdcp_fc_local_solve(A, sl, 0.3, 1, r, &which) == MBDCP_OK && which == MBDCP_FC_SLIDE);
    CHECK(near(r[0], 0.5, 1e-13) && near(r[1], -0.3 * 0.5 * 0.6, 1e-13) && near(r[2], -0.3 * 0.5 * 0.8, 1e-13));
    /* the CCP: lifts off, r_n = (mu ||q_T|| - q_n) / (a + mu^2 b) */
    CHECK(mbdcp_fc_local_solve(A, sl, 0.3, 0, r, &which) == MBDCP_OK && which == MBDCP_FC_SLIDE);
    CHECK(near(r[0], 1.3 / 2.045, 1e-13));
    CHECK(mbdcp_fc_local_solve(A, sl, -0.3, 1, r, &which) == MBDCP_ERR_DATA);
    CHECK(mbdcp_fc_local_solve(NULL, sl, 0.3, 1, r, &which) == MBDCP_ERR_NULL);
}

/* Two decoupled contacts (W = I): one slides, one sticks; every method, the residual, the errors. */
static int stop_at_one(void *ctx, mbdcp_int it, mbdcp_int a, mbdcp_int b, double value)
{
    (void)ctx;
    (void)it;
    (void)a;
    (void)b;
    (void)value;
    return 1;
}

static void test_solvers(void)
{
    const int ptr[7] = {0, 1, 2, 3, 4, 5, 6}, ind[6] = {0, 1, 2, 3, 4, 5};
    const double val[6] = {1, 1, 1, 1, 1, 1}, q[6] = {-1, 2, 0, -1, 0.1, 0}, mu[2] = {0.5, 0.5};
    MbdcpFcProblem p = {2, ptr, ind, val, NULL, NULL, NULL, q, mu, 3};
    const MbdcpFcMethod coulomb[2] = {MBDCP_FC_NSGS, MBDCP_FC_FIXED_POINT}, ccp[2] = {MBDCP_FC_PGS, MBDCP_FC_APGD};
    for (int k = 0; k < 4; ++k) {
        MbdcpFcSettings s;
        mbdcp_fc_default_settings(&s);
        s.method = k < 2 ? coulomb[k] : ccp[k - 2];
        s.tol = 1e-12;
        const size_t bytes = mbdcp_fc_workspace_size(&p, &s);
        void *work = malloc(bytes);
        double r[6], u[6], res = 1.0;
        MbdcpFcInfo info;
        const MbdcpReturn rc = k < 2 ? mbdcp_coulomb_solve(&p, &s, r, u, &info, work, bytes)
                                     : mbdcp_ccp_local_solve(&p, &s, r, u, &info, work, bytes);
        CHECK(rc == MBDCP_OK && info.status == MBDCP_SOLVED && info.residual <= 1e-12);
        CHECK(mbdcp_fc_residual(&p, k < 2, r, NULL, &res) == MBDCP_OK && res <= 1e-12);
        if (k < 2) {
            CHECK(near(r[0], 1.0, 1e-11) && near(r[1], -0.5, 1e-11) && near(u[0], 0.0, 1e-11)); /* slides */
        } else {
            CHECK(near(r[0], 1.6, 1e-9) && near(u[0], 0.6, 1e-9)); /* the CCP lifts off */
        }
        CHECK(near(r[3], 1.0, 1e-11) && near(r[4], -0.1, 1e-11) && near(u[4], 0.0, 1e-11)); /* sticks */
        CHECK((k < 2 ? mbdcp_coulomb_solve(&p, &s, r, u, &info, work, bytes - 8)
                     : mbdcp_ccp_local_solve(&p, &s, r, u, &info, work, bytes - 8)) == MBDCP_ERR_WORKSPACE);
        free(work);
    }
    MbdcpFcSettings s;
    mbdcp_fc_default_settings(&s);
    const char *msg = NULL;
    s.method = MBDCP_FC_PGS;
    CHECK(mbdcp_fc_check_settings(&s, 1, &msg) == MBDCP_ERR_SETTING && msg != NULL);
    mbdcp_fc_default_settings(&s);
    s.tol = -1.0;
    CHECK(mbdcp_fc_check_settings(&s, 1, &msg) == MBDCP_ERR_SETTING);
    /* a monitor that stops at once: status INTERRUPTED */
    mbdcp_fc_default_settings(&s);
    s.method = MBDCP_FC_NSGS;
    s.tol = 1e-300;
    s.monitor.fn = stop_at_one;
    const size_t bytes = mbdcp_fc_workspace_size(&p, &s);
    void *work = malloc(bytes);
    double r[6], u[6];
    MbdcpFcInfo info;
    CHECK(mbdcp_coulomb_solve(&p, &s, r, u, &info, work, bytes) == MBDCP_OK && info.status == MBDCP_INTERRUPTED);
    CHECK(info.iterations == 1);
    /* a column index out of range */
    const int bad[6] = {0, 1, 2, 3, 4, 6};
    MbdcpFcProblem pb = {2, ptr, bad, val, NULL, NULL, NULL, q, mu, 3};
    CHECK(mbdcp_coulomb_solve(&pb, &s, r, u, &info, work, bytes) == MBDCP_ERR_DIMENSION);
    free(work);
}

int main(void)
{
    test_local_cases();
    test_solvers();
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
