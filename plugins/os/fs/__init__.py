"""File-system tools of the `os` plugin (os.fs.*).

`tool_specs(runtime)` builds every tool around one FsEnv (the runtime's state dir fixes
the trust surface and the trash; the session store and `projects.roots` feed
locate_project). Tool modules are imported here, inside the function, so loading the
plugin for `atomic-agent --help` costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atomic_agent.api import ApprovalCategory, ConfigBlock, RuntimeView, ToolSpec


def tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    from atomic_agent.plugins.os.fs.archive_extract_tool import make_archive_extract
    from atomic_agent.plugins.os.fs.archive_tools import make_archive_list, make_archive_read_entry
    from atomic_agent.plugins.os.fs.diff_tool import make_diff
    from atomic_agent.plugins.os.fs.document_tool import make_read_document
    from atomic_agent.plugins.os.fs.edit_tool import make_edit
    from atomic_agent.plugins.os.fs.fs_env import FsEnv
    from atomic_agent.plugins.os.fs.glob_tool import make_glob
    from atomic_agent.plugins.os.fs.grep_tool import make_grep
    from atomic_agent.plugins.os.fs.hash_tool import make_hash
    from atomic_agent.plugins.os.fs.list_tool import make_list
    from atomic_agent.plugins.os.fs.locate_project_tool import make_locate_project
    from atomic_agent.plugins.os.fs.patch_tool import make_patch
    from atomic_agent.plugins.os.fs.read_tool import make_read
    from atomic_agent.plugins.os.fs.trash_tool import make_trash
    from atomic_agent.plugins.os.fs.write_tool import make_write

    env = FsEnv(runtime)
    makers = (make_read, make_write, make_edit, make_list, make_glob, make_grep, make_hash, make_diff, make_patch,
              make_trash, make_archive_list, make_archive_read_entry, make_archive_extract, make_read_document,
              make_locate_project)
    return [make(env) for make in makers]


def config_blocks() -> list[ConfigBlock]:
    from atomic_agent.plugins.os.fs.projects_config import projects_config_block

    return [projects_config_block()]


def approval_categories() -> list[ApprovalCategory]:
    from atomic_agent.plugins.os.fs_approval.fs_categories import PERSISTENCE, SENSITIVE_READ

    return [PERSISTENCE, SENSITIVE_READ]
