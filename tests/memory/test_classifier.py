"""The sentence classifier against a hand-labelled corpus, its traps and its precedence."""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from memory.classifier import classify
from memory.models import Sensitivity

ORDINARY = Sensitivity.ORDINARY
HEALTH = Sensitivity.HEALTH
FINANCE = Sensitivity.FINANCE
CREDENTIALS = Sensitivity.CREDENTIALS

CREDENTIALS_CORPUS: list[tuple[str, Sensitivity]] = [
    ("her PIN is 0042", CREDENTIALS),
    ("the wifi password is hunter2", CREDENTIALS),
    ("my passcode is 847261", CREDENTIALS),
    ("whats the netflix login again?", CREDENTIALS),
    ("The answer to my security question is Fluffy, our first dog.", CREDENTIALS),
    ("the door code is 4821#", CREDENTIALS),
    ("Safe combination is 12-34-56, don't forget", CREDENTIALS),
    ("I printed my 2FA backup codes and put them in the drawer", CREDENTIALS),
    ("my recovery phrase is written on a card in the tin", CREDENTIALS),
    ("Dad's bank card PIN is 1966", CREDENTIALS),
    ("can u text me the wifi pasword pls 🙏", CREDENTIALS),
    ("What's the pin for the alarm?", CREDENTIALS),
    ("The alarm code changed to 0909 yesterday.", CREDENTIALS),
    ("mum's email password is her maiden name plus 77", CREDENTIALS),
    ("I reset my Amazon password to something with my birthday in it", CREDENTIALS),
    ("my apple id password is Sunflower88!", CREDENTIALS),
    ("the gate code for grandma's building is 1357", CREDENTIALS),
    ("He keeps his passwords in a notebook by the bed.", CREDENTIALS),
    ("the garage keypad code is 2580", CREDENTIALS),
    ("Her mother's maiden name is Kowalski, the security answer for the bank.", CREDENTIALS),
    ("my ssh key passphrase is long but I'll tell you later", CREDENTIALS),
    ("can you remember the login for the school portal?", CREDENTIALS),
    ("the combination to the bike lock is 4-1-7", CREDENTIALS),
    ("my phone unlock code is 1111 lol", CREDENTIALS),
    ("the verification code they sent me is 552913", CREDENTIALS),
    ("Please don't share the Disney+ login details with your friends.", CREDENTIALS),
    ("the api key for the weather app is in my notes", CREDENTIALS),
    ("Grandpa wrote his online banking password on a post-it", CREDENTIALS),
    ("I need the one-time code from your phone to get into the account", CREDENTIALS),
    ("keybox code for the holiday cottage is 0815", CREDENTIALS),
    ("Our router admin password is still the default one.", CREDENTIALS),
    ("her phone's unlock pattern is an L shape", CREDENTIALS),
    ("Jake's Steam account credentials are in the shared note", CREDENTIALS),
    ("her security question answer is 'pizza'", CREDENTIALS),
    ("Do you know the PIN for the new debit card?", CREDENTIALS),
    ("remember the front door keypad code is 1-9-8-4", CREDENTIALS),
    ("the github token is in the .env file", CREDENTIALS),
    ("I forgot my passcode AGAIN 😩", CREDENTIALS),
    ("Set up two-factor on the family email yesterday", CREDENTIALS),
    ("My seed phrase for the crypto wallet is in the fireproof box", CREDENTIALS),
    ("the memorable word for the pension site is 'marmalade'", CREDENTIALS),
    ("Tom's work laptop password expires every 90 days", CREDENTIALS),
    ("wifi pw is on the fridge", CREDENTIALS),
    ("The locker combination at the gym is 2-2-7", CREDENTIALS),
    ("auntie's pin number is the same as her birthday", CREDENTIALS),
    ("what's the passcode for the ipad, the kids need it", CREDENTIALS),
    ("Is the 6-digit code for the safe still 314159?", CREDENTIALS),
    ("She shared her Spotify login with her cousin", CREDENTIALS),
    ("admin / password123 for the printer, don't tell anyone", CREDENTIALS),
    ("I wrote the recovery codes for her Google account on the back of a receipt", CREDENTIALS),
    ("Bob's bank card PIN is 4921", CREDENTIALS),
    ("Olivia's laptop passcode is 771903", CREDENTIALS),
    ("the cvv on the back of my card is 123", CREDENTIALS),
    ("here's the key for the bot: [masked api_key]", CREDENTIALS),
]

HEALTH_CORPUS: list[tuple[str, Sensitivity]] = [
    ("I've been diagnosed with type 2 diabetes.", HEALTH),
    ("mum started on insulin last week", HEALTH),
    ("He's been on antidepressants since March.", HEALTH),
    ("need to pick up my prescription from the chemist tomorrow", HEALTH),
    ("The doctor upped her dose to 50mg.", HEALTH),
    ("we're pregnant!!! 🎉 due in May", HEALTH),
    ("she's seeing a therapist every thursday", HEALTH),
    ("I've had a pounding headache all day", HEALTH),
    ("Lily is allergic to peanuts, keep the satay away from her", HEALTH),
    ("Grandad's knee surgery is booked for the 14th", HEALTH),
    ("my blood pressure was high at the check", HEALTH),
    ("his mental health has been really rough lately", HEALTH),
    ("I've got a doctor's appointment at 3", HEALTH),
    ("Sam has a fever and a cough, keeping him home", HEALTH),
    ("Can you remind me to take my sertraline at 9?", HEALTH),
    ("Mia's ADHD assessment finally came through", HEALTH),
    ("i think i have covid, testing now", HEALTH),
    ("She had a miscarriage in the spring and doesn't want to talk about it.", HEALTH),
    ("dads been having panic attacks again", HEALTH),
    ("Remind me the inhaler is in the blue bag.", HEALTH),
    ("Nan's dementia is getting worse, she didn't recognise me", HEALTH),
    ("my therapist says I should journal more", HEALTH),
    ("The GP referred him to a cardiologist.", HEALTH),
    ("I'm on day 3 of antibiotics for a chest infection", HEALTH),
    ("she broke her wrist at the trampoline park", HEALTH),
    ("He's in hospital after a fall.", HEALTH),
    ("anyone know a good physio for a bad back?", HEALTH),
    ("my period pains are awful this month", HEALTH),
    ("I'm 12 weeks pregnant, not telling anyone yet", HEALTH),
    ("the dentist says I need a root canal", HEALTH),
    ("her asthma flares up in cold weather", HEALTH),
    ("Jack has been self-harming, the school called", HEALTH),
    ("mum's chemo starts monday", HEALTH),
    ("I feel sick, think it was the prawns", HEALTH),
    ("he's been really depressed since losing his job", HEALTH),
    ("The IVF clinic called with the results.", HEALTH),
    ("She takes levothyroxine every morning for her thyroid.", HEALTH),
    ("my anxiety is through the roof before the interview", HEALTH),
    ("booked the kids' flu jabs for saturday", HEALTH),
    ("Dad had a mild stroke last year.", HEALTH),
    ("she's got a nasty rash on her arm", HEALTH),
    ("i found a lump in my breast, scared to get it checked", HEALTH),
    ("the blood test came back normal", HEALTH),
    ("he's lactose intolerant so no cheese board", HEALTH),
    ("My back is killing me, might need painkillers", HEALTH),
    ("Is Ozempic worth it or is it just hype?", HEALTH),
    ("he's been off sick all week with a stomach bug", HEALTH),
    ("Her eating disorder came back over the holidays.", HEALTH),
    ("mums on blood thinners after the clot", HEALTH),
    ("Evie has an EpiPen in her school bag", HEALTH),
    ("i keep getting migranes", HEALTH),
    ("she had a c-section with the twins", HEALTH),
    ("therapy was hard today 😔", HEALTH),
    ("he has an appointment with the psychiatrist on friday", HEALTH),
    ("the doctor who treated her in A&E was lovely", HEALTH),
    ("Bob takes insulin for his diabetes", HEALTH),
    ("Alice is seeing a therapist for her anxiety", HEALTH),
    ("Grandma is allergic to penicillin", HEALTH),
    ("I need to see a doctor about this cough", HEALTH),
]

FINANCE_CORPUS: list[tuple[str, Sensitivity]] = [
    ("My salary goes in on the 25th.", FINANCE),
    ("we're still paying off the car loan", FINANCE),
    ("The mortgage rate jumps in October.", FINANCE),
    ("I'm £2k into my overdraft 😬", FINANCE),
    ("her credit score tanked after the missed payments", FINANCE),
    ("Need to do my tax return before January.", FINANCE),
    ("the invoice from the plumber is still unpaid", FINANCE),
    ("we're two months behind on rent", FINANCE),
    ("I got a pay rise!!", FINANCE),
    ("how much is in our savings account?", FINANCE),
    ("Dad lost a lot on his investments this year", FINANCE),
    ("tom still owes me £40 for the concert tickets", FINANCE),
    ("im so broke until payday lol", FINANCE),
    ("They're drowning in credit card debt.", FINANCE),
    ("what's the sort code for the joint account?", FINANCE),
    ("She earns about 45k a year.", FINANCE),
    ("we can't afford a holiday this year", FINANCE),
    ("Aunt May left us some inheritance.", FINANCE),
    ("my pension contributions went up", FINANCE),
    ("he's been gambling away his wages", FINANCE),
    ("the bank froze our account after the fraud alert", FINANCE),
    ("our council tax bill went up again", FINANCE),
    ("Can I borrow £50 till Friday?", FINANCE),
    ("They remortgaged the house to pay for the extension", FINANCE),
    ("my student loan repayments start in April", FINANCE),
    ("Jess asked for a raise and got it", FINANCE),
    ("bought some shares in Tesla last week", FINANCE),
    ("The energy bills are killing us this winter", FINANCE),
    ("i need to send 3 invoices before friday", FINANCE),
    ("we're saving up for a house deposit", FINANCE),
    ("Mum's worried about money since dad's hours were cut", FINANCE),
    ("He declared bankruptcy in 2019.", FINANCE),
    ("my card got declined at the supermarket, so embarrassing", FINANCE),
    ("Rent arrears letter came today", FINANCE),
    ("How much does Priya earn?", FINANCE),
    ("we put 10% into index funds every month", FINANCE),
    ("The accountant says we owe the taxman 3 grand", FINANCE),
    ("she lent him £200 and never saw it again", FINANCE),
    ("my bonus this year was tiny", FINANCE),
    ("Dad's thinking of moving his pension into crypto", FINANCE),
    ("im skint this month", FINANCE),
    ("the loan shark keeps calling", FINANCE),
    ("our mortgage is with Nationwide", FINANCE),
    ("She's claiming universal credit now.", FINANCE),
    ("Is the payslip supposed to show overtime?", FINANCE),
    ("We have about 8k in savings.", FINANCE),
    ("got my first paycheck!!! 💸", FINANCE),
    ("They're in debt to his parents", FINANCE),
    ("the bank statement shows two charges from Netflix", FINANCE),
    ("how do I improve my credit rating?", FINANCE),
    ("Money is tight until the end of the month.", FINANCE),
    ("our joint account is overdrawn again", FINANCE),
    ("Bob owes the bank twelve thousand pounds on his car loan", FINANCE),
    ("Alice's salary is forty two thousand a year", FINANCE),
    ("Olivia has fifteen thousand in her savings account", FINANCE),
    ("The household mortgage payment is due on the first of the month", FINANCE),
]

# Sentences whose words look sensitive but are not: each one is a trap for a naive matcher.
TRAPS: list[tuple[str, Sensitivity]] = [
    ("I pinned the tab about taxonomy", ORDINARY),
    ("the doctor who episode was great", ORDINARY),
    ("we ran out of patience", ORDINARY),
    ("we had a picnic on the river bank", ORDINARY),
    ("the spinning class was brutal this morning", ORDINARY),
    ("the kids want to go to the pinball arcade", ORDINARY),
    ("the keyboard keys are sticking again", ORDINARY),
    ("the cat is sick of the rain", ORDINARY),
    ("There was a pregnant pause after he asked.", ORDINARY),
    ("a bit of retail therapy at the weekend", ORDINARY),
    ("daylight savings ends this weekend", ORDINARY),
    ("the match was cancelled owing to the rain", ORDINARY),
    ("I owe you one for picking up the kids", ORDINARY),
    ("she works in hospitality", ORDINARY),
    ("what a stroke of luck!", ORDINARY),
    ("he's a real pain in the neck", ORDINARY),
    ("my sister is a doctor in Leeds", ORDINARY),
    ("she gave him a taste of his own medicine", ORDINARY),
    ("it's a bank holiday on monday", ORDINARY),
    ("you nearly gave me a heart attack!", ORDINARY),
    ("a syntax error broke the build", ORDINARY),
    ("the vase broke when the cat knocked it over", ORDINARY),
    ("we raised the kids to be polite", ORDINARY),
    ("I've invested so much time in this show", ORDINARY),
    ("the dress code is smart casual", ORDINARY),
    ("what's your postcode for the delivery?", ORDINARY),
    ("Don't forget your boarding pass.", ORDINARY),
    ("I always feel ill at ease around him", ORDINARY),
    ("that was a rash decision", ORDINARY),
    ("the kids were in stitches at the clown", ORDINARY),
    ("the benefits of yoga are huge", ORDINARY),
    ("there's a bonus episode out tonight", ORDINARY),
    ("the book is on loan from the library", ORDINARY),
    ("It's been a very taxing week at work", ORDINARY),
    ("can you pin the poster to the board?", ORDINARY),
    ("the combination of garlic and lemon is great", ORDINARY),
    ("break a leg tonight!", ORDINARY),
    ("we're doing the Great Depression in history", ORDINARY),
    ("the tea got cold while I was on the phone", ORDINARY),
    ("I'm addicted to this podcast", ORDINARY),
    ("the key to a good risotto is patience", ORDINARY),
    ("She gave me a token of her thanks", ORDINARY),
    ("my tablet died halfway through the film", ORDINARY),
    ("my car keys are on the hook by the door", ORDINARY),
    ("Doctor Who is back on telly tonight!", ORDINARY),
]

PLAIN_ORDINARY: list[tuple[str, Sensitivity]] = [
    ("Can you grab milk on the way home?", ORDINARY),
    ("Emma's football match is at 10 on Saturday", ORDINARY),
    ("we should repaint the hallway green", ORDINARY),
    ("dinner at grandma's on sunday?", ORDINARY),
    ("the bins go out on tuesday night", ORDINARY),
    ("Leo lost his first tooth today! 🦷", ORDINARY),
    ("who ate the last biscuit", ORDINARY),
    ("I love the new curtains in the lounge", ORDINARY),
    ("the boiler man is coming at 8", ORDINARY),
    ("remind me to water the tomatoes", ORDINARY),
    ("Is the school trip still on for Friday?", ORDINARY),
    ("She passed her driving test!!", ORDINARY),
    ("we're out of bin bags and dish soap", ORDINARY),
    ("the dog needs a walk", ORDINARY),
    ("The new neighbours seem nice.", ORDINARY),
    ("lol the cat fell off the sofa again", ORDINARY),
    ("book the campsite for half term", ORDINARY),
    ("Bob's favourite tea is lapsang souchong", ORDINARY),
    ("Alice collects vintage postcards of lighthouses", ORDINARY),
    ("Olivia is learning to play the cello", ORDINARY),
    ("The family dog is called Biscuit", ORDINARY),
]

CORPUS: list[tuple[str, Sensitivity]] = (
    CREDENTIALS_CORPUS + HEALTH_CORPUS + FINANCE_CORPUS + TRAPS + PLAIN_ORDINARY
)


def _case_id(index: int, text: str, expected: Sensitivity) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:48]
    return f"{expected.value}-{index:03d}-{slug}"


CASE_IDS = [_case_id(i, text, label) for i, (text, label) in enumerate(CORPUS)]


@pytest.mark.parametrize(("text", "expected"), CORPUS, ids=CASE_IDS)
def test_each_labelled_sentence_gets_its_label(text: str, expected: Sensitivity) -> None:
    assert classify(text) == expected


def test_the_corpus_has_at_least_forty_sentences_per_class_and_a_dozen_traps() -> None:
    counts = Counter(label for _, label in CORPUS)
    assert len(CORPUS) >= 160
    assert all(counts[label] >= 40 for label in Sensitivity), counts
    assert len(TRAPS) >= 12
    assert len({text for text, _ in CORPUS}) == len(CORPUS), "duplicate sentences"


def test_the_classifier_gives_the_same_answer_every_time() -> None:
    first = [classify(text) for text, _ in CORPUS]
    for _ in range(3):
        assert [classify(text) for text, _ in reversed(CORPUS)] == first[::-1]


def test_classifying_a_sentence_takes_well_under_a_millisecond() -> None:
    texts = [text for text, _ in CORPUS] * 5
    started = time.perf_counter()
    for text in texts:
        classify(text)
    per_sentence = (time.perf_counter() - started) / len(texts)
    assert per_sentence < 0.0005, f"{per_sentence * 1e6:.0f} µs per sentence"


def test_pinned_the_tab_about_taxonomy_is_ordinary() -> None:
    assert classify("I pinned the tab about taxonomy") == ORDINARY


def test_her_pin_is_0042_is_credentials() -> None:
    assert classify("her PIN is 0042") == CREDENTIALS


def test_the_wifi_password_is_hunter2_is_credentials() -> None:
    assert classify("the wifi password is hunter2") == CREDENTIALS


def test_a_lower_case_pin_with_digits_is_still_credentials() -> None:
    assert classify("her pin is 0042") == CREDENTIALS


def test_pinning_spinning_and_pinball_are_ordinary() -> None:
    for text in ("pin the note to the fridge", "spinning class at 7", "pinball with the kids"):
        assert classify(text) == ORDINARY, text


def test_the_doctor_who_episode_is_ordinary_but_the_doctor_who_treated_her_is_health() -> None:
    assert classify("the doctor who episode was great") == ORDINARY
    assert classify("the doctor who treated her was kind") == HEALTH


def test_the_cat_is_sick_of_the_rain_is_ordinary_but_the_baby_is_sick_is_health() -> None:
    assert classify("the cat is sick of the rain") == ORDINARY
    assert classify("the baby was sick twice in the night") == HEALTH


def test_being_broke_is_finance_but_breaking_a_wrist_is_health_and_a_vase_ordinary() -> None:
    assert classify("we're totally broke this month") == FINANCE
    assert classify("he broke his wrist playing rugby") == HEALTH
    assert classify("the kids broke the vase") == ORDINARY


def test_owing_money_is_finance_but_owing_to_and_owing_a_favour_are_ordinary() -> None:
    assert classify("she owes me 200 quid") == FINANCE
    assert classify("delayed owing to the snow") == ORDINARY
    assert classify("I owe you one") == ORDINARY


def test_taxes_are_finance_but_taxonomy_syntax_and_taxis_are_ordinary() -> None:
    assert classify("our taxes are due in January") == FINANCE
    for text in ("the taxonomy of beetles", "a syntax error", "we got a taxi home"):
        assert classify(text) == ORDINARY, text


def test_a_job_is_not_a_diagnosis() -> None:
    assert classify("my brother is a nurse") == ORDINARY
    assert classify("the nurse rang about her results") == HEALTH


def test_credentials_beat_health_and_finance() -> None:
    assert classify("the password for the pharmacy app is in my notes") == CREDENTIALS
    assert classify("my online banking PIN is 1234") == CREDENTIALS


def test_health_beats_finance() -> None:
    assert classify("we can't afford her insulin this month") == HEALTH


def test_finance_beats_ordinary() -> None:
    assert classify("lovely weather, shame about the mortgage") == FINANCE


def test_curly_apostrophes_read_like_straight_ones() -> None:
    assert classify("I\u2019m so broke") == FINANCE
    assert classify("she\u2019s a doctor") == ORDINARY


def test_empty_and_whitespace_text_is_ordinary() -> None:
    assert classify("") == ORDINARY
    assert classify("   \n ") == ORDINARY


def test_a_masked_secret_token_makes_the_line_credentials() -> None:
    assert classify("use [masked card_number] for the booking") == CREDENTIALS
