"""Type stub of the compiled wrappers over the C core (mbdcp/_core.pyx): private, called by the
public layer with validated arrays."""
from typing import Any, Optional

import numpy as np

SOLVED: Any
RAY_TERMINATION: Any
MAX_ITERATIONS: Any
NUMERICAL_ERROR: Any
INTERRUPTED: Any
ERR_NOT_POSDEF: Any
ERR_RANK_DEFICIENT: Any
ERR_DATA: Any
SYMMETRY_RTOL: float
VJP_RANK_CUT: float
VJP_TIE: float
VJP_MARGIN: float
ERR_NONFINITE: Any
CCP_METHODS: Any
FC_METHODS: Any
FC_METHOD_NAMES: Any
FC_CASES: Any
FC_CERTIFICATES: Any
DEFAULTS: Any


class CoreError(ValueError):
    code: int

    def __init__(self, code: int, message: str) -> None: ...


def status_message(status: int) -> Any: ...
def lemke(M: np.ndarray, q: np.ndarray, max_pivots: int, tol: float, trace: bool, start: Any,
          q_scale: Optional[np.ndarray] = ...) -> Any: ...
def lemke_plain(M: Any, q: Any, max_pivots: int, tol: float) -> Any: ...
def lemke_result(z: np.ndarray, w: np.ndarray, code: int, pivots: int, residual: float, basis: Any, certificate: Any,
                 worst: int, trace: Any = ..., warm: bool = ...) -> Any: ...
def step_plain(M: Any, Wn: Any, D: Any, E: Any, mu: Any, v: Any, h: float, p_ext: Any, psi_n: Any) -> Any: ...
def step_vjp(step: tuple, solution: tuple, cotangents: tuple, settings: tuple, want_M: bool, want_Wn: bool,
             want_D: bool) -> tuple: ...
def lcp_verify(M: np.ndarray, q: np.ndarray, z: np.ndarray, tol: float) -> Any: ...
def lcp_residual(M: np.ndarray, q: np.ndarray, z: np.ndarray) -> Any: ...
def step(problem: Any, max_pivots: int, tol: float, return_lcp: bool, start: Any = ...) -> Any: ...
def relax(which: int, problem: Any, data: np.ndarray, max_pivots: int, tol: float, return_lcp: bool) -> Any: ...
def fixed_point(problem: Any, algorithm: int, tol: float, max_iter: int, start_p1: Any = ..., start_p2: Any = ...) -> Any: ...
def fixed_point_sparse(problem: Any, algorithm: int, tol: float, max_iter: int, start_p1: Any = ..., start_p2: Any = ...) -> Any: ...
def fixed_point_compressed(c: Any, algorithm: int, tol: float, max_iter: int, start_p1: Any = ..., start_p2: Any = ...) -> Any: ...
def sliding_speed(D: np.ndarray, E: np.ndarray, v: np.ndarray) -> Any: ...
def full_rank_step(
    M: np.ndarray,
    Wn: np.ndarray,
    Wt: np.ndarray,
    mu: np.ndarray,
    v: np.ndarray,
    h: float,
    n_d: int,
    rho: float,
    p_ext: np.ndarray,
    psi_n: np.ndarray,
    return_lcp: bool,
    compliance: float = ...,
    max_pivots: int = ...,
    tol: float = ...,
) -> Any: ...
def ccp(
    n_v: int,
    n_c: int,
    n_b: int,
    P_ptr: np.ndarray,
    P_ind: np.ndarray,
    P_val: np.ndarray,
    Q_ptr: np.ndarray,
    Q_ind: np.ndarray,
    Q_val: np.ndarray,
    mu: np.ndarray,
    p: np.ndarray,
    method: str,
    tol: float,
    max_iter: int,
    omega: float,
    nu0: np.ndarray,
    M: Any = ...,
    budget: int = ...,
) -> Any: ...
def block_spd_inverse(M: np.ndarray) -> Any: ...
def contact_columns(body: np.ndarray, r: np.ndarray, dirs: np.ndarray, n_v: int) -> Any: ...
def sphere_pairs(pos: np.ndarray, rad: np.ndarray, delta: float) -> Any: ...
def transpose_times(A_ptr: np.ndarray, A_ind: np.ndarray, A_val: np.ndarray, x: np.ndarray) -> np.ndarray: ...
def block_times_csc(B: np.ndarray, ncols: int, P_ptr: np.ndarray, P_ind: np.ndarray, P_val: np.ndarray) -> Any: ...
def cone_project(mu: float, g: np.ndarray) -> Any: ...
def all_finite(a: np.ndarray) -> Any: ...
def asymmetry(A: np.ndarray) -> Any: ...
def grouping_error(E: np.ndarray) -> Any: ...
def fc_dense_csr(W: np.ndarray) -> Any: ...
def fc_solve(coulomb: bool, n_c: int, d: int, W_ptr: np.ndarray, W_ind: np.ndarray, W_val: np.ndarray, S: Any,
             q: np.ndarray, mu: np.ndarray, method: str, inner: str, tol: float, max_iter: int, inner_max_iter: int,
             r0: Any) -> Any: ...
def fc_residual(
    coulomb: bool,
    n_c: int,
    d: int,
    W_ptr: np.ndarray,
    W_ind: np.ndarray,
    W_val: np.ndarray,
    q: np.ndarray,
    mu: np.ndarray,
    r: np.ndarray,
) -> Any: ...
def fc_local(A: np.ndarray, b: np.ndarray, mu: float, coulomb: bool, r0: Any) -> Any: ...
def lemke_batch(
    Ms: np.ndarray,
    qs: np.ndarray,
    first: int,
    count: int,
    max_pivots: int,
    tol: float,
    z: np.ndarray,
    w: np.ndarray,
    basis: np.ndarray,
    status: np.ndarray,
    pivots: np.ndarray,
    residual: np.ndarray,
    stop: Any = ...,
) -> Any: ...
def step_batch(
    arrays: tuple,
    dims: tuple,
    hs: np.ndarray,
    first: int,
    count: int,
    max_pivots: int,
    tol: float,
    v_next: np.ndarray,
    p_b: np.ndarray,
    z: np.ndarray,
    w: np.ndarray,
    status: np.ndarray,
    pivots: np.ndarray,
    residual: np.ndarray,
    stop: Any = ...,
) -> Any: ...
