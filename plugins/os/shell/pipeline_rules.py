"""What a pipeline feeds an interpreter: decoded bytes, a download, or text the guard can read.

`echo cm0gLXJmIC8= | base64 -d | sh` runs whatever the decoder produces, so no rule on
the visible words can judge it: decode-and-execute is refused at every level (it has no
honest use an operator could not type themselves). A download piped into a shell
(`curl … | sh`) and any other program's output run as code cannot be judged either: they
ask at every level, 5 included. Literal text piped into a shell (`echo 'rm -rf /' | sh`,
`printf '\\x72\\x6d …' | sh`) is decoded and judged like any command line. The same holds
for command substitutions that become code (`sh -c "$(… | base64 -d)"`, `eval "$(curl …)"`)
and for inline code that decodes and executes inside the interpreter
(`python3 -c "exec(base64.b64decode(…))"`).
"""

from __future__ import annotations

import codecs
import re

from .command_segments import ParsedLine, split_segments
from .command_unwrap import SimpleCommand, unwrap
from .guard_records import RuleHit

DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-request", "wget2", "nc",
                         "ncat", "socat", "telnet", "openssl-s_client"})
_DECOMPRESSORS = frozenset({"gunzip", "zcat", "bzcat", "bunzip2", "xzcat", "unxz", "unzstd", "zstdcat", "lz4cat",
                            "uncompress", "unlzma", "lzcat", "brotli", "zless"})
_COMPRESSORS_WITH_D = frozenset({"gzip", "bzip2", "xz", "zstd", "lz4", "lzma", "pigz", "pbzip2"})
_ALWAYS_DECODE = frozenset({"uudecode", "rev", "tr", "base32hex"})
_INLINE_DECODE = re.compile(r"b64decode|b32decode|a85decode|base64\.decode|decode64|decode_base64|atob\s*\(|"
                            r"base64_decode|fromhex|unhexlify|codecs\.decode|Buffer\.from\([^)]*['\"](?:base64|hex)|"
                            r"unpack\s*\(\s*['\"][mH]|zlib\.decompress|gzip\.decompress|rot13|rot_13", re.IGNORECASE)
_INLINE_EXEC = re.compile(r"\bexec\b|\beval\b|\bsystem\b|popen|subprocess|spawn|child_process|`|\bFunction\s*\(|"
                          r"os\.exec|pty\.|\bqx\b|IO\.popen|Kernel\.", re.IGNORECASE)
_INLINE_FORK_BOMB = re.compile(r"fork\s+while\s+fork|while\s*(?:\(?\s*(?:1|true|True)\s*\)?)\s*[:{]?\s*[^;\n]{0,40}"
                               r"fork\s*\(|loop\s*\{\s*fork|(?:os\.)?fork\(\)\s*(?:while|for)|"
                               r"setInterval\s*\([^)]*fork", re.IGNORECASE)


def is_decoder(cmd: SimpleCommand) -> bool:
    name, args = cmd.program, cmd.args
    if name in ("base64", "base32", "basenc", "gbase64"):
        return any(a in ("-d", "--decode", "-D") or (a.startswith("-") and not a.startswith("--") and "d" in a)
                   for a in args)
    if name == "xxd":
        return any(a.startswith("-r") or a == "-revert" for a in args)
    if name == "openssl":
        return any(a in ("-d", "-base64", "-a", "-A") for a in args) or bool(args and args[0] in ("base64", "enc"))
    if name in _DECOMPRESSORS or name in _ALWAYS_DECODE:
        return True
    if name in _COMPRESSORS_WITH_D:
        return any(a in ("-d", "--decompress", "--uncompress") or (a.startswith("-") and not a.startswith("--")
                                                                    and "d" in a) for a in args)
    return False


def is_downloader(cmd: SimpleCommand) -> bool:
    return cmd.program in DOWNLOADERS


def literal_output(cmd: SimpleCommand) -> str | None:
    """The text `echo …` / `printf …` writes when it is all literal, else None."""
    args = [a for a in cmd.args]
    if any("\x00" in a or "__SUBST__" in a or "$" in a for a in args):
        return None
    if cmd.program == "echo":
        escapes = False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            escapes = escapes or "e" in args[0]
            args = args[1:]
        text = " ".join(args)
        return _unescape(text) if escapes else text
    if cmd.program == "printf" and args:
        return _unescape(args[0].replace("%s", " ".join(args[1:])).replace("%%", "%"))
    return None


def _unescape(text: str) -> str:
    text = re.sub(r"\\0([0-7]{1,3})", lambda m: chr(int(m.group(1), 8)), text)
    try:
        return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text


def body_kinds(bodies: list[str]) -> set[str]:
    """What the commands inside substitution bodies do: {"decode", "download"}."""
    kinds: set[str] = set()
    for body in bodies:
        parsed: ParsedLine = split_segments(body)
        for segment in parsed.segments:
            cmd = unwrap(segment.words)
            if is_decoder(cmd):
                kinds.add("decode")
            if is_downloader(cmd):
                kinds.add("download")
    return kinds


def producers(index: int, commands: list[SimpleCommand], piped_from: list[int | None]) -> list[SimpleCommand]:
    """Every command upstream of command `index` in its pipeline, nearest first."""
    chain = []
    current = piped_from[index]
    while current is not None:
        chain.append(commands[current])
        current = piped_from[current]
    return chain


def stdin_code_hits(upstream: list[SimpleCommand], interpreter: str) -> tuple[list[RuleHit], list[RuleHit], str | None]:
    """(hardline hits, undecidable hits, literal code to judge) for code an interpreter reads from a pipe."""
    if any(is_decoder(c) for c in upstream):
        names = ", ".join(c.program for c in upstream if is_decoder(c))
        return [RuleHit("hardline.decode_and_execute", f"decoded bytes ({names}) piped into {interpreter}")], [], None
    if any(is_downloader(c) for c in upstream):
        names = ", ".join(c.program for c in upstream if is_downloader(c))
        return [], [RuleHit("undecidable.download_and_execute", f"a download ({names}) piped into {interpreter}")], None
    nearest = upstream[0]
    text = literal_output(nearest)
    if text is not None:
        return [], [], text
    if nearest.program in ("cat", "tee") and nearest.args and not any("__SUBST__" in a or "\x00" in a
                                                                      for a in nearest.args):
        return [], [], None  # a script file, like `sh script.sh`
    return [], [RuleHit("undecidable.generated_code",
                        f"the output of {nearest.program or 'a command'} runs as {interpreter} code")], None


def inline_code_hits(code: str, program: str) -> list[RuleHit]:
    if _INLINE_DECODE.search(code) and _INLINE_EXEC.search(code):
        return [RuleHit("hardline.decode_and_execute", f"{program} inline code decodes and executes a payload")]
    if _INLINE_FORK_BOMB.search(code):
        return [RuleHit("hardline.fork_bomb", f"{program} inline code forks without end")]
    return []
