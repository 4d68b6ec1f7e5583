/* Cone complementarity: APGD, projected Jacobi and Gauss-Seidel, without forming N, and the driver
 * (with AUTO); see ccp.h. The products with N and the residuals are in ccp_ops.c, the interior-point
 * method in ccp_ipm.c. */
#include <math.h>
#include <string.h>

#include "ccp_ops.h"
#include "mbdcp/ccp.h"
#include "mbdcp/cone.h"
#include "mbdcp/dense.h"

/* Power iterations for the polish subproblem's Lipschitz constant (see sub_lipschitz()). */
#define POWER_ITERATIONS 30
/* Lanczos steps for the Lipschitz constant of S N S for APGD's first step only (of N: LANCZOS_STEPS,
 * ccp_ops.h): its line search doubles an estimate that is low. */
#define APGD_LANCZOS_STEPS 4
/* Polish (see polish()): at most this many failing contacts, this many contacts around them, this
 * many rounds, a first wait of this many APGD iterations after a miss (doubled after each). */
#define POLISH_FAILING 16
#define POLISH_SET 64
#define POLISH_ROUNDS 3
#define POLISH_EVERY 10
/* The subproblem's iterations (see sub_iterations()): as much work as POLISH_WORK products with N,
 * within these bounds. */
#define POLISH_WORK 300
#define POLISH_MIN_ITERATIONS 3000
#define POLISH_MAX_ITERATIONS 100000
/* APGD has stalled when its best normwise residual has not halved in this many iterations (see
 * relieve()). */
#define STALL_WAIT 30
/* APGD keeps its iterate after CERT_FIRST iterations and, at every doubling of the count, tries to
 * turn the direction it moved along since into a certificate that no solution exists (ccp_cert.c):
 * where none exists the iterates grow along a fixed direction, which the tries catch within a fixed
 * share of the iterations, at the cost of a local problem each. */
#define CERT_FIRST 64

MbdcpReturn mbdcp_ccp_default_settings(MbdcpCcpSettings *s)
{
    if (!s) return MBDCP_ERR_NULL;
    s->method = MBDCP_CCP_APGD;
    s->tol = 1e-8;
    s->max_iter = 10000;
    s->omega = 0.0;
    s->warm_start = 0;
    s->scaling = MBDCP_CCP_SCALE_AXES;
    s->monitor.fn = NULL;
    s->monitor.ctx = NULL;
    s->factor_blocks = -1;
    s->factor_flops = 0.0;
    s->plan.budget = 0;
    s->plan.n_c = 0;
    return MBDCP_OK;
}

/* " name" of a method, for the settings check's message */
#define METHOD_WORD(suffix, name) " " name
/* the name of a method, for mbdcp_ccp_method_name's table */
#define METHOD_NAME(suffix, name) name,

const char *mbdcp_ccp_method_name(MbdcpCcpMethod method)
{
    static const char *const names[] = {MBDCP_CCP_METHOD_LIST(METHOD_NAME)};
    return (int)method >= 0 && (int)method < (int)MBDCP_CCP_METHOD_COUNT ? names[method] : NULL;
}

MbdcpReturn mbdcp_ccp_check_settings(const MbdcpCcpSettings *s, const char **message)
{
    const char *msg = NULL;
    if (!s) return MBDCP_ERR_NULL;
    if ((int)s->method < 0 || (int)s->method >= (int)MBDCP_CCP_METHOD_COUNT)
        msg = "method must be one of" MBDCP_CCP_METHOD_LIST(METHOD_WORD);
    else if (s->method == MBDCP_CCP_IPM && s->factor_blocks < 0)
        msg = "factor_blocks must be set from mbdcp_ccp_factor_blocks for ipm";
    else if (!(s->tol > 0.0) || !isfinite(s->tol))
        msg = "tol must be positive and finite";
    else if (s->max_iter < 1)
        msg = "max_iter must be at least 1";
    else if (!(s->omega >= 0.0 && s->omega < 2.0))
        msg = "omega must be in (0, 2)";
    else if ((int)s->scaling < 0 || (int)s->scaling > 1)
        msg = "scaling must be axes or contact";
    if (message) *message = msg;
    return msg ? MBDCP_ERR_SETTING : MBDCP_OK;
}

/* The polish subproblem's size: three entries per contact of its set. */
static size_t polish_size(const MbdcpCcpProblem *p)
{
    return 3 * (size_t)(p->n_c < POLISH_SET ? p->n_c : POLISH_SET);
}

/* eta, ieta, g, y, prev, Nx, Ny, trial, Ngam, gam, tmp, sc, pol, pg, snap, cdir, cert (n_p each); Nii (9
 * per contact); mux (n_c); ut, au, mark (n_v); the polish subproblem: A (K^2), b, x, y, prev, grad,
 * cols (K each), its blocks' pattern (K^2 / 9 + K / 3 + 1 slots), K = polish_size; then the
 * certificate's workspace (mbdcp_ccp_cert_bytes). */
static size_t solver_floats(const MbdcpCcpProblem *p)
{
    const size_t K = polish_size(p);
    return 17 * (size_t)ccp_n_p(p) + 10 * (size_t)p->n_c + 3 * (size_t)p->n_v + K * K + 6 * K + K * K / 9 + K / 3 + 1;
}

size_t mbdcp_ccp_workspace_size(const MbdcpCcpProblem *p)
{
    if (!p) return 0;
    return solver_floats(p) * sizeof(mbdcp_float) + mbdcp_ccp_cert_bytes(p);
}

static int uses_ipm(const MbdcpCcpSettings *s)
{
    return (s->method == MBDCP_CCP_IPM || s->method == MBDCP_CCP_AUTO) && s->factor_blocks >= 0;
}

size_t mbdcp_ccp_solve_workspace_size(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s)
{
    if (!p || !s) return 0;
    const size_t base = mbdcp_ccp_workspace_size(p);
    return uses_ipm(s) ? base + mbdcp_ccp_ipm_bytes(p, s->factor_blocks) : base;
}

/* ---- the three methods ------------------------------------------------------------------------ */

typedef struct {
    const MbdcpCcpProblem *p;
    const MbdcpCcpSettings *s;
    mbdcp_float *eta, *ieta, *g, *y, *prev, *Nx, *Ny, *trial, *Ngam, *gam, *tmp, *sc, *pol, *pg, *Nii, *mux, *ut, *au, *mark;
    mbdcp_float *snap, *cdir, *cert; /* APGD's iterate at the last certificate try, a direction, a
                                        certificate */
    void *certw;                     /* mbdcp_ccp_certify's workspace */
    mbdcp_float *A, *ab, *ax, *ay, *aprev, *agrad, *acols; /* the polish subproblem (acols: its contacts) */
    mbdcp_int *aptr, *anbr; /* its nonzero blocks (see sub_matrix) */
    mbdcp_float L, pnorm, omega;
    MbdcpCcpInfo *info;
    int interrupted, diverged;
    int certified; /* C->cert holds a certificate that no solution exists */
    int blocked;  /* BLOCKED_P | BLOCKED_Q */
    mbdcp_int k0; /* iterations of earlier phases (AUTO), added to the counts reported */
} Ccp;

/* Called after every iteration with the normwise residual res of the iterate nu (gradient g):
 * returns 1 to stop (converged: normwise and then componentwise below tol; interrupted). */
static int converged(Ccp *C, mbdcp_int k, mbdcp_float res, const mbdcp_float *nu, const mbdcp_float *g,
                     mbdcp_float *cw)
{
    C->info->iterations = C->k0 + k + 1;
    if (mbdcp_monitor_call(&C->s->monitor, C->k0 + k + 1, -1, -1, res)) {
        C->interrupted = 1;
        return 1;
    }
    if (!(res <= C->s->tol)) return !isfinite(res);
    *cw = mbdcp_ccp_componentwise(C->p, nu, g, C->L, C->au, C->sc);
    return *cw <= C->s->tol || !isfinite(*cw);
}

/* The trial point of APGD's line search, T = Pi(y - (N y + ps) / Lk) cone by cone (cones mux);
 * returns |T - y|^2 and sets *restart = (N y + ps) . (T - x), the gradient-restart test. */
static mbdcp_float trial_point(const MbdcpCcpProblem *p, const mbdcp_float *mux, const mbdcp_float *ps,
                               const mbdcp_float *y, const mbdcp_float *Ny, const mbdcp_float *x, mbdcp_float Lk,
                               mbdcp_float *T, mbdcp_float *restart)
{
    const mbdcp_int nc = p->n_c;
    const mbdcp_float inv_Lk = 1.0 / Lk;
    mbdcp_float sq = 0.0, rs = 0.0;
    for (mbdcp_int b = 0; b < nc + p->n_b; ++b) {
        const mbdcp_int j0 = b < nc ? 3 * b : 3 * nc + (b - nc), w = b < nc ? 3 : 1;
        for (mbdcp_int j = j0; j < j0 + w; ++j) T[j] = y[j] - (Ny[j] + ps[j]) * inv_Lk;
        if (w == 3) mbdcp_cone_project_inline(mux[b], T + j0);
        for (mbdcp_int j = j0; j < j0 + w; ++j) {
            const mbdcp_float dlt = T[j] - y[j];
            sq += dlt * dlt;
            rs += (Ny[j] + ps[j]) * (T[j] - x[j]);
        }
    }
    *restart = rs;
    return sq;
}

/* NT = S N S T (u = Q S T); returns the curvature (T - y)^T S N S (T - y) = (T - y) . (NT - Ny). */
static mbdcp_float trial_product(const MbdcpCcpProblem *p, int blocked, const mbdcp_float *S, const mbdcp_float *T,
                                 const mbdcp_float *y, const mbdcp_float *Ny, mbdcp_float *u, mbdcp_float *NT)
{
    mbdcp_ccp_apply_SNS(p, blocked, S, T, u, NT);
    mbdcp_float curv = 0.0;
    for (mbdcp_int j = 0; j < ccp_n_p(p); ++j) curv += (NT[j] - Ny[j]) * (T[j] - y[j]);
    return curv;
}

/* The polish subproblem's matrix A = N_SS (K = 3 k entries) on its nonzero 3 x 3 blocks, and their
 * pattern: block column b has rows anbr[aptr[b] .. aptr[b + 1]). Two contacts couple only through a
 * generalized velocity P's columns of the one share with Q's of the other (a body both touch), so A
 * is sparse: a sphere in a pile touches a handful of others. Entries outside the pattern are never
 * read. Scratch: u (n_v, zero on entry and exit). */
static void sub_matrix(Ccp *C, const mbdcp_int *set, mbdcp_int k)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_int K = 3 * k;
    mbdcp_float *u = C->ut, *A = C->A;
    mbdcp_int n = 0;
    for (mbdcp_int b = 0; b < k; ++b) {
        const mbdcp_int q0 = p->Q_colptr[3 * set[b]], q1 = p->Q_colptr[3 * set[b] + 3];
        for (mbdcp_int t = q0; t < q1; ++t) u[p->Q_rowind[t]] = 1.0;
        C->aptr[b] = n;
        for (mbdcp_int a = 0; a < k; ++a) {
            int touches = 0;
            for (mbdcp_int t = p->P_colptr[3 * set[a]]; t < p->P_colptr[3 * set[a] + 3] && !touches; ++t)
                touches = u[p->P_rowind[t]] != 0.0;
            if (touches) C->anbr[n++] = a;
        }
        for (mbdcp_int t = q0; t < q1; ++t) u[p->Q_rowind[t]] = 0.0;
        for (mbdcp_int c = 0; c < 3; ++c) { /* column 3 b + c: u = Q_j, then P_a^T u on the pattern */
            const mbdcp_int j = 3 * set[b] + c;
            for (mbdcp_int t = p->Q_colptr[j]; t < p->Q_colptr[j + 1]; ++t) u[p->Q_rowind[t]] += p->Q_val[t];
            for (mbdcp_int t = C->aptr[b]; t < n; ++t)
                for (mbdcp_int r = 0; r < 3; ++r)
                    A[(size_t)(3 * C->anbr[t] + r) * K + 3 * b + c] =
                        mbdcp_ccp_col_dot_P(p, 3 * set[C->anbr[t]] + r, u);
            for (mbdcp_int t = p->Q_colptr[j]; t < p->Q_colptr[j + 1]; ++t) u[p->Q_rowind[t]] = 0.0;
        }
    }
    C->aptr[k] = n;
}

/* y = A x on the polish subproblem (K entries), over the blocks of sub_matrix's pattern. */
static void sub_product(const Ccp *C, mbdcp_int K, const mbdcp_float *x, mbdcp_float *y)
{
    memset(y, 0, (size_t)K * sizeof(mbdcp_float));
    for (mbdcp_int b = 0; b < K / 3; ++b) {
        const mbdcp_float x0 = x[3 * b], x1 = x[3 * b + 1], x2 = x[3 * b + 2];
        for (mbdcp_int t = C->aptr[b]; t < C->aptr[b + 1]; ++t) {
            const mbdcp_int i = 3 * C->anbr[t];
            for (mbdcp_int r = 0; r < 3; ++r) {
                const mbdcp_float *Ar = C->A + (size_t)(i + r) * K + 3 * b;
                y[i + r] += Ar[0] * x0 + Ar[1] * x1 + Ar[2] * x2;
            }
        }
    }
}

/* grad = A x + b on the polish subproblem (K entries). */
static void sub_gradient(const Ccp *C, mbdcp_int K, const mbdcp_float *x, mbdcp_float *grad)
{
    sub_product(C, K, x, grad);
    for (mbdcp_int a = 0; a < K; ++a) grad[a] += C->ab[a];
}

/* Largest eigenvalue of the polish subproblem's A (symmetric PSD) by power iteration, a little
 * above (scratch: aprev, agrad). */
static mbdcp_float sub_lipschitz(const Ccp *C, mbdcp_int K)
{
    mbdcp_float *x = C->aprev, *y = C->agrad, lam = 0.0;
    for (mbdcp_int a = 0; a < K; ++a) x[a] = 1.0 + 0.01 * (a % 7);
    for (int it = 0; it < POWER_ITERATIONS; ++it) {
        const mbdcp_float nx = sqrt(mbdcp_ccp_dot(K, x, x));
        if (!(nx > 0.0)) break;
        for (mbdcp_int a = 0; a < K; ++a) x[a] /= nx;
        sub_product(C, K, x, y);
        lam = mbdcp_ccp_dot(K, x, y);
        memcpy(x, y, (size_t)K * sizeof(mbdcp_float));
    }
    return 1.05 * lam;
}

/* The subproblem's iteration limit. Its flat directions (a sphere on four neighbours) take FISTA
 * thousands of its iterations, each a product with the k contacts' nonzero blocks of A: it gets the
 * work of POLISH_WORK products with the whole N, at most that of a few hundred APGD iterations.
 * Stopped short, it left a large pile crawling just above tol; a small pile keeps the 3,000 of old. */
static mbdcp_int sub_iterations(const Ccp *C, mbdcp_int k)
{
    const mbdcp_float per_iteration = 18.0 * (mbdcp_float)C->aptr[k] + 30.0 * (mbdcp_float)k; /* sub_product, cones */
    const mbdcp_float budget = POLISH_WORK * mbdcp_ccp_product_flops(C->p) / per_iteration;
    return (mbdcp_int)fmin((mbdcp_float)POLISH_MAX_ITERATIONS, fmax((mbdcp_float)POLISH_MIN_ITERATIONS, budget));
}

/* One FISTA step (with gradient restart) on the polish subproblem min 1/2 x^T A x + b^T x over the
 * set's cones (K = 3 entries per contact, step 1 / LA): x <- Pi(y - (A y + b) / LA), y extrapolated. */
static void sub_step(const Ccp *C, const mbdcp_int *set, mbdcp_int K, mbdcp_float LA, mbdcp_float *theta)
{
    mbdcp_float *x = C->ax, *y = C->ay, *xn = C->aprev, *grad = C->agrad, rs = 0.0;
    sub_gradient(C, K, y, grad);
    for (mbdcp_int a = 0; a < K; ++a) {
        xn[a] = y[a] - grad[a] / LA;
        if (a % 3 == 2) mbdcp_cone_project_inline(C->p->mu[set[a / 3]], xn + a - 2);
    }
    for (mbdcp_int a = 0; a < K; ++a) rs += grad[a] * (xn[a] - x[a]);
    const mbdcp_float tn = 0.5 * (1.0 + sqrt(1.0 + 4.0 * *theta * *theta));
    const mbdcp_float beta = rs > 0.0 ? 0.0 : (*theta - 1.0) / tn;
    for (mbdcp_int a = 0; a < K; ++a) {
        y[a] = xn[a] + beta * (xn[a] - x[a]);
        x[a] = xn[a];
    }
    *theta = rs > 0.0 ? 1.0 : tn;
}

/* Is the subproblem's x converged well below tol relative to each contact's magnitudes s? */
static int sub_converged(const Ccp *C, const mbdcp_int *set, mbdcp_int K, mbdcp_float LA, const mbdcp_float *s,
                         mbdcp_float floor_)
{
    mbdcp_float *grad = C->agrad;
    sub_gradient(C, K, C->ax, grad);
    for (mbdcp_int a = 0; a < K; a += 3) {
        const mbdcp_int j0 = 3 * set[a / 3];
        const mbdcp_float num = mbdcp_ccp_block_residual(3, C->p->mu[set[a / 3]], C->ax + a, grad + a, 1.0 / LA) * LA;
        const mbdcp_float den = fmax(s[j0], fmax(s[j0 + 1], s[j0 + 2]));
        if (!(num <= 0.1 * C->s->tol * (den + floor_))) return 0;
    }
    return 1;
}

/* The contacts touching a generalized velocity marked in C->mark (at most POLISH_SET) form a
 * subproblem,
 *     min 1/2 x^T N_SS x + (g_S - N_SS nu_S)^T x  over their cones, the other contacts fixed,
 * solved by FISTA with the step of its own largest eigenvalue, to well below tol relative to the
 * magnitudes s (floor_ added); x (gamma-space) and its gradient gx are updated in place. 0 (x and
 * gx unchanged) if the set is too large or its matrix unusable. */
static int solve_around(Ccp *C, mbdcp_float *x, mbdcp_float *gx, const mbdcp_float *s, mbdcp_float floor_)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_int nc = p->n_c, nv = p->n_v;
    mbdcp_float *mark = C->mark, *u = C->ut;
    mbdcp_int *set = (mbdcp_int *)C->acols, k = 0;
    for (mbdcp_int i = 0; i < nc; ++i) {
        int touches = 0;
        for (mbdcp_int t = p->P_colptr[3 * i]; t < p->P_colptr[3 * i + 3] && !touches; ++t)
            touches = mark[p->P_rowind[t]] != 0.0;
        if (!touches) continue;
        if (k == POLISH_SET) return 0;
        set[k++] = i;
    }
    const mbdcp_int K = 3 * k;
    if (K == 0) return 0;
    memset(u, 0, (size_t)nv * sizeof(mbdcp_float));
    sub_matrix(C, set, k);
    for (mbdcp_int a = 0; a < K; ++a) C->ax[a] = C->ay[a] = x[3 * set[a / 3] + a % 3];
    sub_product(C, K, C->ax, C->ab);
    for (mbdcp_int a = 0; a < K; ++a) C->ab[a] = gx[3 * set[a / 3] + a % 3] - C->ab[a];
    const mbdcp_float LA = sub_lipschitz(C, K);
    if (!(LA > 0.0) || !isfinite(LA)) return 0;
    mbdcp_float theta = 1.0;
    const mbdcp_int iterations = sub_iterations(C, k);
    for (mbdcp_int it = 0; it < iterations; ++it) {
        sub_step(C, set, K, LA, &theta);
        if (it % 50 == 49 && sub_converged(C, set, K, LA, s, floor_)) break;
    }
    for (mbdcp_int a = 0; a < K; ++a) x[3 * set[a / 3] + a % 3] = C->ax[a];
    mbdcp_ccp_project_all(p, x);
    mbdcp_ccp_apply_SNS(p, C->blocked, NULL, x, u, gx);
    mbdcp_ccp_gradient(p, gx, gx);
    return 1;
}

/* Polish of an iterate nu (gradient g) that meets the normwise tolerance but not the componentwise
 * one. APGD moves every entry with one step 1 / L; a few contacts of a granular pile can sit in a
 * direction along which N has (almost) no curvature (a sphere on four neighbours: its contacts'
 * impulses can be redistributed), where the objective falls by the same tiny amount per iteration
 * for thousands of iterations; relative to its own magnitudes such a contact stays unconverged.
 * The failing contacts (at most POLISH_FAILING, failing either test) and every contact sharing a
 * generalized velocity with them are solved by solve_around. Its change moves the velocities of
 * the bodies around it, so a neighbour may now fail: up to POLISH_ROUNDS rounds, each on the union
 * of the sets so far. The result is accepted only if the whole iterate then passes both tests:
 * POLISH_SOLVED, with it in C->pol (its gradient in C->pg). POLISH_SHORT: a result that falls
 * short, still an iterate in C->pol, which APGD goes on from (see apgd()). POLISH_NONE: nothing
 * was re-solved. */
enum { POLISH_NONE, POLISH_SHORT, POLISH_SOLVED };
static int polish(Ccp *C, const mbdcp_float *nu, const mbdcp_float *g)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_int nc = p->n_c, nv = p->n_v, np_ = ccp_n_p(p);
    const mbdcp_float tol = C->s->tol, L = C->L;
    if (p->n_b > 0 || nc == 0) return POLISH_NONE;
    mbdcp_float *s = C->sc, *mark = C->mark, *x = C->pol, *gx = C->pg;
    memcpy(x, nu, (size_t)np_ * sizeof(mbdcp_float));
    memcpy(gx, g, (size_t)np_ * sizeof(mbdcp_float));
    for (int round = 0; round < POLISH_ROUNDS; ++round) {
        const int so_far = round > 0 ? POLISH_SHORT : POLISH_NONE; /* what the rounds before left */
        const mbdcp_float floor_ = mbdcp_ccp_magnitudes(p, x, C->au, s);
        if (round == 0) memset(mark, 0, (size_t)nv * sizeof(mbdcp_float));
        mbdcp_int failing = 0;
        for (mbdcp_int i = 0; i < nc; ++i) {
            const int normwise =
                mbdcp_ccp_block_residual(3, p->mu[i], x + 3 * i, gx + 3 * i, 1.0 / L) * L > tol * C->pnorm;
            if (!normwise && !(mbdcp_ccp_block_ratio(p, i, x, gx, L, s, floor_) > tol)) continue;
            if (++failing > POLISH_FAILING) return so_far;
            for (mbdcp_int k = p->P_colptr[3 * i]; k < p->P_colptr[3 * i + 3]; ++k) mark[p->P_rowind[k]] = 1.0;
        }
        if (failing == 0) return round > 0 ? POLISH_SOLVED : POLISH_NONE;
        if (!solve_around(C, x, gx, s, floor_)) return so_far;
    }
    return mbdcp_ccp_answer_residual_of(p, x, gx, L, C->pnorm, C->au, C->sc) <= tol ? POLISH_SOLVED : POLISH_SHORT;
}

/* Relief of a stalled APGD iterate x (gamma-space, gradient gx; both updated in place). The
 * flat directions polish() is for stall the normwise residual too: a sphere in a corner, its floor
 * and wall contacts' impulses free to trade friction for normal force, crawls along such a
 * direction at the step of the whole pile, and a global restart (any other contact's overshoot)
 * drops its momentum again; the largest residual then stays put for hundreds of iterations. The
 * worst contacts by the normwise residual (at most POLISH_FAILING, as many as keep the contacts
 * around them within POLISH_SET) are solved by solve_around. 1 if it ran. */
static int relieve(Ccp *C, mbdcp_float *x, mbdcp_float *gx)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_int nc = p->n_c, nv = p->n_v;
    const mbdcp_float L = C->L, level = C->s->tol * C->pnorm / L;
    if (p->n_b > 0 || nc == 0) return 0;
    mbdcp_int top[POLISH_FAILING], n_top = 0, joined[POLISH_FAILING + 1] = {0};
    mbdcp_float worst[POLISH_FAILING];
    for (mbdcp_int i = 0; i < nc; ++i) { /* the worst ones, sorted by insertion */
        const mbdcp_float d = mbdcp_ccp_block_residual(3, p->mu[i], x + 3 * i, gx + 3 * i, 1.0 / L);
        if (!(d > level) || (n_top == POLISH_FAILING && !(d > worst[n_top - 1]))) continue;
        mbdcp_int a = n_top < POLISH_FAILING ? n_top++ : n_top - 1;
        for (; a > 0 && worst[a - 1] < d; --a) {
            worst[a] = worst[a - 1];
            top[a] = top[a - 1];
        }
        worst[a] = d;
        top[a] = i;
    }
    if (n_top == 0) return 0;
    /* mark each generalized velocity with the rank (1-based) of the worst contact touching it; a
     * contact joins the set with the smallest rank among its velocities: take the longest prefix
     * of the ranking whose set fits */
    mbdcp_float *mark = C->mark;
    memset(mark, 0, (size_t)nv * sizeof(mbdcp_float));
    for (mbdcp_int a = n_top - 1; a >= 0; --a)
        for (mbdcp_int k = p->P_colptr[3 * top[a]]; k < p->P_colptr[3 * top[a] + 3]; ++k)
            mark[p->P_rowind[k]] = (mbdcp_float)(a + 1);
    for (mbdcp_int i = 0; i < nc; ++i) {
        mbdcp_float rank = 0.0;
        for (mbdcp_int t = p->P_colptr[3 * i]; t < p->P_colptr[3 * i + 3]; ++t) {
            const mbdcp_float m = mark[p->P_rowind[t]];
            if (m != 0.0 && (rank == 0.0 || m < rank)) rank = m;
        }
        if (rank != 0.0) ++joined[(mbdcp_int)rank];
    }
    mbdcp_int keep = 0, size = 0;
    while (keep < n_top && size + joined[keep + 1] <= POLISH_SET) size += joined[++keep];
    if (keep == 0) return 0;
    for (mbdcp_int r = 0; r < nv; ++r)
        if (mark[r] > (mbdcp_float)keep) mark[r] = 0.0;
    const mbdcp_float floor_ = mbdcp_ccp_magnitudes(p, x, C->au, C->sc);
    return solve_around(C, x, gx, C->sc, floor_);
}

/* APGD's state (see apgd()): its diagonal scaling, the rotating x-space buffers (so that
 * accepting a step copies nothing) and the bookkeeping of the best iterate, the polish and the
 * stall test. */
typedef struct {
    mbdcp_float *S, *iS, *ps;           /* the scaling gamma = S x, 1 / S, S p */
    mbdcp_float *X, *T, *B;             /* current iterate, trial point, best iterate when it is not X */
    mbdcp_float *NX, *NT;               /* S N S X and S N S T */
    mbdcp_float Lk, theta;              /* the line search's curvature estimate; Nesterov's theta */
    mbdcp_float res;                    /* normwise residual of X */
    mbdcp_float cw;                     /* componentwise residual of the last iterate that met tol normwise */
    mbdcp_float best, best_cw;          /* the best iterate's two residuals */
    int x_is_best;                      /* the best iterate is X (else B) */
    int polished;                       /* the answer is the polish's, in C->pol */
    int polish_short;                   /* this iteration's polish fell short: its point is in C->pol */
    mbdcp_int next_polish, polish_wait; /* the first iteration a polish may run; the wait after a miss */
    mbdcp_int stall_k;                  /* iteration of the last halving of stall_best (or relief) */
    mbdcp_float stall_best;             /* the best normwise residual at stall_k */
    mbdcp_int next_cert;                /* the iteration of the next certificate try */
    int snapped;                        /* C->snap holds the iterate of the last try */
} Apgd;

/* The line search doubles Lk at most this many times per iteration. */
#define LINE_SEARCH_STEPS 60

/* APGD's iterate X (x-space, its product NX = S N S X) in gamma-space: gamma = S X and its
 * gradient N gamma + p = (NX + S p) / S. */
static void to_gamma(const Ccp *C, const Apgd *A, mbdcp_float *gam, mbdcp_float *grad)
{
    for (mbdcp_int j = 0; j < ccp_n_p(C->p); ++j) {
        gam[j] = A->S[j] * A->X[j];
        grad[j] = (A->NX[j] + A->ps[j]) * A->iS[j];
    }
}

/* X <- T as the new iterate, NX <- NT: the old X kept in B when it is the best (else it becomes
 * the next trial buffer). */
static void accept(Apgd *A)
{
    mbdcp_float *old = A->X;
    A->X = A->T;
    if (A->x_is_best) {
        A->T = A->B;
        A->B = old;
    } else {
        A->T = old;
    }
    old = A->NX;
    A->NX = A->NT;
    A->NT = old;
}

/* The scaling: a contact's normal entry by 1 / sqrt(N_nn), its two tangential ones by
 * 1 / sqrt((N_uu + N_ww) / 2), so that its cone stays circular (coefficient mu S_n / S_t, in
 * C->mux); a joint by 1 / sqrt(N_jj); a contact under MBDCP_CCP_SCALE_CONTACT, or whose block is
 * not positive, by the scalar sqrt(3 / trace N_ii). */
static void apgd_scaling(Ccp *C, Apgd *A)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_int np_ = ccp_n_p(p);
    mbdcp_float *S = A->S;
    for (mbdcp_int j = 0; j < np_; ++j) S[j] = sqrt(S[j]);
    for (mbdcp_int i = 0; i < p->n_c; ++i) {
        const mbdcp_float *Bi = C->Nii + 9 * (size_t)i, nn = Bi[0], tt = 0.5 * (Bi[4] + Bi[8]);
        C->mux[i] = p->mu[i];
        if (C->s->scaling != MBDCP_CCP_SCALE_AXES || !(nn > 0.0) || !(tt > 0.0)) continue; /* the scalar one */
        S[3 * i] = 1.0 / sqrt(nn);
        S[3 * i + 1] = S[3 * i + 2] = 1.0 / sqrt(tt);
        C->mux[i] = p->mu[i] * S[3 * i] / S[3 * i + 1];
    }
    for (mbdcp_int j = 0; j < np_; ++j) {
        A->ps[j] = S[j] * p->p[j];
        A->iS[j] = 1.0 / S[j];
    }
}

/* The buffers, the scaling, the step estimate, and the start X = nu / S (its residual res),
 * with y = X. nu becomes a product buffer. */
static void apgd_start(Ccp *C, Apgd *A, mbdcp_float *nu, mbdcp_float res)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_int np_ = ccp_n_p(p);
    A->S = C->eta;
    A->iS = C->ieta;
    A->ps = C->g;
    A->X = C->gam;
    A->T = C->trial;
    A->B = C->prev;
    A->NX = C->Ngam;
    A->NT = nu;
    apgd_scaling(C, A);
    A->Lk = mbdcp_ccp_lipschitz(p, C->blocked, A->S, APGD_LANCZOS_STEPS, C->y, C->Ny, C->ut, A->T);
    A->theta = 1.0;
    A->res = A->best = A->stall_best = res;
    A->cw = A->best_cw = INFINITY;
    A->x_is_best = 1;
    A->polished = A->polish_short = 0;
    A->next_polish = 0;
    A->polish_wait = POLISH_EVERY;
    A->stall_k = 0;
    A->next_cert = CERT_FIRST;
    A->snapped = 0;
    for (mbdcp_int j = 0; j < np_; ++j) A->X[j] = nu[j] / A->S[j];
    mbdcp_ccp_apply_SNS(p, C->blocked, A->S, A->X, C->ut, A->NX);
    memcpy(C->y, A->X, (size_t)np_ * sizeof(mbdcp_float));
    memcpy(C->Ny, A->NX, (size_t)np_ * sizeof(mbdcp_float));
}

/* The trial point T from y, Lk doubled until the curvature test holds; returns the gradient
 * restart test (see trial_point). */
static mbdcp_float line_search(Ccp *C, Apgd *A)
{
    mbdcp_float restart = 0.0;
    for (int ls = 0; ls < LINE_SEARCH_STEPS; ++ls) {
        const mbdcp_float sq = trial_point(C->p, C->mux, A->ps, C->y, C->Ny, A->X, A->Lk, A->T, &restart);
        const mbdcp_float curv = trial_product(C->p, C->blocked, A->S, A->T, C->y, C->Ny, C->ut, A->NT);
        if (curv <= A->Lk * sq) break;
        A->Lk *= 2.0;
    }
    return restart;
}

/* y = T + beta (T - X), N y from the two products by linearity (a restart: beta = 0, y = T); and
 * in the same sweep the normwise residual of T in gamma-space (gamma = S T, its gradient
 * (S N S T + S p) / S), returned (NAN if not finite). */
static mbdcp_float extrapolate(Ccp *C, const Apgd *A, mbdcp_float beta)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_int nc = p->n_c;
    const mbdcp_float inv_L = 1.0 / C->L;
    const mbdcp_float *S = A->S, *iS = A->iS, *ps = A->ps, *T = A->T, *X = A->X, *NT = A->NT, *NX = A->NX;
    mbdcp_float *y = C->y, *Ny = C->Ny, r = 0.0;
    int nonfinite = 0;
    for (mbdcp_int b = 0; b < nc + p->n_b; ++b) {
        const mbdcp_int j0 = b < nc ? 3 * b : 3 * nc + (b - nc), w = b < nc ? 3 : 1;
        mbdcp_float gam[3], grad[3];
        for (mbdcp_int a = 0; a < w; ++a) {
            const mbdcp_int j = j0 + a;
            y[j] = T[j] + beta * (T[j] - X[j]);
            Ny[j] = NT[j] + beta * (NT[j] - NX[j]);
            gam[a] = S[j] * T[j];
            grad[a] = (NT[j] + ps[j]) * iS[j];
        }
        const mbdcp_float d = mbdcp_ccp_block_residual(w, b < nc ? p->mu[b] : 0.0, gam, grad, inv_L);
        if (isnan(d)) nonfinite = 1;
        else if (d > r) r = d;
    }
    return nonfinite ? NAN : r * C->L / C->pnorm;
}

/* After iteration k: converged (normwise, then componentwise, on gamma and its gradient in
 * C->Nx, C->tmp) or interrupted; an iterate that meets tol normwise only is polished, at
 * iterations spaced wider after each miss. 1 to stop. */
static int apgd_stop(Ccp *C, Apgd *A, mbdcp_int k)
{
    const mbdcp_float tol = C->s->tol;
    int stop;
    if (A->res <= tol) {
        to_gamma(C, A, C->Nx, C->tmp);
        stop = converged(C, k, A->res, C->Nx, C->tmp, &A->cw);
    } else {
        stop = converged(C, k, A->res, NULL, NULL, &A->cw);
    }
    A->polish_short = 0;
    if (!stop && A->res <= tol && k >= A->next_polish) {
        const int outcome = polish(C, C->Nx, C->tmp);
        stop = A->polished = outcome == POLISH_SOLVED;
        A->polish_short = outcome == POLISH_SHORT;
        A->next_polish = k + A->polish_wait;
        A->polish_wait *= 2;
    }
    return stop;
}

/* Is X the best iterate: a lower normwise residual, or below tol with a lower componentwise one
 * (a non-finite X is taken, so that the status reports it)? */
static void track_best(Ccp *C, Apgd *A)
{
    const mbdcp_float tol = C->s->tol;
    A->x_is_best = A->res < A->best || (A->res <= tol && A->cw < A->best_cw) || !isfinite(A->res);
    if (A->x_is_best) {
        A->best = A->res;
        A->best_cw = A->cw;
    }
}

/* The relieved iterate (C->pol, gradient C->pg, residual relieved) becomes the next X; y moves
 * by the same change, so that the momentum is kept. */
static void take_relieved(Ccp *C, Apgd *A, mbdcp_float relieved)
{
    const mbdcp_int np_ = ccp_n_p(C->p);
    for (mbdcp_int j = 0; j < np_; ++j) {
        A->T[j] = C->pol[j] * A->iS[j];
        A->NT[j] = A->S[j] * C->pg[j] - A->ps[j];
        C->y[j] += A->T[j] - A->X[j];
        C->Ny[j] += A->NT[j] - A->NX[j];
    }
    accept(A);
    A->res = relieved;
    A->x_is_best = A->res < A->best;
    if (A->x_is_best) {
        A->best = A->res;
        A->best_cw = INFINITY;
    }
}

/* APGD goes on from a re-solved point in C->pol (gradient C->pg) when its residual is finite. */
static void go_on_from_pol(Ccp *C, Apgd *A)
{
    const mbdcp_float r = mbdcp_ccp_residual(C->p, C->pol, C->pg, C->L, C->pnorm);
    if (isfinite(r)) take_relieved(C, A, r);
}

/* Stalled when the best residual has not halved in STALL_WAIT iterations: relieve() re-solves
 * the worst contacts, and APGD goes on from its iterate even when its residual is higher (the
 * best iterate stays kept apart). Solved with the others held, those contacts push their
 * neighbours off, which APGD settles in a few iterations; refusing the iterate instead left a
 * large pile at the same residual, relieved again and again. */
static void unstall(Ccp *C, Apgd *A, mbdcp_int k)
{
    if (A->best < 0.5 * A->stall_best) {
        A->stall_best = A->best;
        A->stall_k = k;
        return;
    }
    if (k - A->stall_k < STALL_WAIT) return;
    A->stall_k = k;
    to_gamma(C, A, C->pol, C->pg);
    if (relieve(C, C->pol, C->pg)) go_on_from_pol(C, A);
}

/* At iteration k, when due: the move of the iterate (gamma-space) since the last try as a candidate
 * certificate (see CERT_FIRST); 1 when it yields one, in C->cert. */
static int try_certificate(Ccp *C, Apgd *A, mbdcp_int k)
{
    if (k + 1 < A->next_cert || A->res <= C->s->tol) return 0;
    const mbdcp_int np_ = ccp_n_p(C->p);
    A->next_cert *= 2;
    if (A->snapped) {
        for (mbdcp_int j = 0; j < np_; ++j) C->cdir[j] = A->S[j] * A->X[j] - C->snap[j];
        C->certified = mbdcp_ccp_certify(C->p, C->cdir, C->cert, C->certw);
    }
    for (mbdcp_int j = 0; j < np_; ++j) C->snap[j] = A->S[j] * A->X[j];
    A->snapped = 1;
    return C->certified;
}

/* The answer in nu: the certificate, the polish's, or gamma = S x of the best iterate, projected (S x
 * lies in K up to the rounding of the scaling); u = Q nu and its gradient in C->g. */
static void apgd_finish(Ccp *C, const Apgd *A, mbdcp_float *nu, mbdcp_float *u)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_float *xb = A->x_is_best ? A->X : A->B;
    for (mbdcp_int j = 0; j < ccp_n_p(p); ++j) nu[j] = A->polished ? C->pol[j] : A->S[j] * xb[j];
    if (C->certified) memcpy(nu, C->cert, (size_t)ccp_n_p(p) * sizeof(mbdcp_float));
    else mbdcp_ccp_project_all(p, nu);
    mbdcp_ccp_apply_SNS(p, C->blocked, NULL, nu, u, C->Nx);
    mbdcp_ccp_gradient(p, C->Nx, C->g);
    C->info->polished = A->polished;
}

/* Mazhar, Heyn, Negrut, Tasora (2015), Algorithm 2 (Nesterov with adaptive step and restart), run
 * on x = gamma / S, a diagonal Jacobi scaling that keeps every cone a circular cone (apgd_scaling;
 * in x the projection stays Euclidean). Vectors are in x-space. The line search's sufficient
 * decrease f(T) <= f(y) + grad f(y).(T - y) + Lk / 2 |T - y|^2 is, f being quadratic, the
 * curvature test (T - y)^T S N S (T - y) <= Lk |T - y|^2, evaluated from the two products
 * without the cancellation of differencing f. The best iterate by the normwise residual is kept.
 * When it stalls, relieve() re-solves the worst contacts locally without a restart (a restart
 * would drop the momentum of the slow, ill-conditioned piles). A polish that falls short hands
 * APGD its iterate the same way: the contacts it re-solved no longer crawl, and their neighbours,
 * pushed off, settle in a few iterations (refusing it left a settling pile's step at the same
 * iterate, polished again and again at doubling waits). Leaves the best iterate in nu, its
 * gradient in C->g. */
static void apgd(Ccp *C, mbdcp_float *nu, mbdcp_float *u, mbdcp_float res, mbdcp_int max_iter)
{
    Apgd A;
    apgd_start(C, &A, nu, res);
    for (mbdcp_int k = 0; k < max_iter; ++k) {
        const mbdcp_float restart = line_search(C, &A), theta = A.theta;
        const mbdcp_float theta_new = 0.5 * (-theta * theta + theta * sqrt(theta * theta + 4.0));
        const mbdcp_float beta = restart > 0.0 ? 0.0 : theta * (1.0 - theta) / (theta * theta + theta_new);
        A.res = extrapolate(C, &A, beta);
        accept(&A);
        const int stop = apgd_stop(C, &A, k) || try_certificate(C, &A, k);
        track_best(C, &A);
        if (!stop && A.polish_short) go_on_from_pol(C, &A);
        if (!stop && A.res > C->s->tol) unstall(C, &A, k);
        if (stop) break;
        A.theta = restart > 0.0 ? 1.0 : theta_new;
        A.Lk *= 0.9;
    }
    apgd_finish(C, &A, nu, u);
}

/* Projected Jacobi is not monotone: when its residual grows a million-fold past the best one seen
 * (or stops being finite) it has diverged; the best iterate is kept and returned. */
static void jacobi(Ccp *C, mbdcp_float *nu, mbdcp_float *u)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_int np_ = ccp_n_p(p);
    mbdcp_float cw = INFINITY, best = INFINITY;
    for (mbdcp_int k = 0; k < C->s->max_iter; ++k) {
        for (mbdcp_int j = 0; j < np_; ++j) nu[j] -= C->omega * C->eta[j] * C->g[j];
        mbdcp_ccp_project_all(p, nu);
        mbdcp_ccp_apply_SNS(p, C->blocked, NULL, nu, u, C->Nx);
        mbdcp_ccp_gradient(p, C->Nx, C->g);
        const mbdcp_float res = mbdcp_ccp_residual(p, nu, C->g, C->L, C->pnorm);
        if (res < best) {
            best = res;
            memcpy(C->prev, nu, (size_t)np_ * sizeof(mbdcp_float));
        } else if (!(res <= 1e6 * best)) {
            C->diverged = 1;
            break;
        }
        if (converged(C, k, res, nu, C->g, &cw)) break;
    }
    if (C->diverged) {
        memcpy(nu, C->prev, (size_t)np_ * sizeof(mbdcp_float));
        mbdcp_ccp_apply_SNS(p, C->blocked, NULL, nu, u, C->Nx);
        mbdcp_ccp_gradient(p, C->Nx, C->g);
    }
}

/* Block Gauss-Seidel: u = Q nu is kept current; contact i reads g_i = P_i^T u + p_i and minimises
 * 1/2 x^T N_ii x + (g_i - N_ii gamma_i)^T x over K_i exactly (local_solve): every update lowers
 * the objective, so the sweeps descend monotonically. */
static void gauss_seidel(Ccp *C, mbdcp_float *nu, mbdcp_float *u)
{
    const MbdcpCcpProblem *p = C->p;
    mbdcp_float cw = INFINITY;
    for (mbdcp_int k = 0; k < C->s->max_iter; ++k) {
        for (mbdcp_int i = 0; i < p->n_c + p->n_b; ++i) {
            const int contact = i < p->n_c;
            const mbdcp_int j0 = contact ? 3 * i : 3 * p->n_c + (i - p->n_c);
            const mbdcp_int w = contact ? 3 : 1;
            mbdcp_float old[3], gi[3];
            for (mbdcp_int a = 0; a < w; ++a) {
                old[a] = nu[j0 + a];
                gi[a] = mbdcp_ccp_col_dot_P(p, j0 + a, u) + p->p[j0 + a];
            }
            if (contact) {
                const mbdcp_float *B = C->Nii + 9 * (size_t)i;
                mbdcp_float b[3], x[3] = {old[0], old[1], old[2]};
                for (int a = 0; a < 3; ++a) b[a] = gi[a] - (B[3 * a] * old[0] + B[3 * a + 1] * old[1] + B[3 * a + 2] * old[2]);
                mbdcp_cone_local_solve(B, b, p->mu[i], x);
                for (int a = 0; a < 3; ++a) nu[j0 + a] = C->omega == 1.0 ? x[a] : old[a] + C->omega * (x[a] - old[a]);
                mbdcp_cone_project(p->mu[i], nu + j0); /* over-relaxation (and rounding) may leave K */
            } else {
                nu[j0] -= C->omega * C->eta[j0] * gi[0];
            }
            for (mbdcp_int a = 0; a < w; ++a) {
                const mbdcp_float dlt = nu[j0 + a] - old[a];
                if (dlt == 0.0) continue;
                for (mbdcp_int q = p->Q_colptr[j0 + a]; q < p->Q_colptr[j0 + a + 1]; ++q)
                    u[p->Q_rowind[q]] += p->Q_val[q] * dlt;
            }
        }
        mbdcp_ccp_apply_SNS(p, C->blocked, NULL, nu, u, C->Nx); /* also refreshes u, against drift */
        mbdcp_ccp_gradient(p, C->Nx, C->g);
        if (converged(C, k, mbdcp_ccp_residual(p, nu, C->g, C->L, C->pnorm), nu, C->g, &cw)) break;
    }
}

/* ---- the interior-point method (ccp_ipm.c) and AUTO ----------------------------------------- */


/* AUTO gives APGD the products that about IPM_EXPECTED interior-point iterations cost (at least
 * AUTO_MIN_APGD iterations): APGD stays where it converges fast, the interior-point method takes
 * over where it crawls. */
#define IPM_EXPECTED 25
#define AUTO_MIN_APGD 50
/* ... and at most this share of max_iter: where a factorisation costs more than max_iter of APGD's
 * iterations (a pattern that fills in), a stalled or diverging APGD would otherwise hold the solve
 * to max_iter and never hand it to the method that decides it. */
#define AUTO_APGD_SHARE 0.25
/* The interior-point method's own iteration limit (it needs tens, not thousands). */
#define AUTO_IPM_ITER 200
/* A plan serves the problems whose contacts number within this fraction of those of the problem it
 * was made for: the budget (an interior-point solve's work) follows the pattern slowly, and analysing
 * each step's pattern cost 9 % of a step in a settling pile of 500 spheres, where APGD converges
 * within the budget at every step. */
#define AUTO_PLAN_KEPT 0.1

/* The interior-point run's outcome for final_status(). */
typedef struct {
    int ran;
    CcpIpmRun run;
} IpmOutcome;

static MbdcpReturn run_ipm(Ccp *C, mbdcp_float *nu, mbdcp_float *u, int warm, mbdcp_int max_iter, void *work,
                           size_t work_bytes, IpmOutcome *out)
{
    const MbdcpCcpProblem *p = C->p;
    const CcpJudge J = {p, C->s, C->blocked, C->L, C->pnorm, C->au, C->sc};
    const size_t base = mbdcp_ccp_workspace_size(p);
    MbdcpReturn rc = mbdcp_ccp_ipm_run(&J, max_iter, C->k0, warm, nu, u, C->g, &out->run, (char *)work + base,
                                       work_bytes - base);
    out->ran = 1;
    C->k0 += out->run.iterations;
    C->info->iterations = C->k0;
    C->info->finished = MBDCP_CCP_IPM;
    if (out->run.status == MBDCP_INTERRUPTED) C->interrupted = 1;
    return rc;
}

/* APGD's iterations that cost as much as IPM_EXPECTED interior-point iterations (a factorisation,
 * its solves with refinement, a few products with N each), within AUTO_MIN_APGD and
 * AUTO_APGD_SHARE of max_iter (and max_iter itself). */
mbdcp_int mbdcp_ccp_auto_budget(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s)
{
    if (!p || !s || !p->P_colptr || !p->Q_colptr || s->factor_blocks < 0) return -1;
    const mbdcp_float product = mbdcp_ccp_product_flops(p);
    const mbdcp_float blocks = (mbdcp_float)s->factor_blocks + p->n_c + p->n_v / 3.0 + 1.0;
    const mbdcp_float factor = s->factor_flops > 0.0 ? s->factor_flops : 27.0 * 4.0 * blocks;
    const mbdcp_float ipm_iteration = factor + 8.0 * 18.0 * blocks + 8.0 * product;
    const mbdcp_float budget = IPM_EXPECTED * ipm_iteration / (2.5 * product);
    const mbdcp_float cap = (mbdcp_float)s->max_iter;
    return (mbdcp_int)fmin(cap, fmax((mbdcp_float)AUTO_MIN_APGD, fmin(budget, AUTO_APGD_SHARE * cap)));
}

/* The interior-point method (from nu if warm) for at most ipm_iter iterations; when it neither
 * solves nor certifies (its linear algebra runs out of precision as the iterates near the cones'
 * boundaries, typically a little above tol), APGD from its best point for the iterations left:
 * close to the solution, with the contacts' states settled, APGD finishes in few iterations. */
static MbdcpReturn ipm_then_apgd(Ccp *C, mbdcp_float *nu, mbdcp_float *u, int warm, mbdcp_int ipm_iter, void *work,
                                 size_t work_bytes, IpmOutcome *out)
{
    const MbdcpCcpProblem *p = C->p;
    const MbdcpReturn rc = run_ipm(C, nu, u, warm, ipm_iter, work, work_bytes, out);
    if (rc != MBDCP_OK || C->interrupted || out->run.status == MBDCP_SOLVED || out->run.status == MBDCP_RAY_TERMINATION)
        return rc;
    if (mbdcp_ccp_answer_residual_of(p, nu, C->g, C->L, C->pnorm, C->au, C->sc) <= C->s->tol) return MBDCP_OK;
    const mbdcp_int rest = C->s->max_iter - C->k0;
    if (rest < 1) return MBDCP_OK;
    out->ran = 0; /* the answer is APGD's, judged as such */
    C->info->finished = MBDCP_CCP_APGD;
    apgd(C, nu, u, mbdcp_ccp_residual(p, nu, C->g, C->L, C->pnorm), rest);
    return MBDCP_OK;
}

/* APGD within its budget; if it has not converged, the interior-point method from APGD's best
 * point (then APGD again if needed, see ipm_then_apgd). */
static MbdcpReturn auto_solve(Ccp *C, mbdcp_float *nu, mbdcp_float *u, void *work, size_t work_bytes,
                              IpmOutcome *out)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_int max_iter = C->s->max_iter;
    C->info->finished = MBDCP_CCP_APGD;
    if (C->s->factor_blocks < 0) {
        apgd(C, nu, u, mbdcp_ccp_residual(p, nu, C->g, C->L, C->pnorm), max_iter);
        return MBDCP_OK;
    }
    const mbdcp_int budget = mbdcp_ccp_auto_budget(p, C->s);
    apgd(C, nu, u, mbdcp_ccp_residual(p, nu, C->g, C->L, C->pnorm), budget);
    C->k0 = C->info->iterations;
    if (C->interrupted || C->certified ||
        mbdcp_ccp_answer_residual_of(p, nu, C->g, C->L, C->pnorm, C->au, C->sc) <= C->s->tol)
        return MBDCP_OK;
    const mbdcp_int left = max_iter - C->k0;
    if (left < 1) return MBDCP_OK;
    return ipm_then_apgd(C, nu, u, 1, left < AUTO_IPM_ITER ? left : AUTO_IPM_ITER, work, work_bytes, out);
}

/* The call's form: pointers, settings, dimensions and workspace, in this order. */
static MbdcpReturn check_call(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, const mbdcp_float *nu,
                              const mbdcp_float *u, const MbdcpCcpInfo *info, const void *work, size_t work_bytes)
{
    if (!p || !s || !info || !work) return MBDCP_ERR_NULL;
    MbdcpReturn rc = mbdcp_ccp_check_settings(s, NULL);
    if (rc != MBDCP_OK) return rc;
    if (p->n_v < 1 || p->n_c < 0 || p->n_b < 0) return MBDCP_ERR_DIMENSION;
    if (ccp_n_p(p) > 0 && (!p->P_colptr || !p->Q_colptr || !p->p || !nu || (p->n_c && !p->mu))) return MBDCP_ERR_NULL;
    if (!u) return MBDCP_ERR_NULL;
    if (work_bytes < mbdcp_ccp_solve_workspace_size(p, s)) return MBDCP_ERR_WORKSPACE;
    if (uses_ipm(s) && (!p->M_colptr || !p->M_val)) return MBDCP_ERR_NULL;
    return MBDCP_OK;
}

/* The problem's data: finite, mu >= 0, and compressed columns that do not run backwards. */
static MbdcpReturn check_data(const MbdcpCcpProblem *p)
{
    const mbdcp_int np_ = ccp_n_p(p);
    if (!mbdcp_all_finite((size_t)np_, p->p) || !mbdcp_all_finite((size_t)p->n_c, p->mu)) return MBDCP_ERR_NONFINITE;
    for (mbdcp_int i = 0; i < p->n_c; ++i)
        if (p->mu[i] < 0.0) return MBDCP_ERR_DATA;
    for (mbdcp_int j = 0; j < np_; ++j)
        if (p->P_colptr[j + 1] < p->P_colptr[j] || p->Q_colptr[j + 1] < p->Q_colptr[j]) return MBDCP_ERR_DIMENSION;
    return MBDCP_OK;
}

/* The solver's state and its vectors, carved from the workspace in the order of
 * mbdcp_ccp_workspace_size. */
static void setup(Ccp *C, const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, MbdcpCcpInfo *info, void *work)
{
    const mbdcp_int np_ = ccp_n_p(p), nv = p->n_v;
    C->p = p;
    C->s = s;
    C->info = info;
    C->interrupted = 0;
    C->diverged = 0;
    C->certified = 0;
    C->blocked = (mbdcp_ccp_columns_blocked(p->n_c, p->P_colptr, p->P_rowind) ? BLOCKED_P : 0) |
                 (mbdcp_ccp_columns_blocked(p->n_c, p->Q_colptr, p->Q_rowind) ? BLOCKED_Q : 0);
    mbdcp_float *w = (mbdcp_float *)work;
    mbdcp_float **slots[] = {&C->eta, &C->ieta, &C->g, &C->y, &C->prev, &C->Nx, &C->Ny,
                             &C->trial, &C->Ngam, &C->gam, &C->tmp, &C->sc, &C->pol, &C->pg,
                             &C->snap, &C->cdir, &C->cert};
    for (size_t k = 0; k < sizeof slots / sizeof slots[0]; ++k) {
        *slots[k] = w;
        w += np_;
    }
    C->Nii = w;
    C->mux = C->Nii + 9 * (size_t)p->n_c;
    C->ut = C->mux + (size_t)p->n_c;
    C->au = C->ut + nv;
    C->mark = C->au + nv;
    C->A = C->mark + nv;
    w = C->A + polish_size(p) * polish_size(p);
    mbdcp_float **sub[] = {&C->ab, &C->ax, &C->ay, &C->aprev, &C->agrad, &C->acols};
    for (size_t k = 0; k < sizeof sub / sizeof sub[0]; ++k) {
        *sub[k] = w;
        w += polish_size(p);
    }
    C->aptr = (mbdcp_int *)w;
    C->anbr = C->aptr + polish_size(p) / 3 + 1;
    C->certw = (mbdcp_float *)work + solver_floats(p);
}

/* What every method needs: the Lipschitz estimate L of N (the residual's scale), the scale of p,
 * the relaxation, the diagonal blocks and scaling; then the gradient of the start nu. */
static void prepare(Ccp *C, const mbdcp_float *nu, mbdcp_float *u)
{
    const MbdcpCcpProblem *p = C->p;
    const mbdcp_int np_ = ccp_n_p(p), nv = p->n_v;
    memset(C->ut, 0, (size_t)nv * sizeof(mbdcp_float));
    C->L = mbdcp_ccp_lipschitz(p, C->blocked, NULL, LANCZOS_STEPS, C->y, C->Ny, C->ut, C->trial);
    C->info->lipschitz = C->L;
    memset(C->ut, 0, (size_t)nv * sizeof(mbdcp_float)); /* mbdcp_ccp_scaling() accumulates into a zero u */
    C->pnorm = fmax(mbdcp_norm_inf((size_t)np_, p->p), 1e-300);
    C->omega = C->s->omega > 0.0 ? C->s->omega : (C->s->method == MBDCP_CCP_PJACOBI ? 0.3 : 1.0);
    mbdcp_ccp_scaling(p, C->eta, C->Nii, C->ut);
    mbdcp_ccp_apply_SNS(p, C->blocked, NULL, nu, u, C->Nx);
    mbdcp_ccp_gradient(p, C->Nx, C->g);
}

/* Both tests, as in the loops: an iterate kept at the iteration limit may pass the componentwise
 * test (scaled by |N||nu|, large when nu is) and still miss the normwise one the user asked for,
 * e.g. a light body wedged by friction, whose impulses nearly cancel. */
static void final_status(Ccp *C, const mbdcp_float *nu, const IpmOutcome *ipm)
{
    const MbdcpCcpProblem *p = C->p;
    MbdcpCcpInfo *info = C->info;
    info->residual = mbdcp_ccp_answer_residual_of(p, nu, C->g, C->L, C->pnorm, C->au, C->sc);
    if (C->interrupted)
        info->status = MBDCP_INTERRUPTED;
    else if (C->certified) {
        info->status = MBDCP_RAY_TERMINATION;
        info->certificate = MBDCP_CCP_CERT_DIRECTION;
    } else if (ipm->ran && ipm->run.status == MBDCP_RAY_TERMINATION) {
        info->status = MBDCP_RAY_TERMINATION;
        info->certificate = ipm->run.certificate;
    } else if (C->diverged || !isfinite(info->residual) || !mbdcp_all_finite((size_t)ccp_n_p(p), nu))
        info->status = MBDCP_NUMERICAL_ERROR;
    else if (info->residual <= C->s->tol)
        info->status = MBDCP_SOLVED;
    else if (ipm->ran && ipm->run.status == MBDCP_NUMERICAL_ERROR)
        info->status = MBDCP_NUMERICAL_ERROR;
}

/* The solve, after k0 iterations of an earlier call (mbdcp_ccp_resume; 0 otherwise), which info and
 * the monitor count on from and the interior-point method's limit leaves out. */
static MbdcpReturn solve_from(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, mbdcp_int k0, mbdcp_float *nu,
                              mbdcp_float *u, MbdcpCcpInfo *info, void *work, size_t work_bytes)
{
    MbdcpReturn rc = check_call(p, s, nu, u, info, work, work_bytes);
    if (rc == MBDCP_OK) rc = check_data(p);
    if (rc != MBDCP_OK) return rc;
    const mbdcp_int np_ = ccp_n_p(p), left = s->max_iter - k0;
    Ccp C;
    setup(&C, p, s, info, work);
    info->status = MBDCP_MAX_ITERATIONS;
    info->iterations = k0;
    info->residual = 0.0;
    info->lipschitz = 0.0;
    info->polished = 0;
    info->certificate = MBDCP_CCP_NO_CERTIFICATE;
    info->finished = s->method;
    info->plan = s->plan;
    info->handover = 0;
    C.k0 = k0;
    IpmOutcome ipm = {0, {MBDCP_MAX_ITERATIONS, 0, MBDCP_CCP_NO_CERTIFICATE}};
    memset(u, 0, (size_t)p->n_v * sizeof(mbdcp_float));
    if (np_ == 0) {
        info->status = MBDCP_SOLVED;
        return MBDCP_OK;
    }
    if (!s->warm_start) memset(nu, 0, (size_t)np_ * sizeof(mbdcp_float));
    if (!mbdcp_all_finite((size_t)np_, nu)) return MBDCP_ERR_NONFINITE;
    mbdcp_ccp_project_all(p, nu);
    prepare(&C, nu, u);
    if (!(mbdcp_ccp_answer_residual_of(p, nu, C.g, C.L, C.pnorm, C.au, C.sc) <= s->tol)) {
        if (s->method == MBDCP_CCP_APGD)
            apgd(&C, nu, u, mbdcp_ccp_residual(p, nu, C.g, C.L, C.pnorm), s->max_iter);
        else if (s->method == MBDCP_CCP_PJACOBI)
            jacobi(&C, nu, u);
        else if (s->method == MBDCP_CCP_PGS)
            gauss_seidel(&C, nu, u);
        else if (s->method == MBDCP_CCP_IPM)
            rc = ipm_then_apgd(&C, nu, u, s->warm_start, left < AUTO_IPM_ITER ? left : AUTO_IPM_ITER, work, work_bytes,
                               &ipm);
        else
            rc = auto_solve(&C, nu, u, work, work_bytes, &ipm);
    }
    if (rc != MBDCP_OK) return rc;
    final_status(&C, nu, &ipm);
    return MBDCP_OK;
}

/* Does the plan in s serve p: AUTO, a budget, and contacts within AUTO_PLAN_KEPT of the plan's (in
 * floating point: no overflow whatever the caller's counts)? */
static int plan_serves(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s)
{
    const mbdcp_float n_c = (mbdcp_float)s->plan.n_c;
    return s->method == MBDCP_CCP_AUTO && s->plan.budget > 0 && fabs((mbdcp_float)p->n_c - n_c) <= AUTO_PLAN_KEPT * n_c;
}

MbdcpReturn mbdcp_ccp_needs_factor(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, int *needs)
{
    if (!p || !s || !needs) return MBDCP_ERR_NULL;
    *needs = s->method == MBDCP_CCP_IPM || (s->method == MBDCP_CCP_AUTO && !plan_serves(p, s));
    return MBDCP_OK;
}

/* AUTO with a plan that serves: APGD for the plan's budget, a solve of its own; when it has neither
 * converged nor been interrupted and iterations are left, the interior-point method from its point
 * (mbdcp_ccp_resume), or without factor_blocks the handover to the caller, who analyses first. */
static MbdcpReturn auto_planned(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, mbdcp_float *nu, mbdcp_float *u,
                                MbdcpCcpInfo *info, void *work, size_t work_bytes)
{
    MbdcpCcpSettings a = *s;
    a.method = MBDCP_CCP_APGD;
    a.max_iter = s->plan.budget < s->max_iter ? s->plan.budget : s->max_iter;
    const MbdcpReturn rc = solve_from(p, &a, 0, nu, u, info, work, work_bytes);
    if (rc != MBDCP_OK) return rc;
    info->handover = info->status != MBDCP_SOLVED && info->status != MBDCP_INTERRUPTED && info->iterations < s->max_iter;
    if (!info->handover || s->factor_blocks < 0) return MBDCP_OK;
    const MbdcpCcpInfo first = *info;
    return mbdcp_ccp_resume(p, s, &first, nu, u, info, work, work_bytes);
}

MbdcpReturn mbdcp_ccp_solve(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, mbdcp_float *nu,
                            mbdcp_float *u, MbdcpCcpInfo *info, void *work, size_t work_bytes)
{
    if (!p || !s || !info) return MBDCP_ERR_NULL;
    if (plan_serves(p, s)) return auto_planned(p, s, nu, u, info, work, work_bytes);
    const MbdcpReturn rc = solve_from(p, s, 0, nu, u, info, work, work_bytes);
    if (rc == MBDCP_OK && s->method == MBDCP_CCP_AUTO && s->factor_blocks >= 0) { /* analysed: a plan of its own */
        info->plan.budget = mbdcp_ccp_auto_budget(p, s);
        info->plan.n_c = p->n_c;
    }
    return rc;
}

MbdcpReturn mbdcp_ccp_resume(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, const MbdcpCcpInfo *first,
                             mbdcp_float *nu, mbdcp_float *u, MbdcpCcpInfo *info, void *work, size_t work_bytes)
{
    if (!p || !s || !first || !info) return MBDCP_ERR_NULL;
    const mbdcp_int done = first->iterations;
    const MbdcpCcpPlan plan = first->plan; /* first may be info itself */
    if (s->method != MBDCP_CCP_AUTO || !first->handover || done < 0 || done >= s->max_iter) return MBDCP_ERR_DATA;
    MbdcpCcpSettings b = *s;
    b.method = MBDCP_CCP_IPM;
    b.warm_start = 1;
    const MbdcpReturn rc = solve_from(p, &b, done, nu, u, info, work, work_bytes);
    info->plan = plan;
    info->handover = 0;
    return rc;
}
