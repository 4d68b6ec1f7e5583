"""Warm starts carried from one step to the next, contact by contact: the contacts (and limits) of
two steps are matched by their keys (:meth:`mbdcp.mujoco._assembly.Assembler._keys`)."""
import numpy as np

__all__ = ["match", "LemkeBasis", "carried_impulses"]


def match(old, new):
    """For each key of ``new``, its index in ``old`` (int64 keys), or -1."""
    if len(old) == 0 or len(new) == 0:
        return np.full(len(new), -1)
    order = np.argsort(old, kind="stable")
    at = np.searchsorted(old[order], new).clip(max=len(old) - 1)
    return np.where(old[order][at] == new, order[at], -1)


class LemkeBasis:
    """Lemke's final basis of a step, carried to the next (:func:`mbdcp.step`'s ``warm_start``).

    The step's variables are :math:`z = (p_n, \\beta, \\beta_j, \\sigma, \\sigma_j)`: a contact
    kept from the last step keeps the flags of its :math:`p_n`, its K directions and its
    :math:`\\sigma`; a new one starts not basic (separating); the joints' are kept as they were.
    """

    def __init__(self):
        self.last = None  # (keys, geom contacts, K, m_j, n_j, basis)

    def hint(self, keys, n_geom, K, m_j, n_j):
        """The flags for this step's contacts, or None when there is nothing to carry."""
        if self.last is None:
            return None
        old, old_geom, old_K, old_mj, old_nj, flags = self.last
        if (old_K, old_mj, old_nj) != (K, m_j, n_j) or flags is None:
            return None
        n_old, n = len(old), len(keys)
        if flags.size != 2 * n_old + old_geom * K + m_j + n_j:
            return None
        if n == n_old and old_geom == n_geom and np.array_equal(old, keys):
            return flags  # the same contacts: the same flags
        cut = np.cumsum([n_old, old_geom * K, m_j, n_old])
        p_n, beta, beta_j, sigma, sigma_j = np.split(flags, cut)
        idx = match(old, keys)
        kept = idx >= 0
        new_pn, new_sigma = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        new_pn[kept], new_sigma[kept] = p_n[idx[kept]], sigma[idx[kept]]
        new_beta = np.zeros((n_geom, K), dtype=bool)
        g = idx[:n_geom]
        new_beta[g >= 0] = beta.reshape(old_geom, K)[g[g >= 0]]
        return np.concatenate([new_pn, new_beta.ravel(), beta_j, new_sigma, sigma_j])

    def keep(self, keys, n_geom, K, m_j, n_j, basis):
        self.last = (keys, n_geom, K, m_j, n_j, None if basis is None else np.asarray(basis, dtype=bool))


def carried_impulses(old_keys, old_gamma, keys):
    """The CCP's impulses (n_c, 3) of the last step for this step's contacts (zero for new ones)."""
    gamma = np.zeros((len(keys), 3))
    idx = match(old_keys, keys)
    gamma[idx >= 0] = old_gamma[idx[idx >= 0]]
    return gamma
