"""The approval ladder: categories, levels and (later) the gate."""
