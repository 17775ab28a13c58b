"""How the teaching model words an answer from a tool result.

A time and a weather result are described in a sentence (the textbook's Vancouver example);
an error result as "NAME failed: ..."; any other JSON object as its fields; text as it is
(cut at 600 characters).
"""
from __future__ import annotations

import json
import re
from datetime import datetime

ERROR_TEXT = re.compile(r"^\s*(error|traceback|failed|exception)\b", re.I)


def is_error_result(content: str) -> bool:
    """A tool result that reports a failure: JSON with an "error" key, or text starting so."""
    try:
        data = json.loads(content)
    except (ValueError, TypeError, RecursionError):
        return bool(ERROR_TEXT.match(content or ""))
    return isinstance(data, dict) and "error" in data


def parse_arguments(arguments) -> dict:
    """A tool call's arguments string as a dict ({} when it is not a JSON object)."""
    try:
        value = json.loads(arguments)
    except (ValueError, TypeError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _place(args: dict, data: dict) -> str | None:
    for source in (data, args):
        for key in ("city", "location", "place"):
            if isinstance(source.get(key), str):
                return source[key]
    zone = data.get("timezone") or args.get("timezone")
    if isinstance(zone, str) and "/" in zone:
        return zone.rsplit("/", 1)[-1].replace("_", " ")
    return None


def _describe_time(data: dict, args: dict) -> str | None:
    try:
        moment = datetime.fromisoformat(str(data["datetime"]))
    except (KeyError, ValueError):
        return None
    clock = f"{moment.hour % 12 or 12}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"
    day = data.get("day_of_week") or moment.strftime("%A")
    text = f"It's currently {clock} on {day}, {moment.strftime('%B')} {moment.day}, {moment.year}"
    place = _place(args, data)
    return text + (f" in {place}." if place else ".")


def _describe_weather(data: dict, args: dict) -> str | None:
    if "temperature" not in data:
        return None
    unit = str(data.get("unit") or args.get("unit") or "celsius").lower()
    symbol = "°F" if unit.startswith("f") else "°C"
    text = f"Weather: {data['temperature']}{symbol}"
    conditions = data.get("conditions")
    if conditions:
        skies = " skies" if conditions in ("clear", "cloudy", "overcast", "sunny", "grey") else ""
        text += f" with {conditions}{skies}"
    if "humidity" in data:
        text += f" and {data['humidity']}% humidity"
    text += "."
    temperature = data["temperature"]
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool):
        celsius = temperature if symbol == "°C" else (temperature - 32) * 5 / 9
        if celsius < 15:
            text += " It's quite cool - you might want to grab a jacket."
    return text


def describe_result(name: str, args: dict, content: str) -> str:
    """One tool result in words."""
    try:
        data = json.loads(content)
    except (ValueError, TypeError, RecursionError):
        data = None
    if isinstance(data, dict):
        if "error" in data:
            return f"{name} failed: {data['error']}"
        for describe in (_describe_time, _describe_weather):
            text = describe(data, args)
            if text:
                return text
        fields = ", ".join(f"{key}: {value}" for key, value in data.items())
        return f"{name} returned {fields}."
    text = content.strip()
    if len(text) > 600:
        text = text[:600] + f"\n[... {len(content) - 600} more characters]"
    return f"{name} returned:\n{text}"
