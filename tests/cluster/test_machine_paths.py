"""The listing the cluster test compares /etc/slurm and the other system paths by (tests/cluster/machine_paths.py)
sees every kind of change a set-up makes: a rewrite, a chmod, a file made or removed, a path that appears."""
import os

from machine_paths import differences, snapshot


def test_machine_paths_sees_every_change_a_setup_makes(tmp_path):
    etc, absent = tmp_path / "etc", tmp_path / "run"
    etc.mkdir()
    (etc / "slurm.conf").write_text("ClusterName=site\n")
    (etc / "slurmdbd.conf").write_text("SlurmUser=slurm\n")
    (etc / "plugstack.conf").write_text("")
    (etc / "slurmdbd.conf").chmod(0o644)
    paths = (str(etc), str(absent))
    before = snapshot(paths)
    assert differences(before, snapshot(paths)) == []  # a second look at an untouched machine finds nothing

    stat = (etc / "slurm.conf").stat()
    (etc / "slurm.conf").write_text("ClusterName=test\n")  # same size, same times: only the content differs
    os.utime(etc / "slurm.conf", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    (etc / "slurmdbd.conf").chmod(0o600)
    (etc / "plugstack.conf").unlink()
    (etc / "cgroup.conf").write_text("")
    absent.mkdir()
    found = "\n".join(differences(before, snapshot(paths)))
    assert f"{etc}/slurm.conf: content " in found
    assert f"{etc}/slurmdbd.conf: mode 420 -> 384" in found
    assert f"{etc}/plugstack.conf: removed" in found and f"{etc}/cgroup.conf: made" in found
    assert f"{absent}: made" in found
