"""Heavy-tailed workload generator: per-prompt log-t output lengths (TIE's premise, seed 002).

A *catalog* of prompts (drawn from ``catalog_seed``) gives every prompt a prompt size ``s_p``
and a true log-t length distribution ``(mu_p, sigma_p, nu)``; a *run* (drawn from ``seed``)
picks prompts for Poisson arrivals and samples each request's output length from its
prompt's distribution, cut off at ``max_tokens`` (and at ``M - s_p`` so the instance is
valid). The same prompt therefore yields different lengths in different runs, and the
per-prompt truth is returned for predictors (:class:`~kvopt.predictions.LogTPredictor`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import TIME_UNITS, Instance, TimeUnit

__all__ = ["Workload", "heavy_tailed_workload"]


@dataclass(frozen=True)
class Workload:
    """An instance plus the per-request truth of its generator.

    Attributes
    ----------
    instance
        The scheduling instance (true output lengths in ``instance.output``).
    prompt_id
        Catalog prompt of each request.
    mu, sigma, nu
        True log-t parameters of each request's prompt.
    max_tokens
        Generation cut-off.

    Examples
    --------
    >>> w = heavy_tailed_workload(5, catalog_seed=0, seed=0)
    >>> w.instance.n, w.nu, w.max_tokens
    (5, 3.5, 2048)
    >>> w.prompt_id.tolist(), np.round(np.exp(w.mu)).tolist()   # prompt, true median length
    ([324, 456, 251, 303, 485], [319.0, 73.0, 144.0, 7.0, 58.0])
    >>> w.instance.output.tolist()                               # the lengths drawn this run
    [201, 86, 28, 7, 56]
    """

    instance: Instance
    prompt_id: NDArray[np.int64]
    mu: NDArray[np.float64]
    sigma: NDArray[np.float64]
    nu: float
    max_tokens: int


def heavy_tailed_workload(
    n: int,
    *,
    rate: float = 1.0,
    memory: int = 16492,
    n_prompts: int = 500,
    max_tokens: int = 2048,
    nu: float = 3.5,
    mu_mean: float = 5.0,
    mu_sd: float = 0.8,
    sigma_range: tuple[float, float] = (0.3, 0.9),
    prompt_median: float = 300.0,
    prompt_sd: float = 0.8,
    time_unit: TimeUnit = "second",
    catalog_seed: int = 0,
    seed: int = 0,
) -> Workload:
    """Draw ``n`` requests with per-prompt log-t output lengths.

    Parameters
    ----------
    n
        Number of requests.
    rate
        Poisson arrival rate (requests per second; per slot when ``time_unit="step"``,
        arrivals then rounded down to slots).
    memory
        KV capacity ``M`` of the instance.
    n_prompts, mu_mean, mu_sd, sigma_range, prompt_median, prompt_sd
        Catalog: ``mu_p ~ N(mu_mean, mu_sd)``, ``sigma_p ~ U(sigma_range)``, prompt size
        ``round(prompt_median exp(prompt_sd N(0,1)))`` clipped to ``[1, M / 4]``.
    max_tokens, nu
        Cut-off and degrees of freedom (TIE: 3.5).
    catalog_seed, seed
        The catalog and the run are seeded separately.

    Examples
    --------
    >>> a = heavy_tailed_workload(200, catalog_seed=1, seed=1)
    >>> b = heavy_tailed_workload(200, catalog_seed=1, seed=2)
    >>> a.instance.n, bool(a.instance.output.max() <= 2048)
    (200, True)
    >>> same = np.intersect1d(a.prompt_id, b.prompt_id)[0]   # one prompt, two runs
    >>> a.mu[a.prompt_id == same][0] == b.mu[b.prompt_id == same][0]
    np.True_
    """
    if n < 1:
        raise UsageError("n", f"must be >= 1, got {n}")
    if not rate > 0:
        raise UsageError("rate", f"must be > 0, got {rate}")
    if n_prompts < 1:
        raise UsageError("n_prompts", f"must be >= 1, got {n_prompts}")
    if max_tokens < 1:
        raise UsageError("max_tokens", f"must be >= 1, got {max_tokens}")
    if time_unit not in TIME_UNITS:
        raise UsageError("time_unit", f"must be 'second' or 'step', got {time_unit!r}")
    cat = np.random.default_rng(catalog_seed)
    mu_p = cat.normal(mu_mean, mu_sd, n_prompts)
    sig_p = cat.uniform(sigma_range[0], sigma_range[1], n_prompts)
    s_p = np.clip(np.rint(prompt_median * np.exp(prompt_sd * cat.standard_normal(n_prompts))),
                  1, max(1, memory // 4)).astype(np.int64)
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1.0 / rate, n)
    arr = np.cumsum(gaps) - gaps[0]
    pid = rng.integers(0, n_prompts, n)
    z = rng.standard_t(nu, n)
    with np.errstate(over="ignore"):
        raw = np.exp(mu_p[pid] + sig_p[pid] * z)
    s = s_p[pid]
    cap = np.minimum(max_tokens, memory - s)
    if np.any(cap < 1):
        raise UsageError("memory", "too small for the catalog's prompts")
    o = np.clip(np.ceil(np.minimum(raw, 1e12)), 1, cap).astype(np.int64)
    a = np.floor(arr).astype(np.int64) if time_unit == "step" else arr
    inst = Instance(memory=memory, arrival=a, prompt=s, output=o, time_unit=time_unit,
                    name=f"heavy-tailed-n{n}-rate{rate:g}-seed{seed}",
                    source=f"kvopt.predictions.heavy_tailed_workload(catalog_seed={catalog_seed}"
                           f", seed={seed}, nu={nu:g}, max_tokens={max_tokens})")
    return Workload(inst, pid.astype(np.int64), mu_p[pid], sig_p[pid], float(nu),
                    int(max_tokens))
