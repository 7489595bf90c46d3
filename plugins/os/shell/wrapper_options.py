"""The wrappers the shell guard peels off, and how each one reads its own options.

For every wrapper: the options that take a value (so the value is not mistaken for the
wrapped program), whether its first plain word is a value (`timeout 5`, `chroot /root`) or
a user/group name (`su root`, `sg wheel`), and which option carries a command line of its
own (`su -c`, `flock -c`, `script -c`).
"""

from __future__ import annotations

PRIVILEGE_WRAPPERS = frozenset({"sudo", "doas", "pkexec", "su", "run0", "runuser", "setpriv", "sg", "chroot"})
# wrapper -> options that consume the following word
WRAPPER_VALUE_OPTS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir",
                       "--role", "--type", "--other-user", "--prompt", "--close-from", "--host"}),
    "doas": frozenset({"-u", "-C"}),
    "su": frozenset({"-s", "-g", "-G", "--shell", "--group", "--supp-group", "-w", "--whitelist-environment"}),
    "runuser": frozenset({"-u", "-g", "-G", "-s", "--user", "--group", "--supp-group", "--shell", "-w",
                          "--whitelist-environment"}),
    "pkexec": frozenset({"--user"}),
    "run0": frozenset({"-u", "--user", "-g", "--group", "-D", "--chdir", "--setenv", "--unit", "--property", "-p",
                       "--description", "--slice", "--nice", "--background"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir", "-a", "--argv0"}),
    "exec": frozenset({"-a"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata", "--pid", "--pgid", "--uid"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--delimiter", "--max-args", "--max-procs",
                        "--arg-file", "--max-lines", "--max-chars", "--eof", "--process-slot-var"}),
    "parallel": frozenset({"-j", "--jobs", "-S", "--sshlogin", "--delay", "--timeout", "-a", "--arg-file"}),
    "watch": frozenset({"-n", "-d", "--interval", "--differences", "-q", "--equexit"}),
    "chrt": frozenset({"-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"}),
    "taskset": frozenset({"-c", "--cpu-list"}), "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    "setsid": frozenset(), "nohup": frozenset(), "command": frozenset(), "builtin": frozenset(),
    "time": frozenset({"-f", "-o", "--format", "--output"}), "unbuffer": frozenset(), "caffeinate": frozenset(),
    "chroot": frozenset({"--userspec", "--groups"}),
    "setpriv": frozenset({"--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--groups", "--inh-caps",
                          "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label",
                          "--apparmor-profile", "--landlock-access", "--landlock-rule"}),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-a", "-u", "-E", "-O", "-P", "-X", "-b", "-I", "-S", "-U",
                         "--output", "--signal", "--trace", "--attach", "--user", "--env", "--string-limit"}),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-a", "-u", "-n", "-l", "-L", "-x", "-A", "-D", "-F"}),
    "sg": frozenset(), "unshare": frozenset({"--map-user", "--map-group", "--setuid", "--setgid", "--propagation",
                                            "--root", "--wd", "-S", "-G", "-R", "-w"}),
    "nsenter": frozenset({"-t", "--target", "-S", "-G", "--setuid", "--setgid", "-r", "-w", "--root", "--wd"}),
    "systemd-run": frozenset({"-p", "--property", "-u", "--unit", "--description", "--slice", "-E", "--setenv",
                              "--working-directory", "-M", "--machine", "-H", "--host", "--uid", "--gid", "--nice",
                              "--on-calendar", "--on-active", "--timer-property", "--path-property"}),
    "firejail": frozenset(), "fakeroot": frozenset({"-l", "-s", "-i", "--lib", "--faked"}),
    "eatmydata": frozenset(), "torsocks": frozenset({"-u", "-p", "-a", "-P"}), "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}), "dbus-run-session": frozenset(), "catchsegv": frozenset(),
    "valgrind": frozenset(), "faketime": frozenset({"-f"}), "prlimit": frozenset({"-p", "--pid"}),
    "numactl": frozenset({"-C", "-N", "-m", "-p", "-i", "--cpunodebind", "--membind", "--preferred", "--interleave",
                          "--physcpubind"}),
    "cgexec": frozenset({"-g"}), "setarch": frozenset(), "linux32": frozenset(), "linux64": frozenset(),
    "script": frozenset({"-c", "--command", "-E", "--echo", "-I", "-O", "-B", "-T", "--log-in", "--log-out",
                         "--log-io", "--log-timing", "-m", "--logging-format"}),
    "chronic": frozenset(), "doas-keepenv": frozenset(),
}
WRAPPERS = frozenset(WRAPPER_VALUE_OPTS)
# wrappers whose first plain word is a value, not the command: timeout DURATION, chroot ROOT, ...
POSITIONAL_FIRST = frozenset({"timeout", "flock", "taskset", "chrt", "chroot", "setarch", "faketime"})
# wrappers whose first plain word names a user or group (`su root -c …`, `sg wheel cmd`)
NAMED_FIRST = frozenset({"su", "runuser", "sg"})
# wrappers whose `-c WORD` is a command line of its own
CODE_OPTS = {"su": ("-c", "--command"), "runuser": ("-c", "--command"), "sg": ("-c",), "flock": ("-c", "--command"),
              "script": ("-c", "--command")}
STDIN_ARG_WRAPPERS = frozenset({"xargs", "parallel"})
