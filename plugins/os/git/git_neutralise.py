"""Switch off every program a repository can make git run, for the read-only git tools.

A repository's own config (`.git/config`, anything it includes, a submodule's config)
and its attributes can name programs that git starts during a plain status, diff, log,
show or blame. The read-only tools must run none of them, at any approval level. Before
each tool call the repository's effective config is listed once (`git config --list
--null`: reading config runs nothing) and every git command of the call then runs with
the overrides below, passed through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/
`GIT_CONFIG_VALUE_n` — environment config outranks every config file and, unlike
`-c key=value`, cannot be confused by a driver name that contains `=`.

What is neutralised, and how:

- clean/smudge/long-running filters (`filter.<driver>.clean|smudge|process`, chosen per
  path by `.gitattributes`): every driver the config defines gets empty programs and
  `required = false`, so git passes the bytes through unfiltered;
- diff text conversion and external diff drivers (`diff.<driver>.textconv|command`,
  `diff.external`): emptied, and `--no-textconv --no-ext-diff` on diff, show and blame;
- merge drivers (`merge.<driver>.driver`) and `trailer.<token>.command|cmd`: emptied
  (no read-only command reaches them; they are emptied so none ever can);
- signature verification (`log.showSignature` runs `gpg.program`, `gpg.<format>.program`,
  `gpg.ssh.defaultKeyCommand`): `log.showSignature=false` and every program emptied;
- the file-system monitor (`core.fsmonitor`, a hook program run by status): `false`;
- the pager (`core.pager`, `pager.<command>`, `GIT_PAGER`): `--no-pager`, `core.pager=cat`,
  every `pager.<command>=false`;
- hooks (`core.hooksPath`, `.git/hooks/*`): `core.hooksPath=/dev/null`;
- anything that talks to a remote — a partial clone fetches missing objects on demand
  during show or blame, running `remote.<name>.url`'s transport (`ext::<command>`,
  `core.sshCommand`, `remote.<name>.uploadpack`, `credential.helper`, `core.askPass`):
  `GIT_ALLOW_PROTOCOL=none` forbids every transport (it overrides `protocol.*.allow`
  in any config), and `core.sshCommand`, `core.gitProxy`, `core.askPass`,
  `credential.helper`, `credential.<url>.helper`, `remote.<name>.uploadpack|receivepack`
  and `core.alternateRefsCommand` are emptied;
- submodules (each has its own config the listing above does not see): never entered
  (`--ignore-submodules=all`, `diff.ignoreSubmodules=all`, `submodule.recurse=false`,
  `status.submoduleSummary=false`);
- automatic maintenance (`gc.auto=0`, `maintenance.auto=false`) and optional locks
  (`GIT_OPTIONAL_LOCKS=0`: status never writes the index, so no index hook can fire).

The child environment is the filtered tool environment (no GIT_SSH, GIT_EXTERNAL_DIFF,
GIT_CONFIG_PARAMETERS or GIT_CONFIG_* from the agent's own environment reach git).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

FIXED: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null"), ("core.pager", "cat"), ("core.sshCommand", ""),
    ("core.gitProxy", ""), ("core.askPass", ""), ("core.alternateRefsCommand", ""), ("credential.helper", ""),
    ("diff.external", ""), ("log.showSignature", "false"), ("gpg.program", ""), ("gpg.openpgp.program", ""),
    ("gpg.x509.program", ""), ("gpg.ssh.program", ""), ("gpg.ssh.defaultKeyCommand", ""),
    ("protocol.allow", "never"), ("submodule.recurse", "false"), ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"), ("gc.auto", "0"), ("maintenance.auto", "false"), ("color.ui", "false"),
    ("core.quotePath", "false"),
)
# (section, variable) of a three-part key `section.<subsection>.variable` -> the safe value
PER_SUBSECTION: dict[tuple[str, str], str] = {
    ("filter", "clean"): "", ("filter", "smudge"): "", ("filter", "process"): "", ("filter", "required"): "false",
    ("diff", "textconv"): "", ("diff", "command"): "", ("merge", "driver"): "", ("trailer", "command"): "",
    ("trailer", "cmd"): "", ("credential", "helper"): "", ("remote", "uploadpack"): "",
    ("remote", "receivepack"): "", ("remote", "proxy"): "", ("difftool", "cmd"): "", ("mergetool", "cmd"): "",
    ("gpg", "program"): "",
}
ENVIRONMENT: dict[str, str] = {
    "GIT_ALLOW_PROTOCOL": "none", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat",
    "PAGER": "cat", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
DROPPED_ENVIRONMENT = ("GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG",
                       "GIT_EXEC_PATH", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_ATTR_SOURCE")
LIST_ARGV = ("git", "--no-pager", "config", "--list", "--null")


def listed_keys(listing: str) -> list[str]:
    """The keys of `git config --list --null` output (`key\\nvalue\\0` records)."""
    keys = []
    for record in listing.split("\0"):
        if record:
            keys.append(record.split("\n", 1)[0])
    return keys


def overrides_for(keys: Iterable[str]) -> list[tuple[str, str]]:
    """Every override for a repository whose config holds `keys` (fixed ones first)."""
    out = list(FIXED)
    seen = {k for k, _ in FIXED}
    for key in keys:
        section, _, rest = key.partition(".")
        section = section.lower()
        subsection, dot, variable = rest.rpartition(".")
        variable = variable.lower()
        if dot and (section, variable) in PER_SUBSECTION:
            safe = PER_SUBSECTION[(section, variable)]
        elif section == "pager" and not dot:
            safe = "false"  # pager.<command>
        else:
            continue
        if key not in seen:
            out.append((key, safe))
            seen.add(key)
    return out


def neutral_environment(base: Mapping[str, str], overrides: list[tuple[str, str]]) -> dict[str, str]:
    """`base` with the git variables above and the overrides as GIT_CONFIG_COUNT/KEY_n/VALUE_n."""
    env = {k: v for k, v in base.items() if k not in DROPPED_ENVIRONMENT and not k.startswith("GIT_CONFIG_")}
    env.update(ENVIRONMENT)
    env["GIT_CONFIG_COUNT"] = str(len(overrides))
    for index, (key, value) in enumerate(overrides):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env
