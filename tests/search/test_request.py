"""The pipeline's first step: the contract's limit on max_results (once, with its note) and the depths derived."""

from __future__ import annotations

import pytest

from mcp_docs.errors import PathOutsideRoot
from mcp_docs.paths import Jail
from mcp_docs.scan import load_rules
from mcp_docs.search.request import MAX_SEARCH_RESULTS, clamp_max_results, limits, search_request


@pytest.mark.parametrize(("asked", "used"), [(0, 1), (-5, 1), (21, 20), (10**9, 20)])
def test_max_results_outside_the_contract_is_clamped_with_a_note(asked: int, used: int) -> None:
    value, note = clamp_max_results(asked)
    assert value == used
    assert note == f"max_results {asked} is out of range 1-{MAX_SEARCH_RESULTS}: used {used}."


@pytest.mark.parametrize("asked", [1, 5, 20])
def test_max_results_within_the_contract_is_kept_without_a_note(asked: int) -> None:
    assert clamp_max_results(asked) == (asked, None)


def test_each_side_ranks_eight_sections_per_document_between_50_and_2000() -> None:
    one = frozenset({"en"})
    assert limits(1, one).sections == 50
    assert limits(20, one).sections == 160
    assert limits(100, one).sections == 800  # the benchmarks ask for 100: taken as given
    assert limits(1000, one).sections == 2000


def test_several_languages_group_deeper_so_merged_translations_still_fill_the_list() -> None:
    assert limits(5, frozenset({"en"})).depth == 5
    assert not limits(5, frozenset({"en"})).several_languages
    assert limits(5, frozenset({"en", "fr"})).depth == 10
    assert limits(5, frozenset({"en", "fr", "de", "es", "it", "ja"})).depth == 20  # four times at most
    assert limits(5, frozenset({"en", "fr"})).several_languages


def test_a_request_normalises_its_folder_inside_the_root_and_drops_tags_that_name_nothing(tmp_path) -> None:
    (tmp_path / "guides" / "setup").mkdir(parents=True)
    jail = Jail(tmp_path, load_rules(tmp_path, (".md",)))
    request = search_request("q", 5, "keyword", "guides/setup/", ["#Project", "  ", "#", "notes"], jail.relative_folder)
    assert request.folder == "guides/setup"
    assert request.tags == ("project", "notes")
    assert search_request("q", 5, "keyword", None, None, jail.relative_folder).folder == ""
    with pytest.raises(PathOutsideRoot):
        search_request("q", 5, "keyword", "../elsewhere", None, jail.relative_folder)
