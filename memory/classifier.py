"""How sensitive one sentence is: ordinary, health, finance or credentials.

Owns: the deterministic sentence rules (compiled regexes with word boundaries, keyword stems and
a few phrase patterns) and the precedence between classes: credentials > health > finance >
ordinary. Must not: do I/O, keep state, call a model, log the text, or look for secret *tokens*
(API keys, card numbers, private keys; that is `memory.secrets`, which callers run as well).

A sentence is first normalised (curly apostrophes become straight ones) and the idioms in
`ORDINARY_IDIOMS` and `ORDINARY_IDIOMS_CASED` ("sick of the rain", "Doctor Who", "retail
therapy", "owing to", "she's a doctor") are blanked out, so their words cannot trip a rule.
Then the classes are tried in precedence order and the first one with a matching rule wins.
Weak words that are usually innocent ("bank", "key", "pin", "rent", "cold", "pain") only count
inside a phrase that gives them their sensitive sense ("bank account", "door code", "her PIN",
"behind on rent").
A line that `memory.secrets.mask_secrets` has already masked ("[masked api_key]") is
credentials: the placeholder is recognised, the token itself is never seen here.
"""

from __future__ import annotations

import re
from typing import Final

from memory.models import Sensitivity

_POSSESSIVE: Final = r"(?:my|her|his|their|your|our|the|mum's|mom's|dad's)"

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
)

# An upper-case PIN is always the secret number; a lower-case "pin" needs a context.
CREDENTIAL_RULES_CASED: Final[tuple[str, ...]] = (r"\bPINs?\b",)
CREDENTIAL_RULES: Final[tuple[str, ...]] = (
    r"\bpin\s*(?:codes?|numbers?|nos?\b|#)",
    r"\bpins?\s*(?:is|was|=|:|'s)\s*\d",
    r"\bpins?\s+(?:for|to|of|on)\s+(?:" + _POSSESSIVE + r"\s+)?(?:new\s+)?(?:bank\s+|debit\s+"
    r"|credit\s+)?(?:cards?|phone|alarm|door|safe|laptop|ipad|tablet|account|sim|atm|router|app)\b",
    r"\b(?:card|bank|atm|debit|sim|phone|door|alarm|garage|safe|laptop|ipad|app|[46]-digit"
    r"|four-digit|six-digit)\s+pins?\b",
    # Passwords, passcodes, passphrases, with the usual typos and chat abbreviations.
    r"\bpa?s{1,2}(?:w(?:or|ro|r|o)?d|code|phrase)s?\d*\b",
    r"\bpw[ds]?\b",
    r"\b(?:wi-?fi|router|network)\s+(?:pass|key|code)\b",
    # Logins as a thing someone has (not "log in" the verb).
    r"\b" + _POSSESSIVE + r"\s+(?:[\w+.-]+\s+){0,2}log-?ins?\b",
    r"\b(?:\w+'s)\s+(?:[\w+.-]+\s+)?log-?ins?\b",
    r"\b(?:log[- ]?in|sign[- ]?in)\s+(?:details|info|information|credentials|name|email|code)\b",
    r"\blog-?ins?\s+(?:is|was|for)\b",
    r"\bcredentials?\b",
    r"\b(?:netflix|disney\+?|spotify|amazon|hulu|icloud|apple\s+id|google|gmail|facebook"
    r"|insta(?:gram)?|tiktok|steam|xbox|playstation|psn|nintendo|paypal|email)\s+(?:account\s+)?"
    r"(?:details|pass|logins?|sign[- ]?in)\b",
    # Security questions and memorable answers.
    r"\bsecurity\s+(?:questions?|answers?)\b",
    r"\b(?:mother|mum|mom)'?s\s+maiden\s+name\b",
    r"\bmemorable\s+(?:word|answer|information|date|place)\b",
    # Door codes, key safes, combinations.
    r"\b(?:front[- ]door|back[- ]door|door|gate|alarm|garage|keypad|key[- ]?safe|key[- ]?box"
    r"|lock[- ]?box|entry|access|padlock|safe|locker|bike[- ]lock|lock|unlock|wi-?fi|router"
    r"|screen[- ]?lock|lock[- ]?screen|burglar\s+alarm)\s+(?:codes?|combos?|combinations?)\b",
    r"\b(?:lock[- ]?screen|screen[- ]?lock|unlock)\s+(?:patterns?|pins?|passcodes?)\b",
    r"\bcodes?\s+(?:for|to|of|on)\s+(?:" + _POSSESSIVE + r"\s+)?(?:front\s+|back\s+|side\s+"
    r"|garden\s+|main\s+)?(?:door|gate|alarm|garage|safe|lock\s?box|key\s?safe|padlock|locker"
    r"|lock|wi-?fi|router|phone|ipad|laptop|building|flat|house|apartment)\b",
    r"\bcode\s+to\s+(?:get\s+in(?:to)?|unlock|open\s+the)\b",
    r"\b(?<!dress\s)(?<!area\s)(?<!zip\s)(?<!promo\s)(?<!discount\s)(?<!voucher\s)"
    r"(?<!postal\s)(?<!country\s)(?<!dialling\s)(?<!dialing\s)(?<!qr\s)"
    r"code\s*(?:is|was|:|=|'s)\s*\d{3,}",
    r"\bkey[- ]?safe\b",
    r"\b(?:combination|combo)\s+(?:to|for|of|on)\s+(?:" + _POSSESSIVE + r"\s+)?(?:safe|lock"
    r"|padlock|locker|bike\s+lock|vault|suitcase|briefcase)\b",
    # Second factors and recovery material.
    r"\b(?:2fa|mfa|two[- ]factor|2[- ]factor|multi[- ]factor|two[- ]step)\b",
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
)

_MONEY: Final = (
    r"(?:[£$€]\s?\d|\d[\d,.]*\s*(?:k\b|quid|bucks|dollars|pounds|euros|grand)|\d{2,}|money|cash"
    r"|rent|a\s+(?:fortune|lot\s+of\s+money|few\s+(?:quid|bucks|hundred|grand))"
    r"|(?:a\s+)?(?:hundred|thousand|grand|tenner|fiver))"
)

# An upper-case ISA is the tax-free savings account, not the name Isa.
FINANCE_RULES_CASED: Final[tuple[str, ...]] = (r"\bISAs?\b",)
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
)


def _compile(rules: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for a tuple of lower-case rules, with their shared leading `\\b` factored out.

    Factoring keeps every branch starting with a literal, which lets `re` skip quickly past
    positions where no rule can begin; that is most of the classifier's speed.
    """
    for rule in rules:
        if not rule.startswith(r"\b") or rule != rule.lower():
            raise ValueError(f"a rule must be lower case and start with \\b: {rule!r}")
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

_APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
# What a blanked idiom leaves behind: a mark no rule can match across.
_BARRIER: Final = " ; "


def classify(text: str) -> Sensitivity:
    """The most sensitive class any rule finds in `text`; ORDINARY when none does."""
    written = _IDIOMS_CASED_RE.sub(_BARRIER, text.translate(_APOSTROPHES))
    lowered = _IDIOMS_RE.sub(_BARRIER, written.lower())
    for sensitivity, rules, cased in PRECEDENCE:
        if rules.search(lowered) or (cased is not None and cased.search(written)):
            return sensitivity
    return Sensitivity.ORDINARY
