"""Maps the repository's top-level folders onto the `atomic_agent` import package.

One table decides the layout; setuptools gets the full sub-package list from it so a new
sub-package never needs a second edit (works for wheels and editable installs alike).
"""

from setuptools import find_packages, setup

ROOTS = {
    "atomic_agent": "core",
    "atomic_agent.plugins": "plugins",
    "atomic_agent.contrib": "contrib",
    "atomic_agent.grammars": "grammars",
    "atomic_agent.templates": "templates",
}

packages: list[str] = []
package_dir: dict[str, str] = {}
for prefix, folder in ROOTS.items():
    package_dir[prefix] = folder
    packages.append(prefix)
    packages += [f"{prefix}.{name}" for name in find_packages(folder, exclude=["tests", "tests.*"])]

setup(packages=packages, package_dir=package_dir)
