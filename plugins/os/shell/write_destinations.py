"""Where a simple command writes: every destination, not only its last argument.

A destination can hide in an option (`tar -C / -x`, `--directory=/`, `cp -t/usr`,
`unzip -d /`, `wget -P dir`, `sort -o file`, `gcc -o bin`), in a `key=value` operand
(`dd of=`), in the operands of an in-place editor (`sed -i`, `perl -pi`, `truncate`), or in
a redirection. The rules judge each destination; being too generous here only costs a
question, missing one lets a write through unseen.
"""

from __future__ import annotations

import re

import attrs

from .command_segments import WRITE_REDIRECTS, Segment
from .command_unwrap import SimpleCommand

# options that take the output file or directory as their value, for any program
_OUTPUT_OPTS = frozenset({"-o", "--output", "--out", "--outfile", "--output-file", "--output-document",
                          "--target-directory", "--directory-prefix", "--directory", "--dest", "--destination",
                          "--target", "--prefix", "--root", "--log-file", "--outdir", "--out-dir"})
_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync", "scp", "link", "gcp", "gmv"})
_TARS = frozenset({"tar", "gtar", "bsdtar"})
_UNPACKERS = frozenset({"unzip", "7z", "7za", "7zr", "unrar", "cpio", "ar", "bsdcpio", "pax"})
_SAME_FILE_WRITERS = frozenset({"truncate", "shred", "touch", "fallocate", "tee", "sponge", "chattr", "setfattr"})
_FLAG_VALUE = {"-s", "--size", "-r", "--reference", "-l", "--length", "-n", "--iterations", "-o", "--offset"}  # truncate/shred/fallocate values


@attrs.frozen
class Destinations:
    paths: tuple[str, ...]  # every file or directory the command may write
    extract_dirs: tuple[str, ...] = ()  # directories an archive is unpacked into (many files land there)
    mirrored_with_delete: tuple[str, ...] = ()  # rsync destinations that lose whatever the source lacks


def _option_values(args: tuple[str, ...], names: frozenset[str] | set[str], short: str = "") -> list[str]:
    """Values of `--name=V`, `--name V`, `-x V` and `-xV` (for each letter in `short`)."""
    found = []
    for index, arg in enumerate(args):
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name in names:
                if eq:
                    found.append(value)
                elif index + 1 < len(args):
                    found.append(args[index + 1])
        elif arg.startswith("-") and len(arg) >= 2:
            if arg in names and index + 1 < len(args):
                found.append(args[index + 1])
            elif arg[1] in short and len(arg) > 2:
                found.append(arg[2:].lstrip("="))
    return found


def _operands(args: tuple[str, ...], valued: set[str] | frozenset[str] = frozenset()) -> list[str]:
    out, skip, rest = [], False, False
    for arg in args:
        if skip:
            skip = False
            continue
        if rest or not arg.startswith("-") or arg == "-":
            out.append(arg)
        elif arg == "--":
            rest = True
        elif arg in valued:
            skip = True
    return out


def _tar(cmd: SimpleCommand, cwd_word: str) -> tuple[list[str], list[str]]:
    args = cmd.args
    first = args[0] if args else ""
    letters = first.lstrip("-") if first and not first.startswith("--") else ""
    extracting = "x" in letters or any(a in ("-x", "--extract", "--get") or
                                       (a.startswith("-") and not a.startswith("--") and "x" in a) for a in args)
    creating = any(c in letters for c in "cru") or any(a in ("--create", "--append", "--update") for a in args)
    dirs = _option_values(args, {"-C", "--directory"}, "C")
    archive = _option_values(args, {"-f", "--file"}, "f")
    if letters and "f" in letters and not first.startswith("-") and len(args) > 1:
        archive.append(args[1])  # `tar czf out.tgz src`: the old-style f takes the next word
    paths = archive if creating else []
    extract = (dirs or [cwd_word]) if extracting else []
    return paths, extract


def _unpack(cmd: SimpleCommand, cwd_word: str) -> list[str]:
    if cmd.program == "unzip":
        return _option_values(cmd.args, {"-d"}, "d") or [cwd_word]
    if cmd.program.startswith("7z"):
        if not cmd.args or cmd.args[0] not in ("x", "e"):
            return []
        return [a[2:] for a in cmd.args if a.startswith("-o")] or [cwd_word]
    if cmd.program in ("cpio", "bsdcpio", "pax"):
        return _option_values(cmd.args, {"-D", "--directory"}, "D") or [cwd_word]
    return [cwd_word]


def _copier(cmd: SimpleCommand) -> list[str]:
    target_dir = _option_values(cmd.args, {"-t", "--target-directory"}, "t")
    if target_dir:
        return target_dir
    operands = _operands(cmd.args, {"-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group", "-e",
                                    "--rsh", "--backup-dir", "--exclude", "--include", "--filter", "-f"})
    return operands[-1:] if len(operands) >= 2 or cmd.program == "ln" else []


def _in_place(cmd: SimpleCommand) -> list[str]:
    args = cmd.args
    if cmd.program in ("sed", "gsed") and any(a.startswith("-i") or a.startswith("--in-place") or
                                              (a.startswith("-") and not a.startswith("--") and "i" in a[1:])
                                              for a in args):
        has_script_opt = any(a in ("-e", "--expression", "-f", "--file") for a in args)
        operands = _operands(args, {"-e", "--expression", "-f", "--file", "-l", "--line-length"})
        return operands if has_script_opt else operands[1:]
    if re.fullmatch(r"perl[\d.]*|ruby", cmd.program) and any(
            a.startswith("-") and not a.startswith("--") and "i" in a[1:].split("e")[0] for a in args):
        return _operands(args, {"-e", "-E", "-M", "-I"})
    if cmd.program in _SAME_FILE_WRITERS:
        return _operands(args, _FLAG_VALUE)
    if cmd.program == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    return []


def write_destinations(cmd: SimpleCommand, segment: Segment, cwd_word: str = ".") -> Destinations:
    """Every place `cmd` (with `segment`'s redirections) may write; relative words are
    returned as written (the caller resolves them against the effective cwd)."""
    paths = [t for op, t in segment.redirects if op in WRITE_REDIRECTS and t]
    extract: list[str] = []
    mirrored: list[str] = []
    name = cmd.program
    if name in _TARS:
        written, extract = _tar(cmd, cwd_word)
        paths += written
    elif name in _UNPACKERS:
        extract = _unpack(cmd, cwd_word)
    elif name in _COPIERS:
        dest = _copier(cmd)
        paths += dest
        if name == "rsync" and any(a.startswith("--delete") or a in ("--remove-source-files",) for a in cmd.args):
            mirrored += dest
    elif name in ("wget", "curl"):
        paths += _option_values(cmd.args, {"-O", "--output-document", "-P", "--directory-prefix", "-o", "--output"},
                                "OPo" if name == "wget" else "o")
    elif name == "git":
        paths += _git_config_files(cmd)
    paths += _in_place(cmd)
    paths += _option_values(cmd.args, _OUTPUT_OPTS)
    return Destinations(tuple(dict.fromkeys(p for p in paths if p)), tuple(dict.fromkeys(extract)),
                        tuple(dict.fromkeys(mirrored)))


def _git_config_files(cmd: SimpleCommand) -> list[str]:
    if "config" not in cmd.args:
        return []
    return _option_values(cmd.args, {"-f", "--file"}, "")
