#!/usr/bin/env python3
"""Checks the result files of the module 07 programs against the schema documented in
exercises/07-attention/README.md. Standard library only.

    validate_07_results.py DIR      validates every known result file found in DIR
"""
import json
import math
import os
import sys

COMMON = {"program": str, "config": dict, "device": str, "seed": int, "torch_version": str,
          "created": str, "figures": list}

SCHEMAS = {
    "hand_compute.json": {"steps": list, "module_output": list, "max_abs_difference": float, "agree": bool},
    "param_counts.json": {"by_dim": dict, "by_length": dict},
    "quadratic_cost.json": {"length": list, "module_seconds": list, "fused_seconds": list,
                            "weights_megabytes": list, "peak_rss_megabytes": list, "slope": dict},
    "visualize.json": {"tokenizer": dict, "train_loss": list, "sharpness": dict, "examples": list},
    "strip_mask.json": {"tokenizer": dict, "data": dict, "baseline_ln_vocab": float, "runs": dict},
    "strip_mask_random.json": {"tokenizer": dict, "data": dict, "baseline_ln_vocab": float, "runs": dict},
}
RUN = {"causal": bool, "batch_seed": int, "steps": list, "train_loss": list, "val_loss": list,
       "final_train_loss": float, "final_val_loss": float, "wall_seconds": float,
       "tokens_per_second": float, "sample": str}


def check_fields(where, document, fields, problems):
    for key, kind in fields.items():
        if key not in document:
            problems.append(f"{where}: missing {key!r}")
        elif kind is float and isinstance(document[key], (int, float)) and not isinstance(document[key], bool):
            if not math.isfinite(document[key]):
                problems.append(f"{where}: {key!r} is not finite")
        elif not isinstance(document[key], kind) or (kind is int and isinstance(document[key], bool)):
            problems.append(f"{where}: {key!r} should be {kind.__name__}, is {type(document[key]).__name__}")


def validate(path, name):
    problems = []
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    check_fields(name, document, COMMON, problems)
    check_fields(name, document, SCHEMAS[name], problems)
    if name.startswith("strip_mask") and isinstance(document.get("runs"), dict):
        for run_name in ("causal", "non_causal"):
            run = document["runs"].get(run_name)
            if not isinstance(run, dict):
                problems.append(f"{name}: runs.{run_name} missing")
                continue
            check_fields(f"{name} runs.{run_name}", run, RUN, problems)
            lengths = {len(run.get(key, [])) for key in ("steps", "train_loss", "val_loss")}
            if len(lengths) != 1:
                problems.append(f"{name} runs.{run_name}: steps, train_loss and val_loss differ in length")
            if not all(math.isfinite(v) for v in run.get("train_loss", []) + run.get("val_loss", [])):
                problems.append(f"{name} runs.{run_name}: non-finite loss")
        if document["runs"].get("causal", {}).get("causal") is not True:
            problems.append(f"{name}: runs.causal.causal must be true")
    for figure in document.get("figures", []):
        if not {"file", "kind"} <= set(figure):
            problems.append(f"{name}: a figure without file/kind")
    return problems


def main(argv):
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        print(__doc__, file=sys.stderr)
        return 2
    found = problems = 0
    for name in sorted(SCHEMAS):
        path = os.path.join(argv[0], name)
        if not os.path.exists(path):
            continue
        found += 1
        issues = validate(path, name)
        problems += len(issues)
        for issue in issues:
            print(f"  SCHEMA: {issue}")
        print(f"{'ok' if not issues else 'FAIL'} {name}")
    print(f"checks: {found - (1 if problems else 0)} passed, {1 if problems else 0} failed, 0 skipped")
    return 1 if problems or found == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
