"""Chapter 16's measurements on a real model (SmolLM2-135M-Instruct through llama.cpp, or any GGUF
or OpenAI-compatible model a student brings).

One concern per module:

    weights           which model file and engine; provenance stamped on every data file
    template          its chat template rendered; the envelope's tokens; Chinese vs English cost
    stream            a stream timed: arrival of each piece, TTFT, decode speed; medians with spread
    engine            LlamaEngine (the raw binding, reporting cached tokens) and openai_requester
    filler            generated text of a chosen token length (system prompts, haystacks)
    prefix_cache      TTFT cold / again / new question / a line changed at the top or end;
                      eviction and restore; set against the teaching model's teaching_timing
    needle            pass key at depths in filler, independent trials, Wilson intervals, heat map
    attention         SmolLM2's forward pass in numpy from the GGUF file, keeping attention
    attention_figure  experiments 2-2 and 2-7 as a stored figure, and its invariants
    probes            the teaching model's rules probed on a real model: agrees / disagrees /
                      cannot at this size
    report            the measured files read back, their provenance in a sentence, their tables

`python -m lesson_support.real_model all` measures everything and writes data/real_model/*.json.
Nothing imports llama_cpp, gguf or matplotlib until a function needs it.
"""
