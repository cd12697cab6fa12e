"""How sensitive one sentence is: ordinary, health, finance or credentials.

Owns: the deterministic sentence rules (compiled regexes with word boundaries, keyword stems and
a few phrase patterns) and the precedence between classes: credentials > health > finance >
ordinary. Must not: do I/O, keep state, call a model, log the text, or look for secret *tokens*
(API keys, card numbers, private keys; that is `memory.secrets`, which callers run as well).

The rules know English, German, French and Spanish. A sentence is first folded: curly
apostrophes become straight ones, compatibility forms are decomposed (NFKD) and combining marks
and invisible format characters dropped, so "código", "codigo" and "co\u0301digo" read alike,
"Schlüssel" reads "schlussel" and full-width letters read as ASCII; the rules are then matched
against the casefolded sentence ("Straße" is "strasse"), and so are written in ASCII without
accents. The idioms in `ORDINARY_IDIOMS` and `ORDINARY_IDIOMS_CASED` ("sick of the rain",
"Doctor Who", "retail therapy", "owing to", "she's a doctor", "sie ist Ärztin", "das macht mich
krank") are blanked out, so their words cannot trip a rule. Then the classes are tried in
precedence order and the first one with a matching rule wins.
Weak words that are usually innocent ("bank", "key", "pin", "rent", "cold", "pain", "code",
"clave", "enceinte", "receta", "tension") only count inside a phrase that gives them their
sensitive sense ("bank account", "door code", "her PIN", "behind on rent", "code de l'alarme",
"clave del wifi", "elle est enceinte", "receta médica", "sa tension"), and a labelled value
makes a credential in any of the four languages: "the code is 4471", "der Code lautet 4471",
"le code est 4471", "la clave es 4471", "login: anna@example.org / hunter2". A code that is
public by nature (dress, promo, postal, error, QR, "code de la route") is not a credential.
A line that `memory.secrets.mask_secrets` has already masked ("[masked api_key]") is
credentials: the placeholder is recognised, the token itself is never seen here.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from memory.models import Sensitivity

_POSSESSIVE: Final = r"(?:my|her|his|their|your|our|the|mum's|mom's|dad's)"
# The same in German, French and Spanish, articles included ("der Code", "le code", "el código").
_POSSESSIVE_ML: Final = (
    r"(?:my|her|his|their|your|our|the|mum's|mom's|dad's|mein|meine[mnrs]?|dein|deine[mnrs]?"
    r"|sein|seine[mnrs]?|ihr|ihre[mnrs]?|unser|unsere[mnrs]?|euer|eure[mnrs]?|der|die|das|den"
    r"|mon|ma|mes|ton|ta|tes|son|sa|ses|notre|nos|votre|vos|leurs?|le|la|les|mi|mis|tu|tus|su"
    r"|sus|nuestr[oa]s?|vuestr[oa]s?|el)"
)

# A value given for a label: digits, or a token holding a digit ("4471", "4B72", "1-9-8-4",
# "hunter2"), never a plain word ("the code is smart casual", "la clave es la paciencia").
_VALUE: Final = r"(?=[^\s]*\d)[\w#*+!@$%&/.-]{3,}"
# A code's digits: four to eight, never a year of these two centuries.
_CODE_DIGITS: Final = r"\b(?!(?:19|20)\d\d\b)\d{4,8}\b"
# What locks or guards a home, in the four languages: digits near one are its code.
_GUARDS: Final = (
    r"(?:\w*alarm\w*|keypad|tastenfeld|tresor|coffre-fort|caja\s+fuerte|padlock|cadenas|candado"
    r"|\w+schloss|serrure|cerradura|digicode|disarm\w*|desarm\w*|desactiv\w*|entscharf\w*"
    r"|unlock\w*|deverrouill\w*|desbloque\w*|entsperr\w*|key\s?safe|lock\s?box"
    r"|schlusselkasten|boite\s+a\s+cles)"
)
# The words that label a secret value, in the four languages.
_LABEL: Final = (
    r"(?:codes?|codigos?|claves?|pins?|nip|log-?ins?|identifiants?|combos?|combinations?"
    r"|combinaisons?|combinacion(?:es)?|kombinationen?|zahlenkombination|keys?|schlussel|cles?)"
)
# How a label is joined to its value in the four languages.
_IS: Final = (
    r"(?:[:=]|->|\bis\b|\bwas\b|'s\b|\bist\b|\blautet\b|\bwar\b|\bbleibt\b|\best\b|c'est\b"
    r"|\betait\b|\bsera\b|\bes\b|\bera\b|\bsigue\s+siendo\b|\bchanged\s+to\b|\bis\s+now\b"
    r"|\bist\s+jetzt\b|\bgeandert\s+(?:auf|zu|in)\b|\ba\s+change\b\s*:?|\bha\s+cambiado\s+a\b"
    r"|\bcambio\s+a\b|\bahora\s+es\b)"
)
# Codes that are public by nature: before the label ("dress code", "QR-Code", "sort code" is a
# bank's, which `FINANCE_RULES` knows) and after it ("code postal", "código de descuento").
_PUBLIC_CODE_BEFORE: Final = (
    "dress area zip promo discount voucher postal country dialling dialing qr error status source"
    " bar tracking reference booking product color colour morse tax highway sort cheat referral"
    " coupon gift fehler gutschein rabatt post"
)
_NOT_PUBLIC_BEFORE: Final = "".join(
    rf"(?<!{word}\s)(?<!{word}-)" for word in _PUBLIC_CODE_BEFORE.split()
)
_NOT_PUBLIC_AFTER: Final = (
    r"(?!\s+(?:postal|postale|promo\w*|vestimentaire|civil|penal|source|fuente|qr|barres?"
    r"|of\s+(?:conduct|practice)|d'erreur|de\s+(?:vestimenta|reduction|reduccion|la\s+route"
    r"|la\s+circulacion|conduite|conducta|barras?|descuento|error|erreur|promocion|regalo)))"
)

# Rules are matched against the lower-cased sentence and must be written in lower case, each
# starting with a word boundary. The few rules that need the writer's capitals are `*_CASED`
# and run on the sentence as written.

# Idioms and occupations whose words look sensitive but are not. Blanked before any rule runs.
ORDINARY_IDIOMS_CASED: Final[tuple[str, ...]] = (
    # "Doctor Who" the programme (but not "the Doctor who treated her").
    r"\bDoctor Who\b(?!\s+(?:treated|saw|sees|examined|operated|prescribed|diagnosed))",
)
ORDINARY_IDIOMS: Final[tuple[str, ...]] = (
    # Lower-case "doctor who" is the programme only when followed by a word about the show.
    r"\bdoctor who\s+(?:episode|episodes|series|season|special|christmas|fan|fans|marathon"
    r"|box\s?set|theme|spin-?off|is\s+back|was\s+(?:great|brilliant|amazing|good|rubbish))",
    r"\bdr\.?\s+who\b",
    # Someone's job is not their health or their money.
    r"\b(?:is|was|'s|am|'m|are|were|be|become|becoming|became|as|trained\s+as|training\s+to\s+be"
    r"|wants?\s+to\s+be)\s+an?\s+(?:junior\s+|trainee\s+|qualified\s+)?(?:doctor|nurse|dentist"
    r"|surgeon|therapist|physio|physiotherapist|psychiatrist|psychologist|pharmacist|midwife|gp"
    r"|paramedic|vet|accountant|banker|tax\s+advis[eo]r|financial\s+advis[eo]r)\b",
    r"\bretail\s+therapy\b",
    # Slang: "that's sick", "this song is sick" (but not "this baby is sick with a fever").
    r"\b(?:that|this|it)(?:\s+\w+)?\s*(?:'s|is|was)\s+(?:so\s+|well\s+|pretty\s+|proper\s+)?"
    r"sick\b(?!\s+(?:again|today|yesterday|all|in|with|from|since|after|twice|at|on|and)\b)",
    r"\b(?:is|was|be|what|such|'s)\s+(?:a\s+)?(?:real\s+|total\s+|massive\s+|huge\s+"
    r"|bit\s+of\s+a\s+)?headache\b",
    r"\bsick\s+(?:of|and\s+tired|to\s+death\s+of)\b",
    r"\bill\s+at\s+ease\b",
    r"\bpregnant\s+pause\b",
    r"\b(?:a\s+|such\s+a\s+|real\s+|royal\s+)?pain\s+in\s+the\s+(?:neck|arse|ass|backside|butt)\b",
    r"\b(?:taste|dose)\s+of\s+(?:his|her|their|your|my|our|its)\s+own\s+medicine\b",
    r"\b(?:the\s+)?(?:best|only)\s+medicine\b",
    r"\b(?:healthy|good|big)\s+dose\s+of\b",
    r"\bdose\s+of\s+reality\b",
    r"\b(?:chill|bitter)\s+pill\b",
    r"\b(?:great|tropical)\s+depression\b",
    r"\b(?:gave|give|giving|gives|almost\s+had|nearly\s+had)\s+(?:me|him|her|us|them|you)?\s*"
    r"a\s+(?:mini\s+)?heart\s+attack\b",
    r"\bbreak\s+a\s+leg\b",
    r"\bin\s+stitches\b",
    r"\bcough(?:s|ed|ing)?\s+up\b",
    r"\blump\s+in\s+(?:my|her|his|their|your|our)\s+throat\b",
    r"\bthrew\s+up\s+(?:my|her|his|their|our|your)\s+hands\b",
    r"\bfuel\s+injection\b",
    r"\bdaylight\s+savings?(?:\s+time)?\b",
    r"\bowing\s+to\b",
    r"\bon\s+loan\b",
    r"\b(?:forever\s+)?in\s+(?:your|his|her|their|my|our)\s+debt\b",
    r"\bwag(?:e|ed|es|ing)\s+(?:a\s+)?war\b",
    # The same in German, French and Spanish: a job ("sie ist Ärztin", "elle est médecin", "es
    # enfermera"), and idioms ("das macht mich krank", "t'es malade", "pas mal").
    r"\b(?:ist|war|wird|als|bin|est|etait|suis|es|era|soy|trabaja\s+(?:de|como)|travaille\s+comme"
    r"|werden|devenir|ser)\s+(?:(?:ein|eine|un|une|una?)\s+)?(?:(?:zahn|kinder|haus|tier"
    r"|frauen|fach|not)?arzt(?:in)?|krankenschwester|krankenpfleger(?:in)?"
    r"|(?:alten)?pfleger(?:in)?|hebamme|apotheker(?:in)?|(?:physio|psycho)?therapeut(?:in)?"
    r"|psycholog(?:e|in)|psychiater(?:in)?|chirurg(?:in)?|medecin|docteur|infirmier|infirmiere"
    r"|dentiste|pharmacien(?:ne)?|kine|kinesitherapeute|sage-femme|psychologue|psychiatre"
    r"|chirurgien(?:ne)?|therapeute|medic[oa]|doctora?|enfermer[oa]|dentista|farmaceutic[oa]"
    r"|matrona|psicolog[oa]|psiquiatra|cirujan[oa]|fisioterapeuta|terapeuta|comptable|contable"
    r"|banquier|banquer[oa]|steuerberater(?:in)?|bankkauf(?:mann|frau))\b",
    r"\b(?:macht|machen|machte)\s+(?:mich|einen|dich|uns)\s+(?:noch\s+|total\s+|echt\s+|ganz\s+"
    r"|richtig\s+)?krank\b",
    r"\b(?:t'es|c'est)\s+(?:completement\s+)?malade\b",
    r"\bpas\s+mal\b",
    r"\bkrank(?:e|en|er|es)?\s+(?:idee|vorstellung|sache|welt|humor|typ)\b",
    r"\bc'est\s+une\s+maladie\s+(?:de|chez)\b",
)

# An upper-case PIN is always the secret number; a lower-case "pin" needs a context.
# TAN and PUK are the German bank's one-time number and a SIM's unlock key; NIP is PIN in
# Spanish and Québécois French.
CREDENTIAL_RULES_CASED: Final[tuple[str, ...]] = (r"\b(?:PIN|TAN|PUK|NIP)s?\b",)
CREDENTIAL_RULES: Final[tuple[str, ...]] = (
    r"\bpin\s*(?:codes?|numbers?|nos?\b|#)",
    r"\bpins?\s*(?:is|was|=|:|'s)\s*\d",
    r"\bpins?\s+(?:for|to|of|on)\s+(?:" + _POSSESSIVE + r"\s+)?(?:new\s+)?(?:bank\s+|debit\s+"
    r"|credit\s+)?(?:cards?|phone|alarm|door|safe|laptop|ipad|tablet|account|sim|atm|router|app)\b",
    r"\b(?:card|bank|atm|debit|sim|phone|door|alarm|garage|safe|laptop|ipad|app|[46]-digit"
    r"|four-digit|six-digit)\s+pins?\b",
    # Passwords, passcodes, passphrases, with the usual typos and chat abbreviations.
    r"\bpa?s{1,2}(?:w(?:or|ro|r|o)?d|code|phrase)s?\d*\b",
    # ... in German (compounds too: "WLAN-Passwort", "Routerkennwort"), French, Spanish and
    # Portuguese.
    r"\b\w*(?:passwort|kennwort)\w*",
    r"\bmots?\s+de\s+passe\b",
    r"\bmdp\b",
    r"\bcontrasenas?\b",
    r"\bsenhas?\b",
    r"\bpw[ds]?\b",
    r"\b(?:wi-?fi|router|network)\s+(?:pass|key|code)\b",
    r"\b(?:wlan|wi-?fi|netzwerk|router|api|ssh|privater?|geheimer?)-?(?:schlussel|key|code)\b",
    r"\bcles?\s+(?:wi-?fi|wpa2?|api|privee|secrete|de\s+securite|du\s+(?:wi-?fi|reseau|routeur)"
    r"|reseau)\b",
    r"\bclaves?\s+(?:de\s+acceso|secreta|wi-?fi|wpa2?|api|privada|(?:del?|de\s+la|de\s+mi|de\s+tu"
    r"|de\s+su|para\s+el|para\s+la)\s+(?:wi-?fi|red|banco|cajero|correo|email|router|movil"
    r"|telefono|tarjeta|cuenta|alarma|puerta|portal|seguridad|acceso|netflix|ordenador|portatil"
    r"|app|aplicacion))\b",
    # Credentials named as such: "Zugangsdaten", "identifiants", "credenciales".
    r"\b(?:zugangs|anmelde|login-?|log-?in-?)daten\b",
    r"\b(?:geheimzahl|geheimnummer|pin-?nummer|pin-?code|codigo\s+pin|code\s+pin|digicodes?)\b",
    r"\bcodes?\s+(?:secrets?|confidentiels?|d'acces|d'entree)\b",
    r"\bcodigos?\s+(?:secretos?|de\s+acceso|de\s+seguridad|de\s+desbloqueo)\b",
    r"\bnumeros?\s+(?:secretos?|pin|nip)\b",
    r"\bidentifiants\b",
    r"\bidentifiants?\s+(?:de\s+connexion|et\s+(?:le\s+|mon\s+|ton\s+)?mot)\b",
    r"\bcredenciales?\b",
    r"\b(?:datos|detalles)\s+de\s+(?:acceso|inicio\s+de\s+sesion|login)\b",
    r"\b(?:informations|donnees|infos)\s+de\s+connexion\b",
    r"\busuario\s+y\s+(?:la\s+)?(?:contrasena|clave)\b",
    # Logins as a thing someone has (not "log in" the verb).
    r"\b" + _POSSESSIVE_ML + r"\s+(?:[\w+.-]+[\s-]+){0,2}log-?ins?\b"
    r"(?![\s-]+(?:page|screen|button|form|box|window|prompt|link|seite|maske)s?\b)",
    r"\b(?:\w+'s)\s+(?:[\w+.-]+\s+)?log-?ins?\b",
    r"\b(?:log[- ]?in|sign[- ]?in)\s+(?:details|info|information|credentials|name|email|code)\b",
    r"\blog-?ins?\s+(?:is|was|for)\b",
    r"\bcredentials?\b",
    r"\b(?:netflix|disney\+?|spotify|amazon(?:[\s-]+prime(?:[\s-]+video)?)?|hulu|icloud"
    r"|apple\s+id|google|gmail|facebook|insta(?:gram)?|tiktok|steam|xbox|playstation|psn"
    r"|nintendo|paypal|email|hbo(?:[\s-]+max)?|prime[\s-]+video|youtube|dazn|sky[\s-]+go"
    r"|now[\s-]+tv|paramount\+?|crunchyroll|twitch|whatsapp|microsoft|outlook|yahoo|ebay"
    r"|deliveroo|zalando)[\s-]+(?:account[\s-]+|konto[\s-]+)?(?:details|pass|logins?"
    r"|sign[- ]?in|zugang|daten)\b",
    # A login written out: an address and, after a slash or a colon, what goes with it.
    r"\b@[\w-]+(?:\.[\w-]+)+\s*(?:/|\|)\s*[^\s/|]{3,}",
    r"\b@[\w-]+(?:\.[\w-]+)+\s*[:;]\s*" + _VALUE,
    # Security questions and memorable answers.
    r"\bsecurity\s+(?:questions?|answers?)\b",
    r"\b(?:mother|mum|mom)'?s\s+maiden\s+name\b",
    r"\bmemorable\s+(?:word|answer|information|date|place)\b",
    r"\bsicherheits(?:frage|antwort)\w*",
    r"\bquestions?\s+(?:secretes?|de\s+securite)\b",
    r"\bpreguntas?\s+(?:de\s+seguridad|secretas?)\b",
    r"\bmadchenname\s+(?:meiner|deiner|seiner|ihrer|der|von)\s+(?:\w+\s+)?mutter\b",
    r"\bnom\s+de\s+jeune\s+fille\s+de\s+(?:ma|ta|sa|leur|votre|notre|la)\s+mere\b",
    r"\bapellido\s+de\s+soltera\s+de\s+(?:mi|tu|su|la)\s+madre\b",
    # Shapes of a secret, with no word naming it as one. Digits someone is told to enter
    # ("to disarm it, type 48213", "tippe 4821 ein", "tape 4821", "marca 4821"); a year is
    # not a code ("enter 2026").
    r"\b(?:type|enter|key\s+in|punch\s+in|tippe?n?|eintippen|gib|eingeben|tapez|taper|tape"
    r"|composez|composer|compose|saisis|saisissez|saisir|teclea|teclear|marca|marcar|introduce"
    r"|introducir|ingresa|ingresar|pon)\s+(?:in\s+|the\s+|den\s+|die\s+|le\s+|el\s+|la\s+)?"
    r"(?:code\s+|codigo\s+|numero\s+|zahl\s+)?" + _CODE_DIGITS,
    # Four to eight digits in a sentence about what locks or guards a home ("the alarm: 48213",
    # "Tresor 271828", "le cadenas du vélo, 4471"), either way round.
    r"\b" + _GUARDS + r"\b(?:[^\w]+\w+){0,6}?[^\w]+" + _CODE_DIGITS,
    _CODE_DIGITS + r"(?:[^\w]+\w+){0,6}?[^\w]+" + _GUARDS + r"\b",
    # An address and, near it, a password-shaped word: letters and digits together, six or more
    # ("Netflix account: alice@example.com with Gooseberry77"). An order number beside an
    # address reads the same: the more private class, as when in doubt.
    r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b[^\w]+(?:\w+[^\w]+){0,4}?(?=[a-z]*\d)(?=\d*[a-z])"
    r"[a-z\d]{6,}\b",
    # Door codes, key safes, combinations.
    r"\b(?:front[- ]door|back[- ]door|door|gate|alarm|garage|keypad|key[- ]?safe|key[- ]?box"
    r"|lock[- ]?box|entry|access|padlock|safe|locker|bike[- ]lock|lock|unlock|wi-?fi|router"
    r"|screen[- ]?lock|lock[- ]?screen|burglar\s+alarm)\s+(?:codes?|combos?|combinations?)\b",
    r"\b(?:lock[- ]?screen|screen[- ]?lock|unlock)\s+(?:patterns?|pins?|passcodes?)\b",
    r"\bcodes?\s+(?:for|to|of|on)\s+(?:" + _POSSESSIVE + r"\s+)?(?:front\s+|back\s+|side\s+"
    r"|garden\s+|main\s+)?(?:door|gate|alarm|garage|safe|lock\s?box|key\s?safe|padlock|locker"
    r"|lock|wi-?fi|router|phone|ipad|laptop|building|flat|house|apartment)\b",
    r"\bcode\s+to\s+(?:get\s+in(?:to)?|unlock|open\s+the)\b",
    r"\bcodes?\s+(?:pour|para|zum|um)\s+(?:(?:l'|le|la|die|das|den|el)\s*)?(?:ouvrir|entrer"
    r"|rentrer|acceder|deverrouiller|debloquer|abrir|entrar|acceder|desbloquear|offnen|aufmachen"
    r"|aufschliessen|entsperren|reinkommen|hereinkommen)\b",
    r"\b(?:codes?|codigos?)\s+(?:wi-?fi|wlan|wpa2?|de\s+(?:la\s+)?box|du\s+wi-?fi|del\s+wi-?fi"
    r"|puk)\b",
    # ... in German: compounds ("Alarmcode", "Haustürcode") and "Code für die Tür".
    r"\b(?:alarm|alarmanlagen|tur|haustur|wohnungstur|eingangstur|tor|hoftor|garagen|garagentor"
    r"|tresor|safe|schliessfach|spind|zugangs|sicherheits|entsperr|bestatigungs|verifizierungs"
    r"|einmal|wiederherstellungs|backup|handy|telefon|zahlen|schloss|zahlenschloss"
    r"|fahrradschloss|karten|login|anmelde|authentifizierungs|freischalt|aktivierungs|geheim"
    r"|eingangs|schlusselkasten|schlusselsafe|schlusselbox|schlusseltresor|tastatur|sms)"
    r"-?codes?\b",
    r"\bcodes?\s+(?:fur|von|vom|zur|zum|an|am|der|des)\s+(?:die\s+|das\s+|den\s+|der\s+|dem\s+"
    r"|unsere[mnrs]?\s+|meine[mnrs]?\s+|seine[mnrs]?\s+|ihre[mnrs]?\s+|eure[mnrs]?\s+)?"
    r"(?:\w+-?)?(?:alarmanlage|alarm|tur|tor|garage|tresor|safe|wlan|schloss|handy|telefon|haus"
    r"|wohnung|gebaude|keller|spind|schliessfach|schlusselkasten|schlusselsafe|karte|konto)\b",
    # ... in French: "code de l'alarme", "code du portail", "code d'accès".
    r"\bcodes?\s+(?:de\s+l'|de\s+la\s+|du\s+|des\s+|d'|de\s+)(?:mon\s+|ma\s+|mes\s+|notre\s+"
    r"|nos\s+|votre\s+|ton\s+|ta\s+|son\s+|sa\s+)?(?:alarme|porte|portail|entree|immeuble"
    r"|batiment|garage|coffre(?:-fort)?|cadenas|casier|wi-?fi|box|acces|securite|verification"
    r"|validation|confirmation|deverrouillage|carte|cb|telephone|portable|boite\s+a\s+cles"
    r"|interphone|porte\s+d'entree|antivol)\b",
    # ... in Spanish: "código de la alarma", "código del portal".
    r"\bcodigos?\s+(?:de\s+la\s+|del\s+|de\s+|para\s+la\s+|para\s+el\s+|para\s+)(?:mi\s+|tu\s+"
    r"|su\s+|nuestra\s+|nuestro\s+)?(?:alarma|puerta|portal|porteria|portero|entrada|garaje"
    r"|caja\s+fuerte|candado|taquilla|wi-?fi|acceso|seguridad|verificacion|confirmacion"
    r"|desbloqueo|tarjeta|telefono|movil|edificio|router|trastero|cerradura)\b",
    # A labelled value in any of the four languages: "the code is 4471", "der Code lautet
    # 4471", "le code est 4471", "la clave es 4471", "PIN: 0042". Public codes are left out.
    # (The lookahead lets the many look-behinds run only where a label starts.)
    r"\b(?=cod|cla|pin|nip|log|ide|com|kom|zah|key|sch|cle)"
    + _NOT_PUBLIC_BEFORE
    + _LABEL
    + _NOT_PUBLIC_AFTER
    + r"(?:\s*,?\s+[\w'.-]+){0,4}?\s*,?\s*"
    + _IS
    + r"\s*(?:now\s+|jetzt\s+|still\s+|immer\s+noch\s+|toujours\s+|todavia\s+|maintenant\s+"
    r"|ahora\s+)?" + _VALUE,
    # ... or a label straight before a number of four digits or more: "den Code 1122".
    r"\b(?=cod|cla|pin|nip|log|ide|com|kom|zah|key|sch|cle)"
    + _NOT_PUBLIC_BEFORE
    + _LABEL
    + r"\s*(?:#\s*)?\d(?:[\s-]?\d){3,}\b",
    # A lock of some kind worked with a number: "the safe opens with 3-7-1-9", "die
    # Alarmanlage geht mit 1234 aus", "la puerta se abre con 1590".
    r"\b(?:alarm|alarmanlage|safe|tresor|lock|padlock|door|gate|keypad|key\s?box|key\s?safe"
    r"|lock\s?box|locker|tur|tor|haustur|schloss|schlusselkasten|schliessfach|spind"
    r"|coffre(?:-fort)?|cadenas|casier|porte|portail|alarme|digicode|caja\s+fuerte|candado"
    r"|taquilla|puerta|portal|alarma)\b[^.!?\n]{0,30}?\b(?:with|mit|avec|con|using)\s+"
    r"(?:the\s+|dem\s+|der\s+|le\s+|el\s+|la\s+)?(?:code\s+|pin\s+|codigo\s+|clave\s+)?"
    r"\d(?:[\s#*-]?\d){2,}",
    # A value and then its label: "9-0-1-2, that's the code".
    r"\b\d[\d\s#*-]{2,}[^.!?\n]{0,24}?\b(?:that'?s|is|das\s+ist|c'est|es|eso\s+es)\s+"
    + _POSSESSIVE_ML
    + r"\s+(?:\w+\s+)?(?:code|pin|passcode|combination|combo|codigo|clave|combinaison"
    r"|combinacion|kombination)\b",
    r"\bkey[- ]?safe\b",
    r"\b(?:combination|combo)\s+(?:to|for|of|on)\s+(?:" + _POSSESSIVE + r"\s+)?(?:safe|lock"
    r"|padlock|locker|bike\s+lock|vault|suitcase|briefcase)\b",
    r"\b(?:zahlen)?kombination\s+(?:fur|vom|von|des|zum)\s+(?:den\s+|das\s+|die\s+|dem\s+"
    r"|meinen\s+|unseren\s+|meine\s+|unsere\s+)?(?:tresor|safe|schloss|fahrradschloss|spind"
    r"|koffer|zahlenschloss|schliessfach)\b",
    r"\b(?:tresor|safe|schloss|spind|koffer)-?kombination\b",
    r"\bcombinaison\s+(?:du|de\s+la|de\s+mon|de\s+ma|de\s+l'|de\s+notre|de\s+ton|de\s+ta)\s*"
    r"(?:coffre(?:-fort)?|cadenas|casier|valise|antivol)\b",
    r"\bcombinacion\s+(?:de\s+la|del|de\s+mi|de\s+tu|de\s+su|de\s+nuestra|de\s+nuestro)\s+"
    r"(?:caja\s+fuerte|candado|taquilla|maleta|cerradura|trastero)\b",
    # Second factors and recovery material.
    r"\b(?:2fa|mfa|two[- ]factor|2[- ]factor|multi[- ]factor|two[- ]step)\b",
    r"\b(?:zwei-?faktor|2-?faktor|zweistufig|zwei-?stufig)\w*",
    r"\b(?:double\s+authentification|authentification\s+a\s+(?:deux|double|2)\s+facteurs"
    r"|validation\s+en\s+deux\s+etapes)\b",
    r"\b(?:verificacion|autenticacion)\s+(?:en\s+)?(?:de\s+)?(?:dos|2|doble)\s+"
    r"(?:pasos|factores)\b",
    r"\b(?:otps?|one[- ]time\s+(?:codes?|passwords?|passcodes?|pins?))\b",
    r"\b(?:backup|recovery|verification|authenticator|auth|login|security|sms|2fa)\s+codes?\b",
    r"\b(?:recovery|seed|mnemonic)\s+(?:phrases?|words?|keys?|seed)\b",
    r"\b(?:cvv2?|cvc|cv2)\b",
    # Keys and tokens named as such.
    r"\b(?:api|ssh|private|secret|access|encryption|gpg|pgp|licen[cs]e|product|activation|wi-?fi"
    r"|network|wpa2?|bitlocker)\s+keys?\b",
    r"\b(?:api|access|auth|authentication|bearer|bot|refresh|session|github|gitlab|slack"
    r"|discord|telegram|personal\s+access|security)\s+tokens?\b",
    # A token `memory.secrets` already masked: the line carried a secret.
    r"\b(?<=\[)masked\s+(?:api_key|private_key|card_number|high_entropy)\]",
)

_BODY: Final = (
    r"(?:knee|ankle|wrist|foot|feet|hand|finger|toe|leg|arm|face|eye|lip|jaw|neck|throat|glands?"
    r"|belly|stomach|tummy|hip|elbow|shoulder)s?"
)

_MEDICATIONS: Final = (
    r"insulin|antidepressants?|antibiotics?|antihistamines?|antipsychotics?|painkillers?"
    r"|sertraline|fluoxetine|citalopram|escitalopram|prozac|zoloft|lexapro|wellbutrin|bupropion"
    r"|venlafaxine|mirtazapine|amitriptyline|metformin|ozempic|wegovy|mounjaro|semaglutide"
    r"|levothyroxine|thyroxine|statins?|atorvastatin|simvastatin|lisinopril|amlodipine|ramipril"
    r"|warfarin|apixaban|ibuprofen|paracetamol|acetaminophen|tylenol|advil|nurofen|codeine"
    r"|morphine|tramadol|oxycodone|adderall|ritalin|methylphenidate|xanax|valium|diazepam"
    r"|lorazepam|propranolol|beta[- ]blockers?|blood\s+thinners?|cetirizine|loratadine"
    r"|prednisolone|prednisone|steroids?|amoxicillin|penicillin|inhalers?|epi-?pens?|melatonin"
    r"|gabapentin|pregabalin|omeprazole|contraceptives?|contraception|viagra|hrt|chemo\w*"
    r"|radiotherapy|meds|medications?|medicated|prescriptions?|prescribed|perscriptions?"
)

HEALTH_RULES: Final[tuple[str, ...]] = (
    # Medication, doses, treatment.
    r"\b(?:" + _MEDICATIONS + r")\b",
    r"\bmedicines?\b",
    r"\bmedical(?:ly)?\b",
    r"\b(?:over)?dos(?:e|es|age|ages|ing)\b",
    r"\bpills?\b",
    r"\b(?:takes?|taking|took|sleeping|pain|heart|thyroid|iron|water)\s+tablets?\b",
    r"\b(?:vaccin\w*|immunis\w*|immuniz\w*)",
    r"\binjections?\b",
    r"\b(?:flu|covid|booster|tetanus|mmr|hpv|travel|measles)\s+(?:jabs?|shots?|vaccines?"
    r"|boosters?)\b",
    r"\bboosters?\b(?!\s+(?:seats?|club|packs?|cushions?|pumps?|rockets?)\b)",
    # Diagnoses and conditions.
    r"\bdiagnos(?:is|es|ed|e|ing)\b",
    r"\bsymptoms?\b",
    r"\bdiabet\w*",
    r"\b(?:cancers?|cancerous|tumou?rs?|biops(?:y|ies)|mammograms?|smear\s+test|colonoscopy"
    r"|endoscopy|oncolog\w*)\b",
    r"\b(?:asthma\w*|epilep\w*|seizures?|arthritis|migr(?:aine|ane|ain)s?|eczema|psoriasis"
    r"|adhd|autis\w*|dementia|alzheimer'?s?|parkinson'?s|multiple\s+sclerosis|crohn'?s"
    r"|coeliac|celiac|ibs|endometriosis|pcos|thyroid|an(?:a)?emi[ac]|hiv|hepatitis|lupus"
    r"|fibromyalgia|cysts?|kidney\s+stones?|gallstones?|cholesterol|concussion|fractur\w*"
    r"|sprain\w*|tonsillitis|bronchitis|pneumonia|sinusitis|conjunctivitis|chickenpox|measles"
    r"|mumps|norovirus|covid(?:-?19)?|coronavirus|flu|utis?|infections?|infected|insomnia"
    r"|sleep\s+apno?ea|disabilit(?:y|ies)|illness(?:es)?|sickness|nausea|nauseous|vomit\w*"
    r"|diarrh\w*|constipat\w*|dizz(?:y|iness)|headaches?|stomach\s?aches?|toothaches?"
    r"|earaches?|backache|heartburn|palpitations|sore\s+throat|chest\s+infection"
    r"|(?:tummy|stomach)\s+bug)\b",
    r"\b(?:croup|shingles|nits|head\s+lice|remission|benign|malignant|hospices?|eyesight"
    r"|hearing\s+loss|diseases?|\w+ectomy|\w+ectomies)\b",
    r"\b(?:hip|knee|joint|shoulder)\s+replacement\b",
    r"\bswollen\s+" + _BODY + r"\b",
    r"\b" + _BODY + r"(?:'s)?\s+(?:\w+\s+){0,2}(?:swollen|swelling|bruised|infected)\b",
    r"\bfeel(?:s|ing)?\s+(?:really\s+|so\s+|very\s+|quite\s+|a\s+bit\s+)?(?:low|faint|dizzy"
    r"|nauseous|feverish|suicidal)\b",
    r"\b(?:i|i'm|im|i've\s+been|been)\s+feel(?:ing)?\s+(?:really\s+|so\s+|very\s+|a\s+bit\s+)?"
    r"rough\b",
    r"\bheart\s+(?:attack|condition|disease|failure|problems?|surgery|murmur|issues?)\b",
    r"\bcardiac\b",
    r"\bblood\s+(?:pressure|tests?|sugars?|clots?|work|results|transfusion|count)\b",
    r"\b(?:a|had|has|have|mini|minor|suffered)\s+(?:mini\s+|minor\s+|mild\s+|small\s+)?"
    r"stroke\b(?!\s+of\b)",
    r"\b(?:broke|broken|fractured?|sprained?|twisted|dislocated)\s+(?:"
    + _POSSESSIVE
    + r"\s+|a\s+|an\s+)?(?:arm|leg|wrist|ankle|toe|finger|hip|rib|collarbone|nose|foot|hand"
    r"|knee|back|neck|shoulder|elbow|jaw|tooth|bone)s?\b",
    r"\b(?:a|the|high|low|running|slight|got|has|had|have|with|her|his|my|their|hay)\s+"
    r"(?:high\s+|slight\s+|low\s+)?fever\b(?!\s+pitch\b)",
    r"\b(?:has|had|have|got|running|with)\s+(?:a\s+)?(?:high\s+|slight\s+|bit\s+of\s+a\s+)?"
    r"temperature\b",
    r"\bcough(?:s|ed|ing)?\b",
    r"\b(?:caught|catching|got|have|has|had|having|with|fighting(?:\s+off)?)\s+(?:a|the)\s+"
    r"(?:bad\s+|nasty\s+|horrible\s+|stinking\s+|head\s+|chest\s+|streaming\s+)?cold\b"
    r"(?!\s+(?:drink|beer|one|shoulder|feet|call|weather|snap|spell|water|brew|coffee|day"
    r"|night|morning|room|house|bath|shower|hands?|tea|pizza|start|case|heart|blood)\b)",
    r"\brash(?:es)?\b(?!\s+(?:decision|choice|move|promise|idea|thing|comment|statement"
    r"|purchase|words?|behaviou?r|of)\b)",
    r"\b(?:found|find|finding|feel|felt|noticed)\s+(?:a\s+)?lumps?\b",
    r"\blumps?\s+(?:in|on)\s+(?:my|her|his|their|your)\b",
    r"\b(?:back|chest|stomach|tummy|neck|knee|joint|tooth|ear|period|nerve|hip|shoulder|leg|arm"
    r"|abdominal|pelvic|chronic|sharp|severe)\s+(?:pains?|aches?)\b",
    r"\bin\s+(?:so\s+much\s+|a\s+lot\s+of\s+|constant\s+|terrible\s+|agonising\s+|agonizing\s+)?"
    r"pain\b",
    r"\bpain\s+(?:relief|meds?|clinic|management)\b",
    r"\b(?:back|knee|head|chest|stomach|tummy|neck|ankle|wrist|hip|shoulder|tooth|ear|throat"
    r"|foot|leg|arm)s?\s+(?:hurts?|hurting|aches?|aching|is\s+killing)\b",
    # Feeling ill (idioms like "sick of" and "ill at ease" are blanked first).
    r"\b(?:feel(?:s|ing)?|felt|been|is|was|am|'m|im|are|were|so|very|really|quite|terminally"
    r"|seriously|chronically|critically|gravely|mentally)\s+(?:a\s+bit\s+|quite\s+|really\s+"
    r"|very\s+|so\s+)?(?:poorly|unwell|ill)\b(?!-)",
    r"\b(?:feel(?:s|ing)?|felt|been|is|was|am|'m|im|are|were|got|getting|off|calls?\s+in"
    r"|called\s+in|calling\s+in|home)\s+(?:really\s+|very\s+|quite\s+|a\s+bit\s+|so\s+)?sick\b",
    r"\bsick\s+(?:note|day|days|leave|bag|pay)\b",
    r"\b(?:throwing|threw|throw)\s+up\b",
    r"\b(?:motion|travel|car|sea|morning)\s*sick(?:ness)?\b",
    # Mental health.
    r"\b(?:mental|sexual|reproductive)\s+health\b",
    r"\b(?:my|her|his|their|your|our|mum's|mom's|dad's|nan's|gran's|grandad's|grandma's)\s+"
    r"health\b(?!\s+(?:insurance|app|apps|food|kick|tracker|club|shop)\b)",
    r"\bhealth\s+(?:conditions?|problems?|issues?|scares?|worr(?:y|ies)|visitor)\b",
    r"\btherap(?:y|ies|ist|ists)\b",
    r"\bpsychotherap\w*",
    r"\bcounsell?ing\b",
    r"\b(?:my|her|his|their|your|our|seeing|see|saw|a)\s+counsell?ors?\b",
    r"\bpsychiatr\w*",
    r"\bpsychologists?\b",
    r"\b(?:cbt|emdr|ect)\b",
    r"\banxiety\b",
    r"\bpanic\s+attacks?\b",
    r"\bdepress(?:ion|ed|ive)\b",
    r"\b(?:bipolar|schizo\w*|ocd|ptsd|anorexi\w*|bulimi\w*|suicid\w*)\b",
    r"\beating\s+disorders?\b",
    r"\bself[- ]?harm\w*",
    r"\b(?:mental|nervous)\s+breakdown\b",
    r"\b(?:rehab|addiction|alcoholi(?:c|cs|sm)|aa\s+meetings?)\b",
    r"\b(?:drug|alcohol|gambling)\s+(?:addict\w*|problems?|habit)\b",
    # Pregnancy, fertility, periods.
    r"\bpregnan\w*",
    r"\bexpecting\s+(?:a\s+baby|twins|another\s+baby|(?:our|her|his|their)\s+"
    r"(?:first|second|third))\b",
    r"\b(?:miscarr\w*|ivf|fertility|infertil\w*|trimesters?|midwi(?:fe|ves)|antenatal|prenatal"
    r"|postnatal|post-natal|postpartum|abortion|menopaus\w*|perimenopaus\w*|menstrua\w*"
    r"|breastfeeding|c-?section)\b",
    r"\b(?:gave|giving|give|given)\s+birth\b",
    r"\b(?:in|into)\s+labou?r\b(?!')",
    r"\b(?:hot\s+flushes|hot\s+flashes)\b",
    r"\b(?:missed\s+(?:a\s+|her\s+|my\s+)?|on\s+(?:my|her|their)\s+|heavy\s+|painful\s+)"
    r"periods?\b",
    r"\b(?:my|her)\s+period\s+(?:is|was|started|came|has)\b",
    r"\bperiod\s+pains?\b",
    # Allergies and intolerances.
    r"\ballerg\w*",
    r"\banaphyla\w*",
    r"\b(?:lactose|gluten|dairy|food|wheat)\s+intoleran\w*",
    # Care: doctors, hospitals, surgery, clinics, scans.
    r"\bdoctor'?s?\b",
    r"\b(?:my|her|his|their|your|our|see|saw|seeing|visit|call|called|ring|rang)\s+(?:the\s+)?"
    r"gp\b",
    r"\bgp\s+(?:appointment|surgery|practice|said|says|thinks|referred|prescribed|visit|told)\b",
    r"\b(?:the|a|school|practice|district|my|her|his)\s+nurses?\b(?!\s+sharks?\b)",
    r"\bsurg(?:ery|eries|eon|eons|ical)\b",
    r"\b(?:an|the|her|his|my|their)\s+(?:knee|hip|back|heart|eye|shoulder|cataract|hernia"
    r"|gallbladder|foot|wrist)\s+operation\b",
    r"\b(?:had|having|has|have|needs?|recovering\s+from)\s+(?:an|the|her|his|my)\s+operation\b",
    r"\boperation\s+on\s+(?:my|her|his|their|your)\b",
    r"\bhospital(?:s|ised|ized|isation|ization)?\b",
    r"\b(?:a&e|emergency\s+room|icu|intensive\s+care|ambulance|paramedics?)\b",
    r"\b(?:dentists?|dental|orthodontist|root\s+canal|wisdom\s+(?:tooth|teeth)|opticians?)\b",
    r"\b(?:physio\w*|chiropract\w*|osteopath\w*|clinics?|pharmac(?:y|ies|ist|ists))\b",
    r"\b(?:cardiolog|neurolog|dermatolog|gyn(?:a)?ecolog|urolog|endocrinolog|rheumatolog"
    r"|gastroenterolog|haematolog|hematolog)\w*",
    r"\b(?:paediatrician|pediatrician|obstetrician)s?\b",
    r"\b(?:x-?rays?|mri|ct\s+scans?|ultrasound)\b",
    r"\b(?:brain|ct|cat|mri|pet|baby|pregnancy|dating|anomaly|\d+[- ]week|bone|heart)\s+scans?\b",
    r"\b(?:stitches|crutches|wheelchair|hearing\s+aids?|prosthe\w*)\b",
    r"\btested\s+(?:positive|negative)\b",
    # More conditions and treatments in English.
    r"\b(?:tinnitus|vertigo|glaucoma|cataracts?|scoliosis|osteoporosis|hernias?|appendicitis"
    r"|gout|angina|sepsis|meningitis|tuberculosis|chronic\s+fatigue|long\s+covid|dialysis"
    r"|(?:kidney|liver|heart|lung|organ|bone\s+marrow)\s+transplant|obes(?:e|ity)|glucose"
    r"|hba1c|(?:hyper|hypo)(?:tension|thyroid\w*|glyc\w*)|\w*arthritis|aspirin)\b",
    # German, French and Spanish, folded (no accents, "ß" as "ss"). Medication first: the
    # international names with their endings ("Insulin", "insuline", "insulina"), then the
    # words for medicine, pills, prescriptions and injections.
    r"\b(?:insulin|metformin|sertralin|fluoxetin|levothyroxin|amoxicillin|penicillin|ibuprofen"
    r"|morphin|codein|paracetamol|aspirin|cortison|prednisolon|citalopram|escitalopram"
    r"|venlafaxin|mirtazapin|methylphenidat|melatonin|omeprazol|pantoprazol|diazepam"
    r"|lorazepam|tramadol)(?:e|a|o|um|es|as)?\b",
    r"\b(?:antidep\w*|antibio\w*|antihistamin\w*|antipsicotic\w*|antipsychoti\w*|analgesi\w*"
    r"|anticoncep\w*|contracep\w*|ventolin\w*|betabloquea\w*|betabloquant\w*|somnif\w*"
    r"|anxioly\w*|ansiolitic\w*|tranquili[sz]\w*|neurolept\w*)",
    r"\b(?:medikament\w*|medicament\w*|medicamento\w*|medicacion\w*|medicina(?:s|cion)?"
    r"|medecine|arznei\w*|schmerzmittel\w*|beruhigungsmittel|schlafmittel|blutverdunner)\b",
    r"\b(?:tabletten|\w{3,}tabletten?|pille|pilules?|gelules?|comprimes?|zapfchen)\b"
    r"(?<!air\scomprime)(?<!air\scomprimes)",
    r"\bpastillas?\b(?!\s+(?:de\s+)?(?:freno|jabon|caldo|menta|encendido|cloro|lavavajillas"
    r"|goma|chocolate|avecrem))",
    r"\b(?:ordonnances?|rezeptpflichtig|verschreib\w*|verschrieb\w*|prescri(?:t|te|ts|tes|re"
    r"|ption)|recet(?:o|ado|ada|aron|ar)|receta\s+(?:medica|del\s+medico|de\s+la\s+doctora"
    r"|del\s+doctor|electronica)|(?:recoger|renovar|surtir)\s+(?:la|mi|su|tu)\s+receta)\b",
    r"\b(?:impf\w*|geimpft|vacun\w*|spritze|(?:insulin|grippe|tetanus)spritzen?|piqures?"
    r"|inyecci\w*|dosis|dosage|dosierung)\b",
    r"\b(?:chimio\w*|quimio\w*|radiotherap\w*|radioterapia|bestrahlung\w*|dialyse|dialisis)\b",
    # Conditions and diagnoses.
    r"\b(?:diagnos(?:tique|tiquee?s?|tico|tica|ticaron|ticado|ticada|ticar|tiziert\w*)"
    r"|symptome?s?|sintomas?)\b",
    r"\b(?:zuckerkrank\w*|asthm\w*|asma(?:tico|tica)?|migran[ea]s?|adhs|tdah|tdha|demen(?:z|ce"
    r"|cia)|rheuma\w*|arthros\w*|artrosis|epileps\w*|epilepsia|alergi\w*|heuschnupfen"
    r"|neurodermitis|bandscheibe\w*|gehirnerschutterung|commotion\s+cerebrale|conmocion"
    r"|neumonia|pulmonia|lungenentzundung|\w*entzundung|\w{2,}itis|otites?|bronchites?"
    r"|angines?|cystites?|sinusites?|appendicites?|conjonctivites?|tendinites?"
    r"|(?:une|la|sa|de)\s+gastro|gastro-?enterites?|magen-?darm\w*|grippe|varicelle|varicela"
    r"|windpocken|masern"
    r"|rougeole|sarampion|mumps|oreillons|paperas|scharlach|keuchhusten|infektion\w*"
    r"|infekt|infeccion\w*|infectad[oa]|schilddruse\w*|thyroide|tiroides|hypothyreose"
    r"|hipotiroidismo|cholesterin|colesterol|anemie|anemia|anamie|schlaflosigkeit"
    r"|insomnie|insomnio|burn-?out|tumeurs?|metasta\w*|leukamie|leucemie|leucemia"
    r"|mammograph\w*|mamografia\w*|biopsi[ea]s?|sclerose\s+en\s+plaques|esclerosis"
    r"|multiple\s+sklerose|parkinson|autismus|autisme|autismo|autist\w*|down-?syndrom"
    r"|trisomie|sindrome\s+de\s+down|vih|sida|hepatite|hepatitis|diabete|diabetique)\b",
    r"\b(?:(?:brust|haut|lungen|darm|prostata|magen|blut|knochen|bauchspeicheldrusen"
    r"|gebarmutterhals|eierstock|hoden|leber|nieren)?krebs(?:erkrankung|diagnose|behandlung"
    r"|vorsorge|therapie|zellen)?|cancer|cancers)\b",
    r"\b(?:herz(?:infarkt|problem\w*|insuffizienz|rhythmus\w*|erkrankung\w*|schrittmacher"
    r"|fehler|katheter|-?op|operation|klappe\w*)|schlaganfall\w*|infarctus|infarto|ictus"
    r"|crise\s+cardiaque|ataque\s+(?:al\s+corazon|cardiaco)|avc|cardiaque|cardiac[oa]"
    r"|insuficiencia\s+cardiaca|marcapasos|pacemaker)\b",
    r"\b(?:blut(?:druck|hochdruck|zucker|test\w*|abnahme|werte|bild|untersuchung|gerinnsel"
    r"|verdunner\w*)|bluthochdruck|hypertonie)\b",
    r"\b(?:tension\s+(?:arterielle|trop\s+(?:haute|basse|elevee)|elevee|haute|basse)"
    r"|(?:ma|sa|ta|votre|leur|notre|prendre\s+la|pour\s+la)\s+tension\b(?!\s+"
    r"(?:entre|dans|avec|politique|sociale|nerveuse|du\s+match))"
    r"|tension\s+(?:arterial|alta|baja)|presion\s+(?:arterial|sanguinea)"
    r"|(?:mi|su|tu|para\s+la)\s+tension\b(?!\s+(?:entre|con|politica)))",
    r"\b(?:hipertension|hypertension|hypotension|hipotension)\b",
    # Feeling ill, pain, fever, colds.
    r"\b(?:krank(?!en(?:kasse|versicherung))\w*|erkrank\w*|maladi\w*|malades?|enferm\w*)",
    r"\b(?:\w{0,12}schmerz\w*|douleurs?|dolor(?:es)?\s+de\s+(?:cabeza|espalda|estomago|barriga"
    r"|tripa|muelas|garganta|oidos?|pecho|rodilla|pies|piernas|regla|vientre|cuello|huesos"
    r"|articulaciones|mu(?:n|e)ca))\b",
    r"\b(?:me|te|le|nos|les)\s+duel(?:e|en)\b",
    r"\btut\s+(?:\w+\s+){0,2}weh\b",
    r"\b(?:j'ai|il\s+a|elle\s+a|on\s+a|ai|a|avoir|as|ont|avons|avez)\s+(?:tres\s+|si\s+"
    r"|un\s+peu\s+|trop\s+|encore\s+|toujours\s+)?mal\s+(?:a|au|aux)\b",
    r"\bmal\s+(?:de\s+(?:tete|dos|ventre|gorge|dents|mer|crane)|au\s+(?:dos|ventre|coeur|cou"
    r"|genou|pied|bras|ventre|dent)|a\s+la\s+(?:tete|gorge|jambe|main|cheville|hanche|dent))\b",
    r"\b(?:fieber|fievre|fiebre|erkaltung|erkaltet|rhumes?|enrhume\w*|resfriad[oa]s?|resfrio"
    r"|catarro|constipad[oa]|husten|toux|ubelkeit|nausees?|nauseas?|durchfall|diarrea"
    r"|schwindelig|vertiges?|mareos?|maread[oa]s?|erbrech\w*|vomi\w*|ausschlag\w*|urticaire"
    r"|urticaria|sarpullido|nesselsucht)\b",
    r"\b(?:tiene|tengo|tienen|tenemos|tienes|con|la|una|de)\s+(?:mucha\s+)?(?:gripe|tos)\b",
    r"\bmir\s+ist\s+(?:so\s+|total\s+|richtig\s+|etwas\s+|ganz\s+)?(?:schlecht|ubel"
    r"|schwindelig)\b",
    r"\b(?:krankgeschrieben|krankmeldung|arbeitsunfahig\w*|arret\s+maladie|baja\s+medica"
    r"|baja\s+por\s+(?:enfermedad|maternidad|paternidad|depresion|ansiedad)|(?:esta|estoy|estas"
    r"|estan|estamos|sigue|sigo|estar)\s+de\s+baja)\b",
    r"\b(?:arm|bein|handgelenk|knochel|fuss|rippe|finger|zeh|nase|schlusselbein|hufte|knie)"
    r"\s+(?:\w+\s+)?gebrochen\b",
    r"\b(?:bein|arm|knochen|hand|fuss|rippen|finger|zehen|schlusselbein|oberschenkel)bruch\w*",
    r"\b(?:verstaucht|verstauchung|zerrung|esguinces?|entorses?|fracturad[oa]|(?:s'est|me\s+suis"
    r"|s'etait|je\s+me\s+suis)\s+casse)\b",
    r"\b(?:rompio|roto|rompi|partio|fracturo)\s+(?:el|la|un|una)\s+(?:brazo|pierna|muneca"
    r"|tobillo|pie|mano|dedo|costilla|nariz|cadera|rodilla|clavicula|hueso)\b",
    # Mind.
    r"\bdepre(?:ssion\w*|ssiv\w*|sion(?:es)?|siv[oa]s?)?\b",
    r"\bdeprim(?:e|ee|es|ees|id[oa]s?|iert\w*)\b",
    r"\b(?:angststorung\w*|angstzustand\w*|panikattacke\w*|anxiete|ansiedad|angoisses?"
    r"|crises?\s+d'angoisse|ataques?\s+de\s+(?:panico|ansiedad)|crises?\s+de\s+panique"
    r"|essstorung\w*|magersucht|bulimie|anorexie|trastornos?|troubles?\s+(?:alimentaires"
    r"|bipolaires?|anxieux|psychiques|mentaux|du\s+comportement)|zwangsstorung"
    r"|suizid\w*|suicid\w*|selbstverletz\w*|automutil\w*|autolesi\w*|esquizofren\w*"
    r"|schizophren\w*|bipolaire)\b",
    r"\b(?:psychische|seelische|mentale)\s+gesundheit|\bsante\s+mentale|\bsalud\s+mental",
    r"\b(?:meine|seine|ihre|deine|unsere|eure)\s+gesundheit\b|\b(?:ma|sa|leur|mes)\s+sante\b"
    r"|\b(?:mi|su|sus)\s+salud\b",
    r"\b(?:psycho)?therap(?:ie|ien|eut|eute|eutes|eutin|euten|euthique|euticos?)\b",
    r"\b(?:psycho|physio|ergo|chemo|logo|verhaltens|gesprachs|paar|familien)therap\w*",
    r"\b(?:psico|fisio|quimio|radio)?terap(?:ia|ias|euta|eutas)\b",
    r"\b(?:psycholog(?:e|in|en|innen|ue|ues)|psicolog[oa]s?|psiquiatr\w*|psychiater\w*)\b",
    r"\b(?:alkohol|drogen|spiel|nikotin|tabletten|medikamenten)sucht\b"
    r"|\b(?:entzug|reha|desintox\w*|adiccion\w*|alcoolique\w*"
    r"|alcoolisme|alkoholiker\w*|alcoholic[oa]s?|alcoholismo)\b",
    # Pregnancy, birth, fertility.
    r"\b(?:schwanger\w*|grossesses?|embaraz\w*|fehlgeburt\w*|fausses?\s+couches?|aborto"
    r"|avortement|abtreibung|kaiserschnitt|cesarienne|cesarea|entbindung\w*|entbunden"
    r"|accouch\w*|parto|geburt|hebamme|sage-femme|matrona|wechseljahre|menopausia"
    r"|kinderwunsch|fivet|fiv|fecundacion\s+in\s+vitro|pma|ovulation|ovulacion"
    r"|menstruation|regla\s+dolorosa)\b",
    r"\b(?:est|suis|es|etait|etais|soit|etre|serait|sera|tombee|tombe|reste|femmes?"
    r"|toujours|deja|encore|enfin|nouveau)\s+enceintes?\b",
    r"\benceintes?\s+(?:de\s+(?:\d+|deux|trois|quatre|cinq|six|sept|huit|neuf|jumeaux|\w+\s+mois"
    r"|\w+\s+semaines)|depuis)\b",
    r"\b(?:attend|attendons|attendent|attends)\s+un\s+(?:bebe|enfant|heureux\s+evenement)\b",
    r"\b(?:esperando|espera|esperamos)\s+un\s+bebe\b",
    # Allergies and intolerances.
    r"\b(?:laktose|gluten|fruktose)\w*intoleran\w*|\bintoleran\w*\s+(?:au|a\s+la|al|a|zur|gegen)?"
    r"\s*(?:lactose|lactosa|gluten|laktose)\b|\b(?:zoliakie|celiaqu\w*|celiac[oa]s?)\b",
    # Care: doctors, hospitals, operations, scans, aids.
    r"\b(?:(?:haus|zahn|frauen|kinder|fach|augen|haut|hno-?|not|amts|betriebs|ober|assistenz"
    r"|chef)?arzt(?:es|e|in|innen|termin\w*|praxis|besuch\w*|brief)?|arzte[n]?)\b",
    r"\b(?:medecins?|docteurs?|doctora?s?|medic[oa]s?|generaliste|toubib|dentist(?:e|es|a|as)"
    r"|orthodontist\w*|ortodonc\w*|ophtalmo\w*|oftalmolog\w*|oculista|gyneco\w*|ginecolog\w*"
    r"|pediatr\w*|padiatr\w*|kine(?:si\w*)?|fisio|osteo|logopad\w*|orthophon\w*|logoped\w*"
    r"|infirmier\w*|krankenpfleg\w*|pfleger(?:in)?|pflege(?:heim|dienst|grad|stufe|fall)"
    r"|ehpad|residencia\s+de\s+ancianos)\b",
    r"\b(?:hopita(?:l|ux)|hospitalis\w*|hospitaliz\w*|klinik(?:en|um|aufenthalt)?|cliniques?"
    r"|clinicas?|notaufnahme|rettungswagen|notarzt|samu|ambulanc\w*|apothek\w*|pharmacies?"
    r"|pharmacien\w*|farmac\w*|centro\s+de\s+salud|consultorio)\b",
    r"\b(?:aux|les|des|a\s+l'|en)\s+urgences\b|\b(?:a|en|de|las)\s+urgencias\b",
    r"\b(?:chirurg\w*|cirug\w*|cirujan[oa]s?|operiert\w*|op-termin|opere(?:e|es|s)?\s+(?:du|de|des"
    r"|d')|operad[oa]s?\s+de|(?:lo|la|le|me|te|nos|los|las)\s+(?:operan|operaron|operara|operaran"
    r"|van\s+a\s+operar|opero)|(?:knie|hueft|hufte|herz|augen|blinddarm|meniskus|rucken"
    r"|schulter|bandscheiben)-?op(?:eration)?)\b",
    r"\boperation\s+(?:am|an\s+der|an\s+den|du|de\s+la|des|de\s+l'|de)\s+(?:knie|hufte|herz"
    r"|augen?|rucken|schulter|genou|hanche|coeur|dos|epaule|yeux|oeil|cataracte|rodilla|cadera"
    r"|corazon|espalda|hombro|ojos?|vesicule|vesicula|appendicite|apendicitis)\b",
    r"\b(?:rontgen\w*|radiografia\w*|irm|resonancia(?:\s+magnetica)?|echograph\w*|ecograf\w*"
    r"|ultraschall\w*|scanner\s+(?:du|de\s+la|cerebral)|mrt|tomografia\w*)\b",
    r"\b(?:rollstuhl\w*|fauteuil\s+roulant|silla\s+de\s+ruedas|krucken|bequilles|muletas"
    r"|horgerat\w*|appareil\s+auditif|audifonos?|prothese\w*|protesis|gehbehindert\w*"
    r"|behinderung|discapacidad\w*|handicape\w*|minusvalia)\b",
    r"\b(?:vorsorgeuntersuchung\w*|bilan\s+de\s+sante|revision\s+medica|chequeo"
    r"|analisis\s+de\s+sangre|prise\s+de\s+sang|bluttest|analyses?\s+de\s+sang)\b",
)

_MONEY: Final = (
    r"(?:[£$€]\s?\d|\d[\d,.]*\s*(?:k\b|quid|bucks|dollars|pounds|euros|grand)|\d{2,}|money|cash"
    r"|rent|a\s+(?:fortune|lot\s+of\s+money|few\s+(?:quid|bucks|hundred|grand))"
    r"|(?:a\s+)?(?:hundred|thousand|grand|tenner|fiver))"
)

# An amount of money in German, French or Spanish, or money named as such.
_CURRENCY_ML: Final = (
    r"(?:euros?\b|eur\b|\u20ac|balles\b|dollars?\b|pesos\b|pfund\b|livres\b|libras\b|franken\b"
    r"|francs\b)"
)
_MONEY_ML: Final = (
    r"(?:\d[\d\s.,]*\s*(?:k\b|"
    + _CURRENCY_ML
    + r")|(?:[a-z]+[\s-]+){1,2}"
    + _CURRENCY_ML
    + r"|\u20ac\s?\d|dinero\b|geld\b|argent\b|de\s+l'argent\b|des\s+sous\b|fric\b|thune\b"
    r"|kohle\b)"
)

# An upper-case ISA is the tax-free savings account, not the name Isa.
# ... and upper-case RIB and BIC are bank details, not a rib or a pen.
FINANCE_RULES_CASED: Final[tuple[str, ...]] = (r"\bISAs?\b", r"\b(?:RIB|BIC)\b")
FINANCE_RULES: Final[tuple[str, ...]] = (
    # Income.
    r"\bsal(?:ary|aries|ery)\b",
    r"\bwages?\b",
    r"\bpay\s?(?:rise|raise|cut|check|cheque|slip|packet|day|grade|review|stub)s?\b",
    r"\b(?:paycheck|paycheque|payslip|payday)s?\b",
    r"\b(?:got|get|gets|getting|asked\s+for|ask\s+for|asking\s+for|give|gave|giving|deserve"
    r"|deserves|big|small|annual)\s+(?:me\s+|him\s+|her\s+|them\s+|us\s+)?an?\s+raise\b",
    r"\btake-?home\s+pay\b",
    r"\b(?:hourly|daily|day)\s+rate\b",
    r"\b(?:made\s+redundant|redundancy|severance|payout)\b",
    r"\bearn(?:s|ed|ing)?\s+(?:(?:about|around|over|under|like|only|just|nearly|almost|less"
    r"|more|than)\s+)*[£$€]?\d",
    r"\bhow\s+much\s+(?:do|does|did|will|would)\s+(?:\w+\s+)?(?:earn|make|get\s+paid)\b",
    r"\bmak(?:e|es|ing)\s+(?:about\s+|around\s+|over\s+|like\s+)?[£$€]?\d[\d,.]*\s*k?\s*"
    r"(?:a|an|per)\s+(?:year|month|hour|week)\b",
    r"\bget(?:s|ting)?\s+paid\b",
    r"\bearnings\b",
    r"\bincome\b",
    r"\b(?:annual|year-end|yearly|christmas|xmas|performance|signing|work|cash|my|her|his"
    r"|their|your)\s+bonus(?:es)?\b",
    # Debt and borrowing.
    r"\bdebts?\b",
    r"\bloans?\b",
    r"\b(?:re)?mor(?:t?gage|tage)(?:s|d)?\b",
    r"\boverdra(?:ft|fts|wn|wing)\b",
    r"\barrears\b",
    r"\b(?:bankrupt\w*|insolven\w*|repossess\w*|bailiffs?|debt\s+collectors?|ccjs?)\b",
    r"\bow(?:e|es|ed|ing)\s+(?:(?:me|you|him|her|us|them|it|the\s+\w+|\w+)\s+)?"
    r"(?:about\s+|around\s+|like\s+|over\s+|nearly\s+|almost\s+|at\s+least\s+)?" + _MONEY,
    r"\b(?:lend|lends|lent|borrow(?:s|ed|ing)?|loaned)\s+(?:(?:me|you|him|her|us|them)\s+)?"
    r"(?:some\s+|the\s+)?" + _MONEY,
    r"\bpa(?:y|ys|id|ying)\s+(?:me|you|him|her|us|them)\s+back\b",
    r"\b(?:transfer(?:s|red|ring)?|send|sent|wire[sd]?)\s+(?:me|you|him|her|us|them)\s+"
    r"(?:the\s+)?" + _MONEY,
    r"\b(?:child\s+maintenance|child\s+support|alimony)\b",
    r"\bbehind\s+(?:on|with)\s+(?:the\s+|our\s+|my\s+|her\s+|his\s+|their\s+)?(?:rent|bills?"
    r"|payments?|mortgage|council\s+tax|repayments?|loan|card)\b",
    r"\b(?:overdue|unpaid|outstanding)\s+(?:rent|bills?|invoices?|balance|payments?|fines?"
    r"|tax)\b",
    r"\b(?:rent|bills?|invoices?|payments?)\s+(?:is|are|was|were)\s+(?:overdue|unpaid|late"
    r"|outstanding)\b",
    r"\b(?:late|missed|minimum|monthly|loan|mortgage|car|credit\s+card)\s+(?:re)?payments?\b",
    r"\brepayments?\b",
    r"\b(?:pay|paying|paid|afford|cover|covering|owe|owes|owed|split|splitting)\s+"
    r"(?:the\s+|our\s+|my\s+|her\s+|his\s+|their\s+)?rent\b",
    r"\b(?:put|puts|putting|raised|raising|increased|upped)\s+(?:the\s+|our\s+|my\s+)?rent\b",
    r"\brent\s+up\b",
    r"\brent\s+(?:arrears|increase|hike|went\s+up|is\s+going\s+up|is\s+due|is\s+late|money)\b",
    # Bills, accounts, cards, banks.
    r"\b(?:pay|paying|paid|afford|cover|covering|split|splitting|energy|electric|electricity"
    r"|gas|water|phone|utility|utilities|household|heating|huge|massive)\s+(?:the\s+|our\s+"
    r"|my\s+|her\s+|his\s+|their\s+|all\s+the\s+)?bills?\b",
    r"\b(?:bank|savings|current|checking|joint|isa|pension|brokerage|investment|trading"
    r"|offshore|business)\s+accounts?\b",
    r"\b(?:account\s+number|sort\s+code|routing\s+number|iban|swift\s+code)s?\b",
    r"\bbank\s+(?:statements?|balance|details|loans?|transfers?|charges?|fees?|manager|cards?)\b",
    r"\b(?:online|internet|mobile)\s+banking\b",
    r"\bbanking\s+(?:app|details)\b",
    r"\b(?:the|my|our|her|his|their)\s+bank\s+(?:rang|called|phoned|emailed|froze|declined"
    r"|blocked|refused|said|won't|wouldn't|wants)\b",
    r"\bcredit\s+(?:score|rating|report|cards?|limit|check|history|union)\b",
    r"\bdebit\s+cards?\b",
    r"\bcard\s+(?:number|details|payment|bill|statement)s?\b",
    r"\bcard\s+(?:was|got|is|keeps\s+getting)\s+declined\b",
    # Tax.
    r"\btax(?:es|ed|man)?\b",
    r"\bvat\s+(?:return|bill|registration|number)s?\b",
    r"\b(?:hmrc|irs)\b",
    r"\bself[- ]assessment\s+(?:tax\s+)?(?:return|deadline|bill)s?\b",
    r"\binvoic(?:e|es|ed|ing)\b",
    # Savings, investments, pensions.
    r"\bsavings\b",
    r"\bsav(?:e|es|ed|ing)\s+up\b",
    r"\bsav(?:e|es|ed|ing)\s+(?:money|cash|for\s+a\s+(?:deposit|house|car|mortgage))\b",
    r"\b(?:rainy\s+day|emergency)\s+fund\b",
    r"\b(?:house|mortgage|rental|security)\s+deposit\b",
    r"\binvestments?\b",
    r"\binvest(?:s|ed|ing|ors?)?\s+(?:\w+\s+){0,2}?(?:in\s+)?(?:stocks?|shares?|crypto|bitcoin"
    r"|index\s+funds?|funds?|property|properties|the\s+(?:stock\s+)?market|bonds?|gold|[£$€]"
    r"|\d)",
    r"\b(?:stock|share)\s+market\b",
    r"\bstocks\s+and\s+shares\b",
    r"\b(?:bought|sold|own|owns|buy|sell|selling|buying)\s+(?:some\s+)?(?:shares|stocks)\b",
    r"\b(?:stock|share|investment|pension|crypto|property)\s+portfolio\b",
    r"\bindex\s+funds?\b",
    r"\b(?:crypto(?:currency|currencies)?|bitcoin|ethereum|btc|nfts?)\b",
    r"\bdividends?\b",
    r"\binterest\s+rates?\b",
    r"\bnet\s+worth\b",
    r"\binheritance\b",
    r"\bpensions?\b",
    r"\b401\(?k\)?",
    r"\broth\s+ira\b",
    r"\b(?:cash|lifetime|junior)\s+isa\b",
    r"\binsurance\b",
    r"\bfinanc(?:es|ial|ially)\b",
    r"\b(?:accountant|financial\s+advis[eo]r|mortgage\s+broker)s?\b",
    # Hardship.
    r"\b(?:i'm|im|i\s+am|we're|we\s+are|she's|he's|they're|is|are|was|am|so|totally"
    r"|completely|flat|stony|dead|utterly|always|too|go|goes|going|gone|went)\s+broke\b"
    r"(?!\s+(?:down|up|out|off|in|into|through|the|her|his|my|their|a|an|it|our|your|free"
    r"|ground|even|loose|away|open|character|records?|news)\b)",
    r"\b(?:skint|hard\s+up|strapped\s+for\s+cash)\b",
    r"\bshort\s+(?:of|on)\s+(?:money|cash)\b",
    r"\bmoney\s*(?:is|'s)\s+(?:really\s+|very\s+|so\s+)?(?:tight|short|an\s+issue|a\s+problem"
    r"|a\s+worry)\b",
    r"\b(?:money|financial|cash|cash\s?flow)\s+(?:worries|problems|troubles|issues|stress"
    r"|struggles)\b",
    r"\b(?:worried|worrying|stressed|anxious)\s+about\s+(?:money|the\s+bills|bills|finances"
    r"|debt|rent)\b",
    r"\b(?:can't|cant|cannot|can\s+not|couldn't|couldnt|could\s+not|can\s+barely|can\s+hardly"
    r"|barely|won't\s+be\s+able\s+to|unable\s+to|struggling\s+to|struggle\s+to)\s+afford\b"
    r"(?!\s+to\s+(?:be|lose|miss|wait|risk|let|make|waste|mess|fall|screw|upset|ignore)\b)",
    r"\b(?:universal\s+credit|child\s+benefit|housing\s+benefit|jobseeker'?s\s+allowance"
    r"|food\s+stamps|on\s+welfare|on\s+benefits|unemployment\s+benefits?)\b",
    r"\bclaim(?:s|ed|ing)?\s+benefits\b",
    r"\b(?:tight|monthly|household|family)\s+budget\b",
    # German, French and Spanish. Income.
    r"\b(?:gehalt(?:s\w*|erhohung)?|monatsgehalt|jahresgehalt|bruttogehalt|nettogehalt"
    r"|(?:stunden|mindest|brutto|netto|monats)?lohn(?:erhohung|abrechnung|zettel)?|lohnabrechnung"
    r"|gehaltsabrechnung|salaires?|fiches?\s+de\s+paie|bulletins?\s+de\s+(?:paie|salaire)"
    r"|augmentation\s+de\s+salaire|sueldos?|salarios?|nominas?|aumento\s+de\s+sueldo"
    r"|prime\s+de\s+fin\s+d'annee|weihnachtsgeld|abfindung\w*|indemnite\s+de\s+licenciement"
    r"|finiquito)\b",
    r"\b(?:verdien(?:t|en|e|st)|gagne(?:s|nt)?|gana(?:s|n|mos)?)\s+(?:\w+\s+){0,2}\d[\d\s.,]*"
    r"(?:k\b|euros?\b|eur\b|\u20ac|balles\b|brutto\b|netto\b|net\b|brut\b|pesos\b|dollars?\b"
    r"|(?:im|par|al|a\s+la|pro)\s+(?:monat|mois|mes|jahr|an|ano|stunde|heure|hora)\b)",
    # Debt, loans, mortgages, arrears.
    r"\b(?:schulden\w*|verschuldet|dettes?|endett\w*|deudas?|endeudad[oa]s?"
    r"|kredit(?:e|rate\w*|karte\w*|vertrag|wurdigkeit)?|darlehen|hypothek\w*|hypothequ\w*"
    r"|hipotec\w*|ratenzahlung\w*|emprunts?|(?:le|un|mon|ton|son|notre|votre|leur|du|au|ce)\s+pret"
    r"\b(?!-a-porter)|pret\s+(?:immobilier|etudiant|bancaire|auto"
    r"|personnel|a\s+taux)|credits?\s+(?:immobilier|conso\w*|auto|a\s+la\s+consommation"
    r"|renouvelable|bancaire)|prestamos?\b(?!\s+atencion)"
    r"|credito\s+(?:hipotecario|personal|rapido)"
    r"|inkasso\w*|mahnung\w*|gerichtsvollzieher|pfandung|huissiers?|surendettement"
    r"|privatinsolvenz|faillite|quiebra|bancarrota|pleite|sin\s+blanca"
    r"|(?:suis|est|es|sommes|etes|sont|completement|totalement|trop|vraiment)\s+fauches?"
    r"|sans\s+un\s+sou|knapp\s+bei\s+kasse|numeros\s+rojos|dans\s+le\s+rouge|mietschulden"
    r"|impayes?|impagos?)\b",
    # Owing: "il me doit 200 euros", "on doit 3000 euros à la banque", "me debe 50 euros",
    # "er schuldet mir Geld".
    r"\b(?:doi(?:s|t|vent)|devons|devez|debo|debes|debe|debemos|debeis|deben|schulde(?:t|st|n)?)"
    r"\s+(?:(?:encore|toujours|todavia|aun|noch|immer\s+noch|me|te|lui|nous|vous|leur|le|nos|os"
    r"|les|mir|dir|ihm|ihr|uns|euch|ihnen|ihr|der|dem|den|la|al|a|de)\s+){0,2}?" + _MONEY_ML,
    # Lending and borrowing: "le presté 300 euros", "je lui ai prêté 50 euros", "ich habe ihm
    # 300 Euro geliehen".
    r"\b(?:preste|presto|presta|prestaste|prestamos|prestaron|prestado|prestar|pedi\s+prestado"
    r"|prete|pretes|preter|emprunte|empruntes|emprunter|leihen|leiht|lieh|geliehen|borgen|borgt"
    r"|geborgt|pumpen)\s+(?:\w+\s+){0,2}?" + _MONEY_ML,
    r"\b" + _MONEY_ML + r"\s*(?:\w+\s+){0,2}?(?:geliehen|geborgt|gepumpt|leihen|borgen)\b",
    # Rent and bills.
    r"\b(?:die|der|unsere|meine|seine|ihre|eure|deine|keine|warm|kalt)\s*-?miete\b"
    r"|\bmiete\s+(?:zahlen|bezahlen|uberweisen|ist|war|fur|erhoht|steigt|gestiegen)\b"
    r"|\b(?:warmmiete|kaltmiete|mieterhohung|nebenkosten\w*|loyers?|charges\s+locatives)\b",
    r"\b(?<!de\s)(?<!en\s)alquiler(?:es)?\b(?!\s+de\s+(?:coches?|bicis?|bicicletas?|material"
    r"|esquis"
    r"|barcos?|vehiculos|furgonetas?|motos?))",
    r"\b(?:meses?|recibos?|pagos?|deuda|dinero|fianza|subida)\s+del?\s+alquiler\b",
    r"\b(?:rechnung\w*\s+(?:bezahlen|begleichen|offen|uberfallig)|offene\s+rechnung\w*"
    r"|stromrechnung|gasrechnung|nebenkostenabrechnung|factur(?:e|es|a|as))\b",
    # Accounts, cards, banks, transfers.
    r"\b(?:(?:bank|giro|spar|tagesgeld|gemeinschafts|geschafts|festgeld)konto\w*"
    r"|konto(?:stand|nummer|auszug\w*|uberzug|gebuhr\w*|bewegung\w*|daten|\s+(?:ist\s+)?"
    r"(?:\w+\s+)?uberzogen)|dispokredit|dispozinsen|im\s+dispo|girocard|ec-?karte\w*"
    r"|kreditkarte\w*|bankkarte\w*|uberweisung\w*|lastschrift\w*|dauerauftrag\w*)\b",
    r"\b(?:comptes?\s+(?:bancaires?|en\s+banque|joints?|epargne|courants?|cheques?|commun)"
    r"|relev\w+\s+(?:de\s+compte|bancaires?)|a\s+decouvert|decouverts?\s+(?:autorise|bancaire)"
    r"|cartes?\s+(?:bancaires?|bleues?|de\s+credit|visa)|virements?|livret\s+a)\b",
    r"\b(?:cuentas?\s+(?:bancarias?|corrientes?|de\s+ahorros?|conjuntas?|nomina)"
    r"|extracto\s+(?:bancario|de\s+la\s+cuenta)|tarjetas?\s+(?:de\s+)?(?:credito|debito)"
    r"|numero\s+de\s+(?:carte|tarjeta|compte|cuenta)|al\s+descubierto"
    r"|transferencias?\s+(?:bancarias?|de\s+dinero|a\s+(?:mi|tu|su|la)\s+cuenta)"
    r"|(?:hacer|hice|hizo|hago|mandar|mande|mando|enviar|envie|envio)\s+(?:una\s+)?transferencia"
    r"|numeros?\s+de\s+cuenta)\b",
    # Tax, savings, investments, pensions, benefits.
    r"\b(?:steuer(?:n|erklarung|berater\w*|bescheid|nachzahlung|ruckerstattung|schulden|nummer"
    r"|klasse|jahr)|finanzamt|impots?|declaration\s+d'impots|fisc|impuestos?|hacienda"
    r"|declaracion\s+de\s+(?:la\s+)?renta|mwst)\b",
    r"\b(?:erspart\w*|ersparnis\w*|sparbuch|rucklagen|epargne\w*|(?:mes|nos|ses|leurs|des|les)"
    r"\s+economies|ahorros?|aktien\w*|aktiendepot|wertpapier\w*|etfs?|borse|bourse"
    r"|(?:actions|acciones)\s+(?:en|a\s+la)\s+(?:bourse|bolsa)|bolsa\s+de\s+valores"
    r"|inversiones|inversion\s+en|investissements?|placements?\s+financiers?"
    r"|rente(?:n|nversicherung|nkasse)?|altersvorsorge"
    r"|(?:pension|caisse|epargne|plan)\s+(?:de\s+)?retraite|retraite\s+complementaire"
    r"|jubilacion|pensiones|plan\s+de\s+pensiones|erbschaft|herencia|versicherung\w*"
    r"|assurances?\s+(?:vie|auto|habitation|maladie)|mutuelle"
    r"|seguros?\s+(?:de\s+vida|del\s+coche|de\s+hogar|medico|de\s+salud))\b",
    r"\b(?:burgergeld|hartz|arbeitslosengeld|kindergeld|wohngeld|sozialhilfe|bafog|unterhalt"
    r"|unterhaltszahlung\w*|chomage|allocations?\s+(?:chomage|familiales|logement)"
    r"|pension\s+alimentaire|en\s+(?:el\s+)?paro|subsidio\w*|pension\s+alimenticia"
    r"|ayudas?\s+sociales?)\b",
    r"\b(?:geldsorgen|geldprobleme|finanzielle\w*|finanzen|finances|financier\w*|finanzas"
    r"|financier[oa]s?|problemas\s+de\s+dinero|soucis\s+d'argent|fins?\s+de\s+mois"
    r"\s+difficiles?)\b",
)


# Apostrophe look-alikes, including the acute accent and prime people type for one.
_APOSTROPHES: Final = str.maketrans(
    {"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'", "\u00b4": "'", "\u2032": "'"}
)
# Combining marks (accents, once NFKD has split them off) and invisible format characters (soft
# hyphen, zero-width space and joiners, word joiner, BOM) that could hide a word from a rule.
_DROPPED: Final = re.compile(
    "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
    "\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]"
)


def fold(text: str) -> str:
    """`text` as the rules read it, before casefolding: apostrophes straightened, compatibility
    forms decomposed, accents and invisible characters dropped ("Código" becomes "Codigo",
    full-width "PIN" becomes ASCII, "pass\u200bword" becomes "password"). ASCII text is
    unchanged."""
    text = text.translate(_APOSTROPHES)
    if text.isascii():
        return text
    return _DROPPED.sub("", unicodedata.normalize("NFKD", text))


def _casefold(written: str) -> str:
    lowered = written.casefold()
    # Casefolding can split a letter again ("İ" becomes "i" and a combining dot).
    return lowered if lowered.isascii() else _DROPPED.sub("", lowered)


def _compile(rules: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for a tuple of lower-case rules, with their shared leading `\\b` factored out.

    Factoring keeps every branch starting with a literal, which lets `re` skip quickly past
    positions where no rule can begin; that is most of the classifier's speed. A rule must read
    the same folded: the sentence it runs on has been folded (see `fold`), so an accented or
    upper-case letter in a rule could never match.
    """
    for rule in rules:
        if not rule.startswith(r"\b") or _casefold(fold(rule)) != rule:
            raise ValueError(f"a rule must be folded lower case and start with \\b: {rule!r}")
    return re.compile(r"\b(?:" + "|".join(f"(?:{rule[2:]})" for rule in rules) + ")")


def _compile_cased(rules: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{rule})" for rule in rules)) if rules else None


_IDIOMS_CASED_RE: Final = re.compile("|".join(ORDINARY_IDIOMS_CASED))
_IDIOMS_RE: Final = _compile(ORDINARY_IDIOMS)

# Tried in this order; the first class with a matching rule wins.
PRECEDENCE: Final[tuple[tuple[Sensitivity, re.Pattern[str], re.Pattern[str] | None], ...]] = (
    (Sensitivity.CREDENTIALS, _compile(CREDENTIAL_RULES), _compile_cased(CREDENTIAL_RULES_CASED)),
    (Sensitivity.HEALTH, _compile(HEALTH_RULES), None),
    (Sensitivity.FINANCE, _compile(FINANCE_RULES), _compile_cased(FINANCE_RULES_CASED)),
)

# What a blanked idiom leaves behind: a mark no rule can match across.
_BARRIER: Final = " ; "


def classify(text: str) -> Sensitivity:
    """The most sensitive class any rule finds in `text`; ORDINARY when none does."""
    written = _IDIOMS_CASED_RE.sub(_BARRIER, fold(text))
    lowered = _IDIOMS_RE.sub(_BARRIER, _casefold(written))
    for sensitivity, rules, cased in PRECEDENCE:
        if rules.search(lowered) or (cased is not None and cased.search(written)):
            return sensitivity
    return Sensitivity.ORDINARY
