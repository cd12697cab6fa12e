"""Who a question is about: the people and animals of a household, by the role words naming them.

A question about someone in particular ("when is my dad's birthday?", "what's my dentist
called?") is not answered by a fact about someone else ("my mum's birthday is in June", "my
doctor is Dr Patel"), however alike the two sentences are: that near miss is the commonest false
memory a household meets. Recall asks `answers_who` of each candidate it would call sure.
Groups are the same person's role in English, German, French and Spanish; a general word
("child", "parent") is answered by any of its specific ones ("son", "mum").

The same holds for the household's members by name. "When does Tom's passport expire?" is not
answered by Maya's "I renewed my passport", nor "what did Tom run the half marathon in?" by her
"I ran the half marathon in 2 hours 5": a line in the first person is about its speaker, and a
question in the first person about its asker (`answers_whose`).

Two more of the same kind: whose thing a question asks after ("my dad's birthday?" is not
answered by the asker's own "my birthday is in March": `answers_whose_thing`), and which named
thing ("when is Maya in Paris?" is not answered by a line naming Berlin instead:
`answers_which`).

Owns: the role vocabulary, the first-person words, and those rules. Must not: decide
relevance otherwise (they only keep a candidate from being recalled as sure).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from memory.periods import MONTHS
from memory.terms import STOPWORDS, sentences, stems, text_cache, words

_GROUPS: dict[str, str] = {
    "mother": "mum mom mother mam mummy mommy mama mutter mutti mère maman madre mamá",
    "father": "dad daddy father papa vater vati père padre papá",
    "brother": "brother bro bruder frère hermano",
    "sister": "sister sis schwester sœur soeur hermana",
    "son": "son sohn fils hijo",
    "daughter": "daughter tochter fille hija",
    "spouse": "husband wife spouse partner boyfriend girlfriend fiancé fiancée fiance fiancee"
              " ehemann ehefrau freundin mari esposo esposa marido",
    "grandmother": "grandma granny gran nan nana nanna grandmother oma grossmutter grand-mère"
                   " abuela",
    "grandfather": "grandad granddad grandpa grandfather opa grossvater grand-père abuelo",
    "aunt": "aunt auntie aunty tante tía",
    "uncle": "uncle onkel oncle tío",
    "cousin": "cousin cousine cousine kusine vetter primo prima",
    "niece": "niece nichte nièce sobrina",
    "nephew": "nephew neffe neveu sobrino",
    "inlaw": "laws in-law in-laws schwiegereltern schwiegermutter schwiegervater beaux-parents"
             " suegros suegra suegro",
    "doctor": "doctor gp physician hausarzt hausärztin arzt ärztin médecin médico médica",
    "dentist": "dentist zahnarzt zahnärztin dentiste dentista",
    "vet": "vet veterinarian vets tierarzt tierärztin vétérinaire veterinario",
    "physio": "physio physiotherapist physiotherapeut kiné kinésithérapeute fisioterapeuta",
    "therapist": "therapist counsellor counselor psychologist therapeut psychologue terapeuta",
    "teacher": "teacher tutor lehrer lehrerin professeur prof maîtresse maestro maestra profesor"
               " profesora",
    "boss": "boss manager supervisor chef chefin patron patronne jefe jefa",
    "colleague": "colleague coworker co-worker kollege kollegin collègue colega",
    "landlord": "landlord landlady vermieter vermieterin propriétaire casero casera",
    "neighbour": "neighbour neighbor neighbours neighbors nachbar nachbarin voisin voisine vecino"
                 " vecina",
    "plumber": "plumber klempner installateur plombier fontanero",
    "hairdresser": "hairdresser barber friseur friseurin coiffeur coiffeuse peluquero peluquera",
    "friend": "friend mate buddy pal freund kumpel ami amie copain copine amigo amiga",
    "dog": "dog puppy pup hund welpe chien chiot perro perra",
    "cat": "cat kitten kitty katze kater chatte chaton gato gata",
}
# A general word, answered by any of these specific ones too.
_GENERAL: dict[str, str] = {
    "child": "child children kid kids baby enfant enfants niño niña hijos",
    "parent": "parent parents eltern parents padres",
    "sibling": "sibling siblings geschwister",
    "grandparent": "grandparent grandparents grosseltern grands-parents abuelos",
    "pet": "pet pets haustier animal",
}
_SPECIFIC: dict[str, frozenset[str]] = {
    "child": frozenset({"son", "daughter"}),
    "parent": frozenset({"mother", "father"}),
    "sibling": frozenset({"brother", "sister"}),
    "grandparent": frozenset({"grandmother", "grandfather"}),
    "pet": frozenset({"dog", "cat"}),
}
_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*(?:['\u2019]s\b)?", re.UNICODE)


def _by_stem() -> dict[str, str]:
    table: dict[str, str] = {}
    for group, spelled in (*_GROUPS.items(), *_GENERAL.items()):
        for word in spelled.split():
            table.setdefault(word, group)
    return table


_ROLE_OF = _by_stem()


@text_cache(maxsize=50_000)
def _role(word: str) -> str | None:
    if word in _ROLE_OF:
        return _ROLE_OF[word]
    for form in (word[:-1] if word.endswith("s") else None, *sorted(stems(word))):
        if form and form in _ROLE_OF:
            return _ROLE_OF[form]
    return None


@text_cache(maxsize=50_000)
def role_stems(word: str) -> frozenset[str]:
    """The stems of every word naming the same role as `word` ("gp" -> doctor, physician,
    Hausarzt, ...; "boss" -> manager, Chefin, ...), or none when it names no role: one person
    is called by any of them, so a question's word meets a line's other word for them."""
    group = _role(word)
    if group is None:
        return frozenset()
    spelled = {**_GROUPS, **_GENERAL}[group]
    return frozenset(stem for other in spelled.split() for stem in stems(other))


@text_cache(maxsize=50_000)
def roles(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The role groups `text` names, and of those the ones it names as an owner ("mum's")."""
    named: set[str] = set()
    owners: set[str] = set()
    for token in _WORD.findall(text.casefold()):
        possessive = token.endswith(("'s", "\u2019s"))
        word = token[:-2] if possessive else token
        group = _role(word)
        if group is not None:
            named.add(group)
            if possessive:
                owners.add(group)
    return frozenset(named), frozenset(owners)


def _covered(group: str, named: frozenset[str]) -> bool:
    """Whether a text naming `named` names `group` (itself, or one of its specific roles)."""
    return group in named or bool(_SPECIFIC.get(group, frozenset()) & named)


# Roles of one kind: a question naming one of them is not answered by a text naming another of
# the same kind and not it ("my brother" and "my sister Jane"; "my dentist" and "my doctor").
# A text naming only a person ("Tom's operation") may be about anyone, so it is not refused.
_KINDS = (
    frozenset({"mother", "father", "brother", "sister", "son", "daughter", "spouse",
               "grandmother", "grandfather", "aunt", "uncle", "cousin", "niece", "nephew",
               "inlaw", "child", "parent", "sibling", "grandparent"}),
    frozenset({"doctor", "dentist", "vet", "physio", "therapist"}),
    frozenset({"teacher", "boss", "colleague", "landlord", "neighbour", "plumber",
               "hairdresser", "friend"}),
    frozenset({"dog", "cat", "pet"}),
)


def answers_who(question: str, candidate: str) -> bool:
    """Whether `candidate` can be about whom `question` asks: False when the question names a
    role and the candidate names another of the same kind but not that one, and when it asks
    after one's role ("what did mum's doctor tell her?") and the candidate speaks of the one
    whose it is (mum) but neither of that role nor of anyone by name ("Don't tell anyone yet,
    mum will make a big thing of it.")."""
    asked, owning = roles(question)
    said, _ = roles(candidate)
    for group in asked:
        if _names_role(group, said):
            continue
        kind = next((k for k in _KINDS if group in k), frozenset())
        if said & kind:
            return False
    owned = asked - owning
    return not (owning and owned and all(_names_role(g, said) for g in owning)
                and not any(_names_role(g, said) for g in owned)
                and not proper_names(candidate))


def _names_role(group: str, named: frozenset[str]) -> bool:
    """Whether a text naming the role groups `named` names `group`, by itself, one of its
    specific roles or its general one."""
    return _covered(group, named) or any(group in _SPECIFIC.get(s, frozenset()) for s in named)


# The first person singular, in the four languages: a text using one speaks of its speaker. "We"
# and "our" are the household, so they name no one in particular.
_FIRST_PERSON_WORDS = (
    "i me my mine myself ich mich mir mein meine meinen meinem meiner meines je moi mon ma mes"
    " yo mi mis mío mía conmigo"
)
_FIRST_PERSON = frozenset(_FIRST_PERSON_WORDS.split())
# The third person singular: a text using one speaks of someone besides its speaker.
_THIRD_PERSON_WORDS = (
    "he him his she her hers er ihm ihn sein seine seinem seinen seiner ihr ihre ihrem ihren"
    " il elle lui él ella"
)
_THIRD_PERSON = frozenset(_THIRD_PERSON_WORDS.split())
# The second person: a text using one speaks to someone about them ("congrats on your new job,
# Ellie"), so whoever it addresses by name is whom it is about.
_SECOND_PERSON_WORDS = (
    "you your yours yourself du dich dir dein deine deinen deinem deiner euch euer eure tu te"
    " toi ton ta tes vous votre vos ti tus usted vosotros vuestro vuestra"
)
_SECOND_PERSON = frozenset(_SECOND_PERSON_WORDS.split())
# The first person plural: a text using one speaks of its speaker among others ("we were
# teammates for four years"), so it is not only about whom it speaks to.
_WE_WORDS = "we us our ours ourselves wir uns unser unsere nous notre nos nosotros nuestro nuestra"
_WE = frozenset(_WE_WORDS.split())
# Words that greet or answer someone before their name ("Thanks Tom!", "Hey Ellie, ...").
_GREETING_WORDS = (
    "hey hi hello hiya thanks thank cheers yeah yep yes ok okay oh aw wow sorry congrats morning"
    " night bye love dear nice great cool haha lol hallo danke tschüss salut merci coucou hola"
    " gracias woohoo woo yay hooray hurray aww awww omg whoa ooh ah ahh yo done go congratulations"
    " bravo woah"
)
_GREETINGS = frozenset(_GREETING_WORDS.split())


@dataclass(frozen=True)
class Whose:
    """Who a text is about, as far as names and pronouns tell: the members it names, whether
    it says "I" or "my", and whether it says "he" or "her"."""

    named: frozenset[str]
    first_person: bool
    third_person: bool

    def people(self, speaker: str | None) -> frozenset[str]:
        return self.named | ({speaker} if speaker and self.first_person else frozenset())


class Roster:
    """The household's members by the words naming them, for `answers_whose`."""

    def __init__(self, members: dict[str, str]) -> None:
        self._by_word: dict[str, str] = {}
        for person_id, name in members.items():
            for word in {name.casefold(), *name.casefold().split()}:
                # A name that is also a common word ("Me", the terminal's member) names no one.
                if word in _FIRST_PERSON or word in STOPWORDS or len(word) < 2:
                    continue
                self._by_word.setdefault(word, person_id)
        self.ids = frozenset(members)
        self._names = frozenset(self._by_word)
        self._stems = {person_id: tuple(stems(word) for word in name.casefold().split())
                       for person_id, name in members.items()}

    def name_stems(self, *people: str | None) -> tuple[frozenset[str], ...]:
        """The stems of these members' names, as a document's words (`memory.terms`)."""
        return tuple(s for p in dict.fromkeys(people) if p for s in self._stems.get(p, ()))

    def member(self, word: str) -> str | None:
        """The member a (lower-case) word names, if any."""
        return self._by_word.get(_bare(word))

    def names(self, word: str) -> bool:
        """Whether a (lower-case) word is a member's name."""
        return self.member(word) is not None

    def without_names(self, text: str) -> str:
        """The text with the members' names taken out ("When did Tom's knee ..." -> "When did
        knee ..."): what it asks, apart from whom it asks about. A sentence embedding of a short
        question is mostly its names, so "When did Melanie run a charity race?" sits nearer
        "Hey Melanie! Just wanted to say hi!" than the line about the race; who a line is about
        is `answers_whose`'s to judge, by speaker and subject. A text that is names alone stays
        as it is."""
        kept = _WORD.sub(lambda m: "" if self.member(m.group().casefold()) else m.group(), text)
        kept = " ".join(kept.split())
        return kept if words(kept) else text

    def whose(self, text: str) -> Whose:
        words, first_person, third_person = _persons(text)
        named = (words - addressed(text)) & self._names
        return Whose(named=frozenset(self._by_word[w] for w in named),
                     first_person=first_person, third_person=third_person)

    def called(self, text: str) -> frozenset[str]:
        """The members `text` calls by name ("Hey Gina!"), whether or not it says "you"."""
        return frozenset(self._by_word[w] for w in _vocatives(text) & self._names)

    def one_named(self, text: str) -> str | None:
        """The one member `text` speaks of by name (not only addressing them), if just one."""
        named = self.whose(text).named
        return next(iter(named)) if len(named) == 1 else None


@text_cache(maxsize=50_000)
def _persons(text: str) -> tuple[frozenset[str], bool, bool]:
    """A text's words (possessive endings off), and whether it speaks in the first person and
    in the third: what `Roster.whose` reads, the same for every roster and every recall."""
    tokens = _WORD.findall(text.casefold())
    words = frozenset(_bare(token) for token in tokens)
    return words, not _FIRST_PERSON.isdisjoint(words), not _THIRD_PERSON.isdisjoint(tokens)


_OPENS = ",!?.;:(-\u2013\u2014"
_CLOSES = ",!?.;:)-\u2013\u2014"


@text_cache(maxsize=50_000)
def addressed(text: str) -> frozenset[str]:
    """The words a text uses only to address someone, when it does not speak of them as "you":
    "Thanks, Melanie! This necklace is special to me" is about its speaker, not Melanie; "That
    race sounds great, Mel, proud of you" is about Mel. A word is in address when it stands
    between the start of a sentence, a comma or a greeting ("hey", "thanks") and a comma or the
    end of a sentence ("Hey Tom!", "Lukas, bins go out on Tuesday", "..., Maya."). Said as "I"
    to one only told or given it ("Tom, I want to share this with you"), it is in address."""
    if not _SECOND_PERSON.isdisjoint(_persons(text)[0]) and not _told_you_as_i(text):
        return frozenset()
    return _vocatives(text)


@text_cache(maxsize=50_000)
def _vocatives(text: str) -> frozenset[str]:
    """The words a text calls someone by, "you" or not (`addressed`'s positions)."""
    folded = text.casefold()
    found = list(_WORD.finditer(folded))
    address: set[str] = set()
    other: set[str] = set()
    for i, m in enumerate(found):
        before = folded[found[i - 1].end() if i else 0 : m.start()].strip()
        after = folded[m.end() : found[i + 1].start() if i + 1 < len(found) else None].strip()
        opens = (i == 0 or (before[-1:] != "" and before[-1:] in _OPENS)
                 or (before in ("", ",") and found[i - 1].group() in _GREETINGS))
        closes = i + 1 == len(found) or (after[:1] != "" and after[:1] in _CLOSES)
        possessive = m.group().endswith(("'s", "\u2019s"))
        (address if opens and closes and not possessive else other).add(_bare(m.group()))
    return frozenset(address - other)


@text_cache(maxsize=50_000)
def speaks_as_we(text: str) -> bool:
    """Whether `text` speaks as "we" and not as "I": of its speaker among others."""
    said = _persons(text)
    return not said[1] and not _WE.isdisjoint(said[0])


# Praise of what the one spoken to did or has, in the four languages: words that praise
# whomever they are said to ("congrats on the promotion", "well done"), and words that praise
# whatever they are said of ("great", "stunning"), which praise the one spoken to only in the
# sentence calling them by name ("That's a great guitar, Calvin!", not "Hey Jon! The store's
# doing great!") or in a reaction to what they said ("Wow, that's awesome!", "Sounds great",
# "What a lovely photo", not "It was a great day").
_JOY = "happy|glad|thrilled|excited|stoked|pleased|delighted"  # for the one spoken to
_CONGRATULATING = re.compile(
    r"\b(?:congrats|congratulations|well done|way to go|good job|great job|nice one|proud of you"
    rf"|(?:{_JOY}) for you(?! to\b)|stolz auf dich"
    r"|fier de toi|fière de toi|heureux pour toi|heureuse pour toi|orgullos[oa] de ti|feliz por ti"
    r"|bravo|glückwunsch|gratuliere|félicitations|felicidades|enhorabuena)\b")
# The "I" of joy at what the one spoken to did ("I'm so proud of you", "I'm thrilled for you",
# "ich bin stolz auf dich", "je suis fière de toi", "estoy orgullosa de ti") is the speaker's
# feeling, not the speaker's news: `rejoiced` reads such a clause without it.
_REJOICING = re.compile(
    r"\b(?:i'm|i\u2019m|i am|ich bin|je suis|estoy)\s+(?=(?:(?:so|really|super|very|truly|just"
    r"|always|incredibly|sehr|wirklich|si|tellement|vraiment|muy|tan)\s+)*(?:"
    rf"(?:{_JOY}|proud)\s+(?:for|of)\s+you\b"
    r"(?!\s+to\b)|stolz auf dich\b|(?:fier|fière|heureux|heureuse)\s+(?:de|pour)\s+toi\b"
    r"|(?:orgullos[oa]|feliz)\s+(?:de|por)\s+ti\b))", re.IGNORECASE)
_PRAISING = re.compile(
    r"\b(?:great|awesome|amazing|stunning|brilliant|fantastic|wonderful|lovely|beautiful"
    r"|impressive|inspiring|incredible|cool|toll|super|klasse|génial|magnifique|genial"
    r"|increíble|precioso)\b")
_THANKING = re.compile(r"\b(?:thanks|thank you|thx|danke|merci|gracias)\b")
_REACTING = re.compile(
    r"(?:(?:wow|oh|aw+|yeah|yes|omg|whoa|woah|ooh)\W+)*(?:that|those|sounds|looks"
    r"|what an?)\b")


@text_cache(maxsize=50_000)
def rejoiced(text: str) -> str:
    """`text` with the "I" of its joy for the one spoken to left out: "I'm so proud of you for
    taking part" reads "so proud of you for taking part", which speaks of no one but them."""
    return _REJOICING.sub("", text)


@text_cache(maxsize=50_000)
def praised(text: str) -> Literal["called", "speaker"] | None:
    """Whose thing a text that speaks of no one (not as "I", "we" nor "he" or "she") is, by
    its praise: the one it speaks to when it praises them ("That's a great guitar, Calvin!",
    "Wow, John! Congrats on the promotion!", "Wow, that's awesome!" just after their line),
    its speaker's when it thanks ("Thanks, Dave! The tour has been great": whoever thanks was
    praised for their own). The "I" of joy for them (`rejoiced`) does not speak of its speaker:
    "That's great, Maria! I'm thrilled for you" praises Maria."""
    text = rejoiced(text)
    folded = text.casefold()
    found = _persons(text)
    if found[1] or found[2] or not _WE.isdisjoint(found[0]):
        return None
    if _THANKING.search(folded) is not None:
        return "speaker"
    if _CONGRATULATING.search(folded) is not None or any(
            _PRAISING.search(part.casefold()) is not None
            and (any(_capitalised(word, part) and word not in _GREETINGS
                     for word in _vocatives(part))
                 or _REACTING.match(part.casefold()) is not None)
            for part in sentences(text)):
        return "called"
    return None


@text_cache(maxsize=50_000)
def speaks_of_you(text: str) -> bool:
    """Whether `text` speaks of whom it speaks to: it says "your" ("your new hair colour looks
    amazing"), or asks them ("Why did you make it so shiny?"). A "you" in a statement may be
    anyone ("you can use coconut oil instead of butter")."""
    for part in sentences(text):
        tokens = set(_WORD.findall(part.casefold()))
        if not _YOURS.isdisjoint(tokens) or (
                part.rstrip().endswith("?") and not _SECOND_PERSON.isdisjoint(tokens)):
            return True
    return False


@text_cache(maxsize=50_000)
def _sentences(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """A text's sentences, each with its content words' stems."""
    return tuple((part, frozenset(s for w in words(part) for s in stems(w)))
                 for part in sentences(text))


@text_cache(maxsize=10_000)
def _asked_stems(question: str) -> tuple[frozenset[str], ...]:
    """A question's content words' stems, a set for each word."""
    return tuple(stems(w) for w in words(question))


@text_cache(maxsize=4_096)  # recall asks it twice of each candidate: for whom, for asking
def answering(question: str, candidate: str, roster: Roster) -> str:
    """The sentences of `candidate` that share the most of the question's words, names aside:
    the part that answers it, and so the part whose people the answer is about. In "Hey Maria,
    hope you're doing okay. I've been blogging about politics", asked "Why did Maria start
    blogging?", that is the second sentence, in the speaker's first person; the greeting's
    "you" speaks to Maria, not of her blog. The whole text when no sentence shares a word."""
    parts = _sentences(candidate)
    if len(parts) < 2:
        return candidate
    asked = [s for s in _asked_stems(question) if not any(roster.names(w) for w in s)]
    shared = [sum(1 for word in asked if word & part_stems) for _, part_stems in parts]
    best = max(shared)
    if best == 0:
        return candidate
    return " ".join(part for (part, _), n in zip(parts, shared, strict=True) if n == best)


def _bare(token: str) -> str:
    """A word without its possessive ending ("tom's" -> "tom")."""
    return token.removesuffix("'s").removesuffix("\u2019s")


def _all_stems(text: str) -> set[str]:
    return {s for word in _persons(text)[0] for s in stems(word)}


# "My" in the four languages: what follows it belongs to the speaker.
_MY_WORDS = "my mein meine meinen meinem meiner meines mon ma mes mi mis"
_MY = frozenset(_MY_WORDS.split())
_SELF = "self"
# "Your": what follows belongs to whom the text speaks to, never to its speaker.
# (Not the French "ta": in an English chat it is "thanks".)
_YOUR_WORDS = "your dein deine deinen deinem deiner deines tes votre vos tus"
_YOUR = frozenset(_YOUR_WORDS.split())
_ADDRESSEE = "addressee"
# "Your" and its kin: what `speaks_of_you` reads as speaking of the addressee ("your hair"),
# where a bare "you" may be anyone ("you can use coconut oil instead").
_YOURS_WORDS = "yours yourself yourselves euer eure ton vuestro vuestra"
_YOURS = _YOUR | frozenset(_YOURS_WORDS.split())
# "His" and "her": what follows belongs to the one member the text names, when it names one.
_HIS_WORDS = "his her sein seine seinen seinem seiner seines sa ses sus"
_HIS = frozenset(_HIS_WORDS.split())
_SOMEONE = "someone"
_OWNING = _MY | _YOUR | _HIS
_PRONOUN_OWNER = {**dict.fromkeys(_YOUR, _ADDRESSEE), **dict.fromkeys(_HIS, _SOMEONE)}


# "What car am I driving?" asks after the asker's car as "my car?" would: a question opening
# with one of these, then up to three words and one of the verbs after them, asks after the
# thing those words name, of whom the verb's subject names.
_WHICH = frozenset(("what", "which"))
_ASKING_VERB_WORDS = "am is are was were do does did have has had will would can could should must"
_ASKING_VERBS = frozenset(_ASKING_VERB_WORDS.split())
_SUBJECT_OWNER = {"i": _SELF, "he": _SOMEONE, "she": _SOMEONE}
_AND = frozenset(("and", "or"))
_A_KIND_OF_WORDS = "kind kinds sort sorts type types"  # "what kind of car": the car
_A_KIND_OF = frozenset(_A_KIND_OF_WORDS.split())


def _asked_owner(text: str, tokens: list[str], roster: Roster | None) -> tuple[list[str], str]:
    """The words of the thing a "what/which ... do I/does Tom ...?" question asks after, and
    whose it is ([] when the text asks no such question): "What car am I driving?" asks after
    the asker's car, "Which band does Tom play in?" Tom's band. "We" and "you" name no one,
    nor do two ("does Sam and Evan"), whose thing may be either's."""
    if len(tokens) < 3 or tokens[0] not in _WHICH or not text.rstrip().endswith("?"):
        return [], ""
    for j in range(2, min(len(tokens) - 1, 5)):
        if tokens[j] not in _ASKING_VERBS:
            continue
        subject = tokens[j + 1]
        if j + 2 < len(tokens) and tokens[j + 2] in _AND:  # "does Sam and Evan": theirs both
            return [], ""
        owner = _SUBJECT_OWNER.get(subject)
        if owner is None and roster is not None and roster.names(subject):
            owner = f"member:{roster.member(subject)}"
        if owner is None and stems(subject) & proper_names(text, roster):
            owner = f"name:{subject}"  # "does Dan have": Dan's, Dan no member
        if owner == _SOMEONE and roster is not None:
            one = roster.one_named(text)
            owner = None if one is None else f"member:{one}"
        if owner is None:
            return [], ""
        asked = [t for t in tokens[1:j] if t not in STOPWORDS and t not in _A_KIND_OF]
        return asked, owner
    return [], ""


def owners(text: str, roster: Roster | None = None) -> dict[str, str]:
    """Whose each owned thing is, by its words' stems: the speaker's ("my passport": `self`), a
    role's ("mum's birthday": `role:mother`), a member's ("Tom's knee": `member:<id>`), or
    another named one's ("Ruth's birthday": `name:ruth`), the addressee's ("your son":
    `addressee`), or, for "his" and "her", the one member the text names ("Caroline and her
    family": `member:<id>`; `someone` when it names none or several). The owner's next two
    words are what it owns ("my old passport"); a later owner takes over ("my mum's birthday"
    is mum's). "Her" before a word like "the" is no owner ("I told her the date")."""
    tokens = _WORD.findall(text.casefold())
    out: dict[str, str] = {}
    for i, token in enumerate(tokens):
        possessive = token.endswith(("'s", "\u2019s"))
        if not possessive and token not in _OWNING:
            continue
        if token in _HIS and (i + 1 == len(tokens) or tokens[i + 1] in STOPWORDS):
            continue
        word = token[:-2] if possessive else token
        if possessive and word in STOPWORDS:  # "what's", "it's": a verb, not an owner
            continue
        owner = _owner_of(word, possessive, roster)
        if owner == _SOMEONE and roster is not None:
            one = roster.one_named(text)
            owner = _SOMEONE if one is None else f"member:{one}"
        for owned in tokens[i + 1 : i + 3]:
            if owned in _OWNING:
                break
            plain = _bare(owned)
            if plain not in STOPWORDS:
                for stem in stems(plain):
                    out[stem] = owner
            if owned != plain:  # "my mum's birthday": the birthday is mum's
                group = _role(plain)
                if group is not None:  # and mum is mine: kept as "role:mother" -> "self"
                    out[f"role:{group}"] = owner
                break
    asked, owner = _asked_owner(text, tokens, roster)
    for word in asked:
        for stem in stems(_bare(word)):
            out.setdefault(stem, owner)
    return out


def _capitalised(word: str, text: str) -> bool:
    """Whether `text` writes `word` (lower-case, possessive ending off) with a capital, as a
    name: "Ruth's", "Anna's", where "the car's" and "the dog's" are no one's name."""
    return any(token[:1].isupper() and _bare(token).casefold() == word
               for token in _WORD.findall(text))


def _owner_of(word: str, possessive: bool, roster: Roster | None) -> str:
    if not possessive:
        return _PRONOUN_OWNER.get(word, _SELF)
    group = _role(word)
    if group is not None:
        return f"role:{group}"
    if roster is not None and roster.names(word):
        return f"member:{roster.member(word)}"
    return f"name:{word}"


# Capitalised words that name no one and nothing in particular: the calendar, and "I".
_CALENDAR_WORDS = (
    "i monday tuesday wednesday thursday friday saturday sunday montag dienstag mittwoch"
    " donnerstag freitag samstag sonntag lundi mardi mercredi jeudi vendredi samedi dimanche"
    " lunes martes miércoles jueves viernes sábado domingo christmas easter"
)
_CALENDAR = frozenset(_CALENDAR_WORDS.split()) | frozenset(MONTHS)


def proper_names(text: str, roster: Roster | None = None) -> frozenset[str]:
    """The stems of the names a text uses mid-sentence ("Paris", "French", "GCSE"), without
    the household's members (`answers_whose` weighs those) and the calendar's words."""
    found: set[str] = set()
    for sentence in sentences(text):
        for token in _WORD.findall(sentence)[1:]:
            word = _bare(token)
            folded = word.casefold()
            if (not word[:1].isupper() or folded in _CALENDAR or folded in STOPWORDS
                    or _role(folded) is not None
                    or (roster is not None and roster.names(folded))):
                continue
            found |= stems(folded)
    return frozenset(found)


def answers_which(question: str, candidate: str, roster: Roster | None = None) -> bool:
    """Whether `candidate` can be about the named thing `question` asks after: False when the
    question names something ("Paris", "German") the candidate does not, and the candidate
    names something else instead ("Berlin", "French"). A text naming nothing may be a
    paraphrase ("the capital"), so it is not refused."""
    asked = proper_names(question, roster)
    if not asked:
        return True
    if asked <= _all_stems(candidate):
        return True
    return not (proper_names(candidate, roster) - _all_stems(question))


def answers_whose_thing(question: str, asker: str | None, candidate: str,
                        speaker: str | None, roster: Roster | None = None, *,
                        addressee: str | None = None) -> bool:
    """Whether the thing the question asks after and the candidate speaks of can be the same
    one's: False for "my dad's birthday?" against the asker's own "my birthday is in March",
    for "my birthday?" against "my mum's birthday is in June", for "Tom's mum's birthday?"
    against Maya's "my mum's birthday", for "Caroline and her family?" against Melanie's "my
    family", for "Caroline's son?" against Caroline's "glad your son's okay", and for "Ruth's
    birthday?" (Ruth no member) against a member's "my birthday", "Tom's birthday" or "Anna's
    birthday". A line answering another member's (`addressee`, `Read.around`) says "your" of
    that member's: Nate's "your new hair colour" to Joanna is not Nate's hair colour. And
    another member's line that says whose of nothing and is not said to or of the one asked
    after is not told as theirs (`_not_told_as_theirs`)."""
    asked = owners(question, roster)
    said = owners(candidate, roster)
    if _not_told_as_theirs(asked, said, candidate, asker=asker, speaker=speaker, roster=roster,
                           addressee=addressee):
        return False
    for stem, owner in asked.items():
        other = said.get(stem)
        if other == _ADDRESSEE and addressee is not None:
            other = f"member:{addressee}"
        if other is None or other == owner:
            continue
        if other.startswith("member:") and (owner.startswith("member:") or (
                owner == _SELF and asker is not None and other != f"member:{asker}")):
            return False  # another member's: "Tom's knee" is not Maya's knee
        mine = other == _SELF
        if owner.startswith("name:") and _capitalised(owner[5:], question) and (
                (mine and speaker is not None) or other.startswith("member:")
                or (other.startswith("name:") and _capitalised(other[5:], candidate))):
            return False  # Ruth's, Ruth no member: not a member's own, another's, nor Anna's
        if owner.startswith("role:") and mine and speaker is not None and speaker == asker:
            return False
        if owner.startswith("role:") and other == asked.get(owner):  # Tom's, for Tom's mum's
            return False
        if owner == _SELF and other.startswith("role:"):
            return False
        if owner.startswith("member:") and mine and speaker is not None and (
                owner != f"member:{speaker}"):
            return False
        # The asker's own "your son" or "her passport" is someone else's; a member's "your
        # son" is not their son.
        if speaker is not None and other in (_ADDRESSEE, _SOMEONE) and (
                (owner == _SELF and speaker == asker)
                or (other == _ADDRESSEE and owner == f"member:{speaker}")):
            return False
    return True


def _not_told_as_theirs(asked: dict[str, str], said: dict[str, str], candidate: str, *,
                        asker: str | None, speaker: str | None, roster: Roster | None,
                        addressee: str | None) -> bool:
    """Whether a line cannot be about the thing the question asks after as one member's own
    (the asker's "my bedroom", or "Ellie's bedroom"): said by another member, it gives nothing
    an owner, neither names that member nor speaks or answers to them, and does not speak as
    "we" (which may take them in). Maya's "the spare room is getting painted sage green" does
    not tell Ellie what colour her bedroom will be. A question after someone's people ("my
    uncle") is left to `answers_whose`: a line about Tom may be about him."""
    whose = {asker if owner == _SELF else owner[len("member:"):] for owner in asked.values()
             if owner == _SELF or owner.startswith("member:")}
    if len(whose) != 1 or speaker is None:
        return False
    person = next(iter(whose))
    if person is None or speaker == person:
        return False
    mine = [stem for stem, owner in asked.items() if owner in (_SELF, f"member:{person}")]
    if any(stem.startswith("role:") or _role(stem) for stem in mine):
        return False
    if said or addressee == person:
        return False
    said_words = _persons(candidate)[0]
    if not (_SECOND_PERSON.isdisjoint(said_words) and _WE.isdisjoint(said_words)):
        return False  # "your room", and "our room", which may be theirs too
    return not (roster is not None and any(roster.member(w) == person for w in said_words))


# Words after which an English "you" is whom something is given, told or done for ("let you
# know", "share it with you", "help you"), not who does it nor whose it is ("did you", "glad
# you're", "your"); German, French and Spanish say "you" as an object by their own words.
_YOU_AFTER_WORDS = (
    "with for to about at from on of let tell told show showed send sent give gave help ask"
    " asked remind update keep wish miss meet call text bring thank"
)
_YOU_AFTER = frozenset(_YOU_AFTER_WORDS.split())
_OBJECT_YOU = frozenset(("dich", "dir", "euch", "te", "ti"))


@text_cache(maxsize=50_000)
def _told_you_as_i(text: str) -> bool:
    """Whether `text` speaks as "I" and every "you" of it is only whom something is told,
    given or done for: "Hey Maria! Wanted to let you know that I'm running for office again"
    is its speaker's news, where "your new job", "What's been happening with you?" and "I'm
    thrilled for you" speak of the one spoken to."""
    if not _persons(text)[1] or _CONGRATULATING.search(text.casefold()) is not None:
        return False
    for part in sentences(text):
        tokens = _WORD.findall(part.casefold())
        if part.rstrip().endswith("?") and not _SECOND_PERSON.isdisjoint(tokens):
            return False
        for i, word in enumerate(tokens):
            if word in _SECOND_PERSON and word not in _OBJECT_YOU and not (
                    word == "you" and i and tokens[i - 1] in _YOU_AFTER):
                return False
    return True


def _spoken_of(part: str, candidate: str, speaker: str | None, roster: Roster, *,
               subject: str | None, addressee: str | None) -> tuple[Whose, frozenset[str]]:
    """Whom `part` of `candidate` speaks of, and how (`Roster.whose`)."""
    c = roster.whose(part)
    about = c.people(speaker) | ({subject} if subject else frozenset())
    if not _SECOND_PERSON.isdisjoint(_persons(part)[0]) and not _told_you_as_i(part):
        # It says "you" ("What made you run again?"): it speaks of whom the text calls by
        # name ("Congrats, John!"), or else of the member whose line it answers (`addressee`:
        # "Wow, your new hair colour looks amazing!"), unless it speaks as "I" or "we" too ("We
        # were teammates for years. Were you ever in a team?"). A question without "you" may
        # be the speaker's own ("Sunflowers mean warmth, right?"). Said as "I" to someone
        # only told or given it ("I wanted to let you know I'm running again"), it is not.
        called = roster.called(candidate)
        about |= called or (
            {addressee} if addressee is not None and not c.first_person
            and not speaks_as_we(part) and speaks_of_you(part) else frozenset())
    return c, about


def _listener(text: str, roster: Roster, addressee: str | None) -> frozenset[str]:
    """Whom `text` speaks to: the members it calls by name, or else the member whose line it
    answers (`addressee`), if any."""
    return roster.called(text) or (
        frozenset({addressee}) if addressee is not None else frozenset())


def _by_praise(text: str, asked: frozenset[str], speaker: str | None,
               listener: frozenset[str]) -> bool | None:
    """Whether `text`, which speaks of no one, is about whom a question asks after (`asked`),
    by its praise (`praised`): the listener's thing when it praises them, the speaker's when
    it thanks; None when its praise does not tell."""
    side = praised(text)
    if side == "speaker" and speaker is not None:
        return speaker in asked
    if side == "called" and listener:
        return bool(asked & listener)
    return None


def answers_whose(question: str, asker: str | None, candidate: str, speaker: str | None, *,
                  roster: Roster, subject: str | None = None,
                  addressee: str | None = None, called_out: bool = False) -> bool:
    """Whether `candidate` (said by `speaker`, about `subject` when known) can be about whom
    `question` (asked by `asker`) asks, by the members either names or speaks as: False when
    both are about particular members and none is the same. A question asking after someone by
    role ("my husband") may be about any member but the asker: which member is whose is not
    known here, so only a candidate about the asker alone is refused. A question naming a
    member asks after theirs ("how often does Caroline take her kids to the beach?" is not
    answered by Melanie's "we take my kids to the beach once a year")."""
    whom = roster.whose(question)
    asked = whom.people(asker if asker in roster.ids else None)
    asked_roles, _ = roles(question)
    if not asked and not asked_roles:  # about no one in particular: anyone's may answer
        return True
    if called_out:  # "I'm so proud of you" is not its speaker's news (`rejoiced`)
        candidate = rejoiced(candidate)
    # Who the sentences that answer speak of; the whole text's people when those name no one.
    focus = answering(question, candidate, roster)
    c, about = _spoken_of(focus, candidate, speaker, roster, subject=subject,
                          addressee=addressee)
    if called_out and asked and not about and not c.third_person and focus != candidate:
        # The sentences that answer praise whom the line speaks to ("Melanie, those bowls are
        # amazing! ... I love that you chose pottery"): the rest of the line does not make
        # them the speaker's.
        verdict = _by_praise(focus, asked, speaker, _listener(focus, roster, addressee))
        if verdict is not None:
            return verdict
    if not about and not c.third_person and focus != candidate:
        c, about = _spoken_of(candidate, candidate, speaker, roster, subject=subject,
                              addressee=addressee)
    if not about:
        # About no one in particular, unless it speaks as "we" to whom the question asks
        # after, in the sentences that answer or elsewhere: "Thanks, Caroline! We went camping
        # yesterday", Melanie's "We always look forward to our family camping trip" just after
        # Caroline spoke, or "Thanks, Caroline! Yup, we did it yesterday! The kids loved it",
        # is the speaker's side, not Caroline's camping.
        listener = _listener(candidate, roster, addressee)
        we = speaks_as_we(focus) or speaks_as_we(candidate)
        if asked and listener and asked <= listener and we:
            return False
        # With `called_out`, a text that praises whom it speaks to (by name, or the member
        # whose line it answers) is about their thing, one that thanks about its speaker's
        # (`praised`): "That's a great guitar, Calvin!" is Calvin's, "Thanks, Dave! The tour
        # has been great" its speaker's. Speaking to someone alone does not tell ("Lukas, bins
        # go out on Tuesday" is everyone's), and praise is not always read right, so this only
        # keeps such a text from being told, never moves it in the ranking.
        verdict = _by_praise(candidate, asked, speaker, listener) if called_out and asked else None
        return True if verdict is None else verdict
    if asked_roles and not whom.named:
        # "My husband" may be any member (who is whose is not known here), but not the asker
        # themself: "what allergy does my son have?" is not answered by the asker's own "I'm
        # allergic to peanuts", unless that line speaks of someone too ("he", "my son").
        return about != {asker} or bool(roles(candidate)[0]) or c.third_person
    return not asked or bool(asked & about)
