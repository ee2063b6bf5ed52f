"""tau2-bench's own file formats, spoken both ways.

- :mod:`.models`: pydantic models of the parts of upstream's ``Results`` file (run info, tasks,
  simulations with their messages and ``reward_info``) that pytest-tau2 writes and reads;
- :mod:`.submission`: upstream's leaderboard ``submission.json``;
- :mod:`.export` + :mod:`.export_cli`: a results folder -> one ``Results`` file per domain and a
  draft ``submission.json`` (``pytest-tau2 export``), upstream's submission rules enforced;
- :mod:`.upstream_runs`: an upstream ``Results`` file -> the saved turns of each simulation, by
  task and trial, for ``--tau2-agent replay:FILE --tau2-user replay``, and where our verdict differs
  from the ``reward_info`` upstream stored (docs/replay.md, docs/leaderboard.md).
"""
