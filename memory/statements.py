"""Plain statements: what the tick keeps of a batch when the model's answer holds nothing usable.

Owns: the few shapes of a plain statement a member makes about themselves ("my sister is called
Ruth", "I'm allergic to peanuts", "I have a dog called Biscuit", "I live in Leeds", "I work as a
nurse", "I play bass"), in English and the same few in German, French and Spanish, each rewritten
as a sentence about its speaker ("Maya's sister is called Ruth"), and the lines they are read
from: a member's own lines, never hers. A sentence is a statement only when the pattern opens it
and it is plain: a question, a negation, a hypothetical ("if I ..."), reported speech ("Tom
says my ..."), a passing state ("my day is going well") or a credential is not one.
Must not: read or write memory, or decide scope or weight: it returns an `Extraction`, which
`assertions_from` turns into evidence exactly as it does the model's answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from memory.classifier import classify
from memory.consolidation import Batch, ExtractedItem, Extraction
from memory.models import Role, Sensitivity, scope_owner
from memory.secrets import has_secret

KindName = Literal["fact", "preference", "commitment", "goal", "person"]

_MAX_WORDS = 16  # a longer tail is no longer a plain statement
_WORD = r"[^\W\d_][\w'-]*"
_FLAGS = re.IGNORECASE | re.UNICODE

# Openers that carry nothing ("Also, I'm allergic to ..."), in the four languages.
_OPENER = re.compile(
    r"^(?:also|and|oh|ah|well|so|btw|by the way|actually|anyway|anyways|ok|okay|yes|yeah|yep"
    r"|hi|hey|hello|fyi|fun fact|just so you know|for the record|in fact|um|uh|right"
    r"|übrigens|ja|na|nun|und|hallo|ach|alors|bon|oui|et|au fait|d'ailleurs|salut|bonjour"
    r"|bueno|pues|sí|y|por cierto|hola|además)\b[\s,:;!.-]*",
    _FLAGS,
)
_TAIL = re.compile(
    r"[\s,]*\b(?:by the way|btw|too|as well|lol|haha+|übrigens|au fait|por cierto)$", _FLAGS
)
# Where a second clause starts: only the first is kept ("I'm allergic to peanuts, so no satay").
_CLAUSE = re.compile(
    r",\s*(?:so|but|because|which|who|although|though|since|and|or|as|when|while|if|unless"
    r"|aber|weil|denn|und|dass|oder|wenn|mais|parce|donc|et|car|quand|pero|porque|así|y|o"
    r"|cuando|aunque|i|i'm|we|we're|she|she's|he|he's|they|they're|it|it's|you|my)\b"
    r"|\s+(?:but|because|although|though|whereas|unless|so that|aber|weil|mais|parce que"
    r"|pero|porque)\s"
    r"|\s+(?:and|so|und|et|y)\s+(?:i|i'm|she|he|they|it|we|my|her|his|their|ich|mein|meine"
    r"|je|j'|mon|ma|mes|mi|mis|yo)\b"
    r"|\s+[-\u2013\u2014(]\s*",
    _FLAGS,
)
# What memory writes in place of words: a forgotten line's "[forgotten]", a masked secret's
# "[masked api_key]". A line holding one is not the member's plain words any more.
_PLACEHOLDER = re.compile(r"\[[a-z][a-z_ ]*\]")
_SENTENCE = re.compile(r"(?<=[.!?…;])\s+|\n+")


@dataclass(frozen=True)
class _Language:
    """What makes a sentence of one language something other than a plain statement."""

    negation: re.Pattern[str]  # in the statement's own clause
    conditional: re.Pattern[str]  # anywhere in the sentence ("if I ...", "imagine I ...")
    modal: re.Pattern[str]  # in the statement's own clause ("I'd", "maybe", "would")
    reported: re.Pattern[str]  # anywhere in the sentence
    pronouns: re.Pattern[str]  # in the rewritten tail: whose "you" or "we" is unknown here


def _words(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w'])(?:" + "|".join(alternatives) + r")(?![\w'])", _FLAGS)


_EN = _Language(
    negation=re.compile(
        r"n[']t\b|(?<![\w'])(?:not|never|no|none|nobody|nothing|nowhere|neither|nor|anymore"
        r"|no longer|any more)(?![\w'])",
        _FLAGS,
    ),
    conditional=_words("if", "unless", "suppose", "supposing", "imagine", "in case", "pretend",
                       "as if", "what if"),
    modal=_words("would", "could", "might", "should", "maybe", "perhaps", "probably",
                 "possibly", "wish", "hopefully", "i[']d", "i[']ll", "going to", "gonna",
                 "want to", "wanna"),
    reported=_words(
        "said", "says", "say", "told", "tells", "tell", "asked", "asks", "reckons", "thinks",
        "believes", "apparently", "according to", "heard", "claims", "claimed",
    ),
    pronouns=_words("you", "your", "yours", "we", "our", "ours", "us", "i", "i[']m",
                    "i[']ve", "mine"),
)
_DE = _Language(
    negation=_words("nicht", "kein", "keine", "keinen", "keinem", "keiner", "nie", "niemals",
                    "nichts", "niemand", "nirgends"),
    conditional=_words("wenn", "falls", "angenommen", "stell dir vor"),
    modal=_words("würde", "würdest", "würden", "könnte", "vielleicht", "eventuell", "sollte",
                 "wäre"),
    reported=_words("sagt", "sagte", "meint", "meinte", "erzählt", "erzählte", "angeblich",
                    "laut"),
    pronouns=_words("ich", "mich", "mir", "mein", "meine", "meinen", "meinem", "meiner",
                    "du", "dich", "dir", "dein", "deine", "wir", "uns", "unser", "unsere"),
)
_FR = _Language(
    negation=re.compile(
        r"(?<![\w'])(?:ne|n[']|pas|jamais|rien|personne|aucun|aucune)(?![\w])", _FLAGS
    ),
    conditional=re.compile(r"(?<![\w'])(?:si|s[']il|imagine|imaginons)(?![\w'])", _FLAGS),
    modal=_words("serait", "pourrait", "peut-être", "voudrais", "aimerais"),
    reported=_words("dit", "disait", "raconte", "paraît", "selon"),
    pronouns=re.compile(
        r"(?<![\w'])(?:moi|me|m[']|mon|ma|mes|je|j[']|tu|te|toi|ton|ta|tes|vous|votre|vos"
        r"|nous|notre|nos)(?![\w])",
        _FLAGS,
    ),
)
_ES = _Language(
    negation=_words("no", "nunca", "jamás", "nada", "nadie", "ningún", "ninguna", "ninguno",
                    "tampoco"),
    conditional=_words("si", "imagina", "supongamos"),
    modal=_words("sería", "podría", "quizás", "quizá", "tal vez", "ojalá", "a lo mejor"),
    reported=_words("dice", "dijo", "dicen", "según"),
    pronouns=_words("me", "mi", "mis", "yo", "conmigo", "tú", "tu", "tus", "te", "ti",
                    "usted", "nosotros", "nosotras", "nuestro", "nuestra", "nos"),
)

# People one is related to or lives beside: a statement about them is kind "person".
_RELATIONS = (
    r"mum|mom|mother|dad|father|parents?|sister|brother|siblings?|son|daughter|wife|husband"
    r"|partner|boyfriend|girlfriend|fianc[ée]e?|grandma|grandmother|grandpa|grandfather|granny"
    r"|nan|aunt|uncle|cousin|niece|nephew|kids?|children|child|baby|twin|friend|best friend"
    r"|boss|colleague|neighbour|neighbor|flatmate|roommate|stepmother|stepfather|stepson"
    r"|stepdaughter|in-laws|mother-in-law|father-in-law"
    r"|schwester|bruder|mutter|mama|vater|papa|mann|frau|sohn|tochter|freund|freundin|eltern"
    r"|oma|opa|tante|onkel|cousine|kinder|kind"
    r"|sœur|soeur|frère|frere|mère|mere|père|pere|mari|femme|fils|fille|ami|amie|copain"
    r"|copine|parents|grand-mère|grand-père|tante|oncle|cousin|cousine|enfants?"
    r"|hermana|hermano|madre|padre|mamá|papá|marido|esposo|esposa|mujer|hijo|hija|hijos"
    r"|novio|novia|amigo|amiga|abuela|abuelo|tía|tío|prima|primo"
)
_RELATION = re.compile(rf"(?<![\w'])(?:{_RELATIONS})(?:[']s)?(?![\w'])", _FLAGS)
_PETS = (
    r"dogs?|cats?|pupp(?:y|ies)|kittens?|rabbits?|bunn(?:y|ies)|hamsters?|guinea pigs?"
    r"|parrots?|budgies?|horses?|ponies|pony|tortoises?|turtles?|goldfish|fish|snakes?"
    r"|lizards?|ferrets?|chickens?|hens?"
)
_FAVOURITE = re.compile(r"(?<![\w'])favou?rite(?![\w'])", _FLAGS)
# "my X ..." where X is a passing thing or a manner of speaking, not a fact about someone.
_PASSING_X = re.compile(
    r"^(?:day|week|weekend|morning|afternoon|evening|night|head|mood|phone|battery|internet"
    r"|train|bus|tea|coffee|dinner|lunch|breakfast|guess|point|question|problem|plan|idea"
    r"|opinion|view|fault|bad|pleasure|turn|god|goodness|bet|hope|worry|excuse|answer|word"
    r"|name|favou?rite|life|luck|heart|back|brain|treat)$",
    _FLAGS,
)
# Words that make "my X is" something other than a noun phrase ("my mum says it is ...").
_NOT_IN_X = _words(
    "it", "that", "this", "there", "he", "she", "they", "who", "which", "what", "where", "when",
    "and", "or", "but", "my", "says", "said", "thinks", "think", "told", "knows", "believes",
    "feels", "wants", "hopes", "reckons",
)
_WEAK_TAIL = re.compile(
    r"^(?:(?:so|really|very|quite|pretty|super|too|kind of|sort of|a bit|a little|such a)\b.*"
    r"|good|great|fine|ok|okay|alright|bad|awful|terrible|nice|lovely|amazing|brilliant|cool"
    r"|busy|tired|here|there|back|home|gone|over|done|ready|late|early|sick|broken|dead|off"
    r"|on|out|away|weird|funny|crazy|mad|annoying|boring|awesome|perfect|better|worse|best"
    r"|worst|that|this|it|true|right|wrong|everything|killing me|a mess|that [^ ]+.*"
    r"|[^\W\d_]+ing\b.+)$",
    _FLAGS,
)
# What the model is told never to copy: a credential's or an account's name, or a long number.
_SECRET_X = _words(
    "password", "passcode", "passphrase", "pin", "code", "login", "username", "key", "account",
    "card", "iban", "bic", "swift", "sort code", "security", "combination", "secret", "token",
    "otp", "ssn", "social security", "national insurance", "passport", "licence", "license",
    "passwort", "kennwort", "konto", "schlüssel", "mot de passe", "compte", "carte",
    "contraseña", "clave", "cuenta", "tarjeta",
)
_LONG_NUMBER = re.compile(r"\d(?:[\s./-]?\d){5,}")
_A_DEGREE = re.compile(
    r"^an? (?:bit|little|tad|lot|mess|wreck|few|couple|hour|minute|second|week|day)\b", _FLAGS
)
_PASSING_TIME = re.compile(
    r"(?<![\w'])(?:today|tonight|tomorrow|yesterday|right now|at the moment|this (?:morning"
    r"|afternoon|evening|week|weekend)|in (?:an?|\d+|a few|two|ten) (?:hours?|minutes?|mins?"
    r"|seconds?)|heute|morgen|gestern|aujourd[']hui|demain|hier|ce soir|hoy|mañana|ayer"
    r"|esta noche)(?![\w'])",
    _FLAGS,
)


@dataclass(frozen=True)
class _Pattern:
    language: _Language
    shape: re.Pattern[str]
    render: Callable[[str, re.Match[str], str], str]  # (name, match, tail) -> the statement
    kind: Callable[[re.Match[str]], KindName]


def _en_possessive(name: str) -> str:
    return f"{name}'s"


def _de_genitive(name: str) -> str:
    return f"{name}'" if name[-1:].lower() in ("s", "ß", "x", "z") else f"{name}s"


def _fr_article(det: str, noun: str) -> str:
    if det.lower() == "mes":
        return "Les "
    if noun[:1].lower() in "aeiouyhâàéèêîïôûœ":
        return "L'"
    return "Le " if det.lower() == "mon" else "La "


def _es_article(det: str, noun: str) -> str:
    head = noun.split(maxsplit=1)[0].lower()
    if det.lower() == "mis":
        return "Las " if head.endswith("as") else "Los "
    return "La " if head.endswith("a") else "El "


def _kind_of_x(match: re.Match[str]) -> KindName:
    x = match.group("x")
    if _FAVOURITE.search(x):
        return "preference"
    return "person" if _RELATION.search(x) else "fact"


def _kind_of_tail(match: re.Match[str]) -> KindName:
    return "person" if _RELATION.search(match.group("y")) else "fact"


def _fact(_: re.Match[str]) -> KindName:
    return "fact"


def _person(_: re.Match[str]) -> KindName:
    return "person"


def _verb(third: str) -> Callable[[str, re.Match[str], str], str]:
    """A statement of the shape "<name> <verb> <tail>" ("Maya lives in Leeds")."""
    return lambda name, _match, tail: f"{name} {third} {tail}"


def _shape(pattern: str) -> re.Pattern[str]:
    """A whole-clause pattern; "§" stands for one word."""
    return re.compile("^" + pattern.replace("§", _WORD) + "$", _FLAGS)


def _my_x(name: str, match: re.Match[str], tail: str) -> str:
    return f"{_en_possessive(name)} {match.group('x')} {match.group('v').lower()} {tail}"


def _my_x_contracted(name: str, match: re.Match[str], tail: str) -> str:
    return f"{_en_possessive(name)} {match.group('x')} is {tail}"


def _mein_x(name: str, match: re.Match[str], tail: str) -> str:
    return f"{_de_genitive(name)} {match.group('x')} {match.group('v').lower()} {tail}"


def _mon_x(name: str, match: re.Match[str], tail: str) -> str:
    x = match.group("x")
    return f"{_fr_article(match.group('det'), x)}{x} de {name} {match.group('v')} {tail}"


def _mi_x(name: str, match: re.Match[str], tail: str) -> str:
    x = match.group("x")
    return f"{_es_article(match.group('det'), x)}{x} de {name} {match.group('v')} {tail}"


_AM = r"i(?: am|[']m)"
_HAVE = r"i(?: have|[']ve)(?: got)?"
_COUNT = r"(?:a|an|one|two|three|four|five|\d+)"

# Each shape is matched against one cleaned clause, from its first word to its last; the tail
# (group "y") is what the member said after the pattern, kept in their words.
_PATTERNS: tuple[_Pattern, ...] = (
    # English
    _Pattern(_EN, _shape(r"my (?P<x>§(?: §){0,3}?) (?P<v>is|are|was|were|lives|live|works"
                         r"|work|plays|studies|teaches|moved|just moved|has moved)"
                         r" (?P<y>.+)"), _my_x, _kind_of_x),
    _Pattern(_EN, _shape(r"my (?P<x>§(?: §){0,2}?)'s (?P<y>(?:called|named|a|an|from)"
                         r" .+)"), _my_x_contracted, _kind_of_x),
    _Pattern(_EN, _shape(rf"{_AM} (?P<y>(?:allergic|intolerant|lactose intolerant|gluten"
                         r" intolerant) .+)"), _verb("is"), _fact),
    _Pattern(_EN, _shape(rf"{_AM} (?P<y>(?:vegetarian|vegan|pescatarian|diabetic|coeliac"
                         r"|celiac|left-handed|right-handed|retired|pregnant|colou?r-?blind)"
                         r"(?: .+)?)"), _verb("is"), _fact),
    _Pattern(_EN, _shape(rf"{_AM} (?P<y>(?:married|engaged) to .+)"), _verb("is"), _person),
    _Pattern(_EN, _shape(rf"{_AM} (?P<y>(?:originally )?from .+)"), _verb("is"), _fact),
    _Pattern(_EN, _shape(rf"{_AM} (?P<y>\d{{1,3}} years? old)"), _verb("is"), _fact),
    _Pattern(_EN, _shape(rf"{_AM} (?P<y>an? .+)"), _verb("is"), _fact),
    _Pattern(_EN, _shape(rf"{_HAVE} (?P<y>{_COUNT} §(?: §){{0,2}}? (?:called|named) .+)"),
             _verb("has"), _kind_of_tail),
    _Pattern(_EN, _shape(rf"{_HAVE} (?P<y>{_COUNT} (?:§ )?(?:{_RELATIONS}|{_PETS})(?: .+)?)"),
             _verb("has"), _kind_of_tail),
    _Pattern(_EN, _shape(r"i live (?P<y>(?:in|at|near|on|with|by) .+)"), _verb("lives"),
             _kind_of_tail),
    _Pattern(_EN, _shape(r"i work (?P<y>(?:as|at|for|in|from) .+)"), _verb("works"), _fact),
    _Pattern(_EN, _shape(r"i(?: have|[']ve)? (?:just |recently |finally )?moved"
                         r" (?P<y>(?:to|back to|in with|into) .+)"), _verb("moved"), _fact),
    _Pattern(_EN, _shape(r"i come from (?P<y>.+)"), _verb("comes from"), _fact),
    _Pattern(_EN, _shape(r"i was born (?P<y>(?:in|on|at) .+)"), _verb("was born"), _fact),
    _Pattern(_EN, _shape(r"i play (?P<y>(?!it\b|along\b|with\b|around\b|games? with\b).+)"),
             _verb("plays"), _fact),
    _Pattern(_EN, _shape(r"i speak (?P<y>.+)"), _verb("speaks"), _fact),
    _Pattern(_EN, _shape(r"i study (?P<y>.+)"), _verb("studies"), _fact),
    _Pattern(_EN, _shape(r"i teach (?P<y>.+)"), _verb("teaches"), _fact),
    _Pattern(_EN, _shape(r"i drive (?P<y>(?:a|an) .+)"), _verb("drives"), _fact),
    _Pattern(_EN, _shape(r"i support (?P<y>.+)"), _verb("supports"), _fact),
    # German
    _Pattern(_DE, _shape(r"(?:mein|meine) (?P<x>§(?: §){0,2}?) (?P<v>ist|heißt|heisst|sind"
                         r"|war|wohnt|lebt|arbeitet) (?P<y>.+)"), _mein_x, _kind_of_x),
    _Pattern(_DE, _shape(r"ich bin allergisch (?P<y>(?:gegen|auf) .+)"),
             _verb("ist allergisch"), _fact),
    _Pattern(_DE, _shape(r"ich wohne (?P<y>(?:in|im|bei|an|am|auf) .+)"), _verb("wohnt"),
             _fact),
    _Pattern(_DE, _shape(r"ich lebe (?P<y>(?:in|im|bei) .+)"), _verb("lebt"), _fact),
    _Pattern(_DE, _shape(r"ich arbeite (?P<y>(?:als|bei|in|im|an|am|für) .+)"),
             _verb("arbeitet"), _fact),
    _Pattern(_DE, _shape(r"ich habe (?P<y>(?:einen|eine|ein|zwei|drei) §(?: §){0,2}? namens"
                         r" .+)"), _verb("hat"), _kind_of_tail),
    _Pattern(_DE, _shape(r"ich spiele (?P<y>.+)"), _verb("spielt"), _fact),
    _Pattern(_DE, _shape(r"ich komme aus (?P<y>.+)"), _verb("kommt aus"), _fact),
    # French
    _Pattern(_FR, _shape(r"(?P<det>mon|ma|mes) (?P<x>§(?: §){0,2}?) (?P<v>est|s[']appelle"
                         r"|sont|était|habite|vit|travaille) (?P<y>.+)"), _mon_x, _kind_of_x),
    _Pattern(_FR, _shape(r"je suis allergique (?P<y>.+)"), _verb("est allergique"), _fact),
    _Pattern(_FR, _shape(r"j[']habite (?P<y>.+)"), _verb("habite"), _fact),
    _Pattern(_FR, _shape(r"je vis (?P<y>(?:à|en|au|aux|avec) .+)"), _verb("vit"), _fact),
    _Pattern(_FR, _shape(r"je travaille (?P<y>(?:comme|chez|à|au|en|dans|pour) .+)"),
             _verb("travaille"), _fact),
    _Pattern(_FR, _shape(r"j[']ai (?P<y>(?:un|une|deux|trois) §(?: §){0,2}? (?:qui"
                         r" s[']appelle|nommée?|appelée?) .+)"), _verb("a"), _kind_of_tail),
    _Pattern(_FR, _shape(r"je joue (?P<y>(?:du|de la|de l[']|des|au|à la|aux) .+)"),
             _verb("joue"), _fact),
    _Pattern(_FR, _shape(r"j[']ai déménagé (?P<y>(?:à|en|au|aux|dans) .+)"),
             _verb("a déménagé"), _fact),
    # Spanish
    _Pattern(_ES, _shape(r"(?P<det>mi|mis) (?P<x>§(?: §){0,2}?) (?P<v>es|se llama|son|era"
                         r"|vive|trabaja) (?P<y>.+)"), _mi_x, _kind_of_x),
    _Pattern(_ES, _shape(r"soy (?P<y>alérgic[oa] .+)"), _verb("es"), _fact),
    _Pattern(_ES, _shape(r"vivo (?P<y>(?:en|con|cerca de) .+)"), _verb("vive"), _fact),
    _Pattern(_ES, _shape(r"trabajo (?P<y>(?:como|en|de|para) .+)"), _verb("trabaja"), _fact),
    _Pattern(_ES, _shape(r"tengo (?P<y>(?:un|una|dos|tres) §(?: §){0,2}? (?:que se llama"
                         r"|llamad[oa]) .+)"), _verb("tiene"), _kind_of_tail),
    _Pattern(_ES, _shape(r"toco (?P<y>(?:el|la|los|las) .+)"), _verb("toca"), _fact),
    _Pattern(_ES, _shape(r"juego (?P<y>(?:al|a la) .+)"), _verb("juega"), _fact),
    _Pattern(_ES, _shape(r"me mud[ée] (?P<y>a .+)"), _verb("se mudó"), _fact),
)


def _opened(sentence: str) -> str:
    """The sentence without the openers that carry nothing ("Also, ...", "By the way, ...")."""
    previous = None
    while previous != sentence:
        previous = sentence
        sentence = _OPENER.sub("", sentence, count=1).strip()
    return sentence


def _ended(text: str) -> str:
    """Without closing punctuation, emoji or a "by the way" at the end."""
    previous = None
    while previous != text:
        previous = text
        text = text.rstrip()
        while text and not (text[-1].isalnum() or text[-1] in ")'\"%"):
            text = text[:-1].rstrip()
        text = _TAIL.sub("", text)
    return text


def _is_question(sentence: str) -> bool:
    return "?" in sentence or sentence.startswith("¿")


def _tail_of(pattern: _Pattern, match: re.Match[str], name: str) -> str | None:
    """The member's own words after the pattern, with "my" and "me" said as whose they are
    (English), or None when what is left is not a plain fact."""
    tail = match.group("y").strip()
    words = tail.split()
    if not words or len(words) > _MAX_WORDS or _PASSING_TIME.search(tail):
        return None
    if pattern.language is _EN:
        if _WEAK_TAIL.match(tail) or _A_DEGREE.match(tail):
            return None
        tail = re.sub(r"(?<![\w'])my(?![\w'])", _en_possessive(name), tail, flags=_FLAGS)
        tail = re.sub(r"(?<![\w'])(?:me|myself)(?![\w'])", name, tail, flags=_FLAGS)
    if pattern.language.pronouns.search(tail):
        return None
    return tail


def _is_plain_noun(match: re.Match[str]) -> bool:
    """The "X" of "my X is ..." names a thing about the member, not a passing one."""
    if "x" not in match.groupdict():
        return True
    x = match.group("x")
    return not (_PASSING_X.match(x) or _NOT_IN_X.search(x))


def _is_secretive(match: re.Match[str], statement: str) -> bool:
    x = match.groupdict().get("x") or ""
    return bool(
        _SECRET_X.search(x) or _LONG_NUMBER.search(statement) or has_secret(statement)
        or classify(statement) == Sensitivity.CREDENTIALS
    )


def _statement_in(sentence: str, name: str) -> tuple[str, KindName] | None:
    """One sentence as a statement about `name`, or None when it is not a plain one."""
    if _is_question(sentence):
        return None
    opened = _opened(sentence)
    clause = _ended(_CLAUSE.split(opened, maxsplit=1)[0])
    for pattern in _PATTERNS:
        match = pattern.shape.match(clause)
        if match is None:
            continue
        language = pattern.language
        if language.conditional.search(opened) or language.reported.search(opened):
            return None
        if language.negation.search(clause) or language.modal.search(clause):
            return None
        if not _is_plain_noun(match):
            return None
        tail = _tail_of(pattern, match, name)
        if tail is None:
            return None
        statement = pattern.render(name, match, tail)
        if _is_secretive(match, statement):
            return None  # never kept from a passing line, as the model is told
        return statement, pattern.kind(match)
    return None


def plain_statements(name: str, text: str) -> list[tuple[str, KindName]]:
    """The plain first-person statements in one line a member said, each as a sentence about
    them: ("Maya's sister is called Ruth", "person"). Empty for anything less plain."""
    if not name.strip() or text.lstrip().startswith("/") or _PLACEHOLDER.search(text):
        return []
    text = text.replace("\u2019", "'").replace("\u2018", "'")  # "I\u2019m" reads as "I'm"
    out: list[tuple[str, KindName]] = []
    for sentence in _SENTENCE.split(text.strip()):
        found = _statement_in(" ".join(sentence.split()), name)
        if found is not None and found not in out:
            out.append(found)
    return out


def statements_in(batch: Batch, names: Mapping[str, str]) -> Extraction:
    """The plain statements members made in a batch, as an extraction of that batch.

    Only members' lines are read, never hers. A statement is about its speaker; in a private
    scope every member line is the scope owner's, so it is about them. `names` maps a person id
    to their name, as the prompt does.
    """
    owner = scope_owner(batch.scope)
    items: list[ExtractedItem] = []
    for number, turn in enumerate(batch.turns, start=1):
        if turn.role != Role.USER:
            continue
        speaker = owner or turn.speaker_id
        name = names.get(speaker) if speaker is not None else None
        if name is None:
            continue
        for statement, kind in plain_statements(name, turn.text):
            items.append(
                ExtractedItem(statement=statement, kind=kind, about=name, lines=[number])
            )
    return Extraction(items=items)
