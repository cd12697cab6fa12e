"""The memory-quality probe set: what one household member tells her, and what she is asked.

A `Present` probe is a fact the member says in their DM, two or three turns of unrelated chat,
a question whose answer is the fact, and the keyword a right answer must contain. An `Absent`
probe is a question about something never told, with the keywords an invented answer would
betray itself by. Probes are written as a member would say them, not to suit the ranking: some
questions share a word with their fact, some are paraphrases (boss/manager, film/movie), and
many absent questions are near misses of a present fact (the dentist beside the doctor, the
dad's birthday beside the mum's).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Present:
    fact: str
    distractors: tuple[str, ...]
    question: str
    answer: str


@dataclass(frozen=True)
class Absent:
    question: str
    betrays: tuple[str, ...]


MEMBER = "Bob"

PRESENT: tuple[Present, ...] = (
    Present("My sister Jane lives in Leeds.",
            ("It's been raining all day here.", "I made soup for lunch."),
            "Where does my sister live?", "Leeds"),
    Present("I'm allergic to peanuts.",
            ("The bus was packed this morning.", "I watched a documentary about octopuses.",
             "Octopuses are so clever."),
            "What food do I need to avoid?", "peanuts"),
    Present("My car is a green Volvo estate.",
            ("I've been sleeping better this week.", "The clocks go back soon."),
            "What kind of car do I drive?", "Volvo"),
    Present("My doctor is Dr Patel at the Elm Street surgery.",
            ("I tried a new recipe for flapjacks.", "They came out a bit burnt.",
             "Still tasty though."),
            "Who is my GP?", "Patel"),
    Present("Our dog is called Biscuit.",
            ("The sunset was beautiful tonight.", "I should get out more at weekends."),
            "What's the dog's name?", "Biscuit"),
    Present("My birthday is on the 14th of March.",
            ("There's a new bakery on the corner.", "Their croissants are excellent.",
             "A bit pricey."),
            "When is my birthday?", "March"),
    Present("I work as a nurse at St James's hospital.",
            ("I'm trying to drink more water.", "Did you know honey never goes off?"),
            "What do I do for a living?", "nurse"),
    Present("My favourite band is Radiohead.",
            ("The washing machine is making a funny noise.", "I might call someone about it.",
             "Or just ignore it."),
            "Which band do I like best?", "Radiohead"),
    Present("I'm training for the Manchester half marathon in May.",
            ("I saw a fox in the garden last night.", "It looked very bold."),
            "What race am I training for?", "Manchester"),
    Present("My best friend is called Marcus.",
            ("The heating came on by itself.", "I think the timer is wrong.",
             "Winter is coming early this year."),
            "Who is my best friend?", "Marcus"),
    Present("I take my coffee with oat milk and no sugar.",
            ("I found an old photo album in a drawer.", "Everyone looked so young."),
            "How do I like my coffee?", "oat"),
    Present("My mum's birthday is on the 2nd of June.",
            ("The internet was slow all evening.", "I gave up and read instead.",
             "It was nice, actually."),
            "When is my mum's birthday?", "June"),
    Present("I'm learning Spanish on Duolingo.",
            ("The shop had run out of bread.", "I bought crumpets instead."),
            "Which language am I learning?", "Spanish"),
    Present("The spare key is under the blue flowerpot.",
            ("I love the smell of cut grass.", "Spring can't come soon enough.",
             "The daffodils are already up."),
            "Where's the spare key?", "flowerpot"),
    Present("My son Leo starts school in September.",
            ("There was a queue at the post office.", "I read half a magazine waiting."),
            "When does Leo start school?", "September"),
    Present("I'm reading The Night Circus at the moment.",
            ("The kettle takes ages to boil.", "Maybe it needs descaling.",
             "Everything needs descaling round here."),
            "What book am I reading?", "Night Circus"),
    Present("My favourite food is lamb tagine.",
            ("I stubbed my toe on the stairs.", "It's fine now, just bruised."),
            "What's my favourite dish?", "tagine"),
    Present("I play five-a-side football on Thursday evenings.",
            ("It's windy enough to knock you over out there.", "The bins blew over.",
             "I picked up the rubbish."),
            "What sport do I play?", "football"),
    Present("My boss is called Karen.",
            ("I tidied the cupboard under the stairs.", "So much stuff in there."),
            "What's my manager's name?", "Karen"),
    Present("I grew up in Cardiff.",
            ("The radio was playing old songs all morning.", "I sang along badly.",
             "Nobody heard, luckily."),
            "Where did I grow up?", "Cardiff"),
    Present("My bike was stolen from outside the station last week.",
            ("The moon is really bright tonight.", "I could see it from the kitchen."),
            "What happened to my bicycle?", "stolen"),
    Present("I'm saving up for a trip to Japan next spring.",
            ("The printer jammed again.", "I hate that printer.", "It hates me back."),
            "Where am I planning to travel?", "Japan"),
    Present("I'm afraid of spiders.",
            ("I tried yoga this morning.", "I'm not very bendy."),
            "What am I scared of?", "spiders"),
    Present("My grandad was a coal miner in Wales.",
            ("The traffic lights on the high street are broken.", "It was chaos.",
             "Somebody directed traffic with an umbrella."),
            "What did my grandfather do?", "miner"),
    Present("My partner Sam is a carpenter.",
            ("I burned the toast.", "The smoke alarm went off."),
            "What does Sam do for work?", "carpenter"),
    Present("I have a piano lesson every Tuesday at five.",
            ("The neighbours are having a party.", "The music is quite loud.",
             "At least it's good music."),
            "When is my piano lesson?", "Tuesday"),
    Present("My favourite film is Spirited Away.",
            ("I can't decide what to have for tea.", "Maybe pasta."),
            "What's my favourite movie?", "Spirited Away"),
    Present("I need to renew my passport before August.",
            ("The garden needs weeding.", "I'll do it at the weekend.",
             "Probably."),
            "When does my passport need renewing?", "August"),
    Present("My neighbour Mrs Okafor waters our plants when we're away.",
            ("I cleaned the windows today.", "Then it rained, of course."),
            "Who looks after our plants when we travel?", "Okafor"),
    Present("I support Arsenal.",
            ("The milk has gone off.", "I'll pop to the shop later.",
             "Do we need anything else?"),
            "Which football team do I support?", "Arsenal"),
    Present("I'm lactose intolerant.",
            ("My phone screen cracked.", "It still works, mostly."),
            "Do I have any problem with dairy?", "lactose"),
    Present("My daughter Mia sings in the school choir.",
            ("There's a funny-shaped cloud outside.", "It looks like a teapot.",
             "Or a whale."),
            "What does Mia do at school?", "choir"),
)

ABSENT: tuple[Absent, ...] = (
    Absent("What's my dentist's name?", ("dentist",)),
    Absent("Where does my brother live?", ("brother",)),
    Absent("What's the cat called?", ("cat",)),
    Absent("When is my dad's birthday?", ("dad", "father", "birthday")),
    Absent("What's my blood type?", ("blood",)),
    Absent("Which university did I go to?", ("university", "degree")),
    Absent("What's my favourite colour?", ("colour", "color")),
    Absent("What is my sister's husband called?", ("husband", "brother-in-law")),
    Absent("What car does my sister drive?", ("car", "drive")),
    Absent("What's my mother's maiden name?", ("maiden",)),
    Absent("Which gym am I a member of?", ("gym",)),
    Absent("What did I have for breakfast today?", ("breakfast",)),
    Absent("What's my landlord's phone number?", ("landlord", "phone")),
    Absent("How old is my daughter?", ("daughter", "old", "age")),
    Absent("What time does my train leave on Monday?", ("train",)),
    Absent("What's the name of my physiotherapist?", ("physio", "physiotherapist")),
    Absent("Which hotel are we staying at in Japan?", ("hotel",)),
    Absent("What's my shoe size?", ("shoe",)),
    Absent("Who is my son's teacher?", ("teacher",)),
    Absent("What medication am I on?", ("medication", "medicine", "tablet", "pill")),
    Absent("What's my cousin's name?", ("cousin",)),
    Absent("Where did I go on holiday last summer?", ("holiday",)),
    Absent("What's my mortgage rate?", ("mortgage",)),
    Absent("What's my favourite TV show?", ("tv", "television", "series")),
    Absent("Which football team does my dad support?", ("dad", "father", "support")),
    Absent("When is my next hairdresser appointment?", ("hairdresser", "haircut")),
    Absent("What's the name of our plumber?", ("plumber",)),
    Absent("What did the vet say about the dog?", ("vet",)),
    Absent("What's my work email address?", ("email",)),
    Absent("What allergy does my son have?", ("allergy", "allergic")),
    Absent("Where do my in-laws live?", ("in-law",)),
    Absent("What's my favourite board game?", ("game",)),
)
