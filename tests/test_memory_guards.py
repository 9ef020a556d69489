"""No input exhausts the machine (issue 25): every allocation sized by the input (a horizon,
an output length, an arrival span) goes through the memory budget, and an instance beyond
what kvopt represents is refused naming the field. The issue's inputs run in a child process
whose address space is capped (``RLIMIT_AS``), so a regression fails here instead of taking
the machine down."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import numpy as np
import pytest

from kvopt import Instance
from kvopt.core.errors import InvalidInstanceError, MemoryBudgetError
from kvopt.core.mcsf import predicted_profile

#: Address space of each child (a refusal needs ~0.3 GiB; the issue's runs grew to 23.5 GB).
CAP = 3 * 2**30


def _capped() -> None:  # pragma: no cover - runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def _kvopt(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "kvopt", *argv], capture_output=True,
                          text=True, timeout=300, check=False, preexec_fn=_capped,
                          env={**os.environ, **(env or {})})


def _write(tmp_path, name: str, memory: int, arrival, prompt, output) -> str:
    doc = {"schema": "kvopt.instance", "schema_version": 1, "memory": memory,
           "requests": {"arrival": arrival, "prompt": prompt, "output": output}}
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


@pytest.fixture(scope="module")
def big_output(tmp_path_factory):
    """The issue's valid one-request instance: memory 1e11, output 1e9 (23.5 GB, killed)."""
    return _write(tmp_path_factory.mktemp("g"), "big.json", 10**11, [0], [1], [10**9])


@pytest.mark.parametrize("argv,field", [
    (["solve", "{x}", "--time-limit", "5"], "requests.output"),
    (["bound", "{x}"], "requests.output"),
    (["simulate", "{x}", "--policy", "mcsf"], "requests.output"),
])
def test_one_request_with_output_1e9_is_refused_not_oom(big_output, argv, field):
    r = _kvopt(*(a.format(x=big_output) for a in argv))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "MemoryError" not in r.stderr
    assert f"invalid {field}:" in r.stderr and "memory budget" in r.stderr
    assert sum("error:" in line for line in r.stderr.splitlines()) == 1  # one message


def test_arrivals_1e12_apart_are_refused_not_a_7_tib_profile(tmp_path):
    x = _write(tmp_path, "far.json", 100, [0, 10**12], [1, 1], [5, 5])
    for argv in (["solve", x, "--time-limit", "5"], ["simulate", x, "--policy", "mcsf"]):
        r = _kvopt(*argv)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert "memory budget" in r.stderr and "invalid requests" in r.stderr
    r = _kvopt("solve", x, "--time-limit", "5")
    assert "requests.arrival" in r.stderr  # the arrival span makes the horizon long


@pytest.mark.parametrize("memory,output,field", [
    (10**30, [5], "memory"),             # was OverflowError in core_lengths
    (2**62, [2**62 - 2] * 4, "memory"),  # sum of outputs would overflow int64
])
def test_beyond_what_kvopt_represents_is_refused_naming_the_field(tmp_path, memory, output,
                                                                   field):
    x = _write(tmp_path, "huge.json", memory, [0] * len(output), [1] * len(output), output)
    for cmd in (["validate", x], ["solve", x, "--time-limit", "5"], ["bound", x]):
        r = _kvopt(*cmd)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert f"invalid field '{field}'" in r.stderr and "2**53" in r.stderr


def test_horizon_beyond_2_53_is_refused():
    with pytest.raises(InvalidInstanceError) as exc:
        Instance(memory=10, arrival=[0, 2**60], prompt=[1, 1], output=[2, 2])
    assert exc.value.field == "requests.arrival"
    with pytest.raises(InvalidInstanceError) as exc:
        Instance(memory=2**53, arrival=[0] * 3, prompt=[0] * 3, output=[2**52] * 3)
    assert exc.value.field == "requests.output"


def test_bound_improve_beyond_the_budget_is_skipped_and_the_bounds_printed(tmp_path):
    """The list search's (n, horizon) tables: 15.9 GiB for 2000 Azure requests at 0.05 s
    slots, grown to 24 GB and killed; now skipped with its reason, the bounds still printed."""
    n = 100
    rng = np.random.default_rng(0)
    out = rng.integers(100, 300, n).tolist()
    x = _write(tmp_path, "long.json", 600, sorted(rng.integers(0, 10**4, n).tolist()),
               [10] * n, out)
    # tables 3.5 MiB (27 rows of 15,649 slots: the makespan, every 8th prefix; ~48 MB when
    # they were (n + 1) x horizon), the rest < 2 MB
    r = _kvopt("bound", x, "--improve", "5", "--json", "--lp", "none",
               env={"KVOPT_MEMORY_BUDGET": "3M"})
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "list search skipped, LNS only" in doc["skipped"]["improve"]
    assert doc["best_schedule"]["valid"]
    assert doc["bounds"]["volume"] >= doc["bounds"]["trivial"] > 0


def test_bound_improve_on_2000_azure_requests_at_50ms_runs_within_the_budget():
    """The issue's command (it grew to 24 GB and was killed by the kernel, no message). The
    list search's tables were (n + 1) x horizon (31.9 GiB), refused by the budget, and only
    the LNS ran; sized by the makespan with every 8th prefix (~270 MB) the whole search runs,
    under a 3 GiB address-space cap."""
    r = _kvopt("bound", "instances/traces/azure_conv_2023.csv", "--slot-seconds", "0.05",
               "--first", "2000", "--improve", "3", "--lp", "none", "--json",
               env={"KVOPT_MEMORY_BUDGET": "2G"})
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "improve" not in doc["skipped"], doc["skipped"]
    assert doc["best_schedule"]["valid"] and doc["n"] == 2000
    assert doc["bounds"]["volume"] > doc["bounds"]["trivial"] > 0


def test_predicted_profile_matches_the_per_request_definition():
    rng = np.random.default_rng(1)
    for _ in range(300):
        k = int(rng.integers(0, 6))
        t = int(rng.integers(0, 20))
        start = rng.integers(0, t + 1, k)
        pred = rng.integers(1, 30, k)
        prompt = rng.integers(0, 9, k)
        H = int(rng.integers(1, 40))
        d = np.arange(1, H + 1)
        age = (t - start)[:, None] + d[None, :]
        ref = np.where(age <= pred[:, None], prompt[:, None] + age, 0).sum(axis=0)
        got = predicted_profile(t, prompt, start, pred, H)
        assert got.tolist() == ref.astype(np.int64).tolist()


def test_check_allocation_names_the_field():
    from kvopt.core.limits import check_allocation

    with pytest.raises(MemoryBudgetError) as exc:
        check_allocation(2**40, "a table", "requests.arrival", "1G")
    assert exc.value.field == "requests.arrival" and exc.value.budget == 2**30


def test_a_budget_above_the_machine_does_not_let_an_allocation_through(monkeypatch):
    """``--memory-budget 99999999999999999999`` let the list search's tables (1.15 TiB on the
    Azure trace at 0.5 s slots) reach numpy, which raised its own MemoryError (found by a
    random CLI sweep); the memory available now caps what a budget can allow."""
    from kvopt.core import limits

    monkeypatch.setattr(limits, "available_memory", lambda: 2**30)
    limits.check_allocation(2**29, "a table", "requests.arrival", "1T")
    with pytest.raises(MemoryBudgetError, match="memory available now") as exc:
        limits.check_allocation(2**31, "a table", "requests.arrival", "1T")
    assert exc.value.field == "requests.arrival" and exc.value.budget == 2**30


def test_cli_solve_with_a_budget_above_the_machine_skips_the_list_search(capsys):
    from kvopt.cli.main import main

    code = main(["solve", "instances/traces/azure_conv_2023.csv", "--slot-seconds", "0.5",
                 "--time-limit", "5", "--memory-budget", "99999999999999999999", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and doc["status"] == "time_limit" and doc["objective"] is not None


#: Policies left out of the sweep below, with the reason.
SLOW_ON_HUGE_OUTPUTS = {
    # TRAIL refreshes its predictions every `every` slots while a request runs (each refresh
    # is a decision with a prediction cost): O(output) decisions, 0.23 ms each -- 23 s for
    # output 1e5, days for 1e9. Bounded memory (74 MB at 1e5), unbounded time.
    "trail",
}


def test_every_policy_on_output_1e9_is_refused_or_runs_not_oom(big_output):
    """Every registered policy on the one-request instance, in one capped child: a clean
    exit (0 or 2 naming an instance field and the memory budget), never a traceback. GBA and
    GSA allocated a 2.91 TiB profile (4 M slots), WAIT a 29.8 GiB one, before the simulator's
    FutureProfile checked its buffers against the budget."""
    code = f"""
import contextlib, io, json, sys
from kvopt.cli.main import main
from kvopt.sim.policies.registry import POLICIES
out = {{}}
for name in sorted(set(POLICIES) - set({sorted(SLOW_ON_HUGE_OUTPUTS)!r}) - {{"replay"}}):
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            rc = main(["simulate", {big_output!r}, "--policy", name])
    except SystemExit as exc:
        rc = exc.code
    except BaseException as exc:  # the defect this test is about
        rc = type(exc).__name__
    out[name] = [rc, err.getvalue().strip()]
print(json.dumps(out))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, check=False, preexec_fn=_capped)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert len(res) >= 20
    for name, (rc, err) in res.items():
        assert rc in (0, 2), (name, rc, err)
        if rc == 2:
            assert err.count("error:") == 1, (name, err)
            assert (("memory budget" in err and "invalid requests" in err)
                    or "invalid memory" in err or "invalid --" in err), (name, err)


def test_memory_budget_flag_bounds_every_allocation_of_the_command(tmp_path):
    """``--memory-budget`` was only the model's budget: MC-SF's window, the simulator's
    profiles and the list search's tables were checked against the default (half the
    available memory), so ``bound X --memory-budget 1M`` allocated a 45.8 MiB window. The
    flag (and ``solve(ram=)``) now scopes every check of the call."""
    from kvopt.core.limits import memory_budget_scope, resolve_memory_budget
    from kvopt.mip import solve

    x = _write(tmp_path, "long.json", 10**7, [0], [1], [10**6])
    ok = _kvopt("bound", x, "--lp", "none", "--no-progress")
    assert ok.returncode == 0, ok.stderr
    r = _kvopt("bound", x, "--lp", "none", "--no-progress", "--memory-budget", "1M")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "invalid requests.output: MC-SF's predicted-memory window" in r.stderr
    assert "memory budget of 1.0 MiB" in r.stderr
    inst = Instance(memory=10**7, arrival=[0], prompt=[1], output=[10**6])
    with pytest.raises(MemoryBudgetError) as exc:
        solve(inst, ram="1M", time_limit=5)
    assert exc.value.budget == 2**20
    with memory_budget_scope("2M"):
        assert resolve_memory_budget() == 2 * 2**20
    assert resolve_memory_budget() != 2 * 2**20


def test_an_lns_step_model_above_the_budget_is_refused_and_the_search_goes_on():
    """CP-SAT's own memory was not counted: `solve <2000 Azure requests> --memory-budget 100M`
    reached 664 MB RSS in its LNS steps (207 MB now). A step's model is estimated at
    CP_BYTES_PER_INTERVAL per interval before it is built; the LNS halves its neighbourhood."""
    from kvopt.core.generators import model1
    from kvopt.core.limits import memory_budget_scope
    from kvopt.mip.search.improve import improve, lns_step

    inst = model1(1, n=12, memory=20)
    res = improve(inst, time_limit=2, seed=1)
    with memory_budget_scope("16K"), pytest.raises(MemoryBudgetError) as exc:
        lns_step(inst, res.schedule.run_start, np.arange(4), time_limit=5)
    assert "an LNS step's CP-SAT model" in exc.value.reason
    with memory_budget_scope("16K"):
        small = improve(inst, time_limit=2, seed=1, list_share=0.0)
    assert small.report.ok and small.model["lns_steps"] >= 1
    assert small.model["lns_improving_steps"] == 0


def test_memavailable_is_read_at_most_once_per_ttl(monkeypatch):
    """The default budget reads ``/proc/meminfo`` once per ``MEMINFO_TTL_S`` (a small
    simulation checks several allocations), and again once the TTL has passed."""
    from kvopt.core import limits

    reads = []
    real_open = open

    def counting_open(path, *args, **kwargs):
        if path == "/proc/meminfo":
            reads.append(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    monkeypatch.setattr(limits, "_meminfo_cache", None)
    first = limits._meminfo_available()
    for _ in range(20):
        assert limits._meminfo_available() == first
    assert len(reads) == 1
    monkeypatch.setattr(limits, "MEMINFO_TTL_S", 0.0)
    limits._meminfo_available()
    assert len(reads) == 2
