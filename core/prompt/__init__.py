"""Building each step's prompt: a byte-stable prefix plus a short variable tail."""
