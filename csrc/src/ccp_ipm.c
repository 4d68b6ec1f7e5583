/* The primal-dual interior-point method for the CCP (see ccp.h): Nesterov-Todd scaling of each
 * second-order cone (Nesterov and Todd 1997), Mehrotra's predictor-corrector (Mehrotra 1992) in the
 * conic form of Vandenberghe (2010), each Newton system solved in the scaled variables through the
 * quasi-definite augmented system [[I, (P F)^T], [P F, -M]] (Vanderbei 1995) by sparse_ldl.h, with
 * iterative refinement on (F^T N F + I) y = r applied matrix-free. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ccp_ops.h"
#include "mbdcp/dense.h"
#include "mbdcp/sparse_ldl.h"

/* Static pivoting of the factorisation, relative to each pivot block's scale (the augmented system
 * is quasi-definite, so no pivot should need it). */
#define PIVOT_TOL 1e-14
/* Joints are free variables without a barrier: their block of the augmented system gets
 * JOINT_REG * L on its diagonal, removed again by the refinement. */
#define JOINT_REG 1e-9
/* Tangential entries of a frictionless contact (the cone {g_t = 0}) are held at zero through a
 * diagonal FIXED_WEIGHT * L. */
#define FIXED_WEIGHT 1e12
#define REFINE_STEPS 10
/* Refinement stops once the scaled system's residual is below REFINE_TOL times its right-hand side
 * (rounding level: a further step changes nothing the iteration can use). */
#define REFINE_TOL 1e-14
#define STEP_FRACTION 0.99
/* The iterates are tested for a certificate once they exceed CERT_TRIGGER times their first size. */
#define CERT_TRIGGER 1e3
/* Beyond R_LIMIT times the solution's natural size no residual can be verified (core_limits.h). */
#include "core_limits.h"
/* An iterate that has not lowered the best residual for this many iterations has stalled. */
#define STALL 12
/* A step shorter than this makes no progress. */
#define MIN_STEP 1e-8

static size_t align8(size_t bytes)
{
    return (bytes + 7) & ~(size_t)7;
}

/* ---- the augmented system's block layout ---------------------------------------------------------- */

/* Blocks of 3: n_c contacts, then ceil(n_b / 3) blocks of joints, then ceil(n_v / 3) blocks of
 * velocities (padding: decoupled unit entries). */
typedef struct {
    mbdcp_int nc, nbj, nvb, nb, np, nv, nnzp, nnzm, nnzb_max;
} Layout;

static Layout layout(const MbdcpCcpProblem *p)
{
    Layout l;
    l.nc = p->n_c;
    l.nbj = (p->n_b + 2) / 3;
    l.nvb = (p->n_v + 2) / 3;
    l.nb = l.nc + l.nbj + l.nvb;
    l.np = 3 * p->n_c + p->n_b;
    l.nv = p->n_v;
    l.nnzp = l.np > 0 && p->P_colptr ? p->P_colptr[l.np] : 0;
    l.nnzm = p->M_colptr ? p->M_colptr[p->n_v] : 0;
    l.nnzb_max = l.nb + l.nnzp + l.nnzm;
    return l;
}

/* The block of column j of P (a contact or a joint block) and j's place in it. */
static mbdcp_int column_block(const Layout *l, mbdcp_int j, mbdcp_int *at)
{
    if (j < 3 * l->nc) {
        *at = j % 3;
        return j / 3;
    }
    *at = (j - 3 * l->nc) % 3;
    return l->nc + (j - 3 * l->nc) / 3;
}

/* Ints of the pattern: bptr (nb + 1), bind, perm, mark (nb), P^T's row pointers (n_v + 1) and indices,
 * the slot of each entry of P (nnz(P)). */
static size_t pattern_ints(const Layout *l)
{
    return (size_t)(l->nb + 1) + (size_t)l->nnzb_max + 2 * (size_t)l->nb + (size_t)(l->nv + 1) + 2 * (size_t)l->nnzp;
}

typedef struct {
    mbdcp_int *bptr, *bind, *perm, *mark, *ptp, *pti, *pslot;
} Pattern;

static Pattern carve_pattern(const Layout *l, mbdcp_int *in)
{
    Pattern g;
    g.bptr = in;
    g.bind = g.bptr + l->nb + 1;
    g.perm = g.bind + l->nnzb_max;
    g.mark = g.perm + l->nb;
    g.ptp = g.mark + l->nb;
    g.pti = g.ptp + l->nv + 1;
    g.pslot = g.pti + l->nnzp;
    return g;
}

/* P^T in compressed rows: the columns of P touching each velocity. */
static void transpose_P(const MbdcpCcpProblem *p, const Layout *l, mbdcp_int *ptp, mbdcp_int *pti)
{
    memset(ptp, 0, (size_t)(l->nv + 1) * sizeof(mbdcp_int));
    for (mbdcp_int k = 0; k < l->nnzp; ++k) ++ptp[p->P_rowind[k] + 1];
    for (mbdcp_int r = 0; r < l->nv; ++r) ptp[r + 1] += ptp[r];
    for (mbdcp_int j = 0; j < l->np; ++j)
        for (mbdcp_int k = p->P_colptr[j]; k < p->P_colptr[j + 1]; ++k) pti[ptp[p->P_rowind[k]]++] = j;
    for (mbdcp_int r = l->nv; r > 0; --r) ptp[r] = ptp[r - 1];
    ptp[0] = 0;
}

/* The lower block pattern in block CSR, the diagonal block first in each row: contacts' and joints'
 * rows hold their diagonal only; velocity block v's row its diagonal, the contacts and joints acting
 * on it (P) and the velocity blocks v' < v coupled by M. Returns the number of blocks. */
static mbdcp_int build_pattern(const MbdcpCcpProblem *p, const Layout *l, const Pattern *g)
{
    transpose_P(p, l, g->ptp, g->pti);
    for (mbdcp_int b = 0; b < l->nb; ++b) g->mark[b] = -1;
    mbdcp_int nnz = 0;
    for (mbdcp_int b = 0; b < l->nb; ++b) {
        g->bptr[b] = nnz;
        g->bind[nnz++] = b;
        g->mark[b] = b;
        const mbdcp_int v = b - l->nc - l->nbj;
        if (v < 0) continue;
        for (mbdcp_int r = 3 * v; r < 3 * v + 3 && r < l->nv; ++r) {
            for (mbdcp_int k = g->ptp[r]; k < g->ptp[r + 1]; ++k) {
                mbdcp_int at;
                const mbdcp_int cb = column_block(l, g->pti[k], &at);
                if (g->mark[cb] != b) {
                    g->mark[cb] = b;
                    g->bind[nnz++] = cb;
                }
            }
            for (mbdcp_int k = p->M_colptr[r]; k < p->M_colptr[r + 1]; ++k) {
                const mbdcp_int cb = l->nc + l->nbj + p->M_rowind[k] / 3;
                if (cb < b && g->mark[cb] != b) {
                    g->mark[cb] = b;
                    g->bind[nnz++] = cb;
                }
            }
        }
    }
    g->bptr[l->nb] = nnz;
    return nnz;
}

static MbdcpReturn check_M(const MbdcpCcpProblem *p)
{
    if (!p->M_colptr || !p->M_val || (p->M_colptr[p->n_v] > 0 && !p->M_rowind)) return MBDCP_ERR_NULL;
    for (mbdcp_int c = 0; c < p->n_v; ++c)
        if (p->M_colptr[c + 1] < p->M_colptr[c]) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int k = 0; k < p->M_colptr[p->n_v]; ++k)
        if (p->M_rowind[k] < 0 || p->M_rowind[k] >= p->n_v) return MBDCP_ERR_DIMENSION;
    if (!mbdcp_all_finite((size_t)p->M_colptr[p->n_v], p->M_val)) return MBDCP_ERR_NONFINITE;
    for (mbdcp_int j = 0; j < 3 * p->n_c + p->n_b; ++j)
        for (mbdcp_int k = p->P_colptr[j]; k < p->P_colptr[j + 1]; ++k)
            if (p->P_rowind[k] < 0 || p->P_rowind[k] >= p->n_v) return MBDCP_ERR_DIMENSION;
    return MBDCP_OK;
}

/* The ordering of the augmented system: the contacts and joints first, then the velocity blocks,
 * each group in the approximate minimum degree order. Eliminating the contacts (pivots I of the
 * scaled system) leaves -(M + P H^-1 P^T) on the velocities, a sum of terms of one sign whatever
 * the conditioning of H near the solution; AMD's own interleaving of contacts and bodies pivoted
 * on velocity blocks before some of their contacts, and the Schur complements then cancelled.
 * The fill stays close to AMD's: bodies are few next to their contacts. perm in g->perm; *nnz_l, *flops
 * as mbdcp_sldl_analyze's. */
static MbdcpReturn ipm_order(const Layout *l, const Pattern *g, mbdcp_int *nnz_l, mbdcp_float *flops, void *work,
                             size_t work_bytes)
{
    MbdcpReturn rc = mbdcp_sldl_analyze(l->nb, g->bptr, g->bind, g->perm, nnz_l, NULL, work, work_bytes);
    if (rc != MBDCP_OK) return rc;
    const mbdcp_int v0 = l->nc + l->nbj;
    mbdcp_int n = 0;
    for (mbdcp_int k = 0; k < l->nb; ++k)
        if (g->perm[k] < v0) g->mark[n++] = g->perm[k];
    for (mbdcp_int k = 0; k < l->nb; ++k)
        if (g->perm[k] >= v0) g->mark[n++] = g->perm[k];
    memcpy(g->perm, g->mark, (size_t)l->nb * sizeof(mbdcp_int));
    return mbdcp_sldl_count(l->nb, g->bptr, g->bind, g->perm, nnz_l, flops, work, work_bytes);
}

size_t mbdcp_ccp_factor_workspace_size(const MbdcpCcpProblem *p)
{
    if (!p || p->n_v < 1 || p->n_c < 0 || p->n_b < 0) return 0;
    const Layout l = layout(p);
    return align8(pattern_ints(&l) * sizeof(mbdcp_int)) + mbdcp_sldl_analyze_workspace_size(l.nb, l.nnzb_max) + 8;
}

MbdcpReturn mbdcp_ccp_factor_blocks(const MbdcpCcpProblem *p, mbdcp_int *blocks, mbdcp_float *flops, void *work,
                                    size_t work_bytes)
{
    if (!p || !blocks || !work) return MBDCP_ERR_NULL;
    if (p->n_v < 1 || p->n_c < 0 || p->n_b < 0) return MBDCP_ERR_DIMENSION;
    if (3 * p->n_c + p->n_b > 0 && (!p->P_colptr || (p->P_colptr[3 * p->n_c + p->n_b] > 0 && !p->P_rowind)))
        return MBDCP_ERR_NULL;
    MbdcpReturn rc = check_M(p);
    if (rc != MBDCP_OK) return rc;
    if (work_bytes < mbdcp_ccp_factor_workspace_size(p)) return MBDCP_ERR_WORKSPACE;
    const Layout l = layout(p);
    const Pattern g = carve_pattern(&l, (mbdcp_int *)work);
    build_pattern(p, &l, &g);
    void *aw = (char *)work + align8(pattern_ints(&l) * sizeof(mbdcp_int));
    mbdcp_float f = 0.0;
    rc = ipm_order(&l, &g, blocks, &f, aw, mbdcp_sldl_analyze_workspace_size(l.nb, l.nnzb_max));
    if (flops) *flops = 27.0 * 0.5 * f; /* 3 x 3 blocks, symmetric */
    return rc;
}

/* ---- the workspace ---------------------------------------------------------------------------------- */

/* Doubles: the block values (9 per block), 15 vectors of n_p, the scaling (4), lambda (3), H and F
 * (9 each) per contact, the solve's vector (3 per block), 2 of n_v. */
static size_t ipm_floats(const Layout *l)
{
    return 9 * (size_t)l->nnzb_max + 15 * (size_t)l->np + 25 * (size_t)l->nc + 3 * (size_t)l->nb + 2 * (size_t)l->nv;
}

static size_t factor_bytes(const Layout *l, mbdcp_int factor_blocks)
{
    const size_t a = mbdcp_sldl_analyze_workspace_size(l->nb, l->nnzb_max);
    const size_t f = mbdcp_sldl_workspace_size(l->nb, 3, 1, l->nnzb_max, factor_blocks);
    return a > f ? a : f;
}

size_t mbdcp_ccp_ipm_bytes(const MbdcpCcpProblem *p, mbdcp_int factor_blocks)
{
    if (!p || factor_blocks < 0 || p->n_v < 1) return 0;
    const Layout l = layout(p);
    return ipm_floats(&l) * sizeof(mbdcp_float) + align8(pattern_ints(&l) * sizeof(mbdcp_int)) +
           align8(factor_bytes(&l, factor_blocks)) + mbdcp_ccp_cert_bytes(p) + 16;
}

typedef struct {
    const CcpJudge *J;
    const MbdcpCcpProblem *p;
    Layout l;
    Pattern g;
    MbdcpSldl f;
    mbdcp_float *val, *sol, *u, *u2;
    mbdcp_float *x, *s, *rd, *dx, *ds, *dxa, *dsa, *rhs, *g_, *ref, *tmp, *best, *cand, *cv, *dh;
    mbdcp_float *nt, *lam;       /* per contact: w0, w1, w2, eta; lambda */
    mbdcp_float *H, *F;          /* per contact: H = T W^2 T and F = T^-1 W^-1 (F^T H F = I), row-major */
    mbdcp_float joint_reg, fixed, rmax, xsize;
    void *certw;                 /* mbdcp_ccp_certify's workspace */
} Ipm;

static void carve(Ipm *I, void *work)
{
    const Layout *l = &I->l;
    mbdcp_float *w = (mbdcp_float *)work;
    I->val = w;
    w += 9 * (size_t)l->nnzb_max;
    mbdcp_float **vecs[] = {&I->x, &I->s, &I->rd, &I->dx, &I->ds, &I->dxa, &I->dsa, &I->rhs, &I->g_, &I->ref,
                            &I->tmp, &I->best, &I->cand, &I->cv, &I->dh};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; ++k) {
        *vecs[k] = w;
        w += l->np;
    }
    I->nt = w;
    I->lam = I->nt + 4 * (size_t)l->nc;
    I->H = I->lam + 3 * (size_t)l->nc;
    I->F = I->H + 9 * (size_t)l->nc;
    I->sol = I->F + 9 * (size_t)l->nc;
    I->u = I->sol + 3 * (size_t)l->nb;
    I->u2 = I->u + l->nv;
    mbdcp_int *in = (mbdcp_int *)((char *)work + ipm_floats(l) * sizeof(mbdcp_float));
    I->g = carve_pattern(l, in);
}

/* The slot of block column cb in block row b (-1 if absent). */
static mbdcp_int slot(const Pattern *g, mbdcp_int b, mbdcp_int cb)
{
    for (mbdcp_int k = g->bptr[b]; k < g->bptr[b + 1]; ++k)
        if (g->bind[k] == cb) return k;
    return -1;
}

/* The constant blocks: P's (in the velocity rows), -M's, the joints' regularisation and the padding;
 * the contacts' diagonal blocks are set per iteration (set_H). */
static void fill_values(Ipm *I)
{
    const MbdcpCcpProblem *p = I->p;
    const Layout *l = &I->l;
    const Pattern *g = &I->g;
    const mbdcp_int v0 = l->nc + l->nbj;
    memset(I->val, 0, 9 * (size_t)g->bptr[l->nb] * sizeof(mbdcp_float));
    for (mbdcp_int j = 0; j < l->np; ++j) {
        mbdcp_int at;
        const mbdcp_int cb = column_block(l, j, &at);
        for (mbdcp_int k = p->P_colptr[j]; k < p->P_colptr[j + 1]; ++k) {
            const mbdcp_int r = p->P_rowind[k], s = slot(g, v0 + r / 3, cb);
            g->pslot[k] = s;
            if (j >= 3 * l->nc) I->val[9 * (size_t)s + 3 * (r % 3) + at] += p->P_val[k]; /* contacts: set_H */
        }
    }
    for (mbdcp_int i = 0; i < l->nc; ++i) {
        mbdcp_float *D = I->val + 9 * (size_t)g->bptr[i];
        D[0] = D[4] = D[8] = 1.0; /* the scaled system's contact blocks: F^T H F = I */
    }
    for (mbdcp_int c = 0; c < l->nv; ++c)
        for (mbdcp_int k = p->M_colptr[c]; k < p->M_colptr[c + 1]; ++k) {
            const mbdcp_int r = p->M_rowind[k];
            if (r / 3 > c / 3) continue;
            const mbdcp_int s = slot(g, v0 + c / 3, v0 + r / 3);
            I->val[9 * (size_t)s + 3 * (c % 3) + r % 3] = -p->M_val[k];
        }
    for (mbdcp_int r = l->nv; r < 3 * l->nvb; ++r) I->val[9 * (size_t)g->bptr[v0 + r / 3] + 4 * (r % 3)] = -1.0;
    for (mbdcp_int j = 0; j < 3 * l->nbj; ++j)
        I->val[9 * (size_t)g->bptr[l->nc + j / 3] + 4 * (j % 3)] = j < p->n_b ? I->joint_reg : 1.0;
}

/* ---- one cone -------------------------------------------------------------------------------------- */

/* A contact's vectors in the standard second-order cone's coordinates: x -> (mu x_n, x_t) (K) and
 * s -> (s_n / mu, s_t) (K*); mu > 0. */
static void to_soc(mbdcp_float mu, int dual, const mbdcp_float *v, mbdcp_float *out)
{
    out[0] = dual ? v[0] / mu : mu * v[0];
    out[1] = v[1];
    out[2] = v[2];
}

/* (u_0 - ||u_1||)(u_0 + ||u_1||), without the cancellation of u_0^2 - ||u_1||^2. */
static mbdcp_float jnorm2(const mbdcp_float *u)
{
    const mbdcp_float n = hypot(u[1], u[2]);
    return (u[0] - n) * (u[0] + n);
}

/* The Nesterov-Todd scaling W of x, s in the interior of the cone: w (4) = (wbar, eta) with
 * W = eta [[w0, w1^T], [w1, I + w1 w1^T / (1 + w0)]], W x = W^-1 s (Vandenberghe 2010, sec. 4.3).
 * 0 when x or s is not interior. */
static int nt_scaling(const mbdcp_float *x, const mbdcp_float *s, mbdcp_float *w, mbdcp_float *lam)
{
    const mbdcp_float a2 = jnorm2(x), b2 = jnorm2(s);
    if (!(a2 > 0.0 && b2 > 0.0 && x[0] > 0.0 && s[0] > 0.0)) return 0;
    const mbdcp_float a = sqrt(a2), b = sqrt(b2);
    mbdcp_float xb[3], sb[3];
    for (int k = 0; k < 3; ++k) {
        xb[k] = x[k] / a;
        sb[k] = s[k] / b;
    }
    const mbdcp_float gam = sqrt(0.5 * (1.0 + xb[0] * sb[0] + xb[1] * sb[1] + xb[2] * sb[2]));
    w[0] = (sb[0] + xb[0]) / (2.0 * gam);
    w[1] = (sb[1] - xb[1]) / (2.0 * gam);
    w[2] = (sb[2] - xb[2]) / (2.0 * gam);
    w[3] = sqrt(b / a);
    /* lambda = W x from the normalised vectors (Vandenberghe 2010, sec. 4.3), not by applying W:
     * W's entries grow as the iterates near the boundary and W x would cancel */
    const mbdcp_float sab = sqrt(a * b), den = sb[0] + xb[0] + 2.0 * gam;
    lam[0] = sab * gam;
    for (int k = 1; k < 3; ++k) lam[k] = sab * ((gam + xb[0]) * sb[k] + (gam + sb[0]) * xb[k]) / den;
    return isfinite(w[0] + w[1] + w[2] + w[3] + lam[0] + lam[1] + lam[2]);
}

/* out = W v, or W^-1 v (inverse). */
static void nt_apply(const mbdcp_float *w, int inverse, const mbdcp_float *v, mbdcp_float *out)
{
    const mbdcp_float sg = inverse ? -1.0 : 1.0, d = w[1] * v[1] + w[2] * v[2], eta = inverse ? 1.0 / w[3] : w[3];
    const mbdcp_float c = d / (1.0 + w[0]);
    out[0] = eta * (w[0] * v[0] + sg * d);
    out[1] = eta * (sg * w[1] * v[0] + v[1] + c * w[1]);
    out[2] = eta * (sg * w[2] * v[0] + v[2] + c * w[2]);
}

/* u o v, the Jordan product of the second-order cone. */
static void jordan(const mbdcp_float *u, const mbdcp_float *v, mbdcp_float *out)
{
    out[0] = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    out[1] = u[0] * v[1] + v[0] * u[1];
    out[2] = u[0] * v[2] + v[0] * u[2];
}

/* z with lam o z = r. */
static void jordan_solve(const mbdcp_float *lam, const mbdcp_float *r, mbdcp_float *z)
{
    const mbdcp_float det = jnorm2(lam);
    z[0] = (lam[0] * r[0] - lam[1] * r[1] - lam[2] * r[2]) / det;
    z[1] = (r[1] - z[0] * lam[1]) / lam[0];
    z[2] = (r[2] - z[0] * lam[2]) / lam[0];
}

/* The largest step t with u + t d in the cone (u interior), INFINITY if unbounded: the first
 * positive root of (u0 + t d0)^2 - ||u1 + t d1||^2. */
static mbdcp_float soc_step(const mbdcp_float *u, const mbdcp_float *d)
{
    if (d[0] >= hypot(d[1], d[2])) return INFINITY;
    const mbdcp_float a = jnorm2(d), b = u[0] * d[0] - u[1] * d[1] - u[2] * d[2], c = jnorm2(u);
    if (!(c > 0.0)) return 0.0;
    if (a == 0.0) return b < 0.0 ? -c / (2.0 * b) : INFINITY;
    const mbdcp_float disc = b * b - a * c;
    if (disc < 0.0) return d[0] < 0.0 ? -u[0] / d[0] : INFINITY;
    const mbdcp_float q = -(b + copysign(sqrt(disc), b));
    mbdcp_float t = INFINITY;
    const mbdcp_float r1 = q / a, r2 = q != 0.0 ? c / q : INFINITY;
    if (r1 > 0.0) t = fmin(t, r1);
    if (r2 > 0.0) t = fmin(t, r2);
    return t;
}

/* ---- the Newton system ----------------------------------------------------------------------------- */

/* A contact is solved as frictionless when mu <= DBL_EPSILON: its cone differs from the ray by
 * less than rounding, and the standard cone's coordinates (mu g_n, g_t), (d_n / mu, d_t) would
 * overflow for a subnormal mu. The answer is still judged with the contact's own mu. */
static int frictionless(const Ipm *I, mbdcp_int i)
{
    return !(I->p->mu[i] > DBL_EPSILON);
}

/* The contacts' columns of the scaled system's off-diagonal blocks: P_i F_i. */
static void scaled_P(Ipm *I)
{
    const MbdcpCcpProblem *p = I->p;
    const mbdcp_int end = p->P_colptr[3 * I->l.nc];
    for (mbdcp_int k = 0; k < end; ++k) memset(I->val + 9 * (size_t)I->g.pslot[k], 0, 9 * sizeof(mbdcp_float));
    for (mbdcp_int j = 0; j < 3 * I->l.nc; ++j) {
        const mbdcp_float *F = I->F + 9 * (size_t)(j / 3) + 3 * (j % 3);
        for (mbdcp_int k = p->P_colptr[j]; k < p->P_colptr[j + 1]; ++k) {
            mbdcp_float *B = I->val + 9 * (size_t)I->g.pslot[k] + 3 * (p->P_rowind[k] % 3);
            for (int c = 0; c < 3; ++c) B[c] += p->P_val[k] * F[c];
        }
    }
}

/* The scaling of every contact at (x, s) and H = T W^2 T into its diagonal block (T = diag(mu, 1, 1));
 * a frictionless contact: the scalar cone of its normal, its tangents held. 0 if a point is not
 * interior. */
static int set_H(Ipm *I)
{
    for (mbdcp_int i = 0; i < I->l.nc; ++i) {
        mbdcp_float *H = I->H + 9 * (size_t)i, *F = I->F + 9 * (size_t)i, *w = I->nt + 4 * i, *lam = I->lam + 3 * i;
        const mbdcp_float *x = I->x + 3 * i, *s = I->s + 3 * i;
        memset(H, 0, 9 * sizeof(mbdcp_float));
        memset(F, 0, 9 * sizeof(mbdcp_float));
        if (frictionless(I, i)) {
            if (!(x[0] > 0.0 && s[0] > 0.0)) return 0;
            w[3] = sqrt(s[0] / x[0]);
            lam[0] = sqrt(x[0] * s[0]);
            H[0] = s[0] / x[0];
            H[4] = H[8] = I->fixed;
            F[0] = 1.0 / w[3];
            F[4] = F[8] = 1.0 / sqrt(I->fixed);
            continue;
        }
        const mbdcp_float mu = I->p->mu[i], t[3] = {mu, 1.0, 1.0};
        mbdcp_float xs[3], ss[3];
        to_soc(mu, 0, x, xs);
        to_soc(mu, 1, s, ss);
        if (!nt_scaling(xs, ss, w, lam)) return 0;
        const mbdcp_float e2 = w[3] * w[3];
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) {
                const mbdcp_float jab = a == b ? (a == 0 ? 1.0 : -1.0) : 0.0;
                H[3 * a + b] = t[a] * t[b] * e2 * (2.0 * w[a] * w[b] - jab);
                /* W^-1 = (1 / eta) [[w0, -w1^T], [-w1, I + w1 w1^T / (1 + w0)]] */
                const mbdcp_float wi = a == 0 && b == 0 ? w[0]
                                       : (a == 0 || b == 0) ? -w[a + b]
                                                            : (a == b) + w[a] * w[b] / (1.0 + w[0]);
                F[3 * a + b] = wi / (w[3] * t[a]);
            }
    }
    scaled_P(I);
    return 1;
}

/* F_i^T v (3 numbers). */
static void apply_Ft(const mbdcp_float *F, const mbdcp_float *v, mbdcp_float *out)
{
    for (int c = 0; c < 3; ++c) out[c] = F[c] * v[0] + F[3 + c] * v[1] + F[6 + c] * v[2];
}

/* The scaled Newton system (F^T N F + I) dxh = rhs, dx = F dxh, is what is factored (its contact
 * blocks are the identity whatever the conditioning of H). Its right-hand side per contact:
 * c - F^T rd with c = lam \ rc, rc = -lam o lam + sm e - (W dxa) o (W^-1 dsa) (without the last
 * term when !corrector), c kept in I->cv; -rd on joints. */
static void build_rhs(Ipm *I, mbdcp_float sm, int corrector)
{
    for (mbdcp_int i = 0; i < I->l.nc; ++i) {
        const mbdcp_float *w = I->nt + 4 * i, *lam = I->lam + 3 * i, *rd = I->rd + 3 * i, *F = I->F + 9 * (size_t)i;
        mbdcp_float *r = I->rhs + 3 * i, *c = I->cv + 3 * i;
        if (frictionless(I, i)) {
            mbdcp_float rc = -lam[0] * lam[0] + sm;
            if (corrector) rc -= I->dxa[3 * i] * I->dsa[3 * i];
            c[0] = rc / lam[0];
            c[1] = c[2] = 0.0;
            r[0] = c[0] - rd[0] / w[3];
            r[1] = r[2] = 0.0;
            continue;
        }
        const mbdcp_float mu = I->p->mu[i];
        mbdcp_float rc[3], frd[3];
        jordan(lam, lam, rc);
        for (int a = 0; a < 3; ++a) rc[a] = -rc[a];
        rc[0] += sm;
        if (corrector) {
            mbdcp_float a1[3], a2[3], v[3], prod[3];
            to_soc(mu, 0, I->dxa + 3 * i, v);
            nt_apply(w, 0, v, a1);
            to_soc(mu, 1, I->dsa + 3 * i, v);
            nt_apply(w, 1, v, a2);
            jordan(a1, a2, prod);
            for (int a = 0; a < 3; ++a) rc[a] -= prod[a];
        }
        jordan_solve(lam, rc, c);
        apply_Ft(F, rd, frd);
        for (int a = 0; a < 3; ++a) r[a] = c[a] - frd[a];
    }
    for (mbdcp_int j = 3 * I->l.nc; j < I->l.np; ++j) I->rhs[j] = -I->rd[j];
}

/* dxh += the solution of the factored system for the right-hand side b (n_p). */
static MbdcpReturn solve_add(Ipm *I, const mbdcp_float *b, mbdcp_float *dxh)
{
    const Layout *l = &I->l;
    memset(I->sol, 0, 3 * (size_t)l->nb * sizeof(mbdcp_float));
    memcpy(I->sol, b, (size_t)l->np * sizeof(mbdcp_float));
    MbdcpReturn rc = mbdcp_sldl_solve(&I->f, I->sol);
    if (rc != MBDCP_OK) return rc;
    for (mbdcp_int j = 0; j < l->np; ++j) dxh[j] += I->sol[j];
    return MBDCP_OK;
}

/* dx = F dxh (contacts; joints as they are). */
static void unscale(const Ipm *I, const mbdcp_float *dxh, mbdcp_float *dx)
{
    for (mbdcp_int i = 0; i < I->l.nc; ++i) {
        const mbdcp_float *F = I->F + 9 * (size_t)i, *y = dxh + 3 * i;
        for (int a = 0; a < 3; ++a) dx[3 * i + a] = F[3 * a] * y[0] + F[3 * a + 1] * y[1] + F[3 * a + 2] * y[2];
    }
    for (mbdcp_int j = 3 * I->l.nc; j < I->l.np; ++j) dx[j] = dxh[j];
}

/* res = rhs - (F^T N F + I) dxh (joints: rhs - N dxh, without the factor's regularisation), dx =
 * F dxh on the way; returns ||res||_inf. */
static mbdcp_float newton_residual(Ipm *I, const mbdcp_float *dxh, mbdcp_float *dx, mbdcp_float *res)
{
    unscale(I, dxh, dx);
    mbdcp_ccp_apply_N(I->J, dx, I->u2, I->tmp);
    mbdcp_float r = 0.0;
    for (mbdcp_int i = 0; i < I->l.nc; ++i) {
        mbdcp_float ft[3];
        apply_Ft(I->F + 9 * (size_t)i, I->tmp + 3 * i, ft);
        for (int a = 0; a < 3; ++a) {
            const mbdcp_int j = 3 * i + a;
            res[j] = I->rhs[j] - ft[a] - dxh[j];
        }
    }
    for (mbdcp_int j = 3 * I->l.nc; j < I->l.np; ++j) res[j] = I->rhs[j] - I->tmp[j];
    for (mbdcp_int j = 0; j < I->l.np; ++j) r = fmax(r, fabs(res[j]));
    return r;
}

/* dxh: the scaled system's solution for I->rhs, refined; dx = F dxh. */
static MbdcpReturn refined_solve(Ipm *I, mbdcp_float *dxh, mbdcp_float *dx)
{
    memset(dxh, 0, (size_t)I->l.np * sizeof(mbdcp_float));
    MbdcpReturn rc = solve_add(I, I->rhs, dxh);
    mbdcp_float prev = INFINITY;
    const mbdcp_float enough = REFINE_TOL * mbdcp_norm_inf((size_t)I->l.np, I->rhs);
    for (int k = 0; k < REFINE_STEPS && rc == MBDCP_OK; ++k) {
        const mbdcp_float r = newton_residual(I, dxh, dx, I->ref);
        if (!(r < 0.5 * prev) || r <= enough) break;
        prev = r;
        rc = solve_add(I, I->ref, dxh);
    }
    unscale(I, dxh, dx);
    return rc;
}

/* The direction from the scaled system with refinement: dx = F dxh, and ds from the linearised
 * complementarity, W^-1 T^-1 ds = c - dxh (exact in the scaled variables; what the solve leaves
 * over shows up as infeasibility, which the next iteration removes); 0 on joints. */
static MbdcpReturn newton_direction(Ipm *I, mbdcp_float *dx, mbdcp_float *ds)
{
    mbdcp_float *dxh = I->dh;
    MbdcpReturn rc = refined_solve(I, dxh, dx);
    for (mbdcp_int i = 0; i < I->l.nc; ++i) {
        const mbdcp_float *w = I->nt + 4 * i, *c = I->cv + 3 * i, *h = dxh + 3 * i;
        mbdcp_float *d = ds + 3 * i;
        if (frictionless(I, i)) {
            dx[3 * i + 1] = dx[3 * i + 2] = 0.0;
            d[0] = w[3] * (c[0] - h[0]);
            d[1] = d[2] = 0.0;
            continue;
        }
        const mbdcp_float v[3] = {c[0] - h[0], c[1] - h[1], c[2] - h[2]};
        nt_apply(w, 0, v, d);
        d[0] *= I->p->mu[i];
    }
    for (mbdcp_int j = 3 * I->l.nc; j < I->l.np; ++j) ds[j] = 0.0;
    if (rc == MBDCP_OK && !mbdcp_all_finite((size_t)I->l.np, dx)) rc = MBDCP_ERR_NONFINITE;
    return rc;
}

/* The largest step keeping x + t dx in K and s + t ds in K*. */
static mbdcp_float max_step(const Ipm *I, const mbdcp_float *dx, const mbdcp_float *ds)
{
    mbdcp_float t = INFINITY;
    for (mbdcp_int i = 0; i < I->l.nc; ++i) {
        const mbdcp_float *x = I->x + 3 * i, *s = I->s + 3 * i;
        if (frictionless(I, i)) {
            if (dx[3 * i] < 0.0) t = fmin(t, -x[0] / dx[3 * i]);
            if (ds[3 * i] < 0.0) t = fmin(t, -s[0] / ds[3 * i]);
            continue;
        }
        const mbdcp_float mu = I->p->mu[i];
        mbdcp_float a[3], b[3];
        to_soc(mu, 0, x, a);
        to_soc(mu, 0, dx + 3 * i, b);
        t = fmin(t, soc_step(a, b));
        to_soc(mu, 1, s, a);
        to_soc(mu, 1, ds + 3 * i, b);
        t = fmin(t, soc_step(a, b));
    }
    return t;
}

/* sum over contacts of x_i . s_i (in any coordinates: the scaling cancels). */
static mbdcp_float gap_at(const Ipm *I, mbdcp_float t, const mbdcp_float *dx, const mbdcp_float *ds)
{
    mbdcp_float sum = 0.0;
    for (mbdcp_int i = 0; i < I->l.nc; ++i) {
        const mbdcp_int w = frictionless(I, i) ? 1 : 3;
        for (mbdcp_int a = 0; a < w; ++a) {
            const mbdcp_int j = 3 * i + a;
            sum += (I->x[j] + t * (dx ? dx[j] : 0.0)) * (I->s[j] + t * (ds ? ds[j] : 0.0));
        }
    }
    return sum;
}

/* g = N x + p, rd = g - s on contacts and g on joints (s = 0 there). */
static void residuals(Ipm *I)
{
    const MbdcpCcpProblem *p = I->p;
    mbdcp_ccp_apply_N(I->J, I->x, I->u, I->g_);
    for (mbdcp_int j = 0; j < I->l.np; ++j) {
        I->g_[j] += p->p[j];
        I->rd[j] = j < 3 * I->l.nc ? I->g_[j] - I->s[j] : I->g_[j];
    }
    for (mbdcp_int i = 0; i < I->l.nc; ++i)
        if (frictionless(I, i)) I->rd[3 * i + 1] = I->rd[3 * i + 2] = 0.0;
}

/* ---- start -------------------------------------------------------------------------------------- */

/* lambda_min of a contact's x (primal) or s (dual) in the standard cone's coordinates. */
static mbdcp_float lam_min(const Ipm *I, mbdcp_int i, int dual, const mbdcp_float *v)
{
    if (frictionless(I, i)) return v[0];
    mbdcp_float a[3];
    to_soc(I->p->mu[i], dual, v, a);
    return a[0] - hypot(a[1], a[2]);
}

/* v += t e per contact, e the identity of the standard cone mapped back (x: (1/mu, 0, 0); s: (mu, 0, 0)). */
static void shift(const Ipm *I, int dual, mbdcp_float t, mbdcp_float *v)
{
    for (mbdcp_int i = 0; i < I->l.nc; ++i) {
        const mbdcp_float mu = I->p->mu[i];
        v[3 * i] += frictionless(I, i) ? t : (dual ? t * mu : t / mu);
    }
}

/* A cold start: x = -(N + L E)^-1 p (E: the contacts' entries; the frictionless contacts'
 * tangents held at 0), the minimiser of the objective plus L/2 |x_contacts|^2, for which s = N x + p
 * = -L x on the contacts: both sides of the complementarity start from one point, as in
 * Vandenberghe's (2010) start for cone QPs. The scaled system with F = E / sqrt(L) (H = L E). */
static MbdcpReturn least_squares_start(Ipm *I)
{
    const mbdcp_float f = 1.0 / sqrt(I->J->L), ft = 1.0 / sqrt(I->fixed);
    for (mbdcp_int i = 0; i < I->l.nc; ++i) {
        mbdcp_float *F = I->F + 9 * (size_t)i;
        memset(F, 0, 9 * sizeof(mbdcp_float));
        F[0] = f;
        F[4] = F[8] = frictionless(I, i) ? ft : f;
        for (int a = 0; a < 3; ++a) I->rhs[3 * i + a] = -F[4 * a] * I->p->p[3 * i + a];
    }
    for (mbdcp_int j = 3 * I->l.nc; j < I->l.np; ++j) I->rhs[j] = -I->p->p[j];
    scaled_P(I);
    MbdcpReturn rc = mbdcp_sldl_factor(&I->f, I->val, PIVOT_TOL);
    if (rc == MBDCP_OK) rc = refined_solve(I, I->dh, I->x);
    if (rc == MBDCP_OK && !mbdcp_all_finite((size_t)I->l.np, I->x)) rc = MBDCP_ERR_NONFINITE;
    for (mbdcp_int i = 0; i < I->l.nc; ++i)
        if (frictionless(I, i)) I->x[3 * i + 1] = I->x[3 * i + 2] = 0.0;
    return rc;
}

/* Mehrotra's (1992) start, from the warm start x (or the least-squares start, or 0) and s = N x +
 * p: both shifted into the interior by at least a floor, then by the amounts that balance x^T s. */
static MbdcpReturn start(Ipm *I, int warm)
{
    const Layout *l = &I->l;
    if (!warm) {
        const MbdcpReturn rc = least_squares_start(I);
        if (rc != MBDCP_OK && rc != MBDCP_ERR_NONFINITE) return rc;
        if (rc != MBDCP_OK) memset(I->x, 0, (size_t)l->np * sizeof(mbdcp_float));
    }
    memset(I->s, 0, (size_t)l->np * sizeof(mbdcp_float));
    residuals(I);
    memcpy(I->s, I->g_, 3 * (size_t)l->nc * sizeof(mbdcp_float));
    const mbdcp_float xi_x = I->J->pnorm / I->J->L, xi_s = I->J->pnorm;
    mbdcp_float ax = 0.0, as = 0.0, mux = 0.0;
    for (mbdcp_int i = 0; i < l->nc; ++i) {
        ax = fmax(ax, -lam_min(I, i, 0, I->x + 3 * i));
        as = fmax(as, -lam_min(I, i, 1, I->s + 3 * i));
        mux = fmax(mux, I->p->mu[i]);
    }
    const mbdcp_float fx = 1e-2 * xi_x * (mux > 0.0 ? mux : 1.0), fs = 1e-2 * xi_s;
    shift(I, 0, fmax(1.5 * ax, fx), I->x);
    shift(I, 1, fmax(1.5 * as, fs), I->s);
    mbdcp_float sx = 0.0, ss = 0.0; /* sums of the first coordinates in the standard cone */
    for (mbdcp_int i = 0; i < l->nc; ++i) {
        const mbdcp_float mu = frictionless(I, i) ? 1.0 : I->p->mu[i];
        sx += mu * I->x[3 * i];
        ss += I->s[3 * i] / mu;
    }
    const mbdcp_float xs = gap_at(I, 0.0, NULL, NULL);
    if (sx > 0.0 && ss > 0.0) {
        shift(I, 0, 0.5 * xs / ss, I->x);
        shift(I, 1, 0.5 * xs / sx, I->s);
    }
    residuals(I);
    return MBDCP_OK;
}

/* ---- certificates ---------------------------------------------------------------------------------- */

/* The iterate x, then the last direction dx, as the direction along which a certificate is sought
 * (ccp_cert.c: its support driven to P d = 0 exactly, each d_i in K_i, p.d < 0, checked on all of P);
 * into cand, 1 when one certifies. A bound on the solutions' size (-N d near K*, -p.d large) is not
 * a proof that none exists: a problem whose impulses are large would be called infeasible. */
static int find_certificate(Ipm *I)
{
    const mbdcp_float *dir[2] = {I->x, I->dx};
    for (int t = 0; t < 2; ++t) {
        memcpy(I->ref, dir[t], (size_t)I->l.np * sizeof(mbdcp_float)); /* projected in place by certify */
        if (mbdcp_ccp_certify(I->p, I->ref, I->cand, I->certw)) return 1;
    }
    return 0;
}

/* ---- the iteration ----------------------------------------------------------------------------- */

/* One predictor-corrector iteration from (x, s); 0 when it cannot continue (not interior). */
static MbdcpReturn iterate(Ipm *I, int *ok)
{
    const Layout *l = &I->l;
    *ok = 0;
    if (!set_H(I)) return MBDCP_OK;
    MbdcpReturn rc = mbdcp_sldl_factor(&I->f, I->val, PIVOT_TOL);
    if (rc == MBDCP_ERR_NONFINITE) return MBDCP_OK;
    if (rc != MBDCP_OK) return rc;
    const mbdcp_float ncones = l->nc > 0 ? (mbdcp_float)l->nc : 1.0, mu = gap_at(I, 0.0, NULL, NULL) / ncones;
    build_rhs(I, 0.0, 0);
    rc = newton_direction(I, I->dxa, I->dsa);
    if (rc == MBDCP_ERR_NONFINITE) return MBDCP_OK;
    if (rc != MBDCP_OK) return rc;
    const mbdcp_float ta = fmin(1.0, max_step(I, I->dxa, I->dsa));
    const mbdcp_float mua = gap_at(I, ta, I->dxa, I->dsa) / ncones;
    const mbdcp_float ratio = mu > 0.0 ? fmax(mua / mu, 0.0) : 0.0, sigma = ratio * ratio * ratio;
    build_rhs(I, sigma * mu, 1);
    rc = newton_direction(I, I->dx, I->ds);
    if (rc == MBDCP_ERR_NONFINITE) return MBDCP_OK;
    if (rc != MBDCP_OK) return rc;
    const mbdcp_float t = fmin(1.0, STEP_FRACTION * max_step(I, I->dx, I->ds));
    if (!(t > MIN_STEP)) return MBDCP_OK; /* no progress: the linear algebra has run out of precision */
    for (mbdcp_int j = 0; j < l->np; ++j) {
        I->x[j] += t * I->dx[j];
        I->s[j] += t * I->ds[j];
    }
    residuals(I);
    *ok = 1;
    return MBDCP_OK;
}

typedef struct {
    mbdcp_float best;
    mbdcp_int best_k;
} Track;

/* After iteration k: the answer's residual, the best iterate, a certificate, divergence. 1 to stop
 * (run->status set). */
static int judge(Ipm *I, mbdcp_int k, mbdcp_int first, Track *tr, CcpIpmRun *run)
{
    const CcpJudge *J = I->J;
    const mbdcp_float nw = mbdcp_ccp_normwise_residual(J, I->x, I->g_);
    run->iterations = k + 1;
    if (mbdcp_monitor_call(&J->s->monitor, first + k + 1, -1, -1, nw)) {
        run->status = MBDCP_INTERRUPTED;
        return 1;
    }
    const mbdcp_float res = nw <= J->s->tol ? mbdcp_ccp_answer_residual(J, I->x, I->g_) : nw;
    if (res < tr->best) {
        tr->best = res;
        tr->best_k = k;
        memcpy(I->best, I->x, (size_t)I->l.np * sizeof(mbdcp_float));
    }
    if (res <= J->s->tol) {
        run->status = MBDCP_SOLVED;
        return 1;
    }
    const mbdcp_float xn = mbdcp_norm_inf((size_t)I->l.np, I->x);
    if (xn > CERT_TRIGGER * I->xsize && find_certificate(I)) {
        run->status = MBDCP_RAY_TERMINATION;
        run->certificate = MBDCP_CCP_CERT_DIRECTION;
        return 1;
    }
    if (!(xn <= I->rmax)) {
        run->status = MBDCP_RAY_TERMINATION;
        run->certificate = MBDCP_CCP_DIVERGED;
        return 1;
    }
    return k - tr->best_k > STALL && !(res < 1e3 * J->s->tol) ? (run->status = MBDCP_NUMERICAL_ERROR, 1) : 0;
}

/* The pattern, the ordering and the symbolic factor in the workspace. */
static MbdcpReturn ipm_setup(Ipm *I, const CcpJudge *J, void *work, size_t work_bytes)
{
    I->J = J;
    I->p = J->p;
    I->l = layout(J->p);
    if (work_bytes < mbdcp_ccp_ipm_bytes(J->p, J->s->factor_blocks)) return MBDCP_ERR_WORKSPACE;
    MbdcpReturn rc = check_M(J->p);
    if (rc != MBDCP_OK) return rc;
    carve(I, work);
    build_pattern(I->p, &I->l, &I->g);
    void *fw = (char *)work + ipm_floats(&I->l) * sizeof(mbdcp_float) + align8(pattern_ints(&I->l) * sizeof(mbdcp_int));
    const size_t fbytes = factor_bytes(&I->l, J->s->factor_blocks);
    mbdcp_int nnz_l = 0;
    rc = ipm_order(&I->l, &I->g, &nnz_l, NULL, fw, fbytes);
    if (rc != MBDCP_OK) return rc;
    if (nnz_l > J->s->factor_blocks) return MBDCP_ERR_WORKSPACE;
    rc = mbdcp_sldl_init(&I->f, I->l.nb, 3, 1, I->g.bptr, I->g.bind, I->g.perm, nnz_l, fw, fbytes);
    if (rc != MBDCP_OK) return rc;
    I->certw = (char *)fw + align8(fbytes);
    I->joint_reg = JOINT_REG * J->L;
    I->fixed = FIXED_WEIGHT * J->L;
    fill_values(I);
    return MBDCP_OK;
}

MbdcpReturn mbdcp_ccp_ipm_run(const CcpJudge *J, mbdcp_int max_iter, mbdcp_int first_iteration, int warm,
                              mbdcp_float *nu, mbdcp_float *u, mbdcp_float *g, CcpIpmRun *run, void *work,
                              size_t work_bytes)
{
    Ipm I;
    run->status = MBDCP_MAX_ITERATIONS;
    run->iterations = 0;
    run->certificate = MBDCP_CCP_NO_CERTIFICATE;
    MbdcpReturn rc = ipm_setup(&I, J, work, work_bytes);
    if (rc != MBDCP_OK) return rc;
    const mbdcp_int np_ = I.l.np;
    if (warm) memcpy(I.x, nu, (size_t)np_ * sizeof(mbdcp_float));
    rc = start(&I, warm);
    if (rc != MBDCP_OK) return rc;
    I.xsize = fmax(mbdcp_norm_inf((size_t)np_, I.x), J->pnorm / J->L);
    I.rmax = R_LIMIT * I.xsize;
    Track tr = {INFINITY, 0};
    memcpy(I.best, I.x, (size_t)np_ * sizeof(mbdcp_float));
    for (mbdcp_int k = 0; k < max_iter; ++k) {
        int ok;
        rc = iterate(&I, &ok);
        if (rc != MBDCP_OK) return rc;
        if (!ok) {
            run->status = MBDCP_NUMERICAL_ERROR;
            break;
        }
        if (judge(&I, k, first_iteration, &tr, run)) break;
    }
    const int cert = run->status == MBDCP_RAY_TERMINATION && run->certificate == MBDCP_CCP_CERT_DIRECTION;
    memcpy(nu, cert ? I.cand : (run->status == MBDCP_SOLVED ? I.x : I.best), (size_t)np_ * sizeof(mbdcp_float));
    if (!cert)
        for (mbdcp_int i = 0; i < I.l.nc; ++i) mbdcp_cone_project(J->p->mu[i], nu + 3 * i);
    mbdcp_ccp_apply_N(J, nu, u, g);
    for (mbdcp_int j = 0; j < np_; ++j) g[j] += J->p->p[j];
    return MBDCP_OK;
}
