"""Sweep spec files (TOML) and their expansion into keyed tasks.

A spec names instance sources, evaluators and seeds; :func:`expand_tasks` turns it into the
list of :class:`Task` s, each keyed by a stable hash of (spec entry, instance, evaluator and
its parameters, seed, step-time model, code version), so a re-run finds the tasks it already
recorded. The format (all keys but ``instances`` and one of ``policies``/``solvers`` are
optional)::

    name = "smoke"
    seeds = "0:4"                    # START:STOP (exclusive), or a list [0, 1, 5]
    step_time = "unit"               # kvopt.sim step-time model of every policy run
    task_time_limit = 600            # seconds a task may run before it is killed and recorded
                                     #   as status "timeout" (default 600; a solver task gets
                                     #   at least its time_limit + 60)
    metrics = ["total_latency", "mean_latency", "evictions"]   # columns of the exports

    [[instances]]
    name = "m1"                      # entry name (default: generator or file stem)
    generator = "model1"             # a key of kvopt.sweep.GENERATORS ...
    params = { n = [8, 10] }         # ... a list is a grid axis, a scalar a fixed value
    # files = ["../tiny/*.json"]     # ... or instance files / trace CSVs (globs, relative
    # memory = 16492                 #     to the spec file), memory for trace CSVs
    # seeds = [0]                    # per-entry seeds (default: the top-level ones; [0]
                                     #   for files, whose content does not depend on a seed)

    [[policies]]
    name = "alpha-protection"        # a kvopt.sim policy
    params = { alpha = [0.2, 0.3] }  # options (grid as above)
    # step_time = "..."              # overrides the top-level model

    [[solvers]]
    name = "highs"                   # a kvopt.mip backend (hindsight optimum)
    time_limit = 10                  # seconds per solve (required, > 0)
    # formulation = "tight"
    # instances = ["m1"]             # restrict to these entries (default: every slotted one)

Examples
--------
>>> spec = parse_spec('''
... seeds = [0, 1]
... [[instances]]
... generator = "random-small"
... [[policies]]
... name = "mcsf"
... ''')
>>> [t.label for t in expand_tasks(spec)]
['random-small/mcsf/seed0', 'random-small/mcsf/seed1']
>>> parse_spec('seeds = "x"')
Traceback (most recent call last):
kvopt.sweep.spec.SpecError: invalid spec key 'seeds': expected START:STOP or a list of \
integers, got 'x'
"""

from __future__ import annotations

import functools
import glob
import hashlib
import inspect
import itertools
import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvopt.core.errors import KvoptError
from kvopt.core.instance import Instance, load_instance
from kvopt.core.seeds import MAX_SEED

#: Most seeds one ``START:STOP`` range may name (each is a task of the sweep).
MAX_SWEEP_SEEDS = 10**6
#: Seconds a task may run (spec key ``task_time_limit``) before it is recorded as ``timeout``.
DEFAULT_TASK_TIME_LIMIT = 600.0

__all__ = ["DEFAULT_METRICS", "EvaluatorSpec", "InstanceSource", "Spec", "SpecError", "Task",
           "check_spec", "code_version", "expand_tasks", "load_spec", "parse_spec"]

#: Metrics shown by the exports when a spec does not list its own.
DEFAULT_METRICS = ("total_latency", "mean_latency", "evictions", "makespan")


class SpecError(KvoptError, ValueError):
    """A bad sweep spec: ``field`` is the key path (``"policies[1].params.alpha"``).

    Examples
    --------
    >>> str(SpecError("seeds", "no seeds"))
    "invalid spec key 'seeds': no seeds"
    """

    def __init__(self, key: str, reason: str) -> None:
        self.field = key
        self.reason = reason
        super().__init__(f"invalid spec key {key!r}: {reason}")


def _generators() -> dict[str, Callable[..., Instance]]:
    from kvopt.core.generators import GENERATORS

    return GENERATORS


@dataclass(frozen=True)
class InstanceSource:
    """One ``[[instances]]`` entry at one grid point (generator) or one file.

    Examples
    --------
    >>> src = InstanceSource("m1", "model1", {"n": 8})
    >>> src.load(3).n, src.identity()                     # the instance of seed 3
    (8, {'generator': 'model1', 'params': {'n': 8}})
    >>> f = InstanceSource("tiny", path="instances/tiny/a2-example.json")
    >>> f.load().memory, f.identity()["file"], f.load(5) is f.load()   # files: any seed
    (10, 'a2-example.json', True)
    """

    entry: str
    generator: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    path: str | None = None
    memory: int | None = None
    seeds: tuple[int, ...] = ()
    _instance: Instance | None = field(default=None, compare=False, repr=False)

    def identity(self) -> dict[str, Any]:
        """What determines the instance (file sources: the content's hash)."""
        if self.generator is not None:
            return {"generator": self.generator, "params": self.params}
        return {"file": Path(str(self.path)).name, "sha256": self.load().sha256()}

    def load(self, seed: int = 0) -> Instance:
        """The instance of ``seed`` (files: the same for every seed)."""
        if self.generator is not None:
            return _generators()[self.generator](seed, **self.params)
        if self._instance is None:
            object.__setattr__(self, "_instance", load_instance(str(self.path),
                                                                memory=self.memory))
        assert self._instance is not None
        return self._instance


@dataclass(frozen=True)
class EvaluatorSpec:
    """One policy (with one point of its option grid) or one solver run.

    Examples
    --------
    >>> ev = EvaluatorSpec("policy", "alpha-protection", {"alpha": 0.3})
    >>> ev.label, ev.identity()
    ('alpha-protection[alpha=0.3]', {'policy': 'alpha-protection', 'params': {'alpha': 0.3}, \
'step_time': 'unit'})
    >>> EvaluatorSpec("solver", "highs", time_limit=10.0, formulation="tight").label
    'opt:highs/tight'
    """

    kind: str  # "policy" | "solver"
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    step_time: str = "unit"
    time_limit: float | None = None
    formulation: str | None = None
    entries: tuple[str, ...] | None = None  # solvers only: restrict to these entries
    key: str = ""  # spec key path, for error messages

    @property
    def label(self) -> str:
        """``mcsf``, ``alpha-protection[alpha=0.3]`` or ``opt:highs``."""
        if self.kind == "solver":
            form = f"/{self.formulation}" if self.formulation else ""
            return f"opt:{self.name}{form}"
        if not self.params:
            return self.name
        return self.name + "[" + ",".join(f"{k}={v}" for k, v in self.params.items()) + "]"

    def identity(self) -> dict[str, Any]:
        """What determines the evaluator's result (hashed into the task key)."""
        if self.kind == "solver":
            return {"solver": self.name, "time_limit": self.time_limit,
                    "formulation": self.formulation}
        return {"policy": self.name, "params": self.params, "step_time": self.step_time}


@dataclass(frozen=True)
class Spec:
    """A parsed sweep spec (see the module docstring).

    Examples
    --------
    >>> spec = parse_spec('seeds = [0, 1]\\n[[instances]]\\ngenerator = "random-small"\\n'
    ...                   '[[policies]]\\nname = "fcfs"\\n[[policies]]\\nname = "mcsf"')
    >>> spec.name, spec.seeds, [e.label for e in spec.evaluators], spec.task_time_limit
    ('sweep', (0, 1), ['fcfs', 'mcsf'], 600.0)
    >>> spec.to_dict()["sources"]
    [{'entry': 'random-small', 'generator': 'random-small', 'params': {}}]
    """

    name: str
    sources: tuple[InstanceSource, ...]
    evaluators: tuple[EvaluatorSpec, ...]
    seeds: tuple[int, ...]
    metrics: tuple[str, ...] = DEFAULT_METRICS
    text: str = ""
    task_time_limit: float = 600.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (recorded in the database's ``runs`` table)."""
        return {"name": self.name, "seeds": list(self.seeds), "metrics": list(self.metrics),
                "task_time_limit": self.task_time_limit,
                "sources": [{"entry": s.entry, **({"generator": s.generator,
                                                   "params": s.params} if s.generator else
                                                  {"file": s.path})} for s in self.sources],
                "evaluators": [e.label for e in self.evaluators]}


@dataclass(frozen=True)
class Task:
    """One unit of work: an instance (source + seed) evaluated by one evaluator.

    Examples
    --------
    >>> spec = parse_spec('seeds = [0, 1]\\n[[instances]]\\ngenerator = "random-small"\\n'
    ...                   '[[policies]]\\nname = "mcsf"')
    >>> t = expand_tasks(spec)[-1]
    >>> t.label, t.seed, t.evaluator.label, len(t.key)
    ('random-small/mcsf/seed1', 1, 'mcsf', 32)
    >>> p = t.payload(ship_instance=True)           # plain data for a worker
    >>> p["key"] == t.key, p["generator"], p["method"], p["params"]
    (True, 'random-small', 'mcsf', {})
    """

    key: str
    source: InstanceSource
    evaluator: EvaluatorSpec
    seed: int

    @property
    def label(self) -> str:
        """Readable name, e.g. ``m1[n=8]/mcsf/seed3``."""
        ent = self.source.entry
        if self.source.params:
            ent += "[" + ",".join(f"{k}={v}" for k, v in self.source.params.items()) + "]"
        if self.source.path is not None and self.source.generator is None:
            ent += ":" + Path(self.source.path).name
        return f"{ent}/{self.evaluator.label}/seed{self.seed}"

    def payload(self, *, ship_instance: bool) -> dict[str, Any]:
        """What a worker needs (plain data; file instances travel as their JSON)."""
        src = self.source
        doc: dict[str, Any] = {
            "key": self.key, "entry": src.entry, "seed": self.seed,
            "instance_params": src.params if src.generator else
            {"file": Path(str(src.path)).name},
            "generator": src.generator, "evaluator": self.evaluator.kind,
            "method": self.evaluator.name, "params": self.evaluator.params,
            "label": self.evaluator.label, "step_time": self.evaluator.step_time,
            "time_limit": self.evaluator.time_limit,
            "formulation": self.evaluator.formulation, "code_version": code_version()}
        if src.generator is None:
            doc["instance"] = src.load().to_dict() if ship_instance else None
        return doc


_RESULT_PACKAGES = ("core", "predictions", "sim", "mip", "theory", "queueing")


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``kvopt.__version__`` plus a digest of the Python sources that compute results.

    Part of every task key: a result computed by other code is not reused. The digest covers
    ``kvopt/{core,predictions,sim,mip,theory,queueing}`` and the sweep's task and generator
    code, not the CLI, the reports or the sweep's storage, so editing those keeps a
    database's results reusable.

    Examples
    --------
    >>> code_version().startswith(__import__("kvopt").__version__ + "+")
    True
    """
    import kvopt

    root = Path(kvopt.__file__).resolve().parent
    h = hashlib.sha256()
    files = [p for d in _RESULT_PACKAGES for p in (root / d).rglob("*.py")]
    files += [root / "__init__.py", root / "sweep" / "tasks.py", root / "sweep" / "run.py"]
    for p in sorted(files):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(p.read_bytes())
    return f"{kvopt.__version__}+{h.hexdigest()[:12]}"


def _stable_hash(doc: Any) -> str:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


# --------------------------------------------------------------------------- parsing


def parse_seeds(value: Any, key: str) -> tuple[int, ...]:
    """``"A:B"`` (exclusive), ``"a,b,c"`` or a list of integers -> a tuple (non-empty).

    Examples
    --------
    >>> parse_seeds("2:5", "seeds"), parse_seeds([7, 1], "seeds")
    ((2, 3, 4), (7, 1))
    """
    out: list[int] | None = None
    if isinstance(value, str):
        try:
            if ":" in value:
                a, b = (int(x) for x in value.split(":"))
                if not 0 <= a <= MAX_SEED or not 0 <= b <= MAX_SEED + 1:
                    raise SpecError(key, f"seeds must be integers in [0, 2**63 - 1], got {value}")
                if b - a > MAX_SWEEP_SEEDS:
                    raise SpecError(key, f"at most {MAX_SWEEP_SEEDS:,} seeds, got {b - a:,}")
                out = list(range(a, b))
            else:
                out = [int(x) for x in value.split(",") if x.strip()]
        except SpecError:
            raise
        except ValueError:
            out = None
    elif isinstance(value, list) and all(isinstance(x, int) and not isinstance(x, bool)
                                         for x in value):
        out = list(value)
    if out is None:
        raise SpecError(key, f"expected START:STOP or a list of integers, got {value!r}")
    if not out:
        raise SpecError(key, "no seeds")
    bad = [s for s in out if not 0 <= s <= MAX_SEED]
    if bad:
        raise SpecError(key, f"seeds must be integers in [0, 2**63 - 1], got {bad[0]}")
    if len(set(out)) != len(out):
        raise SpecError(key, "repeated seed")
    return tuple(out)


def _table(doc: Any, key: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise SpecError(key, f"expected a table, got {type(doc).__name__}")
    return doc


def _check_keys(doc: dict[str, Any], allowed: set[str], key: str) -> None:
    for k in doc:
        if k not in allowed:
            where = f"{key}.{k}" if key else k
            raise SpecError(where, f"unknown key (allowed: {', '.join(sorted(allowed))})")


def _grid(params: Any, key: str) -> list[dict[str, Any]]:
    """Cartesian product of the list-valued entries of ``params``."""
    params = _table(params, key)
    axes = []
    for k, v in params.items():
        vals = v if isinstance(v, list) else [v]
        if not vals:
            raise SpecError(f"{key}.{k}", "empty list")
        for x in vals:
            if not isinstance(x, (int, float, str, bool)):
                raise SpecError(f"{key}.{k}", f"expected numbers or strings, got {x!r}")
        axes.append([(k, x) for x in vals])
    return [dict(combo) for combo in itertools.product(*axes)]


def _str(doc: dict[str, Any], k: str, key: str, default: str | None = None) -> str | None:
    v = doc.get(k, default)
    if v is not None and not isinstance(v, str):
        raise SpecError(f"{key}.{k}" if key else k, f"expected a string, got {v!r}")
    return v


def parse_spec(text: str, *, base: str | Path = ".", name: str = "sweep") -> Spec:
    """Parse a spec from TOML ``text`` (file paths relative to ``base``).

    Examples
    --------
    >>> spec = parse_spec('''
    ... name = "demo"
    ... seeds = "0:3"
    ... [[instances]]
    ... generator = "model1"
    ... params = { n = [8, 10] }
    ... [[policies]]
    ... name = "alpha-protection"
    ... params = { alpha = [0.2, 0.3] }
    ... ''')
    >>> spec.name, spec.seeds, [s.params for s in spec.sources]     # a list is a grid axis
    ('demo', (0, 1, 2), [{'n': 8}, {'n': 10}])
    >>> [e.label for e in spec.evaluators]
    ['alpha-protection[alpha=0.2]', 'alpha-protection[alpha=0.3]']
    >>> parse_spec('[[instances]]\\ngenerator = "model1"')
    Traceback (most recent call last):
    kvopt.sweep.spec.SpecError: invalid spec key 'policies': nothing to evaluate: give \
[[policies]] or [[solvers]]
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError("(toml)", str(exc)) from None
    _check_keys(doc, {"name", "seeds", "step_time", "metrics", "instances", "policies",
                      "solvers", "task_time_limit"}, "")
    task_limit = doc.get("task_time_limit", DEFAULT_TASK_TIME_LIMIT)
    if (not isinstance(task_limit, (int, float)) or isinstance(task_limit, bool)
            or not 0 < task_limit < float("inf")):
        raise SpecError("task_time_limit", f"seconds > 0, got {task_limit!r}")
    sname = _str(doc, "name", "", name) or name
    seeds = parse_seeds(doc.get("seeds", [0]), "seeds")
    step_time = _str(doc, "step_time", "", "unit") or "unit"
    metrics = _parse_metrics(doc)
    sources, names = _parse_instances(doc, seeds, base)
    evaluators = _parse_evaluators(doc, step_time, names)
    return Spec(sname, tuple(sources), tuple(evaluators), seeds, tuple(metrics), text,
                float(task_limit))


def _parse_metrics(doc: dict[str, Any]) -> list[str]:
    """The spec's ``metrics`` (names of :class:`kvopt.core.metrics.Metrics` fields)."""
    metrics = doc.get("metrics", list(DEFAULT_METRICS))
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise SpecError("metrics", f"expected a list of metric names, got {metrics!r}")
    from kvopt.core.metrics import Metrics

    known = set(Metrics.__dataclass_fields__)
    for i, m in enumerate(metrics):
        if m not in known:
            raise SpecError(f"metrics[{i}]", f"unknown metric {m!r} (choose from "
                            f"{', '.join(sorted(known))})")
    return metrics


def _parse_instances(doc: dict[str, Any], seeds: tuple[int, ...],
                     base: str | Path) -> tuple[list[InstanceSource], set[str]]:
    """The ``[[instances]]`` entries, expanded (generator grid points, file globs), and the
    entry names."""
    insts = doc.get("instances")
    if not isinstance(insts, list) or not insts:
        raise SpecError("instances", "give at least one [[instances]] table")
    sources: list[InstanceSource] = []
    names: set[str] = set()
    gens = _generators()
    for i, ent in enumerate(insts):
        key = f"instances[{i}]"
        ent = _table(ent, key)
        _check_keys(ent, {"name", "generator", "params", "files", "memory", "seeds"}, key)
        gen = _str(ent, "generator", key)
        files = ent.get("files")
        if (gen is None) == (files is None):
            raise SpecError(key, "give exactly one of 'generator' and 'files'")
        ename = _str(ent, "name", key) or gen or f"files{i}"
        if ename in names:
            raise SpecError(f"{key}.name", f"duplicate entry name {ename!r}")
        names.add(ename)
        eseeds = parse_seeds(ent["seeds"], f"{key}.seeds") if "seeds" in ent else None
        if gen is not None:
            if gen not in gens:
                raise SpecError(f"{key}.generator", f"unknown generator {gen!r} (choose from "
                                f"{', '.join(sorted(gens))})")
            for k in ("memory",):
                if k in ent:
                    raise SpecError(f"{key}.{k}", "only for 'files' (use params for a "
                                    "generator)")
            for point in _grid(ent.get("params", {}), f"{key}.params"):
                sources.append(InstanceSource(ename, gen, point, seeds=eseeds or seeds))
        else:
            if not isinstance(files, list) or not files or not all(
                    isinstance(f, str) for f in files):
                raise SpecError(f"{key}.files", "expected a non-empty list of paths or globs")
            if "params" in ent:
                raise SpecError(f"{key}.params", "only for a generator")
            mem = ent.get("memory")
            if mem is not None and (not isinstance(mem, int) or isinstance(mem, bool)
                                    or mem < 1):
                raise SpecError(f"{key}.memory", f"expected a positive integer, got {mem!r}")
            for j, pattern in enumerate(files):
                p = Path(pattern)
                full = str(p if p.is_absolute() else Path(base) / p)
                hits = sorted(glob.glob(full))
                if not hits:
                    raise SpecError(f"{key}.files[{j}]", f"no file matches {pattern!r} "
                                    f"(relative to {base})")
                for h in hits:
                    sources.append(InstanceSource(ename, None, {}, path=h, memory=mem,
                                                  seeds=eseeds or (0,)))
    return sources, names


def _parse_evaluators(doc: dict[str, Any], step_time: str,
                      names: set[str]) -> list[EvaluatorSpec]:
    """The ``[[policies]]`` (one evaluator per point of the option grid) and ``[[solvers]]``
    entries; every label once."""
    evaluators: list[EvaluatorSpec] = []
    pols = doc.get("policies", [])
    if not isinstance(pols, list):
        raise SpecError("policies", "expected [[policies]] tables")
    for i, ent in enumerate(pols):
        key = f"policies[{i}]"
        ent = _table(ent, key)
        _check_keys(ent, {"name", "params", "step_time"}, key)
        pname = _str(ent, "name", key)
        if pname is None:
            raise SpecError(f"{key}.name", "missing")
        st = _str(ent, "step_time", key, step_time) or step_time
        for point in _grid(ent.get("params", {}), f"{key}.params"):
            evaluators.append(EvaluatorSpec("policy", pname, point, st, key=key))
    sols = doc.get("solvers", [])
    if not isinstance(sols, list):
        raise SpecError("solvers", "expected [[solvers]] tables")
    for i, ent in enumerate(sols):
        key = f"solvers[{i}]"
        ent = _table(ent, key)
        _check_keys(ent, {"name", "time_limit", "formulation", "instances"}, key)
        sname_ = _str(ent, "name", key)
        if sname_ is None:
            raise SpecError(f"{key}.name", "missing")
        tl = ent.get("time_limit")
        if not isinstance(tl, (int, float)) or isinstance(tl, bool) or not tl > 0:
            raise SpecError(f"{key}.time_limit", f"required, seconds > 0, got {tl!r}")
        only = ent.get("instances")
        if only is not None:
            if not isinstance(only, list) or not all(isinstance(x, str) for x in only):
                raise SpecError(f"{key}.instances", "expected a list of entry names")
            for x in only:
                if x not in names:
                    raise SpecError(f"{key}.instances", f"no [[instances]] entry named {x!r}")
        evaluators.append(EvaluatorSpec("solver", sname_, {}, step_time, float(tl),
                                        _str(ent, "formulation", key),
                                        tuple(only) if only is not None else None, key=key))
    if not evaluators:
        raise SpecError("policies", "nothing to evaluate: give [[policies]] or [[solvers]]")
    labels = [e.label for e in evaluators]
    for lab in labels:
        if labels.count(lab) > 1:
            raise SpecError("policies" if not lab.startswith("opt:") else "solvers",
                            f"evaluator {lab!r} appears twice")
    return evaluators


def load_spec(path: str | Path) -> Spec:
    """Read and parse a spec file (:class:`SpecError` on bad content, naming the key).

    Examples
    --------
    >>> spec = load_spec("instances/sweeps/smoke.toml")     # named after the file's stem
    >>> spec.name, len(spec.seeds), sorted({s.entry for s in spec.sources})
    ('smoke', 24, ['model1', 'small', 'tiny'])
    >>> [e.label for e in spec.evaluators]
    ['mcsf', 'mc-benchmark', 'fcfs', 'alpha-protection[alpha=0.1]', \
'alpha-protection[alpha=0.3]', 'opt:highs']
    >>> load_spec("no/such.toml")
    Traceback (most recent call last):
    kvopt.sweep.spec.SpecError: invalid spec key '(file)': cannot read no/such.toml: ...
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError("(file)", f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SpecError("(file)", f"{path} is not UTF-8 text") from None
    return parse_spec(text, base=p.parent, name=p.stem)


# --------------------------------------------------------------------------- checking


def check_spec(spec: Spec) -> None:
    """Everything a task would reject, checked before any cluster starts.

    Generator parameter names (against the generator's signature) and values (by drawing
    each source's first instance), file contents, policy names and options and what each
    policy needs, solver names and formulations, and solvers on time-based traces.
    Raises :class:`SpecError` naming the key.

    Examples
    --------
    >>> check_spec(parse_spec('[[instances]]\\ngenerator = "model1"\\nparams = { n = 8 }\\n'
    ...                       '[[policies]]\\nname = "mcsf"'))
    >>> check_spec(parse_spec('[[instances]]\\ngenerator = "model1"\\nparams = { size = 8 }\\n'
    ...                       '[[policies]]\\nname = "mcsf"'))
    Traceback (most recent call last):
    kvopt.sweep.spec.SpecError: invalid spec key 'instances[0].params.size': model1 has no \
parameter 'size' (settable: memory, n)
    """
    from kvopt.core.errors import InvalidInstanceError, UsageError
    from kvopt.mip.backends import backend_names
    from kvopt.sim import STEP_TIME_MODELS, check_policy

    gens = _generators()
    for src in spec.sources:
        key = _source_key(spec, src)
        if src.generator is not None:
            sig = inspect.signature(gens[src.generator]).parameters
            settable = sorted(k for k, p in sig.items() if p.kind is p.KEYWORD_ONLY
                              and not isinstance(p.default, tuple))
            for k in src.params:
                if k not in settable:
                    raise SpecError(f"{key}.params.{k}", f"{src.generator} has no parameter "
                                    f"{k!r} (settable: {', '.join(settable)})")
            try:
                inst = src.load(src.seeds[0])
            except (UsageError, InvalidInstanceError) as exc:
                raise SpecError(f"{key}.params.{exc.field}", exc.reason) from None
            except TypeError as exc:
                raise SpecError(f"{key}.params", str(exc)) from None
        else:
            try:
                inst = src.load()
            except KvoptError as exc:
                raise SpecError(f"{key}.files", f"{src.path}: {exc}") from None
        for ev in spec.evaluators:
            if ev.kind == "policy":
                try:
                    check_policy(inst, ev.name, **ev.params)
                except UsageError as exc:
                    what = {"policy": f"{ev.key}.name", "predictions": f"{ev.key}.name"}.get(
                        exc.field, f"{ev.key}.params.{exc.field}")
                    reason = exc.reason if exc.field != "predictions" else (
                        f"{ev.name} needs interval predictions, and the instances of "
                        f"{src.entry!r} have none")
                    raise SpecError(what, reason) from None
            elif _applies(ev, src) and inst.time_unit != "step":
                raise SpecError(f"{ev.key}.instances", f"the MIP needs slotted instances; "
                                f"{src.entry!r} is a time-based trace (restrict the solver "
                                "with instances = [...])")
    for ev in spec.evaluators:
        if ev.kind == "policy":
            if ev.step_time not in STEP_TIME_MODELS:
                k = f"{ev.key}.step_time"
                raise SpecError(k, f"unknown step-time model {ev.step_time!r} (choose from "
                                f"{', '.join(sorted(STEP_TIME_MODELS))})")
        else:
            if ev.name not in backend_names():
                raise SpecError(f"{ev.key}.name", f"unknown solver {ev.name!r} (choose from "
                                f"{', '.join(backend_names())})")
            if ev.formulation is not None:
                from kvopt.mip import ALL_FORMULATIONS

                if ev.formulation not in ALL_FORMULATIONS:
                    raise SpecError(f"{ev.key}.formulation", f"unknown formulation "
                                    f"{ev.formulation!r} (choose from "
                                    f"{', '.join(ALL_FORMULATIONS)})")


def _source_key(spec: Spec, src: InstanceSource) -> str:
    entries = list(dict.fromkeys(s.entry for s in spec.sources))
    return f"instances[{entries.index(src.entry)}]"


def _applies(ev: EvaluatorSpec, src: InstanceSource) -> bool:
    return ev.kind == "policy" or ev.entries is None or src.entry in ev.entries


def expand_tasks(spec: Spec) -> list[Task]:
    """Every (source, seed, evaluator) task of ``spec``, in a fixed order, each keyed.

    The key hashes the spec entry name, the instance's identity (generator and parameters, or
    file content hash), the evaluator and its parameters, the seed and :func:`code_version`;
    it does not depend on the order of the spec's tables or on the spec file's name.

    Examples
    --------
    >>> a = parse_spec('[[instances]]\\nname = "a"\\ngenerator = "random-small"\\n'
    ...                '[[instances]]\\nname = "b"\\ngenerator = "model1"\\nparams = { n = 8 }\\n'
    ...                '[[policies]]\\nname = "fcfs"\\n'
    ...                '[[solvers]]\\nname = "highs"\\ntime_limit = 5\\ninstances = ["a"]')
    >>> [t.label for t in expand_tasks(a)]          # the solver runs on entry "a" only
    ['a/fcfs/seed0', 'a/opt:highs/seed0', 'b[n=8]/fcfs/seed0']
    >>> b = parse_spec(a.text.replace('name = "fcfs"', 'name = "fcfs"\\n[[policies]]\\n'
    ...                               'name = "mcsf"'), name="other")
    >>> {t.key for t in expand_tasks(a)} < {t.key for t in expand_tasks(b)}   # a's keys kept
    True
    """
    tasks: list[Task] = []
    seen: set[str] = set()
    version = code_version()
    for src in spec.sources:
        ident = src.identity()
        for seed in src.seeds:
            for ev in spec.evaluators:
                if not _applies(ev, src):
                    continue
                key = _stable_hash({"entry": src.entry, "instance": ident,
                                    "evaluator": ev.identity(), "seed": seed,
                                    "code": version})
                if key in seen:  # the same file listed twice in one entry
                    continue
                seen.add(key)
                tasks.append(Task(key, src, ev, seed))
    return tasks
