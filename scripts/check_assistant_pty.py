#!/usr/bin/env python3
"""Drive g2c-assistant through a pseudo-terminal, as a person at a terminal would.

Usage, from the repository root:

    python3 scripts/check_assistant_pty.py [build dir]      (default build/reference)

Three sessions of `bin/g2c-assistant`, each read and typed through a pseudo-terminal (so the
program sees a real terminal: line discipline, echo, Ctrl-D):

1. SmolLM2-135M-Instruct in process (skipped, with a note, when its file is missing): /help, two
   turns (each answered with the footer of steps and tool calls; no waiting line left on the
   screen), the note that the prompt shows
   only the last --history messages, /history, /save to a file (read back: the messages, the
   config and both turns), /save to a folder that does not exist (refused, the session goes on),
   a third turn whose answer arrives in pieces while it is generated and is shown once, /reset,
   /quit (exit status 0).
2. A server that is not there (--url on a closed port): a turn fails with "(error: …)", the
   session goes on, /history still holds what was typed, Ctrl-D ends it (exit status 0).
3. --once against the same missing server: exit status 1 and the reason on stderr.

Prints one line per problem and then `assistant-pty: N checks, P problems`; exit status 1 when
there is a problem. Standard library only.
"""

from __future__ import annotations

import json
import os
import pty
import select
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 180.0  # seconds for one answer: loading the model and a turn of several steps


class Session:
    """A program on the slave side of a pty; we read and type on the master side."""

    def __init__(self, argv: list[str]) -> None:
        self.master, slave = pty.openpty()
        env = dict(os.environ, TERM="dumb")
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                                        env=env, close_fds=True)
        os.close(slave)
        self.seen = ""  # everything read so far
        self.chunks: list[str] = []  # each read, as it came

    def expect(self, text: str, timeout: float = TIMEOUT) -> str:
        """Reads until `text` appears after what earlier expects consumed; returns what was read
        up to and including it. AssertionError (with the tail of the output) on timeout or EOF."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {text!r}; last output: "
                                     f"{self.seen[-400:]!r}")
            ready, _, _ = select.select([self.master], [], [], remaining)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the program exited and the pty closed
                chunk = b""
            if not chunk:
                raise AssertionError(f"the program ended before {text!r}; last output: "
                                     f"{self.seen[-400:]!r}")
            piece = chunk.decode("utf-8", "replace").replace("\r\n", "\n")
            self.chunks.append(piece)
            self.seen += piece
        at = self.seen.index(text) + len(text)
        read, self.seen = self.seen[:at], self.seen[at:]
        return read

    def type(self, line: str) -> None:
        os.write(self.master, line.encode())

    def finish(self, timeout: float = 30.0) -> int:
        try:
            return self.process.wait(timeout=timeout)
        finally:
            os.close(self.master)


ERASE_LINE = "\r\x1b[K"  # what the waiting line writes to redraw or clear its line


def on_screen(text: str) -> str:
    """`text` as the terminal shows it: on each line, what a line erase left standing."""
    return "\n".join(line.rsplit(ERASE_LINE, 1)[-1] for line in text.split("\n"))


def closed_port() -> int:
    """A port on 127.0.0.1 with nothing listening (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main(argv: list[str]) -> int:
    build = Path(argv[1] if len(argv) > 1 else ROOT / "build" / "reference")
    program = build / "bin" / "g2c-assistant"
    if not program.exists():
        print(f"assistant-pty: {program} is missing (cmake --build {build} --target g2c-assistant)")
        return 1
    problems: list[str] = []
    checks = 0

    def check(ok: bool, what: str) -> None:
        nonlocal checks
        checks += 1
        if not ok:
            problems.append(what)

    model = Path(os.environ.get("G2C_SMOLLM2_GGUF", ROOT / "artifacts" / "pretrained" /
                                "SmolLM2-135M-Instruct" / "SmolLM2-135M-Instruct.Q4_1.gguf"))
    # 1. A whole session with the model in process.
    if not model.exists():
        print(f"assistant-pty: session 1 skipped, {model} is missing (scripts/setup.sh fetches it)")
    else:
        with tempfile.TemporaryDirectory() as folder:
            session = Session([str(program), "--threads", "2", "--max-steps", "2",
                               "--max-new-tokens", "24", "--history", "2"])
            try:
                check("g2c-assistant ready" in session.expect("? "), "no banner before the prompt")
                session.type("/help\n")
                check("/save <path>" in session.expect("? "), "/help does not list /save")
                session.type("What is 13 + 28?\n")
                first = session.expect("? ")
                check("steps," in first and "tool calls" in first, f"turn 1 footer: {first!r}")
                # A turn silent for over a second (the model reading its prompt) shows a waiting
                # line; whether this one was depends on the machine's speed, but none may be left
                # on the screen (tests/core checks the line itself on a terminal).
                check("(thinking" not in on_screen(first),
                      f"a waiting line left on the screen: {on_screen(first)!r}")
                session.type("And what is 2 + 2?\n")
                second = session.expect("? ")
                check("steps," in second, f"turn 2 footer: {second!r}")
                check("shows the last 2 of 4 messages" in second,
                      f"no note that earlier messages left the prompt: {second!r}")
                session.type("/history\n")
                history = session.expect("? ")
                check("user: What is 13 + 28?" in history and "user: And what is 2 + 2?" in history,
                      f"/history: {history!r}")
                saved = Path(folder) / "chat.json"
                session.type(f"/save {saved}\n")
                check("(saved to" in session.expect("? "), "/save did not say it saved")
                transcript = json.loads(saved.read_text(encoding="utf-8"))
                roles = [message["role"] for message in transcript["messages"]]
                check(roles == ["user", "assistant", "user", "assistant"], f"saved roles {roles}")
                check(len(transcript["turns"]) == 2 and transcript["config"]["max_steps"] == 2,
                      f"saved turns/config {transcript['turns']!r} {transcript['config']!r}")
                session.type(f"/save {folder}/no/such/folder/chat.json\n")
                check("does not exist" in session.expect("? "), "/save into a missing folder")
                # A reply shows word by word while it is generated, and only once.
                before = len(session.chunks)
                session.type("What is the capital of France?\n")
                turn = on_screen(session.expect("? "))
                lines = [line for line in turn.splitlines() if line.strip()]
                answer = lines[1] if len(lines) > 2 else ""
                pieces = [chunk for chunk in session.chunks[before:]
                          if chunk.strip() and chunk.strip() in answer]
                check("Paris" in answer and turn.count(answer) == 1,
                      f"the answer, once: {turn!r}")
                check(len(pieces) >= 2, f"the answer arrived in one piece, not streamed: "
                                        f"{session.chunks[before:]!r}")
                session.type("/reset\n")
                check("(conversation cleared)" in session.expect("? "), "/reset")
                session.type("/quit\n")
                session.expect("(exiting)")
                check(session.finish() == 0, "exit status after /quit")
            except AssertionError as error:
                problems.append(f"session 1: {error}")
                session.process.kill()
                session.finish()

    # 2. A backend that fails mid-session: the error is shown and nothing typed is lost.
    url = f"http://127.0.0.1:{closed_port()}"
    session = Session([str(program), "--url", url, "--timeout", "5", "--max-steps", "2"])
    try:
        session.expect("? ")
        session.type("Is anyone there?\n")
        failed = session.expect("? ")
        check("(error:" in failed, f"a failed turn says so: {failed!r}")
        session.type("/history\n")
        history = session.expect("? ")
        check("user: Is anyone there?" in history and "assistant: (no answer" in history,
              f"the failed turn is in the history: {history!r}")
        session.type("\x04")  # Ctrl-D at the start of a line: the end of the input
        session.expect("(eof)")
        check(session.finish() == 0, "exit status after Ctrl-D")
    except AssertionError as error:
        problems.append(f"session 2: {error}")
        session.process.kill()
        session.finish()

    # 3. --once against the missing server: a non-zero exit and the reason.
    once = subprocess.run([str(program), "--url", url, "--timeout", "5", "--once", "hello"],
                          capture_output=True, text=True, timeout=120)
    check(once.returncode == 1, f"--once without an answer exits {once.returncode}")
    check("(no answer:" in once.stderr, f"--once says why: {once.stderr!r}")

    for problem in problems:
        print(problem)
    print(f"assistant-pty: {checks} checks, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
