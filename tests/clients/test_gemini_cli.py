"""What Gemini CLI writes and sends, from the pinned client (the oracle of a dialect to
come: issue "a fifth dialect").

Gemini CLI 0.61.0 keeps a session as JSONL under `~/.gemini/tmp/<project>/chats/`: a
header line, a record per message (a record that repeats an id replaces that
message where it stood), `{"$set": ...}` metadata (a `$set` of `messages` replaces the
whole list) and `{"$rewindTo": id}`. These tests make sessions with the real client
against the scripted Gemini API server and hold what it wrote and what it sends when
it resumes; condense's replay of each session (`view --format messages`) must be what
the client sent when it resumed it, mapped to chat messages by `chat` below (the
new prompt left out).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.clients.install import Clients
from tests.clients.resume import gemini_run
from tests.clients.servers import GeminiServer
from tests.clients.tmux import Screen, screen
from tests.conftest import CONDENSE

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run Gemini CLI",
)

MODEL = ("-m", "gemini-2.5-pro")  # a model named: no routing call before each turn
READ = {"functionCall": {"name": "read_file", "args": {"file_path": "notes.txt"}}}


def records(session: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]


def condense(*args: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(CONDENSE), *map(str, args)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done


def chat(contents: list[dict[str, Any]], context: bool = True) -> list[dict[str, Any]]:
    """What the client sent as chat messages: a model turn an assistant message
    (text, calls), a user turn its function responses as tool messages, then its
    text; the last text part (the new prompt) left out, and the first (the context
    the client writes) unless `context`."""
    contents = json.loads(json.dumps(contents))
    contents[-1]["parts"].pop()
    if not context:
        contents[0]["parts"].pop(0)
    out: list[dict[str, Any]] = []
    for content in contents:
        parts = content["parts"]
        texts = [{"type": "text", "text": p["text"]} for p in parts if p.get("text")]
        said: Any = texts[0]["text"] if len(texts) == 1 else texts
        if content["role"] == "model":
            message = {"role": "assistant", "content": said or None}
            calls = [p["functionCall"] for p in parts if "functionCall" in p]
            if calls:
                message["tool_calls"] = [
                    {
                        "id": call.get("id", ""),
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": json.dumps(
                                call.get("args", {}), separators=(",", ":"), ensure_ascii=False
                            ),
                        },
                    }
                    for call in calls
                ]
            out.append(message)
            continue
        for part in parts:
            if "functionResponse" in part:
                answer = part["functionResponse"]
                output = answer["response"].get("output")
                if not isinstance(output, str):
                    output = json.dumps(answer["response"], separators=(",", ":"))
                out.append(
                    {
                        "role": "tool",
                        "content": output,
                        "tool_call_id": answer.get("id", ""),
                        "name": answer["name"],
                    }
                )
        if texts:
            out.append({"role": "user", "content": said})
    return out


def resumed(clients: Clients, tmp: Path, prompt: str, reply: str) -> tuple[Path, dict[str, Any]]:
    """Resume the last session under `tmp` with `prompt`; the session file and the one
    request the client made (the model answering `reply`)."""
    with GeminiServer() as server:
        server.reply(reply)
        run = gemini_run(clients.gemini, tmp, server, prompt, True, MODEL)
        assert run.returncode == 0, run.stderr[-2000:]
        [turn] = server.model_requests()
    return run.session, turn


def replayed(session: Path) -> list[dict[str, Any]]:
    """condense's messages for `session`, read before the client resumes it."""
    messages: list[dict[str, Any]] = json.loads(condense("view", session, "-f", "messages").stdout)
    return messages


@pytest.fixture
def session(clients: Clients, gemini: GeminiServer, tmp_path: Path) -> Path:
    """A session of one turn with a tool call: the model reads notes.txt, then answers."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("the parser lives in src/parse.py\n")
    gemini.reply(READ, "The parser is in src/parse.py.")
    run = gemini_run(
        clients.gemini, tmp_path, gemini, "Where is the parser?", extra=(*MODEL, "--yolo")
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "The parser is in src/parse.py." in run.stdout
    return run.session


def test_the_client_writes_a_header_messages_and_set_records(session: Path) -> None:
    written = records(session)
    assert set(written[0]) >= {"sessionId", "projectHash", "startTime", "lastUpdated", "kind"}
    assert written[0]["kind"] == "main" and session.name.startswith("session-")
    assert [m["type"] for m in written[1]["$set"]["messages"]] == ["user"]  # its context
    messages = [r for r in written if "id" in r]
    assert (messages[0]["type"], messages[0]["content"]) == (
        "user",
        [{"text": "Where is the parser?"}],
    )
    call, again, response, answer = messages[1:]
    # the model's message is written when it arrives, then again (same id) with its call
    assert call["id"] == again["id"] and "toolCalls" not in call
    [tool] = again["toolCalls"]
    assert (tool["name"], tool["args"], tool["status"]) == (
        "read_file",
        {"file_path": "notes.txt"},
        "success",
    )
    output = tool["result"][0]["functionResponse"]["response"]["output"]
    assert output == "the parser lives in src/parse.py\n"
    assert response["type"] == "user" and response["content"] == tool["result"]
    assert (answer["type"], answer["content"], answer["model"]) == (
        "gemini",
        "The parser is in src/parse.py.",
        "gemini-2.5-pro",
    )
    assert answer["tokens"]["input"] == GeminiServer.prompt_tokens
    assert all(set(r) == {"$set"} for r in written if "id" not in r and "sessionId" not in r)


def test_a_sessions_project_is_the_folder_the_client_wrote_beside_its_chats(
    session: Path, tmp_path: Path
) -> None:
    """0.61.0 keeps a project's sessions in `~/.gemini/tmp/<slug>/chats/` and the
    project's path in `<slug>/.project_root`: `search` and `cost --by project` name the
    project by that path, not by the `chats` folder every session is in."""
    work = tmp_path / "work"
    assert (session.parent.parent / ".project_root").read_text().strip() == str(work)
    found = condense("search", "parser", session.parent, "-f", "json").stdout
    hits = json.loads(found)["hits"]
    assert hits and {h["project"] for h in hits} == {str(work)}
    rows = json.loads(condense("cost", session.parent, "--by", "project", "-f", "json").stdout)
    assert [row["project"] for row in rows["rows"]] == [str(work)]


def test_on_resume_the_client_rewrites_the_list_and_sends_every_turn(
    session: Path, clients: Clients, tmp_path: Path
) -> None:
    before = len(records(session))
    expected = replayed(session)
    resumed_session, turn = resumed(clients, tmp_path, "And the tests?", "The tests are in tests/.")
    assert resumed_session == session
    added = records(session)[before:]
    assert "sessionId" in added[0]  # a header again
    # its context first (as in a new session), then the whole list it resumed
    lists = [r["$set"]["messages"] for r in added if "messages" in r.get("$set", {})]
    assert [m["type"] for m in lists[0]] == ["user"]
    rewritten = lists[-1]
    assert [m["type"] for m in rewritten] == ["user", "user", "gemini", "user", "user", "gemini"]
    assert rewritten[3]["id"].endswith("_response")  # the call's result, as a message of its own
    sent = turn["contents"]
    assert [c["role"] for c in sent] == ["user", "model", "user", "model", "user"]
    assert sent[0]["parts"][1] == {"text": "Where is the parser?"}  # after its context
    assert sent[1]["parts"][0]["functionCall"]["name"] == "read_file"
    # the result is sent twice: from the call's message and from the user's (0.61.0)
    assert [list(p) for p in sent[2]["parts"]] == [["functionResponse"], ["functionResponse"]]
    assert sent[3]["parts"] == [{"text": "The parser is in src/parse.py."}]
    assert sent[4]["parts"] == [{"text": "And the tests?"}]
    # condense replays the session as the client resumed it, duplicate result included
    assert expected == chat(sent)
    # and the list the client wrote again (its result as a message of its own) reads
    # as the same conversation: the messages it will send next time
    assert replayed(session)[:-2] == expected
    shown = condense("view", session).stdout
    assert shown.count("observation:read_file (answers #3)") == 2


def test_a_compression_is_a_set_of_the_whole_list_with_a_snapshot_and_new_ids(
    clients: Clients, tmp_path: Path
) -> None:
    """Past half the model's window (its last prompt's count, 0.5 by default), the
    client compresses before its next request in the same run: it asks for a
    `<state_snapshot>` and writes `$set` of the whole list: its context (same id), the
    snapshot as a user message and its own acknowledgement, then what it kept, every
    kept message under a new id."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("the parser lives in src/parse.py\n")
    with GeminiServer() as server:
        server.reply("Noted.")
        first = gemini_run(clients.gemini, tmp_path, server, "Keep the API stable.", extra=MODEL)
        assert first.returncode == 0, first.stderr[-2000:]
    with GeminiServer() as server:
        server.prompt_tokens = 990_000  # of gemini-2.5-pro's 1,048,576
        server.side_answer = "<state_snapshot>SCRIPTED SNAPSHOT</state_snapshot>"
        server.reply(READ, "Done.")
        run = gemini_run(
            clients.gemini, tmp_path, server, "Read the notes.", True, (*MODEL, "--yolo")
        )
        assert run.returncode == 0, run.stderr[-2000:]
        [_, after] = server.model_requests()
    assert run.session == first.session  # resumed: the same file
    written = records(run.session)
    ids_before = {r["id"] for r in written if "id" in r and r["type"] == "user"}
    lists = [r["$set"]["messages"] for r in written if "messages" in r.get("$set", {})]
    compressed = lists[-1]
    assert [m["type"] for m in compressed] == ["user", "user", "gemini", "user", "gemini"]
    assert compressed[0]["id"] == lists[0][0]["id"]  # the context keeps its id
    assert compressed[1]["content"] == [
        {"text": "<state_snapshot>SCRIPTED SNAPSHOT</state_snapshot>"}
    ]
    assert compressed[3]["content"] == [{"text": "Read the notes."}]
    assert compressed[3]["id"] not in ids_before  # kept, under a new id
    assert not any("Keep the API stable." in json.dumps(m) for m in compressed)
    assert "Keep the API stable." not in json.dumps(after["contents"])
    assert "SCRIPTED SNAPSHOT" in json.dumps(after["contents"])
    # condense reads the compression: what it forgot (the task and the answer, by the
    # numbers they had), its snapshot, and each kept message by its original's number
    stats = json.loads(condense("stats", run.session, "-f", "json", "--no-tokens").stdout)
    [row] = stats["condensations"]
    assert (row["forgotten_events"], row["forgotten_ranges"]) == (2, [[2, 3]])
    assert row["threshold"]["fired"] == "at" and row["threshold"]["threshold"] == 524_288
    view = condense("view", run.session).stdout
    assert "⋯ 2 events forgotten (ids 2..3)" in view and "#4 user action:message" in view
    audit = condense("audit", run.session, "-f", "json").stdout
    assert "Keep the API stable." in audit
    # weighed by the calls around it: the client records no call of its own
    [weighed] = [c["economics"] for c in json.loads(audit)["condensations"]]
    assert weighed["own_call"]["recorded"] == weighed["own_call"]["estimated"] == 0
    assert weighed["calls_after"] == 1  # it compressed after the read, before the answer
    # what it sends when it resumes the compressed session is what condense replays
    expected = replayed(run.session)
    _, turn = resumed(clients, tmp_path, "What next?", "Fine.")
    assert expected == chat(turn["contents"])


def test_the_client_resumes_what_condense_run_appended(
    session: Path, clients: Clients, tmp_path: Path
) -> None:
    """`condense run` writes a `$set` of the condensed list, as a compression does;
    the client loads it as its own and sends condense's view when it resumes."""
    config = tmp_path / "config.toml"
    config.write_text('[condenser]\ntype = "amortized"\nmax_size = 4\nkeep_first = 1\n')
    done = condense("run", session, "--config", config)
    assert "forgot 2 events (ids 3..4)" in done.stderr
    expected = replayed(session)
    assert "the parser lives in" not in json.dumps(expected)  # the read, forgotten
    resumed_session, turn = resumed(clients, tmp_path, "And the tests?", "The tests are in tests/.")
    assert resumed_session == session
    assert expected == chat(turn["contents"])
    assert "Where is the parser?" in json.dumps(turn["contents"])  # the task, kept
    # the client wrote the list it loaded again: condense reads one condensation
    stats = json.loads(condense("stats", session, "-f", "json", "--no-tokens").stdout)
    assert [r["forgotten_ranges"] for r in stats["condensations"]] == [[[3, 4]]]


def legacy_document(work: Path) -> dict[str, Any]:
    """A session as Gemini CLI 0.20.2 wrote it (one JSON document, rewritten whole):
    the shape of one that release wrote against the scripted server, a failed call's
    result kept in the model's message."""
    call = "read_file-1795874826676-662d6b36fcc84"
    result = {"id": call, "name": "read_file", "response": {"error": "params must have file_path"}}
    tool = {"id": call, "name": "read_file", "args": {"absolute_path": str(work / "notes.txt")}}
    tool |= {"result": [{"functionResponse": result}], "status": "error"}
    at = "2025-11-20T10:00:00.000Z"
    tokens = {"input": 100, "output": 1, "cached": 0, "thoughts": 0, "tool": 0, "total": 101}
    return {
        "sessionId": "3e755308-0c41-4a8e-9f55-2b9f1c3e8a10",
        "projectHash": "7f8ec86da696a67f9f8f7c62355835f65fa08288502e206a142d25bc6653acf3",
        "startTime": at,
        "lastUpdated": at,
        "messages": [
            {"id": "u1", "timestamp": at, "type": "user", "content": "Where is the parser?"},
            {"id": "g1", "timestamp": at, "type": "gemini", "content": "", "toolCalls": [tool]}
            | {"thoughts": [], "model": "gemini-2.5-pro", "tokens": tokens},
            {"id": "g2", "timestamp": at, "type": "gemini", "content": "In src/parse.py."}
            | {"thoughts": [], "model": "gemini-2.5-pro", "tokens": tokens},
        ],
    }


def test_a_session_of_one_json_document_resumes_as_condense_reads_it(
    clients: Clients, tmp_path: Path
) -> None:
    """2025 releases kept a session as one JSON document; the pinned client still
    resumes one, and sends what condense replays of it. condense does not append to
    such a file (the client rewrites it whole)."""
    chats = tmp_path / "home" / ".gemini" / "tmp" / "work" / "chats"
    chats.mkdir(parents=True)
    session = chats / "session-2025-11-20T10-00-3e755308.json"
    session.write_text(json.dumps(legacy_document(tmp_path / "work"), indent=2))
    expected = replayed(session)
    refused = subprocess.run(
        [str(CONDENSE), "run", str(session), "--type", "amortized"], capture_output=True, text=True
    )
    assert refused.returncode == 2 and "one JSON document" in refused.stderr
    _, turn = resumed(clients, tmp_path, "And the tests?", "Fine.")
    assert "Where is the parser?" in json.dumps(turn["contents"])  # it resumed this one
    assert expected == chat(turn["contents"], context=False)  # the client adds its context


@contextmanager
def interactive(clients: Clients, tmp: Path, server: GeminiServer) -> Iterator[Screen]:
    """Gemini CLI's own screen, in tmux, in the HOME and project under `tmp`."""
    from tests.clients.resume import GEMINI_SETTINGS

    home, work = tmp / "home", tmp / "work"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    work.mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS))
    env = {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "GEMINI_API_KEY": "fake",
        "GOOGLE_GEMINI_BASE_URL": server.url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    node = shutil.which("node") or "node"
    with screen([node, str(clients.gemini), *MODEL], env, work) as ui:
        ui.wait("Type your message")
        yield ui
        ui.type("/quit")
        time.sleep(1)


def test_a_rewind_through_the_clients_screen_drops_the_turns_as_condense_reads(
    clients: Clients, gemini: GeminiServer, tmp_path: Path
) -> None:
    """`/rewind` (interactive only, driven in tmux) writes `$rewindTo` the message
    chosen, then a `$set` of what is left, without its context; the turns after it
    are gone from what the client sends, and from condense's view."""
    home = tmp_path / "home"
    gemini.reply("Answer one.", "Answer two.", "Answer three.")
    with interactive(clients, tmp_path, gemini) as ui:
        for question, answer in (("First question", "Answer one."), ("Second", "Answer two.")):
            ui.type(question)
            ui.wait(answer)
        ui.type("/rewind")
        ui.wait("Stay at current position")
        ui.keys("Up")  # the newest message: "Second"
        ui.keys("Enter")
        ui.wait("Rewind conversation")
        ui.keys("Enter")
        ui.keys("C-u")  # the client puts the message rewound to back in the prompt
        ui.type("Third question")
        ui.wait("Answer three.")
    [session] = (home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl")
    written = records(session)
    assert any("$rewindTo" in r for r in written)
    sent = gemini.model_requests()[-1]["contents"]
    assert "Second" not in json.dumps(sent) and "Answer two." not in json.dumps(sent)
    expected = replayed(session)
    said = [m["content"] for m in expected]
    assert said == ["First question", "Answer one.", "Third question", "Answer three."]
    shown = condense("view", session).stdout  # by the numbers they were written with
    assert "#2 user action:message" in shown and "#6 user action:message" in shown
    stats = json.loads(condense("stats", session, "-f", "json", "--no-tokens").stdout)
    assert stats["condensations"] == [] and stats["view"]["forgotten_events"] == 0
    # the client dropped its context with the rewind; resumed, it writes a new one
    _, turn = resumed(clients, tmp_path, "And now?", "Fine.")
    assert expected == chat(turn["contents"], context=False)


def test_a_checkpoint_restored_is_no_compression_and_its_first_turn_is_dropped_on_resume(
    clients: Clients, gemini: GeminiServer, tmp_path: Path
) -> None:
    """`/chat resume TAG` writes the checkpoint's turns as new messages (the first one
    joined to the client's context) and sets the list to them: what it dropped the
    user took back, nothing is forgotten. Resumed, the client drops that first
    message whole (it starts with its context), the user's first words with it."""
    gemini.reply("Answer one.", "Answer two.", "Answer three.")
    with interactive(clients, tmp_path, gemini) as ui:
        ui.type("First question")
        ui.wait("Answer one.")
        ui.type("/chat save one")
        ui.wait("checkpoint saved")
        ui.type("Second")
        ui.wait("Answer two.")
        ui.type("/chat resume one")
        ui.wait_gone("Answer two.")  # the screen shows the checkpoint's conversation
        ui.keys("C-u")
        ui.type("Third question")
        ui.wait("Answer three.")
    [session] = (tmp_path / "home" / ".gemini" / "tmp").glob("*/chats/session-*.jsonl")
    assert "Second" not in json.dumps(gemini.model_requests()[-1]["contents"])
    stats = json.loads(condense("stats", session, "-f", "json", "--no-tokens").stdout)
    assert stats["condensations"] == [] and stats["view"]["forgotten_events"] == 0
    assert "⋯" not in condense("view", session).stdout  # no run of forgotten events
    expected = replayed(session)
    assert "First question" not in json.dumps(expected)
    changes = json.loads(condense("stats", session, "-f", "json").stdout)["messages"]
    assert "drops a message that starts with its context" in json.dumps(changes)
    _, turn = resumed(clients, tmp_path, "And now?", "Fine.")
    assert "First question" not in json.dumps(turn["contents"])
    assert expected == chat(turn["contents"])
