"""The context a row's session starts from, with the layers applied: the system prompt (and the
fence's policy), notes and a compaction summary left by earlier, unprotected sessions, an
installed skill's catalog, a status bar filled from a tool result, or an attachment pasted into
the user's message.
"""
from __future__ import annotations

import json

from course.paths import DATA_DIR
from solutions.injection import unfence
from solutions.skills import build_catalog
from solutions.skills import load_skill as load_skill_file
from lesson_support.injection.data import POLICY, SYSTEM_PROMPT
from lesson_support.injection.layers import WARNING, sanitise, tagged
from lesson_support.injection.world import Scene

SUMMARY_REQUEST = "Summarise the conversation so far for a later session."
TRACKER_REQUEST = "Check the tracker for project {project}."


def _call(call_id: str, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}]}


def earlier_summary(client, model: str, world: dict) -> str:
    """The compaction summary of an earlier, unprotected session that read `world["url"]`."""
    recorded = [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": world["task"]},
                _call("call_earlier_1", "fetch_page", {"url": world["url"]}),
                {"role": "tool", "tool_call_id": "call_earlier_1", "content": world["page"]},
                {"role": "assistant", "content": world["answer"]},
                {"role": "user", "content": SUMMARY_REQUEST}]
    reply = client.chat.completions.create(model=model, messages=recorded)
    return reply.choices[0].message.content or ""


def status_bar(scene: Scene, tracker: dict) -> str:
    """The harness's <agent_status> block after one check_tracker call."""
    items = tracker.get("items", [])
    if "provenance" in scene.layers:
        todo = f"{len(items)} items from check_tracker (outside text, not copied into the bar)"
    else:
        todo = "; ".join(f"[{'x' if i.get('done') else ' '}] {i.get('title', '')}" for i in items)
    return f"<agent_status>\ntool_calls: check_tracker=1\ntodo: {todo}\n</agent_status>"


def build_messages(row: dict, layers, scene: Scene, client, model, separate_fn, fence_fn) -> list:
    """The context the row's session starts from, with the layers applied."""
    world = row.get("world", {})
    system = SYSTEM_PROMPT + (f"\n\n{POLICY}" if "fence" in layers else "") \
        + (f"\n\n{WARNING}" if "warning_only" in layers else "")
    messages = [{"role": "system", "content": system}]
    for note in world.get("notes", []):
        scene.remember(note["title"], note["content"], note["origin"])
    if "summarise" in world:
        scene.remember("Session summary: " + world["summarise"]["task"],
                       earlier_summary(client, model, world["summarise"]), world["summarise"]["url"])
    if world.get("skills"):
        skill_dir = DATA_DIR / world["skills"]
        skill = load_skill_file(skill_dir.parent, skill_dir.name)
        messages.append({"role": "user", "content": build_catalog([skill], 1000).text})
    task = row["task"]
    if "tracker" in world:
        tracker = world["tracker"]
        messages += [{"role": "user", "content": TRACKER_REQUEST.format(project=tracker["project"])},
                     _call("call_tracker_1", "check_tracker", {"project": tracker["project"]}),
                     {"role": "tool", "tool_call_id": "call_tracker_1",
                      "content": scene.deliver("check_tracker", json.dumps(tracker, ensure_ascii=False),
                                               "issue tracker")},
                     {"role": "assistant", "content": f"Project {tracker['project']} has "
                                                      f"{len(tracker.get('items', []))} tasks."},
                     {"role": "user", "content": task},
                     {"role": "user", "content": status_bar(scene, tracker)}]
        return messages
    attachment = world.get("attachment")
    if attachment:
        text = sanitise(attachment["text"]) if "sanitise" in layers else attachment["text"]
        marked = tagged(layers) or "separate" in layers
        body = fence_fn(text, "attachment " + attachment["name"]) if marked else text
        task = f"{task}\n\nAttached {attachment['name']}:\n{body}"
    messages.append({"role": "user", "content": task})
    if "separate" in layers:
        messages = separate_fn(messages)
        if not tagged(layers):  # the fence only marked the text for moving: take it off again
            for m in messages:
                if m.get("role") == "tool" and str(m.get("content", "")).startswith("<external_content"):
                    try:
                        m["content"] = unfence(m["content"])
                    except ValueError:
                        pass
    return messages
