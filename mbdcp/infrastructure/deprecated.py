"""Renamed keywords keep working for one release, with a DeprecationWarning that names the new
one (CHANGELOG.md lists them). One spelling per concept: ``tol`` and ``max_iter`` on every solver
(for Lemke, ``max_iter`` counts pivots), ``psi_n`` for the gap, ``method`` for the solver choice."""
import functools
import warnings

__all__ = ["renamed", "renamed_keywords", "renamed_value"]


def renamed_keywords(name, kwargs, old_to_new, stacklevel=3):
    """kwargs with the deprecated keywords of ``old_to_new`` under their new names (a
    DeprecationWarning each); giving both is a TypeError."""
    if not any(old in kwargs for old in old_to_new):
        return kwargs
    kwargs = dict(kwargs)
    for old, new in old_to_new.items():
        if old in kwargs:
            kwargs[new] = renamed_value(name, old, kwargs.pop(old), new, new in kwargs, stacklevel + 1)
    return kwargs


def renamed_value(name, old, value, new, both, stacklevel=3):
    """``value``, passed to ``name`` under its deprecated keyword ``old``, for the keyword ``new`` (a
    DeprecationWarning); TypeError if ``new`` was given too (``both``). Hot functions take the old
    keyword as a parameter of their own and call this, instead of :func:`renamed`'s wrapper (a
    Python call more per call)."""
    warnings.warn(f"{name}(): {old} is deprecated; use {new}", DeprecationWarning, stacklevel=stacklevel)
    if both:
        raise TypeError(f"{name}() got {new} and its deprecated name {old}: pass {new} only")
    return value


def renamed(**old_to_new):
    """Decorator: the keyword ``old`` of the function is accepted as ``new`` (``@renamed(phi="psi_n")``),
    with a DeprecationWarning; giving both is a TypeError."""
    old = frozenset(old_to_new)

    def wrap(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            if kwargs and not old.isdisjoint(kwargs):
                kwargs = renamed_keywords(fn.__name__, kwargs, old_to_new)
            return fn(*args, **kwargs)

        call.renamed_keywords = dict(old_to_new)
        return call
    return wrap
