"""The solver-neutral canonical form :class:`MILPData` and its variable layout.

Every formulation in :mod:`kvopt.mip.model.builder` emits one ``MILPData``; every backend in
:mod:`kvopt.mip.backends` only reads this form (backends know nothing about requests).

The form is ``min c @ x + obj_offset`` subject to ``row_lower <= A @ x <= row_upper``,
``col_lower <= x <= col_upper`` and ``x[j]`` integer where ``integrality[j] == 1``.

The time-indexed formulations use one block of columns: column ``j`` is the number of
requests of *group* ``col_group[j]`` that start at slot ``col_start[j]`` (a binary for a
group of one request, an integer count for a group of identical requests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray


@dataclass(frozen=True, eq=False)
class MILPData:
    """A mixed-integer linear program in canonical sparse form.

    Parameters
    ----------
    c
        Objective coefficients (minimised), shape ``(n_cols,)``.
    A
        Constraint matrix, ``scipy.sparse.csr_matrix`` of shape ``(n_rows, n_cols)``.
    row_lower, row_upper
        Row bounds (``-inf`` / ``+inf`` allowed).
    col_lower, col_upper
        Column bounds.
    integrality
        ``1`` for integer columns, ``0`` for continuous ones (int8).
    obj_offset
        Constant added to the objective.
    col_group, col_start
        Variable layout of the time-indexed block (see the module docstring).
    groups
        ``groups[g]`` is the array of request indices of group ``g``.
    row_kind
        A short label per row (``"assign"``, ``"memory"``, ``"dff2"``, ...).
    x0
        Optional feasible starting point (warm start), shape ``(n_cols,)``.
    objective_is_integer
        True when every feasible objective value is an integer (then a bound ``b``
        proves optimality of an incumbent ``z`` as soon as ``ceil(b) >= z``).
    meta
        Formulation name, horizon, statistics.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> d = MILPData(c=np.array([1.0, 2.0]), A=sp.csr_matrix([[1.0, 1.0]]),
    ...              row_lower=np.array([1.0]), row_upper=np.array([1.0]),
    ...              col_lower=np.zeros(2), col_upper=np.ones(2),
    ...              integrality=np.ones(2, dtype=np.int8))
    >>> d.n_cols, d.n_rows, d.nnz
    (2, 1, 2)
    """

    c: NDArray[np.float64]
    A: sp.csr_matrix
    row_lower: NDArray[np.float64]
    row_upper: NDArray[np.float64]
    col_lower: NDArray[np.float64]
    col_upper: NDArray[np.float64]
    integrality: NDArray[np.int8]
    obj_offset: float = 0.0
    col_group: NDArray[np.int64] | None = None
    col_start: NDArray[np.int64] | None = None
    groups: list[NDArray[np.int64]] = field(default_factory=list)
    row_kind: list[str] = field(default_factory=list)
    x0: NDArray[np.float64] | None = None
    objective_is_integer: bool = True
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        m, n = self.A.shape
        for name, size in (("c", n), ("col_lower", n), ("col_upper", n), ("integrality", n),
                           ("row_lower", m), ("row_upper", m)):
            if getattr(self, name).shape != (size,):
                raise ValueError(f"MILPData.{name} has shape {getattr(self, name).shape}, "
                                 f"expected ({size},)")

    @classmethod
    def example(cls) -> MILPData:
        """A two-variable integer program for examples and backend smoke checks.

        ``min x0 + x1`` subject to ``x0 + 2 x1 >= 3``, ``0 <= x <= 5`` integer; its optimum
        is 2 (``x = (1, 1)``), its LP relaxation 1.5 (``x = (0, 1.5)``).

        Examples
        --------
        >>> d = MILPData.example()
        >>> d.n_cols, d.n_rows, d.objective(np.array([1.0, 1.0])), d.max_violation(np.ones(2))
        (2, 1, 2.0, 0.0)
        """
        return cls(c=np.array([1.0, 1.0]), A=sp.csr_matrix([[1.0, 2.0]]),
                   row_lower=np.array([3.0]), row_upper=np.array([np.inf]),
                   col_lower=np.zeros(2), col_upper=np.full(2, 5.0),
                   integrality=np.ones(2, dtype=np.int8))

    @property
    def n_cols(self) -> int:
        """Number of columns (variables)."""
        return int(self.A.shape[1])

    @property
    def n_rows(self) -> int:
        """Number of rows (constraints)."""
        return int(self.A.shape[0])

    @property
    def nnz(self) -> int:
        """Number of nonzeros of ``A``."""
        return int(self.A.nnz)

    def objective(self, x: NDArray[np.float64]) -> float:
        """Objective value ``c @ x + obj_offset``."""
        return float(self.c @ x + self.obj_offset)

    def max_violation(self, x: NDArray[np.float64]) -> float:
        """Largest violation of a row, column bound or integrality by ``x`` (0 if feasible).

        Examples
        --------
        >>> import scipy.sparse as sp
        >>> d = MILPData(c=np.ones(1), A=sp.csr_matrix([[1.0]]), row_lower=np.array([0.0]),
        ...              row_upper=np.array([1.0]), col_lower=np.zeros(1),
        ...              col_upper=np.full(1, 3.0), integrality=np.ones(1, dtype=np.int8))
        >>> d.max_violation(np.array([2.0]))
        1.0
        """
        ax = self.A @ x
        viol = [np.maximum(self.row_lower - ax, 0), np.maximum(ax - self.row_upper, 0),
                np.maximum(self.col_lower - x, 0), np.maximum(x - self.col_upper, 0),
                np.abs(x - np.round(x)) * (self.integrality == 1)]
        return float(max((v.max(initial=0.0) for v in viol), default=0.0))

    def stats(self) -> dict[str, Any]:
        """Size statistics (columns, integer columns, rows, nonzeros) plus ``meta``."""
        return {"cols": self.n_cols, "int_cols": int(self.integrality.sum()),
                "rows": self.n_rows, "nnz": self.nnz, **self.meta}
