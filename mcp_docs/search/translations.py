"""An original and its translation are one answer: translation pairs told by their paths, shown once.

A docs site in several languages usually mirrors one tree per language (`content/en/docs/x.md` and
`content/fr/docs/x.md`, Docusaurus, MkDocs i18n folders) or marks a page's language in its file name (Hugo's
`x.md` / `x.fr.md`, `x.en.md` / `x.fr.md`). A multilingual model puts a page and its translation side by side in
the results, and in a collection where the languages' scores are made comparable (language_mix) the original
often ranks above the translation for a question in the translation's language (benchmarks/REPORT.md, issue 14,
deliverable 2: French questions about French OpenTelemetry pages, hybrid doc hit@1 0.842 -> 0.421). The two
are one answer: it keeps the better rank of the two and shows the page in the question's language.

Pure: the paths and the documents' languages (as detected while indexing) are the callers'. Two documents are a
pair only when the paths mirror each other AND their detected languages differ (an untranslated page copied into
`fr/` is not a translation). No path mirroring, no pair: the results are left exactly as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Stands in for the language marker in a path's key: no path holds it.
_MARK = "\x00"
# A translation keeps its original's headings: of the 65 English/French page pairs of the OpenTelemetry docs, 55
# have as many sections, 6 more are within 2. Two notes that only share a name in two language folders
# (`en/todo.md`, `fr/todo.md` in a personal vault) rarely do, and each stays an answer of its own. A pair may
# differ by SECTION_SLACK sections, or by SECTION_SHARE of the larger count.
SECTION_SLACK = 2
SECTION_SHARE = 0.2


def alike(sections_a: int, sections_b: int) -> bool:
    """Whether two documents' section counts allow one to be the other's translation."""
    return abs(sections_a - sections_b) <= max(SECTION_SLACK, SECTION_SHARE * max(sections_a, sections_b))


def _names_language(part: str, lang: str) -> bool:
    """`part` (a folder name or a file-name infix) names language `lang`: `fr`, `FR`, `fr-CA`, `fr_ca`."""
    low = part.lower()
    return low == lang or (len(low) > len(lang) and low.startswith(lang) and low[len(lang)] in "-_")


def _folder_suffix(part: str, lang: str) -> str | None:
    """The folder name before a language suffix naming `lang` (`pages.fr` -> `pages`, `pages.pt_BR` -> `pages`),
    or None. The tldr pages keep English in `pages/` and each translation in `pages.<language>/`: the English
    page and its 40 translations were 41 answers, and a Latin-script question found the translations first
    (their word fields hold little more than the commands, so BM25 weighs those words more there)."""
    stem, dot, suffix = part.rpartition(".")
    return stem if dot and stem and _names_language(suffix, lang) else None


def _unmarked_folder(part: str, lang: str) -> str:
    if _names_language(part, lang):
        return _MARK
    stem = _folder_suffix(part, lang)
    return part if stem is None else stem


def translation_key(doc_id: str, lang: str) -> str:
    """The document's path with the marks of its own language taken out: a folder named for it (at any depth),
    a folder's language suffix (`pages.fr/`) and a Hugo-style infix before the extension (`x.fr.md`). A page and
    its translation get the same key; a path without a mark is its own key, so `x.md` meets `x.fr.md` and
    `pages/x.md` meets `pages.fr/x.md`."""
    lang = lang.lower()
    parts = doc_id.split("/")
    folders = [_unmarked_folder(p, lang) for p in parts[:-1]]
    name = parts[-1]
    pieces = name.split(".")
    if len(pieces) >= 3 and _names_language(pieces[-2], lang):  # x.fr.md -> x.md (not ".md" alone, not "fr.md")
        name = ".".join(pieces[:-2] + pieces[-1:])
    return "/".join([*folders, name])


def variant(doc_id: str, lang: str) -> str:
    """The document's language as its path writes it: `pt-br` for `pt-br/x.md` in Portuguese, `zh-tw` for
    `zh-TW/x.md`, `fr` for `x.fr.md`; `lang` itself when the path names no variant of it. Two versions of a page
    in one language are still translations of it when their paths name two variants: the detector calls
    European and Brazilian Portuguese (or Simplified and Traditional Chinese) one language, and the Obsidian
    help's `pt/` and `pt-br/` versions of a page stayed two answers."""
    lang = lang.lower()
    parts = doc_id.lower().split("/")
    for part in parts[:-1]:
        if _names_language(part, lang):
            return part.replace("_", "-")
        if _folder_suffix(part, lang) is not None:
            return part.rpartition(".")[2].replace("_", "-")
    pieces = parts[-1].split(".")
    if len(pieces) >= 3 and _names_language(pieces[-2], lang):
        return pieces[-2].replace("_", "-")
    return lang


# Front-matter fields that name a page across its translations: Hugo's `translationKey`, and the `permalink` that
# an Obsidian Publish site in several languages gives every version of a page (the Obsidian help vault:
# `en/Plugins/Canvas.md` and `no/Utvidelser/Canvas.md` both say `permalink: plugins/canvas`; translated folder
# names hide the pair from the paths).
DECLARED_KEYS = ("translationKey", "translation_key", "permalink")


def declared_key(front_matter: Mapping[str, Any]) -> str | None:
    """The key a page's front matter gives all its translations, or None."""
    for name in DECLARED_KEYS:
        value = front_matter.get(name)
        if isinstance(value, str) and value.strip():
            return f"{_MARK}{name}:{value.strip().strip('/').lower()}"
    return None


@dataclass(frozen=True)
class Answer:
    """One entry of the collapsed order: the document shown, where it came from in the input order, and the other
    versions of it that were in the results (other languages), best first."""

    shown: str
    rank: int  # the best input position among the versions (the entry's place)
    shown_rank: int  # the shown version's input position
    others: tuple[str, ...]


def collapse(
    ids: Sequence[str],
    language_of: Callable[[str], str],
    query_language: str | None,
    same_page: Callable[[str, str], bool] | None = None,
    declared: Mapping[str, str] | None = None,
    fits_query: Callable[[str], bool] | None = None,
    preferred: Callable[[], str | None] | None = None,
    score_of: Callable[[int], float] | None = None,
) -> list[Answer]:
    """Documents best first → one entry per answer, in the order of each answer's best-ranked version.

    Versions are documents whose keys (`declared`, from their front matter, else `translation_key`) are equal
    and whose languages, or language variants (`variant`: `pt` and `pt-br`), differ (per key, the best-ranked
    document of each variant; another document of a variant already there stands alone), and
    that `same_page` (if given) accepts with the key's best-ranked version (e.g. `alike` section counts). The
    version shown is the best-ranked one in `query_language`; when none is (or the language is not known), the
    best-ranked one in a language `fits_query` accepts (one that writes the query's script), else the
    best-ranked one."""
    members: dict[str, dict[str, int]] = {}  # key -> language variant -> input position (first = best)
    entry_of: list[str | None] = []
    for position, doc_id in enumerate(ids):
        lang = language_of(doc_id)
        key = (declared or {}).get(doc_id) or translation_key(doc_id, lang)
        versions = members.setdefault(key, {})
        tag = variant(doc_id, lang)
        if tag in versions:  # the same language (variant) twice under one key: not translations of each other
            entry_of.append(None)
            continue
        if versions and same_page is not None and not same_page(ids[min(versions.values())], doc_id):
            entry_of.append(None)  # named alike, written differently: its own answer
            continue
        versions[tag] = position
        entry_of.append(key)
    answers: list[Answer] = []
    seen: set[str] = set()
    for position, (doc_id, entry) in enumerate(zip(ids, entry_of, strict=True)):
        if entry is None:
            answers.append(Answer(doc_id, position, position, ()))
            continue
        if entry in seen:  # a version of an answer already placed
            continue
        seen.add(entry)
        versions = members[entry]
        # the best-ranked version in the query's language, whichever variant of it (`pt`, `pt-br`)
        shown_rank = min((p for p in versions.values() if language_of(ids[p]) == query_language), default=-1)
        if shown_rank < 0:
            shown_rank = _fallback_version(sorted(versions.values()), ids, language_of, fits_query, preferred, score_of)
        others = tuple(ids[p] for p in sorted(versions.values()) if p != shown_rank)
        answers.append(Answer(ids[shown_rank], position, shown_rank, others))
    return answers


# A version in the collection's main language is shown, for a query that names no language, when its score is
# at least this share of the best version's: the versions of a page tie on a bare name ("sync", "Canvas")
# and differ only by their lengths, where the main language is what most readers of the collection read.
PREFERRED_SHARE = 0.75


def _fallback_version(
    positions: list[int],
    ids: Sequence[str],
    language_of: Callable[[str], str],
    fits_query: Callable[[str], bool] | None,
    preferred: Callable[[], str | None] | None,
    score_of: Callable[[int], float] | None,
) -> int:
    """The version shown when none is in the query's language: of those written in the query's script (all, if
    none is), the one in `preferred` when it scores near the best, else the best-ranked."""
    fitting = [p for p in positions if fits_query is None or fits_query(language_of(ids[p]))] or positions
    best = fitting[0]
    if preferred is None or score_of is None or len(fitting) == 1:
        return best
    language = preferred()  # asked only here: most searches never need it (PostgreSQL: a round trip)
    main = next((p for p in fitting if language_of(ids[p]) == language), None)
    if main is not None and score_of(main) >= PREFERRED_SHARE * score_of(best):
        return main
    return best


def has_pairs(answers: Sequence[Answer]) -> bool:
    return any(a.others for a in answers)


def translated(documents: Iterable[tuple[str, str]]) -> set[str]:
    """(document id, language) → the ids of the documents that have a version in another language."""
    languages: dict[str, dict[str, str]] = {}  # key -> language -> the first document of it
    for doc_id, lang in documents:
        languages.setdefault(translation_key(doc_id, lang), {}).setdefault(lang, doc_id)
    return {doc_id for versions in languages.values() if len(versions) > 1 for doc_id in versions.values()}
