"""Realistic text for generated logs: varied words, code, terminal output, web pages.

Real session logs are not word salad: their prose draws on thousands of words and
identifiers with a skewed (Zipf-like) frequency, their tool outputs are code, test
runs, compiler errors, diffs and listings full of punctuation, paths, numbers,
quotes and backslashes, and a few percent of their bytes are not ASCII (accented
words, CJK, emoji, box drawing, typographic quotes). Terminal output carries ANSI
colour codes, which JSON writes as `\\u001b`.

`Texts` builds pools of such pieces once, from one `random.Random`, and then hands
out texts by picking from them, so a seed always gives the same text and writing a
million events stays fast (no per-character work per event).
"""

from __future__ import annotations

import base64
import itertools
import random
import re

# --- vocabulary ------------------------------------------------------------------------
# Non-ASCII look-alikes (typographic quotes, dashes, fullwidth commas) are on purpose:
# real logs are full of them.


def _words(text: str) -> list[str]:
    return text.split()


COMMON = _words("""
the of and to a in is that for it as with was on be by this are from at or have an not
which but can all will one if more when there has would their what so about out up into
some them other than then its only also these could time two may first after any new
where most should over such see because through just each those how well even use way
many much before being here both between under never while last might same another since
again still against without few own within along during however found given least less
although around upon whether already often later rather perhaps instead every next check
make sure need look like seems think instead because currently actually probably expected
instead likely means simple issue problem change fix works failing passes right wrong line
case cases call calls called returns returned instead missing empty whole part start end
step steps first second third now let me try run again instead note also similar instead
order keep keeps kept remove removed add added update updated create created read write
written open close closed show shows shown happen happens happened reason because result
results output input before after above below inside outside between without handle used
using uses set sets get gets put puts move moved copy copied same different other another
""")

TECH = _words("""
function class method module package import export return value variable parameter
argument config settings option default error exception warning failure test fixture
assert mock stub request response client server handler router endpoint middleware session
token cookie header payload schema model field column table index query cursor transaction
migration database cache buffer stream queue worker thread process lock mutex signal event
listener callback promise future async await coroutine task scheduler timer retry timeout
backoff limit offset page batch chunk record entry item node tree graph edge vertex path
file directory folder archive bundle build compile linker target binary library dependency
version release commit branch merge rebase patch diff hunk byte char string integer float
boolean array list dict map tuple struct enum trait interface protocol type generic closure
lambda iterator generator decorator property attribute instance object pointer reference
borrow lifetime allocation memory heap stack frame trace logger metrics counter gauge
histogram span context scope namespace registry plugin adapter wrapper proxy factory builder
parser lexer tokenizer serializer encoder decoder codec hash digest checksum signature key
secret credential permission role account tenant organization project workspace repository
container image volume network port socket host address domain url uri fragment template
render view component state props hook effect reducer store dispatch selector layout style
theme validation sanitize regex pattern match group capture replace split join strip format
parse dump load save flush sync deadlock race condition overflow underflow null undefined
nan infinity precision rounding encoding utf8 ascii unicode escape newline whitespace indent
tab comment docstring annotation typing mypy pytest unittest coverage benchmark profiler
flamegraph latency throughput bandwidth payload gzip compression snapshot checkpoint rollback
replica shard partition leader follower consensus quorum heartbeat lease election webhook
cron daemon systemd docker kubernetes pod deployment ingress helm terraform ansible nginx
postgres sqlite redis kafka rabbitmq grpc protobuf graphql rest json yaml toml csv xml html
css javascript typescript python rust golang java kotlin swift ruby elixir haskell ocaml
numpy pandas django flask fastapi pydantic sqlalchemy alembic celery asyncio uvicorn pip
poetry npm yarn webpack vite eslint prettier babel jest cargo rustc clippy tokio serde
""")

SYLLABLES = _words("""
ka lo ver tan mi dra zen qua rix bel tor nia sol fen gar ith mo ples cor vu sha dex lum
pra ne ost ryn cal vo tri mer sek ula bra kin dor fas hel ix jo kre lan mu nor pel quo
""")

ACCENTED = _words("""
café naïve déjà-vu résumé façade über Größe Zürich São Málaga niño señor crème brûlée
Ångström smörgåsbord Łódź Dvořák Straße cañón Bogotá Kraków Reykjavík jalapeño piñata
coöperate élan fiancée Müller José François Søren Jürgen Çelik Ñuñoa Malmö Besançon
""")

SYMBOLS = _words("→ ← ≤ ≥ × … “ ” ‘ ’ — – • ✓ ✗ ± ° µ λ Δ π ∞ ≈ ≠ ━ │ ─ ╰ ├ └")  # noqa: RUF001

EMOJI = _words("✅ ❌ 🚀 🔥 ⚠️ 🎉 📦 👍 🐛 ✨ 💡 🔧 📝 ⏳ 🧪 🔍 🙂 ⭐")

FOREIGN_SENTENCES = [
    "数据库连接失败，请检查配置文件。",  # noqa: RUF001
    "测试全部通过了，但是覆盖率还不够。",  # noqa: RUF001
    "请先分析问题，然后再开始实现。",  # noqa: RUF001
    "这个函数的返回值不正确，需要修复边界情况。",  # noqa: RUF001
    "我们先讨论一下方案，再动手写代码。",  # noqa: RUF001
    "ファイルが見つかりません。パスを確認してください。",
    "テストが失敗しました。ログを見てください。",
    "設定を確認してから、もう一度実行してください。",
    "빌드가 성공했습니다. 이제 배포할 수 있습니다.",
    "파일을 찾을 수 없습니다.",
    "Ошибка: файл не найден, проверьте путь.",
    "Проверьте настройки подключения к базе данных.",
    "Η δοκιμή απέτυχε στο δεύτερο βήμα.",  # noqa: RUF001
    "La función devuelve un valor incorrecto cuando la lista está vacía.",
    "Le fichier de configuration est introuvable, vérifiez le chemin d’accès.",  # noqa: RUF001
    "Die Größe des Puffers ist zu klein für diese Eingabe.",
    "O teste falhou porque a conexão expirou após 30 segundos.",
]

DIRS = ["src", "tests", "lib", "app", "core", "api", "utils", "cli", "internal", "pkg"]
DIRS += ["docs", "scripts"]
TLDS = ["com", "org", "io", "dev", "net", "readthedocs.io", "github.io"]
TYPES_PY = ["str", "int", "float", "bool", "bytes", "None", "list[str]", "dict[str, Any]"]
TYPES_PY += ["Path", "Iterator[Event]", "tuple[int, int]", "Optional[str]", "Sequence[Node]"]
TYPES_TS = ["string", "number", "boolean", "void", "unknown", "Record<string, number>"]
TYPES_TS += ["Promise<void>", "Array<Item>", "Map<string, Node>", "ReadonlyArray<string>"]
TYPES_RS = ["u32", "usize", "i64", "f64", "bool", "String", "&str", "Vec<u8>", "Option<usize>"]
TYPES_RS += ["Result<(), Error>", "HashMap<String, Value>", "Arc<Mutex<State>>", "&[u8]"]
EXCEPTIONS = ["ValueError", "KeyError", "TypeError", "RuntimeError", "AssertionError"]
EXCEPTIONS += ["FileNotFoundError", "AttributeError", "IndexError", "TimeoutError"]
EXCEPTIONS += ["json.decoder.JSONDecodeError", "UnicodeDecodeError", "PermissionError"]

ANSI = {
    "red": "\x1b[31m",
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "bold": "\x1b[1m",
    "reset": "\x1b[0m",
}

SLOT = re.compile(r"\{(\w)\}")


class Texts:
    """Pools of realistic text pieces, and the texts of one session drawn from them."""

    def __init__(self, rng: random.Random, scale: float = 1.0) -> None:
        """Build every pool (about a second). `scale` shrinks the pools for tests."""
        self.rng = rng
        r = rng
        names = {"".join(r.choices(SYLLABLES, k=r.randint(2, 3))) for _ in range(900)}
        self.names = sorted(names)
        words = COMMON + TECH + self.names
        idents = set()
        for _ in range(2600):
            parts = r.choices(TECH + COMMON[:120] + self.names[:200], k=r.randint(2, 3))
            style = r.random()
            if style < 0.55:
                idents.add("_".join(parts))
            elif style < 0.8:
                idents.add("".join(p.capitalize() for p in parts))
            elif style < 0.95:
                idents.add(parts[0] + "".join(p.capitalize() for p in parts[1:]))
            else:
                idents.add("_".join(parts).upper())
        self.idents = sorted(idents)
        self.snake = [i for i in self.idents if i.islower()]
        self.classes = [i for i in self.idents if i[:1].isupper() and not i.isupper()]
        self.modules = sorted(
            {r.choice(TECH) + r.choice(["", "s", "_utils", "_io", "er"]) for _ in range(150)}
            | {f"{r.choice(TECH)}_{r.choice(TECH)}" for _ in range(150)}
        )
        self.repos = sorted({f"{r.choice(self.names)}-{r.choice(TECH)}" for _ in range(60)})
        self.packages = sorted(
            {r.choice(self.names) + r.choice(["", "-py", "js", "-core", "lib"]) for _ in range(300)}
        )
        # Zipf-like frequencies over a shuffled vocabulary (the common words first).
        rest = TECH + self.names[:250] + self.idents[:1200]
        shuffled = COMMON + r.sample(rest, len(rest))
        self.vocab = shuffled
        self.cum = list(itertools.accumulate(1.0 / (rank + 8) for rank in range(len(shuffled))))
        self.distinct_words = len(set(words) | set(self.idents))
        self.paths = [self._path() for _ in range(max(100, int(1500 * scale)))]
        self.sentences = [self._sentence() for _ in range(max(200, int(14000 * scale)))]
        self.files = [self._file() for _ in range(max(30, int(320 * scale)))]
        self.outputs = [self._terminal() for _ in range(max(60, int(1600 * scale)))]
        self.pages = [self._page() for _ in range(max(6, int(90 * scale)))]

    # --- small pieces -------------------------------------------------------------------

    def word(self) -> str:
        return self.rng.choices(self.vocab, cum_weights=self.cum)[0]

    def number(self) -> str:
        r = self.rng.random()
        if r < 0.5:
            return str(self.rng.randint(0, 99))
        if r < 0.8:
            return str(self.rng.randint(100, 99999))
        if r < 0.9:
            return f"{self.rng.uniform(0, 100):.2f}"
        return f"0x{self.rng.getrandbits(32):08x}"

    def _nonascii(self) -> str:
        r = self.rng.random()
        if r < 0.5:
            return self.rng.choice(ACCENTED)
        if r < 0.85:
            return self.rng.choice(SYMBOLS)
        return self.rng.choice(EMOJI)

    def _path(self) -> str:
        r = self.rng
        root = r.choice(["/workspace", "/workspace", "/home/user", "/tmp", "/srv", "."])
        repo = r.choice(self.repos)
        dirs = "/".join(r.choices([*DIRS, *self.modules[:40]], k=r.randint(1, 3)))
        ext = r.choice(
            [
                ".py",
                ".py",
                ".py",
                ".ts",
                ".tsx",
                ".rs",
                ".go",
                ".c",
                ".h",
                ".md",
                ".json",
                ".toml",
                ".yaml",
                ".js",
                ".css",
                ".sh",
            ]
        )
        return f"{root}/{repo}/{dirs}/{r.choice(self.snake)}{ext}"

    def path(self) -> str:
        return self.rng.choice(self.paths)

    def url(self) -> str:
        r = self.rng
        host = f"{r.choice(['docs', 'www', 'api', 'github', 'blog', 'dev'])}."
        host += f"{r.choice(self.names)}.{r.choice(TLDS)}"
        tail = "/".join(r.choices(TECH + self.names, k=r.randint(1, 4)))
        query = f"?q={r.choice(TECH)}&page={r.randint(1, 9)}" if r.random() < 0.2 else ""
        return f"https://{host}/{tail}{query}"

    def _sentence(self) -> str:
        r = self.rng
        if r.random() < 0.04:
            return r.choice(FOREIGN_SENTENCES)
        n = r.randint(4, 24)
        words = r.choices(self.vocab, cum_weights=self.cum, k=n)
        for i in range(n):
            x = r.random()
            if x < 0.05:
                words[i] = f"`{r.choice(self.idents)}`"
            elif x < 0.07:
                words[i] = self.number()
            elif x < 0.08:
                words[i] = f"`{self.path()}`"
            elif x < 0.09:
                words[i] = f'"{r.choice(COMMON)} {r.choice(TECH)}"'
            elif x < 0.12:
                words[i] = self._nonascii()
            elif x < 0.17:
                words[i] += ","
            elif x < 0.18:
                words[i] = f"({words[i]})"
        text = " ".join(words)
        end = r.choice([".", ".", ".", ".", ":", "?", "!", "..."])
        return text[:1].upper() + text[1:] + end

    def prose(self, sentences: int) -> str:
        """`sentences` sentences in paragraphs of one to five."""
        r = self.rng
        picked = r.choices(self.sentences, k=max(1, sentences))
        out, i = [], 0
        while i < len(picked):
            n = r.randint(1, 5)
            out.append(" ".join(picked[i : i + n]))
            i += n
        return "\n\n".join(out)

    def prose_chars(self, chars: int) -> str:
        """Prose of about `chars` characters."""
        return self.prose(max(1, chars // 80))

    def bullets(self, items: int) -> str:
        return "\n".join(f"- {s}" for s in self.rng.choices(self.sentences, k=items))

    # --- code ------------------------------------------------------------------------

    def _fill(self, template: str) -> str:
        r = self.rng

        def slot(match: re.Match[str]) -> str:
            key = match.group(1)
            if key == "i":
                return r.choice(self.snake)
            if key == "C":
                return r.choice(self.classes)
            if key == "v":
                return r.choice(self.snake).split("_")[0]
            if key == "n":
                return self.number()
            if key == "s":
                return " ".join(r.choices(self.vocab, cum_weights=self.cum, k=r.randint(1, 5)))
            if key == "p":
                return self.path()
            if key == "m":
                return r.choice(self.modules)
            if key == "t":
                return r.choice(TYPES_PY)
            if key == "T":
                return r.choice(TYPES_TS)
            if key == "R":
                return r.choice(TYPES_RS)
            if key == "E":
                return r.choice(EXCEPTIONS)
            if key == "x":
                return r.choice(self.sentences)
            if key == "u":
                return self._nonascii()
            return match.group(0)

        return SLOT.sub(slot, template)

    def code_lines(self, lang: str, count: int) -> list[str]:
        """`count` lines of plausible source code in `lang` (py, ts, rs, go, c)."""
        r = self.rng
        table = CODE[lang]
        lines: list[str] = []
        depth = 0
        for _ in range(count):
            if r.random() < 0.07:
                lines.append("")
                depth = max(0, depth - 1) if r.random() < 0.5 else depth
                continue
            template = r.choice(table)
            line = ("    " * depth) + self._fill(template)
            lines.append(line)
            if line.rstrip().endswith((":", "{")):
                depth = min(depth + 1, 4)
            elif r.random() < 0.15:
                depth = max(0, depth - 1)
        return lines

    def _file(self) -> tuple[str, list[str]]:
        r = self.rng
        lang = r.choices(["py", "ts", "rs", "go", "c"], [60, 15, 10, 8, 7])[0]
        size = int(min(2000, r.lognormvariate(4.8, 0.8)))
        return lang, self.code_lines(lang, max(8, size))

    def file(self) -> tuple[str, list[str]]:
        """A source file: its language and lines."""
        return self.rng.choice(self.files)

    def numbered(self, lines: list[str], start: int, tab: str = "\t", width: int = 6) -> str:
        """`cat -n` of `lines`, the first numbered `start`."""
        return "\n".join(f"{n:>{width}}{tab}{line}" for n, line in enumerate(lines, start))

    def view_of_file(self, path: str) -> tuple[str, int, int, list[str]]:
        """What a file viewer shows of a random file: (text, first, last, lines)."""
        r = self.rng
        _, lines = self.file()
        if len(lines) <= 60 or r.random() < 0.1:
            first, last = 1, min(len(lines), 300)
        else:
            first = r.randint(1, len(lines) - 20)
            last = min(len(lines), first + r.randint(15, 80))
        shown = lines[first - 1 : last]
        head = f"Here's the result of running `cat -n` on {path}:\n"
        return head + self.numbered(shown, first) + "\n", first, last, shown

    # --- terminal output ---------------------------------------------------------------

    def _terminal(self) -> tuple[str, str, int]:
        """(command, output, exit code) of one plausible shell command."""
        r = self.rng
        kind = r.choices(
            [
                "pytest",
                "traceback",
                "compiler",
                "diff",
                "grep",
                "ls",
                "pip",
                "jest",
                "git",
                "script",
                "find",
            ],
            [26, 8, 10, 10, 12, 7, 5, 5, 6, 7, 4],
        )[0]
        return getattr(self, f"_out_{kind}")()

    def terminal(self) -> tuple[str, str, int]:
        """(command, output, exit code), picked from the pool."""
        return self.rng.choice(self.outputs)

    def _color(self, text: str, colour: str, on: bool) -> str:
        return f"{ANSI[colour]}{text}{ANSI['reset']}" if on else text

    def _out_pytest(self) -> tuple[str, str, int]:
        r = self.rng
        repo = r.choice(self.repos)
        colour = r.random() < 0.35
        files = [f"tests/test_{r.choice(self.snake)}.py" for _ in range(r.randint(1, 12))]
        failed = r.random() < 0.45
        lines = [
            "=" * 29 + " test session starts " + "=" * 30,
            f"platform linux -- Python 3.{r.randint(9, 13)}.{r.randint(0, 9)}, "
            f"pytest-{r.randint(7, 8)}.{r.randint(0, 4)}.{r.randint(0, 3)}, pluggy-1.5.0",
            f"rootdir: /workspace/{repo}",
            "configfile: pyproject.toml",
            f"plugins: hypothesis-6.{r.randint(90, 130)}.0, cov-5.0.0, anyio-4.4.0",
            f"collected {r.randint(3, 900)} items",
            "",
        ]
        fails = []
        for name in files:
            dots = "".join(r.choices(".....s.F", k=r.randint(1, 40)))
            if not failed:
                dots = dots.replace("F", ".")
            fails += [name] * dots.count("F")
            pct = r.randint(1, 100)
            mark = self._color(dots, "red" if "F" in dots else "green", colour)
            lines.append(f"{name} {mark}{' ' * max(1, 50 - len(name) - len(dots))}[{pct:3d}%]")
        if fails:
            lines += ["", "=" * 35 + " FAILURES " + "=" * 35]
            for name in fails[:4]:
                test = f"test_{r.choice(self.snake)}"
                lines += [
                    f"{'_' * 20} {test} {'_' * 20}",
                    "",
                    f"    def {test}({r.choice(['', 'tmp_path', 'client', 'monkeypatch'])}):",
                    *("        " + c.strip() for c in self.code_lines("py", r.randint(2, 6))),
                    f">       assert {r.choice(self.snake)}({r.choice(self.snake)}) == "
                    f"{self.number()}",
                    f"E       AssertionError: assert {self.number()} == {self.number()}",
                    f"E        +  where {self.number()} = {r.choice(self.snake)}('{self.word()}')",
                    "",
                    f"{name}:{r.randint(5, 600)}: AssertionError",
                ]
            lines.append("=" * 27 + " short test summary info " + "=" * 28)
            lines += [
                f"FAILED {n}::test_{r.choice(self.snake)} - AssertionError: assert "
                f"{self.number()} == {self.number()}"
                for n in fails[:8]
            ]
        passed = r.randint(1, 400)
        tally = f"{len(fails)} failed, {passed} passed" if fails else f"{passed} passed"
        tally += f" in {r.uniform(0.1, 90):.2f}s"
        bar = f"{'=' * 20} {tally} {'=' * 20}"
        lines.append(self._color(bar, "red" if fails else "green", colour))
        command = f"cd /workspace/{repo} && python -m pytest {' '.join(files[:2])} -q"
        if r.random() < 0.4:
            command += " 2>&1 | tail -80"
        return command, "\n".join(lines), 1 if fails else 0

    def _out_traceback(self) -> tuple[str, str, int]:
        r = self.rng
        lines = ["Traceback (most recent call last):"]
        for _ in range(r.randint(2, 9)):
            lines.append(
                f'  File "{self.path()}", line {r.randint(1, 900)}, in {r.choice(self.snake)}'
            )
            lines.append("    " + self.code_lines("py", 1)[0].strip())
        exc = r.choice(EXCEPTIONS)
        lines.append(f"{exc}: {r.choice(self.sentences)}")
        script = r.choice(self.snake)
        return f"python {script}.py --{r.choice(TECH)} {self.number()}", "\n".join(lines), 1

    def _out_compiler(self) -> tuple[str, str, int]:
        r = self.rng
        flavour = r.choice(["rustc", "gcc", "tsc", "mypy"])
        lines: list[str] = []
        errors = r.randint(1, 6)
        for _ in range(errors):
            file = self.path().rsplit("/", 2)[-1]
            line, col = r.randint(1, 900), r.randint(1, 80)
            code = self.code_lines(
                {"rustc": "rs", "gcc": "c", "tsc": "ts", "mypy": "py"}[flavour], 1
            )[0].strip()
            if flavour == "rustc":
                lines += [
                    f"error[E0{r.randint(200, 799)}]: mismatched types",
                    f"  --> src/{file}:{line}:{col}",
                    "   |",
                    f"{line:<3}|     {code}",
                    f"   |     {' ' * col}{'^' * r.randint(1, 12)} expected `{r.choice(TYPES_RS)}`"
                    f", found `{r.choice(TYPES_RS)}`",
                    "",
                ]
            elif flavour == "gcc":
                lines += [
                    f"{file}: In function ‘{r.choice(self.snake)}’:",  # noqa: RUF001
                    f"{file}:{line}:{col}: error: ‘{r.choice(self.snake)}’ undeclared (first use"  # noqa: RUF001
                    " in this function)",
                    f" {line:>4} |   {code}",
                    f"      |   {' ' * col}^~~~~~~~",
                ]
            elif flavour == "tsc":
                lines.append(
                    f"src/{file}({line},{col}): error TS{r.randint(2000, 2800)}: Argument of type "
                    f"'{r.choice(TYPES_TS)}' is not assignable to parameter of type "
                    f"'{r.choice(TYPES_TS)}'."
                )
            else:
                lines.append(
                    f"{file}:{line}: error: Incompatible types in assignment (expression has type "
                    f'"{r.choice(TYPES_PY)}", variable has type "{r.choice(TYPES_PY)}")  '
                    "[assignment]"
                )
        tail = {
            "rustc": f"error: could not compile `{r.choice(self.names)}` due to {errors} previous "
            "errors",
            "gcc": f"make: *** [Makefile:{r.randint(10, 90)}: build/{r.choice(self.snake)}.o] "
            "Error 1",
            "tsc": f"Found {errors} errors in {r.randint(1, errors)} files.",
            "mypy": f"Found {errors} errors in {r.randint(1, errors)} file (checked "
            f"{r.randint(5, 300)} source files)",
        }[flavour]
        lines.append(tail)
        command = {
            "rustc": "cargo build --release 2>&1 | head -100",
            "gcc": f"make -j2 {r.choice(self.names)}",
            "tsc": "npx tsc --noEmit -p .",
            "mypy": f"mypy {r.choice(self.repos)}/ --strict",
        }[flavour]
        return command, "\n".join(lines), r.choice([1, 2])

    def _out_diff(self) -> tuple[str, str, int]:
        r = self.rng
        lines = []
        for _ in range(r.randint(1, 4)):
            path = self.path().split("/", 3)[-1]
            lines += [
                f"diff --git a/{path} b/{path}",
                f"index {r.getrandbits(28):07x}..{r.getrandbits(28):07x} 100644",
                f"--- a/{path}",
                f"+++ b/{path}",
            ]
            for _ in range(r.randint(1, 4)):
                a = r.randint(1, 800)
                lines.append(
                    f"@@ -{a},{r.randint(3, 12)} +{a},{r.randint(3, 14)} @@ "
                    f"def {r.choice(self.snake)}("
                )
                for code in self.code_lines("py", r.randint(4, 16)):
                    lines.append(r.choice("  -+ ") + code)
        return "git diff", "\n".join(lines), 0

    def _out_grep(self) -> tuple[str, str, int]:
        r = self.rng
        name = r.choice(self.snake)
        lines = [
            f"{self.path().split('/', 2)[-1]}:{r.randint(1, 900)}:{self.code_lines('py', 1)[0]}"
            for _ in range(r.randint(1, 40))
        ]
        return f'grep -rn "{name}" . --include="*.py" | head -50', "\n".join(lines), 0

    def _out_ls(self) -> tuple[str, str, int]:
        r = self.rng
        lines = [f"total {r.randint(8, 400)}"]
        for _ in range(r.randint(3, 30)):
            mode = r.choice(["drwxr-xr-x", "-rw-r--r--", "-rwxr-xr-x", "-rw-------"])
            name = r.choice(self.snake) + r.choice(["", ".py", ".md", ".json", ".lock", "/"])
            lines.append(
                f"{mode}  {r.randint(1, 9)} openhands openhands {r.randint(0, 99999):>6} "
                f"Nov {r.randint(1, 30):>2} {r.randint(0, 23):02}:{r.randint(0, 59):02} "
                f"{name}"
            )
        return f"ls -la /workspace/{r.choice(self.repos)}", "\n".join(lines), 0

    def _out_pip(self) -> tuple[str, str, int]:
        r = self.rng
        lines = []
        for pkg in r.sample(self.packages, r.randint(1, 8)):
            version = f"{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)}"
            size = r.uniform(10, 900)
            lines += [
                f"Collecting {pkg}>={version}",
                f"  Downloading {pkg}-{version}-py3-none-any.whl ({size:.1f} kB)",
                f"     {'━' * 40} {size:.1f}/{size:.1f} kB {r.uniform(0.5, 40):.1f} MB/s eta "
                "0:00:00",
            ]
        lines.append("Installing collected packages: " + ", ".join(r.sample(self.packages, 3)))
        lines.append("Successfully installed " + " ".join(r.sample(self.packages, 3)))
        return f"pip install -e '.[{r.choice(['dev', 'test'])}]'", "\n".join(lines), 0

    def _out_jest(self) -> tuple[str, str, int]:
        r = self.rng
        failed = r.random() < 0.4
        lines = [
            f"{'FAIL' if failed else 'PASS'} src/{r.choice(self.snake)}.test.ts "
            f"({r.uniform(0.2, 9):.3f} s)"
        ]
        for _ in range(r.randint(2, 20)):
            ok = not failed or r.random() < 0.8
            lines.append(
                f"  {'✓' if ok else '✕'} {r.choice(self.sentences)[:70]} ({r.randint(1, 300)} ms)"
            )
        lines.append(
            f"Tests:       {r.randint(0, 5) if failed else 0} failed, {r.randint(3, 90)} passed"
        )
        return "npm test -- --runInBand", "\n".join(lines), 1 if failed else 0

    def _out_git(self) -> tuple[str, str, int]:
        r = self.rng
        lines = []
        for _ in range(r.randint(2, 12)):
            lines += [
                f"commit {r.getrandbits(160):040x}",
                f"Author: {r.choice(self.names).capitalize()} {r.choice(ACCENTED[:12])} "
                f"<{r.choice(self.names)}@{r.choice(self.names)}.dev>",
                f"Date:   Mon Nov {r.randint(1, 30)} {r.randint(0, 23):02}:{r.randint(0, 59):02}"
                f":12 2026 +0100",
                "",
                f"    {r.choice(self.sentences)}",
                "",
            ]
        return "git log -n 10", "\n".join(lines), 0

    def _out_script(self) -> tuple[str, str, int]:
        r = self.rng
        lines = []
        for _ in range(r.randint(2, 30)):
            x = r.random()
            if x < 0.3:
                lines.append(
                    f'{{"{r.choice(self.snake)}": {self.number()}, '
                    f'"{r.choice(TECH)}": "{r.choice(self.sentences)[:40]}"}}'
                )
            elif x < 0.5:
                pct = r.randint(0, 100)
                bar = "█" * (pct // 5) + "░" * (20 - pct // 5)
                lines.append(f"\r{r.choice(TECH)}: {pct:3d}%|{bar}| {pct}/100")
            elif x < 0.7:
                lines.append(
                    f"{r.choice(['INFO', 'DEBUG', 'WARNING', 'ERROR'])} "
                    f"[{r.choice(self.modules)}] {r.choice(self.sentences)}"
                )
            else:
                lines.append(r.choice(self.sentences))
        return f"python scripts/{r.choice(self.snake)}.py", "\n".join(lines), 0

    def _out_find(self) -> tuple[str, str, int]:
        r = self.rng
        paths = sorted({self.path() for _ in range(r.randint(2, 60))})
        return f"find . -name '*.{r.choice(['py', 'ts', 'rs'])}' | head -60", "\n".join(paths), 0

    # --- web pages ---------------------------------------------------------------------

    def _page(self) -> str:
        r = self.rng
        target = r.randint(10_000, 30_000)
        parts = [f"# {r.choice(self.classes)} — {r.choice(self.sentences)[:60]}", ""]
        size = 0
        while size < target:
            x = r.random()
            if x < 0.45:
                piece = self.prose(r.randint(2, 8))
            elif x < 0.6:
                piece = f"## {r.choice(self.sentences)[:50]}"
            elif x < 0.72:
                lang = r.choice(["py", "ts", "rs"])
                fence = {"py": "python", "ts": "typescript", "rs": "rust"}[lang]
                piece = f"```{fence}\n" + "\n".join(self.code_lines(lang, r.randint(4, 25)))
                piece += "\n```"
            elif x < 0.85:
                piece = "\n".join(
                    f"- [{r.choice(self.sentences)[:40]}]({self.url()})"
                    for _ in range(r.randint(2, 10))
                )
            else:
                cols = r.randint(2, 5)
                head = [r.choice(TECH) for _ in range(cols)]
                rows = [
                    " | ".join(self.number() for _ in range(cols)) for _ in range(r.randint(2, 12))
                ]
                piece = "| " + " | ".join(head) + " |\n|" + "---|" * cols + "\n"
                piece += "\n".join(f"| {row} |" for row in rows)
            parts.append(piece)
            parts.append("")
            size += len(piece) + 1
        return "\n".join(parts)

    def page(self) -> str:
        """A 10-30 KB documentation page as a browser's text."""
        return self.rng.choice(self.pages)

    # --- edits and summaries -----------------------------------------------------------

    def edit(self) -> tuple[str, str, list[str], int]:
        """(old, new, numbered snippet lines after the edit, first line number)."""
        r = self.rng
        _, lines = self.file()
        start = r.randint(0, max(0, len(lines) - 12))
        old = lines[start : start + r.randint(1, 6)]
        new = list(old)
        for i in range(len(new)):
            if r.random() < 0.4:
                new[i] = self._fill(r.choice(CODE["py"])) if new[i].strip() else new[i]
        if r.random() < 0.5:
            new.insert(r.randint(0, len(new)), "    " + self._fill(r.choice(CODE["py"])))
        snippet = lines[max(0, start - 3) : start] + new + lines[start + len(old) : start + 16]
        return "\n".join(old), "\n".join(new), snippet, max(1, start - 3)

    def summary(self) -> str:
        """A rolling summary as an LLM summarising condenser writes one (1-3 KB)."""
        r = self.rng
        return "\n".join(
            [
                f"USER_CONTEXT: {self.prose(2)}",
                "",
                "COMPLETED:",
                self.bullets(r.randint(2, 6)),
                "PENDING:",
                self.bullets(r.randint(1, 4)),
                f"CURRENT_STATE: {r.choice(self.sentences)}",
                f"CODE_STATE: {', '.join(self.path() for _ in range(r.randint(1, 4)))}",
                f"TESTS: {r.choice(self.sentences)}",
                f"CHANGES: {self.prose(2)}",
                f"DEPS: {', '.join(r.sample(self.packages, 3))}",
                f"VERSION_CONTROL_STATUS: branch {r.choice(self.snake)}, "
                f"{r.randint(0, 9)} commits ahead",
            ]
        )

    def system_prompt(self, chars: int = 9000) -> str:
        """An agent's system prompt: sections of rules, about `chars` long."""
        r = self.rng
        parts = ["You are a careful coding agent working in a sandboxed workspace."]
        while sum(map(len, parts)) < chars:
            tag = r.choice(TECH).upper()
            parts.append(f"\n<{tag}>\n{self.bullets(r.randint(3, 8))}\n</{tag}>")
        return "\n".join(parts)

    def task(self) -> str:
        """A user's task: an issue description with a code block."""
        r = self.rng
        code = "\n".join(self.code_lines("py", r.randint(3, 12)))
        return (
            f"I've uploaded a repository in /workspace/{r.choice(self.repos)}. Consider this "
            f"issue:\n\n<issue_description>\n{self.prose(r.randint(3, 10))}\n\n```python\n{code}\n"
            f"```\n</issue_description>\n\nMake the minimal changes to non-test files so that the"
            " issue is resolved."
        )

    def base64ish(self, chars: int) -> str:
        """Opaque encrypted or signed bytes as clients store them (base64 text)."""
        raw = self.rng.randbytes(chars * 3 // 4 + 3)
        return base64.urlsafe_b64encode(raw).decode()[:chars]


# Code line templates: {i} identifier, {C} class, {v} short variable, {n} number,
# {s} words, {p} path, {m} module, {t}/{T}/{R} a Python/TypeScript/Rust type,
# {E} exception, {x} a sentence, {u} a non-ASCII piece.
CODE: dict[str, list[str]] = {
    "py": [
        "def {i}(self, {v}: {t}, {i}: {t} = None) -> {t}:",
        "def {i}({v}: {t}) -> {t}:",
        "class {C}({C}):",
        '"""{x}"""',
        "# {x}",
        "{v} = {i}({v}, {i}={n})",
        "{v} = self.{i}.get('{v}', {n})",
        "if {v} is None or len({v}) > {n}:",
        "for {v}, {i} in enumerate(self.{i}):",
        'raise {E}(f"{s}: {{v}!r}")',
        "return {'{v}': {v}, '{i}': [{n}, {n}]}",
        "from {m}.{m} import {C}, {i}",
        "import {m}",
        "with open('{p}', encoding='utf-8') as {v}:",
        '{v} = re.compile(r"^\\s*(\\w+)\\s*=\\s*(.*)$")',
        'logger.info("{s} %s → %d", {v}, {n})',
        "{v}.append({C}({v}, {i}={i}))",
        'assert {v} == {n}, f"expected {n}, got {{v}}"',
        "except {E} as exc:",
        "try:",
        "else:",
        "return {v}",
        "yield from self.{i}({v})",
        "@pytest.mark.parametrize('{v}', [{n}, {n}, '{s}'])",
        "@property",
        "self.{i} = {i}",
        "{v} = '\\t'.join({v}) + '\\n'",
        'print(f"{s} {u} {{v}:.2f}")',
        'path = Path("C:\\\\Users\\\\{v}\\\\AppData\\\\{m}")',
        """data = json.loads('{"{v}": "{s}", "{i}": {n}}')""",
    ],
    "ts": [
        "export function {i}({v}: {T}): {T} {",
        "const {v} = await {v}.{i}('{p}');",
        "if (!{v} || {v}.length > {n}) {",
        "return { {v}, {i}: {n} };",
        "}",
        "// {x}",
        "import { {C} } from './{m}';",
        "throw new Error(`{s}: ${{v}}`);",
        "export class {C} extends {C} {",
        "{v}.forEach(({v}) => console.log(`{s} {u}`, {v}));",
        """const {v}: {T} = JSON.parse('{"{v}": {n}}');""",
    ],
    "rs": [
        "pub fn {i}(&self, {v}: {R}) -> {R} {",
        "let {v} = self.{i}(&{v})?;",
        "match {v} {",
        "Some({v}) => {i}({v}),",
        'None => return Err(Error::new("{s}")),',
        "}",
        "// {x}",
        "use crate::{m}::{{C}, {i}};",
        "impl {C} for {C} {",
        "#[derive(Debug, Clone, PartialEq)]",
        'println!("{s} {:?} {u}", {v});',
        "let {v}: {R} = {v}.iter().map(|x| x * {n}).collect();",
    ],
    "go": [
        "func ({v} *{C}) {C}({v} {R}) error {",
        "if err != nil {",
        'return fmt.Errorf("{s}: %w", err)',
        "}",
        "{v} := {v}.{C}({n})",
        "// {x}",
        'log.Printf("{s} %v", {v})',
        "for _, {v} := range {v} {",
    ],
    "c": [
        "static int {i}(struct {i} *{v}, size_t {v})",
        "{",
        "}",
        "if ({v} == NULL || {v}->{i} > {n})",
        "return -{n};",
        "/* {x} */",
        '#include "{m}.h"',
        'fprintf(stderr, "{s}: %s\\n", {v});',
        "{v} = malloc(sizeof(*{v}) * {n});",
    ],
}
