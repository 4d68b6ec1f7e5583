"""Validation of the fields of bodies, walls and scenes, built on the package's one validation
layer (mbdcp.infrastructure.validate): every message names the field."""
import numpy as np

from mbdcp.infrastructure import validate as val

__all__ = ["real", "positive", "nonnegative", "vector", "unit", "inertia3", "sequence"]

real = val.real_scalar
positive = val.positive_scalar
nonnegative = val.nonnegative_scalar


def vector(name, x, n):
    """A finite float vector of length n (a new array: a body's field never aliases the caller's)."""
    return np.array(val.vector(name, x, n), dtype=np.float64)


def unit(name, x, n):
    """``x / ||x||`` for a finite nonzero n-vector (no overflow or underflow on the way)."""
    return val.unit_vector(name, x, n)


def inertia3(name, x):
    """A body-frame inertia: a positive 3-vector (principal moments) or an SPD 3x3 matrix."""
    a = val.as_array(name, x)
    J = np.diag(a) if a.shape == (3,) else a
    if J.shape != (3, 3):
        raise ValueError(f"{name} must be a positive 3-vector or a symmetric positive definite 3x3 matrix, "
                         f"got shape {a.shape}")
    scale = np.abs(J).max()
    if scale == 0 or np.abs(J - J.T).max() > 1e-8 * scale or np.linalg.eigvalsh(J / scale).min() <= 0:
        raise ValueError(f"{name} must be a positive 3-vector or a symmetric positive definite 3x3 matrix, "
                         f"got {a.tolist()}")
    return 0.5 * (J + J.T)


def sequence(name, x, kinds, what):
    """A list or tuple whose items are instances of ``kinds`` (a tuple of classes), as a list; a
    single such object, None or anything else is a TypeError that says what to pass."""
    if isinstance(x, kinds):
        raise TypeError(f"{name} must be a list of {what}, got one {type(x).__name__}: put it in a list")
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"{name} must be a list of {what}, got {val.describe(x)}")
    for k, item in enumerate(x):
        if not isinstance(item, kinds):
            raise TypeError(f"{name}[{k}] must be a {' or '.join(c.__name__ for c in kinds)}, got {val.describe(item)}")
    return list(x)
