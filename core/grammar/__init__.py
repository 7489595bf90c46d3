"""GBNF grammar assembly: the tool-call grammar sent with every grammar-transport step."""
