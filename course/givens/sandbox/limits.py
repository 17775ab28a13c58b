"""Chapter 07's process types, given: what a command did (`RunResult`) and the kernel limits it
runs under (`ResourceLimits`, applied by util-linux's `prlimit` program), and the trusted PATH.
Lab 07's `run_with_hygiene`, which starts and reads the command, is the exercise
(`solutions.sandbox.hygiene`).
"""
from __future__ import annotations

import resource
from dataclasses import dataclass

TRUSTED_PATH = "/usr/bin:/bin"


@dataclass(frozen=True)
class RunResult:
    """What a command did. `exit_code` is None when it was stopped (timeout or output cap)."""
    output: str
    exit_code: int | None
    timed_out: bool = False
    truncated: bool = False


@dataclass(frozen=True)
class ResourceLimits:
    """Kernel limits (setrlimit) applied to the command and everything it starts."""
    cpu_seconds: int = 10
    file_bytes: int = 1024 * 1024           # largest file it may write
    memory_bytes: int = 1024 * 1024 * 1024  # address space
    open_files: int = 64

    def prlimit_argv(self, prlimit: str) -> list[str]:
        """The prefix that runs a command under these limits with the `prlimit` program."""
        return [prlimit, f"--cpu={self.cpu_seconds}", f"--fsize={self.file_bytes}",
                f"--as={self.memory_bytes}", f"--nofile={self.open_files}", "--core=0", "--"]

    def apply(self) -> None:
        """The same limits from inside the child, between fork and exec (the fallback)."""
        resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds))
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_bytes, self.file_bytes))
        resource.setrlimit(resource.RLIMIT_AS, (self.memory_bytes, self.memory_bytes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


DEFAULT_LIMITS = ResourceLimits()
