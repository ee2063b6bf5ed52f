"""Machinery shared by every tau2-bench port: task data, prompts, the Tau2BaseScenario."""

from pytest_tau2.domains.tau2_common.base import Tau2BaseScenario
from pytest_tau2.domains.tau2_common.tasks import load_split_ids, load_tasks, tau2_data_root

__all__ = ["Tau2BaseScenario", "load_split_ids", "load_tasks", "tau2_data_root"]
