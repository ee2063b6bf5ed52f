"""Hand-made mock trajectories through upstream's evaluator (see README.md): python mock_extra.py"""

import json
import sys

sys.argv = [sys.argv[0], "mock"]
from mock_facts import TASKS, verdict  # noqa: E402  (the domain is read from argv at import)

BY_ID = {t.id: t for t in TASKS}
UPDATE_1 = ("assistant", "update_task_status", {"task_id": "task_1", "status": "completed"})
CASES = {
    "user_tools+dismiss": (
        "update_task_with_user_tools",
        [UPDATE_1, ("user", "dismiss_notification", {"notification_id": "notif_1"})],
    ),
    "history_env+update": (
        "update_task_with_history_and_env_assertions",
        [("assistant", "update_task_status", {"task_id": "task_2", "status": "completed"})],
    ),
    "create_wrong_title": ("create_task_1", [("assistant", "create_task", {"user_id": "user_1", "title": "Other"})]),
    "create_twice": (
        "create_task_1",
        [("assistant", "create_task", {"user_id": "user_1", "title": "Important Meeting"})] * 2,
    ),
    "impossible_create": ("impossible_task_1", [("assistant", "create_task", {"user_id": "user_1", "title": "x"})]),
}
print(json.dumps({name: verdict(BY_ID[task], calls) for name, (task, calls) in CASES.items()}, indent=1))
