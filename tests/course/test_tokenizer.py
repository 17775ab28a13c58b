"""Offline tokenizers: seed counts, hash refusal, caching once per machine, no network."""
import os
import subprocess
import sys
import textwrap

import pytest

from course import vocabularies
from course.vocabularies import VOCABULARIES, VocabularyError

# The study guide's hands-on lab 1 (section 4.2): text, character count, token count, first pieces.
SEED_SAMPLES = [
    ("Could NOT find ZLIB (missing: ZLIB_LIBRARY ZLIB_INCLUDE_DIR)", 60, 16,
     ["Could", " NOT", " find", " Z", "LIB", " (", "missing", ":"]),
    ("交叉编译时找不到目标平台的 zlib 库", 20, 14, ["交", "叉", "编", "译", "时", "找", "不到", "目标"]),
    ("/opt/homebrew/Cellar/abseil/20240722.0/include/absl/base/config.h", 65, 24,
     ["/", "opt", "/home", "brew", "/", "Cell", "ar", "/"]),
    ('{"path": "CMakeLists.txt", "offset": 101}', 41, 15,
     ['{"', "path", '":', ' "', "C", "Make", "Lists", ".txt"]),
]

NO_NETWORK = """
import socket
def _refuse(*args, **kwargs):
    raise OSError("network disabled by the test")
socket.socket.connect = _refuse
socket.create_connection = _refuse
"""


def run_offline(code: str, cache_dir) -> subprocess.CompletedProcess:
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-c", NO_NETWORK + textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=300)


def test_seed_samples_offline_from_an_empty_cache(tmp_path):
    code = f"""
    import course, tiktoken
    enc = tiktoken.get_encoding("o200k_base")
    for text, chars, count, pieces in {SEED_SAMPLES!r}:
        ids = enc.encode(text)
        assert (len(text), len(ids)) == (chars, count), (text, len(text), len(ids))
        assert [enc.decode([i]) for i in ids[:8]] == pieces, text
    assert tiktoken.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
    print("ok")
    """
    result = run_offline(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    assert len(list(tmp_path.iterdir())) == 2  # both vocabularies written, nothing else


def test_files_are_byte_identical_to_the_official_ones(tmp_path):
    import hashlib

    paths = vocabularies.ensure_vocabularies(tmp_path)
    for name, path in paths.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == VOCABULARIES[name].sha256


def test_a_mismatching_vocabulary_is_refused_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(vocabularies, "build_vocabulary_bytes", lambda vocab: b"not a vocabulary")
    with pytest.raises(VocabularyError, match="Refusing the offline o200k_base vocabulary"):
        vocabularies.ensure_vocabulary("o200k_base", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_built_once_then_only_checked(tmp_path, monkeypatch):
    first = vocabularies.ensure_vocabulary("cl100k_base", tmp_path)

    def must_not_build(vocab):
        raise AssertionError("rebuilt although the cached file is intact")

    monkeypatch.setattr(vocabularies, "build_vocabulary_bytes", must_not_build)
    assert vocabularies.ensure_vocabulary("cl100k_base", tmp_path) == first


def test_a_corrupted_cache_file_is_rebuilt(tmp_path):
    path = vocabularies.ensure_vocabulary("cl100k_base", tmp_path)
    path.write_bytes(b"corrupted")
    assert vocabularies.ensure_vocabulary("cl100k_base", tmp_path) == path
    assert vocabularies._file_is_intact(path, VOCABULARIES["cl100k_base"])


def test_disabled_tiktoken_cache_is_respected(monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert vocabularies.tiktoken_cache_dir() is None
    assert vocabularies.ensure_vocabulary("o200k_base") is None


def test_the_command_line_reports_both_encodings(tmp_path):
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, "-m", "course.tokenizer"], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "o200k_base: ready (200019 tokens)" in result.stdout
    assert "cl100k_base: ready (100277 tokens)" in result.stdout
    assert "Warning" not in result.stderr
