"""memory.sqlite: the profile facts and notes every memory phase reads and writes."""
