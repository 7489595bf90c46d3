"""Does a message lean on the conversation before it? A pure function over word lists, for
the whitespace-separated languages the guide names: en, ru, es, de, fr, pt, it, nl, pl,
tr, ar, he, hi, vi, id, ko. CJK and Thai need a segmenter and are not gated here.

Referential when any holds:
- at most SHORT_WORDS words and it does not open with a question word (a short "what is
  X?" carries its own anchor; "and the other one?" does not);
- it holds a third-person or demonstrative pronoun;
- it opens with a conjunction ("and", "but", ...).
"""

from __future__ import annotations

import re

SHORT_WORDS = 5
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)

# third-person and demonstrative pronouns; words that are also articles (fr la/le/les,
# es la/las/los, it la/lo, pt o/a) are left out so ordinary sentences do not fire
PRONOUNS: frozenset[str] = frozenset("""
it its they them their theirs he him his she her hers this that these those there
он она оно они его её ее их ему ей им это этот эта эти тот та те то
él ella ellos ellas eso esto ello aquello ese esa esos esas este esta estos estas
es sie ihn ihm ihr ihnen das dies diese dieser dieses jene jener dort
il elle ils elles ça cela ceci lui leur eux celui celle ceux celles
ele ela eles elas isso isto aquilo esse essa aquele aquela
esso essa essi esse loro quello quella quelli quelle questo questa questi queste lui lei
het dat dit die deze zij hij hem haar hun ze daar
on ona ono oni one go jego jej ich tego tej tym to tamten tamta
o onlar onu onları onun bu şu bunu şunu orada
هو هي هم هن ذلك هذا هذه تلك أولئك هؤلاء
הוא היא הם הן זה זאת אלה אותו אותה אותם שם
वह वे यह ये उसे उन्हें इसे इन्हें उसका उनका वहाँ
nó họ đó ấy kia này
itu ini mereka dia ia beliau sana
그것 그들 그 그녀 이것 저것 거기 그거 이거 저거
""".split())

CONJUNCTIONS: frozenset[str] = frozenset("""
and but so also or then plus
и но а также или тогда
y e pero entonces también o
und aber also oder dann auch
et mais donc puis ou alors aussi
e mas então também ou
e ma allora anche oppure poi
en maar dus ook of dan
i ale a więc albo też
ve ama peki fakat yani de da
و لكن ثم أو ف
ו אבל אז או גם
और लेकिन तो या फिर भी
và nhưng còn hay rồi
dan tapi tetapi lalu atau juga
그리고 하지만 그런데 그럼 또
""".split())

QUESTION_WORDS: frozenset[str] = frozenset("""
what who whom whose where when why how which
что кто где когда почему зачем как какой какая какие сколько
qué que quién quien dónde donde cuándo cuando cómo como cuál cual cuánto por
was wer wen wem wo wann warum wieso wie welche welcher welches
quoi qui où quand pourquoi comment quel quelle quels quelles combien
quem onde quando porque porquê qual quais quanto
che chi cosa dove quando perché come quale quali quanto
wat wie waar wanneer waarom hoe welke welk
co kto gdzie kiedy dlaczego czemu jak który która które ile
ne kim nerede neden niçin nasıl hangi kaç
ما ماذا من أين متى لماذا كيف أي كم
מה מי איפה מתי למה מדוע איך איזה כמה
क्या कौन कहाँ कब क्यों कैसे कौनसा कितना
gì ai đâu nào sao bao
apa siapa mana kapan mengapa kenapa bagaimana berapa
무엇 뭐 누구 어디 언제 왜 어떻게 어느 몇
""".split())


# tokens that collide with common words of another listed language (English "on", "go",
# "to", "I", "a"; German "ich", "die"; Spanish "es"; Portuguese "o", "de") stay out
_COLLISIONS = frozenset({"on", "go", "to", "one", "ich", "die", "es", "het", "o", "a", "i", "de", "da"})
PRONOUNS = PRONOUNS - _COLLISIONS
CONJUNCTIONS = (CONJUNCTIONS - _COLLISIONS) | {"\u0430"}  # Russian "а" (Cyrillic)


def words(message: str) -> list[str]:
    return _WORD.findall(message.lower())


def is_referential(message: str) -> bool:
    """True when `message` probably needs the conversation before it to be understood."""
    tokens = words(message)
    if not tokens:
        return False
    if len(tokens) <= SHORT_WORDS and tokens[0] not in QUESTION_WORDS:
        return True
    if tokens[0] in CONJUNCTIONS:
        return True
    return any(t in PRONOUNS for t in tokens)
