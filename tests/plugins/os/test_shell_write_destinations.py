"""Issue 29, class 4: a destructive write is judged on every destination it has — the
option-attached ones (`-C /`, `--directory=/`, `-t /usr`, `-d /`, `of=`), the one a link
made earlier in the line leads to, and `~user` homes — and never passes as ordinary. The
unrecoverable ones are refused before the gate, level 5 included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from atomic_agent.plugins.os.shell.guard_records import DANGEROUS, HARDLINE, ORDINARY
from atomic_agent.plugins.os.shell.shell_guard import guard_scope, inspect_argv, inspect_line
from tests.plugins.os.fs_kit import FsWorld
from tests.plugins.os.shell_kit import shell, shell_world

REFUSED = [
    "truncate -s 0 /etc/passwd", "truncate --size=0 /etc/shadow", "truncate -s0 /usr/bin/python3",
    "cd /etc && truncate -s 0 passwd", "shred -u /etc/passwd", "fallocate -p -o 0 -l 1M /usr/lib/libc.so.6",
    "dd if=/dev/zero of=/etc/passwd", "rsync -a --delete src/ /", "rsync -a --delete src/ /usr/",
    "rsync -av --delete-after ./empty/ /etc", "rsync --delete -r x/ ~", "tar -C / -xf a.tgz", "tar -xzf a.tgz -C /",
    "tar -xf a.tgz --directory=/", "tar -xf a.tgz --directory /usr", "tar xf a.tgz -C/etc", "bsdtar -xf a -C /boot",
    "unzip -d / a.zip", "unzip a.zip -d /usr", "unzip -o a.zip -d/", "7z x a.7z -o/", "cpio -i -D / < a.cpio",
    "mv -t /tmp/x /usr", "mv --target-directory=/tmp/x /etc", "mv -t/tmp/x /bin", "rm -rf ~root", "rm -rf ~root/",
    "rm -rf /home/someone", "rm -rf ~root/../home/x", "ln -s /dev/sda x && dd if=/dev/zero of=x",
    "ln -sf /dev/nvme0n1 out; cat img > out", "ln -s /dev/sda d && cp img d", "ln -s / r && rm -rf r/",
    "ln -s /dev/sdb y; tee y < img", "sh -c 'tar -C / -xf a.tgz'", "sudo rsync -a --delete x/ /usr/",
    "cp img -t /dev/sda", "sort -o /dev/sda data", "curl -o /dev/sda https://x.example/img",
]
ASKED = ["tar -C ~ -xf a.tgz", "unzip -d ~ a.zip", "echo x > /etc/hosts", "cp x /etc/cron.d/job"]
ORDINARY_LINES = ["tar -C build -xf a.tgz", "unzip -d out a.zip", "rsync -a --delete src/ build/", "truncate -s 0 log.txt",
                  "mv -t dest a b", "tar czf out.tgz src", "ln -s src link && cat link/x"]


@pytest.fixture()
def scope(tmp_path: Path) -> Any:
    return guard_scope(str(tmp_path), str(tmp_path), "/home/agent", {"PATH": "/usr/bin:/bin", "HOME": "/home/agent"})


@pytest.mark.parametrize("line", REFUSED)
def test_an_unrecoverable_write_is_refused_wherever_its_destination_is_spelled(line: str, scope: Any):
    verdict = inspect_line(line, scope)
    assert verdict.kind == HARDLINE, f"{line!r}: {verdict.kind} ({verdict.reasons()})"


@pytest.mark.parametrize("argv", [["truncate", "-s", "0", "/etc/passwd"], ["tar", "-C", "/", "-xf", "a.tgz"],
                                  ["unzip", "-d", "/", "a.zip"], ["mv", "-t", "/tmp", "/usr"],
                                  ["rsync", "-a", "--delete", "x/", "/usr/"], ["rm", "-rf", "~root"]])
def test_a_direct_exec_destructive_write_is_refused(argv: list[str], scope: Any):
    assert inspect_argv(argv, scope).kind == HARDLINE


@pytest.mark.parametrize("line", ASKED)
def test_a_wide_or_system_write_is_at_least_dangerous(line: str, scope: Any):
    assert inspect_line(line, scope).kind in (DANGEROUS, HARDLINE)


@pytest.mark.parametrize("line", ORDINARY_LINES)
def test_the_same_commands_inside_the_workspace_stay_ordinary(line: str, scope: Any):
    verdict = inspect_line(line, scope)
    assert verdict.kind == ORDINARY, f"{line!r}: {verdict.kind} ({verdict.reasons()})"


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: Any) -> FsWorld:
    return shell_world(tmp_path, monkeypatch, level=5)


@pytest.mark.parametrize("line", ["rm -rf ~root", "truncate -s 0 /etc/passwd", "tar -C / -xf a.tgz",
                                  "rsync -a --delete x/ /usr/", "mv -t /tmp /usr"])
async def test_at_level_5_a_destructive_write_never_reaches_the_gate(world: FsWorld, line: str):
    outcome = await shell(world, line)
    assert outcome.blocked and outcome.asked == () and not outcome.ran, outcome
