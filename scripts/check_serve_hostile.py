#!/usr/bin/env python3
"""g2c-serve tried as an attacker would: nothing a client sends may end it, fill it or hold it up.

  scripts/check_serve_hostile.py [build dir]     (default build/reference; run by scripts/test.sh)
  scripts/check_serve_hostile.py --binary PATH   (any g2c-serve, e.g. an older one to compare)

Each case talks to g2c-serve on 127.0.0.1 over raw sockets (or curl, as Ollama's documentation
does), then asks whether the server is still there and still quick. Cases:

  bytes      a path with an invalid UTF-8 byte, a body with one: a JSON error, never a crash
  nesting    200,000 nested '[' in "model", "options.seed" and a tool's parameters: 400
  tools      two tools whose names hold quotes and control characters: 400 before any model reads them
  numbers    temperature 1e400, 1e-50 and a seed past 2^63: 400 saying why, no stack trace
  bodies     64 MB sent chunked and 100 MB of zeros gzipped: refused without the server's memory
             growing; a 100 KB body sent by `curl -d` (a form, to the HTTP library): accepted
  head       200 header lines, a 20 KB request line: 431 and 414
  slow       eight clients sending a byte a second hold no worker: /api/version answers at once
  origin     Host: evil.example and Origin: http://evil.example refused (403); local origins and
             --allow-origin served, with CORS headers and preflights; --api-key demands the key
             (401)
  queue      with one thread and a queue of one, the third request gets 503 with Retry-After
  gone       a client that leaves a non-streamed generation ends it (the server's CPU goes quiet)
  sigterm    SIGTERM with a half-sent request open: the server exits 0 within seconds

Cases that need SmolLM2-135M-Instruct's file are skipped, visibly, without it. Every wait is
bounded; the server binds 127.0.0.1 only and is killed if a case fails.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "SmolLM2-135M-Instruct"
GGUF = os.path.join(ROOT, "artifacts", "pretrained", NAME, f"{NAME}.Q4_1.gguf")

passed = 0
failed: list[str] = []
skipped: list[str] = []


def check(condition: bool, what: str) -> bool:
    global passed
    if condition:
        passed += 1
        print(f"  ok    {what}")
    else:
        failed.append(what)
        print(f"  FAIL  {what}")
    return condition


class Served:
    """g2c-serve on a free port of 127.0.0.1; its stderr kept; killed when done."""

    def __init__(self, binary: str, *args: str) -> None:
        self.process = subprocess.Popen([binary, "--port", "0", "--quiet", *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()))
        reader.start()
        reader.join(timeout=30)
        if not line or not line[0].strip().isdigit():
            self.process.kill()
            raise RuntimeError(f"g2c-serve {' '.join(args)} did not start: "
                               f"{self.process.stderr.read()[-300:]!r}")
        self.port = int(line[0])

    def alive(self) -> bool:
        return self.process.poll() is None

    def rss_mb(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def cpu_seconds(self) -> float:
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.alive():
            self.process.kill()
        self.process.wait()

    def __enter__(self) -> "Served":
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


def connect(port: int, timeout: float = 10) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return sock


def receive_while(sock: socket.socket, data: bytes, more) -> bytes:
    """`data` and what arrives after it while more(data) holds, the peer is there and time is left."""
    try:
        while more(data):
            piece = sock.recv(65536)
            if not piece:
                break
            data += piece
    except (socket.timeout, ConnectionError):
        pass
    return data


def read_answer(sock: socket.socket, limit: float = 10) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower case) and body of one answer (Content-Length or until close)."""
    sock.settimeout(limit)
    data = receive_while(sock, b"", lambda data: b"\r\n\r\n" not in data)
    if b"\r\n\r\n" not in data:
        return 0, {}, data
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "-1"))
    body = receive_while(sock, body, lambda body: length < 0 or len(body) < length)
    return status, headers, body


def request(port: int, method: str, path: str, body: bytes = b"", headers: dict | None = None,
            limit: float = 30) -> tuple[int, dict[str, str], bytes]:
    """One request on a fresh connection, sent as given (path and body bytes untouched)."""
    fields = {"Host": f"127.0.0.1:{port}", "Connection": "close"}
    if body or method == "POST":
        fields["Content-Type"] = "application/json"
        fields["Content-Length"] = str(len(body))
    fields.update(headers or {})
    head = f"{method} ".encode() + path.encode("latin-1") + b" HTTP/1.1\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in fields.items() if v is not None).encode("latin-1")
    try:
        with connect(port, limit) as sock:
            sock.sendall(head + b"\r\n" + body)
            return read_answer(sock, limit)
    except (ConnectionError, socket.timeout) as error:
        return 0, {}, str(error).encode()


def error_of(body: bytes) -> str:
    """The error message in an Ollama or OpenAI error body; "" when the body is not one."""
    try:
        value = json.loads(body)
    except ValueError:
        return ""
    error = value.get("error", "") if isinstance(value, dict) else ""
    return error.get("message", "") if isinstance(error, dict) else str(error)


def quick_version(served: Served, limit: float = 2.0) -> float | None:
    """Seconds /api/version took, or None when it did not answer within `limit`."""
    start = time.time()
    status, _, _ = request(served.port, "GET", "/api/version", limit=limit)
    return time.time() - start if status == 200 else None


def generate(prompt: str = "Hi", **options: object) -> bytes:
    return json.dumps({"model": NAME, "prompt": prompt, "stream": False,
                       "options": options}).encode()


def case_bytes(binary: str) -> None:
    with Served(binary) as served:
        status, _, body = request(served.port, "GET", "/%ff")
        check(status == 404 and "no such endpoint" in error_of(body),
              f"GET /%ff: 404 with a JSON error (got {status})")
        status, _, body = request(served.port, "GET", "/\xff\xfe")
        check(status in (400, 404) and error_of(body) != "",
              f"a path with raw 0xff bytes: 4xx with a JSON error (got {status})")
        status, headers, body = request(served.port, "POST", "/api/generate",
                                        b'{"model": "x", "prompt": "\xff"}')
        check(status == 400 and "exception_what" not in headers and error_of(body) != "",
              f"a body with an invalid UTF-8 byte: 400, a JSON error (got {status})")
        check(served.alive() and quick_version(served) is not None, "and the server is still up")


def case_nesting(binary: str) -> None:
    deep = "[" * 200_000 + "]" * 200_000  # valid JSON, 400 KB: under the body limit
    bodies = {
        "model": '{"model": ' + deep + "}",
        "options.seed": '{"model": "x", "prompt": "p", "options": {"seed": ' + deep + "}}",
        "a tool's parameters": '{"model": "x", "messages": [], "tools": [{"type": "function", '
                               '"function": {"name": "f", "parameters": ' + deep + "}}]}",
    }
    with Served(binary) as served:
        for where, text in bodies.items():
            path = "/api/chat" if "tool" in where else "/api/generate"
            status, _, body = request(served.port, "POST", path, text.encode())
            check(status == 400 and "levels deep" in error_of(body),
                  f"200,000 nested '[' in {where}: 400 naming the depth (got {status})")
        check(served.alive() and quick_version(served) is not None, "and the server is still up")


def case_tools(binary: str, have_model: bool) -> None:
    tools = [{"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}}
        for name in ('q"\u0001', 'q"\u0002')]
    body = json.dumps({"model": NAME if have_model else "x", "stream": False, "tools": tools,
                       "messages": [{"role": "user", "content": "call q"}]}).encode()
    with Served(binary) as served:
        status, _, answer = request(served.port, "POST", "/api/chat", body, limit=120)
        check(status == 400 and "name" in error_of(answer),
              f"tools named q\"\\u0001 and q\"\\u0002: 400 on the names (got {status})")
        check(served.alive() and quick_version(served) is not None, "and the server is still up")


def case_numbers(binary: str, have_model: bool) -> None:
    model = NAME if have_model else "x"
    cases = [
        ("temperature 1e400", b'{"model": "%s", "prompt": "Hi", "stream": false, '
                              b'"options": {"temperature": 1e400, "num_predict": 2}}' % model.encode()),
        ("temperature 1e-50", json.dumps({"model": model, "prompt": "Hi", "stream": False,
                                          "options": {"temperature": 1e-50,
                                                      "num_predict": 2}}).encode()),
        ("seed 2^64 - 1", json.dumps({"model": model, "prompt": "Hi", "stream": False,
                                      "options": {"seed": 2**64 - 1, "num_predict": 2}}).encode()),
    ]
    with Served(binary) as served:
        for what, body in cases:
            status, _, answer = request(served.port, "POST", "/api/generate", body, limit=120)
            message = error_of(answer)
            check(status == 400 and "Exception raised from" not in message and message != "",
                  f"{what}: 400 saying why, no stack trace (got {status}: {message[:90]!r})")
        check(served.alive(), "and the server is still up")


def case_bodies(binary: str) -> None:
    with Served(binary) as served:
        before = served.rss_mb()
        status = 0
        with connect(served.port) as sock:
            sock.sendall(b"POST /api/generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                         b"application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b"%x\r\n" % (1 << 20) + b" " * (1 << 20) + b"\r\n"
            try:
                for _ in range(64):
                    sock.sendall(chunk)
                sock.sendall(b"0\r\n\r\n")
            except (ConnectionError, socket.timeout):
                pass  # refused part-way: what it answered is read below
            status, _, _ = read_answer(sock, 30)
        grown = served.rss_mb() - before
        check(status == 413 and grown < 48,
              f"64 MB sent chunked: 413, the server grew {grown:.0f} MB (got {status})")

        zeros = gzip.compress(b"\0" * (100 << 20), compresslevel=9)
        before = served.rss_mb()
        status, _, body = request(served.port, "POST", "/api/generate", zeros,
                                  {"Content-Encoding": "gzip"})
        grown = served.rss_mb() - before
        check(status in (413, 415) and grown < 48,
              f"{len(zeros) >> 10} KB of gzip that inflates to 100 MB: refused ({status}), the "
              f"server grew {grown:.0f} MB")

        curl = shutil.which("curl")
        if curl:
            payload = json.dumps({"model": "NoSuchModel", "prompt": "x" * 100_000})
            answer = subprocess.run(
                [curl, "-s", "-o", "-", "-w", "\n%{http_code}", "--max-time", "30",
                 f"http://127.0.0.1:{served.port}/api/generate", "-d", payload],
                capture_output=True, text=True, timeout=60)
            code = answer.stdout.rsplit("\n", 1)[-1]
            check(code == "404" and "NoSuchModel" in answer.stdout,
                  f"a 100 KB body sent with curl -d (a form to HTTP libraries): read whole, "
                  f"answered 404 for its model (got {code})")
        else:
            skipped.append("curl -d: curl is not installed")
        check(served.alive() and quick_version(served) is not None, "and the server is still up")


def case_head(binary: str) -> None:
    with Served(binary) as served:
        many = {f"X-Header-{i}": "v" for i in range(200)}
        status, _, _ = request(served.port, "GET", "/api/version", headers=many)
        check(status == 431, f"200 header lines: 431 (got {status})")
        status, _, _ = request(served.port, "GET", "/api/version?" + "a" * 20_000)
        check(status == 414, f"a 20 KB request line: 414 (got {status})")
        check(served.alive(), "and the server is still up")


def case_slow(binary: str) -> None:
    with Served(binary, "--threads", "4") as served:
        slow = [connect(served.port) for _ in range(8)]
        stop = threading.Event()

        def drip() -> None:
            text = b"POST /api/generate HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100
            for byte in text:
                if stop.wait(1.0):
                    return
                for sock in slow:
                    try:
                        sock.send(bytes([byte]))
                    except OSError:
                        pass

        dripper = threading.Thread(target=drip, daemon=True)
        dripper.start()
        time.sleep(2.5)
        took = quick_version(served, 3.0)
        check(took is not None and took < 1.0,
              f"8 clients sending a byte a second, 4 threads: /api/version answers "
              f"({'no answer in 3 s' if took is None else f'{took:.2f} s'})")
        stop.set()
        dripper.join(5)
        for sock in slow:
            sock.close()
    with Served(binary) as served:
        with connect(served.port) as sock:
            sock.sendall(b"GET /api/version HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            start = time.time()
            status, _, _ = read_answer(sock, 20)
            took = time.time() - start
        check(status == 408 and took < 15,
              f"a request that never finishes its head: 408 after {took:.0f} s (got {status})")


def case_origin(binary: str) -> None:
    with Served(binary) as served:
        status, _, body = request(served.port, "GET", "/api/tags", headers={"Host": "evil.example"})
        check(status == 403 and "Host" in error_of(body),
              f"Host: evil.example: 403 (got {status})")
        status, _, body = request(served.port, "GET", "/api/tags",
                                  headers={"Origin": "http://evil.example"})
        check(status == 403 and "--allow-origin" in error_of(body),
              f"Origin: http://evil.example: 403 naming --allow-origin (got {status})")
        status, _, _ = request(served.port, "GET", "/api/tags",
                               headers={"Origin": "http://localhost:3000"})
        check(status == 200, f"Origin: http://localhost:3000: served (got {status})")
        status, _, _ = request(served.port, "GET", "/api/tags",
                               headers={"Host": f"localhost:{served.port}"})
        check(status == 200, f"Host: localhost: served (got {status})")
    with Served(binary, "--allow-origin", "http://notebook.example", "--api-key", "k") as served:
        page = {"Origin": "http://notebook.example"}
        status, headers, _ = request(served.port, "OPTIONS", "/api/chat",
                                     headers={**page, "Access-Control-Request-Method": "POST"})
        check(status == 204 and headers.get("access-control-allow-origin") == page["Origin"]
              and "POST" in headers.get("access-control-allow-methods", ""),
              f"--allow-origin: the page's preflight is answered without the key (got {status})")
        status, headers, _ = request(served.port, "GET", "/api/tags",
                                     headers={**page, "Authorization": "Bearer k"})
        check(status == 200 and headers.get("access-control-allow-origin") == page["Origin"],
              f"--allow-origin http://notebook.example: that page served and may read it ({status})")
        status, headers, _ = request(served.port, "OPTIONS", "/api/chat",
                                     headers={"Origin": "http://evil.example"})
        check(status == 403 and "access-control-allow-origin" not in headers,
              f"another page's preflight: 403, nothing it may read (got {status})")
    with Served(binary, "--api-key", "s3cret") as served:
        status, _, body = request(served.port, "GET", "/api/tags")
        check(status == 401 and "Authorization" in error_of(body),
              f"--api-key: a request without the key gets 401 (got {status})")
        status, _, _ = request(served.port, "GET", "/api/tags",
                               headers={"Authorization": "Bearer s3cret"})
        check(status == 200, f"--api-key: the key lets a request in (got {status})")


def case_queue(binary: str) -> None:
    with Served(binary, "--threads", "1", "--max-queue", "1", "--preload", NAME) as served:
        busy = [connect(served.port, 60) for _ in range(2)]
        long = generate("Tell me a long story.", num_predict=300)
        for sock in busy:
            sock.sendall(b"POST /api/generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                         b"application/json\r\nContent-Length: %d\r\n\r\n" % len(long) + long)
            time.sleep(0.3)
        status, headers, body = request(served.port, "POST", "/api/generate", generate())
        check(status == 503 and "retry-after" in headers and "busy" in error_of(body),
              f"one thread, a queue of one, a third request: 503 with Retry-After (got {status})")
        for sock in busy:
            sock.close()


def case_gone(binary: str) -> None:
    with Served(binary, "--preload", NAME) as served:
        with connect(served.port, 60) as sock:
            body = generate("Tell me a long story.", num_predict=2000)
            sock.sendall(b"POST /api/generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                         b"application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            time.sleep(2)
        time.sleep(1)  # the next token notices
        before = served.cpu_seconds()
        time.sleep(3)
        spent = served.cpu_seconds() - before
        check(spent < 0.5,
              f"a client that leaves a non-streamed generation: the server computes "
              f"{spent:.2f} s of CPU in the 3 s after (the generation ended)")


def case_sigterm(binary: str) -> None:
    served = Served(binary)
    try:
        sock = connect(served.port)
        sock.sendall(b"POST /api/generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
                     b"\r\n{\"model\": ")
        time.sleep(0.3)
        start = time.time()
        served.process.send_signal(signal.SIGTERM)
        try:
            status = served.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            status = None
        took = time.time() - start
        check(status == 0 and took < 5,
              f"SIGTERM with a half-sent request open: exits 0 in {took:.1f} s (status {status})")
        sock.close()
    finally:
        served.stop()


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--binary":
        binary = sys.argv[2]
    else:
        build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "reference")
        binary = os.path.join(build, "bin", "g2c-serve")
    if not os.path.exists(binary):
        raise SystemExit(f"{binary} is missing: cmake --build --preset reference --target g2c-serve")
    have_model = os.path.exists(GGUF) or bool(os.environ.get("G2C_SMOLLM2_GGUF"))
    start = time.time()
    cases = [case_bytes, case_nesting, case_bodies, case_head, case_slow, case_origin, case_sigterm,
             lambda b: case_tools(b, have_model), lambda b: case_numbers(b, have_model)]
    if have_model:
        cases += [case_queue, case_gone]
    else:
        skipped.extend(["queue: needs SmolLM2's file (scripts/setup.sh)",
                        "gone: needs SmolLM2's file (scripts/setup.sh)"])
    for case in cases:
        try:
            case(binary)
        except SystemExit:
            raise
        except Exception as error:  # a case that broke is a failure, and the others still run
            check(False, f"{getattr(case, '__name__', 'case')} raised {error!r}")
    for reason in skipped:
        print(f"  skip  {reason}")
    print(f"checks: {passed} passed, {len(failed)} failed, {len(skipped)} skipped "
          f"({time.time() - start:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
