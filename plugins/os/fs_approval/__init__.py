"""The one funnel every file-system mutation asks through.

`require_fs_approval(ctx, kind, targets, ...)` canonicalises the targets (realpath,
symlinks included, dangling ones resolved to where a write would land), classifies them
as workspace / home / outside / trust config, and asks the approval gate in one step, so a
new mutating tool cannot half-wire the ladder.
"""
