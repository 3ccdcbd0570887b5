"""The shared data folders a run reads (WattBot's, the retrieval suite's), and whether they are there."""

from __future__ import annotations

from pathlib import Path

from pipeline.config_schema import ConfigError, ConfigTree


def data_folders(cfg: ConfigTree) -> dict[str, str]:
    """The shared data folders the grid reads, by config key: WattBot's, and the suite's when configured."""
    folders = {"wattbot.dir": cfg["wattbot"]["dir"]}
    if cfg.get("suite") and cfg["suite"].get("datasets"):
        folders["suite.root"] = cfg["suite"]["root"]
    return folders


def retrieval_root(cfg: ConfigTree) -> str:
    """The retrieval suite's data folder: ``suite.root``, else ``<data_root>/retrieval`` (where SproutRAG's
    head training reads its datasets when no suite is configured)."""
    return str((cfg.get("suite") or {}).get("root", f"{cfg['data_root']}/retrieval"))


def missing_data(cfg: ConfigTree) -> list[str]:
    """The keys of :func:`data_folders` whose folder is not there."""
    return [key for key, folder in data_folders(cfg).items() if not Path(folder).is_dir()]


def wattbot_present(cfg: ConfigTree) -> bool:
    """WattBot's data folder is there (without it, a config with corpora runs only them)."""
    return "wattbot.dir" not in missing_data(cfg)


def suite_present(cfg: ConfigTree) -> bool:
    return "suite.root" not in missing_data(cfg)


def check_paths(cfg: ConfigTree) -> list[str]:
    """The data folders a run reads exist: a wrong data_root is one clear line before any job starts,
    not a failure deep inside the DAG. Kept out of ``validate`` so configs can be checked anywhere.

    With ``corpora`` configured, a missing WattBot or suite folder is no error: that part of the grid is
    left out of the DAG (its targets, the run's summary of it) and the returned notices say so, so a user
    without the shared data runs their own documents. Without corpora it is an error, as before."""
    notices = []
    for key in missing_data(cfg):
        folder = data_folders(cfg)[key]
        if not cfg.get("corpora"):
            raise ConfigError(
                f"config key '{key}': folder {folder} not found (check data_root, now {cfg['data_root']})"
            )
        notices.append(
            f"note: config key '{key}': folder {folder} not found: its part of the grid is skipped, "
            f"the corpora ({', '.join(sorted(cfg['corpora']))}) run"
        )
    return notices
