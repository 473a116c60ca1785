"""Package list for setuptools (the rest of the metadata is in pyproject.toml).

The design keeps the emulated-fabric code in the folder ``fabric/``, but a top-level import package
named ``fabric`` collides with Fabric (the SSH library on PyPI): installing both in one environment
breaks one of them. So the folder installs as the import package ``mrc_fabric``; the other three
top-level packages install under their folder names.
"""
from setuptools import find_packages, setup

_OWN = find_packages(include=["softswitch", "softswitch.*", "mrc", "mrc.*", "controller", "controller.*"])
_FABRIC = ["mrc_fabric" + p[len("fabric"):] for p in find_packages(include=["fabric", "fabric.*"])]

setup(packages=_OWN + _FABRIC, package_dir={"mrc_fabric": "fabric"})
