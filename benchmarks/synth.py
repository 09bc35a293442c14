"""Synthetic Markdown vault generator: realistic sizes, headings, front matter, links, tags, code.

    python -m benchmarks.synth OUT_DIR --files 10000 [--seed 7]

Deterministic for a given seed. Sizes follow a log-normal distribution (median ~2.5 KB, long tail up
to ~60 KB, like a notes vault or docs tree); 40 files per folder, nested two levels; most files have
YAML front matter (title, tags, date, aliases), an H1, 2–12 H2/H3 sections, paragraphs from a Zipf-
distributed vocabulary with some identifiers (`SOME_ENV_VAR`, `pkg.module`), bullet lists, fenced code
blocks, [[wikilinks]] and Markdown links to other notes, and inline #tags.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path

_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "xe",
    "an",
    "el",
    "is",
    "or",
    "um",
    "ber",
    "cor",
    "dan",
    "fel",
    "gor",
    "hin",
    "jul",
    "kem",
    "lar",
    "mon",
    "nor",
    "pel",
    "quin",
    "ros",
    "sul",
    "tam",
    "vel",
    "wen",
    "yor",
    "zan",
    "tra",
    "pre",
    "sto",
    "gre",
    "pla",
]
_TAGS = [f"topic/{w}" for w in ("infra", "design", "notes", "research", "ops", "howto", "meeting", "api")] + [
    "draft",
    "todo",
    "reference",
    "idea",
    "archive",
    "python",
    "kubernetes",
    "security",
]


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    words: dict[str, None] = {}
    common = [
        "the",
        "of",
        "and",
        "to",
        "in",
        "is",
        "that",
        "for",
        "it",
        "as",
        "with",
        "on",
        "be",
        "by",
        "this",
        "are",
        "or",
        "from",
        "at",
        "an",
        "which",
        "can",
        "not",
        "but",
        "have",
        "has",
        "was",
        "will",
        "more",
        "one",
        "all",
        "use",
        "when",
        "data",
        "file",
        "system",
        "user",
        "time",
        "new",
        "also",
    ]
    for w in common:
        words[w] = None
    while len(words) < size:
        n = rng.choice((1, 2, 2, 3, 3, 4))
        words["".join(rng.choice(_SYLLABLES) for _ in range(n))] = None
    return list(words)


class VaultWriter:
    def __init__(self, files: int, seed: int = 7) -> None:
        self.files = files
        self.rng = random.Random(seed)
        self.vocab = _vocabulary(self.rng)
        # Zipf weights: a few words are very frequent, most are rare.
        self.cum = []
        total = 0.0
        for i in range(len(self.vocab)):
            total += 1.0 / (i + 1) ** 1.05
            self.cum.append(total)
        self.names = [self._path(i) for i in range(files)]

    def _path(self, i: int) -> str:
        top, sub = divmod(i // 40, 25)
        return f"area-{top:03d}/folder-{sub:02d}/note-{i:06d}.md"

    def _words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=n)

    def _sentence(self) -> str:
        words = self._words(self.rng.randint(6, 22))
        r = self.rng.random()
        if r < 0.04:
            words.insert(self.rng.randrange(len(words)), f"`{'_'.join(self._words(3)).upper()}`")
        elif r < 0.07:
            words.insert(self.rng.randrange(len(words)), f"`{'.'.join(self._words(2))}`")
        elif r < 0.10:
            target = self.rng.choice(self.names).rsplit("/", 1)[-1][:-3]
            words.insert(self.rng.randrange(len(words)), f"[[{target}]]")
        elif r < 0.12:
            words.append(f"#{self.rng.choice(_TAGS)}")
        return " ".join(words).capitalize() + "."

    def _paragraph(self, chars: int) -> str:
        out, size = [], 0
        while size < chars:
            s = self._sentence()
            out.append(s)
            size += len(s) + 1
        return " ".join(out)

    def document(self, i: int) -> str:
        rng = self.rng
        size = min(60_000, int(math.exp(rng.gauss(math.log(2500), 0.9))))
        title = " ".join(self._words(rng.randint(2, 6))).title()
        parts: list[str] = []
        if rng.random() < 0.85:
            tags = ", ".join(rng.sample(_TAGS, rng.randint(0, 3)))
            parts.append(
                f"---\ntitle: {title}\ntags: [{tags}]\ndate: 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}\n"
                f"aliases: [{' '.join(self._words(2))}]\n---\n"
            )
        parts.append(f"# {title}\n")
        sections = max(1, min(12, size // 700))
        per = max(200, size // (sections + 1))
        parts.append(self._paragraph(per // 2) + "\n")
        for s in range(sections):
            level = "##" if s == 0 or rng.random() < 0.6 else "###"
            parts.append(f"\n{level} {' '.join(self._words(rng.randint(1, 5))).capitalize()}\n")
            r = rng.random()
            parts.append(self._paragraph(per) + "\n")
            if r < 0.25:
                parts.append("\n" + "\n".join(f"- {self._sentence()}" for _ in range(rng.randint(2, 6))) + "\n")
            elif r < 0.35:
                code = "\n".join(
                    f"{'_'.join(self._words(2))} = {rng.randint(0, 999)}  # {' '.join(self._words(3))}"
                    for _ in range(rng.randint(2, 10))
                )
                parts.append(f"\n```python\n{code}\n```\n")
            elif r < 0.42:
                other = rng.choice(self.names)
                parts.append(f"\nSee [{' '.join(self._words(2))}](/{other}) for details.\n")
        return "\n".join(parts)

    def write(self, out: Path) -> dict[str, float]:
        started = time.perf_counter()
        total = 0
        made: set[Path] = set()
        for i, rel in enumerate(self.names):
            path = out / rel
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            text = self.document(i)
            path.write_text(text, encoding="utf-8")
            total += len(text.encode())
        return {"files": self.files, "bytes": total, "seconds": round(time.perf_counter() - started, 2)}


def ensure_vault(out: Path, files: int, seed: int = 7) -> dict[str, float]:
    """Generate the vault once (a marker records files and seed)."""
    marker = out.parent / f"{out.name}.complete"
    key = f"{files} {seed}"
    if marker.exists() and marker.read_text().strip() == key and out.exists():
        return {"files": files, "cached": True}
    if out.exists():
        import shutil

        shutil.rmtree(out)
    info = VaultWriter(files, seed).write(out)
    marker.write_text(key)
    return info


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    info = ensure_vault(args.out, args.files, args.seed)
    print(info)


if __name__ == "__main__":
    main()
