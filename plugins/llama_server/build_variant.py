"""Which llama.cpp build configuration suits this CPU: `native` (`-march=native`) or
`portable` (GGML_NATIVE off, every instruction set the CPU reports turned on by name, AMX
never), and in which order `llama install` tries them.

Why two: with GGML_NATIVE the compiler enables whatever the CPU has, AMX included, and
llama.cpp's AMX matrix kernels segfault on the first decode on Sapphire Rapids class CPUs
(ggml-org/llama.cpp#20824). The portable build names the instruction sets through the
options ggml's own CMake offers (ggml/CMakeLists.txt, ggml-cpu/CMakeLists.txt), so it keeps
AVX-512 and VNNI speed without AMX. On x86 the sets come from the CPU's own report (the
`flags` line of /proc/cpuinfo); elsewhere (arm64, macOS) the portable build is the
compiler's generic target and only the fallback.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable
from pathlib import Path

import attrs

NATIVE, PORTABLE = "native", "portable"
AUTO = "auto"
VARIANT_CHOICES = (AUTO, NATIVE, PORTABLE)

# (name used in cache keys and reports, cpuinfo flags that must all be present, ggml option)
X86_INSTRUCTION_SETS: tuple[tuple[str, frozenset[str], str], ...] = (
    ("sse42", frozenset({"sse4_2"}), "GGML_SSE42"),
    ("avx", frozenset({"avx"}), "GGML_AVX"),
    ("avx2", frozenset({"avx2"}), "GGML_AVX2"),
    ("fma", frozenset({"fma"}), "GGML_FMA"),
    ("f16c", frozenset({"f16c"}), "GGML_F16C"),
    ("bmi2", frozenset({"bmi2"}), "GGML_BMI2"),
    ("avxvnni", frozenset({"avx_vnni"}), "GGML_AVX_VNNI"),
    # ggml's AVX512 option compiles with -mavx512f/cd/vl/dq/bw, so all five must be there
    ("avx512", frozenset({"avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"}), "GGML_AVX512"),
    ("avx512vbmi", frozenset({"avx512vbmi", "avx512f"}), "GGML_AVX512_VBMI"),
    ("avx512vnni", frozenset({"avx512_vnni", "avx512f"}), "GGML_AVX512_VNNI"),
    ("avx512bf16", frozenset({"avx512_bf16", "avx512f"}), "GGML_AVX512_BF16"),
)
AMX_FLAGS = frozenset({"amx_tile", "amx_int8", "amx_bf16"})
AMX_OPTIONS = ("-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF")
AMX_CRASH_REASON = ("this CPU reports AMX, and llama.cpp's AMX kernels crash on the first decode on such CPUs "
                    "(ggml-org/llama.cpp#20824), so the native build is skipped")


@attrs.frozen
class CpuReport:
    """What the CPU says about itself: the architecture and its feature flags."""

    machine: str
    flags: frozenset[str]

    @property
    def is_x86(self) -> bool:
        return self.machine.lower() in {"x86_64", "amd64", "i686", "i386"}

    @property
    def has_amx(self) -> bool:
        return bool(self.flags & AMX_FLAGS)


def read_cpu_report(cpuinfo: Path = Path("/proc/cpuinfo"), machine: str | None = None) -> CpuReport:
    """The first `flags` (x86) or `Features` (arm) line of /proc/cpuinfo; no flags where
    there is no such file (macOS), which makes the portable build the generic target."""
    flags: frozenset[str] = frozenset()
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, sep, value = line.partition(":")
                if sep and key.strip() in {"flags", "Features"}:
                    flags = frozenset(value.split())
                    break
    except OSError:
        pass
    return CpuReport(machine=machine or platform.machine(), flags=flags)


@attrs.frozen
class BuildVariant:
    """One build configuration: its kind, the instruction sets it names (portable on x86)
    and why it was chosen (shown by `llama install`, `llama status` and `doctor`)."""

    kind: str
    instruction_sets: tuple[str, ...] = ()
    reason: str = ""
    cpu_key: str = ""  # native only: the CPU's flags line hash, since -march=native binds to it

    def cmake_options(self) -> tuple[str, ...]:
        if self.kind == NATIVE:
            return ("-DGGML_NATIVE=ON",)
        if not self.instruction_sets:
            return ("-DGGML_NATIVE=OFF",)
        # every x86 option is set explicitly: ggml turns the older ones on by default
        chosen = set(self.instruction_sets)
        named = tuple(f"-D{option}={'ON' if name in chosen else 'OFF'}" for name, _flags, option in X86_INSTRUCTION_SETS)
        return ("-DGGML_NATIVE=OFF", *named, *AMX_OPTIONS)

    def cache_key(self) -> str:
        """The folder name part that tells builds apart: a binary cached for one variant (or
        other instruction sets) is never mistaken for another."""
        if self.kind == NATIVE:
            return f"native-{self.cpu_key}"
        return "portable-" + ("-".join(self.instruction_sets) or "generic")

    def describe(self) -> str:
        if self.kind == NATIVE:
            return "native (-march=native)"
        sets = ", ".join(self.instruction_sets) or "the compiler's generic target"
        return f"portable ({sets}; AMX off)" if self.instruction_sets else f"portable ({sets})"


def x86_instruction_sets(flags: Iterable[str]) -> tuple[str, ...]:
    have = set(flags)
    return tuple(name for name, needs, _option in X86_INSTRUCTION_SETS if needs <= have)


def portable_variant(cpu: CpuReport, reason: str) -> BuildVariant:
    sets = x86_instruction_sets(cpu.flags) if cpu.is_x86 else ()
    return BuildVariant(kind=PORTABLE, instruction_sets=sets, reason=reason)


def native_variant(cpu: CpuReport, cpu_key: str, reason: str) -> BuildVariant:
    return BuildVariant(kind=NATIVE, reason=reason, cpu_key=cpu_key)


def variants_to_try(choice: str, cpu: CpuReport, cpu_key: str) -> list[BuildVariant]:
    """The builds `llama install` tries, in order, for `choice` (auto, native or portable).
    Auto: native, then portable as the fallback when native fails its proof; on an x86 CPU
    that reports AMX, portable straight away (the native build is known to crash there)."""
    if choice == NATIVE:
        return [native_variant(cpu, cpu_key, "asked for with --native")]
    if choice == PORTABLE:
        return [portable_variant(cpu, "asked for with --portable")]
    if choice != AUTO:
        raise ValueError(f"unknown build variant {choice!r}; use one of {', '.join(VARIANT_CHOICES)}")
    if cpu.is_x86 and cpu.has_amx:
        return [portable_variant(cpu, AMX_CRASH_REASON)]
    return [native_variant(cpu, cpu_key, "the default: fastest on the CPU it was built on"),
            portable_variant(cpu, "the native build failed its proof on this machine")]
