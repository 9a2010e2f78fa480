#!/usr/bin/env python3
"""Check the question set of module 17's retrieval exercise.

Usage, from the repository root:

    python3 scripts/check_questions.py [path]

`path` defaults to exercises/17-rag/data/questions.json. The file is a JSON object with a
`description` (a non-empty string), `documents` (the repository-relative paths of the documents the
retrieval index is built over) and `questions`, each question an object with the string fields `id`,
`question`, `answer`, `source`, `evidence` and a list of strings `aliases`.

What is checked:

- the JSON shape and the type of every field, no unknown keys, no empty strings;
- ids unique, between 45 and 55 questions;
- every document listed once and present in the repository; every question's `source` among them;
- `answer` 1 to 6 words, and no alias repeated or equal to the answer;
- `evidence` 20 to 200 characters on a single line, found verbatim in the source file, exactly once;
- the answer or one of its aliases inside the evidence, compared case-insensitively;
- at most 5 questions from one source and at least 15 different sources.

It prints one line per problem, then `questions: N ok` when there is none (exit status 0), or
`questions: N, P problems` (exit status 1); a wrong command line prints this text and exits 2.
Standard library only.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

DEFAULT_PATH = "exercises/17-rag/data/questions.json"
MIN_QUESTIONS, MAX_QUESTIONS = 45, 55
MAX_PER_SOURCE = 5
MIN_SOURCES = 15
EVIDENCE_MIN, EVIDENCE_MAX = 20, 200
ANSWER_MAX_WORDS = 6
TOP_KEYS = {"description", "documents", "questions"}
QUESTION_KEYS = {"id", "question", "answer", "aliases", "source", "evidence"}
STRING_FIELDS = ("id", "question", "answer", "source", "evidence")


def check(path: Path, root: Path) -> tuple[int, list[str]]:
    """Returns the number of questions read and the problems found, one line each."""
    problems: list[str] = []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return 0, [f"{path}: cannot read it as JSON: {error}"]

    if not isinstance(data, dict):
        return 0, [f"{path}: the top level must be a JSON object, not {type(data).__name__}"]
    for key in sorted(TOP_KEYS - data.keys()):
        problems.append(f"missing top-level key '{key}'")
    for key in sorted(data.keys() - TOP_KEYS):
        problems.append(f"unknown top-level key '{key}'")

    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("'description' must be a non-empty string")

    documents = data.get("documents")
    texts: dict[str, str] = {}
    if not isinstance(documents, list):
        problems.append("'documents' must be a list of paths")
        documents = []
    for position, document in enumerate(documents):
        if not isinstance(document, str) or not document:
            problems.append(f"documents[{position}] must be a non-empty string")
            continue
        if document in texts:
            problems.append(f"document '{document}' is listed twice")
            continue
        file = root / document
        if not file.is_file():
            problems.append(f"document '{document}' does not exist")
            texts[document] = ""
            continue
        texts[document] = file.read_text(encoding="utf-8")

    questions = data.get("questions")
    if not isinstance(questions, list):
        problems.append("'questions' must be a list")
        return 0, problems
    count = len(questions)
    if not MIN_QUESTIONS <= count <= MAX_QUESTIONS:
        problems.append(f"{count} questions; between {MIN_QUESTIONS} and {MAX_QUESTIONS} are wanted")

    ids: Counter[str] = Counter()
    per_source: Counter[str] = Counter()
    for position, item in enumerate(questions):
        where = f"questions[{position}]"
        if not isinstance(item, dict):
            problems.append(f"{where}: must be an object")
            continue
        if isinstance(item.get("id"), str) and item["id"]:
            where = item["id"]
        for key in sorted(QUESTION_KEYS - item.keys()):
            problems.append(f"{where}: missing key '{key}'")
        for key in sorted(item.keys() - QUESTION_KEYS):
            problems.append(f"{where}: unknown key '{key}'")
        fields_ok = True
        for key in STRING_FIELDS:
            if key in item and (not isinstance(item[key], str) or not item[key].strip()):
                problems.append(f"{where}: '{key}' must be a non-empty string")
                fields_ok = False
        aliases = item.get("aliases", [])
        if not isinstance(aliases, list) or not all(
            isinstance(alias, str) and alias.strip() for alias in aliases
        ):
            problems.append(f"{where}: 'aliases' must be a list of non-empty strings")
            aliases = []
        if not fields_ok or not QUESTION_KEYS <= item.keys():
            continue

        ids[item["id"]] += 1
        answer, source, evidence = item["answer"], item["source"], item["evidence"]
        per_source[source] += 1

        words = len(answer.split())
        if words > ANSWER_MAX_WORDS:
            problems.append(f"{where}: the answer has {words} words; at most {ANSWER_MAX_WORDS}")
        folded = [alias.casefold() for alias in aliases]
        if answer.casefold() in folded:
            problems.append(f"{where}: an alias repeats the answer '{answer}'")
        if len(set(folded)) != len(folded):
            problems.append(f"{where}: an alias is listed twice")

        if not EVIDENCE_MIN <= len(evidence) <= EVIDENCE_MAX:
            problems.append(
                f"{where}: the evidence has {len(evidence)} characters; "
                f"{EVIDENCE_MIN} to {EVIDENCE_MAX} are wanted"
            )
        if "\n" in evidence:
            problems.append(f"{where}: the evidence spans more than one line")
        candidates = [answer, *aliases]
        if not any(candidate.casefold() in evidence.casefold() for candidate in candidates):
            problems.append(f"{where}: neither the answer nor an alias occurs in the evidence")

        if source not in texts:
            problems.append(f"{where}: source '{source}' is not among the documents")
            continue
        occurrences = texts[source].count(evidence)
        if occurrences == 0:
            problems.append(f"{where}: the evidence is not found verbatim in {source}")
        elif occurrences > 1:
            problems.append(f"{where}: the evidence occurs {occurrences} times in {source}; once is wanted")

    for duplicate, times in sorted(ids.items()):
        if times > 1:
            problems.append(f"id '{duplicate}' is used {times} times")
    for source, times in sorted(per_source.items()):
        if times > MAX_PER_SOURCE:
            problems.append(f"{times} questions from {source}; at most {MAX_PER_SOURCE}")
    if len(per_source) < MIN_SOURCES:
        problems.append(f"{len(per_source)} different sources; at least {MIN_SOURCES} are wanted")
    return count, problems


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in {"-h", "--help"}):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    path = Path(argv[1] if len(argv) == 2 else DEFAULT_PATH)
    count, problems = check(path, Path.cwd())
    for problem in problems:
        print(problem)
    if problems:
        print(f"questions: {count}, {len(problems)} problems")
        return 1
    print(f"questions: {count} ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
