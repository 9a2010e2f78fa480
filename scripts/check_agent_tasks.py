#!/usr/bin/env python3
"""Check the task set of module 19's agent exercise.

Usage, from the repository root:

    python3 scripts/check_agent_tasks.py [path]

`path` defaults to exercises/19-agent/data/tasks.json: a JSON object with `about` (a non-empty
string), `facts` (each {"id", "text"}) and `tasks` (each {"id", "question", "expression",
"answer", "facts"}). A task is answered by finding its facts with the search_notes tool and doing
the arithmetic of its expression with the calculator.

What is checked:

- the JSON shape, the type of every field, no unknown keys, ids unique, 30 to 50 tasks;
- every fact a task names exists, and every fact is named by some task;
- the expression uses only integers, + - * / and spaces, and evaluates to the answer, an integer;
- every number of the expression is stated by one of the task's facts (digit groups with commas
  read as one number) or by its question (in digits, or as a word: "two", "three", "twice",
  "half", ...);
- no fact states the answer itself: the arithmetic is needed, not just the search.

It prints one line per problem, then `agent tasks: N ok` (exit status 0) or `agent tasks: N, P
problems` (exit status 1). Standard library only.
"""

from __future__ import annotations

import ast
import json
import operator
import re
import sys
from fractions import Fraction
from pathlib import Path

DEFAULT_PATH = "exercises/19-agent/data/tasks.json"
MIN_TASKS, MAX_TASKS = 30, 50
TOP_KEYS = {"about", "facts", "tasks"}
FACT_KEYS = {"id", "text"}
TASK_KEYS = {"id", "question", "expression", "answer", "facts"}
WORDS = {"two": 2, "twice": 2, "half": 2, "three": 3, "four": 4, "five": 5, "ten": 10,
         "twelve": 12}
OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.Div: operator.truediv}


def numbers_in(text: str) -> set[int]:
    """The integers `text` states: "843,784" is one number, "1,000" too."""
    return {int(match.replace(",", "")) for match in re.findall(r"\d{1,3}(?:,\d{3})+|\d+", text)}


def evaluate(expression: str) -> tuple[Fraction, list[int]]:
    """The exact value of an expression of integers and + - * /, and the integers it uses."""
    used: list[int] = []

    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            return OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.Constant) and type(node.value) is int:
            used.append(node.value)
            return Fraction(node.value)
        raise ValueError(f"only integers and + - * / are allowed, got {ast.dump(node)}")

    return walk(ast.parse(expression, mode="eval").body), used


def check(path: Path) -> tuple[int, list[str]]:
    problems: list[str] = []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return 0, [f"{path}: cannot read it as JSON: {error}"]
    if not isinstance(data, dict) or set(data) != TOP_KEYS:
        return 0, [f"{path}: the top level must be an object with exactly {sorted(TOP_KEYS)}"]
    if not isinstance(data["about"], str) or not data["about"].strip():
        problems.append("'about' must be a non-empty string")

    facts: dict[str, str] = {}
    for position, fact in enumerate(data["facts"]):
        if not isinstance(fact, dict) or set(fact) != FACT_KEYS or not all(
                isinstance(fact[key], str) and fact[key].strip() for key in FACT_KEYS):
            problems.append(f"facts[{position}]: must be {{\"id\", \"text\"}}, both non-empty")
            continue
        if fact["id"] in facts:
            problems.append(f"fact '{fact['id']}' is listed twice")
        facts[fact["id"]] = fact["text"]

    tasks = data["tasks"]
    if not MIN_TASKS <= len(tasks) <= MAX_TASKS:
        problems.append(f"{len(tasks)} tasks; between {MIN_TASKS} and {MAX_TASKS} are wanted")
    seen: set[str] = set()
    named: set[str] = set()
    for position, task in enumerate(tasks):
        where = f"tasks[{position}]"
        if not isinstance(task, dict) or set(task) != TASK_KEYS:
            problems.append(f"{where}: must have exactly the keys {sorted(TASK_KEYS)}")
            continue
        where = str(task["id"])
        if not all(isinstance(task[key], str) and task[key].strip()
                   for key in ("id", "question", "expression")):
            problems.append(f"{where}: id, question and expression must be non-empty strings")
            continue
        if where in seen:
            problems.append(f"task id '{where}' is used twice")
        seen.add(where)
        if type(task["answer"]) is not int:
            problems.append(f"{where}: the answer must be an integer")
            continue
        if not isinstance(task["facts"], list) or not task["facts"]:
            problems.append(f"{where}: 'facts' must be a non-empty list of fact ids")
            continue
        unknown = [fact for fact in task["facts"] if fact not in facts]
        if unknown:
            problems.append(f"{where}: names facts that do not exist: {unknown}")
            continue
        named.update(task["facts"])

        try:
            value, used = evaluate(task["expression"])
        except (SyntaxError, ValueError, ZeroDivisionError) as error:
            problems.append(f"{where}: the expression cannot be evaluated: {error}")
            continue
        if value != task["answer"]:
            problems.append(f"{where}: the expression gives {value}, not {task['answer']}")
        stated = set().union(*(numbers_in(facts[fact]) for fact in task["facts"]))
        question = task["question"].lower()
        in_question = numbers_in(question) | {
            number for word, number in WORDS.items() if re.search(rf"\b{word}\b", question)}
        for number in used:
            if number not in stated and number not in in_question:
                problems.append(f"{where}: {number} is stated neither by its facts nor by its question")
        for fact in task["facts"]:
            if task["answer"] in numbers_in(facts[fact]):
                problems.append(f"{where}: fact '{fact}' already states the answer {task['answer']}")
    for fact in sorted(set(facts) - named):
        problems.append(f"fact '{fact}' is named by no task")
    return len(tasks), problems


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in {"-h", "--help"}):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    count, problems = check(Path(argv[1] if len(argv) == 2 else DEFAULT_PATH))
    for problem in problems:
        print(problem)
    if problems:
        print(f"agent tasks: {count}, {len(problems)} problems")
        return 1
    print(f"agent tasks: {count} ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
