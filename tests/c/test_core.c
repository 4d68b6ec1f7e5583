/* Unit tests of the mbdcp C core, built with -fsanitize=address,undefined in CI.
 * Prints one line per failure and a closing "N passed, N failed" line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbdcp/mbdcp.h"
#include "check.h"

/* A monitor that records up to 16 pivots and asks to stop after `stop_after` calls (0: never). */
typedef struct {
    int pairs[32];
    int len, calls, stop_after;
} Trace;

static int record(void *ctx, mbdcp_int it, mbdcp_int entering, mbdcp_int leaving, double value)
{
    Trace *t = (Trace *)ctx;
    (void)it;
    (void)value;
    if (t->len < 16) {
        t->pairs[2 * t->len] = entering;
        t->pairs[2 * t->len + 1] = leaving;
        t->len++;
    }
    t->calls++;
    return t->stop_after > 0 && t->calls >= t->stop_after;
}

/* Solve with an exactly sized heap workspace so that ASan sees any overrun. */
static MbdcpReturn solve(int n, const double *M, const double *q, const int *start, double *z, double *w,
                         int *basis, double *ray, Trace *trace, MbdcpLemkeInfo *info)
{
    MbdcpLemkeSettings s;
    mbdcp_lemke_default_settings(&s);
    if (trace) {
        s.monitor.fn = record;
        s.monitor.ctx = trace;
    }
    size_t bytes = mbdcp_lemke_workspace_size(n);
    void *work = malloc(bytes);
    const MbdcpLemkeOutput out = {z, w, basis, ray};
    MbdcpReturn rc = mbdcp_lemke_solve(n, M, q, &s, start, &out, info, work, bytes);
    free(work);
    return rc;
}

static void test_lemke_small(void)
{
    const double M[4] = {2, 1, 1, 2}, q[2] = {-5, -6};
    double z[2], w[2];
    int basis[2];
    Trace trace = {{0}, 0, 0, 0};
    MbdcpLemkeInfo info;
    CHECK(solve(2, M, q, NULL, z, w, basis, NULL, &trace, &info) == MBDCP_OK);
    CHECK(info.status == MBDCP_SOLVED);
    CHECK(near(z[0], 4.0 / 3.0, 1e-14) && near(z[1], 7.0 / 3.0, 1e-14));
    CHECK(near(w[0], 0, 1e-14) && near(w[1], 0, 1e-14));
    CHECK(info.pivots == 3 && trace.len == 3 && basis[0] == 1 && basis[1] == 1);
    /* z0 enters, w2 leaves; z2 enters, w1 leaves; z1 enters, z0 leaves */
    const int *t = trace.pairs;
    CHECK(t[0] == 4 && t[1] == 1 && t[2] == 3 && t[3] == 0 && t[4] == 2 && t[5] == 4);
    /* warm start from the solution's basis: no pivot */
    CHECK(solve(2, M, q, basis, z, w, NULL, NULL, NULL, &info) == MBDCP_OK);
    CHECK(info.status == MBDCP_SOLVED && info.warm && info.pivots == 0 && near(z[1], 7.0 / 3.0, 1e-14));
    {
        /* a re-solve (new q) after a solve that verified its hint directly: from that basis */
        size_t bytes = mbdcp_lemke_workspace_size(2);
        void *work = malloc(bytes);
        MbdcpLemkeSettings s;
        mbdcp_lemke_default_settings(&s);
        MbdcpLemkeOutput out = {z, w, NULL, NULL};
        CHECK(mbdcp_lemke_solve(2, M, q, &s, basis, &out, &info, work, bytes) == MBDCP_OK && info.pivots == 0);
        const double q2[2] = {-5, 1}; /* z = (2.5, 0) */
        CHECK(mbdcp_lemke_resolve(2, M, q2, &s, &out, &info, work, bytes) == MBDCP_OK);
        CHECK(info.status == MBDCP_SOLVED && near(z[0], 2.5, 1e-14) && z[1] == 0.0 && near(w[1], 3.5, 1e-14));
        free(work);
    }
    /* a wrong hint (only z1 basic) is repaired */
    const int wrong[2] = {1, 0};
    CHECK(solve(2, M, q, wrong, z, w, NULL, NULL, NULL, &info) == MBDCP_OK);
    CHECK(info.status == MBDCP_SOLVED && near(z[0], 4.0 / 3.0, 1e-13) && near(z[1], 7.0 / 3.0, 1e-13));
    /* the monitor can stop the solve */
    Trace stop = {{0}, 0, 0, 2};
    CHECK(solve(2, M, q, NULL, z, w, NULL, NULL, &stop, &info) == MBDCP_OK);
    CHECK(info.status == MBDCP_INTERRUPTED && info.pivots == 2);
}

static void test_lemke_ray_and_trivial(void)
{
    const double M1[1] = {-1}, q1[1] = {-1};
    double z[3], w[3], ray[3];
    MbdcpLemkeInfo info;
    CHECK(solve(1, M1, q1, NULL, z, w, NULL, ray, NULL, &info) == MBDCP_OK);
    CHECK(info.status == MBDCP_RAY_TERMINATION && info.certified && ray[0] > 0); /* -z - 1 >= 0 is infeasible */
    const double M3[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, q3[3] = {0, 1, 2};
    CHECK(solve(3, M3, q3, NULL, z, w, NULL, NULL, NULL, &info) == MBDCP_OK);
    CHECK(info.status == MBDCP_SOLVED && info.pivots == 0 && z[0] == 0 && w[2] == 2);
    CHECK(solve(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &info) == MBDCP_OK && info.status == MBDCP_SOLVED);
    /* a finite LCP whose ratio test underflows (1e-130 / 1e200) neither crashes nor claims success */
    const double Mb[1] = {1e200}, qb[1] = {-1e-130};
    CHECK(solve(1, Mb, qb, NULL, z, w, NULL, NULL, NULL, &info) == MBDCP_OK && info.status != MBDCP_SOLVED);
    /* scale: 1e-11 I with q = (-1, -2, -3) has the solution (1, 2, 3) 1e11 */
    const double Ms[9] = {1e-11, 0, 0, 0, 1e-11, 0, 0, 0, 1e-11}, qs[3] = {-1, -2, -3};
    CHECK(solve(3, Ms, qs, NULL, z, w, NULL, NULL, NULL, &info) == MBDCP_OK && info.status == MBDCP_SOLVED);
    CHECK(near(z[0], 1e11, 1e-3) && near(z[2], 3e11, 1e-3));
}

static void test_lemke_limit_and_errors(void)
{
    /* Murty's exponential example, n = 3: 2^3 pivots; limit it to 4. */
    const double M[9] = {1, 0, 0, 2, 1, 0, 2, 2, 1}, q[3] = {-1, -1, -1};
    double z[3], w[3];
    MbdcpLemkeInfo info;
    MbdcpLemkeSettings s;
    mbdcp_lemke_default_settings(&s);
    size_t bytes = mbdcp_lemke_workspace_size(3);
    void *work = malloc(bytes);
    const MbdcpLemkeOutput out = {z, w, NULL, NULL};
    CHECK(mbdcp_lemke_solve(3, M, q, &s, NULL, &out, &info, work, bytes) == MBDCP_OK);
    CHECK(info.status == MBDCP_SOLVED && info.pivots == 8);
    s.max_pivots = 4;
    CHECK(mbdcp_lemke_solve(3, M, q, &s, NULL, &out, &info, work, bytes) == MBDCP_OK);
    CHECK(info.status == MBDCP_MAX_ITERATIONS && info.pivots == 4);
    CHECK(mbdcp_lemke_solve(3, M, q, &s, NULL, &out, &info, work, bytes - 64) == MBDCP_ERR_WORKSPACE);
    const char *msg = NULL;
    s.tol = -1;
    CHECK(mbdcp_lemke_check_settings(&s, &msg) == MBDCP_ERR_SETTING && msg && strstr(msg, "tol"));
    CHECK(mbdcp_lemke_solve(3, M, q, &s, NULL, &out, &info, work, bytes) == MBDCP_ERR_SETTING);
    mbdcp_lemke_default_settings(&s);
    CHECK(mbdcp_lemke_solve(3, NULL, q, &s, NULL, &out, &info, work, bytes) == MBDCP_ERR_NULL);
    const double bad[3] = {-1, NAN, 0};
    CHECK(mbdcp_lemke_solve(3, M, bad, &s, NULL, &out, &info, work, bytes) == MBDCP_ERR_NONFINITE);
    free(work);
    CHECK(strlen(mbdcp_status_message(MBDCP_RAY_TERMINATION)) > 0);
    CHECK(strcmp(mbdcp_return_message((MbdcpReturn)99), "unknown return code") == 0);
}

static void test_dense(void)
{
    double A[9] = {4, 2, 2, 2, 5, 3, 2, 3, 6};
    CHECK(mbdcp_cholesky(3, A, 1e-14) == MBDCP_OK);
    CHECK(near(A[0], 2, 1e-15) && near(A[3], 1, 1e-15) && near(A[4], 2, 1e-15) && A[1] == 0.0);
    double b[3] = {4, 2, 2}; /* L x = b then L^T y = x gives A^-1 b = e1 */
    mbdcp_trsv_lower(3, A, 0, b);
    mbdcp_trsv_lower(3, A, 1, b);
    CHECK(near(b[0], 1, 1e-14) && near(b[1], 0, 1e-14) && near(b[2], 0, 1e-14));
    double N[4] = {1, 2, 2, 1};
    CHECK(mbdcp_cholesky(2, N, 1e-14) == MBDCP_ERR_NOT_POSDEF);
    const double X[6] = {1, 2, 3, 4, 5, 6};
    double G[4];
    mbdcp_gram(3, 2, X, G);
    CHECK(G[0] == 35 && G[1] == 44 && G[2] == 44 && G[3] == 56);
    const double inf[2] = {1, INFINITY};
    CHECK(!mbdcp_all_finite(2, inf) && mbdcp_all_finite(1, inf));
    /* LU with partial pivoting: a zero leading entry needs the row swap */
    double B[9] = {0, 2, 1, 1, 1, 1, 2, 1, 3}, x[3] = {3, 3, 6}; /* B (1, 1, 1) = (3, 3, 6) */
    int piv[3];
    CHECK(mbdcp_lu_solve(3, B, piv, x, 1e-14) == MBDCP_OK);
    CHECK(near(x[0], 1, 1e-14) && near(x[1], 1, 1e-14) && near(x[2], 1, 1e-14));
    double S[4] = {1, 2, 2, 4}, y[2] = {1, 2};
    CHECK(mbdcp_lu_solve(2, S, piv, y, 1e-14) == MBDCP_ERR_RANK_DEFICIENT);
    CHECK(mbdcp_lu_solve(0, NULL, NULL, NULL, 1e-14) == MBDCP_OK);
}

static MbdcpStepProblem sphere(double *M, double *Wn, double *D, double *E, double *mu, double *v,
                               double *p_ext, double *psi)
{
    memset(M, 0, 36 * sizeof(double));
    for (int i = 0; i < 6; ++i) M[i * 7] = i < 3 ? 1.0 : 0.4;
    memset(Wn, 0, 6 * sizeof(double));
    Wn[2] = 1;
    const double Dv[24] = {1, -1, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 0, 0, 1, -1, -1, 1, 0, 0, 0, 0, 0, 0};
    memcpy(D, Dv, sizeof Dv);
    for (int i = 0; i < 4; ++i) E[i] = 1;
    mu[0] = 0.2;
    memset(v, 0, 6 * sizeof(double));
    v[0] = 2;
    memset(p_ext, 0, 6 * sizeof(double));
    p_ext[2] = -9.81 * 0.12;
    psi[0] = 0;
    const MbdcpStepProblem p = {.n_v = 6, .n_c = 1, .m = 4, .h = 0.12, .M = M, .Wn = Wn, .D = D, .E = E, .mu = mu,
                                .v = v, .p_ext = p_ext, .psi_n = psi};
    return p;
}

/* Each row of a step's LCP is judged at the scale of the terms that formed it: Trinkle's sphere
 * with 8 directions from cos and sin (cos(pi/2) = 6e-17), fed its own v_next for 25 steps, slides
 * and then rolls at 5/7 v0, every step SOLVED (22 of 25 ended NUMERICAL_ERROR when a friction
 * row's 1e-16 was judged at its own scale). */
static void test_step_rolling_rounding(void)
{
    double M[36] = {0}, Wn[6] = {0, 0, 1, 0, 0, 0}, D[48], E[8], mu[1] = {0.2}, v[6] = {2, 0, 0, 0, 0, 0};
    double p_ext[6] = {0, 0, -9.81 * 0.12, 0, 0, 0}, psi[1] = {0};
    for (int i = 0; i < 6; ++i) M[i * 7] = i < 3 ? 1.0 : 0.4;
    for (int j = 0; j < 8; ++j) { /* direction t = (cos, sin, 0) at the point (0, 0, -1): r x t = (sin, -cos, 0) */
        const double a = 2.0 * 3.141592653589793 * j / 8.0, c = cos(a), sn = sin(a);
        const double col[6] = {c, sn, 0, sn, -c, 0};
        for (int i = 0; i < 6; ++i) D[i * 8 + j] = col[i];
        E[j] = 1;
    }
    const MbdcpStepProblem p = {.n_v = 6, .n_c = 1, .m = 8, .h = 0.12, .M = M, .Wn = Wn, .D = D, .E = E, .mu = mu,
                                .v = v, .p_ext = p_ext, .psi_n = psi};
    double v_next[6], z[10], w[10];
    MbdcpStepOutput out = {v_next, NULL, z, w, NULL, NULL, NULL};
    MbdcpLemkeSettings s;
    MbdcpLemkeInfo info;
    mbdcp_lemke_default_settings(&s);
    const size_t bytes = mbdcp_step_workspace_size(&p);
    void *work = malloc(bytes);
    int solved = 0;
    for (int k = 0; k < 25; ++k) {
        CHECK(mbdcp_step_solve(&p, &s, NULL, &out, &info, work, bytes) == MBDCP_OK);
        solved += info.status == MBDCP_SOLVED;
        memcpy(v, v_next, sizeof v);
    }
    CHECK(solved == 25);
    CHECK(near(v[0], 2.0 * 5.0 / 7.0, 1e-12) && near(v[4], v[0], 1e-12)); /* rolling: v = omega r */
    free(work);
    /* the rule itself: q_2 = -1e-16 fails at its own scale, passes at a scale of 1 */
    const double I2[4] = {1, 0, 0, 1}, q[2] = {0, -1e-16}, qmag[2] = {0, 1}, z0[2] = {0, 0};
    double w2[2], s2[2];
    CHECK(!mbdcp_lcp_verify(2, I2, q, z0, 1e-9, w2, s2));
    CHECK(mbdcp_lcp_verify_scaled(2, I2, q, qmag, z0, 1e-9, w2, s2) && s2[1] == 1.0);
}

static void test_step_sphere(void)
{
    double M[36], Wn[6], D[24], E[4], mu[1], v[6], p_ext[6], psi[1];
    MbdcpStepProblem p = sphere(M, Wn, D, E, mu, v, p_ext, psi);
    CHECK(mbdcp_step_lcp_size(&p) == 6);
    double v_next[6], z[6], w[6], F[36], f[6];
    MbdcpStepOutput out = {v_next, NULL, z, w, F, f, NULL};
    MbdcpLemkeSettings s;
    MbdcpLemkeInfo info;
    mbdcp_lemke_default_settings(&s);
    size_t bytes = mbdcp_step_workspace_size(&p);
    void *work = malloc(bytes);
    CHECK(mbdcp_step_solve(&p, &s, NULL, &out, &info, work, bytes) == MBDCP_OK);
    CHECK(info.status == MBDCP_SOLVED);
    CHECK(near(F[0], 1, 1e-14) && near(F[7], 3.5, 1e-14) && near(F[11], 1, 1e-14) && near(F[30], 0.2, 1e-14));
    CHECK(near(f[0], -9.81 * 0.12, 1e-14) && near(f[1], 2, 1e-14));
    /* sliding: v_x = 2 - mu g h, w_y = 2.5 mu g h */
    CHECK(near(v_next[0], 2 - 0.2 * 9.81 * 0.12, 1e-13) && near(v_next[4], 2.5 * 0.2 * 9.81 * 0.12, 1e-13));
    CHECK(near(z[0], 9.81 * 0.12, 1e-13));
    /* errors: not SPD, rank-deficient joints, small workspace */
    CHECK(mbdcp_step_solve(&p, &s, NULL, &out, &info, work, bytes - 8) == MBDCP_ERR_WORKSPACE);
    M[35] = -1;
    CHECK(mbdcp_step_solve(&p, &s, NULL, &out, &info, work, bytes) == MBDCP_ERR_NOT_POSDEF);
    M[35] = 0.4;
    /* the data's form: mu >= 0, E with one 1 per row */
    mu[0] = -0.1;
    CHECK(mbdcp_step_solve(&p, &s, NULL, &out, &info, work, bytes) == MBDCP_ERR_DATA);
    mu[0] = 0.2;
    E[1] = 2.0;
    CHECK(mbdcp_step_solve(&p, &s, NULL, &out, &info, work, bytes) == MBDCP_ERR_DATA);
    E[1] = 1.0;
    CHECK(mbdcp_step_solve(&p, &s, NULL, &out, &info, work, bytes) == MBDCP_OK && info.status == MBDCP_SOLVED);
    CHECK(mbdcp_grouping_error(2, 2, (const double[]){0, 1, 1, 0}) == 2 && mbdcp_grouping_error(1, 2, (const double[]){1, 1}) == 1);
    free(work);
    double Wb[12] = {0};
    Wb[2 * 2] = 1;
    Wb[2 * 2 + 1] = 2; /* two copies of the same joint row (z direction): dependent */
    p.n_b = 2;
    p.Wb = Wb;
    double p_b[2];
    out.p_b = p_b;
    bytes = mbdcp_step_workspace_size(&p);
    work = malloc(bytes);
    CHECK(mbdcp_step_solve(&p, &s, NULL, &out, &info, work, bytes) == MBDCP_ERR_RANK_DEFICIENT);
    free(work);
    p.h = 0;
    CHECK(mbdcp_step_problem_check(&p) == MBDCP_ERR_SETTING);
}

/* mbdcp_step_solve without a warm start, in an exactly sized heap workspace (freed). */
static MbdcpReturn solve_step(const MbdcpStepProblem *p, const MbdcpLemkeSettings *s, MbdcpStepOutput *out,
                              MbdcpLemkeInfo *info)
{
    const size_t bytes = mbdcp_step_workspace_size(p);
    void *work = malloc(bytes);
    const MbdcpReturn rc = work ? mbdcp_step_solve(p, s, NULL, out, info, work, bytes) : MBDCP_ERR_NULL;
    free(work);
    return rc;
}

/* The reverse mode of the sliding sphere's step (Trinkle (2003), section 4): v_x = v0 - mu g h and
 * w_y = 2.5 mu g h / r, so d v_x / d mu = -g h, d w_y / d mu = 2.5 g h (r = 1), d v_x / d v0 = 1;
 * without gravity the contact grazes (p_n = w_n = 0): left to the full derivative. */
static void test_step_vjp_sphere(void)
{
    double M[36], Wn[6], D[24], E[4], mu[1], v[6], p_ext[6], psi[1];
    const MbdcpStepProblem p = sphere(M, Wn, D, E, mu, v, p_ext, psi);
    double v_next[6], z[6], w[6];
    MbdcpStepOutput out = {v_next, NULL, z, w, NULL, NULL, NULL};
    MbdcpLemkeSettings s;
    MbdcpLemkeInfo info;
    mbdcp_lemke_default_settings(&s);
    CHECK(solve_step(&p, &s, &out, &info) == MBDCP_OK && info.status == MBDCP_SOLVED);
    MbdcpStepProblem q = p;
    MbdcpStepVectors x = {v_next, z, z + 1, z + 5};
    MbdcpStepVjpSettings set;
    CHECK(mbdcp_step_vjp_default_settings(&set) == MBDCP_OK && set.degenerate_tol == MBDCP_DEGENERATE_TOL);
    CHECK(mbdcp_step_vjp_default_settings(NULL) == MBDCP_ERR_NULL);
    set.geometry = 1;
    double gv[6] = {1, 0, 0, 0, 0, 0}, gM[36], gWn[6], gD[24], g_v[6], g_p[6], g_mu[1], g_psi[1];
    const MbdcpStepVectors c = {gv, NULL, NULL, NULL};
    MbdcpStepGradients g = {gM, gWn, gD, g_v, g_p, g_mu, g_psi, 0.0};
    MbdcpStepVjpOutcome outcome;
    const size_t bytes = mbdcp_step_vjp_workspace_size(6, 1, 4);
    void *work = malloc(bytes);
    const double gh = 9.81 * 0.12;
    CHECK(mbdcp_step_vjp(&q, &x, &c, &set, &g, &outcome, work, bytes) == MBDCP_OK && outcome == MBDCP_VJP_DECIDED);
    CHECK(near(g_mu[0], -gh, 1e-13) && near(g_v[0], 1, 1e-13) && near(g_p[0], 1, 1e-13) && near(g_p[2], 0.2, 1e-13));
    gv[0] = 0;
    gv[4] = 1;
    CHECK(mbdcp_step_vjp(&q, &x, &c, &set, &g, &outcome, work, bytes) == MBDCP_OK && outcome == MBDCP_VJP_DECIDED);
    CHECK(near(g_mu[0], 2.5 * gh, 1e-13));
    /* at rest the contact sticks and drops the directions opposite to those it keeps: dependent on
     * its own directions only, so decided even with the gradients in the geometry wanted */
    v[0] = 0.0;
    CHECK(solve_step(&p, &s, &out, &info) == MBDCP_OK && info.status == MBDCP_SOLVED && near(v_next[0], 0, 1e-15));
    CHECK(mbdcp_step_vjp(&q, &x, &c, &set, &g, &outcome, work, bytes) == MBDCP_OK && outcome == MBDCP_VJP_DECIDED);
    v[0] = 2.0;
    CHECK(solve_step(&p, &s, &out, &info) == MBDCP_OK);
    /* errors: workspace, NULLs, the step's own (checked as mbdcp_step_solve checks it), not plain */
    CHECK(mbdcp_step_vjp(&q, &x, &c, &set, &g, &outcome, work, bytes - 8) == MBDCP_ERR_WORKSPACE);
    CHECK(mbdcp_step_vjp(&q, &x, &c, NULL, &g, &outcome, work, bytes) == MBDCP_ERR_NULL);
    E[1] = 2.0;
    CHECK(mbdcp_step_vjp(&q, &x, &c, &set, &g, &outcome, work, bytes) == MBDCP_ERR_DATA);
    E[1] = 1.0;
    const double dpsi[1] = {0.0};
    q.dpsi_n = dpsi;
    CHECK(mbdcp_step_vjp(&q, &x, &c, &set, &g, &outcome, work, bytes) == MBDCP_ERR_DATA);
    q.dpsi_n = NULL;
    /* no gravity: the sphere skims the plane, p_n = w_n = 0 */
    const double rest[6] = {2, 0, 0, 0, 0, 0}, none[6] = {0};
    x = (MbdcpStepVectors){rest, none, none, none};
    q.p_ext = NULL;
    CHECK(mbdcp_step_vjp(&q, &x, &c, &set, &g, &outcome, work, bytes) == MBDCP_OK && outcome == MBDCP_VJP_DEGENERATE);
    free(work);
}

/* The profile Cholesky factor of a block-diagonal matrix is the dense one, bit for bit. */
static void test_cholesky_profile(void)
{
    double A[25] = {0}, B[25];
    const double blocks[2][4] = {{4, 1, 1, 3}, {2, 0.5, 0.5, 5}};
    for (int b = 0; b < 2; ++b)
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) A[(2 * b + i) * 5 + 2 * b + j] = blocks[b][2 * i + j];
    A[24] = 7;
    memcpy(B, A, sizeof A);
    mbdcp_int first[5];
    CHECK(mbdcp_cholesky(5, A, 0.0) == MBDCP_OK && mbdcp_cholesky_profile(5, B, 0.0, first) == MBDCP_OK);
    CHECK(memcmp(A, B, sizeof A) == 0);
    CHECK(first[0] == 0 && first[1] == 0 && first[2] == 2 && first[3] == 2 && first[4] == 4);
}

static void test_step_joint(void)
{
    /* A particle on the wire y = 0: v_next = (1, 0), p_b = m g h. */
    double M[4] = {2, 0, 0, 2}, v[2] = {1, 0}, p_ext[2] = {0, -2 * 9.81 * 0.01}, Wb[2] = {0, 1};
    const MbdcpStepProblem p = {.n_v = 2, .n_b = 1, .h = 0.01, .M = M, .v = v, .p_ext = p_ext, .Wb = Wb};
    double v_next[2], p_b[1];
    MbdcpStepOutput out = {v_next, p_b, NULL, NULL, NULL, NULL, NULL};
    MbdcpLemkeSettings s;
    mbdcp_lemke_default_settings(&s);
    MbdcpLemkeInfo info;
    CHECK(solve_step(&p, &s, &out, &info) == MBDCP_OK);
    CHECK(near(v_next[0], 1, 1e-15) && near(v_next[1], 0, 1e-15) && near(p_b[0], 2 * 9.81 * 0.01, 1e-15));
}

static void test_relax_block(void)
{
    /* A planar particle sliding at 1 (mu = 0.1, h = 0.1, g = 9.81). */
    double M[4] = {1, 0, 0, 1}, Wn[2] = {0, 1}, D[4] = {1, -1, 0, 0}, E[2] = {1, 1}, mu[1] = {0.1};
    double v[2] = {1, 0}, p_ext[2] = {0, -0.981}, psi[1] = {0};
    const MbdcpStepProblem p = {.n_v = 2, .n_c = 1, .m = 2, .h = 0.1, .M = M, .Wn = Wn, .D = D, .E = E, .mu = mu,
                                .v = v, .p_ext = p_ext, .psi_n = psi};
    size_t bytes = mbdcp_relax_workspace_size(&p);
    void *work = malloc(bytes);
    double v_next[2], z[4], w[4], gamma[1] = {0}, lam[1];
    MbdcpStepOutput out = {v_next, NULL, z, w, NULL, NULL, NULL};
    MbdcpLemkeSettings s;
    MbdcpLemkeInfo li;
    mbdcp_lemke_default_settings(&s);
    /* P1(0): lifts off at mu times the sliding speed, v_t = (1 - mu g h) / (1 + mu^2) */
    CHECK(mbdcp_relax_p1(&p, gamma, &s, &out, &li, work, bytes) == MBDCP_OK && li.status == MBDCP_SOLVED);
    CHECK(near(v_next[0], 0.9019 / 1.01, 1e-12) && near(v_next[1], 0.1 * v_next[0], 1e-12));
    CHECK(mbdcp_sliding_speed(2, 1, 2, D, E, v_next, lam) == MBDCP_OK && near(lam[0], 0.9019 / 1.01, 1e-12));
    /* P2(lam): the sliding speed is held, non-penetration exact */
    CHECK(mbdcp_relax_p2(&p, lam, &s, &out, &li, work, bytes) == MBDCP_OK && near(v_next[1], 0, 1e-14));
    lam[0] = -1;
    CHECK(mbdcp_relax_p2(&p, lam, &s, &out, &li, work, bytes) == MBDCP_ERR_DATA);
    /* Algorithm 2 converges to the LCP velocity 1 - mu g h */
    MbdcpFixedPointSettings fs;
    mbdcp_fixed_point_default_settings(&fs);
    double p_n[1], beta[2];
    MbdcpFixedPointOutput fo = {v_next, NULL, p_n, beta, lam, NULL, NULL};
    MbdcpFixedPointInfo fi;
    CHECK(mbdcp_fixed_point(&p, &fs, &fo, &fi, work, bytes) == MBDCP_OK);
    CHECK(fi.status == MBDCP_SOLVED && fi.converged && near(v_next[0], 0.9019, 1e-12) && near(p_n[0], 0.981, 1e-12));
    /* warm-started from its own final bases: the same answer without a pivot */
    int b1[4], b2[3];
    MbdcpFixedPointOutput fw = {v_next, NULL, p_n, beta, lam, b1, b2};
    CHECK(mbdcp_fixed_point(&p, &fs, &fw, &fi, work, bytes) == MBDCP_OK && fi.status == MBDCP_SOLVED);
    CHECK(mbdcp_fixed_point_warm(&p, &fs, b1, b2, &fw, &fi, work, bytes) == MBDCP_OK);
    CHECK(fi.status == MBDCP_SOLVED && fi.pivots == 0 && near(v_next[0], 0.9019, 1e-12));
    fs.max_iter = 1;
    fs.algorithm = 1;
    CHECK(mbdcp_fixed_point(&p, &fs, &fo, &fi, work, bytes) == MBDCP_OK && fi.status == MBDCP_MAX_ITERATIONS);
    fs.algorithm = 7;
    CHECK(mbdcp_fixed_point(&p, &fs, &fo, &fi, work, bytes) == MBDCP_ERR_SETTING);
    CHECK(mbdcp_fixed_point(&p, &fs, &fo, &fi, work, bytes - 8) == MBDCP_ERR_SETTING);
    fs.algorithm = 2;
    CHECK(mbdcp_fixed_point(&p, &fs, &fo, &fi, work, bytes - 8) == MBDCP_ERR_WORKSPACE);
    free(work);
}

static void test_sparse_step(void)
{
    /* test_relax_block's sliding particle in compressed storage: the same answers */
    double M[4] = {1, 0.5, 0.5, 1}, Wn[2] = {0, 1}, D[4] = {1, -1, 0, 0}, E[2] = {1, 1}, mu[1] = {0.1};
    double v[2] = {1, 0}, p_ext[2] = {0, -0.981}, psi[1] = {0};
    MbdcpStepProblem p = {.n_v = 2, .n_c = 1, .m = 2, .h = 0.1, .M = M, .Wn = Wn, .D = D, .E = E, .mu = mu,
                          .v = v, .p_ext = p_ext, .psi_n = psi};
    int nnz_m = 0, Wp[4], Mp[3], Mi[3], Wi[4], contact[2];
    double Mx[3], Wx[4];
    CHECK(mbdcp_sparse_step_count(&p, &nnz_m, Wp) == MBDCP_OK && nnz_m == 3 && Wp[0] == 0 && Wp[3] == 3);
    CHECK(mbdcp_sparse_step_fill(&p, nnz_m, Mp, Mi, Mx, Wp, Wi, Wx, contact) == MBDCP_OK);
    CHECK(Mp[1] == 1 && Mp[2] == 3 && Mi[1] == 0 && Mi[2] == 1 && Mx[1] == 0.5 && Wp[1] == 1 && Wp[2] == 2);
    CHECK(Wi[0] == 1 && Wi[1] == 0 && Wx[2] == -1 && contact[0] == 0 && contact[1] == 0);
    /* more entries than counted (the data changed since the count): refused, nothing written beyond */
    CHECK(mbdcp_sparse_step_fill(&p, 2, Mp, Mi, Mx, Wp, Wi, Wx, contact) == MBDCP_ERR_DIMENSION);
    M[1] = M[2] = 0; /* M = I: test_relax_block's answers */
    CHECK(mbdcp_sparse_step_count(&p, &nnz_m, Wp) == MBDCP_OK && nnz_m == 2);
    CHECK(mbdcp_sparse_step_fill(&p, nnz_m, Mp, Mi, Mx, Wp, Wi, Wx, contact) == MBDCP_OK);
    MbdcpSparseStep q = {.n_v = 2, .n_c = 1, .m = 2, .h = 0.1, .Mp = Mp, .Mi = Mi, .Mx = Mx, .Wp = Wp, .Wi = Wi,
                         .Wx = Wx, .contact = contact, .mu = mu, .v = v, .p_ext = p_ext, .psi_n = psi};
    CHECK(mbdcp_sparse_step_check(&q) == MBDCP_OK);
    int perm_m[2], perm_k[6];
    MbdcpRelaxSparseOrder ord = {.perm_m = perm_m, .perm_k = perm_k};
    size_t abytes = mbdcp_relax_sparse_analyze_workspace_size(&q);
    void *awork = malloc(abytes);
    CHECK(mbdcp_relax_sparse_analyze(&q, &ord, awork, abytes) == MBDCP_OK);
    size_t bytes = mbdcp_fixed_point_sparse_workspace_size(&q, &ord);
    void *work = malloc(bytes);
    MbdcpFixedPointSettings fs;
    mbdcp_fixed_point_default_settings(&fs);
    double v_next[2], p_n[1], beta[2], lam[1];
    MbdcpFixedPointOutput fo = {v_next, NULL, p_n, beta, lam, NULL, NULL};
    MbdcpFixedPointInfo fi;
    CHECK(mbdcp_fixed_point_sparse(&q, &fs, &ord, NULL, NULL, &fo, &fi, work, bytes) == MBDCP_OK);
    CHECK(fi.status == MBDCP_SOLVED && fi.converged && near(v_next[0], 0.9019, 1e-12) && near(p_n[0], 0.981, 1e-12));
    /* malformed data are refused before use */
    Mi[1] = 0; /* row 1 no longer ends with its diagonal */
    CHECK(mbdcp_sparse_step_check(&q) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_fixed_point_sparse(&q, &fs, &ord, NULL, NULL, &fo, &fi, work, bytes) == MBDCP_ERR_DIMENSION);
    Mi[1] = 1;
    Wi[0] = 2;
    CHECK(mbdcp_sparse_step_check(&q) == MBDCP_ERR_DIMENSION);
    Wi[0] = 1;
    contact[1] = 1;
    CHECK(mbdcp_sparse_step_check(&q) == MBDCP_ERR_DIMENSION);
    contact[1] = 0;
    Wx[0] = NAN;
    CHECK(mbdcp_sparse_step_check(&q) == MBDCP_ERR_NONFINITE);
    Wx[0] = 1;
    mu[0] = -0.1;
    CHECK(mbdcp_sparse_step_check(&q) == MBDCP_ERR_DATA);
    mu[0] = 0.1;
    q.h = 0;
    CHECK(mbdcp_sparse_step_check(&q) == MBDCP_ERR_SETTING);
    p.n_b = 1; /* joints: not this formulation */
    CHECK(mbdcp_sparse_step_count(&p, &nnz_m, Wp) == MBDCP_ERR_DIMENSION);
    free(awork);
    free(work);
}

static void test_full_rank_incline(void)
{
    /* A unit particle on a 30 degree incline, mu = 0.3: slides with h g (sin - mu cos). */
    const double th = 3.14159265358979323846 / 6, h = 0.01, g = 9.81, mu[1] = {0.3};
    double M[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, v[3] = {0, 0, 0}, p_ext[3] = {0, 0, -g * h};
    double Wn[3] = {-sin(th), 0, cos(th)};
    double Wt[6] = {cos(th), 0, 0, 1, sin(th), 0}; /* columns u (up the slope) and w */
    MbdcpFullRankProblem p = {3, 1, 2, h, M, Wn, Wt, mu, v, p_ext, NULL, 0.0, 0.0};
    const int N = mbdcp_full_rank_lcp_size(&p);
    CHECK(N == 5);
    double v_next[3], p_t[2], z[5], w[5];
    MbdcpFullRankOutput out = {v_next, p_t, z, w, NULL, NULL, 0.0, 0.0};
    MbdcpLemkeSettings s;
    MbdcpLemkeInfo info;
    mbdcp_lemke_default_settings(&s);
    size_t bytes = mbdcp_full_rank_workspace_size(&p);
    void *work = malloc(bytes);
    CHECK(mbdcp_full_rank_step(&p, &s, &out, &info, work, bytes) == MBDCP_OK && info.status == MBDCP_SOLVED);
    const double speed = h * g * (sin(th) - 0.3 * cos(th));
    CHECK(near(v_next[0], -speed * cos(th), 1e-14) && near(v_next[2], -speed * sin(th), 1e-14));
    CHECK(out.rho_used > 0 && z[1] == 0.0 && z[3] > 0.0); /* kappa_minus along u: sliding down */
    Wt[1] = 0; /* w := 0: rank deficient */
    Wt[3] = 0;
    CHECK(mbdcp_full_rank_step(&p, &s, &out, &info, work, bytes) == MBDCP_ERR_RANK_DEFICIENT);
    p.compliance = -1.0; /* automatic: a compliant tangential relation, the same sliding motion */
    CHECK(mbdcp_full_rank_step(&p, &s, &out, &info, work, bytes) == MBDCP_OK && info.status == MBDCP_SOLVED);
    CHECK(out.compliance_used > 0.0 && near(v_next[0], -speed * cos(th), 1e-9) && near(v_next[2], -speed * sin(th), 1e-9));
    p.compliance = NAN;
    CHECK(mbdcp_full_rank_step(&p, &s, &out, &info, work, bytes) == MBDCP_ERR_SETTING);
    free(work);
}

static void test_ccp_particle(void)
{
    double g[3] = {1, 2, 0};
    mbdcp_cone_project(0.5, g);
    CHECK(near(g[0], 1.6, 1e-15) && near(g[1], 0.8, 1e-15));
    double h0[3] = {-1, 0, 0};
    mbdcp_cone_project(0.0, h0);
    CHECK(h0[0] == 0.0);
    /* found by the fuzzer: mu = 0 with an infinite tangential part kept a negative normal, and a
     * subnormal mu made the tangential scale factor itself subnormal (lost precision) */
    double h1[3] = {-8e268, INFINITY, 0};
    mbdcp_cone_project(0.0, h1);
    CHECK(h1[0] == 0.0 && h1[1] == 0.0 && h1[2] == 0.0);
    double h2[3] = {1e300, 1e300, 1e300};
    mbdcp_cone_project(4.9406564584124654e-324, h2);
    CHECK(h2[0] > 0.0 && hypot(h2[1], h2[2]) <= 4.9406564584124654e-324 * h2[0] * (1 + 1e-12));
    /* unit particle sliding at 1 on the floor, mu = 0.5: v_z = mu v_x after the step */
    const int colptr[4] = {0, 1, 2, 3}, rowind[3] = {2, 0, 1};
    const double val[3] = {1, 1, 1}, mu[1] = {0.5};
    const double pvec[3] = {-0.0981, 1.0, 0.0}; /* P^T (v + M^-1 p_ext) */
    MbdcpCcpProblem p = {3, 1, 0, colptr, rowind, val, colptr, rowind, val, mu, pvec, NULL, NULL, NULL};
    const MbdcpCcpMethod methods[3] = {MBDCP_CCP_APGD, MBDCP_CCP_PJACOBI, MBDCP_CCP_PGS};
    size_t bytes = mbdcp_ccp_workspace_size(&p);
    void *work = malloc(bytes);
    for (int m = 0; m < 3; ++m) {
        MbdcpCcpSettings s;
        mbdcp_ccp_default_settings(&s);
        s.method = methods[m];
        s.tol = 1e-12;
        double nu[3], u[3];
        MbdcpCcpInfo info;
        CHECK(mbdcp_ccp_solve(&p, &s, nu, u, &info, work, bytes) == MBDCP_OK && info.status == MBDCP_SOLVED);
        const double gn = (0.5 + 0.0981) / 1.25;
        CHECK(near(nu[0], gn, 1e-10) && near(nu[1], -0.5 * gn, 1e-10) && near(u[2], nu[0], 1e-15));
    }
    MbdcpCcpSettings s;
    mbdcp_ccp_default_settings(&s);
    s.max_iter = 0;
    double nu[3], u[3];
    MbdcpCcpInfo info;
    CHECK(mbdcp_ccp_solve(&p, &s, nu, u, &info, work, bytes) == MBDCP_ERR_SETTING);
    s.max_iter = 10;
    CHECK(mbdcp_ccp_solve(&p, &s, nu, u, &info, work, bytes - 8) == MBDCP_ERR_WORKSPACE);
    /* no contact: solved at once, every field of the info set */
    MbdcpCcpProblem empty = {3, 0, 0, colptr, NULL, NULL, colptr, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    memset(&info, 0x5a, sizeof info);
    CHECK(mbdcp_ccp_solve(&empty, &s, nu, u, &info, work, bytes) == MBDCP_OK && info.status == MBDCP_SOLVED);
    CHECK(info.iterations == 0 && info.residual == 0.0 && info.lipschitz == 0.0 && info.polished == 0);
    free(work);
}

/* A batch gives, instance by instance, what single solves give (the same bits), with statuses
 * per instance, a shared matrix (stride 0), and an error naming its instance. */
static void test_batch(void)
{
    const double M[3][4] = {{2, 1, 1, 2}, {-1, 0, 0, -1}, {1, 0, 0, 1}}; /* PD, ray (infeasible q), identity */
    const double q[3][2] = {{-5, -6}, {-1, -1}, {-1, 2}};
    double z[6], w[6];
    int basis[6], status[3], pivots[3];
    double residual[3];
    const MbdcpLemkeBatchOutput out = {z, w, basis, status, pivots, residual};
    MbdcpLemkeSettings s;
    mbdcp_lemke_default_settings(&s);
    size_t bytes = mbdcp_lemke_workspace_size(2);
    void *work = malloc(bytes);
    int failed = 7;
    CHECK(mbdcp_lemke_batch(3, 2, &M[0][0], 4, &q[0][0], &s, &out, &failed, work, bytes) == MBDCP_OK && failed == -1);
    CHECK(status[0] == MBDCP_SOLVED && status[1] == MBDCP_RAY_TERMINATION && status[2] == MBDCP_SOLVED);
    for (int i = 0; i < 3; ++i) {
        double z1[2], w1[2];
        int b1[2];
        MbdcpLemkeInfo info;
        CHECK(solve(2, M[i], q[i], NULL, z1, w1, b1, NULL, NULL, &info) == MBDCP_OK);
        CHECK(memcmp(z1, z + 2 * i, sizeof z1) == 0 && memcmp(w1, w + 2 * i, sizeof w1) == 0);
        CHECK(b1[0] == basis[2 * i] && b1[1] == basis[2 * i + 1] && (int)info.status == status[i]);
        CHECK(info.pivots == pivots[i] && info.residual == residual[i]);
    }
    /* one matrix shared by all: the first instance's */
    CHECK(mbdcp_lemke_batch(3, 2, &M[0][0], 0, &q[0][0], &s, &out, &failed, work, bytes) == MBDCP_OK);
    CHECK(status[0] == MBDCP_SOLVED && status[1] == MBDCP_SOLVED && near(z[2], 1.0 / 3.0, 1e-14));
    /* a non-finite q in instance 1 */
    double qbad[6] = {-5, -6, NAN, 0, 1, 1};
    CHECK(mbdcp_lemke_batch(3, 2, &M[0][0], 4, qbad, &s, &out, &failed, work, bytes) == MBDCP_ERR_NONFINITE && failed == 1);
    CHECK(mbdcp_lemke_batch(3, 2, &M[0][0], 3, &q[0][0], &s, &out, &failed, work, bytes) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_lemke_batch(3, 2, &M[0][0], 4, &q[0][0], &s, &out, NULL, work, bytes) == MBDCP_ERR_NULL);
    /* small instances: the monitor runs before each instance (entering -1), not at every pivot, and
     * stopping it stops the batch there */
    CHECK(mbdcp_lemke_batch_quiet(2, &s) && !mbdcp_lemke_batch_quiet(200, &s));
    Trace calls = {{0}, 0, 0, 2};
    s.monitor.fn = record;
    s.monitor.ctx = &calls;
    status[2] = -1;
    CHECK(mbdcp_lemke_batch(3, 2, &M[0][0], 4, &q[0][0], &s, &out, &failed, work, bytes) == MBDCP_OK);
    CHECK(calls.calls == 2 && calls.pairs[0] == -1 && calls.pairs[2] == -1);
    CHECK(status[0] == MBDCP_SOLVED && status[1] == MBDCP_INTERRUPTED && status[2] == -1);
    s.monitor.fn = NULL;
    free(work);

    /* time steps: two sphere steps, the second with another velocity, equal to single steps */
    double Ms[36], Wn[6], D[24], E[4], mu[1], v[6], p_ext[6], psi[1];
    MbdcpStepProblem P[2];
    P[0] = sphere(Ms, Wn, D, E, mu, v, p_ext, psi);
    P[1] = P[0];
    double v2[6] = {0.5, 0, 0, 0, 0, 0};
    P[1].v = v2;
    double vn[2][6], zz[2][6], ww[2][6];
    MbdcpStepOutput O[2] = {{vn[0], NULL, zz[0], ww[0], NULL, NULL, NULL}, {vn[1], NULL, zz[1], ww[1], NULL, NULL, NULL}};
    MbdcpLemkeInfo I[2];
    bytes = mbdcp_step_workspace_size(&P[0]);
    work = malloc(bytes);
    CHECK(mbdcp_step_batch(2, P, &s, O, I, &failed, work, bytes) == MBDCP_OK && failed == -1);
    for (int i = 0; i < 2; ++i) {
        double v1[6], z1[6], w1[6];
        MbdcpStepOutput o1 = {v1, NULL, z1, w1, NULL, NULL, NULL};
        MbdcpLemkeInfo info;
        CHECK(mbdcp_step_solve(&P[i], &s, NULL, &o1, &info, work, bytes) == MBDCP_OK);
        CHECK(memcmp(v1, vn[i], sizeof v1) == 0 && memcmp(z1, zz[i], sizeof z1) == 0 && info.status == I[i].status);
    }
    P[1].n_c = 0; /* another shape */
    CHECK(mbdcp_step_batch(2, P, &s, O, I, &failed, work, bytes) == MBDCP_ERR_DIMENSION && failed == 1);
    free(work);
}

/* Block-diagonal inverse (two 2x2 SPD blocks) and Q = Minv P for a CSC P touching both blocks. */
static void test_blocks(void)
{
    const mbdcp_float M[8] = {4, 2, 2, 3, 1, 0, 0, 2};
    mbdcp_float inv[8], scratch[4];
    mbdcp_int bad = 7;
    CHECK(mbdcp_block_spd_inverse(2, 2, M, inv, scratch, &bad) == MBDCP_OK && bad == -1);
    /* [4 2; 2 3]^-1 = [3 -2; -2 4] / 8 */
    CHECK(near(inv[0], 0.375, 1e-15) && near(inv[1], -0.25, 1e-15) && near(inv[2], -0.25, 1e-15) && near(inv[3], 0.5, 1e-15));
    CHECK(near(inv[4], 1.0, 1e-15) && inv[5] == 0.0 && near(inv[7], 0.5, 1e-15));
    const mbdcp_float asym[8] = {4, 2, 2, 3, 1, 0, 1, 2}, indef[8] = {4, 2, 2, 3, 1, 0, 0, -2};
    CHECK(mbdcp_block_spd_inverse(2, 2, asym, inv, scratch, &bad) == MBDCP_ERR_DATA && bad == 1);
    CHECK(mbdcp_block_spd_inverse(2, 2, indef, inv, scratch, &bad) == MBDCP_ERR_NOT_POSDEF && bad == 1);
    /* each pivot is judged against its own diagonal entry: a diagonal block of condition 1e17 is
     * SPD in any units, a dependent row is not */
    const mbdcp_float wide[4] = {1, 0, 0, 1e-17}, dependent[4] = {1, 1, 1, 1};
    CHECK(mbdcp_block_spd_inverse(1, 2, wide, inv, scratch, &bad) == MBDCP_OK && bad == -1);
    CHECK(near(inv[0], 1.0, 1e-15) && near(inv[3] * 1e-17, 1.0, 1e-15));
    CHECK(mbdcp_block_spd_inverse(1, 2, dependent, inv, scratch, &bad) == MBDCP_ERR_NOT_POSDEF && bad == 0);
    const mbdcp_float nan_[8] = {4, 2, 2, NAN, 1, 0, 0, 2};
    CHECK(mbdcp_block_spd_inverse(2, 2, nan_, inv, scratch, &bad) == MBDCP_ERR_NONFINITE);
    CHECK(mbdcp_block_spd_inverse(2, 2, M, inv, scratch, NULL) == MBDCP_ERR_NULL);
    mbdcp_block_spd_inverse(2, 2, M, inv, scratch, &bad);
    /* P (4 x 2): column 0 = e_1 + 2 e_2 (rows in both blocks), column 1 = e_3 */
    const mbdcp_int Pp[3] = {0, 2, 3}, Pi[3] = {1, 2, 3};
    const mbdcp_float Pv[3] = {1.0, 2.0, 1.0};
    mbdcp_int Qp[3], Qi[6];
    mbdcp_float Qv[6];
    CHECK(mbdcp_block_times_csc(2, 2, NULL, 2, Pp, Pi, Pv, Qp, NULL, NULL) == MBDCP_OK);
    CHECK(Qp[0] == 0 && Qp[1] == 4 && Qp[2] == 6);
    CHECK(mbdcp_block_times_csc(2, 2, inv, 2, Pp, Pi, Pv, Qp, Qi, Qv) == MBDCP_OK);
    CHECK(Qi[0] == 0 && Qi[1] == 1 && Qi[2] == 2 && Qi[3] == 3 && Qi[4] == 2 && Qi[5] == 3);
    CHECK(near(Qv[0], -0.25, 1e-15) && near(Qv[1], 0.5, 1e-15) && near(Qv[2], 2.0, 1e-15) && Qv[3] == 0.0);
    CHECK(Qv[4] == 0.0 && near(Qv[5], 0.5, 1e-15));
    const mbdcp_int unsorted[3] = {2, 1, 3}, outside[3] = {1, 2, 4}, short_[3] = {0, 2, 5};
    CHECK(mbdcp_block_times_csc(2, 2, inv, 2, Pp, unsorted, Pv, Qp, NULL, NULL) == MBDCP_ERR_DATA);
    CHECK(mbdcp_block_times_csc(2, 2, inv, 2, Pp, outside, Pv, Qp, NULL, NULL) == MBDCP_ERR_DATA);
    CHECK(mbdcp_block_times_csc(2, 2, inv, 2, Pp, Pi, Pv, (mbdcp_int *)short_, Qi, Qv) == MBDCP_ERR_DIMENSION);
}

/* A CCP recorded from mechanics.simulate (P and Q = M^-1 P in CSC, mu, p, the starting impulses):
 * header n_v, n_c, n_b, nnz(P), nnz(Q) (int), then the arrays in that order. */
typedef struct {
    int nv, nc, nb;
    mbdcp_int *Pp, *Pi, *Qp, *Qi;
    mbdcp_float *Pv, *Qv, *mu, *p, *nu, *u;
    MbdcpCcpProblem pr;
} RecordedCcp;

static void free_recorded(RecordedCcp *r)
{
    free(r->Pp);
    free(r->Pi);
    free(r->Qp);
    free(r->Qi);
    free(r->Pv);
    free(r->Qv);
    free(r->mu);
    free(r->p);
    free(r->nu);
    free(r->u);
}

static int load_recorded(const char *path, RecordedCcp *r)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int h[5] = {0, 0, 0, 0, 0};
    size_t got = fread(h, sizeof(int), 5, f);
    if (got != 5 || h[0] < 1 || h[1] < 0 || h[2] < 0 || h[3] < 0 || h[4] < 0) {
        fclose(f);
        return 0;
    }
    r->nv = h[0];
    r->nc = h[1];
    r->nb = h[2];
    const size_t np_ = 3 * (size_t)h[1] + (size_t)h[2];
    r->Pp = malloc((np_ + 1) * sizeof(mbdcp_int));
    r->Pi = malloc((size_t)h[3] * sizeof(mbdcp_int) + 1);
    r->Qp = malloc((np_ + 1) * sizeof(mbdcp_int));
    r->Qi = malloc((size_t)h[4] * sizeof(mbdcp_int) + 1);
    r->Pv = malloc((size_t)h[3] * sizeof(mbdcp_float) + 1);
    r->Qv = malloc((size_t)h[4] * sizeof(mbdcp_float) + 1);
    r->mu = malloc((size_t)h[1] * sizeof(mbdcp_float) + 1);
    r->p = malloc(np_ * sizeof(mbdcp_float) + 1);
    r->nu = malloc(np_ * sizeof(mbdcp_float) + 1);
    r->u = malloc((size_t)h[0] * sizeof(mbdcp_float));
    got = fread(r->Pp, sizeof(mbdcp_int), np_ + 1, f) + fread(r->Pi, sizeof(mbdcp_int), (size_t)h[3], f) +
          fread(r->Qp, sizeof(mbdcp_int), np_ + 1, f) + fread(r->Qi, sizeof(mbdcp_int), (size_t)h[4], f) +
          fread(r->Pv, sizeof(mbdcp_float), (size_t)h[3], f) + fread(r->Qv, sizeof(mbdcp_float), (size_t)h[4], f) +
          fread(r->mu, sizeof(mbdcp_float), (size_t)h[1], f) + fread(r->p, sizeof(mbdcp_float), np_, f) +
          fread(r->nu, sizeof(mbdcp_float), np_, f);
    fclose(f);
    if (got != 2 * (np_ + 1) + 2 * (size_t)h[3] + 2 * (size_t)h[4] + (size_t)h[1] + 2 * np_) {
        free_recorded(r);
        return 0;
    }
    const MbdcpCcpProblem pr = {r->nv, r->nc, r->nb, r->Pp, r->Pi, r->Pv, r->Qp, r->Qi, r->Qv, r->mu, r->p, NULL, NULL, NULL};
    r->pr = pr;
    return 1;
}

/* mbdcp_ccp_solve on a recorded CCP from its impulses r->nu (updated), in a workspace of its own. */
static MbdcpReturn solve_recorded(RecordedCcp *r, const MbdcpCcpSettings *s, MbdcpCcpInfo *info)
{
    const size_t bytes = mbdcp_ccp_workspace_size(&r->pr);
    void *work = malloc(bytes);
    const MbdcpReturn rc = work ? mbdcp_ccp_solve(&r->pr, s, r->nu, r->u, info, work, bytes) : MBDCP_ERR_NULL;
    free(work);
    return rc;
}

/* Loads the recorded CCP at path, checks its sizes (n_v, n_c, no joints) and gives default settings
 * with tolerance tol; 0 when the file could not be read. */
static int recorded(const char *path, int nv, int nc, double tol, RecordedCcp *r, MbdcpCcpSettings *s)
{
    CHECK(load_recorded(path, r));
    if (!r->Pp) return 0;
    CHECK(r->nv == nv && r->nc == nc && r->nb == 0);
    mbdcp_ccp_default_settings(s);
    s->tol = tol;
    return 1;
}

/* A 19-contact sphere pile step (tests/c/data/ccp_polish.bin) on which APGD meets the normwise
 * tolerance first and finishes by the polish. */
static void test_ccp_polish(void)
{
    RecordedCcp r;
    MbdcpCcpSettings s;
    if (!recorded("tests/c/data/ccp_polish.bin", 48, 19, 1e-6, &r, &s)) return;
    s.warm_start = 1; /* from the last step's impulses, as recorded */
    MbdcpCcpInfo info;
    CHECK(solve_recorded(&r, &s, &info) == MBDCP_OK);
    CHECK(info.status == MBDCP_SOLVED && info.polished == 1 && info.residual <= 1e-6);
    s.warm_start = 0; /* cold, and tighter: solved either way */
    s.tol = 1e-9;
    CHECK(solve_recorded(&r, &s, &info) == MBDCP_OK);
    CHECK(info.status == MBDCP_SOLVED && info.residual <= 1e-9);
    free_recorded(&r);
}

/* A 150-sphere pile at rest, 350 contacts (tests/c/data/ccp_stall.bin): corner spheres trade floor
 * friction for wall pressure along a direction N barely bends, and APGD's largest residual sat
 * still for hundreds of iterations (8,680 iterations to 1e-10); relieving the worst contacts by a
 * local solve takes about 1,050. */
static void test_ccp_stall_relieved(void)
{
    RecordedCcp r;
    MbdcpCcpSettings s;
    if (!recorded("tests/c/data/ccp_stall.bin", 900, 350, 1e-10, &r, &s)) return;
    s.max_iter = 100000;
    MbdcpCcpInfo info;
    CHECK(solve_recorded(&r, &s, &info) == MBDCP_OK);
    CHECK(info.status == MBDCP_SOLVED && info.residual <= 1e-10 && info.iterations < 3000);
    free_recorded(&r);
}

/* A positive definite, nonsymmetric M (so a P-matrix: one solution) of size 150: the warm starts
 * below factor bases of about 75 basic z, three panels of the blocked Gauss-Jordan inverse with
 * row interchanges across them. Every start must reach the cold solution. */
static void test_lemke_blocked_refactor(void)
{
    enum { N = 150 };
    double *M = malloc(sizeof(double) * N * N), *A = malloc(sizeof(double) * N * N);
    double q[N], z0[N], z[N], w[N];
    int basis[N], hint[N];
    unsigned long long x = 12345;
#define UNIFORM() ((x = x * 6364136223846793005ULL + 1442695040888963407ULL), (double)(x >> 11) / 9007199254740992.0 - 0.5)
    for (int i = 0; i < N * N; ++i) A[i] = UNIFORM();
    for (int i = 0; i < N; ++i) {
        q[i] = UNIFORM();
        for (int j = 0; j < N; ++j) {
            double s = 0.0;
            for (int k = 0; k < 20; ++k) s += A[i * N + k] * A[j * N + k]; /* low rank: pivoting matters */
            M[i * N + j] = s + (A[i * N + j] - A[j * N + i]) + (i == j ? 0.1 : 0.0);
        }
    }
#undef UNIFORM
    MbdcpLemkeInfo info;
    CHECK(solve(N, M, q, NULL, z0, w, basis, NULL, NULL, &info) == MBDCP_OK && info.status == MBDCP_SOLVED);
    int nb = 0;
    for (int i = 0; i < N; ++i) nb += basis[i];
    CHECK(nb > 64); /* more than two panels */
    for (int variant = 0; variant < 3; ++variant) {
        /* the answer's basis with 1 in 7 (then 1 in 3) flipped, then every other variable basic */
        for (int i = 0; i < N; ++i)
            hint[i] = variant == 2 ? i % 2 : (i % (variant ? 3 : 7) == 0 ? !basis[i] : basis[i]);
        CHECK(solve(N, M, q, hint, z, w, NULL, NULL, NULL, &info) == MBDCP_OK);
        CHECK(info.status == MBDCP_SOLVED && info.warm && info.refactorizations > 0); /* warm phase verified */
        double err = 0.0, zmax = 0.0;
        for (int i = 0; i < N; ++i) {
            err = fmax(err, fabs(z[i] - z0[i]));
            zmax = fmax(zmax, fabs(z0[i]));
        }
        CHECK(err <= 1e-10 * zmax);
    }
    free(M);
    free(A);
}

/* The columns of a contact Jacobian: a 2-D pair (dof 3; the second body's column negated at its own
 * offset) and a 3-D wall contact (dof 6), worked by hand: d x r moments r_x d_y - r_y d_x and r x d. */
static void test_contact_columns(void)
{
    /* 2-D: bodies 0 and 2 of 3, one direction d = (0, 1), offsets r_a = (1, 0), r_b = (-0.5, 2) */
    const mbdcp_int body2[2] = {0, 2};
    const mbdcp_float r2[4] = {1.0, 0.0, -0.5, 2.0}, d2[2] = {0.0, 1.0};
    mbdcp_int cp[2], ri[6];
    mbdcp_float v[6];
    CHECK(mbdcp_contact_columns(1, 2, 1, 9, body2, NULL, NULL, cp, NULL, NULL) == MBDCP_OK);
    CHECK(cp[0] == 0 && cp[1] == 6);
    CHECK(mbdcp_contact_columns(1, 2, 1, 9, body2, r2, d2, cp, ri, v) == MBDCP_OK);
    const mbdcp_int ri2[6] = {0, 1, 2, 6, 7, 8};
    const mbdcp_float v2[6] = {0.0, 1.0, 1.0, -0.0, -1.0, 0.5}; /* (d, 1*1 - 0*0), -(d, -0.5*1 - 2*0) */
    int same = 1;
    for (int k = 0; k < 6; ++k) same &= ri[k] == ri2[k] && v[k] == v2[k];
    CHECK(same);
    /* 3-D: body 1 of 2 on a wall, two directions: e_x and e_z at r = (0, 0, -1) */
    const mbdcp_int body3[2] = {1, -1};
    const mbdcp_float r3[6] = {0.0, 0.0, -1.0, 7.0, 7.0, 7.0}, d3[6] = {1.0, 0.0, 0.0, 0.0, 0.0, 1.0};
    mbdcp_int cp3[3], ri3[12];
    mbdcp_float v3[12];
    CHECK(mbdcp_contact_columns(1, 3, 2, 12, body3, r3, d3, cp3, ri3, v3) == MBDCP_OK);
    CHECK(cp3[1] == 6 && cp3[2] == 12 && ri3[0] == 6 && ri3[11] == 11);
    const mbdcp_float e_x[6] = {1.0, 0.0, 0.0, 0.0, -1.0, 0.0}, e_z[6] = {0.0, 0.0, 1.0, 0.0, 0.0, 0.0};
    same = 1;
    for (int k = 0; k < 6; ++k) same &= v3[k] == e_x[k] && v3[6 + k] == e_z[k];
    CHECK(same);
    /* a body out of range, a pair of one body, a dimension not 2 or 3, rows not whole bodies */
    const mbdcp_int out[2] = {0, 3}, self[2] = {1, 1};
    CHECK(mbdcp_contact_columns(1, 2, 1, 9, out, r2, d2, cp, ri, v) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_contact_columns(1, 2, 1, 9, self, r2, d2, cp, ri, v) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_contact_columns(1, 4, 1, 9, body2, r2, d2, cp, ri, v) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_contact_columns(1, 2, 1, 8, body2, r2, d2, cp, ri, v) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_contact_columns(1, 2, 1, 9, NULL, r2, d2, cp, ri, v) == MBDCP_ERR_NULL);
}

/* Friction directions from the world axis least aligned with n, and against the tangential slip
 * where it exceeds its rounding. */
static void test_friction_directions(void)
{
    const mbdcp_float n[3] = {0.0, 0.0, 1.0}, c4[4] = {1.0, 0.0, -1.0, 0.0}, s4[4] = {0.0, 1.0, 0.0, -1.0};
    const mbdcp_float axis[12] = {1.0, 0.0, -1.0, 0.0, 0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0};
    const mbdcp_float slip[3] = {0.0, 2.0, 5.0}, tiny[3] = {0.0, 1e-12, 5.0}, scale = 1.0;
    const mbdcp_float against[12] = {0.0, 1.0, 0.0, -1.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    mbdcp_float d[12];
    int same = 1;
    CHECK(mbdcp_friction_directions(1, 4, n, NULL, NULL, 1e-9, c4, s4, d) == MBDCP_OK);
    for (int k = 0; k < 12; ++k) same &= d[k] == axis[k];
    CHECK(mbdcp_friction_directions(1, 4, n, tiny, &scale, 1e-9, c4, s4, d) == MBDCP_OK);
    for (int k = 0; k < 12; ++k) same &= d[k] == axis[k];
    CHECK(mbdcp_friction_directions(1, 4, n, slip, &scale, 1e-9, c4, s4, d) == MBDCP_OK);
    for (int k = 0; k < 12; ++k) same &= fabs(d[k] - against[k]) < 1e-15;
    CHECK(same);
    CHECK(mbdcp_friction_directions(1, 4, n, slip, NULL, 1e-9, c4, s4, d) == MBDCP_ERR_NULL);
    CHECK(mbdcp_friction_directions(-1, 4, n, NULL, NULL, 1e-9, c4, s4, d) == MBDCP_ERR_DIMENSION);
}

/* Contacts as MuJoCo reports them: an array of records. */
typedef struct {
    double dist;
    int row, geom[2], rows;
    double friction[5], frame[9], point[3];
} Record;

/* Four records: kept, beyond delta, excluded (row -1), kept frictionless and second of its pair;
 * then their columns from a 4 x 2 Jacobian, with and without a slip. */
static void test_frame_contacts(void)
{
    Record rec[4];
    memset(rec, 0, sizeof rec);
    const double frame[9] = {0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0};
    const double dist[4] = {0.01, 0.5, 0.0, 0.02};
    const int row[4] = {0, 3, -1, 3}, rows[4] = {3, 3, 3, 1};
    for (int i = 0; i < 4; ++i) {
        rec[i].dist = dist[i], rec[i].row = row[i], rec[i].rows = rows[i], rec[i].friction[0] = 0.5;
        rec[i].geom[1] = 1;
        memcpy(rec[i].frame, frame, sizeof frame);
    }
    const MbdcpFrameContacts in = {4, sizeof(Record), &rec[0].dist, &rec[0].row, rec[0].geom, &rec[0].rows,
                                   rec[0].friction, rec[0].frame, rec[0].point};
    double gap[4], mu[4], fr[36], pt[12];
    int r[4], rs[4], g[8];
    int64_t key[4];
    MbdcpContactSet set = {gap, mu, r, rs, g, fr, pt, key};
    mbdcp_int n = -1;
    CHECK(mbdcp_frame_contacts_select(&in, 0.1, 0, 10, &set, &n) == MBDCP_OK);
    CHECK(n == 2 && gap[1] == 0.02 && mu[0] == 0.5 && mu[1] == 0.0 && r[1] == 3 && key[0] == 64 && key[1] == 65);
    CHECK(mbdcp_frame_contacts_select(&in, 0.1, 0, 1, &set, &n) == MBDCP_ERR_DATA); /* geom 1 >= code_base */
    const double J[8] = {1.0, 0.0, 0.0, 1.0, 0.0, 2.0, 3.0, 4.0}, ck[2] = {1.0, 0.0}, sk[2] = {0.0, 1.0};
    const double v_free[2] = {0.0, -1.0};
    double Wn[6], D[8], work[6];
    CHECK(mbdcp_frame_contact_columns(2, 2, 4, J, &set, NULL, 2, ck, sk, 1e-9, 3, Wn, D, work) == MBDCP_OK);
    const double Wn_want[4] = {1.0, 3.0, 0.0, 4.0}, D_want[8] = {0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0};
    int same = Wn[0] == Wn_want[0] && Wn[1] == Wn_want[1] && Wn[3] == Wn_want[2] && Wn[4] == Wn_want[3];
    for (int k = 0; k < 8; ++k) same &= D[k] == D_want[k];
    CHECK(same);
    /* slip (-1, -2, 0): the first direction faces (1, 2, 0) / sqrt 5, its column sqrt(5) (0, 1) */
    CHECK(mbdcp_frame_contact_columns(2, 2, 4, J, &set, v_free, 2, ck, sk, 1e-9, 3, Wn, D, work) == MBDCP_OK);
    CHECK(fabs(D[0]) < 1e-15 && fabs(D[4] - sqrt(5.0)) < 1e-15 && D[2] == 0.0 && D[6] == 0.0);
    /* with J of 3 rows the second contact's normal row 3 is past its end */
    CHECK(mbdcp_frame_contact_columns(2, 2, 3, J, &set, NULL, 2, ck, sk, 1e-9, 3, Wn, D, work) == MBDCP_ERR_DIMENSION);
    /* the fastest point: |v| 5 + |omega| 2 times (arm 1 + radius 0.5) */
    const double cvel[6] = {0.0, 0.0, 2.0, 3.0, 4.0, 0.0}, x[3] = {1.0, 0.0, 0.0}, c0[3] = {0.0, 0.0, 0.0}, rad = 0.5;
    const int zero = 0, far = 1;
    double speed = -1.0;
    CHECK(mbdcp_fastest_point(1, 1, &zero, &zero, cvel, x, c0, &rad, &speed) == MBDCP_OK && speed == 8.0);
    CHECK(mbdcp_fastest_point(1, 1, &far, &zero, cvel, x, c0, &rad, &speed) == MBDCP_ERR_DIMENSION);
}

/* The grid search of round bodies against all pairs on a random 3-D cloud: the same pairs in the
 * same order, gaps by their definition; then a shortfall of capacity, whose count stays exact. */
static void test_sphere_pairs_cloud(void)
{
    enum { N = 60 };
    mbdcp_float pos[3 * N], rad[N];
    unsigned seed = 7u;
    for (int k = 0; k < 3 * N; ++k) {
        seed = seed * 1103515245u + 12345u;
        pos[k] = (mbdcp_float)(seed >> 8) / (mbdcp_float)(1u << 24); /* in [0, 1) */
    }
    for (int i = 0; i < N; ++i) rad[i] = 0.05 + 0.05 * (i % 3);
    static int64_t work[1 << 13]; /* 8-byte aligned */
    static mbdcp_int pair[2 * N * N];
    static mbdcp_float gap[N * N], normal[3 * N * N], point[3 * N * N];
    mbdcp_int m = 0, expected = 0, order = 1, gaps = 1;
    CHECK(mbdcp_sphere_pairs_workspace_size(N) <= sizeof work);
    CHECK(mbdcp_sphere_pairs(N, 3, pos, rad, 0.01, N * N, &m, pair, gap, normal, point, work, sizeof work) == MBDCP_OK);
    for (int i = 0; i < N; ++i)
        for (int j = i + 1; j < N; ++j) {
            const mbdcp_float d[3] = {pos[3 * i] - pos[3 * j], pos[3 * i + 1] - pos[3 * j + 1], pos[3 * i + 2] - pos[3 * j + 2]};
            const mbdcp_float g = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - rad[i] - rad[j];
            if (g > 0.01) continue;
            order &= expected < m && pair[2 * expected] == i && pair[2 * expected + 1] == j;
            if (expected < m) gaps &= near(gap[expected], g, 1e-15);
            ++expected;
        }
    CHECK(m == expected && expected > 20 && order && gaps);
    CHECK(near(point[0], pos[3 * pair[1]] + rad[pair[1]] * normal[0], 1e-15));
    mbdcp_int m2 = 0;
    CHECK(mbdcp_sphere_pairs(N, 3, pos, rad, 0.01, 3, &m2, pair, gap, normal, point, work, sizeof work) == MBDCP_ERR_WORKSPACE);
    CHECK(m2 == m);
}

/* Disks worked by hand: a row of three touching, a fourth on the third's centre (no normal), radii 0
 * with delta 1e-100 against coordinates of 1 (cells of 2^-40 of them, not 1e-100), bad input. */
static void test_sphere_pairs_cases(void)
{
    static int64_t work[1 << 10];
    mbdcp_int pair[16], m = 0;
    mbdcp_float gap[8], normal[16], point[16];
    const mbdcp_float row[8] = {0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 2.0, 0.0}, half[4] = {0.5, 0.5, 0.5, 0.5};
    CHECK(mbdcp_sphere_pairs(3, 2, row, half, 0.0, 8, &m, pair, gap, normal, point, work, sizeof work) == MBDCP_OK);
    CHECK(m == 2 && pair[0] == 0 && pair[1] == 1 && pair[2] == 1 && pair[3] == 2 && gap[0] == 0.0 && normal[0] == -1.0);
    CHECK(mbdcp_sphere_pairs(4, 2, row, half, 0.0, 8, &m, pair, gap, normal, point, work, sizeof work) == MBDCP_ERR_DATA);
    CHECK(m == 0 && pair[0] == 2 && pair[1] == 3);
    const mbdcp_float two[4] = {0.0, 1.0, 0.0, 0.0}, zero[2] = {0.0, 0.0};
    CHECK(mbdcp_sphere_pairs(2, 2, two, zero, 1e-100, 8, &m, pair, gap, normal, point, work, sizeof work) == MBDCP_OK);
    CHECK(m == 0);
    const mbdcp_float bad[2] = {0.5, -1.0};
    CHECK(mbdcp_sphere_pairs(2, 2, two, bad, 0.0, 8, &m, pair, gap, normal, point, work, sizeof work) == MBDCP_ERR_DATA);
    CHECK(mbdcp_sphere_pairs(2, 4, two, half, 0.0, 8, &m, pair, gap, normal, point, work, sizeof work) == MBDCP_ERR_DIMENSION);
    CHECK(mbdcp_sphere_pairs(2, 2, two, half, 0.0, 8, &m, pair, gap, normal, point, work, 8) == MBDCP_ERR_WORKSPACE);
}

int main(void)
{
    test_lemke_small();
    test_lemke_ray_and_trivial();
    test_lemke_limit_and_errors();
    test_lemke_blocked_refactor();
    test_dense();
    test_step_sphere();
    test_step_rolling_rounding();
    test_step_vjp_sphere();
    test_cholesky_profile();
    test_step_joint();
    test_relax_block();
    test_sparse_step();
    test_full_rank_incline();
    test_ccp_particle();
    test_batch();
    test_blocks();
    test_ccp_polish();
    test_ccp_stall_relieved();
    test_contact_columns();
    test_friction_directions();
    test_frame_contacts();
    test_sphere_pairs_cloud();
    test_sphere_pairs_cases();
    return report();
}
