"""Which language a document is written in, when its front matter does not say; and how to name languages.

A statistical identifier, py3langid (langid.py's byte n-gram naive Bayes, retrained on 139 languages; BSD, its
4.6 MB model inside the wheel, numpy only), reads up to SAMPLE_CHARS of a document's prose (code blocks, inline
code, tags and URLs left out). Chosen over lingua (96 MB wheel, 1.3 GB resident with its models, no Khmer, Lao,
Nepali or Uzbek), fastText lid.176 (fast, but its model is CC BY-SA and it names code and lists of names English
with confidence) and the stop-word vote it replaces (named Czech Portuguese, Ukrainian Russian, Hindi, Thai and
Khmer English): benchmarks/REPORT.md, issue 29.

It answers None when unsure, and then the root language stands for stemming: a wrong guess would stem a page in
the wrong language and tell agents a wrong language, an abstention costs little. Unsure is: the best language's
probability under MIN_PROBABILITY (code, tables, a list of names: the probabilities spread over many languages),
a winner that is one standard of a language written several ways (Bosnian, Croatian, Serbian) without a clear
lead over its sibling, or a label that is no ISO 639-1 language.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING

from .settings import STEMMER_LANGUAGES, normalize_language

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

# Prose looked at per document: the identifier reads every byte of it. 800 characters named as many pages right
# as 1500 on the three trees of benchmarks/language_detection.py, 500 a few fewer; 1000 keeps a margin.
SAMPLE_CHARS = 1000
# Below this probability the identifier is guessing: code, tables and lists of names stay under 0.2, random
# Greek letter names (the crash trials' notes) reached 0.57 (Basque). On the Obsidian help, tldr and OTel pages no
# page is named wrongly at 0.6 (but Bosnian, SIBLING_LEAD), and at 0.7 Nepali and Spanish tldr pages fall under 95 %.
MIN_PROBABILITY = 0.6
# Languages close enough for the identifier to confuse them on a short page: the winner needs this many times
# its sibling's probability. Tldr's Bosnian pages were called Croatian at 0.54 against 0.30; at 2.5 none is named
# wrongly (and nearly all are left undecided: on two-line pages the three standards cannot be told apart). Danish
# and Norwegian as a precaution (one tldr Danish page undecided). Indonesian and Malay are not siblings here:
# no Indonesian page was named Malay, and the rule left 8 of 120 tldr pages undecided.
SIBLINGS = (frozenset({"bs", "hr", "sr"}), frozenset({"da", "no"}))
SIBLING_LEAD = 2.5
# A query's language, when it is one without a function-word list (query_language_beyond_stopwords).
QUERY_MIN_PROBABILITY = 0.9
QUERY_MIN_LETTERS = 4
# The identifier's labels that are a variety of an ISO 639-1 language: counted as that language (Norwegian
# Bokmål and Nynorsk, Egyptian and Moroccan Arabic, Wu and Cantonese Chinese, Southern Uzbek). Its other
# three-letter labels (Nigerian Pidgin, Bikol, ...) name no ISO 639-1 language: the page stays undecided.
VARIETIES = {"nb": "no", "nn": "no", "arz": "ar", "ary": "ar", "wuu": "zh", "yue": "zh", "uzs": "uz"}

# English names of the ISO 639-1 codes the identifier can answer (describe_languages tells agents the mix).
LANGUAGE_NAMES = {
    "af": "Afrikaans", "am": "Amharic", "an": "Aragonese", "ar": "Arabic", "as": "Assamese", "az": "Azerbaijani",
    "ba": "Bashkir", "be": "Belarusian", "bg": "Bulgarian", "bn": "Bengali", "br": "Breton", "bs": "Bosnian",
    "ca": "Catalan", "cs": "Czech", "cy": "Welsh", "da": "Danish", "de": "German", "dz": "Dzongkha",
    "el": "Greek", "en": "English", "eo": "Esperanto", "es": "Spanish", "et": "Estonian", "eu": "Basque",
    "fa": "Persian", "fi": "Finnish", "fo": "Faroese", "fr": "French", "fy": "Frisian", "ga": "Irish",
    "gd": "Scottish Gaelic", "gl": "Galician", "gu": "Gujarati", "ha": "Hausa", "he": "Hebrew", "hi": "Hindi",
    "hr": "Croatian", "ht": "Haitian Creole", "hu": "Hungarian", "hy": "Armenian", "id": "Indonesian",
    "ig": "Igbo", "is": "Icelandic", "it": "Italian", "ja": "Japanese", "jv": "Javanese", "ka": "Georgian",
    "kk": "Kazakh", "km": "Khmer", "kn": "Kannada", "ko": "Korean", "ku": "Kurdish", "ky": "Kyrgyz",
    "la": "Latin", "lb": "Luxembourgish", "lg": "Ganda", "ln": "Lingala", "lo": "Lao", "lt": "Lithuanian",
    "lv": "Latvian", "mg": "Malagasy", "mk": "Macedonian", "ml": "Malayalam", "mn": "Mongolian", "mr": "Marathi",
    "ms": "Malay", "mt": "Maltese", "my": "Burmese", "ne": "Nepali", "nl": "Dutch", "no": "Norwegian",
    "oc": "Occitan", "om": "Oromo", "or": "Odia", "pa": "Punjabi", "pl": "Polish", "ps": "Pashto",
    "pt": "Portuguese", "qu": "Quechua", "ro": "Romanian", "ru": "Russian", "rw": "Kinyarwanda", "sa": "Sanskrit",
    "se": "Northern Sami", "si": "Sinhala", "sk": "Slovak", "sl": "Slovenian", "sn": "Shona", "so": "Somali",
    "sq": "Albanian", "sr": "Serbian", "st": "Sotho", "sv": "Swedish", "sw": "Swahili", "ta": "Tamil",
    "te": "Telugu", "tg": "Tajik", "th": "Thai", "tk": "Turkmen", "tl": "Tagalog", "tr": "Turkish",
    "tt": "Tatar", "ug": "Uyghur", "uk": "Ukrainian", "ur": "Urdu", "uz": "Uzbek", "vi": "Vietnamese",
    "vo": "Volapük", "wa": "Walloon", "xh": "Xhosa", "yo": "Yoruba", "zh": "Chinese", "zu": "Zulu",
}  # fmt: skip

# The most frequent function words of each Latin-script language with a stemmer (short forms that several
# languages share, such as "a", "de", "en", count for each of them: the distinctive ones decide). They no longer
# name documents; they still tell a query's language (document_signals.query_language), a few words long.
STOPWORDS: dict[str, frozenset[str]] = {
    code: frozenset(words.split())
    for code, words in {
        "en": "the and of to is in that it for with as are this be on by not or from at which was have has can you "
        "an will your these when if its we they but their there been were would should what how do does did i my",
        "fr": "le la les des du de et est une un dans pour que qui sur par pas au aux avec ce cette ces sont ou "
        "il elle nous vous ils leur se sa son ses mais plus être été fait comme aussi peut votre vos entre",
        "de": "der die das und ist nicht mit den dem des ein eine einen zu auf für von sich auch es im werden wird "
        "sind wie oder bei nach aus kann wenn dass sie wir ich sie einer zum zur",
        "nl": "de het een en van is dat die niet op te met voor zijn er aan ook als bij naar door wordt kan maar "
        "dit om uit nog worden wij je deze",
        "es": "el la los las de del que y en un una es por con para se no lo como más pero sus le ya este esta "
        "son entre cuando muy sin sobre también hay donde",
        "pt": "o os a as de do da dos das e em no na nos um uma que para com não por se mais como mas ao ele é "
        "são isso esta este pela pelo também seu sua",
        "it": "il lo la gli le di del della dei delle che e è in un una per con non si da al alla sono come ma "
        "anche questo questa più nel nella essere ha ci",
        "ro": "și în de la pe cu nu este sunt o un care din pentru mai ce se să a al ale lui fost dar sau acest "
        "această cel cea",
        "sv": "och att det som en är på av för med till den har de inte om ett men var jag sig så kan eller vi när "
        "från detta också",
        "da": "og at det som en er på af for med til den har de ikke om et men var jeg sig så kan eller vi når fra "
        "dette også skal være mig hvad",
        "no": "og at det som en er på av for med til den har de ikke om et men var jeg seg så kan eller vi når fra "
        "dette også skal være ble meg hva",
        "fi": "ja on ei se että oli ovat kuin mutta tai myös joka jos sekä niin tämä kun hän mitä voi olla vain ole "
        "nyt siitä sen jotka vaan",
        "hu": "a az és hogy nem is egy van meg ez azt de csak ki már mint volt még vagy el ha fel lesz amely kell "
        "pedig minden között után",
        "tr": "ve bir bu da de için ile çok ne daha gibi olarak olan ama kadar en değil var ya mi her sonra şey ben "
        "o ise veya göre ancak",
    }.items()
}

# Letter ranges of the scripts written without spaces between words.
_CJK = "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u1100-\u11ff\uac00-\ud7af"
# Thai, Lao, Myanmar and Khmer (with Khmer symbols): their words are not separated either, and their vowel
# signs and tone marks are not letters to Tantivy's tokenizer, which cut words apart at each of them.
_SOUTHEAST_ASIAN = "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff\u19e0-\u19ff"
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
# Not prose within a line: inline code, HTML tags, URLs (most link targets). The spans are bounded and cannot
# contain their own opening, so a line of unclosed ones costs linear time (unbounded, 12,000 `<` took 16 s).
_NOT_PROSE = re.compile(r"`[^`\n]{0,200}`|<[^<>\n]{0,200}>|https?://[^\s<>()]{0,500}")
_FENCE = re.compile(r" {0,3}(```|~~~)")
# Runs of CJK letters (Han, kana, Hangul), and of the Southeast Asian scripts, which carry no spaces between words.
CJK_RUN = re.compile(f"[{_CJK}]+")
NO_SPACE_RUN = re.compile(f"[{_CJK}]+|[{_SOUTHEAST_ASIAN}]+")
_SOUTHEAST_ASIAN_LETTER = re.compile(f"[{_SOUTHEAST_ASIAN}]")
SOUTHEAST_ASIAN_RUN = re.compile(f"[{_SOUTHEAST_ASIAN}]+")
# A word of the Indic scripts (Devanagari to Sinhala): written with spaces, but its vowel signs are marks, not
# letters, to Tantivy's tokenizer, which cut `गुमसुम` into `ग`, `मस`, `म`: pieces every page of the language
# shares. The dandas (U+0964-5) end sentences: not part of a word.
INDIC_WORD = re.compile("[\u0900-\u0963\u0966-\u0dff]+")
# A letter of those scripts as a reader sees it: a character, then its combining marks, and the consonants that
# Khmer's coeng (U+17D2) and Myanmar's virama (U+1039) stack under it. A run that begins with a mark (text cut
# mid-word) starts with a unit of its own.
_MARKS = "".join(
    chr(c)
    for c in range(0x0E00, 0x19FF + 1)
    if unicodedata.category(chr(c)).startswith("M") and NO_SPACE_RUN.match(chr(c))
)
_CLUSTER = re.compile(f"[{_SOUTHEAST_ASIAN}](?:[\u17d2\u1039][{_SOUTHEAST_ASIAN}]|[{_MARKS}])*")


def prose_sample(texts: Iterable[str], limit: int = SAMPLE_CHARS) -> str:
    """Up to `limit` characters of the prose in `texts`, without code blocks, inline code, tags and URLs."""
    parts: list[str] = []
    used = 0
    for text in texts:
        fenced = False
        for line in text[: limit * 4].split("\n"):
            if _FENCE.match(line):
                fenced = not fenced
            elif not fenced:
                parts.append(_NOT_PROSE.sub(" ", line))
                used += len(parts[-1])
                if used >= limit:
                    return "\n".join(parts)[:limit]
    return "\n".join(parts)


def detect_language(texts: Iterable[str]) -> str | None:
    """The ISO 639-1 code of the language of the prose in `texts`, or None when there is too little prose or
    the identifier is unsure (see the module docstring)."""
    sample = prose_sample(texts)
    if not _LETTER.search(sample):
        return None
    probabilities: dict[str, float] = {}
    for label, probability in _identifier().rank(sample)[:4]:
        code = VARIETIES.get(label, label)
        probabilities[code] = probabilities.get(code, 0.0) + float(probability)
    ranked = [*sorted(probabilities.items(), key=lambda item: -item[1])[:2], ("", 0.0)]
    (code, best), (runner_up, second) = ranked[0], ranked[1]
    if best < MIN_PROBABILITY or code not in LANGUAGE_NAMES:
        return None
    if best < SIBLING_LEAD * second and any(code in group and runner_up in group for group in SIBLINGS):
        return None
    return code


def query_language_beyond_stopwords(query: str, languages: Iterable[str]) -> str | None:
    """The language of a query written in one of the collection's `languages` that have no function-word list
    (STOPWORDS: the query's language is told by those first), or None.

    A query is a few words: the identifier's answer is taken only among the collection's languages, only when
    it names one without a word list (Czech, Thai, Ukrainian ...) with QUERY_MIN_PROBABILITY of their share, and
    only from QUERY_MIN_LETTERS letters on. A collection whose languages all have word lists never asks (the
    OpenTelemetry docs, English and French: their results stay as they were)."""
    others = {code for code in languages if code not in STOPWORDS and code in LANGUAGE_NAMES}
    if not others or len(_LETTER.findall(query)) < QUERY_MIN_LETTERS:
        return None
    wanted = others | {code for code in languages if code in LANGUAGE_NAMES}
    shares = identifier_shares(query, wanted)
    total = sum(shares.values())
    if not total:
        return None
    code, best = max(shares.items(), key=lambda item: item[1])
    return code if code in others and best >= QUERY_MIN_PROBABILITY * total else None


def identifier_shares(text: str, wanted: Collection[str]) -> dict[str, float]:
    """The identifier's probability of each language of `wanted` for `text` (its first SAMPLE_CHARS: a query is
    bounded, not its caller), a variety counted as its language (VARIETIES)."""
    shares: dict[str, float] = {}
    for label, probability in _identifier().rank(text[:SAMPLE_CHARS]):
        code = VARIETIES.get(label, label)
        if code in wanted:
            shares[code] = shares.get(code, 0.0) + float(probability)
    return shares


def asks_identifier(languages: Iterable[str]) -> bool:
    """Whether query_language_beyond_stopwords may ask the identifier in a collection of `languages`."""
    return any(code not in STOPWORDS and code in LANGUAGE_NAMES for code in languages)


def load_identifier() -> None:
    """Load the identifier now, not in the first search that needs it (the server warms it in the background)."""
    _identifier()


_LOAD_LOCK = threading.Lock()
_LOADED: list[LanguageIdentifier] = []


def _identifier() -> LanguageIdentifier:
    """The identifier, loaded on first use (1.6 s and ~110 MB: a process that never detects never pays)."""
    if not _LOADED:
        with _LOAD_LOCK:
            if not _LOADED:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                _LOADED.append(LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True))
    return _LOADED[0]


def declared_language(value: str) -> str | None:
    """A front matter's `lang:` as an ISO 639-1 code: a language with a stemmer ('fr', 'FR', 'fr-CA', 'french')
    or any language the identifier names ('cs', 'th-TH', 'Czech'); None when it names none."""
    code = normalize_language(value)
    if code is not None:
        return code
    key = value.strip().lower().replace("_", "-").split("-")[0]
    if key in LANGUAGE_NAMES:
        return key
    if key in VARIETIES:  # 'nb', 'nn'
        return VARIETIES[key]
    return next((c for c, name in LANGUAGE_NAMES.items() if name.lower() == key), None)


def language_name(code: str) -> str:
    """'fr' → 'French'."""
    if code in LANGUAGE_NAMES:
        return LANGUAGE_NAMES[code]
    name = STEMMER_LANGUAGES.get(code)
    return name.capitalize() if name else code


def describe_languages(counts: Mapping[str, int]) -> str:
    """'92 % English, 8 % French' from documents per language code, largest first ('' when empty).
    A language with documents never rounds down to 0 %: it shows as '<1 %'."""
    total = sum(counts.values())
    if not total:
        return ""
    parts = []
    for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        share = round(100 * n / total)
        parts.append(f"{share if share else '<1'} % {language_name(code)}")
    return ", ".join(parts)


def marked_words(text: str) -> list[str]:
    """The whole words of `text` in the Indic scripts (INDIC_WORD), as the index's letter field keeps them: a
    query's Indic word then matches that word, not the consonants it shares with every page of its language."""
    return INDIC_WORD.findall(text)


def cjk_terms(text: str, letters: bool = False) -> list[str]:
    """Overlapping pairs of letters of every run of a script written without spaces ('東京都' → '東京', '京都');
    a one-letter run stays whole. With `letters` (for the index), every letter of a longer run as well
    ('東', '京', '都').

    Chinese, Japanese, Thai, Lao, Khmer and Myanmar write no spaces, so a word tokenizer sees a whole sentence
    as one token; indexing pairs makes any word of two or more letters findable, the approach of Lucene's CJK
    analyzer. Many CJK words are one letter (雨 rain, 山 mountain, 猫 cat) and sit inside runs: those letters are
    indexed too (Lucene's `outputUnigrams`), and a query searches a lone letter as itself and a longer run by its
    pairs only, which are the more selective terms. In the Southeast Asian scripts a letter is a consonant with
    its vowel signs, tone marks and stacked consonants ('ផ្សា' of Khmer 'ផ្សារ', market): pairs of code points
    would match any word sharing one vowel sign ('សា' of 'សាលា', school, ranked the school note first)."""
    terms: list[str] = []
    for match in NO_SPACE_RUN.finditer(text):
        run = match.group(0)
        units = _CLUSTER.findall(run) if _SOUTHEAST_ASIAN_LETTER.match(run) else list(run)
        if len(units) == 1:
            terms.append(units[0])
            continue
        terms.extend(units[i] + units[i + 1] for i in range(len(units) - 1))
        if letters:
            terms.extend(units)
    return terms
