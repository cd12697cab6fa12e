"""Who a question is about: the people and animals of a household, by the role words naming them.

A question about someone in particular ("when is my dad's birthday?", "what's my dentist
called?") is not answered by a fact about someone else ("my mum's birthday is in June", "my
doctor is Dr Patel"), however alike the two sentences are: that near miss is the commonest false
memory a household meets. Recall asks `answers_who` of each candidate it would call sure.
Groups are the same person's role in English, German, French and Spanish; a general word
("child", "parent") is answered by any of its specific ones ("son", "mum").

Owns: the role vocabulary and that one rule. Must not: decide relevance otherwise (it only
keeps a candidate from being recalled as sure).
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory.terms import stems

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


@lru_cache(maxsize=50_000)
def _role(word: str) -> str | None:
    if word in _ROLE_OF:
        return _ROLE_OF[word]
    for form in (word[:-1] if word.endswith("s") else None, *sorted(stems(word))):
        if form and form in _ROLE_OF:
            return _ROLE_OF[form]
    return None


@lru_cache(maxsize=50_000)
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
    role and the candidate names another of the same kind but not that one."""
    asked, _ = roles(question)
    said, _ = roles(candidate)
    for group in asked:
        if _covered(group, said) or any(group in _SPECIFIC.get(s, frozenset()) for s in said):
            continue
        kind = next((k for k in _KINDS if group in k), frozenset())
        if said & kind:
            return False
    return True
