#!/usr/bin/env python3
"""g2c-serve against the official `ollama` and `openai` Python clients, and stopped by a signal.

  scripts/check_serve.py [build dir]      (default build/reference; run by scripts/test.sh)

Starts build/<dir>/bin/g2c-serve on a free port of 127.0.0.1 and talks to it as a user's program
would, with the clients Ollama and OpenAI publish (setup installs them into the project's
environment): the model list, /api/generate and /api/chat with and without streaming, /api/chat
with tools (a call comes back as the client's ToolCall, streamed and not), /api/embed,
/v1/chat/completions with and without streaming, and errors raised as each client's own exception.
The streamed text must equal the text answered at once, and greedy answers must be the ones the
course's model gives in-process ("The capital of France is Paris."). What clients read before they
use a model: /api/show (template, parameters, capabilities), /api/ps, OpenAI's embeddings; and
Ollama's options as documented (repeat_penalty, seed, num_ctx honoured; a misspelt one refused). Then SIGTERM in the middle of
a streamed answer must end the server within seconds with status 0 and the port free again; and a
server started with --max-requests must stop by itself. Every wait is bounded. Skipped, saying why,
without SmolLM2's file (scripts/setup.sh fetches it).
"""
from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time

import ollama
import openai

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "SmolLM2-135M-Instruct"
GGUF = os.path.join(ROOT, "artifacts", "pretrained", NAME, f"{NAME}.Q4_1.gguf")
# Plain greedy decoding, to compare with the in-process model's answers: Ollama's default
# repetition penalty (1.1 over 64 tokens, which g2c-serve applies too) turned off.
GREEDY = {"temperature": 0, "num_predict": 24, "repeat_penalty": 1.0}

checks = 0


def check(condition: bool, what: str) -> None:
    global checks
    if not condition:
        raise SystemExit(f"FAILED: {what}")
    checks += 1
    print(f"  ok  {what}")


class Served:
    """g2c-serve on a free port, its stderr kept for the log; killed if a check fails."""

    def __init__(self, binary: str, *args: str, port: int = 0) -> None:
        self.process = subprocess.Popen(
            [binary, "--port", str(port), "--quiet", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        port_line = []
        reader = threading.Thread(target=lambda: port_line.append(self.process.stdout.readline()))
        reader.start()
        reader.join(timeout=30)
        if not port_line or not port_line[0].strip().isdigit():
            self.process.kill()
            raise SystemExit(f"g2c-serve did not start: {self.process.stderr.read()}")
        self.port = int(port_line[0])
        self.url = f"http://127.0.0.1:{self.port}"

    def wait(self, seconds: float) -> int | None:
        try:
            return self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def check_ollama_client(url: str) -> str:
    client = ollama.Client(host=url, timeout=120)
    names = [m.model for m in client.list().models]
    check(f"{NAME}:latest" in names, f"ollama list() shows {NAME} ({names})")

    question = "What is the capital of France?"
    answer = client.generate(model=NAME, prompt=question, options=GREEDY)
    check(answer.response == "The capital of France is Paris.",
          f"ollama generate(): {answer.response!r}")
    check(answer.done and answer.done_reason == "stop" and answer.eval_count == 7
          and answer.prompt_eval_count > 0 and answer.total_duration > 0,
          f"generate()'s counts and durations (eval_count {answer.eval_count})")
    streamed = "".join(part.response for part in
                       client.generate(model=NAME, prompt=question, options=GREEDY, stream=True))
    check(streamed == answer.response, "ollama generate(stream=True) streams the same text")

    chat = client.chat(model=NAME, messages=[{"role": "user", "content": "What is 13 + 28?"}],
                       options=GREEDY)
    check(chat.message.role == "assistant" and chat.message.content.startswith("13 + 28 = 42"),
          f"ollama chat(): {chat.message.content[:40]!r}")
    parts = list(client.chat(model=NAME, messages=[{"role": "user", "content": "What is 13 + 28?"}],
                             options=GREEDY, stream=True))
    check("".join(p.message.content for p in parts) == chat.message.content and parts[-1].done,
          f"ollama chat(stream=True) streams the same text in {len(parts)} parts")
    stopped = client.chat(model=NAME, messages=[{"role": "user", "content": "What is 13 + 28?"}],
                          options={**GREEDY, "stop": [" ="]})
    check(stopped.message.content == "13 + 28", f"options.stop ends the text before it: "
          f"{stopped.message.content!r}")

    # Module 18: a tool turn, answered with a call decoded under the tool's schema.
    tools = [{"type": "function", "function": {
        "name": "calculator", "description": "Evaluate an arithmetic expression.",
        "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                       "required": ["expression"]}}}]
    ask = [{"role": "user", "content": "What is 135 - 85?"}]
    called = client.chat(model=NAME, messages=ask, tools=tools, options=GREEDY)
    calls = called.message.tool_calls or []
    check(len(calls) == 1 and calls[0].function.name == "calculator"
          and isinstance(calls[0].function.arguments.get("expression"), str),
          f"ollama chat(tools=...) answers with a calculator call ({calls})")
    streamed_calls = [call for part in client.chat(model=NAME, messages=ask, tools=tools,
                                                   options=GREEDY, stream=True)
                      for call in (part.message.tool_calls or [])]
    check(streamed_calls == calls, "ollama chat(tools=..., stream=True) streams the same call")

    embedded = client.embed(model=NAME, input=["The king is dead.", "Long live the king!"])
    vectors = embedded.embeddings
    norms = [math.sqrt(sum(x * x for x in v)) for v in vectors]
    check(len(vectors) == 2 and len(vectors[0]) == 576 and all(abs(n - 1) < 1e-4 for n in norms),
          "ollama embed(): two unit vectors of 576 numbers")

    try:
        client.generate(model="NoSuchModel", prompt="hi")
        check(False, "an unknown model raises ollama.ResponseError")
    except ollama.ResponseError as error:
        check(error.status_code == 404 and "NoSuchModel" in error.error,
              f"an unknown model raises ollama.ResponseError 404 ({error.error[:50]}...)")
    return chat.message.content


def check_openai_client(url: str, chat_text: str) -> None:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="not-needed", timeout=120, max_retries=0)
    ids = [m.id for m in client.models.list()]
    check(NAME in ids, f"openai models.list() shows {NAME}")
    messages = [{"role": "user", "content": "What is 13 + 28?"}]
    completion = client.chat.completions.create(model=NAME, messages=messages, temperature=0,
                                                max_tokens=24)
    text = completion.choices[0].message.content
    check(text == chat_text, f"openai chat.completions.create() answers as /api/chat: {text[:30]!r}")
    check(completion.usage.completion_tokens == 24 and completion.choices[0].finish_reason == "length",
          "its usage and finish_reason")
    stream = client.chat.completions.create(model=NAME, messages=messages, temperature=0,
                                            max_tokens=24, stream=True)
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    check("".join(pieces) == text, f"openai stream=True streams the same text ({len(pieces)} events)")
    try:
        client.chat.completions.create(model=NAME, messages=messages, max_tokens=-3)
        check(False, "a negative max_tokens raises openai.BadRequestError")
    except openai.BadRequestError as error:
        check("max_tokens" in str(error), "a negative max_tokens raises openai.BadRequestError")
    try:
        client.chat.completions.create(model="NoSuchModel", messages=messages)
        check(False, "an unknown model raises openai.NotFoundError")
    except openai.NotFoundError:
        check(True, "an unknown model raises openai.NotFoundError")


def check_what_clients_read(binary: str) -> None:
    """/api/show, /api/ps, OpenAI's embeddings, and Ollama's options as Ollama documents them."""
    server = Served(binary)
    try:
        client = ollama.Client(host=server.url, timeout=120)
        check(client.ps().models == [], "ollama ps(): no model loaded before the first request")
        shown = client.show(NAME)
        capabilities = set(shown.capabilities or [])
        check({"completion", "tools", "embedding"} <= capabilities
              and "<|im_start|>" in (shown.template or "") and "repeat_penalty 1.1" in shown.parameters,
              f"ollama show(): template, parameters and capabilities {sorted(capabilities)}")
        loaded = [m.model for m in client.ps().models]
        check(loaded == [f"{NAME}:latest"], f"ollama ps(): the model, once loaded ({loaded})")

        question = [{"role": "user", "content": "Count from 1 to 20, separated by commas."}]
        plain = client.chat(model=NAME, messages=question,
                            options={**GREEDY, "repeat_penalty": 1.0, "num_predict": 48})
        penalised = client.chat(model=NAME, messages=question,
                                options={**GREEDY, "repeat_penalty": 1.5, "num_predict": 48})
        check(plain.message.content != penalised.message.content,
              "options.repeat_penalty changes a greedy answer (1.0 against 1.5)")
        seeded = [client.generate(model=NAME, prompt="Name a colour.",
                                  options={"seed": 7, "temperature": 1.0, "num_predict": 12}).response
                  for _ in range(2)]
        check(seeded[0] == seeded[1], f"options.seed makes a sampled answer repeat ({seeded[0]!r})")
        try:
            client.generate(model=NAME, prompt="Tell me a story. " * 40, options={"num_ctx": 64})
            check(False, "a prompt longer than options.num_ctx is refused")
        except ollama.ResponseError as error:
            check(error.status_code == 400 and "context 64" in error.error,
                  f"a prompt longer than options.num_ctx is refused ({error.error[:60]}...)")
        try:
            client.generate(model=NAME, prompt="Hi", options={"temprature": 0})
            check(False, "a misspelt option is an error")
        except ollama.ResponseError as error:
            check(error.status_code == 400 and "temprature" in error.error,
                  "a misspelt option (temprature) is a 400 naming it")

        openai_client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="-", timeout=120,
                                      max_retries=0)
        embedded = openai_client.embeddings.create(model=NAME, input=["The king is dead.", "Hi"])
        vectors = [item.embedding for item in embedded.data]
        same = client.embed(model=NAME, input=["The king is dead.", "Hi"]).embeddings
        check(len(vectors) == 2 and all(abs(a - b) < 1e-6 for a, b in zip(vectors[0], same[0]))
              and embedded.usage.prompt_tokens > 0,
              "openai embeddings.create(): the vectors /api/embed gives")
    finally:
        server.kill()


def check_sigterm(binary: str) -> None:
    server = Served(binary)
    try:
        client = ollama.Client(host=server.url, timeout=60)
        started = threading.Event()

        def long_stream() -> None:
            try:
                for _ in client.generate(model=NAME, prompt="Tell me a long story.",
                                         options={"num_predict": 3000}, stream=True):
                    started.set()
            except Exception:  # the server went away mid-stream: expected
                started.set()

        reader = threading.Thread(target=long_stream, daemon=True)
        reader.start()
        check(started.wait(60), "a long streamed answer has begun")
        server.process.send_signal(signal.SIGTERM)
        status = server.wait(20)
        check(status == 0, f"SIGTERM mid-stream: g2c-serve exits with status 0 (got {status})")
        reader.join(timeout=20)
        check(not reader.is_alive(), "the client's stream ends too")
        again = Served(binary, port=server.port)
        again.kill()
        check(again.port == server.port, "and a new g2c-serve listens on its port at once")
    finally:
        server.kill()


def check_max_requests(binary: str) -> None:
    server = Served(binary, "--max-requests", "2")
    try:
        client = ollama.Client(host=server.url, timeout=60)
        client.list()
        client.list()
        status = server.wait(20)
        check(status == 0, f"--max-requests 2: g2c-serve stops by itself after 2 (status {status})")
    finally:
        server.kill()


def main() -> int:
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "reference")
    binary = os.path.join(build, "bin", "g2c-serve")
    if not os.path.exists(binary):
        raise SystemExit(f"{binary} is missing: cmake --build --preset reference --target g2c-serve")
    if not os.path.exists(GGUF) and not os.environ.get("G2C_SMOLLM2_GGUF"):
        print(f"checks: 0 passed, 0 failed, 1 skipped ({GGUF} missing: run scripts/setup.sh)")
        return 0
    start = time.time()
    # Exactly the requests of the two clients' checks (10 Ollama, 5 OpenAI): then it stops itself.
    server = Served(binary, "--max-requests", "15")
    try:
        chat_text = check_ollama_client(server.url)
        second = subprocess.run([binary, "--port", str(server.port)], capture_output=True,
                                text=True, timeout=60)
        check(second.returncode == 2 and "already listens" in second.stderr,
              "a second g2c-serve on a taken port exits 2, saying so")
        check_openai_client(server.url, chat_text)
        status = server.wait(20)
        check(status == 0, f"after its 15 requests g2c-serve stops by itself (status {status})")
    finally:
        server.kill()
    check_what_clients_read(binary)
    check_sigterm(binary)
    check_max_requests(binary)
    print(f"checks: {checks} passed, 0 failed, 0 skipped ({time.time() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
