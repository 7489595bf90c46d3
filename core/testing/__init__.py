"""The plugin-author test kit: fresh plugin hosts, in-process plugins, real servers."""
