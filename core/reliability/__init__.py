"""The failure taxonomy: every terminal turn failure normalised into one category."""
