"""Every public function and class of ``kvopt`` shows an example (engineering rule 7).

"Public" is what a module lists in ``__all__`` and defines itself, or, in a module without
``__all__``, every function and class it defines whose name does not start with ``_``; the
examples run as doctests in ``tests/test_doctests.py``. The seed modules of the reproduction
report (``kvopt.report.reproduce.seed0xx``) are plug-ins: their functions compute one target
each and are shown through :func:`kvopt.report.reproduce.run` and
:func:`kvopt.report.reproduce.core.build_section`, whose examples run them. The few names
without an example are listed below, each with the reason one would not help (it needs a GPU,
takes seconds, or writes a whole report).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import kvopt

#: name -> why it has no example (kept short; every entry is a deliberate exception)
NO_EXAMPLE: dict[str, str] = {
    "kvopt.queueing.closed_forms.trail_perfect_exp_waiting":
        "SymPy integrates for 0.5-1.3 s a call; tests/queueing/test_formulas.py checks it",
    "kvopt.report.ratios.adversarial_rows":
        "~7 s at its smallest (fixed 4000-job constructions); adversarial_markdown shows rows",
    "kvopt.report.ratios.write_report": "writes a whole report, ~7 s; kvopt report ratios",
}

#: module prefix of the reproduction report's plug-ins (see the module docstring)
PLUGINS = "kvopt.report.reproduce.seed0"


def _public() -> list[str]:
    names = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # moved modules' shims
        for info in pkgutil.walk_packages(kvopt.__path__, prefix="kvopt."):
            if info.name.endswith("__main__") or info.name.startswith("kvopt.cli"):
                continue
            if info.name.startswith(PLUGINS):
                continue
            mod = importlib.import_module(info.name)
            own = [n for n in vars(mod) if not n.startswith("_")]
            for name in getattr(mod, "__all__", own):
                obj = getattr(mod, name, None)
                if ((inspect.isfunction(obj) or inspect.isclass(obj))
                        and getattr(obj, "__module__", None) == info.name):
                    names.append(f"{info.name}.{name}")
    return names


def _has_example(qualified: str) -> bool:
    module, _, name = qualified.rpartition(".")
    return ">>>" in (inspect.getdoc(getattr(importlib.import_module(module), name)) or "")


def test_every_public_name_has_an_example():
    public = _public()
    assert len(public) > 350
    missing = [n for n in public if n not in NO_EXAMPLE and not _has_example(n)]
    assert not missing, f"add an Examples section (or a reason to NO_EXAMPLE) for {missing}"


def test_the_exceptions_are_current():
    public = set(_public())
    stale = [n for n in NO_EXAMPLE if n not in public or _has_example(n)]
    assert not stale, f"remove from NO_EXAMPLE (gone, or has an example now): {stale}"
