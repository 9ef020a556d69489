"""Helpers shared by the CLI sub-commands: JSON output, instance loading, progress."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kvopt.core.instance import Instance, load_instance


def add_instance_argument(p: argparse.ArgumentParser) -> None:
    """``INSTANCE`` (JSON v1 or trace CSV) and ``--memory`` for CSV traces."""
    p.add_argument("instance", metavar="INSTANCE", help="instance JSON (v1) or trace CSV")
    p.add_argument("--memory", type=int, default=None,
                   help="KV capacity M in tokens (trace CSV default 16492; overrides JSON)")


def add_json_argument(p: argparse.ArgumentParser) -> None:
    """The ``--json`` flag every sub-command takes."""
    p.add_argument("--json", action="store_true", help="print one JSON object to stdout")


def read_instance(args: argparse.Namespace) -> Instance:
    """Load the instance named by ``args.instance`` (raises InvalidInstanceError)."""
    return load_instance(args.instance, memory=getattr(args, "memory", None))


def emit(args: argparse.Namespace, doc: dict[str, Any], text: str) -> None:
    """Print ``doc`` as JSON under ``--json``, else the human-readable ``text``."""
    if getattr(args, "json", False):
        json.dump(doc, sys.stdout, indent=1, default=_default)
        sys.stdout.write("\n")
    else:
        print(text)


def _default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o)}")
