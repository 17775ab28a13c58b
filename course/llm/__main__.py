"""`python -m course.llm --port 8000`: serve the teaching model standalone, e.g. for curl."""
from __future__ import annotations

import argparse
import time

from course.llm.connection import serve
from course.llm.models import MODELS, model_table
from course.llm.reasoning import POLICY_RULES
from course.llm.sampling import CHOICES


def main(argv=None) -> int:
    width = max(len(name) for name, _, _ in model_table())
    names = "\n".join(f"  {name:<{width}} {window:>9,} tokens  {about}"
                      for name, window, about in model_table())
    choices = "\n".join(f"  {where}:\n    {scores}" for where, scores in CHOICES)
    reasoners = "\n".join(f"  {spec.name:<{width}} {spec.reasoning}:\n    {POLICY_RULES[spec.reasoning]}"
                          for spec in MODELS.values() if spec.reasoning)
    parser = argparse.ArgumentParser(
        prog="python -m course.llm", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"model names and their context windows (prompt and reply together):\n{names}\n"
               f"Any other name is served as teaching-model. A request over the window gets "
               f"HTTP 400,\ncode context_length_exceeded, as OpenAI answers it. stream=True "
               f"is answered with Server-Sent\nEvents of chat.completion.chunk "
               f"(stream_options include_usage adds a last usage chunk).\n\n"
               f"Reasoning models (history_policy in GET /v1/models) reply with reasoning_content "
               f"(DeepSeek's\nfield; in stream deltas too, before any text or call): the "
               f"decision's trace in words, rendered\n<think>...</think> before the text and the "
               f"calls; completion_tokens includes it and\ncompletion_tokens_details."
               f"reasoning_tokens is exactly its tokens. Earlier turns' reasoning:\n{reasoners}\n"
               f"(course/llm/reasoning.py has the rules.)\n\n"
               f"Sampling: temperature (0 to 2), top_p (0 to 1) and seed (a 64-bit integer), as "
               f"OpenAI takes\nthem; anything else is HTTP 400 naming the field. An omitted "
               f"temperature is 0 here\n(OpenAI's default is 1): every choice is its "
               f"best-scored candidate, the same reply every\nrun. Above 0 each choice below is "
               f"drawn from softmax(score / temperature), cut to the\nmost probable candidates "
               f"adding up to top_p (honoured), with draws fixed by the seed\n(derived from the "
               f"prompt when none is sent): same seed and request, same reply, streamed\nor not. "
               f"The trace (teaching_trace) shows candidates, scores, probabilities and the "
               f"draw.\n{choices}\n\n"
               f"Simulated from another provider: Anthropic's context editing. A request with\n"
               f"context_management={{\"edits\": [{{\"type\": \"clear_tool_uses_20250919\", ...}}]}} "
               f"(trigger,\nkeep, clear_at_least, exclude_tools, clear_tool_inputs) has its oldest "
               f"tool results\nreplaced by a placeholder once its prompt is over the trigger "
               f"(default 100,000 input\ntokens), before the model reads it; the reply's "
               f"context_management.applied_edits says\nhow many tool uses were cleared and how "
               f"many tokens that freed. Anthropic's Messages API\ndoes this for real "
               f"(course/llm/context_editing.py says what differs).\n\n"
               f"The Responses API: POST /v1/responses (input, instructions, function tools, "
               f"previous_response_id,\nstore, truncation, prompt_cache_key, context_management "
               f"compaction), /v1/responses/compact,\n/v1/responses/input_tokens; GET and DELETE "
               f"/v1/responses/{{id}}. A chained conversation is\nbilled whole every turn; a "
               f"compaction item is sealed (course/llm/responses.py has the rules).")
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: any free one)")
    args = parser.parse_args(argv)
    try:
        server = serve(port=args.port)
    except OSError as exc:
        parser.exit(1, f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}\n")
    print(f"Teaching model listening on {server.base_url} (Ctrl-C to stop). Try:\n"
          f"  curl {server.base_url}/chat/completions -H 'Content-Type: application/json' \\\n"
          f"       -d '{{\"model\": \"teaching-model\", \"messages\": "
          f"[{{\"role\": \"user\", \"content\": \"Hello\"}}]}}'", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
