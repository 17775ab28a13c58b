"""A finished task the measured sessions start after (a native libpng build, scripted), and
the scripted assistant turn that calls a tool."""
from __future__ import annotations

import json


def call_turn(call_id: str, name: str, args: dict) -> dict:
    """An assistant turn that calls one tool (the placements script theirs with it too)."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}]}


def _build_log(target: str, files: list[str]) -> str:
    lines = [f"-- Configuring {target}", "-- The C compiler identification is GNU 13.2.0",
             "-- Check for working C compiler: /usr/bin/cc - skipped"]
    for i, name in enumerate(files, 1):
        lines.append(f"[{100 * i // len(files):3d}%] Building C object CMakeFiles/{target}.dir/{name}.o")
    lines.append(f"[100%] Linking C static library lib{target}.a")
    lines.append(f"[100%] Built target {target}")
    return "\n".join(lines)


PNG_SOURCES = ["png.c", "pngerror.c", "pngget.c", "pngmem.c", "pngpread.c", "pngread.c",
               "pngrio.c", "pngrtran.c", "pngrutil.c", "pngset.c", "pngtrans.c", "pngwio.c",
               "pngwrite.c", "pngwtran.c", "pngwutil.c", "arm/arm_init.c", "arm/filter_neon_intrinsics.c",
               "arm/palette_neon_intrinsics.c"]


def earlier_work() -> list[dict]:
    """A finished task before the ones the lesson measures: a native libpng build, five tool
    calls with their results (about 2,500 tokens), so that losing the conversation's cache costs
    what it costs in a real session."""
    listing = "\n".join(f"{n:<40} {1000 + 37 * i:>7} bytes" for i, n in enumerate(
        PNG_SOURCES + ["CMakeLists.txt", "README", "LICENSE", "pngtest.c", "pngtest.png",
                       "scripts/pnglibconf.dfa", "tests/pngtest-all", "contrib/tools/pngfix.c"]))
    cmake = "\n".join(f"option(PNG_{flag} \"{text}\" {value})" for flag, text, value in [
        ("SHARED", "Build libpng as a shared library", "ON"),
        ("STATIC", "Build libpng as a static library", "ON"),
        ("TESTS", "Build the libpng tests", "ON"),
        ("TOOLS", "Build the libpng tools", "ON"),
        ("HARDWARE_OPTIMIZATIONS", "Enable hardware optimizations", "ON"),
        ("DEBUG", "Enable debug output", "OFF"),
        ("FRAMEWORK", "Build a macOS framework", "OFF")]) + (
        "\nfind_package(ZLIB REQUIRED)\ninclude_directories(${ZLIB_INCLUDE_DIRS})\n"
        "add_library(png_static STATIC ${libpng_sources})\n"
        "target_link_libraries(png_static PUBLIC ZLIB::ZLIB m)\n") * 3
    tests = "\n".join(f"{i:2d}/{len(PNG_SOURCES)} Test #{i}: pngtest-{n.split('/')[-1][:-2]:<28} Passed "
                      f"{0.01 * (i % 7 + 1):.2f} sec" for i, n in enumerate(PNG_SOURCES, 1))
    steps = [("list_directory", {"path": "."}, listing),
             ("read_file", {"path": "CMakeLists.txt"}, cmake),
             ("run_cmake", {"source_dir": ".", "build_dir": "build"}, _build_log("png_static", PNG_SOURCES[:6])),
             ("run_make", {"build_dir": "build"}, _build_log("png_static", PNG_SOURCES)),
             ("run_tests", {"path": "build"}, tests + "\n100% tests passed, 0 tests failed")]
    messages = [{"role": "user", "content": "Build libpng natively in /workspace/build and run its tests."}]
    for i, (name, args, result) in enumerate(steps):
        messages.append(call_turn(f"call_w{i}", name, args))
        messages.append({"role": "tool", "tool_call_id": f"call_w{i}", "content": result})
    messages.append({"role": "assistant", "content": "libpng builds natively and all 18 tests pass "
                                                     "(build/libpng_static.a)."})
    return messages
