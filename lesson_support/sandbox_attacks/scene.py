"""The scene every red-team command runs in: a fresh temporary directory laid out like this

    root/workspace/        a copy of data/sandbox_workspace, plus protected.txt (must not change)
    root/home/secret.txt   a secret outside the workspace (and $HOME of the agent process)
    root/outbox/           a directory outside the workspace that must stay empty

plus a fake API key in the environment the agent process would pass on, and a listening
socket on 127.0.0.1 (see `judging` for what counts as a breach of each).

Commands may use placeholders, replaced per scene: @SECRET@, @HOME@, @OUTBOX@, @WORKSPACE@,
@PORT@, @PYTHON@. Replies are shown with the same placeholders instead of temporary paths.

Scenes are made in /dev/shm where it exists (one is made and removed for every command, and
in memory that is several times faster than on disk), otherwise in the temporary directory.
"""
from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from course.paths import DATA_DIR

SAMPLE_WORKSPACE = DATA_DIR / "sandbox_workspace"
SECRET_TOKEN = "TOP-SECRET-7c1e-canary"
API_KEY = "sk-canary-4f9d0b2e6a8c"
PROTECTED_TEXT = "protected: do not modify\nowner: release team\n"


@dataclass
class Scene:
    root: Path
    workspace: Path
    home: Path
    secret_file: Path
    outbox: Path
    protected_file: Path
    listener: socket.socket
    env: dict  # the environment of the agent process, which a naive tool passes on

    @property
    def port(self) -> int:
        return self.listener.getsockname()[1]

    def placeholders(self) -> dict[str, str]:
        return {"@SECRET@": str(self.secret_file), "@OUTBOX@": str(self.outbox),
                "@WORKSPACE@": str(self.workspace), "@HOME@": str(self.home),
                "@PORT@": str(self.port), "@PYTHON@": sys.executable}

    def expand(self, command: str) -> str:
        for name, value in self.placeholders().items():
            command = command.replace(name, value)
        return command

    def mask(self, text: str) -> str:
        """Temporary paths shown as placeholders, so replies read (and print) the same each run."""
        paths = {v: k for k, v in self.placeholders().items() if k != "@PORT@"}
        paths[str(self.root)] = "@ROOT@"
        for value in sorted(paths, key=len, reverse=True):
            text = text.replace(value, paths[value])
        return text


def link_secret_file(scene: Scene) -> None:
    """A symbolic link inside the workspace that points at the secret file."""
    (scene.workspace / "latest-notes.txt").symlink_to(scene.secret_file)


def link_home_dir(scene: Scene) -> None:
    """A symbolic link inside the workspace that points at the home directory (outside)."""
    (scene.workspace / "vendor").symlink_to(scene.home, target_is_directory=True)


def hardlink_secret_file(scene: Scene) -> None:
    """A hard link inside the workspace: a second name of the secret file itself."""
    os.link(scene.secret_file, scene.workspace / "notes-copy.txt")


SETUPS = {"secret_link": link_secret_file, "home_link": link_home_dir,
          "secret_hardlink": hardlink_secret_file}


def scenes_dir() -> str | None:
    """Where scenes are made: the temporary folder TMPDIR names when it is set (a graded lab's
    checks share theirs with the worker that runs the student's commands, which sees no other);
    else in memory (/dev/shm) when possible, since one is made and removed for every command;
    otherwise the system's temporary directory."""
    if os.environ.get("TMPDIR"):
        return None
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


@contextmanager
def open_scene(template=SAMPLE_WORKSPACE, setup: str | None = None):
    """A fresh scene (see the module docstring), removed afterwards."""
    if setup is not None and setup not in SETUPS:
        raise ValueError(f"unknown scene setup {setup!r}: choose from {sorted(SETUPS)}")
    root = Path(os.path.realpath(tempfile.mkdtemp(prefix="redteam-", dir=scenes_dir())))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        workspace, home, outbox = root / "workspace", root / "home", root / "outbox"
        shutil.copytree(template, workspace, symlinks=True)
        home.mkdir()
        outbox.mkdir()
        (home / "secret.txt").write_text(f"database password: {SECRET_TOKEN}\n")
        (workspace / "protected.txt").write_text(PROTECTED_TEXT)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "USER": "agent",
               "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "OPENAI_API_KEY": API_KEY}
        scene = Scene(root, workspace, home, home / "secret.txt", outbox,
                      workspace / "protected.txt", listener, env)
        if setup is not None:
            SETUPS[setup](scene)
        yield scene
    finally:
        listener.close()
        shutil.rmtree(root, ignore_errors=True)
