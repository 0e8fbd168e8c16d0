"""The one exception a node's handler raises: this node cannot run, and why."""


class Skip(Exception):
    """Raised inside a node handler: the node cannot run, with the reason. The node loop collects it
    with the node's position (importer.py), so every problem of a model is reported together."""
