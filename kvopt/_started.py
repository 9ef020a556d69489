"""When kvopt started in this process: the first statement of ``import kvopt``.

A command line's time limit counts from here (:func:`kvopt.core.limits.kvopt_start`), not from
the process start: a shell running ``bash -c 'sleep 25 && kvopt solve ...'`` execs kvopt in its
own process, whose start time includes whatever the shell did first.
"""

import time

#: :func:`time.monotonic` seconds at the first import of :mod:`kvopt`.
STARTED = time.monotonic()
