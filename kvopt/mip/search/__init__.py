"""Primal search: better valid schedules within a time budget
(:mod:`~kvopt.mip.search.improve`: list search and CP-SAT large-neighbourhood search;
:mod:`~kvopt.mip.search.lists`: the list search's incremental decoder and its tables)."""
