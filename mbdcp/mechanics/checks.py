"""Validation of the fields of bodies, walls and scenes: every message names the field."""
import numpy as np

__all__ = ["real", "positive", "nonnegative", "vector", "unit", "inertia3", "sequence"]


def _numeric(name, x):
    a = np.asarray(x)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real numbers, got {type(x).__name__} {x!r}")
    return a.astype(float)


def real(name, x):
    """A finite real scalar."""
    a = _numeric(name, x)
    if a.shape != ():
        raise ValueError(f"{name} must be a scalar, got shape {a.shape}")
    if not np.isfinite(a):
        raise ValueError(f"{name} must be finite, got {x}")
    return float(a)


def positive(name, x):
    a = _numeric(name, x)
    if a.shape != () or not (np.isfinite(a) and a > 0):
        raise ValueError(f"{name} must be positive and finite, got {x}")
    return float(a)


def nonnegative(name, x):
    a = _numeric(name, x)
    if a.shape != () or not (np.isfinite(a) and a >= 0):
        raise ValueError(f"{name} must be nonnegative and finite, got {x}")
    return float(a)


def vector(name, x, n):
    """A finite float vector of length n (a new array)."""
    a = _numeric(name, x)
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {a}")
    return a


def unit(name, x, n):
    """``x / ||x||`` for a finite nonzero n-vector."""
    a = vector(name, x, n)
    norm = np.linalg.norm(a)
    if norm == 0:
        raise ValueError(f"{name} must be nonzero")
    return a / norm


def inertia3(name, x):
    """A body-frame inertia: a positive 3-vector (principal moments) or an SPD 3x3 matrix."""
    a = _numeric(name, x)
    J = np.diag(a) if a.shape == (3,) else a
    if (J.shape != (3, 3) or not np.all(np.isfinite(J)) or np.abs(J - J.T).max() > 1e-8 * np.abs(J).max()
            or np.linalg.eigvalsh(J).min() <= 0):
        raise ValueError(f"{name} must be a positive 3-vector or a symmetric positive definite 3x3 matrix, got {x!r}")
    return 0.5 * (J + J.T)


def sequence(name, x, kinds, what):
    """A list or tuple whose items are instances of ``kinds`` (a tuple of classes), as a list; a
    single such object, None or anything else is a TypeError that says what to pass."""
    if isinstance(x, kinds):
        raise TypeError(f"{name} must be a list of {what}, got one {type(x).__name__}: put it in a list")
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"{name} must be a list of {what}, got {type(x).__name__}")
    for k, item in enumerate(x):
        if not isinstance(item, kinds):
            raise TypeError(f"{name}[{k}] must be a {' or '.join(c.__name__ for c in kinds)}, got {type(item).__name__}")
    return list(x)
