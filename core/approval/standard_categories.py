"""The ten standard categories of the five-level ladder (a product decision, pinned by tests).

Level 1 paranoid asks for everything; 2 workspace stops asking for writes inside the
session's working dir; 3 home adds home-dir writes, trash and HTTP; 4 operator adds shell,
scripts and process kills; 5 full trust asks for nothing.
"""

from atomic_agent.records.approval_category import ApprovalCategory

STANDARD_CATEGORIES: tuple[ApprovalCategory, ...] = (
    ApprovalCategory("fs_write_workspace", 2, "file write · workspace"),
    ApprovalCategory("fs_write_home", 3, "file write · home"),
    ApprovalCategory("fs_trash", 3, "move to trash"),
    ApprovalCategory("http", 3, "HTTP request"),
    ApprovalCategory("shell", 4, "shell command"),
    ApprovalCategory("script", 4, "skill script"),
    ApprovalCategory("proc_kill", 4, "kill process"),
    ApprovalCategory("browser_nonweb", 5, "browser · non-web URL"),
    ApprovalCategory("trust_config", 5, "agent trust config", grantable=False),
    ApprovalCategory("other", 5, "other action"),
)

LEVEL_NAMES = {1: "paranoid", 2: "workspace", 3: "home", 4: "operator", 5: "full trust"}
