"""softswitch device config: the self-contained bundle SetForwardingPipelineConfig carries.

JSON with a versioned magic, the preprocessed source, its origin map and the defines used, so
the switch re-checks exactly the program that was compiled (errors still point at the original
files) without needing the include files.
"""
from __future__ import annotations

import json

from softswitch.frontend import ir
from softswitch.frontend.errors import P4Error
from softswitch.frontend.load import load_preprocessed
from softswitch.frontend.preprocess import OriginMap, Preprocessed, preprocess_file

MAGIC = "softswitch-device-config"
VERSION = 1


class DeviceConfigError(P4Error):
    """The bytes are not a usable softswitch device config."""


def make_device_config(path: str, defines: dict[str, str] | None = None,
                       include_dirs: list[str] | None = None) -> bytes:
    """Preprocess and check the program at ``path``; return its device-config bundle."""
    pp = preprocess_file(path, defines, include_dirs)
    load_preprocessed(pp, path)  # fail now rather than at SetForwardingPipelineConfig
    doc = {"magic": MAGIC, "version": VERSION, "program": path, "defines": dict(defines or {}),
           "source": pp.text, "origins": pp.origins.to_json(), "files": pp.files}
    return json.dumps(doc, separators=(",", ":")).encode("utf-8")


def load_device_config(data: bytes) -> ir.Program:
    """Check the program carried by a device config made by ``make_device_config``."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise DeviceConfigError(None, "device config is not a softswitch device config (not JSON); "
                                      "make one with `softswitch compile`") from None
    if not isinstance(doc, dict) or doc.get("magic") != MAGIC:
        if isinstance(doc, dict) and ("pipelines" in doc or "header_types" in doc):
            raise DeviceConfigError(None, "this is a bmv2 JSON; softswitch needs a softswitch device "
                                          "config from `softswitch compile`")
        raise DeviceConfigError(None, "device config is not a softswitch device config; make one with "
                                      "`softswitch compile`")
    if doc.get("version") != VERSION:
        raise DeviceConfigError(None, f"softswitch device config version {doc.get('version')} is not "
                                      f"supported (this softswitch reads version {VERSION})")
    if not isinstance(doc.get("source"), str) or not isinstance(doc.get("files", []), list):
        raise DeviceConfigError(None, "softswitch device config is malformed ('source' must be the program "
                                      "text, 'files' a list)")
    try:
        pp = Preprocessed(doc["source"], OriginMap.from_json(doc["origins"]), list(doc.get("files", [])))
        name = str(doc.get("program", "<device-config>"))
    except (KeyError, TypeError, ValueError):
        raise DeviceConfigError(None, "softswitch device config is truncated or malformed") from None
    return load_preprocessed(pp, name)
