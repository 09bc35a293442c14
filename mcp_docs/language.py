"""Which language a document is written in, when its front matter does not say; and how to name languages.

A stop-word vote, not a statistical model: function words ("the", "les", "und") are the most frequent words
of every language and nearly disjoint across the languages we stem, so counting them in a few thousand
characters of prose tells them apart (on the 834 OpenTelemetry pages labelled en/fr: none wrong, 72 left
undecided, benchmarks/REPORT.md) with no dependency, no model file, at ~6 % of the parse time. Scripts settle the languages that have their own (Greek,
Cyrillic, Arabic, Tamil, Chinese, Japanese, Korean). When the vote is thin or close (a page of code, a table of
numbers, a list of names where one function word recurs) the answer is None and the root language stands:
a wrong guess would stem a page in the wrong language, an abstention costs nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from .settings import STEMMER_LANGUAGES

SAMPLE_CHARS = 1500  # prose looked at per document: on the OTel pages, as accurate as 1000 or 6000
MIN_VOTES = 4  # stop words needed before a Latin-script language is named
# Prose uses many different function words; one word repeated (Romanian "nu" in a list of Greek letter names,
# a variable called "a") is no evidence. The sparsest English OTel page named has 3 distinct ones voting.
MIN_DISTINCT_WORDS = 3
# Function words are 30-50 % of running prose; the sparsest OTel page named right has 9.7 % of its words voting.
# Below this share the words are a list of names or identifiers that happens to contain a few.
MIN_VOTE_SHARE = 0.05
MIN_LEAD = 1.5  # the winner needs this many times the runner-up's votes
# A note of one sentence ("Les élèves mangeaient à la cantine avec leurs professeurs.") has three function words:
# enough when no other language comes close. One sentence per OTel section (3,929, labelled by folder): named
# right 2,736 -> 3,172 of them, none wrong before or after (benchmarks/REPORT.md, issue 14).
SHORT_MIN_VOTES = 3
SHORT_MIN_LEAD = 3.0
MIN_SCRIPT_SHARE = 0.3  # share of the letters a non-Latin script needs to name its language
MIN_KANA_SHARE = 0.05  # Han text with this much kana is Japanese

# Languages without a stemmer that the detector still names (their text is searched unstemmed, CJK by bigrams).
OTHER_LANGUAGES = {"zh": "Chinese", "ja": "Japanese", "ko": "Korean"}

# The most frequent function words of each Latin-script language with a stemmer (short forms that several
# languages share, such as "a", "de", "en", count for each of them: the distinctive ones decide).
STOPWORDS: dict[str, frozenset[str]] = {
    code: frozenset(words.split())
    for code, words in {
        "en": "the and of to is in that it for with as are this be on by not or from at which was have has can you "
        "an will your these when if its we they but their there been were would should what how",
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

# word → the languages it votes for
_VOTERS: dict[str, tuple[str, ...]] = {}
for _code, _words in STOPWORDS.items():
    for _word in _words:
        _VOTERS[_word] = (*_VOTERS.get(_word, ()), _code)

# Letter ranges of the scripts that name a language by themselves.
_SCRIPTS: dict[str, str] = {
    "el": "\u0370-\u03ff\u1f00-\u1fff",
    "ru": "\u0400-\u04ff",
    "ar": "\u0600-\u06ff\u0750-\u077f",
    "ta": "\u0b80-\u0bff",
    "ja": "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f",  # kana: Japanese even when most letters are Han
    "zh": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff",
    "ko": "\u1100-\u11ff\uac00-\ud7af",
}
_SCRIPT_RE = {code: re.compile(f"[{ranges}]") for code, ranges in _SCRIPTS.items()}
_OTHER_SCRIPT = re.compile(f"[{''.join(_SCRIPTS.values())}]")
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
# Not prose within a line: inline code, HTML tags, URLs (most link targets). The spans are bounded and cannot
# contain their own opening, so a line of unclosed ones costs linear time (unbounded, 12,000 `<` took 16 s).
_NOT_PROSE = re.compile(r"`[^`\n]{0,200}`|<[^<>\n]{0,200}>|https?://[^\s<>()]{0,500}")
_FENCE = re.compile(r" {0,3}(```|~~~)")
# Runs of CJK letters (Han, kana, Hangul), which carry no spaces between words.
CJK_RUN = re.compile(f"[{_SCRIPTS['ja']}{_SCRIPTS['zh']}{_SCRIPTS['ko']}]+")


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
    """The language code of the prose in `texts` (a key of STEMMER_LANGUAGES or OTHER_LANGUAGES), or None
    when there is too little prose or no clear winner."""
    sample = prose_sample(texts)
    # Most text has no letter of another script: one pass tells, before the costly count per script.
    if not sample.isascii() and _OTHER_SCRIPT.search(sample):
        script = _script_language(sample)
        if script:
            return script
    words = Counter(_WORD.findall(sample.lower()))
    votes: Counter[str] = Counter()
    distinct: Counter[str] = Counter()
    for word, n in words.items():
        for code in _VOTERS.get(word, ()):
            votes[code] += n
            distinct[code] += 1
    ranked = [*votes.most_common(2), ("", 0), ("", 0)]
    (code, best), (_, second) = ranked[0], ranked[1]
    enough = (best >= MIN_VOTES and best >= MIN_LEAD * second) or (
        best >= SHORT_MIN_VOTES and best >= SHORT_MIN_LEAD * second
    )
    if not enough or distinct[code] < MIN_DISTINCT_WORDS or best < MIN_VOTE_SHARE * words.total():
        return None
    return code


def _script_language(sample: str) -> str | None:
    letters = len(_LETTER.findall(sample))
    if not letters:
        return None
    share = {code: len(pattern.findall(sample)) / letters for code, pattern in _SCRIPT_RE.items()}
    if share["ja"] + share["zh"] >= MIN_SCRIPT_SHARE:
        # Japanese mixes kana into Han text; Chinese has none
        return "ja" if share["ja"] >= MIN_KANA_SHARE else "zh"
    return next((code for code, value in share.items() if value >= MIN_SCRIPT_SHARE), None)


def language_name(code: str) -> str:
    """'fr' → 'French'."""
    if code in OTHER_LANGUAGES:
        return OTHER_LANGUAGES[code]
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


def cjk_terms(text: str, letters: bool = False) -> list[str]:
    """Overlapping pairs of letters of every CJK run ('東京都' → '東京', '京都'); a one-letter run stays whole.
    With `letters` (for the index), every letter of a longer run as well ('東', '京', '都').

    Chinese and Japanese write no spaces, so a word tokenizer sees a whole sentence as one token; indexing
    pairs makes any word of two or more letters findable, the approach of Lucene's CJK analyzer. Many words are
    one letter (雨 rain, 山 mountain, 猫 cat) and sit inside runs: the letters are indexed too (Lucene's
    `outputUnigrams`), and a query searches a lone letter as itself and a longer run by its pairs only, which
    are the more selective terms."""
    terms: list[str] = []
    for run in CJK_RUN.findall(text):
        if len(run) == 1:
            terms.append(run)
            continue
        terms.extend(run[i : i + 2] for i in range(len(run) - 1))
        if letters:
            terms.extend(run)
    return terms
