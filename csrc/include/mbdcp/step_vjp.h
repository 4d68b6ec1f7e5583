/*
 * step_vjp.h - the reverse-mode derivative (vector-Jacobian product) of one plain time step of
 * step.h (the Stewart-Trinkle / Anitescu-Potra LCP without joints, joint friction or moving
 * surfaces; Trinkle 2003, eqs. 25-38) at its solution, by the implicit function theorem on the
 * solution's active set.
 *
 * It is the reverse mode of the Python layer's mbdcp.derivatives.step for the points where that
 * derivative is one linear system: contacts separated, sliding or sticking, decided with the same
 * relative thresholds, the imposed velocity rows independent (the sticking rows picked as a
 * pivoted QR picks them: the largest residual norm first). Everything else is not decided here
 * (an outcome other than MBDCP_VJP_DECIDED, no gradient written) and is left to the full
 * derivative, which names the contacts of a degenerate point or raises: a degenerate point, a
 * contact without friction, directions whose span needs a linear program, a dependent imposed row
 * (an impulse the full derivative would hold at its value), a tie between two candidate rows, a
 * system near singular.
 */
#ifndef MBDCP_STEP_VJP_H
#define MBDCP_STEP_VJP_H

#include "step.h"

/* The thresholds of the step's derivative, defined here once for its three rules: this core,
 * mbdcp.derivatives.step (the reference, every step) and the JAX rule of mbdcp.jax (plain steps,
 * off the CPU), which read them from the compiled extension.
 *
 * Rank decisions: a sticking row is independent of those kept before when its residual norm
 * exceeds MBDCP_VJP_RANK_CUT times its block's largest column norm, that norm taken at least
 * MBDCP_VJP_NORM_FLOOR (a pivoted QR's rank decision); two residual norms within MBDCP_VJP_TIE
 * (relative) are a tie that a pivoted QR may break either way; the pivots' spread only bounds the
 * condition number, so it must clear rcond_min by the factor MBDCP_VJP_MARGIN. */
#define MBDCP_VJP_RANK_CUT 1e-9
#define MBDCP_VJP_NORM_FLOOR 1e-300
#define MBDCP_VJP_TIE 1e-9
#define MBDCP_VJP_MARGIN 1e3

/* The settings' defaults (mbdcp_step_vjp_default_settings), which are also those of every
 * derivative of the Python layer (mbdcp.derivatives: lcp, step, ccp): a complementary pair is
 * zero below MBDCP_DEGENERATE_TOL times its scale (the option degenerate_tol); a system whose
 * reciprocal condition number (or pivots' spread) is below MBDCP_RCOND_MIN is near singular; two
 * friction directions are opposite when their sum is below MBDCP_OPPOSITE_RTOL times their largest
 * entry (also mbdcp.infrastructure.validate.OPPOSITE_RTOL). */
#define MBDCP_DEGENERATE_TOL 1e-9
#define MBDCP_RCOND_MIN 1e-13
#define MBDCP_OPPOSITE_RTOL 1e-12

/* A step's outputs v_next (n_v), p_n (n_c), beta (m), sigma (n_c): its solution, or their
 * cotangents (the output gradients; NULL: zero). */
typedef struct {
    const mbdcp_float *v_next, *p_n, *beta, *sigma;
} MbdcpStepVectors;

typedef struct {
    mbdcp_float degenerate_tol; /* an impulse (a velocity) below it times the step's impulse
                                   (the contact's velocity) scale is zero */
    mbdcp_float rcond_min;      /* a system whose pivots spread more than its inverse is left */
    mbdcp_float opposite_rtol;  /* two directions whose sum is below it times their largest entry
                                   are opposite */
    int geometry;               /* 1: the gradients in psi_n, Wn or D are wanted; a candidate
                                   direction dropped as dependent on other contacts' rows (not only
                                   on its own contact's kept directions) is then left to the full
                                   derivative, which names the contacts: those gradients hold a
                                   dependence that a change of one gap or direction breaks */
} MbdcpStepVjpSettings;

/* The input gradients: M (symmetric), Wn, D when not NULL; the others always. */
typedef struct {
    mbdcp_float *M, *Wn, *D;           /* n_v x n_v, n_v x n_c, n_v x m, or NULL */
    mbdcp_float *v, *p_ext, *mu, *psi_n; /* n_v, n_v, n_c, n_c */
    mbdcp_float h;
} MbdcpStepGradients;

typedef enum {
    MBDCP_VJP_DECIDED = 0,    /* the gradients are written */
    MBDCP_VJP_DEGENERATE = 1, /* a kink: grazing, stick-slip, a slip between directions, a sigma tie */
    MBDCP_VJP_SPECIAL = 2,    /* mu = 0 in contact, sliding without a free direction, sticking
                                 directions whose positive span needs a linear program */
    MBDCP_VJP_DEPENDENT = 3,  /* a sticking row dependent on the others, a tie choosing them, or
                                 (settings.geometry) a candidate tied to other contacts' rows */
    MBDCP_VJP_SINGULAR = 4    /* M not positive definite, the system near singular, a gradient not finite */
} MbdcpStepVjpOutcome;

/* Fill s with the defaults: MBDCP_DEGENERATE_TOL, MBDCP_RCOND_MIN, MBDCP_OPPOSITE_RTOL, geometry 0. */
MbdcpReturn mbdcp_step_vjp_default_settings(MbdcpStepVjpSettings *s);

/* Bytes of workspace for a step of these sizes (0 for negative sizes). */
size_t mbdcp_step_vjp_workspace_size(mbdcp_int n_v, mbdcp_int n_c, mbdcp_int m);

/* The gradients g of sum <c_k, output_k> at the solution x of the plain step p (no joints or
 * joint friction: n_b = m_j = n_j = 0; no moving surfaces: dpsi_n and dpsi_f NULL), or an outcome
 * saying why not (see above). The step is checked as mbdcp_step_solve checks it (its errors);
 * MBDCP_ERR_DATA for a step that is not plain. */
MbdcpReturn mbdcp_step_vjp(const MbdcpStepProblem *p, const MbdcpStepVectors *x, const MbdcpStepVectors *c,
                           const MbdcpStepVjpSettings *s, MbdcpStepGradients *g, MbdcpStepVjpOutcome *outcome,
                           void *work, size_t work_bytes);

#endif /* MBDCP_STEP_VJP_H */
