"""The kinds of log the benchmark generates, and where it keeps them.

Each kind names a generator and the dialect `condense` must detect. Generated logs
live in the data folder (`bench/data/` by default, ignored by git) and are reused
while their generator is unchanged: a stamp beside each log holds a hash of the
generator's source, and a log whose stamp differs is written again.

    python bench/logs.py claude-code 10000 /tmp/session.jsonl    # write one log
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import gen_claude, gen_codex, gen_gemini, gen_v1, generate
from bench.sessions import Manifest

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class LogKind:
    """A kind of generated log."""

    name: str
    dialect: str  # what `condense` reports for it
    folder: bool  # an OpenHands V1 conversation folder rather than one file
    write: Callable[[Path, int, int], Manifest | None]
    sources: tuple[str, ...]  # the modules that shape its bytes


def _v0(kind: str) -> Callable[[Path, int, int], Manifest | None]:
    return lambda path, count, seed: generate.write_log(path, count, kind, seed)


def _uncompacted(kind: LogKind) -> LogKind:
    """The same session as `kind`, never compacted (it never filled its window, or had
    no condenser): its whole history is the view."""
    write = kind.write
    return LogKind(
        f"{kind.name}-uncompacted",
        kind.dialect,
        kind.folder,
        lambda path, count, seed: write(path, count, seed, compacts=False),  # type: ignore[call-arg]
        (*kind.sources, "logs.py"),
    )


COMMON = ("textpool.py", "sessions.py", "generate.py")
V1 = LogKind("openhands-v1", "openhands-v1", True, gen_v1.write_folder, (*COMMON, "gen_v1.py"))
CLAUDE = LogKind(
    "claude-code", "claude-code", False, gen_claude.write_session, (*COMMON, "gen_claude.py")
)
CODEX = LogKind("codex", "codex", False, gen_codex.write_rollout, (*COMMON, "gen_codex.py"))
GEMINI = LogKind(
    "gemini-cli", "gemini-cli", False, gen_gemini.write_session, (*COMMON, "gen_gemini.py")
)
KINDS: dict[str, LogKind] = {
    kind.name: kind
    for kind in (
        LogKind("uniform", "openhands-v0", False, _v0("uniform"), ("generate.py",)),
        LogKind("realistic", "openhands-v0", False, _v0("realistic"), COMMON),
        V1,
        LogKind(
            "openhands-v1-jsonl", "openhands-v1", False, gen_v1.write_jsonl, (*COMMON, "gen_v1.py")
        ),
        _uncompacted(V1),
        CLAUDE,
        _uncompacted(CLAUDE),
        CODEX,
        _uncompacted(CODEX),
        GEMINI,
        _uncompacted(GEMINI),
    )
}
V0_KINDS = ("uniform", "realistic")
DIALECT_KINDS = (
    "openhands-v1",
    "openhands-v1-jsonl",
    "openhands-v1-uncompacted",
    "claude-code",
    "claude-code-uncompacted",
    "codex",
    "codex-uncompacted",
    "gemini-cli",
    "gemini-cli-uncompacted",
)


def fingerprint(kind: LogKind, seed: int) -> str:
    digest = hashlib.sha256(str(seed).encode())
    for name in kind.sources:
        digest.update((HERE / name).read_bytes())
    return digest.hexdigest()[:16]


def log_path(data: Path, kind: str, count: int) -> Path:
    spec = KINDS[kind]
    return data / (f"{kind}-{count}" + ("" if spec.folder else ".jsonl"))


def ensure_log(data: Path, kind: str, count: int, seed: int = 7) -> Path:
    """The log of `kind` with `count` events in `data`, written first when missing or
    made by another version of its generator."""
    spec = KINDS[kind]
    path = log_path(data, kind, count)
    stamp = path.with_name(path.name + ".stamp")
    want = fingerprint(spec, seed)
    if path.exists() and stamp.exists() and stamp.read_text() == want:
        return path
    data.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.partial")
    _remove(temporary)
    print(f"generating {path} ...", file=sys.stderr, end=" ", flush=True)
    start = time.perf_counter()
    spec.write(temporary, count, seed)
    _remove(path)
    temporary.rename(path)
    stamp.write_text(want)
    print(f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    return path


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def size_bytes(path: Path) -> int:
    """The bytes of a log: the file, or every event file of a conversation folder."""
    if path.is_dir():
        return sum(f.stat().st_size for f in (path / "events").iterdir() if f.is_file())
    return path.stat().st_size


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Write one generated log.")
    parser.add_argument("kind", choices=list(KINDS))
    parser.add_argument("count", type=int, help="events (lines; event files for a folder)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    manifest = KINDS[options.kind].write(options.out, options.count, options.seed)
    if manifest is not None:
        print(
            f"{options.out}: {manifest.events} events, {manifest.condensations} "
            f"condensations, {manifest.view_events} events in the view"
        )
