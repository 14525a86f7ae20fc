"""A seeded synthetic workload: workers with skills, capacities and hourly costs, and tasks that
each need one skill for a number of hours.

Generator (all draws from ``numpy.random.default_rng(seed)``):

- ``n_skills`` skills; skill ``s`` is rarer as ``s`` grows (weights ``1 / (1 + s)``);
- each worker has a seniority level 0, 1 or 2 (probabilities 0.5, 0.3, 0.2), a weekly capacity
  of 24, 32 or 40 hours (probabilities 0.25, 0.25, 0.5), an hourly cost ``20 + 12 * seniority``
  plus ``U(-2, 2)``, and 1 + seniority + Poisson(0.5) distinct skills (at most ``n_skills``),
  drawn by the skill weights; every skill gets at least two workers;
- each task needs one skill (drawn by the skill weights) for 1, 2, 3 or 4 hours (probabilities
  0.4, 0.3, 0.2, 0.1);
- capacities are scaled up if the tasks need more than ``load`` (default 75 %) of them, and a
  skill whose tasks need more than 90 % of its workers' capacity is taught to more workers, so
  that every instance is feasible.

Tasks that need the same skill for the same hours are interchangeable, so the model counts them:
a task *type* ``(skill, hours)`` with ``count`` tasks, and an integer decision ``y[type, worker]``
(how many tasks of the type the worker gets) for every eligible pair. That is the sufficient
statistic of the assignment: 2,000 tasks become at most ``4 n_skills`` types.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt.errors import DataValidationError


@dataclass
class Workload:
    """Workers, task types and the eligible (type, worker) pairs of a synthetic workload.

    Attributes
    ----------
    workers : DataFrame
        ``capacity`` (hours), ``cost`` (per hour), ``seniority``, ``team``, and one boolean
        column per skill.
    types : DataFrame
        ``skill``, ``hours`` and ``count`` per task type.
    pairs : DataFrame
        ``type`` and ``worker`` of every eligible pair (the worker has the type's skill): one
        integer decision each.
    n_tasks : int

    Examples
    --------
    >>> w = make_workload(20, 200, seed=1)
    >>> int(w.types["count"].sum()), len(w.workers)
    (200, 20)
    """

    workers: pd.DataFrame
    types: pd.DataFrame
    pairs: pd.DataFrame
    n_tasks: int

    @property
    def hours_matrix(self) -> sp.csr_matrix:
        """``(n_workers, n_pairs)``: the hours pair ``p`` puts on its worker per task."""
        p = self.pairs
        h = self.types["hours"].to_numpy(float)[p["type"].to_numpy()]
        return sp.csr_matrix((h, (p["worker"].to_numpy(), np.arange(len(p)))), shape=(len(self.workers), len(p)))

    @property
    def cover_matrix(self) -> sp.csr_matrix:
        """``(n_types, n_pairs)``: pair ``p`` covers tasks of its type."""
        p = self.pairs
        return sp.csr_matrix((np.ones(len(p)), (p["type"].to_numpy(), np.arange(len(p)))),
                             shape=(len(self.types), len(p)))


def make_workload(n_workers: int = 200, n_tasks: int = 2000, *, n_skills: int = 8, n_teams: int = 10,
                  load: float = 0.75, seed: int = 0) -> Workload:
    """A seeded synthetic workload (see the module docstring for the generator).

    Parameters
    ----------
    n_workers, n_tasks : int
    n_skills : int
    n_teams : int
        Workers are dealt into teams round-robin after a shuffle (``workers["team"]``).
    load : float
        Share of the eligible capacity the tasks need, in (0, 0.9].
    seed : int

    Returns
    -------
    Workload

    Examples
    --------
    >>> w = make_workload(seed=0)
    >>> len(w.workers), w.n_tasks, len(w.types) <= 32
    (200, 2000, True)
    """
    if n_workers < 2 * n_skills or n_tasks < 1 or n_skills < 1 or not 0 < load <= 0.9 or n_teams < 2:
        raise DataValidationError("make_workload needs n_workers >= 2 n_skills, n_tasks >= 1, n_teams >= 2 and "
                                  f"0 < load <= 0.9; got {n_workers}, {n_tasks}, {n_skills}, {n_teams}, {load}.")
    rng = np.random.default_rng(seed)
    pw = 1.0 / (1.0 + np.arange(n_skills))
    pw /= pw.sum()
    seniority = rng.choice(3, n_workers, p=[0.5, 0.3, 0.2])
    capacity = rng.choice([24.0, 32.0, 40.0], n_workers, p=[0.25, 0.25, 0.5])
    cost = 20.0 + 12.0 * seniority + rng.uniform(-2, 2, n_workers)
    n_sk = np.minimum(1 + seniority + rng.poisson(0.5, n_workers), n_skills)
    # distinct skills by weight: the n_sk smallest of Exp / weight (weighted sampling without replacement)
    keys = rng.exponential(size=(n_workers, n_skills)) / pw
    rank = np.argsort(np.argsort(keys, axis=1), axis=1)
    skills = rank < n_sk[:, None]
    for k in np.flatnonzero(skills.sum(axis=0) < 2):   # every skill gets at least two workers
        skills[rng.choice(n_workers, 2, replace=False), k] = True
    hours_opts = np.array([1.0, 2.0, 3.0, 4.0])
    task_skill = rng.choice(n_skills, n_tasks, p=pw)
    task_hours = rng.choice(4, n_tasks, p=[0.4, 0.3, 0.2, 0.1])
    # the tasks need at most `load` of all capacity (capacities are scaled up if they need more),
    # and at most 90 % of the capacity of each skill's workers (more workers learn a scarce skill)
    need = np.bincount(task_skill, weights=hours_opts[task_hours], minlength=n_skills)
    capacity = capacity * max(1.0, need.sum() / (load * capacity.sum()))
    for s in range(n_skills):
        while need[s] > 0.9 * (skills[:, s] @ capacity):
            skills[rng.choice(np.flatnonzero(~skills[:, s])), s] = True
    team = rng.permutation(n_workers) % n_teams
    workers = pd.DataFrame({"capacity": capacity, "cost": cost, "seniority": seniority, "team": team})
    for s in range(n_skills):
        workers[f"skill_{s}"] = skills[:, s]
    types = (pd.DataFrame({"skill": task_skill, "hours": hours_opts[task_hours]})
             .value_counts().rename("count").reset_index().sort_values(["skill", "hours"]).reset_index(drop=True))
    t_idx, w_idx = np.nonzero(skills[:, types["skill"].to_numpy()].T)
    pairs = pd.DataFrame({"type": t_idx, "worker": w_idx})
    return Workload(workers=workers, types=types, pairs=pairs, n_tasks=int(n_tasks))


__all__ = ["Workload", "make_workload"]
