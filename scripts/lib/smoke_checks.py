"""What the smoke scripts' result checks share (on PYTHONPATH through scripts/lib/smoke.sh)."""


def numbers(node):
    """Every float in a parsed JSON document, however deep."""
    if isinstance(node, dict):
        for value in node.values():
            yield from numbers(value)
    elif isinstance(node, list):
        for value in node:
            yield from numbers(value)
    elif isinstance(node, float):
        yield node
