"""Maps the repository's top-level folders onto the `atomic_agent` import package.

One table decides the layout; setuptools gets the full sub-package list from it so a new
sub-package never needs a second edit (works for wheels and editable installs alike).
"""

from pathlib import Path

from setuptools import find_packages, setup

ROOTS = {
    "atomic_agent": "core",
    "atomic_agent.plugins": "plugins",
    "atomic_agent.contrib": "contrib",
    "atomic_agent.grammars": "grammars",
    "atomic_agent.templates": "templates",
}

# a plugin's own prompt templates, grammars and protocol schemas sit in folders beside its
# code; listed as (data-only) packages so setuptools ships them without warning that they are missing
DATA_FOLDERS = ("templates", "grammars", "protocol")

packages: list[str] = []
package_dir: dict[str, str] = {}
for prefix, folder in ROOTS.items():
    package_dir[prefix] = folder
    packages.append(prefix)
    for name in find_packages(folder, exclude=["tests", "tests.*"]):
        packages.append(f"{prefix}.{name}")
        packages += [f"{prefix}.{name}.{data}" for data in DATA_FOLDERS
                     if (Path(folder, *name.split(".")) / data).is_dir()]

setup(packages=packages, package_dir=package_dir)
