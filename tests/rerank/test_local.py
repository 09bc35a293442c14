"""The local ONNX cross-encoder, on a tiny model built by the test (tiny_cross_encoder.py): loading both export
layouts, pair encoding, padded batches, the model's window, and a damaged model that must not break search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from mcp_docs.rerank.base import RerankError, RerankStage
from mcp_docs.rerank.local import LocalScorer, find_model_files

from .tiny_cross_encoder import write_cross_encoder

QUERY = "restore the backup drill"
TEXTS = ["install an agent", "monthly restore drill of the backup", "backup disks", "drill a hole"]


@pytest.mark.parametrize("layout", ["flat", "hf"])
def test_the_model_scores_each_pair_from_query_and_text_together(tmp_path: Path, layout: str) -> None:
    folder = write_cross_encoder(tmp_path / "model", [QUERY, *TEXTS], layout)
    scorer = LocalScorer(folder)
    scores = scorer.score(QUERY, TEXTS)
    # logits = words of the text found in the query (0, 4, 1, 1), through a sigmoid
    assert scores == pytest.approx([0.5, 0.98201379, 0.73105858, 0.73105858])
    assert scorer.score("install agent", TEXTS)[0] > scorer.score("install agent", TEXTS)[1]  # the query matters
    scorer.close()


def test_many_pairs_score_as_each_pair_alone(tmp_path: Path) -> None:
    texts = [" ".join(["backup"] * (i % 7) + ["restore"] * (i % 3) + ["filler"] * i) for i in range(20)]
    folder = write_cross_encoder(tmp_path / "model", [QUERY, *texts])
    scorer = LocalScorer(folder)
    together = scorer.score(QUERY, texts)
    alone = [scorer.score(QUERY, [t])[0] for t in texts]
    assert together == pytest.approx(alone)
    assert len(set(together)) > 3  # not one value for all
    scorer.close()


def test_text_past_the_models_window_is_not_read(tmp_path: Path) -> None:
    far = " ".join(["filler"] * 40 + ["backup"])  # the one matching word sits past a 16-token window
    near = "backup " + " ".join(["filler"] * 40)
    folder = write_cross_encoder(tmp_path / "model", [QUERY, far, near])
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 16}))
    scorer = LocalScorer(folder)
    assert scorer.max_chars == 64
    scores = scorer.score(QUERY, [far, near])
    assert scores[0] == pytest.approx(0.5) and scores[1] > 0.7
    scorer.close()
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 1e30}))  # a sentinel, not a size
    assert LocalScorer(folder).max_tokens == 512
    saved = Tokenizer.from_file(str(folder / "tokenizer.json"))
    saved.enable_truncation(max_length=16)
    saved.save(str(folder / "tokenizer.json"))  # then the window the tokenizer was saved with
    assert LocalScorer(folder).max_tokens == 16


def test_a_damaged_model_leaves_search_in_retrieval_order_with_one_sentence(tmp_path: Path) -> None:
    folder = write_cross_encoder(tmp_path / "model", [QUERY, *TEXTS])
    (folder / "model.onnx").write_bytes(b"\x08\x07garbage, not a protobuf graph" * 10)
    stage = RerankStage(LocalScorer(folder), top=30)
    outcome = stage.rerank(QUERY, TEXTS, str)
    assert not outcome.reranked
    note = outcome.note or ""
    assert note.startswith(f"Reranking skipped: the local reranker could not load its model from {folder} (")
    assert note.endswith("so results are in retrieval order (retried in 15 s).") and "\n" not in note
    assert stage.status()["health"] == "down"
    stage.close()


def test_a_model_with_other_inputs_is_refused_in_one_sentence(tmp_path: Path) -> None:
    folder = write_cross_encoder(tmp_path / "model", [QUERY, *TEXTS])
    model = (folder / "model.onnx").read_bytes()
    (folder / "model.onnx").write_bytes(model.replace(b"token_type_ids", b"pixel_values__"))
    with pytest.raises(RerankError, match=r"has model inputs \['input_ids', 'attention_mask', 'pixel_values__'\]"):
        LocalScorer(folder).score(QUERY, TEXTS)


def test_a_folder_without_the_export_files_is_named_with_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"has no model\.onnx and tokenizer\.json: point it at an ONNX cross-encoder"):
        find_model_files(tmp_path / "empty")
    folder = write_cross_encoder(tmp_path / "model", [QUERY])
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ValueError, match=r"has no tokenizer\.json:"):
        find_model_files(folder)
    with pytest.raises(ValueError, match="is not a folder"):
        find_model_files(tmp_path / "nowhere")
