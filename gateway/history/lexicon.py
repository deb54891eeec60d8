"""English word forms the porter stemmer cannot join: irregular verbs and plurals.

The index stems regular forms (``deploys``, ``deploying`` → ``deploy``), but "ran" is not
"run" and "bought" is not "buy" to a stemmer, and people ask "how far did I run?" about
"I ran 8 km". :func:`forms` gives every form of such a word so a question term can match
any of them. ("ate" is left out: the porter stemmer turns it into "at".)
"""

from __future__ import annotations

_GROUPS = """
be am is are was were been being|begin began begun|break broke broken|bring brought
build built|buy bought|catch caught|choose chose chosen|come came|do did done
draw drew drawn|dream dreamt dreamed|drink drank drunk|drive drove driven|eat eaten
fall fell fallen|feed fed|feel felt|fight fought|find found|fly flew flown
forget forgot forgotten|get got gotten|give gave given|go went gone|grow grew grown
have has had|hear heard|hide hid hidden|hold held|keep kept|know knew known|leave left
lend lent|lose lost|make made|mean meant|meet met|pay paid|ride rode ridden|ring rang rung
rise rose risen|run ran|say said|see saw seen|sell sold|send sent|sing sang sung|sit sat
sleep slept|speak spoke spoken|spend spent|stand stood|steal stole stolen|swim swam swum
take took taken|teach taught|tell told|think thought|throw threw thrown
understand understood|wake woke woken|wear wore worn|win won|write wrote written
child children|man men|woman women|person people|mouse mice|foot feet|tooth teeth
"""
_FORMS: dict[str, tuple[str, ...]] = {}
# One group per "|"; a line break also ends a group.
for _group in _GROUPS.replace("\n", "|").split("|"):
    _words = tuple(_group.split())
    if len(_words) > 1:
        for _word in _words:
            _FORMS[_word] = _words


def forms(word: str) -> tuple[str, ...]:
    """Every form of ``word`` (lower case) that means the same thing; at least the word."""
    return _FORMS.get(word, (word,))
