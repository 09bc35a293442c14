"""Tantivy full-text store: one Tantivy document per heading section.

`head_stem` (title + heading path) and `body_stem` are stemmed with the root
language's Snowball stemmer and accent-folded. A section in another language is
first stemmed in its own language (in Python, so only those sections pay), and
the root stemmer then leaves its stems as they are: every language shares one
pair of fields, hence one set of BM25 statistics. (With a field per language, a
language holding 8 % of the sections had an average field length 12 times too
small, and its documents lost to their English translations.) `fold` holds the
whole text unstemmed and accent-folded (language-neutral recall), `ident` the
exact identifiers (`OTEL_EXPORTER_OTLP_ENDPOINT`, `vm.swappiness`, `C++`) that
word tokenizers would split, `cjk` the letters and letter pairs of Chinese, Japanese
and Korean runs (written without spaces, so a word tokenizer sees one token per sentence).
A document's language comes from its `lang:` front matter, else from
mcp_docs.language's detection, else the root's; a query is analysed in every
language the collection holds.
"""

from __future__ import annotations

import hashlib
import logging
import math
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import tantivy

from ...errors import IndexBusy
from ...index.hits import RankedSection
from ...language import cjk_terms, marked_words
from ...query_language import OTHER_SCRIPT_SHARE, languages_outside_query_script, query_language
from ...query_text import (
    ANY_MARK,
    CODE_MARK,
    MAX_QUERY_TERMS,
    QUERY_STOPWORDS,
    WORD,
    WORD_TOKENIZER_PATTERN,
    fold_marks,
    identifiers,
    spaced_text,
    word_field_words,
)
from ...search.document_signals import QuerySignals, QueryWord, signal_words
from ...settings import STEMMER_LANGUAGES
from . import ownership
from .read_only_media import on_read_only_media

log = logging.getLogger(__name__)

# 6: single CJK letters, or doc_key; 7: both; 8: each document's terms in the catalog (document_signals.py):
# the version change clears the catalog (Library._check_generation), so every document is indexed again once.
# 9: a one-sentence note is named by three function words (language.SHORT_MIN_VOTES): notes indexed before keep
# the root's language, and so its stemmer, until indexed again.
# 10: languages named by py3langid (Czech was Portuguese, Thai English), Thai/Lao/Khmer/Myanmar letter pairs in
# `cjk`, languages without a stemmer unstemmed (UNSTEMMED_MARK): every document is detected and indexed again once.
# 11: Thai/Lao/Khmer/Myanmar runs only in `cjk`, no longer in the word fields (query_text.spaced_text); Indic
# words whole in `cjk` too (language.marked_words); words with combining marks whole in the word fields
# (Devanagari, Tamil, ... were cut at each virama and nukta), Arabic/Hebrew vowel marks and Latin accents of
# decomposed text folded (word_text): every document is indexed again once.
# 12: the Turkish 'İ' indexed as 'I' (word_text): its words held a combining dot no query has.
FULLTEXT_SCHEMA_VERSION = "12"
WRITER_HEAP_BYTES = 64 * 1024 * 1024
# A language without a stemmer (Czech, Thai, Ukrainian, ...) is lowercased and accent-folded, not stemmed, and each
# of its words is marked (Snowball stemmers have no suffix of digits, so the root's leaves it whole): its words
# are not the root's stems. Unmarked, every Czech, Khmer or Vietnamese page that keeps "Canvas" or "create" as
# an English word counted in the English stem's document frequency: in the Obsidian help (36 languages) English
# 'canva' was in 27 languages' pages, Portuguese 'canv' in 5, and "what is canvas" found the English page third.
UNSTEMMED_MARK = "00"

# Field weights, tuned on SciFact and checked on the OpenTelemetry question set (benchmarks/REPORT.md).
# The heading field is short, so BM25 length normalisation already favours a heading match: an extra
# boost over-weights titles (SciFact nDCG@10 0.654 at 1.5 vs 0.69 at 1.0). The unstemmed, accent-folded
# field at full weight rewards exact word forms on top of the stemmed match.
HEAD_BOOST = 1.0
BODY_BOOST = 1.0
FOLD_BOOST = 1.0
# Code-like identifiers (a_b, a.b, C++, C#) must beat their split words; hyphenated words
# (`long-term`, `IL-6`, `pre-mirna`) are ordinary prose and get a plain word's weight.
IDENT_BOOST = 8.0
HYPHEN_IDENT_BOOST = 1.0


@dataclass(frozen=True)
class SectionDoc:
    doc_id: str
    section_idx: int
    title: str
    heading: str
    heading_path: str
    level: int
    line_start: int
    line_end: int
    body: str
    tags: tuple[str, ...]
    folder: str
    lang: str


def ancestor_folders(folder: str) -> list[str]:
    if not folder:
        return []
    parts = folder.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


@cache
def _analyzer(language: str | None) -> tantivy.TextAnalyzer:
    builder = tantivy.TextAnalyzerBuilder(_word_tokenizer()).filter(tantivy.Filter.remove_long(40))
    builder = builder.filter(tantivy.Filter.lowercase())
    if language:
        builder = builder.filter(tantivy.Filter.stemmer(language))
    return builder.filter(tantivy.Filter.ascii_fold()).build()


def _word_tokenizer() -> tantivy.Tokenizer:
    """Words as query_text.WORD reads them: letters and digits with their combining marks. Tantivy's `simple`
    tokenizer cut a word at each mark that is not alphabetic to Rust (virama, nukta): 'संपीड़न' was 'संपीड', 'न'.
    For text without combining marks its tokens are `simple`'s."""
    return tantivy.Tokenizer.regex(WORD_TOKENIZER_PATTERN)


@cache
def _simple_analyzer(language: str | None) -> tantivy.TextAnalyzer:
    """_analyzer with Tantivy's `simple` tokenizer: the same terms for text without a combining mark, 3-4 times
    faster (the regex tokenizer made a cold keyword index of the OTel English pages 1.21x the CPU)."""
    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
    builder = builder.filter(tantivy.Filter.lowercase())
    if language:
        builder = builder.filter(tantivy.Filter.stemmer(language))
    return builder.filter(tantivy.Filter.ascii_fold()).build()


def _stem_terms_of(text: str, code: str) -> list[str]:
    """The stemmed fields' terms of `text` (the document's term set), by the faster analyzer when it can."""
    language = STEMMER_LANGUAGES[code]
    return (_analyzer(language) if ANY_MARK.search(text) else _simple_analyzer(language)).analyze(text)


def word_text(text: str) -> str:
    """`text` as the word fields index it, and as a query's words are analysed (query_text.fold_marks), with the
    Turkish 'İ' as 'I': Tantivy's lowercase filter makes it 'i' and a combining dot (U+0307), which ascii_fold
    keeps, so 'İçe aktar' and 'İstanbul' were found by no query at all (a query's words are lowercased before
    fold_marks drops that dot: 'içe', never 'i̇çe')."""
    return fold_marks(text).replace("İ", "I")


def _build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    sb.add_unsigned_field("doc_key", fast=True)  # see doc_key()
    sb.add_unsigned_field("section", stored=True)
    # Display fields are stored, never indexed (a raw-tokenized body would be one giant term).
    for name in ("title", "heading", "heading_path", "body"):
        sb.add_bytes_field(name, stored=True, indexed=False)
    sb.add_unsigned_field("line_start", stored=True)
    sb.add_unsigned_field("line_end", stored=True)
    sb.add_text_field("head_stem", tokenizer_name="stem", index_option="freq")
    sb.add_text_field("body_stem", tokenizer_name="stem", index_option="freq")
    sb.add_text_field("fold", stored=False, tokenizer_name="fold", index_option="freq")
    sb.add_text_field("ident", tokenizer_name="raw", index_option="freq")
    sb.add_text_field("cjk", tokenizer_name="terms", index_option="freq")
    sb.add_text_field("lang", tokenizer_name="raw", index_option="basic")
    sb.add_text_field("tag", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("folder", tokenizer_name="raw", index_option="basic")
    return sb.build()


def _is_damage(exc: BaseException) -> bool:
    # Tantivy reports some damaged files as a Rust panic (a cut segment file: "assertion failed: start <=
    # orig_range.end"), which pyo3 raises as PanicException, a BaseException (found by the index fuzzing).
    return isinstance(exc, (ValueError, OSError)) or type(exc).__name__ == "PanicException"


def _stemming(code: str) -> tantivy.TextAnalyzer:
    return _analyzer(STEMMER_LANGUAGES[code])


class FullTextIndex:
    def __init__(self, path: Path, language: str = "en", read_only: bool = False) -> None:
        self.path = path
        self.language = language  # the root's: a change rebuilds the index (Library._check_compatibility)
        self.schema = _build_schema()
        self._writer: tantivy.IndexWriter | None = None
        self._writer_lock = threading.RLock()
        self.read_only = read_only
        # each thread's last query and its words' stemmed terms (build_query), which query_signals reuses
        self._last_query = threading.local()
        if read_only:
            self._open_existing()
            return
        version_file = path / "schema-version"
        if path.exists() and (
            not version_file.exists() or version_file.read_text(errors="replace").strip() != FULLTEXT_SCHEMA_VERSION
        ):
            log.info("full-text schema changed: rebuilding %s", path)
            ownership.remove(path)
        path.mkdir(parents=True, exist_ok=True)
        try:
            self.index = tantivy.Index(self.schema, path=str(path), reuse=True)
            self._probe()
        except BaseException as exc:
            if not _is_damage(exc):
                raise
            log.warning("full-text index at %s could not be opened: rebuilding", path)
            ownership.remove(path)
            path.mkdir(parents=True)
            self.index = tantivy.Index(self.schema, path=str(path), reuse=True)
        version_file.write_text(FULLTEXT_SCHEMA_VERSION)
        self._register_tokenizers()

    def _open_existing(self) -> None:
        """A reader (an HTTP worker beside the writing one) opens what the writer made and never writes here;
        Tantivy reloads its searcher by itself within a second of each commit the writer makes."""
        version_file = self.path / "schema-version"
        try:
            version = version_file.read_text(errors="replace").strip()
            folder = self._shadow() if on_read_only_media(self.path) else self.path
            self.index = tantivy.Index.open(str(folder))
        except (OSError, ValueError) as exc:
            raise OSError(f"the full-text index in {self.path} cannot be read ({exc})") from exc
        if version != FULLTEXT_SCHEMA_VERSION:
            raise OSError(f"the full-text index in {self.path} has schema {version}, not {FULLTEXT_SCHEMA_VERSION}")
        self._register_tokenizers()

    def _shadow(self) -> Path:
        """On a read-only file system: a temporary folder of links to the index's files, for Tantivy to open.
        Tantivy takes a lock file beside meta.json even to read, and creating it there fails (EROFS); the index
        cannot change on such media, so reading it through links is reading it."""
        self._shadow_dir = tempfile.TemporaryDirectory(prefix="mcp-docs-readonly-")  # removed with this object
        shadow = Path(self._shadow_dir.name)
        for entry in self.path.iterdir():
            if entry.is_file() and not entry.name.endswith(".lock"):
                (shadow / entry.name).symlink_to(entry.absolute())
        return shadow

    def _probe(self) -> None:
        """Tantivy opens a segment's files lazily, so a lost or cut file would only fail the first search that
        needs it: touch every indexed field (postings and positions) and the document store of each segment now."""
        searcher = self.index.searcher()
        fields = ["doc_id", "head_stem", "body_stem", "fold", "ident", "cjk", "lang", "tag", "folder"]
        probe = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, f, "probe")) for f in fields]
        )
        searcher.search(probe, limit=1)
        for segment in range(searcher.num_segments):
            first = tantivy.DocAddress(segment, 0)
            searcher.doc(first)
            # every search reads this fast field: a damaged column panicked there, after the index had opened
            searcher.fast_field_values("doc_key", [first])

    @property
    def fresh(self) -> bool:
        return self.index.searcher().num_docs == 0

    def _register_tokenizers(self) -> None:
        # Custom tokenizers are not persisted by Tantivy: register them on every open.
        self.index.register_tokenizer("stem", _stemming(self.language))
        self.index.register_tokenizer("fold", _analyzer(None))
        self.index.register_tokenizer("terms", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())

    def _pre_stemmed(self, text: str, lang: str) -> str:
        """`text` of a section in `lang`, ready for the root-stemmed fields (see the module docstring)."""
        if lang == self.language:
            return text
        if lang in STEMMER_LANGUAGES:
            return " ".join(_stemming(lang).analyze(text))
        return " ".join(f"{word}{UNSTEMMED_MARK}" for word in _analyzer(None).analyze(text))

    def _stem_terms(self, word: str, languages: Iterable[str]) -> dict[str, list[str]]:
        """The terms `word` has in the stemmed fields of sections in each of `languages` (analysed as those
        sections were), each with the languages it stands for: 'sampler' is 'sampler' in English sections and
        'sampl' in French ones, where English 'sampling' also ends up, so each term must only match its own."""
        root = _stemming(self.language)
        terms: dict[str, list[str]] = {}
        word = word_text(word)
        for code in languages:
            for term in root.analyze(self._pre_stemmed(word, code)):
                terms.setdefault(term, []).append(code)
        return terms

    def _in_languages(self, query: tantivy.Query, codes: list[str]) -> tantivy.Query:
        """`query`, matched only in sections of the languages `codes` (the filter adds nothing to the score)."""
        langs = [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "lang", code)) for code in codes]
        only = tantivy.Query.const_score_query(tantivy.Query.boolean_query(langs), 0.0)
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, only)])

    def _damped_in_languages(self, query: tantivy.Query, codes: list[str], share: float) -> tantivy.Query:
        """`query`, its score multiplied by `share` in sections of the languages `codes` (one branch matches)."""
        langs = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "lang", code)) for code in codes]
        )
        inside = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.MustNot, langs)])
        outside = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, query), (tantivy.Occur.Must, tantivy.Query.const_score_query(langs, 0.0))]
        )
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, inside), (tantivy.Occur.Should, tantivy.Query.boost_query(outside, share))]
        )

    # -- writing ---------------------------------------------------------------------
    def begin(self) -> None:
        """Take the single writer; raises IndexBusy if another process holds it."""
        if self.read_only:
            raise IndexBusy("this worker only reads the index; the writing worker keeps it up to date")
        with self._writer_lock:
            if self._writer is None:
                try:
                    self._writer = self.index.writer(WRITER_HEAP_BYTES, 1)
                except ValueError as exc:
                    if "lock" in str(exc).lower():
                        raise IndexBusy(
                            "the index is being updated by another mcp-docs process (is `mcp-docs serve` running?)"
                        ) from exc
                    raise
                # A writer killed mid-commit (kill -9, power loss) leaves files meta.json does not know, such as
                # `<segment>.<opstamp>.del`; the next commit would reuse that name and fail. Holding the writer
                # lock, remove them first (searchers keep the files they use).
                try:
                    self._writer.garbage_collect_files()
                except Exception:
                    log.warning("could not garbage-collect the full-text index files", exc_info=True)

    def _w(self) -> tantivy.IndexWriter:
        if self._writer is None:
            self.begin()
        assert self._writer is not None
        return self._writer

    def delete_document(self, doc_id: str) -> None:
        self._w().delete_documents_by_term("doc_id", doc_id)

    def add_sections(self, sections: Iterable[SectionDoc], terms: set[str] | None = None) -> None:
        """Index `sections`; with `terms`, also collect there their terms in the stemmed fields (the
        document's term set, document_signals.py)."""
        writer = self._w()
        for s in sections:
            head_text = f"{s.title}\n{s.heading_path.replace(' > ', chr(10))}" if s.heading_path != s.title else s.title
            doc = tantivy.Document()
            doc.add_text("doc_id", s.doc_id)
            doc.add_unsigned("doc_key", doc_key(s.doc_id))
            doc.add_unsigned("section", s.section_idx)
            doc.add_bytes("title", s.title.encode())
            doc.add_bytes("heading", s.heading.encode())
            doc.add_bytes("heading_path", s.heading_path.encode())
            doc.add_unsigned("line_start", s.line_start)
            doc.add_unsigned("line_end", s.line_end)
            # Thai, Lao, Khmer and Myanmar runs are searched by their letter pairs (`cjk`) only: not in these fields
            head_words, body_words = word_text(spaced_text(head_text)), word_text(spaced_text(s.body))
            head_stem = self._pre_stemmed(head_words, s.lang)
            body_stem = self._pre_stemmed(body_words, s.lang)
            doc.add_text("head_stem", head_stem)
            doc.add_text("body_stem", body_stem)
            if terms is not None:
                terms.update(_stem_terms_of(head_stem, self.language))
                terms.update(_stem_terms_of(body_stem, self.language))
            doc.add_text("fold", f"{head_words}\n{body_words}")
            doc.add_text("lang", s.lang)
            grams = cjk_terms(f"{head_text}\n{s.body}", letters=True) + marked_words(f"{head_text}\n{s.body}")
            if grams:
                doc.add_text("cjk", " ".join(grams))
            doc.add_bytes("body", s.body.encode())
            for ident in identifiers(f"{s.heading_path}\n{s.body}"):
                doc.add_text("ident", ident)
            for tag in s.tags:
                doc.add_text("tag", tag)
            for folder in ancestor_folders(s.folder):
                doc.add_text("folder", folder)
            writer.add_document(doc)

    def path_terms(self, doc_id: str, lang: str) -> list[str]:
        """The words of a document's path (folders and file name, without the extension), as the stemmed
        fields analyse the document's text."""
        words = " ".join(WORD.findall(doc_id.rsplit(".", 1)[0] if "." in doc_id.rsplit("/", 1)[-1] else doc_id))
        words = word_text(words)
        return _stemming(self.language).analyze(self._pre_stemmed(words, lang))

    def reload(self) -> None:
        """Search the latest commit from now on (a reader: Tantivy's own reload lags a commit by up to a second)."""
        self.index.reload()

    def committed_opstamp(self) -> int:
        """The operation stamp of the last commit: a commit always raises it (a fresh writer reads it from the
        index), so comparing it with a stamp noted earlier tells whether a commit happened in between."""
        with self._writer_lock:
            return int(self._w().commit_opstamp)

    def commit(self) -> None:
        with self._writer_lock:
            if self._writer is not None:
                self._writer.commit()
        self.index.reload()

    def end(self) -> None:
        """Release the writer (and its lock) so other processes may write."""
        with self._writer_lock:
            if self._writer is not None:
                writer, self._writer = self._writer, None
                writer.commit()
                writer.wait_merging_threads()
        self.index.reload()

    def rollback(self) -> None:
        with self._writer_lock:
            if self._writer is not None:
                self._writer.rollback()

    # -- reading ----------------------------------------------------------------------
    def num_sections(self) -> int:
        return self.index.searcher().num_docs

    def build_query(
        self, text: str, languages: Iterable[str], folder: str | None = None, tags: Iterable[str] = ()
    ) -> tantivy.Query | None:
        words = word_field_words(text)
        content = [w for w in words if w not in QUERY_STOPWORDS]
        if content:
            words = content
        idents = identifiers(text)
        grams = list(dict.fromkeys(cjk_terms(text) + marked_words(text)))[:MAX_QUERY_TERMS]
        if not words and not idents and not grams:
            return None
        schema = self.schema
        should: list[tuple[tantivy.Occur, tantivy.Query]] = []
        fold = _analyzer(None)
        present = sorted({self.language, *languages})
        analysed: dict[str, dict[str, list[str]]] = {}
        self._last_query.value = (text, present, analysed)  # query_signals reads it in the same search
        for word in words:
            for term in fold.analyze(word_text(word)):
                should.append(
                    (tantivy.Occur.Should, _weighted(tantivy.Query.term_query(schema, "fold", term), FOLD_BOOST))
                )
            analysed[word] = stemmed = self._stem_terms(word, present)
            for term, codes in stemmed.items():
                for field, boost in (("head_stem", HEAD_BOOST), ("body_stem", BODY_BOOST)):
                    clause = tantivy.Query.term_query(schema, field, term)
                    if len(codes) < len(present):
                        clause = self._in_languages(clause, codes)
                    should.append((tantivy.Occur.Should, _weighted(clause, boost)))
        for ident in idents:
            should.append(
                (
                    tantivy.Occur.Should,
                    tantivy.Query.boost_query(
                        tantivy.Query.term_query(schema, "ident", ident),
                        IDENT_BOOST if CODE_MARK.search(ident) else HYPHEN_IDENT_BOOST,
                    ),
                )
            )
        for gram in grams:
            should.append((tantivy.Occur.Should, tantivy.Query.term_query(schema, "cjk", gram)))
        query = should[0][1] if len(should) == 1 else tantivy.Query.boolean_query(should)
        elsewhere = languages_outside_query_script(text, present)
        if elsewhere:
            query = self._damped_in_languages(query, elsewhere, OTHER_SCRIPT_SHARE)
        filters: list[tuple[tantivy.Occur, tantivy.Query]] = []
        if folder:
            filters.append(
                (
                    tantivy.Occur.Must,
                    tantivy.Query.const_score_query(tantivy.Query.term_query(schema, "folder", folder), 0.0),
                )
            )
        for tag in tags:
            filters.append(
                (tantivy.Occur.Must, tantivy.Query.const_score_query(tantivy.Query.term_query(schema, "tag", tag), 0.0))
            )
        if filters:
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), *filters])
        return query

    def query_signals(self, text: str, languages: Iterable[str]) -> QuerySignals:
        """What document_signals needs of a query: its words' terms by language, weighted by their IDF over
        the sections (the rarest term of a word in the body field), and the query's language."""
        content = signal_words(text)  # without the words of code identifiers (the `ident` field matches those)
        present = sorted({self.language, *languages})
        last = getattr(self._last_query, "value", None)
        analysed = last[2] if last is not None and last[0] == text and last[1] == present else {}
        searcher = self.index.searcher()
        total = max(1, searcher.num_docs)
        weighted = []
        for word in content:
            terms = analysed.get(word) or self._stem_terms(word, present)
            if not terms:
                continue
            df = max(searcher.doc_freq("body_stem", term) for term in terms)
            weight = math.log(1 + (total - df + 0.5) / (df + 0.5))
            weighted.append(QueryWord({t: tuple(codes) for t, codes in terms.items()}, weight))
        language = query_language(text, present)  # as the search pipeline names it (search/languages.py)
        return QuerySignals(tuple(weighted), language)

    def search(self, query: tantivy.Query, limit: int) -> list[tuple[RankedSection, float]]:
        return [(hit.section, hit.score) for hit in self.search_hits(query, limit)]

    def search_hits(self, query: tantivy.Query, limit: int) -> list[KeywordHit]:
        """The best `limit` sections, best first, their stored fields not read yet (see KeywordHit)."""
        searcher = self.index.searcher()
        result = searcher.search(query, limit=max(1, limit), count=False)  # the total is never shown
        addresses = [address for _, address in result.hits]
        keys = searcher.fast_field_values("doc_key", addresses)
        return [
            KeywordHit(searcher, address, int(key or 0), float(score))
            for (score, address), key in zip(result.hits, keys, strict=True)
        ]


def doc_key(doc_id: str) -> int:
    """A document's 64-bit key, a fast field: a search groups its hits into documents by it, reading the
    stored fields only of the documents it shows. (Two ids sharing a key, odds ~1e-9 among 100,000
    documents, would be grouped as one document: the second id's sections under the first.)"""
    return int.from_bytes(hashlib.blake2b(doc_id.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


class KeywordHit:
    """A keyword hit whose stored fields (read from Tantivy's compressed document store, the dearest part of
    a keyword search) are read on first use of `section` or `heading_path`."""

    __slots__ = ("_address", "_searcher", "_section", "doc_key", "score")

    def __init__(self, searcher: tantivy.Searcher, address: tantivy.DocAddress, key: int, score: float) -> None:
        self._searcher = searcher  # the searcher that found it: its segments stay readable while it lives
        self._address = address
        self._section: RankedSection | None = None
        self.doc_key = key
        self.score = score

    @property
    def section(self) -> RankedSection:
        if self._section is None:
            d = self._searcher.doc(self._address)
            self._section = RankedSection(
                doc_id=str(d.get_first("doc_id")),
                section_idx=_number(d, "section"),
                title=_text(d, "title"),
                heading=_text(d, "heading"),
                heading_path=_text(d, "heading_path"),
                line_start=_number(d, "line_start"),
                line_end=_number(d, "line_end"),
                body=_text(d, "body"),
                tags=tuple(d.get_all("tag")),
            )
        return self._section

    @property
    def heading_path(self) -> str:
        return self.section.heading_path

    @property
    def loaded(self) -> bool:
        """Whether its stored fields were read."""
        return self._section is not None


def _weighted(query: tantivy.Query, boost: float) -> tantivy.Query:
    return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)


def _number(doc: tantivy.Document, field: str) -> int:
    value = doc.get_first(field)
    assert value is not None, field  # every section is indexed with all its numbers
    return int(value)


def _text(doc: tantivy.Document, field: str) -> str:
    value = doc.get_first(field)
    return bytes(value).decode("utf-8", "replace") if value is not None else ""
