import json
from pathlib import Path

import tiktoken


def count_file(path: Path, encoding_name: str = "o200k_base") -> dict:
    """Count characters and tokens of one text file."""
    enc = tiktoken.get_encoding(encoding_name)
    text = path.read_text(encoding="utf-8")
    tokens = enc.encode_ordinary(text)
    return {"path": str(path), "chars": len(text), "tokens": len(tokens)}


if __name__ == "__main__":
    rows = [count_file(p) for p in sorted(Path(".").glob("*.txt"))]
    print(json.dumps(rows, indent=2))
