import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# tests import the oracle module `tests.bruteforce`; run from any cwd
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.chdir(ROOT)
