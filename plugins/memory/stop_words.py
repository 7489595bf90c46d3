"""English words too common to steer full-text recall (function words, question words,
auxiliaries). Kept short on purpose: content words, even frequent ones, stay in queries."""

from __future__ import annotations

STOP_WORDS: frozenset[str] = frozenset("""
a about above after again against all am an and any are aren as at be because been before being below
between both but by can cannot could couldn did didn do does doesn doing don down during each few for
from further had hadn has hasn have haven having he her here hers herself him himself his how i if in
into is isn it its itself just let me more most my myself no nor not of off on once only or other ought
our ours ourselves out over own same shall she should shouldn so some such than that the their theirs
them themselves then there these they this those through to too under until up upon very was wasn we
were weren what when where which while who whom whose why will with won would wouldn you your yours
yourself yourselves s t d ll m re ve also ever still yet really quite
please tell know think remember say said mention mentioned ask asked
""".split())
