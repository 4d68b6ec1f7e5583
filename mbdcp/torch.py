r"""Contact solves as differentiable PyTorch functions: :func:`lcp`, :func:`step` and :func:`ccp`.

Each function is a ``torch.autograd.Function``: the forward pass solves with mbdcp's C core, the
backward pass is the exact derivative of the verified solution from :mod:`mbdcp.derivatives`
(implicit function theorem on the solution's active set), in every tensor input, the keywords
included (``p_ext``, gaps, moving surfaces, joints, joint friction); E and Ej group directions and
get no gradient. ``torch.autograd.gradcheck`` passes away from degenerate points.

- **Tensors**: float64 on the CPU (other tensors raise TypeError or ValueError naming the
  argument). Inputs that are not tensors (NumPy arrays, lists, floats) are constants.
- **Batches**: a leading batch axis on ``v`` (on ``q`` for :func:`lcp`) makes a batch of B problems;
  every other input then has the batch axis too (one per problem) or not (shared by all; its
  gradient is the sum over the batch). ``U`` and ``mu`` are shared as scalars or (n_c,), per problem
  as (B, n_c) (or (B, n_c, n_c) diagonals for ``U``); ``h`` is a scalar or (B,). Batches of
  :func:`lcp` and :func:`step` are solved by :func:`mbdcp.batch.lemke` and
  :func:`mbdcp.batch.step` (a loop when an option needs :func:`mbdcp.step` itself); :func:`ccp` loops.
- **torch.func**: its transforms (``torch.func.grad``, ``vmap``, ...) are not supported and raise
  RuntimeError: differentiate with ``torch.autograd`` and batch with a leading axis.
- **Failures**: a solve that does not end SOLVED raises :class:`SolveError` naming the status (and
  the instance of a batch); no tensor is returned.
- **Degenerate points** (a grazing contact, a contact at the edge of its friction cone, ...): the
  gradient is the one-sided derivative documented in :mod:`mbdcp.derivatives`, and a
  :class:`DegenerateWarning` names the contacts; so it does for a gradient in the gaps or the
  directions where contacts are tied by active rows dropped as dependent (see
  ``docs/gradients.rst``).

Example: the sphere of Trinkle (2003) sliding at 2 m/s; each step slows it by mu g h, so
d v_x / d mu = -g h per sliding step:

>>> import torch, mbdcp.torch
>>> from mbdcp.examples import sphere_on_plane
>>> M, Wn, D, E, _ = sphere_on_plane()
>>> mu = torch.tensor(0.2, dtype=torch.float64, requires_grad=True)
>>> v, h = torch.tensor([2.0, 0, 0, 0, 0, 0], dtype=torch.float64), 0.01
>>> for _ in range(3):
...     v = mbdcp.torch.step(M, Wn, D, E, mu, v, h, p_ext=[0, 0, -9.81 * h, 0, 0, 0], psi_n=[0.0])
>>> v[0].backward()
>>> round(mu.grad.item(), 12)
-0.2943
"""
from itertools import chain

import numpy as np

try:
    import torch
    from torch.autograd.function import once_differentiable
except ModuleNotFoundError as exc:
    if exc.name != "torch":
        raise
    raise ModuleNotFoundError("mbdcp.torch needs PyTorch: pip install 'mbdcp[torch]'", name="torch") from exc

from mbdcp.derivatives import _layers as ad
from mbdcp.derivatives._layers import CCPOutput, DegenerateWarning, SolveError, StepOutput
from mbdcp.infrastructure import validate as val

__all__ = ["CCPOutput", "DegenerateWarning", "SolveError", "StepOutput", "ccp", "lcp", "step"]


_F64 = torch.float64


def _reject(name, x):
    """The error for a tensor input that is not float64 on the CPU (the solver reads its memory)."""
    if x.dtype is not _F64:
        return TypeError(f"{name} must be a float64 tensor (torch.float64), got {x.dtype}: mbdcp.torch "
                         f"computes in float64 (use {name}.double())")
    return ValueError(f"{name} must be a CPU tensor, got one on {x.device} (mbdcp solves on the CPU: "
                      f"use {name}.cpu())")


def _tensor(a):
    """A float64 tensor sharing a's memory when PyTorch can (a C-contiguous, writable float64
    array), else of a copy (the solvers' shared empty outputs are read-only)."""
    if type(a) is not np.ndarray or a.dtype != np.float64 or not a.flags.c_contiguous or not a.flags.writeable:
        a = np.array(a, dtype=np.float64, order="C")
    return torch.from_numpy(a)


class _Call:
    """One layer call, from the forward pass to the backward: the inputs as NumPy (the solver's
    positional arguments in order, its array keywords by name), the options split for the solver
    and the derivative, the batch dimensions (None: one problem), how many outputs are returned,
    the inputs that get a gradient, every tensor input with its version, and the forward's solution
    (one problem: the solver's result object itself)."""

    __slots__ = ("args", "base", "call_args", "derivative_options", "extras", "grad_names", "kw", "options", "outs",
                 "problem", "res", "returned", "solver_options", "versions")

    def __init__(self, problem, args, kw, options, returned):
        self.problem, self.args, self.kw, self.options, self.returned = problem, args, kw, options, returned
        self.solver_options, self.derivative_options = ad.split_options(problem, options)
        self.base = None
        if getattr(args[_ANCHOR[problem.name]], "ndim", 0) > 1:  # a batch (a list anchor was made an array)
            self.base = ad.torch_batch_ndims(problem, {n: np.shape(a) for n, a in self.arrays.items()})

    @property
    def arrays(self):
        """The inputs by name."""
        return dict(zip(self.problem.positional, self.args), **self.kw)

    def solve(self):
        """The returned outputs as tensors (sharing memory with the solution kept for backward)."""
        problem = self.problem
        if self.base is None:
            self.call_args = ad.positional(problem, self.args), self.kw
            self.res = res = ad.solve(problem, *self.call_args, self.solver_options)
            if self.returned == 1:
                return (_tensor(getattr(res, problem.outputs[0])),)
            return tuple([_tensor(getattr(res, o)) for o in problem.outputs])
        self.outs, self.extras = ad.forward(problem, self.arrays, self.options, self.base)
        return tuple([_tensor(o) for o in self.outs[:self.returned]])

    def gradients(self, cots):
        """The gradients of the inputs in ``grad_names`` for the output gradients ``cots`` (None: zero)."""
        for name, x, version in self.versions:
            if x._version != version:
                raise RuntimeError(f"mbdcp.torch.{self.problem.name}: its input {name} was modified in place after "
                                   "the forward pass, so the gradient cannot be computed")
        # the engine's output gradients need no graph (create_graph=True runs under no_grad here)
        cots = [None if c is None else c.detach().numpy() if c.requires_grad else c.numpy() for c in cots]
        arrays = self.arrays
        if self.base is None:
            grads = ad.backward_one(self.problem, arrays, self.call_args, self.res, self.derivative_options,
                                    cots, self.grad_names, layer="mbdcp.torch")
        else:
            cots += [None] * (len(self.outs) - len(cots))
            named = ad.backward(self.problem, arrays, self.options, self.outs, self.extras, cots, self.base,
                                reduce=True, layer="mbdcp.torch", wanted=self.grad_names)
            grads = [named[n] for n in self.grad_names]
        return tuple([_tensor(g) for g in grads])


class _Layer(torch.autograd.Function):
    """forward(call, *the inputs that need a gradient) -> the returned outputs; the gradient by
    mbdcp.derivatives. The other inputs reach the solver through ``call`` only."""

    @staticmethod
    def forward(ctx, call, *tensors):
        returned = call.solve()
        ctx.set_materialize_grads(False)
        ctx.call = call
        ctx.save_for_backward(*returned)  # a returned output changed in place: an error on unpacking
        return returned

    @staticmethod
    def backward(ctx, *cots):
        if torch.is_grad_enabled():  # create_graph=True: a second derivative raises instead of being zero
            return _Layer._once(ctx, *cots)
        ctx.saved_tensors  # noqa: B018 (raises if a returned output was modified in place)
        return (None, *ctx.call.gradients(cots))

    @staticmethod
    @once_differentiable
    def _once(ctx, *cots):
        ctx.saved_tensors  # noqa: B018
        return (None, *ctx.call.gradients(cots))


_Tensor = torch.Tensor
_ANCHOR = {name: p.positional.index(p.anchor) for name, p in ad.PROBLEMS.items()}  # the batch-telling input
# Function.apply is a Python wrapper, for torch.func, around this C++ apply; without torch.func's
# tensors the C++ apply alone does the same and saves about a microsecond a call
_apply_layer = super(torch.autograd.Function, _Layer).apply
_transforms_active = torch._C._are_functorch_transforms_active
try:
    _wrapped = torch._C._functorch.is_functorch_wrapped_tensor
except AttributeError:  # a PyTorch without it: every call through the Python wrapper
    def _wrapped(x):
        return True


def _apply(problem, positional, keywords, options, returned):
    """The outputs of ``problem`` for its positional inputs (in order) and array keywords (by
    name): the first ``returned`` of them. Each input is checked and converted once (a tensor to
    the NumPy view of its memory); only the tensors that need a gradient enter the autograd graph
    (none: no graph at all), the others are constants of the call."""
    if _transforms_active():  # its wrapped tensors have no memory for the solver to read
        raise RuntimeError(f"mbdcp.torch.{problem.name} cannot run inside torch.func's transforms (grad, vjp, "
                           "vmap, ...): differentiate it with torch.autograd (backward, torch.autograd.grad) and "
                           "give a batch a leading axis")
    args, kw, grad_names, grad_tensors, versions = [], {}, [], [], []
    track = torch.is_grad_enabled()
    n = len(positional)
    for i, (name, x) in enumerate(chain(zip(problem.positional, positional), keywords.items())):
        if not isinstance(x, _Tensor):  # a constant; a Python float is checked by the solver
            a = x if type(x) is float else val.as_array(name, x)
        elif x.dtype is not _F64 or not x.is_cpu:
            raise _reject(name, x)
        else:
            # an input changed in place before backward is an error, as for torch's own functions
            versions.append((name, x, x._version))
            if x.requires_grad:
                a = x.numpy(force=True)  # detached: a view, no copy, as below
                if track:
                    grad_names.append(name)
                    grad_tensors.append(x)
            else:
                a = x.numpy()
        if i < n:
            args.append(a)
        else:
            kw[name] = a
    call = _Call(problem, args, kw, options, returned)
    if not grad_tensors:
        return call.solve()
    call.grad_names, call.versions = grad_names, versions
    if any(map(_wrapped, grad_tensors)):  # left over from a finished torch.func transform: apply unwraps it
        return _Layer.apply(call, *grad_tensors)
    return _apply_layer(call, *grad_tensors)


def lcp(M, q, **options):
    r"""The solution z of LCP(M, q) by :func:`mbdcp.lemke`, differentiable in M and q.

    Find :math:`z \ge 0` with :math:`w = Mz + q \ge 0`, :math:`z^T w = 0`. The gradient holds the
    active set (:math:`z_i > 0`) fixed (:func:`mbdcp.derivatives.lcp`).

    Parameters
    ----------
    M : tensor or array_like, shape (n, n) or (B, n, n)
    q : tensor or array_like, shape (n,) or (B, n)
        A 2-D q makes a batch of B problems (M shared or one per problem).
    **options
        :func:`mbdcp.lemke`'s keywords and ``degenerate_tol`` of :func:`mbdcp.derivatives.lcp`.

    Returns
    -------
    torch.Tensor, shape (n,) or (B, n)
        z. A problem without a verified solution raises :class:`SolveError`.

    Examples
    --------
    >>> import torch, mbdcp.torch
    >>> M = torch.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
    >>> q = torch.tensor([-5.0, 6.0], dtype=torch.float64, requires_grad=True)
    >>> z = mbdcp.torch.lcp(M, q)
    >>> z[0].backward()
    >>> z.tolist(), q.grad.tolist()
    ([2.5, 0.0], [-0.5, 0.0])
    """
    return _apply(ad.PROBLEMS["lcp"], (M, q), {}, options, 1)[0]


def step(M, Wn, D, E, U, v, h, *, full_output=False, **kwargs):
    r"""One time step of :func:`mbdcp.step` (Stewart–Trinkle / Anitescu–Potra LCP), differentiable.

    Parameters
    ----------
    M, Wn, D, E, U, v, h
        As for :func:`mbdcp.step`, tensors or constants, with a leading batch axis on ``v`` for a
        batch (see the module's notes). ``M`` gets the symmetric gradient (valid for symmetric
        changes, the only ones :func:`mbdcp.step` accepts); ``U`` one of its own shape.
    full_output : bool
        Return every output as a :class:`StepOutput` (v_next, p_n, beta, sigma, p_b, beta_j,
        sigma_j), each differentiable; default: ``v_next`` only.
    **kwargs
        :func:`mbdcp.step`'s keywords: the array ones (``p_ext``, ``psi_n``, ``dpsi_n``, ``dpsi_f``,
        ``Wb``, ``theta``, ``dtheta``, ``Dj``, ``beta_max``; ``Ej`` without gradient) are inputs, the
        others settings, as is ``degenerate_tol`` of :func:`mbdcp.derivatives.step`.

    Returns
    -------
    torch.Tensor, shape (n_v,) or (B, n_v), or StepOutput
        A step without a verified solution raises :class:`SolveError`.

    Examples
    --------
    A unit particle pushed along the ground (mu = 0.5): v_x = 0.8 - mu g h, and a batch of pushes:

    >>> import torch, mbdcp.torch
    >>> f64 = dict(dtype=torch.float64)
    >>> M, Wn, D, E = torch.eye(2, **f64), [[0.0], [1.0]], [[1.0, -1.0], [0.0, 0.0]], [[1.0], [1.0]]
    >>> mu = torch.tensor(0.5, **f64, requires_grad=True)
    >>> push = torch.tensor([[0.8, -0.981], [1.0, -0.981]], **f64)
    >>> v = mbdcp.torch.step(M, Wn, D, E, mu, torch.zeros(2, 2, **f64), 0.1, p_ext=push)
    >>> v[:, 0].sum().backward()
    >>> [round(x, 12) for x in v[:, 0].tolist()], round(mu.grad.item(), 12)
    ([0.3095, 0.5095], -1.962)
    """
    problem = ad.PROBLEMS["step"]
    arrays, options = ad.split_keywords(problem, kwargs)
    outs = _apply(problem, (M, Wn, D, E, U, v, h), arrays, options,
                  len(problem.outputs) if full_output else 1)
    return StepOutput(*outs) if full_output else outs[0]


def ccp(M, Wn, Wt, mu, v, h, *, full_output=False, **kwargs):
    r"""One cone complementarity step of :func:`mbdcp.ccp` (Anitescu & Tasora 2010), differentiable.

    Parameters
    ----------
    M, Wn, Wt, mu, v, h
        As for :func:`mbdcp.ccp`, dense (M as an (n_v, n_v) matrix), with a leading batch axis on
        ``v`` for a batch. ``mu``'s gradient has its shape.
    full_output : bool
        Return a :class:`CCPOutput` (v_next, gamma (n_c, 3), p_b); default: ``v_next`` only.
    **kwargs
        :func:`mbdcp.ccp`'s keywords: ``p_ext``, ``psi_n``, ``Wb``, ``theta``, ``dtheta``, ``dpsi_t``
        are inputs; ``method``, ``tol``, ``max_iter``, ... and ``degenerate_tol`` are settings. The
        gradient is exact up to the accuracy of the iterative solve: use a tight ``tol``.

    Returns
    -------
    torch.Tensor, shape (n_v,) or (B, n_v), or CCPOutput
        A step that does not reach ``tol`` raises :class:`SolveError`.

    Examples
    --------
    >>> import torch, mbdcp.torch
    >>> mu = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    >>> v = mbdcp.torch.ccp(torch.eye(3, dtype=torch.float64), [[0.0], [0.0], [1.0]],
    ...                     [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], mu, [1.0, 0.0, 0.0], 0.01,
    ...                     p_ext=[0, 0, -0.0981], tol=1e-14)
    >>> v[0].backward()
    >>> round(mu.grad.item(), 6)
    -0.687088
    """
    problem = ad.PROBLEMS["ccp"]
    arrays, options = ad.split_keywords(problem, kwargs)
    outs = _apply(problem, (M, Wn, Wt, mu, v, h), arrays, options,
                  len(problem.outputs) if full_output else 1)
    return CCPOutput(*outs) if full_output else outs[0]
