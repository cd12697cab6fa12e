"""The sentence classifier against a hand-labelled corpus, its traps and its precedence."""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

import pytest

from memory import Activity
from memory.classifier import (
    CREDENTIAL_RULES,
    FINANCE_RULES,
    HEALTH_RULES,
    ORDINARY_IDIOMS,
    classify,
    fold,
)
from memory.models import Sensitivity
from tests.helpers import make_household

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
    ("the alarm code is 4471", CREDENTIALS),
    ("our Netflix login is anna@example.org / hunter2", CREDENTIALS),
    ("the burglar alarm code is the same as grandad's birthday", CREDENTIALS),
    ("Disney: anna@example.org / Mickey2024", CREDENTIALS),
    ("the code is 5521, don't tell the kids", CREDENTIALS),
    ("the PIN for the car radio is 7734", CREDENTIALS),
    ("the passcode to get into Mum's phone is 2020", CREDENTIALS),
    ("what's the login for the Prime account?", CREDENTIALS),
    ("the wifi key is on a sticker under the router", CREDENTIALS),
    ("the garage door opener code is 8642", CREDENTIALS),
    ("username anna, password tulip77", CREDENTIALS),
    ("the school portal login is anna.m / Kitten22", CREDENTIALS),
    ("gate code: 1379#", CREDENTIALS),
    ("The HBO Max account password is on the fridge", CREDENTIALS),
    ("the house alarm is set with 9-0-1-2, that's the code", CREDENTIALS),
    ("the alarm's code is 1987", CREDENTIALS),
    ("our Disney+ password is frozen2", CREDENTIALS),
    ("what's the code to the gate again?", CREDENTIALS),
    ("the safe opens with 3-7-1-9", CREDENTIALS),
    ("Netflix login: anna@example.org pw Hunter2", CREDENTIALS),
    ("her Spotify password is taylor13", CREDENTIALS),
    ("the door code changed again, now it's 7788", CREDENTIALS),
    ("Mum's iPad passcode is 123456", CREDENTIALS),
    ("he told me his bank login", CREDENTIALS),
    ("alarm code 9911 - don't forget", CREDENTIALS),
    ("the key box at the cottage opens with 4-0-4", CREDENTIALS),
    ("login anna.smith pwd sunny1", CREDENTIALS),
    ("the password game at the party was fun", CREDENTIALS),
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
    ("Dad was diagnosed with high blood pressure", HEALTH),
    ("she's started physiotherapy for her shoulder", HEALTH),
    ("Gran's on metformin now", HEALTH),
    ("I'm pregnant with our second", HEALTH),
    ("he's been prescribed ritalin for his ADHD", HEALTH),
    ("she's had migraines all week", HEALTH),
    ("the chemotherapy is making her tired", HEALTH),
    ("Tom has depression and won't get out of bed", HEALTH),
    ("she's taking ibuprofen for her knee", HEALTH),
    ("he's got hypertension and has to cut salt", HEALTH),
    ("the kids have chickenpox", HEALTH),
    ("her cancer is in remission", HEALTH),
    ("he has an appointment at the eye clinic", HEALTH),
    ("Mum's on sertraline again", HEALTH),
    ("She's had a hysterectomy", HEALTH),
    ("Grandad has tinnitus and can't hear the doorbell", HEALTH),
    ("she takes aspirin every morning for her heart", HEALTH),
    ("he's on antibiotics for an ear infection", HEALTH),
    ("she's been diagnosed with ADHD", HEALTH),
    ("Mum's blood pressure is high", HEALTH),
    ("Dad's having chemo", HEALTH),
    ("she's expecting twins", HEALTH),
    ("he takes an antidepressant", HEALTH),
    ("my son has a chest infection", HEALTH),
    ("Grandma's diabetes is getting worse", HEALTH),
    ("she's having physio on her back", HEALTH),
    ("he's asthmatic", HEALTH),
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
    ("I sent him our IBAN for the deposit", FINANCE),
    ("he's drowning in debt", FINANCE),
    ("my salary got cut by 10%", FINANCE),
    ("they're behind on the mortgage", FINANCE),
    ("Her student loan is finally paid off", FINANCE),
    ("my wages went up", FINANCE),
    ("we owe the bank 5k", FINANCE),
    ("my overdraft is maxed out", FINANCE),
    ("we're saving for a deposit", FINANCE),
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
    ("I love coding with the kids on Saturdays", ORDINARY),
    ("the code for the school trip form is on the fridge", ORDINARY),
    ("the dress code for the wedding is black tie", ORDINARY),
    ("Tom is learning to code in Python", ORDINARY),
    ("the promo code is SAVE20", ORDINARY),
    ("the zip code for the office is 90210", ORDINARY),
    ("the area code for Leeds is 0113", ORDINARY),
    ("the error code on the washing machine is E21", ORDINARY),
    ("there's a QR code on the menu", ORDINARY),
    ("the Highway Code says to slow down near schools", ORDINARY),
    ("the bus pass is in my coat pocket", ORDINARY),
    ("the kids want to watch the Netflix show about sharks", ORDINARY),
    ("we're expecting rain tomorrow", ORDINARY),
    ("she has a big heart", ORDINARY),
    ("it's a gift card for the bookshop", ORDINARY),
    ("remember to pass the salt to grandma", ORDINARY),
    ("the key to the shed is under the mat", ORDINARY),
    ("the gate is stuck again", ORDINARY),
    ("the alarm clock went off at 6", ORDINARY),
    ("we signed the kids up for the code club", ORDINARY),
    ("the lock on the bathroom door is broken", ORDINARY),
    ("she scored 4471 points in the game", ORDINARY),
    ("the code of conduct for the club is on the website", ORDINARY),
    ("the tension in the room was awful", ORDINARY),
    ("email anna@example.org about the party", ORDINARY),
    ("we're learning the code of conduct at school", ORDINARY),
    ("the teaching aids are in the cupboard", ORDINARY),
    ("the kids broke the code in the puzzle book", ORDINARY),
    ("she's expecting a parcel", ORDINARY),
    ("the pin on the map is our house", ORDINARY),
    ("the dress code is black tie", ORDINARY),
    ("she cracked the code of the escape room", ORDINARY),
    ("he's got a pin badge collection", ORDINARY),
    ("our neighbour is a nurse", ORDINARY),
    ("what a headache this traffic is", ORDINARY),
    ("the code for the school form is in the red folder", ORDINARY),
    ("the kids are playing Minecraft", ORDINARY),
    ("the garden gate needs oiling", ORDINARY),
    ("the car needs an MOT", ORDINARY),
    ("we're going to the zoo on Saturday", ORDINARY),
    ("I printed the boarding passes", ORDINARY),
    ("she cracked the code on the crossword", ORDINARY),
    ("the key lime pie was amazing", ORDINARY),
    ("the dog is sick of the rain", ORDINARY),
    ("the band played a sick set", ORDINARY),
    ("the pass was brilliant in the match", ORDINARY),
    ("our team scored 4471 points", ORDINARY),
    ("the kids' passports are in the drawer", ORDINARY),
    ("he logs in to the school portal every morning", ORDINARY),
    ("the login page looks nice now", ORDINARY),
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

# The same classes in German, French and Spanish, with near misses that must stay ordinary.
GERMAN: list[tuple[str, Sensitivity]] = [
    ("Das WLAN-Passwort ist Sonnenblume42", CREDENTIALS),
    ("der Alarmcode ist 4471", CREDENTIALS),
    ("Unser Netflix-Login ist anna@example.org / hunter2", CREDENTIALS),
    ("Die PIN für meine EC-Karte ist 8812", CREDENTIALS),
    ("Das Kennwort für den Router steht auf der Rückseite", CREDENTIALS),
    ("Der Code für die Haustür lautet 2580", CREDENTIALS),
    ("Kannst du mir die Zugangsdaten fürs Kundenportal schicken?", CREDENTIALS),
    ("Der Tresorcode ist 1-9-7-3", CREDENTIALS),
    ("Mein Passwort für Spotify ist katze123", CREDENTIALS),
    ("Die Geheimzahl von Papas Bankkarte ist sein Geburtsjahr", CREDENTIALS),
    ("Der Bestätigungscode per SMS ist 552913", CREDENTIALS),
    ("Der Code ist 9931, nicht weitersagen", CREDENTIALS),
    ("Omas Handy-PIN ist 0000", CREDENTIALS),
    ("Der WLAN-Schlüssel klebt unter dem Router", CREDENTIALS),
    ("Oma hat Zuckerkrankheit und muss Insulin spritzen", HEALTH),
    ("Mein Vater hat Bluthochdruck", HEALTH),
    ("Ich bin schwanger, aber sag es noch niemandem", HEALTH),
    ("Lena hat Asthma und braucht ihr Spray", HEALTH),
    ("Er nimmt seit März Antidepressiva", HEALTH),
    ("Ich muss morgen ins Krankenhaus zur Untersuchung", HEALTH),
    ("Vergiss nicht, deine Tabletten zu nehmen", HEALTH),
    ("Max hat ADHS, die Schule weiß Bescheid", HEALTH),
    ("Sie leidet seit Jahren an Migräne", HEALTH),
    ("Der Arzttermin ist am Donnerstag um 10", HEALTH),
    ("Opa hat Krebs, die Chemotherapie beginnt nächste Woche", HEALTH),
    ("Ich habe seit gestern Fieber und Halsschmerzen", HEALTH),
    ("Mama hat eine Depression und geht zur Therapie", HEALTH),
    ("Er hat sich beim Fußball das Bein gebrochen", HEALTH),
    ("Mein Gehalt kommt am 25.", FINANCE),
    ("Wir haben noch 12.000 Euro Schulden bei der Bank", FINANCE),
    ("Die Miete ist schon wieder gestiegen", FINANCE),
    ("Unsere IBAN steht auf der Rechnung", FINANCE),
    ("Der Kredit für das Auto läuft noch zwei Jahre", FINANCE),
    ("Ich bin total pleite bis zum Monatsende", FINANCE),
    ("Die Steuererklärung muss bis Juli fertig sein", FINANCE),
    ("Das Konto ist wieder überzogen", FINANCE),
    ("Der Dresscode für die Hochzeit ist festlich", ORDINARY),
    ("Ich programmiere gern, Code schreiben macht mir Spaß", ORDINARY),
    ("Der Schlüssel liegt unter der Fußmatte", ORDINARY),
    ("Sie ist Ärztin in Hamburg", ORDINARY),
    ("Das Rezept für den Apfelkuchen ist von Oma", ORDINARY),
    ("Wir haben Schwarztee und Kräutertee gekauft", ORDINARY),
    ("Die Postleitzahl ist 10115", ORDINARY),
    ("Der Gutscheincode ist SOMMER20", ORDINARY),
    ("Die Bank am See ist frisch gestrichen", ORDINARY),
    ("Das macht mich krank, dieser ewige Regen", ORDINARY),
    ("Am Samstag gehen wir ins Kino", ORDINARY),
    ("Die Kinder spielen im Garten Fußball", ORDINARY),
    ("Der Fehlercode am Drucker ist E-404", ORDINARY),
    ("Das Passwort fürs Tablet ist Lena2015", CREDENTIALS),
    ("Unser Haustürcode: 4-4-7-1", CREDENTIALS),
    ("PIN vom Handy ist 2468", CREDENTIALS),
    ("Die Alarmanlage geht mit 1234 aus", CREDENTIALS),
    ("Schreib dir das Kennwort auf", CREDENTIALS),
    ("Der Schlüsselsafe-Code ist 0815", CREDENTIALS),
    ("Wie war noch mal der Code vom Tor?", CREDENTIALS),
    ("Meine Amazon-Zugangsdaten liegen im Ordner", CREDENTIALS),
    ("Passwort vom Laptop: Hund2019!", CREDENTIALS),
    ("Das WLAN heißt Müller, Schlüssel ist 88776655", CREDENTIALS),
    ("Omas Geheimzahl ist 1950", CREDENTIALS),
    ("Für die Garage brauchst du den Code 1122", CREDENTIALS),
    ("mein Login bei der Sparkasse ist anna1985", CREDENTIALS),
    ("Der Zahlencode vom Fahrradschloss ist 319", CREDENTIALS),
    ("Die Kinder haben Passwort-Spiele gespielt", CREDENTIALS),
    ("Benutzername anna, Passwort Sommer2023", CREDENTIALS),
    ("Oma nimmt Blutverdünner", HEALTH),
    ("Er hat eine Lungenentzündung", HEALTH),
    ("Mein Sohn hat Neurodermitis", HEALTH),
    ("Sie hat Brustkrebs", HEALTH),
    ("Ich war heute beim Zahnarzt", HEALTH),
    ("Papa muss operiert werden", HEALTH),
    ("Lisa hat sich das Handgelenk gebrochen", HEALTH),
    ("Ich habe Kopfschmerzen", HEALTH),
    ("Er ist seit Wochen depressiv", HEALTH),
    ("Die Hebamme kommt morgen", HEALTH),
    ("Sie ist in der 20. Woche schwanger", HEALTH),
    ("Oma ist im Pflegeheim", HEALTH),
    ("Er ist zuckerkrank", HEALTH),
    ("Sie hat Bluthochdruck und nimmt Tabletten", HEALTH),
    ("Ich habe einen Termin beim Frauenarzt", HEALTH),
    ("Mein Kind hat Windpocken", HEALTH),
    ("Opa hatte einen Schlaganfall", HEALTH),
    ("Sie geht zur Psychotherapie", HEALTH),
    ("Ich bin erkältet", HEALTH),
    ("Er hat Heuschnupfen", HEALTH),
    ("Mama muss ins Krankenhaus", HEALTH),
    ("Ich habe Migräne", HEALTH),
    ("Er hat Diabetes Typ 2", HEALTH),
    ("Sie nimmt die Pille", HEALTH),
    ("Das Krankenhaus-Parkhaus ist teuer", HEALTH),
    ("Ich verdiene 3000 Euro im Monat", FINANCE),
    ("Wir zahlen den Kredit ab", FINANCE),
    ("Die Nebenkosten sind gestiegen", FINANCE),
    ("Das Finanzamt will Geld", FINANCE),
    ("Wir haben 5000 Euro auf dem Sparkonto", FINANCE),
    ("Mein Lohn ist zu niedrig", FINANCE),
    ("Die Bank hat den Kredit abgelehnt", FINANCE),
    ("Ich habe Schulden bei meinem Bruder", FINANCE),
    ("Ich liebe Programmieren", ORDINARY),
    ("Der Code der Straße ist 5", ORDINARY),
    ("Wir mieten ein Ferienhaus", ORDINARY),
    ("Das ist eine kranke Idee", ORDINARY),
    ("Hast du den Schlüssel?", ORDINARY),
    ("Wir haben gewonnen, 3 zu 1", ORDINARY),
    ("Die Bank hat heute zu", ORDINARY),
    ("Das Tablett steht in der Küche", ORDINARY),
    ("Er programmiert den ganzen Tag", ORDINARY),
    ("Meine Schwester ist Krankenschwester", ORDINARY),
    ("Wir gehen heute Abend essen", ORDINARY),
    ("Der Bus kommt um 8", ORDINARY),
    ("Ich miete ein Auto für den Urlaub", ORDINARY),
    ("Das Tor war super beim Fußball", ORDINARY),
    ("Der Müll wird am Dienstag abgeholt", ORDINARY),
    ("Wir grillen am Sonntag bei Oma", ORDINARY),
    ("Lena hat heute ihren ersten Zahn verloren", ORDINARY),
    ("Der Hund muss noch raus", ORDINARY),
    ("Ich habe den Code für das Formular der Klassenfahrt an den Kühlschrank gehängt", ORDINARY),
    ("Papa repariert das Fahrrad", ORDINARY),
    ("Das Spiel endet 2:1 für uns", ORDINARY),
    ("Wir müssen die Heizung entlüften", ORDINARY),
    ("Die Oma kommt um 15 Uhr", ORDINARY),
    ("Wir sind auf Platz 3 in der Liga", ORDINARY),
    ("Die Kinder lernen Programmieren in der Schule", ORDINARY),
    ("Kauf bitte Brot und Käse", ORDINARY),
    ("Die Spülmaschine ist kaputt", ORDINARY),
    ("Der Schlüssel hängt am Haken", ORDINARY),
    ("Das Tor vom Garten quietscht", ORDINARY),
    ("Wir brauchen neue Glühbirnen", ORDINARY),
    ("Meine Schwester arbeitet als Lehrerin", ORDINARY),
    ("Wir fahren mit dem Zug nach Berlin", ORDINARY),
    ("Unser Nachbar hat einen neuen Hund", ORDINARY),
    ("Das Passfoto für den Ausweis ist fertig", ORDINARY),
    ("Die Bank im Garten muss gestrichen werden", ORDINARY),
    ("Der Kuchen ist im Ofen", ORDINARY),
    ("Ich habe Zeit gespart mit dem neuen Mixer", ORDINARY),
    ("Wir haben die Wohnung gestrichen", ORDINARY),
    ("Kannst du Milch mitbringen?", ORDINARY),
    ("Er schuldet mir einen Gefallen", ORDINARY),
]

FRENCH: list[tuple[str, Sensitivity]] = [
    ("le code de l'alarme est 4471", CREDENTIALS),
    ("Le mot de passe du wifi est sur le frigo", CREDENTIALS),
    ("Mon code PIN est 1234", CREDENTIALS),
    ("le digicode de l'immeuble c'est 4B72", CREDENTIALS),
    ("Tu peux m'envoyer les identifiants Netflix ?", CREDENTIALS),
    ("Le code du portail a changé : 0909", CREDENTIALS),
    ("mon identifiant est anna.dupont et le mdp est soleil99", CREDENTIALS),
    ("La combinaison du coffre-fort est 12-34-56", CREDENTIALS),
    ("Le code de vérification reçu par SMS est 552913", CREDENTIALS),
    ("La question secrète, c'est le nom de mon premier chien", CREDENTIALS),
    ("La clé wifi est collée sous la box", CREDENTIALS),
    ("le code confidentiel de ma carte bleue est 4321", CREDENTIALS),
    ("Je suis enceinte de trois mois", HEALTH),
    ("Mamie prend des médicaments pour la tension", HEALTH),
    ("Il a une ordonnance pour des antibiotiques", HEALTH),
    ("Paul est diabétique depuis l'enfance", HEALTH),
    ("J'ai rendez-vous chez le médecin demain matin", HEALTH),
    ("Elle fait une dépression depuis l'hiver", HEALTH),
    ("Mon père est à l'hôpital après son infarctus", HEALTH),
    ("Léa a de l'asthme, elle garde sa ventoline dans son sac", HEALTH),
    ("J'ai mal à la tête depuis ce matin", HEALTH),
    ("Il commence sa chimio lundi", HEALTH),
    ("Ma mère a un cancer du sein", HEALTH),
    ("N'oublie pas de prendre ton ibuprofène", HEALTH),
    ("Le kiné dit que mon genou va mieux", HEALTH),
    ("Il est malade, il a de la fièvre", HEALTH),
    ("Mon salaire tombe le 28 du mois", FINANCE),
    ("On a encore des dettes à rembourser", FINANCE),
    ("Le loyer a encore augmenté", FINANCE),
    ("Notre compte bancaire est à découvert", FINANCE),
    ("Il me doit 200 euros depuis l'été", FINANCE),
    ("La déclaration d'impôts est à faire avant juin", FINANCE),
    ("On a un crédit immobilier sur vingt ans", FINANCE),
    ("Le code vestimentaire est décontracté", ORDINARY),
    ("Elle est médecin à Lyon", ORDINARY),
    ("J'ai acheté une enceinte Bluetooth pour le salon", ORDINARY),
    ("C'est pas mal du tout, ce restaurant", ORDINARY),
    ("Le code postal est 75011", ORDINARY),
    ("On a révisé le code de la route ce week-end", ORDINARY),
    ("La tension monte entre les deux équipes", ORDINARY),
    ("Il faut sortir les poubelles ce soir", ORDINARY),
    ("La banque du quartier ferme à midi", ORDINARY),
    ("Les enfants jouent au parc", ORDINARY),
    ("Le code promo est NOEL2024", ORDINARY),
    ("le mot de passe de la box c'est chat2020", CREDENTIALS),
    ("quel est le code de la porte d'entrée ?", CREDENTIALS),
    ("Son code secret est 9876", CREDENTIALS),
    ("Voici mes identifiants : anna@example.org / soleil", CREDENTIALS),
    ("Le code de l'alarme a changé, c'est 5566 maintenant", CREDENTIALS),
    ("Le code pour ouvrir le garage, c'est 2580", CREDENTIALS),
    ("Mon mot de passe Gmail est tournesol", CREDENTIALS),
    ("la combinaison du cadenas est 0-4-2", CREDENTIALS),
    ("Le code WiFi est collé sur la box", CREDENTIALS),
    ("J'ai oublié mon code PIN", CREDENTIALS),
    ("Le mdp du compte Netflix est dans mes notes", CREDENTIALS),
    ("Je dois passer une IRM du genou", HEALTH),
    ("Il prend des antidépresseurs", HEALTH),
    ("Mon grand-père a la maladie d'Alzheimer", HEALTH),
    ("Elle est sous insuline", HEALTH),
    ("J'ai une gastro", HEALTH),
    ("Il a été hospitalisé hier", HEALTH),
    ("Je prends des somnifères", HEALTH),
    ("Ma sœur est enceinte", HEALTH),
    ("Il fait de la kiné pour son dos", HEALTH),
    ("J'ai pris rendez-vous chez le dentiste", HEALTH),
    ("Il a une angine", HEALTH),
    ("Elle a fait une fausse couche", HEALTH),
    ("Ma fille a la varicelle", HEALTH),
    ("Elle a de l'hypertension", HEALTH),
    ("Mon fils a une otite", HEALTH),
    ("Elle a une bronchite", HEALTH),
    ("Mon prêt immobilier est à 2 %", FINANCE),
    ("Je suis à découvert", FINANCE),
    ("Elle gagne 2500 euros par mois", FINANCE),
    ("On doit 3000 euros à la banque", FINANCE),
    ("Notre loyer est de 900 euros", FINANCE),
    ("Il a perdu son emploi et touche le chômage", FINANCE),
    ("Ma banque m'a refusé le prêt", FINANCE),
    ("On a des impôts à payer", FINANCE),
    ("C'est une maladie de vouloir tout ranger", ORDINARY),
    ("On a gagné 3 à 1", ORDINARY),
    ("Le temps est déprimant", ORDINARY),
    ("J'ai une enceinte JBL", ORDINARY),
    ("Il fait un temps de chien", ORDINARY),
    ("Mon code de la route est dans une semaine", ORDINARY),
    ("La tension électrique est de 230 volts", ORDINARY),
    ("Il joue du piano tous les jours", ORDINARY),
    ("On part en vacances en août", ORDINARY),
    ("La porte du garage grince", ORDINARY),
    ("Le code source est sur GitHub", ORDINARY),
    ("Tu peux acheter du pain ?", ORDINARY),
    ("On mange chez mamie dimanche", ORDINARY),
    ("La machine à laver fait un bruit bizarre", ORDINARY),
    ("Les enfants ont cours de piano mercredi", ORDINARY),
    ("Le match finit 3 à 2", ORDINARY),
    ("La clé est sous le paillasson", ORDINARY),
    ("J'ai perdu mes clés de voiture", ORDINARY),
    ("Le bus passe à 8 h 15", ORDINARY),
    ("Il pleut depuis ce matin", ORDINARY),
    ("Elle apprend à coder en Python", ORDINARY),
    ("On a une réunion de parents à l'école", ORDINARY),
    ("Le portail du jardin est bloqué", ORDINARY),
    ("Le frigo est vide", ORDINARY),
    ("On fête l'anniversaire de Paul samedi", ORDINARY),
    ("La banque alimentaire cherche des bénévoles", ORDINARY),
    ("Mon frère est prêt pour le départ", ORDINARY),
    ("Le code de la maison est très strict pour les écrans", ORDINARY),
    ("Le chien a besoin d'une promenade", ORDINARY),
    ("On a repeint la cuisine en bleu", ORDINARY),
    ("Il me doit encore cinquante euros", FINANCE),
    ("Sa tension monte quand il stresse", HEALTH),
    ("Il doit partir à 8 h", ORDINARY),
    ("Une retraite de yoga en montagne", ORDINARY),
    ("Les actions de sensibilisation à l'école", ORDINARY),
]

SPANISH: list[tuple[str, Sensitivity]] = [
    ("el código de la alarma es 4471", CREDENTIALS),
    ("La contraseña del wifi es Girasol42", CREDENTIALS),
    ("Mi PIN del banco es 9876", CREDENTIALS),
    ("La clave de acceso al portal es 2468", CREDENTIALS),
    ("¿Me pasas el usuario y la contraseña de Netflix?", CREDENTIALS),
    ("El código del portal ha cambiado a 0909", CREDENTIALS),
    ("la clave es 7391, no se la digas a nadie", CREDENTIALS),
    ("La combinación de la caja fuerte es 12-34-56", CREDENTIALS),
    ("El código de verificación que me llegó es 552913", CREDENTIALS),
    ("Apunté las credenciales de la cuenta en la libreta", CREDENTIALS),
    ("Mi contrasena de correo es la fecha de mi boda", CREDENTIALS),
    ("El codigo de la puerta es 1590", CREDENTIALS),
    ("Estoy embarazada de ocho semanas", HEALTH),
    ("Mi abuela tiene diabetes y se pone insulina", HEALTH),
    ("El médico le recetó antidepresivos", HEALTH),
    ("Tengo que recoger la receta en la farmacia", HEALTH),
    ("Tomo pastillas para la tensión", HEALTH),
    ("Juan tiene asma desde pequeño", HEALTH),
    ("Mañana tengo cita con el médico", HEALTH),
    ("A mi padre lo operaron de la rodilla", HEALTH),
    ("Tiene depresión y va al psicólogo", HEALTH),
    ("Me duele mucho la espalda", HEALTH),
    ("Está en el hospital con neumonía", HEALTH),
    ("Le diagnosticaron cáncer el año pasado", HEALTH),
    ("Tengo fiebre y tos desde ayer", HEALTH),
    ("Lucía toma ibuprofeno para la migraña", HEALTH),
    ("Mi sueldo llega el día 30", FINANCE),
    ("Tenemos una deuda con el banco", FINANCE),
    ("No podemos pagar el alquiler este mes", FINANCE),
    ("La hipoteca sube en octubre", FINANCE),
    ("Me debe 50 euros desde el verano", FINANCE),
    ("Tengo que hacer la declaración de la renta", FINANCE),
    ("Nuestra cuenta de ahorros tiene 3.000 euros", FINANCE),
    ("La clave del éxito es la paciencia", ORDINARY),
    ("El código de vestimenta es informal", ORDINARY),
    ("Mi hermana es médica en Sevilla", ORDINARY),
    ("La receta de la paella es de mi abuela", ORDINARY),
    ("El código postal es 28013", ORDINARY),
    ("Compré pastillas de freno para la bici", ORDINARY),
    ("Me encanta programar, escribir código es divertido", ORDINARY),
    ("Vamos a la playa el sábado", ORDINARY),
    ("La palabra clave del juego es manzana", ORDINARY),
    ("Nos sentamos en un banco del parque", ORDINARY),
    ("El código de descuento es VERANO10", ORDINARY),
    ("La contraseña de Netflix es peliculas123", CREDENTIALS),
    ("¿Cuál es el código del garaje?", CREDENTIALS),
    ("El PIN de la tarjeta es 4455", CREDENTIALS),
    ("Mi clave del banco es 8899", CREDENTIALS),
    ("El código es 4471", CREDENTIALS),
    ("la contraseña del router está debajo", CREDENTIALS),
    ("La clave del wifi es girasol2020", CREDENTIALS),
    ("El PIN del móvil es 1111", CREDENTIALS),
    ("¿Me recuerdas la contraseña del ordenador?", CREDENTIALS),
    ("Apúntate el código de la caja fuerte: 9-8-7", CREDENTIALS),
    ("El código para entrar al edificio es 4B12", CREDENTIALS),
    ("Usuario: anna, contraseña: sol2024", CREDENTIALS),
    ("Tiene cáncer de pulmón", HEALTH),
    ("Mi madre toma pastillas para dormir", HEALTH),
    ("Me operan de la vesícula el lunes", HEALTH),
    ("El niño tiene varicela", HEALTH),
    ("Estoy con gripe", HEALTH),
    ("Mi padre tuvo un infarto", HEALTH),
    ("Tengo ansiedad", HEALTH),
    ("Lo ingresaron en el hospital", HEALTH),
    ("Mi hijo tiene otitis", HEALTH),
    ("Estoy resfriado", HEALTH),
    ("Mi abuelo tiene alzhéimer", HEALTH),
    ("Me han recetado antibióticos", HEALTH),
    ("Va al fisio dos veces por semana", HEALTH),
    ("Tiene la tensión alta", HEALTH),
    ("La operaron del corazón", HEALTH),
    ("Está de baja por depresión", HEALTH),
    ("Pago la hipoteca cada mes", FINANCE),
    ("Tengo deudas con la tarjeta", FINANCE),
    ("Cobro el sueldo el día 1", FINANCE),
    ("Le pasé mi IBAN a mi jefe", FINANCE),
    ("Mi salario es de 1800 euros", FINANCE),
    ("Estamos en números rojos", FINANCE),
    ("Le presté 300 euros a mi primo", FINANCE),
    ("Debemos dos meses de alquiler", FINANCE),
    ("La pastilla de jabón se acabó", ORDINARY),
    ("Alquilamos un coche de alquiler", ORDINARY),
    ("La lavadora hace un ruido raro", ORDINARY),
    ("Pintamos la cocina de azul", ORDINARY),
    ("Estoy disponible mañana", ORDINARY),
    ("El código de barras está roto", ORDINARY),
    ("La clave de sol en el pentagrama", ORDINARY),
    ("Mañana vamos al cine", ORDINARY),
    ("El banco del parque está roto", ORDINARY),
    ("Mi hermano es enfermero", ORDINARY),
    ("La clave está en la práctica", ORDINARY),
    ("Es clave llegar temprano", ORDINARY),
    ("El perro necesita salir", ORDINARY),
    ("Comemos en casa de la abuela el domingo", ORDINARY),
    ("Los niños tienen clase de piano el miércoles", ORDINARY),
    ("El partido terminó 3 a 1", ORDINARY),
    ("La llave está debajo del felpudo", ORDINARY),
    ("Perdí las llaves del coche", ORDINARY),
    ("El autobús pasa a las 8", ORDINARY),
    ("Llueve desde esta mañana", ORDINARY),
    ("Tenemos reunión de padres en el colegio", ORDINARY),
    ("El frigorífico está vacío", ORDINARY),
    ("Celebramos el cumpleaños de Pablo el sábado", ORDINARY),
    ("La clave para una buena tortilla es la paciencia", ORDINARY),
    ("El portal del edificio está recién pintado", ORDINARY),
    ("Nos tomamos un café en la terraza", ORDINARY),
    ("Mi hermana es profesora", ORDINARY),
    ("Voy a la playa a fin de mes", ORDINARY),
    ("Iva viene a cenar", ORDINARY),
    ("¿Puedes comprar leche?", ORDINARY),
    ("Ella aprende a programar en Python", ORDINARY),
    ("Me debe mil euros", FINANCE),
    ("Hice una transferencia a Juan para la cena", FINANCE),
    ("Debe ser mil veces mejor", ORDINARY),
    ("Prestamos atención en clase", ORDINARY),
    ("La transferencia de archivos falló", ORDINARY),
    ("Esta película es de baja calidad", ORDINARY),
    ("Debe costar 50 euros", ORDINARY),
]

NON_ENGLISH: list[tuple[str, Sensitivity]] = GERMAN + FRENCH + SPANISH
LANGUAGES: dict[str, list[tuple[str, Sensitivity]]] = {
    "en": CREDENTIALS_CORPUS + HEALTH_CORPUS + FINANCE_CORPUS + TRAPS + PLAIN_ORDINARY,
    "de": GERMAN,
    "fr": FRENCH,
    "es": SPANISH,
}

CORPUS: list[tuple[str, Sensitivity]] = (
    CREDENTIALS_CORPUS + HEALTH_CORPUS + FINANCE_CORPUS + TRAPS + PLAIN_ORDINARY + NON_ENGLISH
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


def test_the_corpus_has_four_hundred_sentences_and_a_quarter_are_not_english() -> None:
    assert len(CORPUS) >= 400
    assert len(NON_ENGLISH) * 4 >= len(CORPUS)
    # Every language has every class, near misses included.
    for language, sentences in LANGUAGES.items():
        counts = Counter(label for _, label in sentences)
        assert all(counts[label] >= 8 for label in Sensitivity), (language, counts)


def _precision_recall(
    corpus: list[tuple[str, Sensitivity]],
) -> dict[Sensitivity, tuple[float, float, int]]:
    hits: Counter[Sensitivity] = Counter()
    claimed: Counter[Sensitivity] = Counter()
    actual: Counter[Sensitivity] = Counter()
    for text, expected in corpus:
        got = classify(text)
        claimed[got] += 1
        actual[expected] += 1
        hits[got] += got == expected
    return {
        label: (
            hits[label] / claimed[label] if claimed[label] else 1.0,
            hits[label] / actual[label] if actual[label] else 1.0,
            actual[label],
        )
        for label in Sensitivity
    }


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_precision_and_recall_hold_per_class_in_each_language(
    language: str, capsys: pytest.CaptureFixture[str]
) -> None:
    figures = _precision_recall(LANGUAGES[language])
    with capsys.disabled():
        print(
            f"\n{language}: "
            + "  ".join(
                f"{label.value} P={p:.2f} R={r:.2f} (n={n})"
                for label, (p, r, n) in figures.items()
            )
        )
    for label, (precision, recall, _) in figures.items():
        assert precision == 1.0 and recall == 1.0, (language, label, precision, recall)


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


# --- the household's promises, in four languages -------------------------------------------


def test_a_german_wifi_password_is_credentials() -> None:
    assert classify("Das WLAN-Passwort ist Sonnenblume42") == CREDENTIALS
    assert classify("Das Wlanpasswort ist Sonnenblume42") == CREDENTIALS
    assert classify("Der WLAN-Schlüssel klebt unter dem Router") == CREDENTIALS


@pytest.mark.parametrize(
    "text",
    [
        "the alarm code is 4471",
        "der Alarmcode ist 4471",
        "le code de l'alarme est 4471",
        "el código de la alarma es 4471",
        "el codigo de la alarma es 4471",
    ],
)
def test_a_burglar_alarm_code_is_credentials_in_any_of_four_languages(text: str) -> None:
    assert classify(text) == CREDENTIALS


def test_a_streaming_login_is_credentials() -> None:
    assert classify("our Netflix login is anna@example.org / hunter2") == CREDENTIALS
    assert classify("Netflix: anna@example.org / hunter2") == CREDENTIALS
    assert classify("Unser Netflix-Login ist anna@example.org / hunter2") == CREDENTIALS
    assert classify("Tu peux m'envoyer les identifiants Netflix ?") == CREDENTIALS


@pytest.mark.parametrize(
    "text",
    [
        "the code is 5521",
        "der Code lautet 5521",
        "le code est 5521",
        "el código es 5521",
        "la clave es 5521",
        "PIN: 5521",
        "mein Login ist anna1985",
        "mon identifiant est anna85",
        "Passwort: Sonnenblume",
        "Kennwort: Sonnenblume",
        "mot de passe : tournesol",
        "contraseña: girasol",
        "Zugangsdaten: anna / sonne",
    ],
)
def test_a_label_and_a_value_are_credentials_in_any_of_four_languages(text: str) -> None:
    assert classify(text) == CREDENTIALS


@pytest.mark.parametrize(
    "text",
    [
        "I love coding",
        "the dress code is smart casual",
        "the code for the school trip form is on the fridge",
        "Der Dresscode ist festlich",
        "Le code postal est 75011",
        "El código de descuento es VERANO10",
        "La clave del éxito es la paciencia",
    ],
)
def test_a_code_without_a_secret_value_stays_ordinary(text: str) -> None:
    assert classify(text) == ORDINARY


@pytest.mark.parametrize(
    "text",
    [
        "she has diabetes",
        "his asthma is worse",
        "Tom has depression",
        "Mia has ADHD",
        "I get migraines",
        "he has high blood pressure",
        "her cancer came back",
        "we're pregnant",
        "he takes insulin",
        "she's on metformin",
        "take an ibuprofen",
        "he's on antidepressants",
        "she takes sertraline",
        "chemotherapy starts monday",
        "physiotherapy on thursday",
        "Oma hat Zuckerkrankheit",
        "Oma hat Diabetes",
        "Lena hat Asthma",
        "Er hat eine Depression",
        "Papa hat hohen Blutdruck",
        "Ich bin schwanger",
        "Vergiss deine Tabletten nicht",
        "Sie liegt im Krankenhaus",
        "Je suis enceinte",
        "Il prend un médicament pour le cœur",
        "J'ai une ordonnance",
        "Sa tension est trop haute",
        "Estoy embarazada",
        "Toma un medicamento nuevo",
        "Se le acabaron las pastillas",
        "Tengo la receta médica",
    ],
)
def test_a_diagnosis_or_a_medication_is_health_in_any_of_four_languages(text: str) -> None:
    assert classify(text) == HEALTH


@pytest.mark.parametrize(
    "text",
    [
        "J'ai acheté une enceinte Bluetooth",
        "La tension monte entre les deux équipes",
        "La receta de la paella es de mi abuela",
        "Compré pastillas de freno",
        "Sie ist Ärztin in Hamburg",
        "Elle est médecin à Lyon",
        "Mi hermana es médica",
        "Wir haben Schwarztee gekauft",
        "C'est pas mal du tout",
    ],
)
def test_a_health_word_in_another_sense_stays_ordinary(text: str) -> None:
    assert classify(text) == ORDINARY


@pytest.mark.parametrize(
    "text",
    [
        "our IBAN is DE89 on the invoice",
        "Mein Gehalt kommt am 25.",
        "Wir haben Schulden",
        "Mon salaire tombe le 28",
        "On a des dettes",
        "Mi sueldo llega el día 30",
        "Tenemos una deuda",
    ],
)
def test_salary_and_debt_are_finance_in_any_of_four_languages(text: str) -> None:
    assert classify(text) == FINANCE


def test_accents_are_optional_and_unicode_is_folded() -> None:
    for text in (
        "el código de la alarma es 4471",
        "el codigo de la alarma es 4471",
        "el co\u0301digo de la alarma es 4471",  # a combining accent
        "EL CÓDIGO DE LA ALARMA ES 4471",
        "la contrase\u00f1a del wifi es girasol",
        "la contrasena del wifi es girasol",
        "Das WLAN-Passwort ist Sonnenblume42".replace("Passwort", "Pass\u00adwort"),  # soft hyphen
        "the pass\u200bword is hunter2",  # a zero-width space
        "the \uff30\uff29\uff2e is 0042",  # full-width "PIN"
        "Omas Handy\u2011PIN ist 0000",  # a non-breaking hyphen
    ):
        assert classify(text) == CREDENTIALS, ascii(text)
    assert classify("Er hat Bluthochdruck") == HEALTH
    assert classify("Die STEUERERKLÄRUNG ist fällig") == FINANCE


def test_every_rule_is_written_in_folded_lower_case() -> None:
    for rule in (*CREDENTIAL_RULES, *HEALTH_RULES, *FINANCE_RULES, *ORDINARY_IDIOMS):
        assert fold(rule).casefold() == rule, rule


# --- through the memory: what the class keeps from the group and the background lanes ------


async def test_a_german_wifi_password_never_reaches_the_group(tmp_path: Path) -> None:
    home = await make_household(tmp_path / "hearth.db")
    try:
        memory, owner = home.memory, home.owner.person_id
        secret = await memory.beliefs.remember(owner, "Das WLAN-Passwort ist Sonnenblume42",
                shared=True)
        alarm = await memory.beliefs.remember(owner, "le code de l'alarme est 4471", shared=True)
        bins = await memory.beliefs.remember(owner, "Der Müll wird am Dienstag abgeholt",
                shared=True)
        assert secret.status == alarm.status == bins.status == "created"
        group = home.group()
        seen = {
            r.belief.belief_id
            for query in ("WLAN Passwort Sonnenblume", "code alarme 4471", "Müll Dienstag")
            for r in await memory.recall.search(group, query)
        }
        assert secret.belief_id not in seen and alarm.belief_id not in seen
        assert bins.belief_id in seen  # the positive control: an ordinary shared fact is there
    finally:
        await memory.close()


async def test_a_diagnosis_in_german_never_reaches_proactive_work_without_a_grant(
    tmp_path: Path,
) -> None:
    home = await make_household(tmp_path / "hearth.db")
    try:
        memory, bob = home.memory, home.bob
        health = await memory.beliefs.remember(
            bob.person_id, "Bob hat Zuckerkrankheit und nimmt Tabletten"
        )
        hobby = await memory.beliefs.remember(bob.person_id, "Bob spielt gern Schach im Verein")
        proactive = home.dm(bob, Activity.PROACTIVE)
        seen = {
            r.belief.belief_id
            for query in ("Zuckerkrankheit Tabletten", "Schach Verein")
            for r in await memory.recall.search(proactive, query)
        }
        assert health.belief_id not in seen
        assert hobby.belief_id in seen  # the positive control
        # Bob himself, talking to her, still has it.
        mine = {r.belief.belief_id for r in await memory.recall.search(home.dm(bob),
                "Zuckerkrankheit")}
        assert health.belief_id in mine
    finally:
        await memory.close()


@pytest.mark.parametrize("text", [
    "To disarm the burglar alarm, type 48213 on the panel",
    "Zum Entschärfen der Alarmanlage 48213 am Tastenfeld eingeben",
    "Pour désarmer l'alarme, tapez 48213 sur le clavier",
    "Para desactivar la alarma, marca 48213 en el panel",
    "Der Tresor: 271828",
    "le cadenas du vélo, 4471",
    "Netflix account: alice@example.com with Gooseberry77",
    "Spotify: lena.k@example.de und dazu Brombeere2024",
])
def test_a_secret_told_by_its_shape_alone_is_credentials(text: str) -> None:
    assert classify(text) is Sensitivity.CREDENTIALS


@pytest.mark.parametrize("text", [
    "The alarm goes off at 6:30 every day",
    "We bought the safe in 2019",
    "Enter 2026 as the year on the form",
    "The solar panel produced 1200 kWh in May",
    "Das Schloss hat 1400 Zimmer",
    "Email me at bob@example.com tomorrow about the 2026 trip",
    "Room 2041 at the hotel, next to the lifts",
])
def test_digits_and_addresses_without_a_secrets_shape_stay_ordinary(text: str) -> None:
    assert classify(text) is Sensitivity.ORDINARY
