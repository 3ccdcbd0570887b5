"""The set-up's installer (devtools/install.py): uv gets pip's indexes, find-links, constraints and
certificate bundle, the later source of a key winning as in pip; without uv, pip installs."""

from pathlib import Path

from devtools import install

# `pip config list` as this kind of machine prints it: files first, then the PIP_* variables (:env:).
LISTING = """\
:env:.cert='/etc/ssl/certs/ca-certificates.crt'
:env:.find-links='/opt/wheels'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.find-links='/srv/old-wheels'
:env:.find-links='/opt/wheels'
"""


def test_pip_settings_split_values_and_let_the_later_line_win():
    settings = install.pip_settings(LISTING)
    assert settings["extra-index-url"] == ["file:///opt/pypi/simple", "file:///opt/pypi-more/simple"]
    assert settings["find-links"] == ["/opt/wheels"]
    assert settings["constraint"] == ["/etc/xdg/pip/constraints.txt"]


def test_uv_gets_every_index_find_link_and_constraint_with_pips_best_match():
    options = install.uv_options(install.pip_settings(LISTING))
    assert options[:2] == ["--index-strategy", "unsafe-best-match"]
    pairs = list(zip(options[2::2], options[3::2]))
    assert pairs == [
        ("--extra-index-url", "file:///opt/pypi/simple"),
        ("--extra-index-url", "file:///opt/pypi-more/simple"),
        ("--find-links", "/opt/wheels"),
        ("-c", "/etc/xdg/pip/constraints.txt"),
    ]
    assert install.uv_options(install.pip_settings("global.no-index='true'\n"))[-1] == "--no-index"
    assert install.uv_options({}) == ["--index-strategy", "unsafe-best-match"]


def test_uv_command_installs_into_the_venv_compiled_with_pips_certificates(monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    cmd, env = install.uv_command(Path("uv"), Path("v/bin/python"), ["-c", "lock", "torch==2.13.0"], LISTING)
    assert cmd[:7] == ["uv", "pip", "install", "--quiet", "--python", "v/bin/python", "--compile-bytecode"]
    assert cmd[-3:] == ["-c", "lock", "torch==2.13.0"]
    assert env["SSL_CERT_FILE"] == "/etc/ssl/certs/ca-certificates.crt"


def test_pip_installs_where_uv_cannot_be_had_or_fails(monkeypatch, tmp_path):
    calls: list[list[str]] = []

    def run(cmd, **kwargs):
        calls.append(list(cmd))
        return type("Done", (), {"returncode": 1, "stdout": ""})()

    monkeypatch.setattr(install.subprocess, "run", run)
    install.install(tmp_path, ["-e", "."], installer="pip")
    assert calls == [[str(tmp_path / "bin" / "python"), "-m", "pip", "install", "--quiet", "-e", "."]]
    calls.clear()
    install.install(tmp_path, ["-e", "."])  # uv's own install fails: pip
    assert "--target" in calls[0] and install.UV in calls[0]
    assert calls[-1][1:] == ["-m", "pip", "install", "--quiet", "-e", "."]
