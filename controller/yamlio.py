"""Strict YAML reading for the project's input files (topologies, scenarios).

PyYAML's ``safe_load`` takes a repeated mapping key silently (the last one wins: ``planes: 2`` then
``planes: 1`` gives 1, and the error, if any, comes later about something else), and its syntax
errors span several lines and name ``<unicode string>`` instead of the file.  ``load_yaml`` refuses
duplicate keys and reports any YAML error as one line ``FILE:LINE:COL: ...``."""
from __future__ import annotations

from typing import Any

import yaml


class YamlFileError(ValueError):
    """A YAML file that cannot be read as data; the message is one line, ``FILE:LINE:COL: what``."""


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping key given twice (YAML 1.2 says keys are unique)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the base constructor reports it
            continue
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {first.start_mark.line + 1})",
                key_node.start_mark)
        seen[key] = key_node
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(text: str, where: str) -> Any:
    """Parse ``text`` (read from ``where``) as YAML data, refusing duplicate keys; errors are
    ``YamlFileError("where:line:col: not valid YAML: problem")``."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        pos = f"{where}:{mark.line + 1}:{mark.column + 1}" if mark is not None else where
        what = " ".join(str(e.problem or e.context or "syntax error").split())
        if e.context and e.problem and e.context_mark is not None and e.problem_mark is not None:
            what += f" ({' '.join(e.context.split())} at line {e.context_mark.line + 1})"
        raise YamlFileError(f"{pos}: not valid YAML: {what}") from None
    except yaml.YAMLError as e:
        raise YamlFileError(f"{where}: not valid YAML: {' '.join(str(e).split())}") from None
