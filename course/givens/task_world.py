"""Chapter 12's givens: the task world the lab hands out, no answer in it (lab 12 asks for
`judge_task`, `run_trials`, `success_interval`, `ablate` and `lint_prompt`).

Kestrel Air's service desk, written for the course (tau-bench's idea of judging a task by the
database's end state; none of its code or data):

    the database   fresh_db(): eight bookings (holder, PIN, day, cabin, bags, status, refund)
                   and the seats free per day; IRRELEVANT_FIELDS, which the tools touch on
                   every call and a judge must ignore
    the tools      TOOLS (full definitions: what a tool is for, when not to use it, examples,
                   relations), BARE_TOOLS (the same signatures, no descriptions), MUTATING,
                   execute(db, name, args) -> (text, error)
    the tasks      load_tasks(): 34 tasks (data/task_world/tasks.json), each with its turns
                   (a scripted user: the next turn is sent when the desk has answered), its
                   kind and the expected end state: {"bookings": {ref: {field: value}}}, the
                   fields a correct desk changes, the tools it may need and its starting
                   database under "db"; load_tasks(hidden=True), four more the lab's checks use
    the prompt     SECTIONS: the system prompt's owned sections, each in its variants
                   (tone, structure, rules, few-shot); FACTORS, BASELINE; system_prompt(config),
                   tools_for(config)
    the agent      run_task(client, task, config, seed, db): the desk on a model, one task,
                   the database changed in place; what it did, counted (Outcome as a dict)

A configuration is a dict {factor: variant}; BASELINE is the structured prompt, full tool
descriptions, a neutral tone, executable rules and fixed few-shot examples.
"""
from __future__ import annotations

import copy
import json
from functools import lru_cache

from course.paths import DATA_DIR

TASKS_FILE = DATA_DIR / "task_world" / "tasks.json"
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
CABINS = ["economy", "premium", "business"]
IRRELEVANT_FIELDS = ("last_viewed",)   # per booking: the desk's call counter, not the customer's state
MAX_REPLIES = 8                        # model replies per user turn before the desk gives up

_BOOKINGS = [
    # ref, holder, pin, day, cabin, fare
    ("QZKLMA", "Amara Okafor", 4821, "monday", "economy", 240),
    ("TRVWXE", "Lars Nyberg", 1937, "tuesday", "economy", 180),
    ("HPLNDG", "Mei Chen", 5560, "wednesday", "premium", 410),
    ("BXFQRE", "Diego Santos", 7402, "thursday", "economy", 205),
    ("NWCJYT", "Fatima Zahra", 3318, "friday", "business", 960),
    ("GMLPSK", "Tomás Novak", 2284, "saturday", "economy", 150),
    ("RDVKEZ", "Priya Raman", 6093, "sunday", "premium", 385),
    ("JFXUWO", "Kofi Mensah", 8176, "monday", "economy", 230),
]


def fresh_db() -> dict:
    """A new copy of the desk's database."""
    return {
        "bookings": {ref: {"holder": holder, "pin": pin, "day": day, "cabin": cabin,
                           "fare": fare, "bags": 0, "status": "active", "refund": None,
                           "last_viewed": 0}
                     for ref, holder, pin, day, cabin, fare in _BOOKINGS},
        "seats": {day: 3 if day in ("friday", "sunday") else 12 for day in WEEKDAYS},
    }


def _tool(name, description, params, bare=False):
    props = {}
    for pname, kind, about in params:
        spec = {"type": "integer"} if kind == "int" else (
            {"type": "string", "enum": list(kind)} if isinstance(kind, (list, tuple)) else {"type": "string"})
        if not bare:
            spec["description"] = about
        props[pname] = spec
    fn = {"name": name, "parameters": {"type": "object", "properties": props,
                                        "required": [p for p, _, _ in params]}}
    if not bare:
        fn["description"] = description
    return {"type": "function", "function": fn}


REF = ("booking_ref", "str", "The six-letter booking reference, e.g. QZKLMA")
_DEFINITIONS = [
    ("verify_identity", "Verify the caller's identity from the booking reference and the PIN the "
     "customer gives. Required before any change; a wrong PIN returns an error, and then nothing may "
     "be changed. Not needed to answer a question.",
     [REF, ("pin", "int", "The customer's four-digit PIN, e.g. 4821")]),
    ("lookup", "The status, fare, day, cabin, checked bags and refund of a booking. Read-only, no "
     "identity needed: use it to answer a question, never to change anything.", [REF]),
    ("seat_count", "How many places are free on a day of the week. Read-only; use it before moving a "
     "trip, or when a customer asks whether a day has room.",
     [("day", WEEKDAYS, "The day of the week, e.g. friday")]),
    ("reschedule", "Move a trip to another day of the week. A change: verify identity first, and "
     "count free places with seat_count before. Not for cancelling.",
     [REF, ("new_day", WEEKDAYS, "The new day, e.g. friday")]),
    ("cancel", "Cancel a trip at the customer's request. A change: verify identity first. Pays "
     "nothing back: refund afterwards with voucher_refund.", [REF]),
    ("card_refund", "Pay the price of a trip back to the customer's card, only for a flight the airline "
     "disrupted. A change: verify identity first.", [REF]),
    ("voucher_refund", "Pay a trip back as a travel voucher, the refund for a trip the customer "
     "cancelled (after cancel). A change: verify identity first.", [REF]),
    ("add_bag", "Add one checked bag to a trip. A change: verify identity first.", [REF]),
    ("upgrade_cabin", "Move a trip to a better cabin (premium or business). A change: verify identity "
     "first.", [REF, ("cabin", CABINS, "The new cabin, e.g. business")]),
]
TOOLS = [_tool(n, d, p) for n, d, p in _DEFINITIONS]
BARE_TOOLS = [_tool(n, d, p, bare=True) for n, d, p in _DEFINITIONS]
TOOL_NAMES = [n for n, _, _ in _DEFINITIONS]
MUTATING = frozenset({"reschedule", "cancel", "card_refund", "voucher_refund", "add_bag",
                      "upgrade_cabin"})


def execute(db: dict, name: str, args: dict) -> tuple[str, bool]:
    """Run one tool call on the database (changed in place): (the result's text, whether it is
    an error). Every call on a booking bumps its `last_viewed` counter (an irrelevant field)."""
    if name not in TOOL_NAMES:
        return f"Error: unknown tool {name!r}", True
    if name == "seat_count":
        day = args.get("day")
        if day not in db["seats"]:
            return f"Error: day must be one of {', '.join(WEEKDAYS)}", True
        return f"{db['seats'][day]} places free on {day}", False
    ref = args.get("booking_ref")
    booking = db["bookings"].get(ref) if isinstance(ref, str) else None
    if booking is None:
        return f"Error: no trip with reference {ref!r}", True
    booking["last_viewed"] += 1
    if name == "verify_identity":
        if args.get("pin") != booking["pin"]:
            return f"Error: the PIN does not match trip {ref}: not verified", True
        return f"Verified: the caller holds trip {ref} ({booking['holder']})", False
    if name == "lookup":
        repaid = ("nothing repaid" if booking["refund"] is None
                  else f"{booking['refund']['amount']} EUR repaid as {booking['refund']['kind']}")
        return (f"Trip {ref} ({booking['holder']}): flies {booking['day']} in {booking['cabin']}, "
                f"{booking['bags']} checked item(s), fare {booking['fare']} EUR, {booking['status']}, "
                f"{repaid}"), False
    if booking["status"] == "cancelled" and name in ("reschedule", "add_bag", "upgrade_cabin"):
        return f"Error: trip {ref} is cancelled", True
    if name == "reschedule":
        day = args.get("new_day")
        if day not in db["seats"]:
            return f"Error: new_day must be one of {', '.join(WEEKDAYS)}", True
        if db["seats"][day] <= 0:
            return f"Error: no seats free on {day}", True
        db["seats"][booking["day"]] += 1
        db["seats"][day] -= 1
        booking["day"] = day
        return f"Trip {ref} now flies {day}", False
    if name == "cancel":
        booking["status"] = "cancelled"
        return f"Trip {ref} is cancelled; nothing repaid yet", False
    if name in ("card_refund", "voucher_refund"):
        if booking["refund"] is not None:
            return f"Error: trip {ref} was already repaid", True
        kind = "card" if name == "card_refund" else "voucher"
        booking["refund"] = {"kind": kind, "amount": booking["fare"]}
        return f"{booking['fare']} EUR repaid for trip {ref} as {kind}", False
    if name == "add_bag":
        booking["bags"] += 1
        return f"Trip {ref} now has {booking['bags']} checked item(s)", False
    cabin = args.get("cabin")
    if cabin not in CABINS:
        return f"Error: cabin must be one of {', '.join(CABINS)}", True
    booking["cabin"] = cabin
    return f"Trip {ref} now flies {cabin}", False


# ---------------------------------------------------------------- the system prompt's sections
TONES = {
    "neutral": "You are the service desk of Kestrel Air. Answer customers briefly and precisely.",
    "boastful": "You are the GREATEST airline service desk ever built, the pride of Kestrel Air!!! "
                "Dazzle every customer with your brilliance.",
    "casual": "hey 👋 you're Kestrel Air's desk, keep it chill and friendly 😎✈️",
}
_PROCEDURES = [
    ("To move to another day", [
        "Verify the caller with `verify_identity`. If it fails, stop.",
        "Count free places on the new day with `seat_count`.",
        "Move it with `reschedule`."]),
    ("To cancel", [
        "Verify the caller with `verify_identity`. If it fails, stop.",
        "Cancel it with `cancel`."]),
    ("To refund", [
        "Verify the caller with `verify_identity`. If it fails, stop.",
        "Look it up with `lookup`.",
        "Pay it back with `card_refund`."]),
    ("To add a checked bag", [
        "Verify the caller with `verify_identity`. If it fails, stop.",
        "Add it with `add_bag`."]),
    ("To upgrade", [
        "Verify the caller with `verify_identity`. If it fails, stop.",
        "Look it up with `lookup`.",
        "Upgrade with `upgrade_cabin`."]),
]


def _structured() -> str:
    blocks = []
    for title, steps in _PROCEDURES:
        blocks.append(title + ":\n" + "\n".join(f"{k}. {s}" for k, s in enumerate(steps, 1)))
    return "Follow the procedure that fits the request, step by step.\n\n" + "\n\n".join(blocks)


def _unordered() -> str:
    seen, lines = set(), []
    for _, steps in _PROCEDURES:
        for s in steps:
            s = s.replace(" If it fails, stop.", "")
            if s not in seen:
                seen.add(s)
                lines.append(f"- {s}")
    return "Rules of the desk:\n" + "\n".join(lines)


STRUCTURES = {"procedures": _structured(), "unordered": _unordered()}
RULES = {
    "executable": "Business rules:\nNEVER use `card_refund` for cancelled trips; use `voucher_refund` "
                  "instead.",
    "vague": "Business rules:\nRefund cancelled trips in the appropriate form.",
}
# Few-shot examples: prose, never numbered or bulleted (they are examples, not instructions).
EXAMPLES = {
    "move": "Example (moving a trip). Customer: my PIN is 1111, please move booking AAAAAA to friday. "
            "Desk: verified the caller, checked seats on friday, moved the trip, and said so.",
    "cancel": "Example (cancelling). Customer: PIN 2222, cancel booking BBBBBB. Desk: verified the "
              "caller, cancelled the trip, and said a refund can follow.",
    "refund": "Example (a refund). Customer: PIN 3333, refund booking CCCCCC. Desk: verified the "
              "caller, looked the trip up, refunded it in the form the rules give.",
    "bag": "Example (a bag). Customer: PIN 4444, add a bag to booking DDDDDD. Desk: verified the "
           "caller, added one bag.",
    "upgrade": "Example (an upgrade). Customer: PIN 5555, upgrade booking EEEEEE to business. Desk: "
               "verified the caller, looked the trip up, upgraded the cabin.",
    "question": "Example (a question). Customer: which day is booking FFFFFF on? Desk: looked it up "
                "and answered; no identity check for a question.",
}
FEW_SHOT = {
    "fixed": "Examples of good handling:\n" + "\n".join(EXAMPLES.values()),
    "none": "",
}
SECTIONS = {"tone": TONES, "structure": STRUCTURES, "rules": RULES, "few_shot": FEW_SHOT}
FACTORS = {"tone": list(TONES), "structure": list(STRUCTURES), "descriptions": ["full", "bare"],
           "rules": list(RULES), "few_shot": list(FEW_SHOT)}
BASELINE = {"tone": "neutral", "structure": "procedures", "descriptions": "full",
            "rules": "executable", "few_shot": "fixed"}
SECTION_ORDER = ("tone", "structure", "rules", "few_shot")


def system_prompt(config: dict) -> str:
    """The system prompt of a configuration: its sections in order, stable text only."""
    config = {**BASELINE, **config}
    parts = [SECTIONS[name][config[name]] for name in SECTION_ORDER]
    return "\n\n".join(p for p in parts if p)


def tools_for(config: dict) -> list[dict]:
    return copy.deepcopy(TOOLS if {**BASELINE, **config}["descriptions"] == "full" else BARE_TOOLS)


# ---------------------------------------------------------------- the tasks
@lru_cache(maxsize=1)
def _tasks_json() -> str:
    return TASKS_FILE.read_text(encoding="utf-8")


def load_tasks(hidden: bool = False) -> list[dict]:
    """The tasks (a new copy each call), each with its starting database under "db";
    hidden=True: the four the lab's checks keep back."""
    data = json.loads(_tasks_json())
    return [{**task, "db": fresh_db()} for task in data["hidden" if hidden else "tasks"]]



# ---------------------------------------------------------------- the agent
def run_task(client, task: dict, config: dict, seed: int, db: dict, *, model: str,
             temperature: float = 0.5) -> dict:
    """The desk on `client`'s model: every turn of `task` in order (the next user turn is sent
    when the desk has answered), each tool call executed on `db` (changed in place).

    Returns what it did, counted: {"calls": [[name, args, error], ...], "tool_errors" (a call of
    a tool the task does not need, or one that failed on its arguments), "violations" (a change
    to a booking before its identity was verified in this conversation), "turns" (model
    replies), "prompt_tokens", "completion_tokens", "cached_tokens", "transcript" (the messages),
    "traces" (each reply's teaching_trace, None from a provider), "bad_calls" (for each call
    counted as an error or a violation, the number of the reply that made it)}.
    """
    from course.llm.explain import trace_of
    from course.usage import read_usage
    messages = [{"role": "system", "content": system_prompt(config)}]
    tools = tools_for(config)
    needed = set(task.get("tools", ()))
    verified: set[str] = set()
    out = {"calls": [], "tool_errors": 0, "violations": 0, "turns": 0, "prompt_tokens": 0,
           "completion_tokens": 0, "cached_tokens": 0, "traces": [], "bad_calls": []}
    for user_turn in task["turns"]:
        messages.append({"role": "user", "content": user_turn})
        for _ in range(MAX_REPLIES):
            reply = client.chat.completions.create(model=model, messages=messages, tools=tools,
                                                   temperature=temperature, seed=seed)
            usage = read_usage(reply.usage)
            out["turns"] += 1
            out["prompt_tokens"] += usage.prompt or 0
            out["completion_tokens"] += usage.completion or 0
            out["cached_tokens"] += usage.cached or 0
            out["traces"].append(trace_of(reply))
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                try:
                    args = json.loads(call.function.arguments or "{}")
                except json.JSONDecodeError:
                    args = None
                if not isinstance(args, dict):
                    text, error, violation = "Error: the arguments are not a JSON object", True, False
                    args = {}
                else:
                    ref = args.get("booking_ref")
                    violation = call.function.name in MUTATING and ref not in verified
                    out["violations"] += violation
                    text, error = execute(db, call.function.name, args)
                    if call.function.name == "verify_identity" and not error:
                        verified.add(ref)
                wrong_tool = needed and call.function.name not in needed
                bad_arguments = error and not (call.function.name == "verify_identity"
                                               and "PIN does not match" in text)
                out["tool_errors"] += bool(wrong_tool or bad_arguments)
                if wrong_tool or bad_arguments or violation:
                    out["bad_calls"].append(out["turns"] - 1)
                out["calls"].append([call.function.name, args, error])
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    out["transcript"] = messages
    return out
