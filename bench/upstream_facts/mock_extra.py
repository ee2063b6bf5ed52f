"""Extra mock trajectories through upstream's evaluator (see README.md). Reuses mock_facts.py's helpers."""
import json, sys
sys.argv = ["x", "mock"]
src = open(__file__.replace("mock_extra.py", "mock_facts.py")).read().split("out = {}")[0]
exec(src)
by = {t.id: t for t in tasks}
res = {}
t = by["update_task_with_user_tools"]
res["user_tools+dismiss"] = verdict(t, [("assistant", "update_task_status", {"task_id": "task_1", "status": "completed"}), ("user", "dismiss_notification", {"notification_id": "notif_1"})])
t = by["update_task_with_history_and_env_assertions"]
res["history_env+update"] = verdict(t, [("assistant", "update_task_status", {"task_id": "task_2", "status": "completed"})])
t = by["create_task_1"]
res["create_wrong_title"] = verdict(t, [("assistant", "create_task", {"user_id": "user_1", "title": "Other"})])
res["create_twice"] = verdict(t, [("assistant", "create_task", {"user_id": "user_1", "title": "Important Meeting"})]*2)
t = by["impossible_task_1"]
res["impossible_create"] = verdict(t, [("assistant", "create_task", {"user_id": "user_1", "title": "x"})])
print(json.dumps(res, indent=1))
