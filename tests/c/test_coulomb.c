/* Unit tests of coulomb.h, built with -fsanitize=address,undefined in CI (tests/c/run.sh).
 * Prints one line per failure and a closing "N passed, N failed" line. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbdcp/mbdcp.h"
#include "check.h"

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

/* Solve with NEWTON or AUTO (factor_blocks from mbdcp_fc_factor_blocks); returns the return code. */
static MbdcpReturn solve_with(const MbdcpFcProblem *p, MbdcpFcMethod method, int coulomb, double tol, double *r, double *u,
                              MbdcpFcInfo *info, const MbdcpMonitor *mon)
{
    MbdcpFcSettings s;
    mbdcp_fc_default_settings(&s);
    s.method = method;
    s.tol = tol;
    if (mon) s.monitor = *mon;
    const size_t fbytes = mbdcp_fc_factor_workspace_size(p);
    void *fwork = malloc(fbytes);
    mbdcp_int blocks = -1;
    MbdcpReturn rc = mbdcp_fc_factor_blocks(p, &blocks, NULL, fwork, fbytes);
    free(fwork);
    if (rc != MBDCP_OK) return rc;
    s.factor_blocks = blocks;
    const size_t bytes = mbdcp_fc_workspace_size(p, &s);
    void *work = malloc(bytes);
    rc = coulomb ? mbdcp_coulomb_solve(p, &s, r, u, info, work, bytes) : mbdcp_ccp_local_solve(p, &s, r, u, info, work, bytes);
    free(work);
    return rc;
}

/* Newton and AUTO on a coupled problem (W = tridiagonal blocks, SPD), 3-D and 2-D, both problems. */
static void test_newton_and_auto(void)
{
    enum { NC = 6 };
    int ptr[3 * NC + 1], ind[3 * NC * 9];
    double val[3 * NC * 9], q[3 * NC], mu[NC], r[3 * NC], u[3 * NC], res;
    int k = 0;
    ptr[0] = 0;
    for (int row = 0; row < 3 * NC; ++row) { /* 4 on the diagonal, -1 to the same axis of the neighbours */
        for (int col = row - 3; col <= row + 3; col += 3)
            if (col >= 0 && col < 3 * NC) {
                ind[k] = col;
                val[k++] = col == row ? 4.0 : -1.0;
            }
        ptr[row + 1] = k;
    }
    for (int i = 0; i < NC; ++i) {
        q[3 * i] = i % 3 == 2 ? 0.5 : -1.0; /* one in three takes off */
        q[3 * i + 1] = 0.3 * (i % 2 ? 1.0 : -2.0);
        q[3 * i + 2] = 0.1 * i;
        mu[i] = 0.2 + 0.1 * i;
    }
    MbdcpFcProblem p = {NC, ptr, ind, val, NULL, NULL, NULL, q, mu, 3};
    const MbdcpFcMethod methods[2] = {MBDCP_FC_NEWTON, MBDCP_FC_AUTO};
    for (int c = 0; c < 2; ++c)
        for (int m = 0; m < 2; ++m) {
            MbdcpFcInfo info;
            CHECK(solve_with(&p, methods[m], c, 1e-12, r, u, &info, NULL) == MBDCP_OK);
            CHECK(info.status == MBDCP_SOLVED && info.residual <= 1e-12);
            CHECK(mbdcp_fc_residual(&p, c, r, NULL, &res) == MBDCP_OK && res <= 1e-12);
            CHECK(m == 1 || info.finished == MBDCP_FC_NEWTON);
            CHECK(info.certificate == MBDCP_FC_NO_CERTIFICATE);
        }
    /* NEWTON without the fill is refused */
    MbdcpFcSettings s;
    mbdcp_fc_default_settings(&s);
    s.method = MBDCP_FC_NEWTON;
    const char *msg = NULL;
    CHECK(mbdcp_fc_check_settings(&s, 1, &msg) == MBDCP_ERR_SETTING && msg != NULL);
    /* a 2-D problem: the normal and first tangent rows and columns of the same W */
    int ptr2[2 * NC + 1], ind2[2 * NC * 3];
    double val2[2 * NC * 3], q2[2 * NC], r2[2 * NC], u2[2 * NC];
    k = 0;
    ptr2[0] = 0;
    for (int row = 0; row < 2 * NC; ++row) {
        for (int col = row - 2; col <= row + 2; col += 2)
            if (col >= 0 && col < 2 * NC) {
                ind2[k] = col;
                val2[k++] = col == row ? 4.0 : -1.0;
            }
        ptr2[row + 1] = k;
    }
    for (int i = 0; i < NC; ++i) {
        q2[2 * i] = q[3 * i];
        q2[2 * i + 1] = q[3 * i + 1];
    }
    MbdcpFcProblem p2 = {NC, ptr2, ind2, val2, NULL, NULL, NULL, q2, mu, 2};
    for (int m = 0; m < 2; ++m) {
        MbdcpFcInfo info;
        CHECK(solve_with(&p2, methods[m], 1, 1e-12, r2, u2, &info, NULL) == MBDCP_OK && info.status == MBDCP_SOLVED);
        CHECK(mbdcp_fc_residual(&p2, 1, r2, NULL, &res) == MBDCP_OK && res <= 1e-12);
    }
    /* a monitor that stops at once */
    const MbdcpMonitor stop = {stop_at_one, NULL};
    MbdcpFcInfo info;
    CHECK(solve_with(&p, MBDCP_FC_NEWTON, 1, 1e-300, r, u, &info, &stop) == MBDCP_OK && info.status == MBDCP_INTERRUPTED);
}

/* W = 0 and q_n < 0: u = q for every r, no solution; a certificate says so (issue: never SOLVED). */
static void test_no_solution(void)
{
    const int ptr[4] = {0, 0, 0, 0};
    const double q[3] = {-1.0, 0.3, 0.0}, mu[1] = {0.5}, up[3] = {1.0, 0.3, 0.0};
    MbdcpFcProblem p = {1, ptr, NULL, NULL, NULL, NULL, NULL, q, mu, 3};
    const MbdcpFcMethod coulomb[4] = {MBDCP_FC_NSGS, MBDCP_FC_FIXED_POINT, MBDCP_FC_NEWTON, MBDCP_FC_AUTO};
    const MbdcpFcMethod ccp[4] = {MBDCP_FC_PGS, MBDCP_FC_APGD, MBDCP_FC_NEWTON, MBDCP_FC_AUTO};
    double r[3], u[3];
    for (int c = 0; c < 2; ++c)
        for (int m = 0; m < 4; ++m) {
            MbdcpFcInfo info;
            const MbdcpFcMethod method = c ? coulomb[m] : ccp[m];
            if (method == MBDCP_FC_NEWTON || method == MBDCP_FC_AUTO) {
                CHECK(solve_with(&p, method, c, 1e-8, r, u, &info, NULL) == MBDCP_OK);
            } else {
                MbdcpFcSettings s;
                mbdcp_fc_default_settings(&s);
                s.method = method;
                const size_t bytes = mbdcp_fc_workspace_size(&p, &s);
                void *work = malloc(bytes);
                CHECK((c ? mbdcp_coulomb_solve(&p, &s, r, u, &info, work, bytes)
                         : mbdcp_ccp_local_solve(&p, &s, r, u, &info, work, bytes)) == MBDCP_OK);
                free(work);
            }
            CHECK(info.status == MBDCP_RAY_TERMINATION);
            CHECK(info.certificate != MBDCP_FC_NO_CERTIFICATE && info.certificate != MBDCP_FC_DIVERGED);
            /* the residual of r, not one that rounding hid (where long double is extended: valgrind
             * runs it as double) */
            volatile long double one = 1.0L, e = LDBL_EPSILON;
            CHECK(info.residual > 0.5 || one + e == one);
        }
    /* q_n >= 0: r = 0 solves it, at once */
    p.q = up;
    MbdcpFcInfo info;
    CHECK(solve_with(&p, MBDCP_FC_AUTO, 1, 1e-8, r, u, &info, NULL) == MBDCP_OK);
    CHECK(info.status == MBDCP_SOLVED && info.iterations == 0 && r[0] == 0.0 && r[1] == 0.0 && r[2] == 0.0);
}

/* The method list yields the enum in its order, the count and the names. */
static void test_method_names(void)
{
    CHECK(MBDCP_FC_METHOD_COUNT == 6 && MBDCP_FC_NSGS == 0 && MBDCP_FC_AUTO == 5);
    CHECK(strcmp(mbdcp_fc_method_name(MBDCP_FC_FIXED_POINT), "fixed_point") == 0);
    CHECK(mbdcp_fc_method_name(MBDCP_FC_METHOD_COUNT) == NULL);
}

int main(void)
{
    test_method_names();
    test_local_cases();
    test_solvers();
    test_newton_and_auto();
    test_no_solution();
    return report();
}
