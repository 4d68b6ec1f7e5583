"""Type stub of the compiled wrappers over the C core (mbdcp/_core.pyx): private, called by the
public layer with validated arrays. A wrapper returns a plain tuple; each such tuple's type is named
below, its fields in the order of the docstring in _core.pyx."""
from typing import Callable, Optional, TypedDict, Union

import numpy as np

from mbdcp.infrastructure.results import LemkeResult, StepResult

_Array = np.ndarray
_Csr = tuple[_Array, _Array, _Array]  # (indptr or ptr, indices, data) of a compressed matrix, int32 indices

SOLVED: int
RAY_TERMINATION: int
MAX_ITERATIONS: int
NUMERICAL_ERROR: int
INTERRUPTED: int
ERR_NOT_POSDEF: int
ERR_RANK_DEFICIENT: int
ERR_DATA: int
ERR_NONFINITE: int
SYMMETRY_RTOL: float
VJP_RANK_CUT: float
VJP_NORM_FLOOR: float
VJP_TIE: float
VJP_MARGIN: float
CCP_METHODS: dict[str, int]  # name -> value, in the order of ccp.h's MBDCP_CCP_METHOD_LIST
FC_METHODS: dict[str, int]  # name -> value, in the order of coulomb.h's MBDCP_FC_METHOD_LIST
FC_METHOD_NAMES: tuple[str, ...]  # by value
FC_CASES: tuple[str, ...]
FC_CERTIFICATES: tuple[str, ...]


class _LemkeDefaults(TypedDict):
    tol: float
    pivot_tol: float
    refine: int


class _FixedPointDefaults(TypedDict):
    algorithm: int
    tol: float
    max_iter: int


class _CcpDefaults(TypedDict):
    tol: float
    max_iter: int


class _FcDefaults(TypedDict):
    tol: float
    max_iter: int
    inner_max_iter: int
    outer_max_iter: int


class _StepVjpDefaults(TypedDict):
    degenerate_tol: float
    rcond_min: float
    opposite_rtol: float


class _Defaults(TypedDict):
    lemke: _LemkeDefaults
    fixed_point: _FixedPointDefaults
    ccp: _CcpDefaults
    fc: _FcDefaults
    step_vjp: _StepVjpDefaults


DEFAULTS: _Defaults  # the C core's default settings

# (z, w, status, pivots, residual, trace (k, 2) or None, basis (bool), certificate or None,
#  refactorizations, warm, worst_row)
_LemkeOutputs = tuple[_Array, _Array, int, int, float, Optional[_Array], _Array, Optional[_Array], int, bool, int]
# (v_next, p_b, z, w, F or None, f or None, status, pivots, residual): a step's LCP and its solve
_StepOutputs = tuple[_Array, _Array, _Array, _Array, Optional[_Array], Optional[_Array], int, int, float]
# _StepOutputs and the basis (bool)
_StepBasisOutputs = tuple[_Array, _Array, _Array, _Array, Optional[_Array], Optional[_Array], int, int, float, _Array]
# (v_next, p_b, p_n, beta, lam, history, status, iterations, converged, pivots, residual, basis_p1,
#  basis_p2)
_FixedPointOutputs = tuple[_Array, _Array, _Array, _Array, _Array, _Array, int, int, bool, int, float, _Array, _Array]
# (v_next, p_t, z, w, F or None, f or None, rho_used, status, pivots, residual, compliance_used)
_FullRankOutputs = tuple[_Array, _Array, _Array, _Array, Optional[_Array], Optional[_Array], float, int, int, float, float]
# (nu, u, history, status, iterations, residual, polished, finished method, certificate or None,
#  AUTO's plan to keep: (budget, n_c))
_CcpOutputs = tuple[_Array, _Array, _Array, int, int, float, bool, str, Optional[str], tuple[int, int]]
# (r, u, history or None, status, iterations, inner_iterations, residual, local_failures, finished
#  method, (certificate kind, certificate contact))
_FcOutputs = tuple[_Array, _Array, Optional[_Array], int, int, int, float, int, str, tuple[str, int]]
# (pair (m, 2), gap (m,), normal (m, dim), point (m, dim), the first coincident pair or None)
_SpherePairs = tuple[_Array, _Array, _Array, _Array, Optional[tuple[int, int]]]
# (gap, mu, row, rows, geom, frame, point, key) of the contacts kept
_FrameContacts = tuple[_Array, _Array, _Array, _Array, _Array, _Array, _Array, _Array]
# (outcome: 0 when decided, gradients by input name when decided, else None)
_StepVjpOutputs = tuple[int, Optional[dict[str, Union[_Array, float]]]]


class CoreError(ValueError):
    code: int

    def __init__(self, code: int, message: str) -> None: ...


def status_message(status: int) -> str: ...
def lemke(M: _Array, q: _Array, max_pivots: int, tol: float, trace: bool, start: Optional[_Array],
          q_scale: Optional[_Array] = ...) -> _LemkeOutputs: ...
def lemke_plain(M: object, q: object, max_pivots: int, tol: float) -> Optional[LemkeResult]: ...
def lemke_result(z: _Array, w: _Array, code: int, pivots: int, residual: float, basis: _Array,
                 certificate: Optional[_Array], worst: int, trace: Optional[_Array] = ...,
                 warm: bool = ...) -> LemkeResult: ...
def step_plain(M: object, Wn: object, D: object, E: object, mu: object, v: object, h: float,
               p_ext: Optional[_Array], psi_n: Optional[_Array]) -> Optional[StepResult]: ...
def step_vjp(step: tuple, solution: tuple, cotangents: tuple, settings: tuple, want_M: bool, want_Wn: bool,
             want_D: bool) -> _StepVjpOutputs: ...
def lcp_verify(M: _Array, q: _Array, z: _Array, tol: float) -> bool: ...
def lcp_residual(M: _Array, q: _Array, z: _Array) -> float: ...
def step(problem: object, max_pivots: int, tol: float, return_lcp: bool,
         start: Optional[_Array] = ...) -> _StepBasisOutputs: ...
def relax(which: int, problem: object, data: _Array, max_pivots: int, tol: float, return_lcp: bool) -> _StepOutputs: ...
def fixed_point(problem: object, algorithm: int, tol: float, max_iter: int, start_p1: Optional[_Array] = ...,
                start_p2: Optional[_Array] = ...) -> _FixedPointOutputs: ...
def fixed_point_sparse(problem: object, algorithm: int, tol: float, max_iter: int, start_p1: Optional[_Array] = ...,
                       start_p2: Optional[_Array] = ...) -> _FixedPointOutputs: ...
def fixed_point_compressed(c: object, algorithm: int, tol: float, max_iter: int, start_p1: Optional[_Array] = ...,
                           start_p2: Optional[_Array] = ...) -> _FixedPointOutputs: ...
def sliding_speed(D: _Array, E: _Array, v: _Array) -> _Array: ...
def full_rank_step(
    M: _Array,
    Wn: _Array,
    Wt: _Array,
    mu: _Array,
    v: _Array,
    h: float,
    n_d: int,
    rho: float,
    p_ext: _Array,
    psi_n: _Array,
    return_lcp: bool,
    compliance: float = ...,
    max_pivots: int = ...,
    tol: float = ...,
) -> _FullRankOutputs: ...
def ccp(
    n_v: int,
    n_c: int,
    n_b: int,
    P_ptr: _Array,
    P_ind: _Array,
    P_val: _Array,
    Q_ptr: _Array,
    Q_ind: _Array,
    Q_val: _Array,
    mu: _Array,
    p: _Array,
    method: str,
    tol: float,
    max_iter: int,
    omega: float,
    nu0: Optional[_Array],
    M: Union[None, _Csr, Callable[[], _Csr]] = ...,
    plan: Optional[tuple[int, int]] = ...,
) -> _CcpOutputs: ...
def block_spd_inverse(M: _Array) -> tuple[_Array, int, int]: ...  # (Minv, return code or 0, the bad block)
def contact_columns(body: _Array, r: _Array, dirs: _Array, n_v: int) -> _Csr: ...
def sphere_pairs(pos: _Array, rad: _Array, delta: float) -> _SpherePairs: ...
def friction_directions(normal: _Array, slip: Optional[_Array], scale: Optional[_Array], rounding: float,
                        cos_k: _Array, sin_k: _Array) -> _Array: ...
def frame_contacts(dist: _Array, row: _Array, geom: _Array, rows: _Array, friction: _Array, frame: _Array,
                   point: _Array, delta: float, skip_negative_geom: bool, code_base: int) -> _FrameContacts: ...
def frame_contact_columns(J: _Array, row: _Array, rows: _Array, frame: _Array, v_free: Optional[_Array],
                          cos_k: _Array, sin_k: _Array, rounding: float, Wn: _Array, D: _Array) -> None: ...
def fastest_point(body: _Array, centre_of: _Array, cvel: _Array, x: _Array, centre: _Array,
                  radius: _Array) -> float: ...
def transpose_times(A_ptr: _Array, A_ind: _Array, A_val: _Array, x: _Array) -> _Array: ...
def block_times_csc(B: _Array, ncols: int, P_ptr: _Array, P_ind: _Array, P_val: _Array) -> _Csr: ...
def cone_project(mu: float, g: _Array) -> _Array: ...
def all_finite(a: _Array) -> bool: ...
def asymmetry(A: _Array) -> tuple[float, float]: ...  # (max |A_ij - A_ji|, max |A_ij|)
def grouping_error(E: _Array) -> int: ...
def fc_dense_csr(W: _Array) -> _Csr: ...
def fc_solve(coulomb: bool, n_c: int, d: int, W_ptr: _Array, W_ind: _Array, W_val: _Array, S: Optional[_Csr],
             q: _Array, mu: _Array, method: str, inner: str, tol: float, max_iter: int, inner_max_iter: int,
             r0: Optional[_Array]) -> _FcOutputs: ...
def fc_residual(
    coulomb: bool,
    n_c: int,
    d: int,
    W_ptr: _Array,
    W_ind: _Array,
    W_val: _Array,
    q: _Array,
    mu: _Array,
    r: _Array,
) -> tuple[float, _Array]: ...  # (residual, u)
def fc_local(A: _Array, b: _Array, mu: float, coulomb: bool, r0: Optional[_Array]) -> tuple[_Array, str]: ...  # (r, case)
def lemke_batch(
    Ms: _Array,
    qs: _Array,
    first: int,
    count: int,
    max_pivots: int,
    tol: float,
    z: _Array,
    w: _Array,
    basis: _Array,
    status: _Array,
    pivots: _Array,
    residual: _Array,
    stop: Optional[_Array] = ...,
) -> None: ...
def step_batch(
    arrays: tuple,
    dims: tuple,
    hs: _Array,
    first: int,
    count: int,
    max_pivots: int,
    tol: float,
    v_next: _Array,
    p_b: _Array,
    z: _Array,
    w: _Array,
    status: _Array,
    pivots: _Array,
    residual: _Array,
    stop: Optional[_Array] = ...,
) -> Optional[tuple[int, int]]: ...  # (the failing instance, its return code) or None
