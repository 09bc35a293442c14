"""Which local model embeds an index: decided once, from the collection's language mix, and changed only when
that mix clearly changed.

A change of model re-embeds everything (vectors of two models are never mixed), hours on a large vault. The plain
rule (embedders.local_model: e5 once 5 % of the documents, and at least 3, are not English) is right for a first
decision but flips a 40-note English vault to e5 when three one-line French notes arrive, and back when they go.
So the mix the model was chosen for is kept with the vectors (`LanguageMix`, in the store's meta), and the model
changes only when the plain rule wants the other one *and* the mix moved clearly away from the one it was chosen
for: by CLEAR_CHANGE_DOCS documents in another language and CLEAR_CHANGE_SHARE of both the documents and the text.
Text counts as well as files: a one-line note weighs like a line, not like a page.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Literal

from ..embedders import E5, MINILM, MULTILINGUAL_SHARE, local_model
from ..settings import Settings

# How far the mix must move from the one the model was chosen for before the model changes (both directions):
# this many more (or fewer) documents not in English, and this share of the documents and of the text.
CLEAR_CHANGE_DOCS = 10
CLEAR_CHANGE_SHARE = 0.15
MAIN = "en"  # MiniLM's language: a document in any other one counts towards e5


@dataclass(frozen=True)
class LanguageMix:
    """How much of a collection is not English: in documents and in estimated tokens of text."""

    documents: int
    other_documents: int
    tokens: int
    other_tokens: int

    @classmethod
    def of(cls, documents: dict[str, int], tokens: dict[str, int]) -> LanguageMix:
        """From the catalog's documents and tokens per language code."""
        return cls(
            documents=sum(documents.values()),
            other_documents=sum(n for lang, n in documents.items() if lang != MAIN),
            tokens=sum(tokens.values()),
            other_tokens=sum(n for lang, n in tokens.items() if lang != MAIN),
        )

    @property
    def document_share(self) -> float:
        return self.other_documents / self.documents if self.documents else 0.0

    @property
    def text_share(self) -> float:
        return self.other_tokens / self.tokens if self.tokens else 0.0

    def describe(self) -> str:
        """'43 documents, 7 % of them (1 % of the text) not in English'."""
        return (
            f"{self.documents} documents, {round(100 * self.document_share)} % of them "
            f"({round(100 * self.text_share)} % of the text) not in English"
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> LanguageMix | None:
        """The mix stored with the vectors; None when none is (or it is unreadable: decided again)."""
        if not text:
            return None
        try:
            data = json.loads(text)
            return cls(**{k: int(data[k]) for k in ("documents", "other_documents", "tokens", "other_tokens")})
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True)
class Choice:
    """What to do with an index's model: keep it, or embed with `model` from now on; `why` says so in a sentence."""

    action: Literal["keep", "decide", "change"]
    model: str | None
    why: str
    record: bool  # store `mix` with the vectors as the mix the model is chosen for


def plain_rule(settings: Settings, mix: LanguageMix) -> str | None:
    """The model this mix calls for with no history (None when the settings name a model or are not local):
    embedders.local_model on the documents, and the text must be at least as mixed."""
    counts = {MAIN: mix.documents - mix.other_documents, "other": mix.other_documents}
    model = local_model(settings, counts, None)
    if model == E5 and mix.text_share < MULTILINGUAL_SHARE:
        return MINILM
    return model


def clearly_changed(then: LanguageMix, now: LanguageMix) -> bool:
    """The mix moved far from the one the model was chosen for: in documents, in share of documents and of text."""
    return (
        abs(now.other_documents - then.other_documents) >= CLEAR_CHANGE_DOCS
        and abs(now.document_share - then.document_share) >= CLEAR_CHANGE_SHARE
        and abs(now.text_share - then.text_share) >= CLEAR_CHANGE_SHARE
    )


def choose(
    settings: Settings, mix: LanguageMix, current: str | None, chosen_for: LanguageMix | None, has_vectors: bool
) -> Choice:
    """The model for an index whose vectors are `current`'s (embedders.model_name), chosen for `chosen_for`
    (None: never decided), now that the collection is `mix`."""
    wanted = plain_rule(settings, mix)
    if wanted is None or current is None or mix.documents == 0:
        return Choice("keep", None, "", record=False)  # a named model, an endpoint, or nothing indexed yet
    if chosen_for is None:
        if has_vectors:  # an index embedded before the choice was kept: its vectors stay, for the mix of today
            return Choice("keep", None, f"{current} kept for this index ({mix.describe()})", record=True)
        return Choice("decide", wanted, f"{wanted} chosen for this index ({mix.describe()})", record=True)
    if wanted == current:
        return Choice("keep", None, "", record=False)
    if not clearly_changed(chosen_for, mix):
        return Choice(
            "keep",
            None,
            f"{current} kept: the collection ({mix.describe()}) has not moved far enough from the mix it was "
            f"chosen for ({chosen_for.describe()}) to embed everything again with {wanted}",
            record=False,
        )
    return Choice(
        "change",
        wanted,
        f"the collection changed from {chosen_for.describe()} to {mix.describe()}: embedding with {wanted} "
        f"instead of {current}",
        record=True,
    )
