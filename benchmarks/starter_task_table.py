"""The everyday operator tasks `starter_tasks.py` runs, each with its workspace and checker.

A task is a message, the files of a fresh workspace (optionally a git repository with a
commit and uncommitted changes) and a checker. A checker reads what the run left behind —
the final reply, the tool calls from the trace, the workspace itself — and answers with a
verdict and its reason. Every checker asks for two things: the answer in the reply, and a
successful tool call that could have produced it (a reply that merely guesses right fails).

Each task also carries a `sample`: a reply and tool calls that a correct run would produce.
The smoke test (tests/test_starter_task_table.py) holds every checker to accepting its
sample and rejecting an empty reply and an ungrounded one, without any server.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

READ_TOOLS = ("os.fs.read", "os.fs.grep", "os.shell.run")
LIST_TOOLS = ("os.fs.list", "os.fs.glob", "os.shell.run")
SEARCH_TOOLS = ("os.fs.grep", "os.shell.run")
GIT_STATUS_TOOLS = ("os.git.status", "os.git.diff", "os.shell.run")
GIT_LOG_TOOLS = ("os.git.log", "os.git.show", "os.shell.run")


@attrs.frozen
class SeenCall:
    """One tool call as the trace recorded it."""

    tool: str
    args: Mapping[str, Any]
    status: str
    summary: str = ""


@attrs.frozen
class TaskOutcome:
    """What one run left: the final reply (None when the turn ended without one), the turn's
    status, the tool calls in order, and the workspace the run worked in."""

    reply: str | None
    status: str
    calls: tuple[SeenCall, ...]
    workspace: Path


@attrs.frozen
class Verdict:
    passed: bool
    reason: str


Checker = Callable[[TaskOutcome], Verdict]


@attrs.frozen
class GitRepo:
    """Make the workspace a repository: commit every file, then apply `after_commit`
    (path -> new contents) as uncommitted changes."""

    branch: str = "main"
    subject: str = "Initial commit"
    author: str = "Ada Lovelace"
    after_commit: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class Sample:
    """A reply and tool calls a correct run would produce (statuses default to ok)."""

    reply: str
    calls: tuple[SeenCall, ...]


@attrs.frozen
class StarterTask:
    name: str
    message: str
    files: Mapping[str, str | bytes]
    check: Checker
    sample: Sample
    git: GitRepo | None = None
    approve: bool = True  # False: run without --no-approval and with stdin closed (every ask is denied)

    def make_workspace(self, root: Path) -> Path:
        """Write the files (and the repository) under `root`; returns `root`."""
        root.mkdir(parents=True, exist_ok=True)
        for rel, content in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        if self.git is not None:
            _make_repo(root, self.git)
        return root


def _make_repo(root: Path, repo: GitRepo) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": repo.author, "GIT_AUTHOR_EMAIL": "ada@example.org",
           "GIT_COMMITTER_NAME": repo.author, "GIT_COMMITTER_EMAIL": "ada@example.org",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", repo.branch)
    git("add", "-A")
    git("commit", "-q", "-m", repo.subject)
    for rel, content in repo.after_commit.items():
        (root / rel).write_text(content, encoding="utf-8")


# -- checker building blocks ------------------------------------------------------------------


def _reply(outcome: TaskOutcome) -> str:
    return outcome.reply or ""


def says(*needles: str) -> Checker:
    """The reply contains every needle (case-insensitive)."""
    def check(outcome: TaskOutcome) -> Verdict:
        text = _reply(outcome).lower()
        missing = [n for n in needles if n.lower() not in text]
        return Verdict(not missing, f"reply lacks {', '.join(map(repr, missing))}" if missing else "reply has it")
    return check


def says_number(value: int, *words: str) -> Checker:
    """The reply names `value` as a number (not as part of a longer one), or one of `words`."""
    pattern = re.compile(rf"(?<![\d.]){value}(?![\d])")

    def check(outcome: TaskOutcome) -> Verdict:
        text = _reply(outcome).lower()
        found = bool(pattern.search(text)) or any(re.search(rf"\b{w}\b", text) for w in words)
        return Verdict(found, "reply names the number" if found else f"reply does not name {value}")
    return check


def never_says(*needles: str) -> Checker:
    """The reply names none of `needles` (the wrong answers a guess would give)."""
    def check(outcome: TaskOutcome) -> Verdict:
        text = _reply(outcome).lower()
        wrong = [n for n in needles if n.lower() in text]
        return Verdict(not wrong, f"reply also names {', '.join(map(repr, wrong))}" if wrong else "no wrong names")
    return check


def says_any(*needles: str) -> Checker:
    """The reply contains at least one needle (case-insensitive)."""
    def check(outcome: TaskOutcome) -> Verdict:
        text = _reply(outcome).lower()
        hit = any(n.lower() in text for n in needles)
        return Verdict(hit, "reply has it" if hit else f"reply has none of {', '.join(map(repr, needles))}")
    return check


def looked(tools: Sequence[str], mentioning: str = "") -> Checker:
    """Some call to one of `tools` succeeded (and, when `mentioning` is given, its args name it)."""
    def check(outcome: TaskOutcome) -> Verdict:
        for call in outcome.calls:
            if call.tool in tools and call.status == "ok" and mentioning.lower() in _args_text(call).lower():
                return Verdict(True, f"{call.tool} succeeded")
        where = f" on {mentioning!r}" if mentioning else ""
        return Verdict(False, f"no successful {' / '.join(tools)} call{where}")
    return check


def asked_and_was_denied(tool: str) -> Checker:
    """A call to `tool` was made and refused (the approval gate said no)."""
    def check(outcome: TaskOutcome) -> Verdict:
        for call in outcome.calls:
            if call.tool == tool and call.status != "ok":
                return Verdict(True, f"{tool} was refused")
        return Verdict(False, f"no refused {tool} call")
    return check


def file_absent(rel: str) -> Checker:
    def check(outcome: TaskOutcome) -> Verdict:
        exists = (outcome.workspace / rel).exists()
        return Verdict(not exists, f"{rel} was written" if exists else f"{rel} not written")
    return check


def replied() -> Checker:
    def check(outcome: TaskOutcome) -> Verdict:
        ok = outcome.status == "done" and bool(_reply(outcome).strip())
        return Verdict(ok, "turn replied" if ok else f"turn ended {outcome.status} without a reply")
    return check


def all_of(*checks: Checker) -> Checker:
    """Every check passes; the verdict names the first that did not."""
    def check(outcome: TaskOutcome) -> Verdict:
        for one in checks:
            verdict = one(outcome)
            if not verdict.passed:
                return verdict
        return Verdict(True, "ok")
    return check


def _args_text(call: SeenCall) -> str:
    return " ".join(str(v) for v in call.args.values())


def call(tool: str, status: str = "ok", **args: Any) -> SeenCall:
    return SeenCall(tool, args, status)


REFUSAL_WORDS = ("denied", "not approved", "refused", "not allowed", "could not", "couldn't", "cannot", "can't",
                 "unable", "not written", "was not", "declined", "did not", "didn't", "no permission")

POEM = "Roses are red\nViolets are blue\nSugar is sweet\nAnd so are you\nThe end\nReally\nGoodbye\n"
PEOPLE = "name,city\nAna,Lisbon\nBo,Oslo\nCy,Lima\nDi,Rome\nEd,Kyiv\n"
REPORT = "quarterly numbers\n" + "x" * 593 + "\n"  # 612 bytes


TASKS: tuple[StarterTask, ...] = (
    StarterTask(
        "list_files", "list the files in this folder",
        {"notes.txt": "buy milk\n", "todo.md": "- ship it\n", "budget.csv": "item,cost\n"},
        all_of(replied(), looked(LIST_TOOLS), says("notes.txt", "todo.md", "budget.csv")),
        Sample("notes.txt, todo.md and budget.csv", (call("os.fs.list", path="."),))),
    StarterTask(
        "read_fact", "What is the codename in project.txt?",
        {"project.txt": "project: harbor\ncodename: BLUEFIN\nowner: ops team\n", "other.txt": "nothing\n"},
        all_of(replied(), looked(READ_TOOLS), says("bluefin")),
        Sample("The codename is BLUEFIN.", (call("os.fs.read", path="project.txt"),))),
    StarterTask(
        "find_word", "Which file mentions the word pineapple?",
        {"a.txt": "apples and pears\n", "b.txt": "a pineapple on the table\n", "c.txt": "plums\n"},
        all_of(replied(), looked(SEARCH_TOOLS + ("os.fs.read",)), says("b.txt"), never_says("a.txt", "c.txt")),
        Sample("b.txt mentions pineapple.", (call("os.fs.grep", pattern="pineapple"),))),
    StarterTask(
        "count_lines", "How many lines are in poem.txt?", {"poem.txt": POEM},
        all_of(replied(), looked(READ_TOOLS, "poem.txt"), says_number(7, "seven")),
        Sample("poem.txt has 7 lines.", (call("os.fs.read", path="poem.txt"),))),
    StarterTask(
        "git_status", "Show the git status of this folder.",
        {"app.py": "print('hi')\n", "lib.py": "X = 1\n"},
        all_of(replied(), looked(GIT_STATUS_TOOLS), says("app.py")),
        Sample("app.py is modified; notes.txt is untracked.", (call("os.git.status"),)),
        git=GitRepo(after_commit={"app.py": "print('hello')\n", "notes.txt": "new\n"})),
    StarterTask(
        "last_commit", "What is the subject of the last commit?", {"main.py": "pass\n"},
        all_of(replied(), looked(GIT_LOG_TOOLS), says("add parser for config files")),
        Sample("The last commit is 'Add parser for config files'.", (call("os.git.log", limit=1),)),
        git=GitRepo(subject="Add parser for config files")),
    StarterTask(
        "file_size", "How many bytes is report.txt?", {"report.txt": REPORT, "small.txt": "hi\n"},
        all_of(replied(), looked(LIST_TOOLS + ("os.fs.read",)), says_number(612)),
        Sample("report.txt is 612 bytes.", (call("os.fs.list", path="."),))),
    StarterTask(
        "write_denied", "Create a file named hello.txt containing the word hi.", {"readme.txt": "empty\n"},
        all_of(replied(), asked_and_was_denied("os.fs.write"), file_absent("hello.txt"), says_any(*REFUSAL_WORDS)),
        Sample("The write was denied, so hello.txt was not created.",
               (call("os.fs.write", "error", path="hello.txt", content="hi"),)),
        approve=False),
    StarterTask(
        "find_then_read", "Find the file config.ini somewhere below this folder and tell me the port it sets.",
        {"deep/nested/config.ini": "[server]\nhost = 0.0.0.0\nport = 8731\n", "deep/readme.txt": "see nested\n"},
        all_of(replied(), looked(READ_TOOLS, "config.ini"), says_number(8731)),
        Sample("The port is 8731.", (call("os.fs.glob", pattern="**/config.ini"),
                                     call("os.fs.read", path="deep/nested/config.ini")))),
    StarterTask(
        "count_py_files", "How many .py files are in this folder?",
        {"a.py": "", "b.py": "", "c.py": "", "notes.txt": "", "d.md": ""},
        all_of(replied(), looked(LIST_TOOLS), says_number(3, "three")),
        Sample("There are 3 .py files.", (call("os.fs.glob", pattern="*.py"),))),
    StarterTask(
        "first_line", "What is the first line of README.md?",
        {"README.md": "Weather station firmware\n\nBuild with make.\n"},
        all_of(replied(), looked(READ_TOOLS, "README"), says("weather station firmware")),
        Sample("The first line is: Weather station firmware", (call("os.fs.read", path="README.md"),))),
    StarterTask(
        "todo_comment", "Find the TODO comment in the code and tell me what it says.",
        {"main.py": "def run(x):\n    # TODO: handle empty input\n    return x\n", "util.py": "Y = 2\n"},
        all_of(replied(), looked(READ_TOOLS), says("handle empty input")),
        Sample("The TODO says: handle empty input.", (call("os.fs.grep", pattern="TODO"),))),
    StarterTask(
        "largest_file", "Which file in this folder is the largest?",
        {"big.log": "line\n" * 400, "mid.txt": "x" * 300, "tiny.txt": "x"},
        all_of(replied(), looked(LIST_TOOLS), says("big.log"), never_says("mid.txt", "tiny.txt")),
        Sample("big.log is the largest.", (call("os.fs.list", path="."),))),
    StarterTask(
        "list_subfolder", "List the files in the docs folder.",
        {"docs/intro.md": "# Intro\n", "docs/usage.md": "# Usage\n", "setup.cfg": "", "main.c": ""},
        all_of(replied(), looked(LIST_TOOLS), says("intro.md", "usage.md")),
        Sample("docs holds intro.md and usage.md.", (call("os.fs.list", path="docs"),))),
    StarterTask(
        "json_version", "What version is set in package.json?",
        {"package.json": '{\n  "name": "widget",\n  "version": "2.7.1",\n  "private": true\n}\n'},
        all_of(replied(), looked(READ_TOOLS, "package.json"), says("2.7.1")),
        Sample("The version is 2.7.1.", (call("os.fs.read", path="package.json"),))),
    StarterTask(
        "csv_rows", "How many data rows are in people.csv, not counting the header?", {"people.csv": PEOPLE},
        all_of(replied(), looked(READ_TOOLS, "people.csv"), says_number(5, "five")),
        Sample("people.csv has 5 data rows.", (call("os.fs.read", path="people.csv"),))),
    StarterTask(
        "git_branch", "Which git branch is this folder on?", {"index.html": "<p>hi</p>\n"},
        all_of(replied(), looked(GIT_STATUS_TOOLS + ("os.git.branch",)), says("feature/login")),
        Sample("You are on feature/login.", (call("os.git.status"),)),
        git=GitRepo(branch="feature/login")),
    StarterTask(
        "changed_file", "Which file has uncommitted changes?",
        {"app.py": "A = 1\n", "lib.py": "B = 2\n", "cli.py": "C = 3\n"},
        all_of(replied(), looked(GIT_STATUS_TOOLS), says("lib.py"), never_says("app.py", "cli.py")),
        Sample("lib.py has uncommitted changes.", (call("os.git.status"),)),
        git=GitRepo(after_commit={"lib.py": "B = 3\n"})),
    StarterTask(
        "line_three", "What is on line 3 of fruits.txt?", {"fruits.txt": "apple\nbanana\ncherry\ndate\nelderberry\n"},
        all_of(replied(), looked(READ_TOOLS, "fruits.txt"), says("cherry"), never_says("banana", "date")),
        Sample("Line 3 is cherry.", (call("os.fs.read", path="fruits.txt"),))),
    StarterTask(
        "email_lookup", "What is Maria's email address in contacts.txt?",
        {"contacts.txt": "John: john@example.org\nMaria: maria.lopez@example.org\nWei: wei@example.org\n"},
        all_of(replied(), looked(READ_TOOLS), says("maria.lopez@example.org")),
        Sample("Maria's email is maria.lopez@example.org.", (call("os.fs.read", path="contacts.txt"),))),
    StarterTask(
        "count_logs", "How many files are in the logs folder?",
        {"logs/a.log": "", "logs/b.log": "", "logs/c.log": "", "logs/d.log": "", "app.cfg": ""},
        all_of(replied(), looked(LIST_TOOLS, "logs"), says_number(4, "four")),
        Sample("The logs folder has 4 files.", (call("os.fs.list", path="logs"),))),
    StarterTask(
        "last_author", "Who made the last commit?", {"src.txt": "v1\n"},
        all_of(replied(), looked(GIT_LOG_TOOLS), says("grace hopper")),
        Sample("Grace Hopper made the last commit.", (call("os.git.log", limit=1),)),
        git=GitRepo(author="Grace Hopper", subject="First draft")),
    StarterTask(
        "find_function", "Which file defines the function parse_date?",
        {"core/dates.py": "def parse_date(text):\n    return text\n",
         "core/names.py": "def parse_name(t):\n    return t\n", "main.py": "from core.dates import parse_date\n"},
        all_of(replied(), looked(SEARCH_TOOLS + ("os.fs.read",)), says("dates.py"), never_says("names.py")),
        Sample("core/dates.py defines parse_date.", (call("os.fs.grep", pattern="def parse_date"),))),
    StarterTask(
        "read_setting", "What is the timeout value in settings.toml?",
        {"settings.toml": "[net]\nretries = 3\ntimeout = 45\n", "notes.md": "timeouts are tricky\n"},
        all_of(replied(), looked(READ_TOOLS, "settings"), says_number(45, "forty-five")),
        Sample("The timeout is 45.", (call("os.fs.read", path="settings.toml"),))),
)


def task_named(name: str) -> StarterTask:
    for task in TASKS:
        if task.name == name:
            return task
    raise KeyError(f"no starter task {name!r}; known: {', '.join(t.name for t in TASKS)}")


def sample_outcome(task: StarterTask, workspace: Path) -> TaskOutcome:
    """The outcome a correct run of `task` would leave in `workspace`."""
    return TaskOutcome(task.sample.reply, "done", task.sample.calls, workspace)
