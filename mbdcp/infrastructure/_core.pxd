# Declarations of the mbdcp C core (csrc/include/mbdcp/mbdcp.h); nothing else.
from libc.stdint cimport int64_t

cdef extern from "mbdcp/mbdcp.h" nogil:
    ctypedef double mbdcp_float
    ctypedef int mbdcp_int

    ctypedef enum MbdcpReturn:
        MBDCP_OK
        MBDCP_ERR_NULL
        MBDCP_ERR_DIMENSION
        MBDCP_ERR_SETTING
        MBDCP_ERR_NOT_POSDEF
        MBDCP_ERR_RANK_DEFICIENT
        MBDCP_ERR_WORKSPACE
        MBDCP_ERR_NONFINITE
        MBDCP_ERR_DATA

    ctypedef enum MbdcpStatus:
        MBDCP_SOLVED
        MBDCP_RAY_TERMINATION
        MBDCP_MAX_ITERATIONS
        MBDCP_NUMERICAL_ERROR
        MBDCP_INTERRUPTED

    ctypedef int (*mbdcp_monitor_fn)(void *ctx, mbdcp_int iteration, mbdcp_int entering, mbdcp_int leaving,
                                     double value) noexcept nogil

    ctypedef struct MbdcpMonitor:
        mbdcp_monitor_fn fn
        void *ctx

    const char *mbdcp_return_message(MbdcpReturn code)
    const char *mbdcp_status_message(MbdcpStatus status)

    ctypedef struct MbdcpLemkeSettings:
        mbdcp_int max_pivots
        mbdcp_float tol
        mbdcp_float pivot_tol
        mbdcp_int refine
        mbdcp_int scale
        MbdcpMonitor monitor

    ctypedef struct MbdcpLemkeInfo:
        MbdcpStatus status
        mbdcp_int pivots
        mbdcp_float residual
        mbdcp_int worst_row
        mbdcp_int refactorizations
        mbdcp_int certified
        mbdcp_int warm

    ctypedef struct MbdcpLemkeOutput:
        mbdcp_float *z
        mbdcp_float *w
        mbdcp_int *basis
        mbdcp_float *ray

    MbdcpReturn mbdcp_lemke_default_settings(MbdcpLemkeSettings *s)
    MbdcpReturn mbdcp_lemke_check_settings(const MbdcpLemkeSettings *s, const char **message)
    size_t mbdcp_lemke_workspace_size(mbdcp_int n)
    MbdcpReturn mbdcp_lemke_solve(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                                  const MbdcpLemkeSettings *settings, const mbdcp_int *start,
                                  const MbdcpLemkeOutput *out, MbdcpLemkeInfo *info, void *work,
                                  size_t work_bytes)
    MbdcpReturn mbdcp_lemke_solve_scaled(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                                         const mbdcp_float *q_mag, const MbdcpLemkeSettings *settings,
                                         const mbdcp_int *start, int reuse, const MbdcpLemkeOutput *out,
                                         MbdcpLemkeInfo *info, void *work, size_t work_bytes)
    mbdcp_float mbdcp_lcp_residual(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                                   const mbdcp_float *z, mbdcp_float *w)
    int mbdcp_lcp_verify(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *z,
                         mbdcp_float tol, mbdcp_float *w, mbdcp_float *s)
    mbdcp_float mbdcp_lcp_row_ratio(mbdcp_int n, const mbdcp_float *z, const mbdcp_float *w,
                                    const mbdcp_float *s, mbdcp_int *worst)

    int mbdcp_all_finite(size_t n, const mbdcp_float *x)
    mbdcp_float MBDCP_SYMMETRY_RTOL
    mbdcp_float MBDCP_VJP_RANK_CUT
    mbdcp_float MBDCP_VJP_NORM_FLOOR
    mbdcp_float MBDCP_VJP_TIE
    mbdcp_float MBDCP_VJP_MARGIN
    int mbdcp_grouping_error(mbdcp_int rows, mbdcp_int groups, const mbdcp_float *E)

    ctypedef struct MbdcpStepProblem:
        mbdcp_int n_v, n_c, m, n_b, m_j, n_j
        mbdcp_float h
        const mbdcp_float *M
        const mbdcp_float *Wn
        const mbdcp_float *D
        const mbdcp_float *E
        const mbdcp_float *mu
        const mbdcp_float *v
        const mbdcp_float *p_ext
        const mbdcp_float *psi_n
        const mbdcp_float *dpsi_n
        const mbdcp_float *dpsi_f
        const mbdcp_float *Wb
        const mbdcp_float *theta
        const mbdcp_float *dtheta
        const mbdcp_float *Dj
        const mbdcp_float *Ej
        const mbdcp_float *beta_max

    ctypedef struct MbdcpStepOutput:
        mbdcp_float *v_next
        mbdcp_float *p_b
        mbdcp_float *z
        mbdcp_float *w
        mbdcp_float *F
        mbdcp_float *f
        mbdcp_int *basis

    mbdcp_int mbdcp_step_lcp_size(const MbdcpStepProblem *p)
    size_t mbdcp_step_workspace_size(const MbdcpStepProblem *p)
    MbdcpReturn mbdcp_step_solve(const MbdcpStepProblem *p, const MbdcpLemkeSettings *settings,
                                 const mbdcp_int *start, MbdcpStepOutput *out, MbdcpLemkeInfo *info, void *work,
                                 size_t work_bytes)

    ctypedef struct MbdcpStepVectors:
        const mbdcp_float *v_next
        const mbdcp_float *p_n
        const mbdcp_float *beta
        const mbdcp_float *sigma

    ctypedef struct MbdcpStepVjpSettings:
        mbdcp_float degenerate_tol, rcond_min, opposite_rtol
        int geometry

    ctypedef struct MbdcpStepGradients:
        mbdcp_float *M
        mbdcp_float *Wn
        mbdcp_float *D
        mbdcp_float *v
        mbdcp_float *p_ext
        mbdcp_float *mu
        mbdcp_float *psi_n
        mbdcp_float h

    ctypedef enum MbdcpStepVjpOutcome:
        MBDCP_VJP_DECIDED

    MbdcpReturn mbdcp_step_vjp_default_settings(MbdcpStepVjpSettings *s)
    size_t mbdcp_step_vjp_workspace_size(mbdcp_int n_v, mbdcp_int n_c, mbdcp_int m)
    MbdcpReturn mbdcp_step_vjp(const MbdcpStepProblem *p, const MbdcpStepVectors *x, const MbdcpStepVectors *c,
                               const MbdcpStepVjpSettings *s, MbdcpStepGradients *g, MbdcpStepVjpOutcome *outcome,
                               void *work, size_t work_bytes)

    ctypedef struct MbdcpFixedPointSettings:
        mbdcp_int algorithm
        mbdcp_float tol
        mbdcp_int max_iter
        MbdcpLemkeSettings lemke

    ctypedef struct MbdcpFixedPointInfo:
        MbdcpStatus status
        mbdcp_int iterations
        mbdcp_int converged
        mbdcp_int pivots
        mbdcp_float residual

    ctypedef struct MbdcpFixedPointOutput:
        mbdcp_float *v_next
        mbdcp_float *p_b
        mbdcp_float *p_n
        mbdcp_float *beta
        mbdcp_float *lam
        mbdcp_int *basis_p1
        mbdcp_int *basis_p2

    MbdcpReturn mbdcp_fixed_point_default_settings(MbdcpFixedPointSettings *s)
    MbdcpReturn mbdcp_fixed_point_check_settings(const MbdcpFixedPointSettings *s, const char **message)
    MbdcpReturn mbdcp_sliding_speed(mbdcp_int n_v, mbdcp_int n_c, mbdcp_int m, const mbdcp_float *D,
                                    const mbdcp_float *E, const mbdcp_float *v, mbdcp_float *lam)
    size_t mbdcp_relax_workspace_size(const MbdcpStepProblem *p)
    MbdcpReturn mbdcp_relax_p1(const MbdcpStepProblem *p, const mbdcp_float *gamma,
                               const MbdcpLemkeSettings *s, MbdcpStepOutput *out, MbdcpLemkeInfo *info,
                               void *work, size_t work_bytes)
    MbdcpReturn mbdcp_relax_p2(const MbdcpStepProblem *p, const mbdcp_float *lam,
                               const MbdcpLemkeSettings *s, MbdcpStepOutput *out, MbdcpLemkeInfo *info,
                               void *work, size_t work_bytes)
    MbdcpReturn mbdcp_fixed_point(const MbdcpStepProblem *p, const MbdcpFixedPointSettings *s,
                                  MbdcpFixedPointOutput *out, MbdcpFixedPointInfo *info, void *work,
                                  size_t work_bytes)
    MbdcpReturn mbdcp_fixed_point_warm(const MbdcpStepProblem *p, const MbdcpFixedPointSettings *s,
                                       const mbdcp_int *start_p1, const mbdcp_int *start_p2,
                                       MbdcpFixedPointOutput *out, MbdcpFixedPointInfo *info, void *work,
                                       size_t work_bytes)

    # ---- relax_sparse.h: the fixed-point algorithms with sparse active-set subproblem solves
    ctypedef struct MbdcpRelaxSparseOrder:
        mbdcp_int *perm_m
        mbdcp_int *perm_k
        mbdcp_int nnz_m, nnz_k, nnzl_m, nnzl_k

    ctypedef struct MbdcpSparseStep:
        mbdcp_int n_v, n_c, m
        mbdcp_float h
        const mbdcp_int *Mp
        const mbdcp_int *Mi
        const mbdcp_float *Mx
        const mbdcp_int *Wp
        const mbdcp_int *Wi
        const mbdcp_float *Wx
        const mbdcp_int *contact
        const mbdcp_float *mu
        const mbdcp_float *v
        const mbdcp_float *p_ext
        const mbdcp_float *psi_n
        const mbdcp_float *dpsi_n
        const mbdcp_float *dpsi_f

    MbdcpReturn mbdcp_sparse_step_check(const MbdcpSparseStep *q)
    MbdcpReturn mbdcp_sparse_step_count(const MbdcpStepProblem *p, mbdcp_int *nnz_m, mbdcp_int *Wp)
    MbdcpReturn mbdcp_sparse_step_fill(const MbdcpStepProblem *p, mbdcp_int nnz_m, mbdcp_int *Mp, mbdcp_int *Mi,
                                       mbdcp_float *Mx, mbdcp_int *Wp, mbdcp_int *Wi, mbdcp_float *Wx,
                                       mbdcp_int *contact)
    size_t mbdcp_relax_sparse_analyze_workspace_size(const MbdcpSparseStep *q)
    MbdcpReturn mbdcp_relax_sparse_analyze(const MbdcpSparseStep *q, MbdcpRelaxSparseOrder *ord, void *work,
                                           size_t work_bytes)
    size_t mbdcp_fixed_point_sparse_workspace_size(const MbdcpSparseStep *q, const MbdcpRelaxSparseOrder *ord)
    MbdcpReturn mbdcp_fixed_point_sparse(const MbdcpSparseStep *q, const MbdcpFixedPointSettings *s,
                                         const MbdcpRelaxSparseOrder *ord, const mbdcp_int *start_p1,
                                         const mbdcp_int *start_p2, MbdcpFixedPointOutput *out,
                                         MbdcpFixedPointInfo *info, void *work, size_t work_bytes)

    ctypedef struct MbdcpFullRankProblem:
        mbdcp_int n_v, n_c, n_d
        mbdcp_float h
        const mbdcp_float *M
        const mbdcp_float *Wn
        const mbdcp_float *Wt
        const mbdcp_float *mu
        const mbdcp_float *v
        const mbdcp_float *p_ext
        const mbdcp_float *psi_n
        mbdcp_float rho
        mbdcp_float compliance

    ctypedef struct MbdcpFullRankOutput:
        mbdcp_float *v_next
        mbdcp_float *p_t
        mbdcp_float *z
        mbdcp_float *w
        mbdcp_float *F
        mbdcp_float *f
        mbdcp_float rho_used
        mbdcp_float compliance_used

    mbdcp_int mbdcp_full_rank_lcp_size(const MbdcpFullRankProblem *p)
    size_t mbdcp_full_rank_workspace_size(const MbdcpFullRankProblem *p)
    MbdcpReturn mbdcp_full_rank_step(const MbdcpFullRankProblem *p, const MbdcpLemkeSettings *s,
                                     MbdcpFullRankOutput *out, MbdcpLemkeInfo *info, void *work,
                                     size_t work_bytes)

    ctypedef enum MbdcpCcpMethod:
        MBDCP_CCP_APGD
        MBDCP_CCP_PJACOBI
        MBDCP_CCP_PGS
        MBDCP_CCP_IPM
        MBDCP_CCP_AUTO
        MBDCP_CCP_METHOD_COUNT

    ctypedef enum MbdcpCcpCertificate:
        MBDCP_CCP_NO_CERTIFICATE
        MBDCP_CCP_CERT_DIRECTION
        MBDCP_CCP_DIVERGED

    ctypedef enum MbdcpCcpScaling:
        MBDCP_CCP_SCALE_AXES
        MBDCP_CCP_SCALE_CONTACT

    ctypedef struct MbdcpCcpPlan:
        mbdcp_int budget
        mbdcp_int n_c

    ctypedef struct MbdcpCcpProblem:
        mbdcp_int n_v, n_c, n_b
        const mbdcp_int *P_colptr
        const mbdcp_int *P_rowind
        const mbdcp_float *P_val
        const mbdcp_int *Q_colptr
        const mbdcp_int *Q_rowind
        const mbdcp_float *Q_val
        const mbdcp_float *mu
        const mbdcp_float *p
        const mbdcp_int *M_colptr
        const mbdcp_int *M_rowind
        const mbdcp_float *M_val

    ctypedef struct MbdcpCcpSettings:
        MbdcpCcpMethod method
        mbdcp_float tol
        mbdcp_int max_iter
        mbdcp_float omega
        int warm_start
        MbdcpCcpScaling scaling
        MbdcpMonitor monitor
        mbdcp_int factor_blocks
        mbdcp_float factor_flops
        MbdcpCcpPlan plan

    ctypedef struct MbdcpCcpInfo:
        MbdcpStatus status
        mbdcp_int iterations
        mbdcp_float residual
        mbdcp_float lipschitz
        int polished
        MbdcpCcpCertificate certificate
        MbdcpCcpMethod finished
        MbdcpCcpPlan plan
        int handover

    MbdcpReturn mbdcp_ccp_default_settings(MbdcpCcpSettings *s)
    MbdcpReturn mbdcp_ccp_check_settings(const MbdcpCcpSettings *s, const char **message)
    const char *mbdcp_ccp_method_name(MbdcpCcpMethod method)
    size_t mbdcp_ccp_workspace_size(const MbdcpCcpProblem *p)
    size_t mbdcp_ccp_solve_workspace_size(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s)
    size_t mbdcp_ccp_factor_workspace_size(const MbdcpCcpProblem *p)
    MbdcpReturn mbdcp_ccp_factor_blocks(const MbdcpCcpProblem *p, mbdcp_int *blocks, mbdcp_float *flops, void *work,
                                        size_t work_bytes)
    mbdcp_int mbdcp_ccp_auto_budget(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s)
    MbdcpReturn mbdcp_ccp_needs_factor(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, int *needs)
    void mbdcp_cone_project(mbdcp_float mu, mbdcp_float *gamma)
    MbdcpReturn mbdcp_ccp_solve(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, mbdcp_float *nu,
                                mbdcp_float *u, MbdcpCcpInfo *info, void *work, size_t work_bytes)
    MbdcpReturn mbdcp_ccp_resume(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, const MbdcpCcpInfo *first,
                                 mbdcp_float *nu, mbdcp_float *u, MbdcpCcpInfo *info, void *work, size_t work_bytes)

    # ---- blocks.h: block-diagonal mass matrices
    MbdcpReturn mbdcp_block_spd_inverse(mbdcp_int nb, mbdcp_int k, const mbdcp_float *M, mbdcp_float *Minv,
                                        mbdcp_float *scratch, mbdcp_int *bad)
    MbdcpReturn mbdcp_block_times_csc(mbdcp_int nb, mbdcp_int k, const mbdcp_float *B, mbdcp_int ncols,
                                      const mbdcp_int *P_colptr, const mbdcp_int *P_rowind, const mbdcp_float *P_val,
                                      mbdcp_int *Q_colptr, mbdcp_int *Q_rowind, mbdcp_float *Q_val)

    # ---- spheres.h: the contacts between round bodies
    size_t mbdcp_sphere_pairs_workspace_size(mbdcp_int n)
    MbdcpReturn mbdcp_sphere_pairs(mbdcp_int n, mbdcp_int dim, const mbdcp_float *pos, const mbdcp_float *rad,
                                   mbdcp_float delta, mbdcp_int capacity, mbdcp_int *n_pairs, mbdcp_int *pair,
                                   mbdcp_float *gap, mbdcp_float *normal, mbdcp_float *point, void *work,
                                   size_t work_bytes)

    # ---- columns.h: the columns of a contact Jacobian for rigid bodies
    MbdcpReturn mbdcp_contact_columns(mbdcp_int n_c, mbdcp_int dim, mbdcp_int K, mbdcp_int n_v, const mbdcp_int *body,
                                      const mbdcp_float *r, const mbdcp_float *dirs, mbdcp_int *colptr,
                                      mbdcp_int *rowind, mbdcp_float *val)

    # ---- directions.h: friction directions about contact normals
    MbdcpReturn mbdcp_friction_directions(mbdcp_int n_c, mbdcp_int count, const mbdcp_float *normal,
                                          const mbdcp_float *slip, const mbdcp_float *scale, mbdcp_float rounding,
                                          const mbdcp_float *cos_k, const mbdcp_float *sin_k, mbdcp_float *dirs)

    # ---- frame_contacts.h: a step's contact data from contacts in their frames (MuJoCo's layout)
    ctypedef struct MbdcpFrameContacts:
        mbdcp_int n_con
        size_t stride
        const mbdcp_float *dist
        const mbdcp_int *row
        const mbdcp_int *geom
        const mbdcp_int *rows
        const mbdcp_float *friction
        const mbdcp_float *frame
        const mbdcp_float *point
    ctypedef struct MbdcpContactSet:
        mbdcp_float *gap
        mbdcp_float *mu
        mbdcp_int *row
        mbdcp_int *rows
        mbdcp_int *geom
        mbdcp_float *frame
        mbdcp_float *point
        int64_t *key
    MbdcpReturn mbdcp_frame_contacts_select(const MbdcpFrameContacts *inp, mbdcp_float delta, int skip_negative_geom,
                                            int64_t code_base, MbdcpContactSet *out, mbdcp_int *n)
    MbdcpReturn mbdcp_frame_contact_columns(mbdcp_int n, mbdcp_int n_v, mbdcp_int n_rows, const mbdcp_float *J,
                                            const MbdcpContactSet *set, const mbdcp_float *free, mbdcp_int K,
                                            const mbdcp_float *cos_k, const mbdcp_float *sin_k, mbdcp_float rounding,
                                            mbdcp_int ld_wn, mbdcp_float *Wn, mbdcp_float *D, mbdcp_float *work)
    MbdcpReturn mbdcp_fastest_point(mbdcp_int n_g, mbdcp_int n_body, const mbdcp_int *body, const mbdcp_int *centre_of,
                                    const mbdcp_float *cvel, const mbdcp_float *x, const mbdcp_float *centre,
                                    const mbdcp_float *radius, mbdcp_float *speed)

    # ---- coulomb.h: Coulomb friction and its CCP relaxation on the Delassus matrix
    ctypedef enum MbdcpFcMethod:
        MBDCP_FC_NSGS
        MBDCP_FC_FIXED_POINT
        MBDCP_FC_PGS
        MBDCP_FC_APGD
        MBDCP_FC_NEWTON
        MBDCP_FC_AUTO
        MBDCP_FC_METHOD_COUNT

    ctypedef enum MbdcpFcCertificate:
        MBDCP_FC_NO_CERTIFICATE
        MBDCP_FC_CERT_DIRECTION
        MBDCP_FC_CERT_NORMAL
        MBDCP_FC_CERT_NORMAL_R
        MBDCP_FC_CERT_CONTACT
        MBDCP_FC_DIVERGED

    ctypedef enum MbdcpFcCase:
        MBDCP_FC_TAKEOFF
        MBDCP_FC_STICK
        MBDCP_FC_SLIDE
        MBDCP_FC_BEST_EFFORT

    ctypedef struct MbdcpFcProblem:
        mbdcp_int n_c
        const mbdcp_int *W_rowptr
        const mbdcp_int *W_colind
        const mbdcp_float *W_val
        const mbdcp_int *S_rowptr
        const mbdcp_int *S_colind
        const mbdcp_float *S_val
        const mbdcp_float *q
        const mbdcp_float *mu
        mbdcp_int spacedim

    ctypedef struct MbdcpFcSettings:
        MbdcpFcMethod method
        MbdcpFcMethod inner
        mbdcp_float tol
        mbdcp_int max_iter
        mbdcp_int inner_max_iter
        int warm_start
        mbdcp_int factor_blocks
        MbdcpMonitor monitor

    ctypedef struct MbdcpFcInfo:
        MbdcpStatus status
        mbdcp_int iterations
        mbdcp_int inner_iterations
        mbdcp_float residual
        mbdcp_int local_failures
        MbdcpFcMethod finished
        MbdcpFcCertificate certificate
        mbdcp_int certificate_contact

    MbdcpReturn mbdcp_fc_default_settings(MbdcpFcSettings *s)
    MbdcpReturn mbdcp_fc_check_settings(const MbdcpFcSettings *s, int coulomb, const char **message)
    const char *mbdcp_fc_method_name(MbdcpFcMethod method)
    enum: MBDCP_FC_OUTER_MAX_ITER
    size_t mbdcp_fc_workspace_size(const MbdcpFcProblem *p, const MbdcpFcSettings *s)
    size_t mbdcp_fc_factor_workspace_size(const MbdcpFcProblem *p)
    MbdcpReturn mbdcp_fc_factor_blocks(const MbdcpFcProblem *p, mbdcp_int *blocks, mbdcp_float *flops, void *work,
                                       size_t work_bytes)
    MbdcpReturn mbdcp_fc_residual(const MbdcpFcProblem *p, int coulomb, const mbdcp_float *r, mbdcp_float *u,
                                  mbdcp_float *residual)
    MbdcpReturn mbdcp_fc_local_solve(const mbdcp_float *A, const mbdcp_float *b, mbdcp_float mu, int coulomb,
                                     mbdcp_float *r, MbdcpFcCase *which)
    MbdcpReturn mbdcp_coulomb_solve(const MbdcpFcProblem *p, const MbdcpFcSettings *s, mbdcp_float *r,
                                    mbdcp_float *u, MbdcpFcInfo *info, void *work, size_t work_bytes)
    MbdcpReturn mbdcp_ccp_local_solve(const MbdcpFcProblem *p, const MbdcpFcSettings *s, mbdcp_float *r,
                                      mbdcp_float *u, MbdcpFcInfo *info, void *work, size_t work_bytes)

    ctypedef struct MbdcpLemkeBatchOutput:
        mbdcp_float *z
        mbdcp_float *w
        mbdcp_int *basis
        mbdcp_int *status
        mbdcp_int *pivots
        mbdcp_float *residual

    int mbdcp_lemke_batch_quiet(mbdcp_int n, const MbdcpLemkeSettings *settings)
    MbdcpReturn mbdcp_lemke_batch(mbdcp_int count, mbdcp_int n, const mbdcp_float *Ms, size_t M_stride,
                                  const mbdcp_float *qs, const MbdcpLemkeSettings *settings,
                                  const MbdcpLemkeBatchOutput *out, mbdcp_int *failed, void *work,
                                  size_t work_bytes)
    MbdcpReturn mbdcp_step_batch(mbdcp_int count, const MbdcpStepProblem *problems,
                                 const MbdcpLemkeSettings *settings, MbdcpStepOutput *outs,
                                 MbdcpLemkeInfo *infos, mbdcp_int *failed, void *work, size_t work_bytes)
