"""Typed specs and the schema as the one place of defaults and enumerations; what is hashed is unchanged."""
import json

import pytest
import yaml

from pipeline.config import ConfigError, full_schema, validate
from pipeline.config_schema import declared, declared_defaults
from pipeline.datasets.paths import REPO
from pipeline.answer.llm_answer import PROMPTS, LLMAnswerSpec
from pipeline.registry.answer_backends import variant_spec
from pipeline.llm_models import LLMSpec
from pipeline.specs import TREE_LEVELS, SproutSpec

@pytest.fixture()
def raw():
    return yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())


def test_every_default_is_declared_once_and_written_into_the_config(raw):
    cfg = validate(raw)
    assert "timeout_s" not in raw["llm"] and cfg["llm"]["timeout_s"] == declared_defaults(LLMSpec)["timeout_s"]
    assert cfg["sprout"]["window_tokens"] == declared_defaults(SproutSpec)["window_tokens"]
    assert cfg["indexes"]["bm25"]["levels"] == ["sentence", "paragraph"] and "chunk_tokens" not in cfg["indexes"]["hier"]
    # one kind of default: every declared one is written into the (hashed) config, the entry's own kind's alone
    assert "prompt" not in raw["answering"]["mock-llm"]
    assert cfg["answering"]["mock-llm"]["prompt"] == declared_defaults(LLMAnswerSpec)["prompt"] == "context_first"
    assert "prompt" not in cfg["answering"]["bm25-x"] and cfg["answering"]["bm25-x"]["extractive"]["max_hits"] == 15
    assert cfg["retrieval"]["bm25"]["level_fusion"] == "score" and "level_fusion" not in cfg["retrieval"]["hier-dense"]
    assert cfg["retrieval"]["hier-dense"]["context"]["dedup"] == "tree" and cfg["retrieval"]["bm25"]["rerank"] == "none"
    assert cfg["retrieval"]["bm25"]["planner"] == {"kind": "none", "n": 4}
    # one place: a changed declaration is what validation and the specs use
    k = declared(LLMSpec)["timeout_s"]
    object.__setattr__(k, "default", 77)
    try:
        assert validate(raw)["llm"]["timeout_s"] == 77 and LLMSpec.from_dict({}).timeout_s == 77
    finally:
        object.__setattr__(k, "default", 120)


def test_the_schema_is_generated_with_one_kind_of_default():
    """No hand-written schema: every key has its declaration's description, and no second kind of default."""
    schema = json.dumps(full_schema())
    assert "x-default" not in schema
    assert full_schema()["properties"]["suite"]["properties"]["ks"]["default"] == [1, 3, 5]

    def keys(node, path=""):
        for name, sub in (node.get("properties") or {}).items():
            yield f"{path}{name}", sub
            yield from keys(sub, f"{path}{name}.")
        if isinstance(node.get("additionalProperties"), dict):
            yield from keys(node["additionalProperties"], f"{path}*.")

    undocumented = [p for p, sub in keys(full_schema()) if not sub.get("description")]
    assert undocumented == []


def test_gateway_defaults_are_the_schemas(tmp_path):
    from pipeline.llm.gateway import LLMGateway

    gw = LLMGateway(tmp_path / "llm.sqlite")
    spec = LLMSpec.from_dict({})
    assert (gw.mode, gw.settings.timeout_s, gw.max_retries, gw.backoff_s) == (spec.mode, spec.timeout_s, spec.max_retries,
                                                                     spec.backoff_s) == ("live", 120, 3, 2.0)
    gw.close()


@pytest.mark.parametrize("where, key", [
    (lambda c: c["answering"]["mock-llm"].update(prompt="haiku"), "answering.mock-llm.prompt"),
    (lambda c: c["llm"].update(mode="dream"), "llm.mode"),
    (lambda c: c["embedding"].update(backend="word2vec"), "embedding.backend"),
    (lambda c: c["retrieval"]["bm25"].update(planner={"kind": "oracle"}), "retrieval.bm25.planner.kind"),
    (lambda c: c["indexes"]["bm25"].update(levels=["chapter"]), "indexes.bm25.levels.0"),
    (lambda c: c["answering"]["ens"]["vote"].update(tiebreak="coin"), "answering.ens.vote.tiebreak"),
])
def test_an_unknown_enum_value_is_one_line_naming_the_key(raw, where, key):
    where(raw)
    with pytest.raises(ConfigError) as err:
        validate(raw)
    message = str(err.value)
    assert message.startswith(f"config key '{key}': ") and "\n" not in message


# The code reads its enumerations from the schema (pipeline/specs.py), so comparing the two lists could
# not fail; these check that the code does what each listed value names, so a value added to the
# schema without its code (or code without its value) fails here.

def test_every_tree_level_is_one_the_tree_builder_makes_root_first():
    from pipeline.parse.text import parse_text

    tree = parse_text("1 Intro\n\nEnergy use of training. It is large.", "d", "T")
    chain, node = [], tree.root
    while True:
        chain.append(node.level)
        if not node.children:
            break
        node = tree.nodes[node.children[0]]
    assert tuple(chain) == TREE_LEVELS


def test_every_prompt_is_a_template_file_and_every_template_a_prompt():
    folder = REPO / "pipeline" / "answer" / "prompts"
    assert {p.stem for p in folder.glob("*.txt")} == set(PROMPTS)


def test_every_vote_mode_is_its_own_rule():
    from pipeline.answer.record import Answer
    from pipeline.answer.vote import VOTE_MODES, VoteConfig, vote

    def ans(value, refs):
        return Answer(value, value, refs)

    # value 5 wins 3:2; the references split so that every mode picks differently
    answers = [ans("5", ["a", "b"]), ans("7", ["c"]), ans("7", ["c"]), ans("5", ["a"]), ans("5", ["b", "a", "d"])]
    voted = {m: vote(answers, VoteConfig(m)) for m in VOTE_MODES}
    got = {m: (a.answer_value, a.ref_id) for m, a in voted.items()}
    assert got == {
        "independent": ("5", ["c"]),  # majority value, majority references, each on its own
        "ref_priority": ("7", ["c"]),  # majority references first, then the value among them
        "answer_priority": ("5", ["a", "b"]),  # majority value, then the references of its voters
        "union": ("5", ["a", "b", "d"]),
        "intersection": ("5", ["a"]),
    }


def test_every_dedup_mode_is_its_own_rule():
    from pipeline.retrieve.expand import Snippet, dedup_snippets
    from pipeline.specs import DEDUP_MODES

    def snip(node_id):
        return Snippet(node_id, "a", "paragraph", "text", 1, "match", node_id)

    snippets = [snip("a:s1"), snip("a:s1:p1"), snip("a:s1")]  # a descendant, then a repeat
    got = {m: [s.node_id for s in dedup_snippets(snippets, m)] for m in DEDUP_MODES}
    assert got == {"none": ["a:s1", "a:s1:p1", "a:s1"], "node_id": ["a:s1", "a:s1:p1"], "tree": ["a:s1"]}
