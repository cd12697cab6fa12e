"""Who a question asks after: a fact about someone else of the same kind, or about another member
by name or by their own "I", is never told as the answer."""

from __future__ import annotations

import pytest

from memory.roles import (
    Roster,
    answers_which,
    answers_who,
    answers_whose,
    answers_whose_thing,
    praised,
    rejoiced,
)

ROSTER = Roster({"p-maya": "Maya", "p-tom": "Tom", "p-ellie": "Ellie", "p-me": "Me"})


@pytest.mark.parametrize(("question", "candidate"), [
    ("When is my dad's birthday?", "My mum's birthday is on 21 March."),
    ("What's my dentist called?", "My doctor is Dr Patel."),
    ("Wo wohnt meine Schwester?", "Mein Bruder wohnt in Köln."),
])
def test_a_fact_about_another_of_the_same_kind_does_not_answer(question: str,
                                                               candidate: str) -> None:
    assert not answers_who(question, candidate)


@pytest.mark.parametrize(("question", "candidate"), [
    ("When is my mother's birthday?", "My mum Ruth's birthday is on 21 March."),
    ("Who is my GP?", "My doctor is Dr Patel at the Elm Street surgery."),
    ("How old are my kids?", "My son is seven and my daughter is nine."),
])
def test_the_same_person_by_another_word_answers(question: str, candidate: str) -> None:
    assert answers_who(question, candidate)


def test_a_line_in_the_first_person_is_about_its_speaker_not_the_member_asked_after() -> None:
    question = "When does Tom's passport expire?"
    assert not answers_whose(question, "p-maya", "Renewed my passport online.", "p-maya",
                             roster=ROSTER)
    assert answers_whose(question, "p-maya", "Renewed my passport online.", "p-tom",
                         roster=ROSTER)  # control: Tom said it
    assert answers_whose(question, "p-maya", "Tom's passport runs out in May.", "p-maya",
                         roster=ROSTER)  # control: it names him


@pytest.mark.parametrize("candidate", [
    "Thanks, Tom! This necklace is super special to me, a gift from my grandma.",
    "Tom, I finally took the kids to the museum yesterday.",
    "Hey Tom! I went to the support group last night.",
    "I ran the charity race on Saturday, Tom.",
    "Woah Tom, I won an international tournament yesterday!",
])
def test_a_line_that_only_addresses_a_member_by_name_is_about_its_speaker(candidate: str) -> None:
    question = "What did Tom do last weekend?"
    assert not answers_whose(question, "p-ellie", candidate, "p-maya", roster=ROSTER)
    assert answers_whose(question, "p-ellie", candidate, "p-tom", roster=ROSTER)  # his own


@pytest.mark.parametrize("candidate", [
    "Congrats on your new job, Tom!",
    "Tom, you were brilliant at the race on Saturday.",
    "I told Tom about the museum and he loved it.",
    "Tom's knee is better, Maya.",
])
def test_a_line_that_speaks_to_or_of_a_member_is_about_them(candidate: str) -> None:
    assert answers_whose("What did Tom do last weekend?", "p-ellie", candidate, "p-maya",
                         roster=ROSTER)


@pytest.mark.parametrize("candidate", [
    "That's a great guitar, Tom! Love the design, it's so unique.",
    "Wow, Tom! Congrats on the promotion! What's the story behind that trophy?",
    "Well done Tom! Three goals in the netball final!",
    "Super, Tom, das Konzert war klasse!",
    "Happy Thanksgiving, Tom! That turkey looks amazing!",  # no one thanked
])
def test_praise_of_a_member_called_by_name_is_not_told_as_the_speaker_s_own(
        candidate: str) -> None:
    question = "What did Maya do last weekend?"
    assert not answers_whose(question, "p-ellie", candidate, "p-maya", roster=ROSTER,
                             called_out=True)
    assert answers_whose(question.replace("Maya", "Tom"), "p-ellie", candidate, "p-maya",
                         roster=ROSTER, called_out=True)  # control: the one praised
    # The ranking keeps it: calling someone by name does not always make a line theirs.
    assert answers_whose(question, "p-ellie", candidate, "p-maya", roster=ROSTER)


@pytest.mark.parametrize("candidate", [
    "Thanks, Tom! The personal touch really sets it apart.",  # thanked: praised for her own
    "Tom, bins go out on Tuesday nights.",  # tells him, praises nothing
    "Yeah, Tom! Every mark on it holds a story.",
    "Great news, Tom! I got the job.",  # her own news
    "Hey Tom! The shop's doing great! It's a wild ride.",  # her shop: the praise calls no one
])
def test_a_line_calling_a_member_without_praising_them_alone_stays_anyone_s(
        candidate: str) -> None:
    assert answers_whose("What did Maya do last weekend?", "p-ellie", candidate, "p-maya",
                         roster=ROSTER, called_out=True)


def test_a_line_thanking_a_member_by_name_is_not_told_as_theirs() -> None:
    line = "Thanks, Tom! The tour has been great, the crowd was awesome."  # Maya's tour
    assert not answers_whose("How was Tom's tour?", "p-ellie", line, "p-maya", roster=ROSTER,
                             called_out=True)
    assert answers_whose("How was Maya's tour?", "p-ellie", line, "p-maya", roster=ROSTER,
                         called_out=True)  # control: the speaker's own
    assert answers_whose("How was Tom's tour?", "p-ellie", line, "p-maya", roster=ROSTER)


@pytest.mark.parametrize("line", [
    "That's great, Tom! Joining a choir can be really uplifting. I'm thrilled for you.",
    "The charity race sounds great! I'm really proud of you for taking part!",
    "Ich bin so stolz auf dich! Der Chor ist klasse.",
    "Estoy muy orgullosa de ti. ¡Qué buena noticia!",
    "Je suis si fier de toi ! La chorale, quelle idée géniale.",
])
def test_the_i_of_joy_for_a_member_s_news_does_not_make_it_the_speaker_s_own(line: str) -> None:
    # Maya's line, just after a line of Tom's.
    for question, whose in (("Why did Maya join a choir?", False),
                            ("Why did Tom join a choir?", True)):
        assert answers_whose(question, "p-ellie", line, "p-maya", roster=ROSTER,
                             addressee="p-tom", called_out=True) is whose
    # Her own news beside her joy for his stays hers.
    assert answers_whose("Why did Maya join a choir?", "p-ellie",
                         "I'm so happy for you! I joined a choir myself last week.", "p-maya",
                         roster=ROSTER, addressee="p-tom", called_out=True)


def test_happy_for_someone_to_do_something_is_no_joy_at_their_news() -> None:
    assert praised("I'm so happy for you!") == "called"
    assert rejoiced("I'm so happy for you!") == "so happy for you!"
    # Leave to do something is the speaker's word, said as "I".
    assert rejoiced("I'm happy for you to take the car.") == "I'm happy for you to take the car."
    assert praised("Happy for you to take the car on Saturday.") is None


@pytest.mark.parametrize("line", [
    "Hey Tom! Wanted to let you know that I'm running the marathon again.",
    "Tom, I came back from Leeds with loads of ideas I want to share with you.",
    "Tom, ich wollte dir sagen, dass ich wieder den Marathon laufe.",
])
def test_news_told_to_a_member_as_i_is_the_speaker_s_not_theirs(line: str) -> None:
    # Maya's line: Tom is only told it.
    for read in (False, True):
        assert not answers_whose("Why is Tom running the marathon again?", "p-ellie", line,
                                 "p-maya", roster=ROSTER, called_out=read)
        assert answers_whose("Why is Maya running the marathon again?", "p-ellie", line,
                             "p-maya", roster=ROSTER, called_out=read)


@pytest.mark.parametrize("line", [
    "Tom, did you run the marathon again? I'm going to watch next time.",
    "Tom, I heard your marathon went well!",
    "Glad you're running the marathon again, Tom. I'll cheer.",
    "Tom, I have to ask: how is the marathon going for you?",
    "Tom, I'm thrilled for you! The marathon again!",
])
def test_a_line_asking_after_or_speaking_of_a_member_s_own_as_i_may_be_theirs(line: str) -> None:
    for read in (False, True):
        assert answers_whose("Why is Tom running the marathon again?", "p-ellie", line,
                             "p-maya", roster=ROSTER, called_out=read)


def test_a_reaction_praising_what_a_member_said_is_theirs_and_thanks_for_it_the_speakers(
) -> None:
    # Maya's lines, each just after a line of Tom's, calling no one by name.
    reaction = "Wow, that's awesome! It must be so rewarding to see them reach their goals."
    thanks = "Thanks! The trip was amazing, and the food was even better."
    for line, whose in ((reaction, "Tom"), (thanks, "Maya")):
        other = "Maya" if whose == "Tom" else "Tom"
        assert not answers_whose(f"What did {other} find rewarding about the trip?", "p-ellie",
                                 line, "p-maya", roster=ROSTER, addressee="p-tom",
                                 called_out=True)
        assert answers_whose(f"What did {whose} find rewarding about the trip?", "p-ellie",
                             line, "p-maya", roster=ROSTER, addressee="p-tom", called_out=True)
    # Praise of one's own thing is not a reaction: "It was a great day" stays anyone's, and
    # so does "Yeah, it was great", whose "Yeah" calls no one.
    assert answers_whose("What did Tom enjoy?", "p-ellie", "Here it is. It was a great day.",
                         "p-tom", roster=ROSTER, addressee="p-maya", called_out=True)
    assert answers_whose("When did Tom go skiing?", "p-ellie",
                         "Yeah, it was great for skiing! Can't wait to go back next year!",
                         "p-tom", roster=ROSTER, addressee="p-maya", called_out=True)


def test_praise_in_the_sentence_that_answers_is_read_before_the_rest_of_the_line() -> None:
    line = ("Tom, those bowls are amazing! I love that you chose pottery. Painting has helped "
            "me say how I feel.")  # Maya's
    question = "What is {}'s bowl a reminder of?"
    assert not answers_whose(question.format("Maya"), "p-ellie", line, "p-maya",
                             roster=ROSTER, called_out=True)
    assert answers_whose(question.format("Tom"), "p-ellie", line, "p-maya", roster=ROSTER,
                         called_out=True)
    # control: asked after her painting, the sentence that answers is her own
    assert answers_whose("What has Maya's painting helped with?", "p-ellie", line, "p-maya",
                         roster=ROSTER, called_out=True)


def test_a_greeting_with_an_exclamation_only_addresses_the_member_it_names() -> None:
    line = "Woohoo Tom! I passed the adoption agency interviews last Friday!"
    question = "Why did Tom choose the adoption agency?"
    assert not answers_whose(question, "p-ellie", line, "p-maya", roster=ROSTER)
    assert answers_whose(question, "p-ellie", line, "p-tom", roster=ROSTER)  # his own


def test_whom_a_line_is_about_is_read_in_the_sentences_that_answer() -> None:
    # The greeting's "you" speaks to Tom; the sentence about the blog is Maya's own.
    line = "Hey Tom, hope you're doing okay. I've been blogging about politics since spring."
    question = "Why did Tom start blogging about politics?"
    assert not answers_whose(question, "p-ellie", line, "p-maya", roster=ROSTER)
    assert answers_whose(question, "p-ellie", line, "p-tom", roster=ROSTER)  # his own
    # control: the answering sentence speaks to him of his own
    praise = "I had a lovely day. Congrats on starting your politics blog, Tom!"
    assert answers_whose(question, "p-ellie", praise, "p-maya", roster=ROSTER)
    # A sentence that says "you" speaks of whom the line calls by name; one that only asks
    # may be the speaker's own.
    asking = "Congrats, Tom! What made you decide to run again? As for me, I'm resting."
    assert not answers_whose("Why did Maya decide to run again?", "p-ellie", asking, "p-maya",
                             roster=ROSTER)
    assert answers_whose("Why did Tom decide to run again?", "p-ellie", asking, "p-maya",
                         roster=ROSTER)
    tagged = "Thanks Tom - love the vase! Sunflowers mean warmth and happiness, right?"
    assert answers_whose("What do sunflowers mean to Maya?", "p-ellie", tagged, "p-maya",
                         roster=ROSTER)
    # control: a sentence of someone else ("she") leaves the speaker's "I" elsewhere aside
    assert answers_whose("How many goals did Ellie score?", "p-maya",
                         "I took Ellie to netball. She scored three goals!", "p-tom",
                         roster=ROSTER)


def test_a_question_in_the_first_person_is_about_its_asker() -> None:
    candidate = "My French oral exam is on 28 April."
    assert answers_whose("When is my French oral exam?", "p-ellie", candidate, "p-ellie",
                         roster=ROSTER)
    assert not answers_whose("When is my French oral exam?", "p-tom", candidate, "p-ellie",
                             roster=ROSTER)
    assert answers_whose("When is Ellie's French oral exam?", "p-tom", candidate, "p-ellie",
                         roster=ROSTER)


def test_a_belief_about_a_member_is_about_them_whatever_its_words() -> None:
    question = "What does Ellie want to study?"
    assert answers_whose(question, "p-maya", "She wants to study marine biology.", None,
                         roster=ROSTER, subject="p-ellie")
    assert not answers_whose(question, "p-maya", "She wants to study marine biology.", None,
                             roster=ROSTER, subject="p-tom")


def test_who_is_whose_by_role_is_not_guessed() -> None:
    # "my husband" may be Tom: the household's relations are not known, so nothing is refused.
    assert answers_whose("What present is my husband hoping for?", "p-maya",
                         "Tom keeps hinting about a new road bike.", "p-maya", roster=ROSTER)


def test_a_role_of_a_member_asked_after_by_name_is_not_another_members() -> None:
    question = "How often does Tom take his kids to the beach?"
    line = "We take my kids to the beach once a year, always special."
    assert not answers_whose(question, "p-ellie", line, "p-maya", roster=ROSTER)
    assert answers_whose(question, "p-ellie", line, "p-tom", roster=ROSTER)  # his own
    # control: by role alone, who is whose is not guessed
    assert answers_whose("How often do my kids go to the beach?", "p-tom", line, "p-maya",
                         roster=ROSTER)


def test_text_naming_no_one_may_be_about_anyone() -> None:
    assert answers_whose("When is Tom's dentist appointment?", "p-maya",
                         "The dentist appointment moved to Friday.", "p-maya", roster=ROSTER)


def test_a_name_that_is_a_common_word_names_no_one() -> None:
    # The terminal's default member is called "Me": "tell me" must not make a line about them.
    assert answers_whose("When is Tom's passport due?", "p-maya",
                         "Remind me: Tom's passport is due in May.", "p-maya", roster=ROSTER)
    assert answers_whose("Can you tell me when the bins go out?", "p-maya",
                         "Bins go out on Tuesday.", "p-tom", roster=ROSTER)


@pytest.mark.parametrize(("question", "candidate"), [
    ("When is my dad's birthday?", "My birthday is on the 14th of March."),
    ("When is my birthday?", "My mum's birthday is on 14 March."),
    ("When is Tom's mum's birthday?", "Tom's birthday is on 2 October."),
])
def test_a_thing_of_someone_else_does_not_answer_for_the_one_asked_after(
    question: str, candidate: str,
) -> None:
    assert not answers_whose_thing(question, "p-maya", candidate, "p-maya", ROSTER)


def test_her_thing_in_a_question_naming_one_member_is_that_member_s() -> None:
    question = "What did Tom and his family do while camping?"
    line = "Here's a pic of my family camping at the lake."
    assert not answers_whose_thing(question, "p-ellie", line, "p-maya", ROSTER)
    assert answers_whose_thing(question, "p-ellie", line, "p-tom", ROSTER)  # his own family
    # "her" with nothing of hers after it owns nothing
    assert answers_whose_thing("When did Ellie tell her the date?", "p-tom",
                               "I told my sister the date on Monday.", "p-maya", ROSTER)


def test_your_thing_in_a_line_is_not_its_speaker_s() -> None:
    question = "How did Tom's son handle the accident?"
    line = "Sorry about the accident! Thank goodness your son's okay."
    assert not answers_whose_thing(question, "p-ellie", line, "p-tom", ROSTER)
    assert answers_whose_thing(question, "p-ellie", line, "p-maya", ROSTER)  # Maya to Tom
    # The asker's own "your passport" or "her passport" is someone else's passport.
    for said in ("Your passport expires in May.", "Her passport expires in May."):
        assert not answers_whose_thing("When does my passport expire?", "p-maya", said,
                                       "p-maya", ROSTER)
        assert answers_whose_thing("When does my passport expire?", "p-maya", said,
                                   "p-tom", ROSTER)  # Tom telling Maya of hers


def test_your_thing_in_a_line_answering_a_member_is_that_member_s() -> None:
    line = "Your passport runs out in May."  # Tom, just after Maya spoke
    assert answers_whose_thing("When does my passport expire?", "p-maya", line, "p-tom",
                               ROSTER, addressee="p-maya")
    assert not answers_whose_thing("When does my passport expire?", "p-ellie", line, "p-tom",
                                   ROSTER, addressee="p-maya")
    assert answers_whose_thing("When does Maya's passport expire?", "p-ellie", line, "p-tom",
                               ROSTER, addressee="p-maya")
    assert not answers_whose_thing("When does Ellie's passport expire?", "p-maya", line,
                                   "p-tom", ROSTER, addressee="p-maya")
    # control: answering no one, it may be anyone's but Tom's own
    assert answers_whose_thing("When does my passport expire?", "p-ellie", line, "p-tom",
                               ROSTER)


def test_a_line_saying_your_or_asking_you_is_about_the_member_it_answers() -> None:
    for line in ("Wow, your new hair colour looks amazing!",
                 "That colour is gorgeous. Why did you choose it?"):
        assert not answers_whose("Why did Tom choose that hair colour?", "p-ellie", line,
                                 "p-tom", roster=ROSTER, addressee="p-maya")
        assert answers_whose("Why did Maya choose that hair colour?", "p-ellie", line,
                             "p-tom", roster=ROSTER, addressee="p-maya")


def test_a_reaction_whose_answering_sentence_names_no_one_is_about_the_member_it_answers(
) -> None:
    # The sentence sharing the question's words says nothing of anyone; the rest of the line
    # speaks to Maya ("You're killing it!", a question asking her).
    line = ("Wow, congrats on those deals with Nike and Gatorade! You're killing it! "
            "Any other brands you're dreaming of?")
    question = "What kind of deals did {} sign with Nike and Gatorade?"
    assert not answers_whose(question.format("Tom"), "p-ellie", line, "p-tom", roster=ROSTER,
                             addressee="p-maya")
    assert answers_whose(question.format("Maya"), "p-ellie", line, "p-tom", roster=ROSTER,
                         addressee="p-maya")
    # control: answering no one, the line is about no one in particular
    assert answers_whose(question.format("Tom"), "p-ellie", line, "p-tom", roster=ROSTER)


def test_a_line_speaking_as_we_is_not_only_about_the_member_it_answers() -> None:
    line = ("We were teammates for four years in high school, so we've played together for "
            "quite some time. Have you ever been part of a sports team?")  # Tom, to Maya
    assert answers_whose("How long did Tom and his teammates play together?", "p-ellie", line,
                         "p-tom", roster=ROSTER, addressee="p-maya")
    # control: without "we", the same question to Maya is about her
    assert not answers_whose("How long did Tom and his teammates play together?", "p-ellie",
                             "Four years in high school is quite some time. Have you ever "
                             "been part of a sports team?", "p-tom", roster=ROSTER,
                             addressee="p-maya")


def test_a_line_speaking_as_we_to_a_member_is_not_about_that_member() -> None:
    question = "What did {} do while camping?"
    for line, addressee in (("Thanks, Maya! We roasted marshmallows by the fire.", None),
                            ("We roasted marshmallows by the fire.", "p-maya"),
                            # "we" outside the sentence that answers
                            ("Thanks, Maya! Yup, we did it yesterday! The kids loved the "
                             "marshmallows while camping.", None)):
        assert not answers_whose(question.format("Maya"), "p-ellie", line, "p-tom",
                                 roster=ROSTER, addressee=addressee)
        # It is the speaker's side, and may take in anyone else of the household.
        assert answers_whose(question.format("Tom"), "p-ellie", line, "p-tom", roster=ROSTER,
                             addressee=addressee)
        assert answers_whose(question.format("Ellie"), "p-maya", line, "p-tom",
                             roster=ROSTER, addressee=addressee)
    # control: speaking to no one, "we" is the household's
    assert answers_whose(question.format("Maya"), "p-ellie",
                         "We roasted marshmallows by the fire.", "p-tom", roster=ROSTER)


def test_a_you_that_may_be_anyone_is_the_speakers_word() -> None:
    # Advice, a game's rules, a quote: "you" is anyone, and the line is Tom's suggestion.
    for line in ("You can use coconut oil instead of butter.",
                 "It's a card game where you take turns drawing cats.",
                 'The note says "Let go of what no longer serves you."'):
        assert answers_whose("What does Tom suggest?", "p-ellie", f"{line} Good luck!", "p-tom",
                             roster=ROSTER, addressee="p-maya")


def test_the_asker_s_own_mum_is_not_the_mum_of_the_member_asked_after() -> None:
    question, candidate = "When is Tom's mum's birthday?", "My mum Ruth's birthday is 21 March."
    assert not answers_whose_thing(question, "p-maya", candidate, "p-maya", ROSTER)
    assert answers_whose_thing(question, "p-maya", candidate, "p-tom", ROSTER)  # Tom said it


@pytest.mark.parametrize(("question", "candidate"), [
    ("When is my mum's birthday?", "My mum Ruth's birthday is on 21 March."),
    ("When is my birthday?", "My birthday is on the 14th of March."),
    ("When does my old passport run out?", "My passport expires on 9 August."),
    ("When is Tom's birthday?", "Tom's birthday is on 2 October."),
])
def test_the_same_ones_thing_answers(question: str, candidate: str) -> None:
    assert answers_whose_thing(question, "p-maya", candidate, "p-maya", ROSTER)


def test_what_an_asker_says_of_themself_does_not_answer_after_their_son() -> None:
    question = "What allergy does my son have?"
    assert not answers_whose("What allergy does my son have?", "p-maya",
                             "I'm allergic to peanuts.", "p-maya", roster=ROSTER)
    assert answers_whose(question, "p-maya", "He's allergic to peanuts.", "p-maya",
                         roster=ROSTER)  # control: "he" speaks of someone else
    assert answers_whose(question, "p-maya", "My son is allergic to peanuts.", "p-maya",
                         roster=ROSTER)  # control: it names the son


@pytest.mark.parametrize(("question", "candidate"), [
    ("When is Maya in Paris for work?", "I'll be in Berlin for work from 11 to 14 May."),
    ("When is my German oral exam?", "My GCSE French oral exam is on 28 April."),
    ("Was ist meine Lieblingsserie im TV?", "Mein Lieblingsfilm ist Spirited Away."),
])
def test_a_fact_naming_something_else_does_not_answer_for_the_thing_named(
    question: str, candidate: str,
) -> None:
    assert not answers_which(question, candidate, ROSTER)


@pytest.mark.parametrize(("question", "candidate"), [
    ("When is my French oral exam?", "My GCSE French oral exam is on 28 April."),
    ("Is my best friend moving to Manchester?", "Priya isn't moving to Manchester now."),
    ("When was Granny staying with us?", "Grandma Ruth is coming to stay on 3 April."),
    ("Who is my GP?", "My doctor is Dr Patel at the Elm Street surgery."),
    ("When is my Paris trip?", "The trip to the capital is on 3 May."),  # names nothing else
    ("When do I see Tom in March?", "We meet on Friday in March."),  # the calendar is no name
])
def test_the_thing_named_or_nothing_else_named_answers(question: str, candidate: str) -> None:
    assert answers_which(question, candidate, ROSTER)


def test_a_question_without_the_members_names_keeps_what_it_asks() -> None:
    roster = Roster({"p1": "Tom", "p2": "Mary Ann"})
    assert roster.without_names("When did Tom's knee start hurting?") == (
        "When did knee start hurting?")
    assert roster.without_names("Does Mary Ann like TOM?") == "Does like ?"
    assert roster.without_names("Is Ruth coming to Tomorrowland?") == (
        "Is Ruth coming to Tomorrowland?")  # not a member, and not a whole word
    assert roster.without_names("Tom?") == "Tom?"  # names alone: nothing else to ask


@pytest.mark.parametrize(("question", "asker", "candidate", "speaker"), [
    # "What car am I driving?" asks after the asker's car, as "my car?" would.
    ("What car am I driving now?", "p-tom", "Maya, your car's tyre warning came on again.",
     "p-tom"),
    ("Which band does Tom play in?", "p-ellie", "My band plays on Friday.", "p-maya"),
    # One outside the household by name is neither a member's "my" nor another member.
    ("When is Ruth's birthday?", "p-maya", "My birthday is on 3 May.", "p-maya"),
    ("When is Ruth's birthday?", "p-maya", "Tom's birthday is on 2 October.", "p-ellie"),
    ("When is Ruth's birthday?", "p-maya", "Anna's birthday is on 5 June.", "p-ellie"),
    ("Which allotment plot does Dan have?", "p-tom", "My allotment is plot 17.", "p-tom"),
])
def test_a_thing_asked_after_by_whose_it_is_is_not_answered_by_someone_else_s(
    question: str, asker: str, candidate: str, speaker: str,
) -> None:
    assert not answers_whose_thing(question, asker, candidate, speaker, ROSTER)


@pytest.mark.parametrize(("question", "asker", "candidate", "speaker"), [
    ("What kind of car do I drive?", "p-maya", "My car is a green Volvo.", "p-maya"),
    ("Which band does Tom play in?", "p-ellie", "My band plays on Friday.", "p-tom"),
    # "We" owns nothing in particular, and a thing of two named people may be either's.
    ("Which car do we take to Leeds?", "p-maya", "Your car is in the garage.", "p-tom"),
    ("What health scares did Tom and Ellie have?", "p-maya", "I had a health scare.", "p-ellie"),
    # Ruth may be the speaker's mum, and "the car's" is no one's name.
    ("When is Ruth's birthday?", "p-maya", "My mum's birthday is on 21 March.", "p-maya"),
    ("When is Ruth's birthday?", "p-maya", "Ruth's birthday is on 21 March.", "p-tom"),
    ("When is the car's MOT due?", "p-maya", "My MOT is due in May.", "p-maya"),
    ("When is Biscuit's jab due?", "p-maya", "The dog's jab is due in May.", "p-maya"),
    # "What's" is "what is", no one's name
    ("What's Mum's secret for the gravy?", "p-ellie", "My mum's secret is a spoon of miso.",
     "p-ellie"),
])
def test_the_thing_of_whom_the_question_asks_after_answers(
    question: str, asker: str, candidate: str, speaker: str,
) -> None:
    assert answers_whose_thing(question, asker, candidate, speaker, ROSTER)


@pytest.mark.parametrize(("question", "asker"), [
    ("What colour is my bedroom going to be painted?", "p-ellie"),
    ("What colour is Ellie's bedroom going to be painted?", "p-tom"),
    ("Which room is Ellie getting?", "p-tom"),  # what Ellie gets: hers
])
def test_another_members_line_giving_the_thing_no_owner_is_not_the_one_asked_afters(
    question: str, asker: str,
) -> None:
    line = "The spare room is getting painted sage green next weekend."
    assert not answers_whose_thing(question, asker, line, "p-maya", ROSTER)
    # Controls: Ellie's own line; a line saying whose, speaking to her, naming her, answering
    # her, or speaking as "we" (which may be hers too).
    assert answers_whose_thing(question, asker, line, "p-ellie", ROSTER)
    for said in ("Your room is getting painted sage green next weekend.",
                 "Ellie, the spare room is getting painted sage green next weekend.",
                 "Our spare room is getting painted sage green next weekend."):
        assert answers_whose_thing(question, asker, said, "p-maya", ROSTER), said
    assert answers_whose_thing(question, asker, line, "p-maya", ROSTER, addressee="p-ellie")


def test_a_question_after_the_askers_people_is_left_to_whom_a_line_is_about() -> None:
    # "My uncle" may be whom another member's line speaks of: not refused here.
    assert answers_whose_thing("What surgery is my uncle having?", "p-ellie",
                               "The hernia operation is on 19 May.", "p-maya", ROSTER)
    assert answers_whose_thing("When is my grandmother coming?", "p-ellie",
                               "Grandma Ruth is coming to stay in April.", "p-maya", ROSTER)


def test_a_line_about_the_one_whose_role_is_asked_after_does_not_answer_for_that_role() -> None:
    question = "What did mum's doctor tell her?"
    assert not answers_who(question, "Don't tell anyone yet, mum will make a big thing of it.")
    # Controls: the role by another of its words, someone by name, or not the owner at all.
    for line in ("Mum's GP says her blood pressure is a bit high.",
                 "Mum saw Dr Patel this morning.",
                 "The doctor told her to rest for a week."):
        assert answers_who(question, line), line
    # A question after the owner herself is answered by a line about her.
    assert answers_who("What will mum make a big thing of?",
                       "Don't tell anyone yet, mum will make a big thing of it.")
