"""Primal search: better valid schedules within a time budget
(:mod:`~kvopt.mip.search.improve`: list search and CP-SAT large-neighbourhood search)."""
