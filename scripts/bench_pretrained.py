#!/usr/bin/env python3
"""Side-by-side benchmark of SmolLM2-135M-Instruct's greedy decoding on this machine: the course's
C++ model (g2c-generate, float32 and packed weights) against Hugging Face transformers reading the
same GGUF file (float32), and llama.cpp (the engine under Ollama) when its Python binding is there.

    .venv/bin/python scripts/bench_pretrained.py                        # 1 thread, 64 tokens
    .venv/bin/python scripts/bench_pretrained.py --threads 2 --tokens 128 --repeats 3
    options: --build build/reference  --llama-cpp-python PATH/TO/python  --json PATH  --no-plot

Like with like: every engine gets the same ids (the chat prompt below rendered in the model's
template and encoded by the course's tokenizer, which matches Hugging Face's id for id), the same
thread count, and decodes the same number of greedy tokens through its KV cache, one engine at a
time in its own process. Reported for each: load seconds, the first token (the prompt through the
model and the first id drawn), decoding tokens per second after it, and the process's peak resident
memory (VmHWM, so loading's transients count; the course's tools report their own). Every weight is read once
per token, so weight bytes x tokens/s is the memory traffic decoding needs; set against one core's
read bandwidth (a float32 sum over 512 MB) it gives the fraction of the machine's limit reached.

llama.cpp: `pip install llama-cpp-python` builds it from source (no wheel on PyPI for Linux); pass
the interpreter that has it with --llama-cpp-python. Without it that row is left out, and says so.
Writes results/16-inference/bench_pretrained.json (and a figure unless --no-plot).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "SmolLM2-135M-Instruct"
FOLDER = os.path.join(ROOT, "artifacts", "pretrained", NAME)
FILE = f"{NAME}.Q4_1.gguf"
QUESTION = "Write a haiku about the sea, then explain its imagery line by line."


# --- workers: each engine in a process of its own -------------------------------------------------

def worker_transformers(ids: list[int], tokens: int, threads: int) -> dict:
    os.environ.setdefault("TQDM_DISABLE", "1")
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    torch.set_num_threads(threads)
    start = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(FOLDER, gguf_file=FILE, dtype=torch.float32)
    model.eval()
    load = time.perf_counter() - start
    out_ids = []
    with torch.no_grad():
        start = time.perf_counter()
        # Only the last position's logits, as transformers' own generate() asks for them.
        out = model(torch.tensor([ids]), use_cache=True, logits_to_keep=1)
        next_id = int(out.logits[0, -1].argmax())
        first = time.perf_counter() - start
        out_ids.append(next_id)
        past = out.past_key_values
        start = time.perf_counter()
        for _ in range(tokens - 1):
            out = model(torch.tensor([[next_id]]), past_key_values=past, use_cache=True)
            past, next_id = out.past_key_values, int(out.logits[0, -1].argmax())
            out_ids.append(next_id)
        decode = time.perf_counter() - start
    return {"load_seconds": load, "first_token_seconds": first,
            "tokens_per_s": (tokens - 1) / decode, "ids": out_ids}


def worker_llama_cpp(ids: list[int], tokens: int, threads: int) -> dict:
    from llama_cpp import Llama
    start = time.perf_counter()
    llm = Llama(model_path=os.path.join(FOLDER, FILE), n_threads=threads, n_threads_batch=threads,
                n_ctx=len(ids) + tokens + 8, n_batch=512, verbose=False)
    load = time.perf_counter() - start
    out_ids = []
    start = time.perf_counter()
    generator = llm.generate(ids, top_k=1, temp=0.0, repeat_penalty=1.0, min_p=0.0, top_p=1.0)
    out_ids.append(next(generator))
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(tokens - 1):
        out_ids.append(next(generator))
    decode = time.perf_counter() - start
    return {"load_seconds": load, "first_token_seconds": first,
            "tokens_per_s": (tokens - 1) / decode, "ids": out_ids}


# --- the driver -----------------------------------------------------------------------------------

def peak_resident_mib() -> float:
    """This process's peak resident memory since its program started (VmHWM), in MiB. Not
    getrusage: a child's ru_maxrss also counts the parent it was forked from."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run_child(command: list[str], env: dict | None = None) -> str:
    """Runs `command`, returns its stdout; RuntimeError with its stderr when it fails."""
    process = subprocess.run(command, capture_output=True, env=env)
    if process.returncode != 0:
        raise RuntimeError(f"{command[0]} exited {process.returncode}:\n"
                           f"{process.stderr.decode(errors='replace')[-2000:]}")
    return process.stdout.decode()


def read_bandwidth_gb_per_s(threads: int) -> float:
    import torch
    torch.set_num_threads(threads)
    big = torch.ones(128 * 1024 * 1024)
    best = 0.0
    for _ in range(3):
        start = time.perf_counter()
        big.sum().item()
        best = max(best, big.numel() * 4 / (time.perf_counter() - start) / 1e9)
    return best


def chat_ids(build: str) -> list[int]:
    """The chat prompt in the model's template, encoded by the course's tokenizer."""
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(FOLDER, gguf_file=FILE)
    text = tokenizer.apply_chat_template([{"role": "user", "content": QUESTION}], tokenize=False,
                                         add_generation_prompt=True)
    theirs = tokenizer(text)["input_ids"]
    tool = os.path.join(build, "bin", "gguf_tokenize")
    if os.path.exists(tool):
        request = json.dumps({"encode": text}) + "\n"
        answer = subprocess.run([tool, os.path.join(FOLDER, FILE)], input=request.encode(),
                                capture_output=True, check=True).stdout
        if json.loads(answer.decode().splitlines()[0])["ids"] != theirs:
            raise RuntimeError("the course's tokenizer and Hugging Face's disagree on the prompt")
    return theirs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "reference"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--llama-cpp-python", default="", help="a python with llama_cpp")
    parser.add_argument("--json", default=os.path.join(ROOT, "results", "16-inference",
                                                       "bench_pretrained.json"))
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--worker", choices=["transformers", "llama.cpp"], help=argparse.SUPPRESS)
    parser.add_argument("--ids", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        ids = json.loads(args.ids)
        work = worker_transformers if args.worker == "transformers" else worker_llama_cpp
        result = work(ids, args.tokens, args.threads)
        result["peak_rss_mb"] = peak_resident_mib()
        print(json.dumps(result))
        return 0

    path = os.path.join(FOLDER, FILE)
    generate = os.path.join(args.build, "bin", "g2c-generate")
    for needed, fix in ((path, "run scripts/setup.sh"),
                        (generate, "cmake --build --preset reference --target g2c-generate")):
        if not os.path.exists(needed):
            print(f"bench-pretrained: {needed} is missing: {fix}")
            return 1
    ids = chat_ids(args.build)
    from transformers import AutoTokenizer
    text = AutoTokenizer.from_pretrained(FOLDER, gguf_file=FILE).apply_chat_template(
        [{"role": "user", "content": QUESTION}], tokenize=False, add_generation_prompt=True)
    bandwidth = read_bandwidth_gb_per_s(args.threads)
    print(f"{NAME}: a {len(ids)}-token chat prompt, {args.tokens} greedy tokens, "
          f"{args.threads} thread(s), {args.repeats} run(s) each; read bandwidth "
          f"{bandwidth:.1f} GB/s")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))

    def course(weights: str) -> dict:
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "run.json")
            run_child([generate, "--model", NAME, "--prompt", text, "--temperature", "0",
                                 "--tokens", str(args.tokens), "--threads", str(args.threads),
                                 "--weights", weights, "--no-compare", "--json", out], env)
            with open(out) as f:
                result = json.load(f)
        ours = result[weights]
        return {"load_seconds": result["load_seconds"],
                "first_token_seconds": ours["first_token_seconds"],
                "tokens_per_s": ours["tokens_per_s"], "new_tokens": result["new_tokens"],
                "weight_mb": result["weight_bytes"] / 1e6,
                "peak_rss_mb": result["peak_resident_mib"],
                "text": result["text"]}

    def python_worker(engine: str, python: str) -> dict:
        stdout = run_child([python, os.path.abspath(__file__), "--worker", engine,
                                  "--ids", json.dumps(ids), "--tokens", str(args.tokens),
                                  "--threads", str(args.threads)], env)
        return json.loads(stdout.strip().splitlines()[-1])

    engines: dict[str, callable] = {
        "course, packed": lambda: course("packed"),
        "course, float32": lambda: course("float32"),
        "transformers, float32": lambda: python_worker("transformers", sys.executable),
    }
    notes = []
    if args.llama_cpp_python:
        engines["llama.cpp"] = lambda: python_worker("llama.cpp", args.llama_cpp_python)
    else:
        notes.append("llama.cpp left out: give --llama-cpp-python PATH (a python with llama_cpp)")
    runs: dict[str, list[dict]] = {name: [] for name in engines}
    for repeat in range(args.repeats):
        for name, run in engines.items():  # interleaved: A, B, C, A, B, C, ...
            print(f"  run {repeat + 1}: {name}...", flush=True)
            runs[name].append(run())

    def median(values: list[float]) -> float:
        ordered = sorted(values)
        n = len(ordered)
        return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2

    # Bytes each engine reads per token: its weights. llama.cpp holds the file's blocks, as the
    # packed path does.
    packed_mb = runs["course, packed"][0]["weight_mb"]
    float32_mb = runs["course, float32"][0]["weight_mb"]
    weight_mb = {"course, packed": packed_mb, "course, float32": float32_mb,
                 "transformers, float32": float32_mb, "llama.cpp": packed_mb}
    table, summary = [], {}
    for name, results in runs.items():
        row = {key: median([r[key] for r in results])
               for key in ("load_seconds", "first_token_seconds", "tokens_per_s", "peak_rss_mb")}
        row["weight_mb"] = weight_mb[name]
        row["bandwidth_fraction"] = row["weight_mb"] * 1e6 * row["tokens_per_s"] / (bandwidth * 1e9)
        row["runs"] = results
        summary[name] = row
    base = summary["transformers, float32"]
    print(f"\n| engine | load s | first token s | tokens/s | vs transformers | peak RSS MiB | "
          f"weights MB | bandwidth |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, row in summary.items():
        print(f"| {name} | {row['load_seconds']:.2f} | {row['first_token_seconds']:.3f} | "
              f"{row['tokens_per_s']:.1f} | {row['tokens_per_s'] / base['tokens_per_s']:.2f}x | "
              f"{row['peak_rss_mb']:.0f} | {row['weight_mb']:.0f} | "
              f"{100 * row['bandwidth_fraction']:.0f}% |")
        table.append(name)
    if "llama.cpp" in summary:
        ratio = summary["llama.cpp"]["tokens_per_s"] / summary["course, packed"]["tokens_per_s"]
        print(f"\nllama.cpp decodes {ratio:.2f}x as fast as the course's packed path")
    hf_text_ids = runs["transformers, float32"][0]["ids"]
    if "llama.cpp" in runs:
        same = runs["llama.cpp"][0]["ids"] == hf_text_ids
        print(f"llama.cpp's greedy ids {'match' if same else 'differ from'} transformers'")
    for note in notes:
        print(note)

    result = {
        "program": "scripts/bench_pretrained.py", "model": NAME, "file": FILE,
        "prompt": QUESTION, "prompt_tokens": len(ids), "new_tokens": args.tokens,
        "threads": args.threads, "repeats": args.repeats,
        "read_bandwidth_gb_per_s": bandwidth, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                       time.gmtime()),
        "engines": summary, "notes": notes,
        "labels": table, "tokens_per_s": [summary[n]["tokens_per_s"] for n in table],
        "peak_rss_mb": [summary[n]["peak_rss_mb"] for n in table],
        "figures": [
            {"kind": "bar", "file": "bench_pretrained_speed.png",
             "title": f"{NAME}, greedy decoding on {args.threads} CPU thread(s)",
             "xlabel": "", "ylabel": "tokens / s", "rotate_labels": 15,
             "series": [{"label": "tokens / s", "x": "/labels", "y": "/tokens_per_s"}]},
            {"kind": "bar", "file": "bench_pretrained_memory.png",
             "title": "Peak resident memory of each engine's process", "xlabel": "",
             "ylabel": "MiB", "rotate_labels": 15,
             "series": [{"label": "peak RSS", "x": "/labels", "y": "/peak_rss_mb"}]}],
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=2)
    print(f"wrote {args.json}")
    if not args.no_plot:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "plot.py"), args.json],
                       check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
