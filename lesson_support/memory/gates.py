"""The consolidation pass ("dream"), run behind gates as production agents run it.

Consolidating after every turn costs a pass per turn and races with the next session; never
consolidating lets duplicates and stale values pile up. So a pass runs only when it is due
(enough time since the last pass AND at least one new session, or enough sessions since it),
and only one at a time: a non-blocking lock on <folder>/.consolidate.lock, so a second session
arriving during a pass skips it (the next one will run it) instead of waiting or racing.
The gate's state (the last pass, sessions since) is a small JSON file beside the notes.
"""
from __future__ import annotations

import fcntl
import json
import os
from datetime import datetime, timedelta
from pathlib import Path

from course.givens.memory import ForgetPolicy
from solutions.memory import consolidate, forget

STATE = ".consolidate.json"
LOCK = ".consolidate.lock"


class ConsolidationGate:
    def __init__(self, folder, min_hours: float = 24, min_sessions: int = 5):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.min_hours, self.min_sessions = min_hours, min_sessions

    def state(self) -> dict:
        path = self.folder / STATE
        if not path.exists():
            return {"last_pass": None, "sessions": 0}
        return json.loads(path.read_text(encoding="utf-8"))

    def _save(self, state: dict):
        tmp = self.folder / (STATE + ".tmp")
        tmp.write_text(json.dumps(state), encoding="utf-8")
        os.replace(tmp, self.folder / STATE)

    def note_session(self):
        """One more session ended since the last pass."""
        state = self.state()
        state["sessions"] += 1
        self._save(state)

    def due(self, now: datetime) -> tuple[bool, str]:
        state = self.state()
        if state["sessions"] >= self.min_sessions:
            return True, "sessions"
        last = state["last_pass"]
        if state["sessions"] and (last is None or now - datetime.fromisoformat(last) >= timedelta(hours=self.min_hours)):
            return True, "time"
        return False, "not due"

    def run(self, store, pending, now: datetime, policy: ForgetPolicy = ForgetPolicy()) -> dict:
        """Consolidate `pending` records (extracted since the last pass) into `store`, then apply
        the forgetting policy, if due and no other pass holds the lock. Returns {"ran": bool,
        "reason": ..., and when it ran "records": how many the store holds}."""
        ready, reason = self.due(now)
        if not ready:
            return {"ran": False, "reason": reason}
        with open(self.folder / LOCK, "a+") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return {"ran": False, "reason": "locked"}
            try:
                result = store.apply(forget(consolidate(store.records(), pending), now, policy))
                self._save({"last_pass": now.isoformat(), "sessions": 0})
                return {"ran": True, "reason": reason, "records": len(result)}
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
