"""The shelf: documents sent in chat become cited passages, behind the same wall, lens, receipts
and forgetting as memory."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory import AccessContext, Activity, E5Embedder, Memory, Sensitivity, Unreadable
from memory.embedder import Vectors
from memory.knowledge import reading
from tests.helpers import HashEmbedder, Household, TwoWayEmbedder, make_household, raw_bytes
from tests.support.pdf import make_pdf

TERMS = make_pdf([
    ["Riverside Primary School", "Term dates for the school year 2027 to 2028",
     "Autumn term begins on Monday 6 September 2027."],
    ["Half term holiday: 25 October to 29 October 2027.",
     "Parents evening is on Thursday 18 November at 17:30 in the main hall."],
    ["Christmas holidays: school closes on 17 December 2027 at 14:00.",
     "Spring term begins on Tuesday 4 January 2028."],
])
BOILER = """# Boiler manual

## Error codes

E21 means flame failure: press RESET for five seconds. If it comes back three times, call the
service engineer.

E35 means the water pressure is too low: refill to 1.5 bar with the filling loop.

## Servicing

Have the boiler serviced every twelve months by a registered engineer.
"""
PAYSLIP = (
    "Payslip November\n\nGross salary 3,250.00 EUR. Income tax withheld 512.40 EUR.\n\n"
    "Net salary paid into the bank account: 2,301.77 EUR."
)


def _inspect(home: Household, who: str) -> AccessContext:
    person = getattr(home, who)
    return AccessContext.for_member(person.person_id, Activity.MEMBER_INSPECT, "a test")


async def test_a_pdf_of_several_pages_is_shelved_and_answers_cite_its_page(
    home: Household,
) -> None:
    m = home.memory
    shelved = await m.shelf.put(home.bob.person_id, "term-dates.pdf", TERMS)
    assert (shelved.format, shelved.pages, shelved.passages) == ("pdf", 3, 3)

    found = await m.shelf.search(home.dm(home.bob), "when is the parents evening hall?")

    assert found, "the page that answers is told"
    assert found[0].page == 2 and found[0].citation == "term-dates.pdf, p. 2"
    assert "18 November" in found[0].text


async def test_a_markdown_notes_headings_name_the_section_a_passage_is_cited_by(
    home: Household,
) -> None:
    m = home.memory
    await m.shelf.put(home.bob.person_id, "boiler.md", BOILER.encode())

    found = await m.shelf.search(home.dm(home.bob), "boiler error E35 pressure")

    assert found[0].citation == "boiler.md, Boiler manual / Error codes"
    assert "1.5 bar" in found[0].text


async def test_a_members_document_is_never_searched_listed_or_counted_for_anyone_else(
    home: Household,
) -> None:
    m = home.memory
    await m.shelf.put(home.bob.person_id, "boiler.md", BOILER.encode())
    question = "boiler error E35 pressure"

    assert await m.shelf.search(home.dm(home.bob), question)
    assert await m.shelf.search(home.dm(home.alice), question) == []
    assert await m.shelf.search(home.dm(home.owner), question) == []
    assert await m.shelf.search(home.group(), question) == []
    assert await m.shelf.documents(_inspect(home, "alice")) == []
    assert await m.shelf.documents(_inspect(home, "owner")) == []
    assert await m.shelf.droppable(_inspect(home, "alice"), "boiler.md") == []
    assert await m.shelf.forget(_inspect(home, "owner"), "boiler.md") == []
    assert [d.title for d in await m.shelf.documents(_inspect(home, "bob"))] == ["boiler.md"]


async def test_a_document_sent_in_the_group_is_the_households_and_the_group_finds_it(
    home: Household,
) -> None:
    m = home.memory
    await m.shelf.put(home.alice.person_id, "boiler.md", BOILER.encode(), shared=True)
    question = "boiler error E35 pressure"

    for ctx in (home.group(), home.dm(home.bob), home.dm(home.owner)):
        found = await m.shelf.search(ctx, question)
        assert found and "1.5 bar" in found[0].text


async def test_a_payslip_is_finance_and_the_group_cannot_use_it_without_a_grant(
    home: Household,
) -> None:
    m = home.memory
    shelved = await m.shelf.put(home.owner.person_id, "payslip.txt", PAYSLIP.encode(),
                                shared=True)
    assert shelved.sensitivity is Sensitivity.FINANCE
    question = "net salary paid bank account payslip"

    assert await m.shelf.search(home.group(), question) == []
    found = await m.shelf.search(home.dm(home.owner), question)
    assert found and found[0].sensitivity is Sensitivity.FINANCE


async def test_an_unrelated_question_is_told_nothing_from_the_shelf(e5: E5Embedder,
                                                                   tmp_path: Path) -> None:
    home = await make_household(tmp_path / "h.db", embedder=e5)
    try:
        m = home.memory
        await m.shelf.put(home.bob.person_id, "term-dates.pdf", TERMS)
        await m.shelf.put(home.bob.person_id, "boiler.md", BOILER.encode())

        assert await m.shelf.search(home.dm(home.bob), "who won the rugby final last night?") \
            == []
        # Asked in German, of an English document: found by its meaning.
        found = await m.shelf.search(home.dm(home.bob), "Wann beginnen die Weihnachtsferien?")
        assert found and found[0].page == 3
    finally:
        await m.close()


async def test_every_search_listing_and_drop_is_receipted_with_what_it_returned(
    home: Household,
) -> None:
    m = home.memory
    await m.shelf.put(home.bob.person_id, "boiler.md", BOILER.encode())
    await m.shelf.search(home.dm(home.bob), "boiler error E35 pressure")
    await m.shelf.documents(_inspect(home, "bob"))
    await m.shelf.forget(_inspect(home, "bob"), "boiler.md")

    mine = await m.ledger.about(_inspect(home, "bob"))
    methods = [r.method for r in mine]
    assert {"shelf", "shelf_list", "shelf_forget"} <= set(methods)
    search = next(r for r in mine if r.method == "shelf")
    assert len(search.returned_ids) >= 1
    checked, broken = await m.ledger.verify()
    assert broken is None and checked >= 3


async def test_a_dropped_document_leaves_no_word_in_the_file_its_wal_or_its_index(
    home: Household,
) -> None:
    m = home.memory
    secret_doc = BOILER.replace("filling loop", "quartzwhistle valve")
    await m.shelf.put(home.bob.person_id, "boiler.md", secret_doc.encode())
    await m.shelf.put(home.bob.person_id, "terms.pdf", TERMS)
    await m.checkpoint()
    assert b"quartzwhistle" in raw_bytes(m.path)

    assert await m.shelf.forget(_inspect(home, "bob"), "BOILER.md") == ["boiler.md"]
    await m.checkpoint()

    raw = raw_bytes(m.path).lower()
    for fragment in (b"quartzwhistle", b"flame failure", b"boiler.md"):
        assert fragment not in raw, fragment
    assert b"parents evening" in raw  # the other document is intact
    with sqlite3.connect(m.path) as db:
        assert db.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0] == 3
    assert await m.shelf.search(home.dm(home.bob), "quartzwhistle valve") == []


async def test_a_member_may_drop_their_own_documents_and_shared_ones_they_put_there(
    home: Household,
) -> None:
    m = home.memory
    await m.shelf.put(home.bob.person_id, "boiler.md", BOILER.encode(), shared=True)
    await m.shelf.put(home.alice.person_id, "terms.pdf", TERMS, shared=True)

    assert await m.shelf.forget(_inspect(home, "bob"), "terms.pdf") == []
    assert await m.shelf.forget(_inspect(home, "bob"), "boiler.md") == ["boiler.md"]
    assert await m.shelf.forget(_inspect(home, "owner"), "terms.pdf") == ["terms.pdf"]


async def test_the_same_title_sent_again_replaces_the_older_copy(home: Household) -> None:
    m = home.memory
    await m.shelf.put(home.bob.person_id, "boiler.md", BOILER.encode())
    again = await m.shelf.put(home.bob.person_id, "boiler.md",
                              BOILER.replace("1.5 bar", "1.8 bar").encode())

    assert again.replaced
    assert len(await m.shelf.documents(_inspect(home, "bob"))) == 1
    found = await m.shelf.search(home.dm(home.bob), "boiler error E35 pressure")
    assert "1.8 bar" in found[0].text and "1.5 bar" not in found[0].text


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("report.pdf", b"%PDF-1.7 this is not really a pdf", "damaged"),
        ("photo.jpg", bytes(range(256)) * 40, "not this one"),
        ("notes.txt", b"", "empty"),
        ("scan.pdf", make_pdf([[]]), "no text"),
    ],
)
async def test_a_file_she_cannot_read_is_refused_with_a_reason_and_nothing_is_kept(
    home: Household, name: str, data: bytes, reason: str,
) -> None:
    m = home.memory
    with pytest.raises(Unreadable, match=reason):
        await m.shelf.put(home.bob.person_id, name, data)
    assert await m.shelf.documents(_inspect(home, "bob")) == []


async def test_a_file_over_the_size_limit_is_refused_before_it_is_read(home: Household) -> None:
    huge = b"a" * (reading.MAX_BYTES + 1)
    with pytest.raises(Unreadable, match="larger than 20 MB"):
        await home.memory.shelf.put(home.bob.person_id, "huge.txt", huge)


class _FailingEmbedder(HashEmbedder):
    """Embeds a few passages, then fails: the process dies halfway through a document."""

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> Vectors:
        self.calls += 1
        if self.calls > 3:
            raise RuntimeError("killed halfway")
        return super().embed(texts)


async def test_a_document_that_fails_halfway_leaves_nothing_half_shelved(tmp_path: Path) -> None:
    home = await make_household(tmp_path / "h.db", embedder=_FailingEmbedder())
    try:
        long_text = "\n\n".join(f"Paragraph {i}: " + "household words " * 60 for i in range(200))
        with pytest.raises(RuntimeError):
            await home.memory.shelf.put(home.bob.person_id, "long.txt", long_text.encode())
        assert await home.memory.shelf.documents(_inspect(home, "bob")) == []
        with sqlite3.connect(home.memory.path) as db:
            assert db.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0
    finally:
        await home.memory.close()


async def test_a_document_put_by_another_process_is_found_after_a_sync(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    home = await make_household(path)
    other = await Memory.open(path, embedder=HashEmbedder())
    try:
        await other.shelf.put(home.bob.person_id, "boiler.md", BOILER.encode())
        await home.memory.vectors.sync()
        found = await home.memory.shelf.search(home.dm(home.bob), "boiler error E35 pressure")
        assert found and "1.5 bar" in found[0].text
        assert "meaning" in found[0].why  # its vector joined this process's matrices
    finally:
        await other.close()
        await home.memory.close()


async def test_a_removed_member_takes_their_documents_with_them(home: Household) -> None:
    m = home.memory
    await m.shelf.put(home.bob.person_id, "boiler.md", BOILER.encode())
    await m.forgetting.remove_person(home.bob.person_id)
    await m.checkpoint()
    assert b"flame failure" not in raw_bytes(m.path).lower()


async def test_a_long_document_is_shelved_whole_and_its_progress_is_reported(
    home: Household,
) -> None:
    sections = [f"## Chapter {n}\n\n" + "\n\n".join(
        f"Paragraph {n}.{i}: the heat pump's defrost cycle {n * 100 + i} runs for "
        + "several minutes while the fan stops " * 8 for i in range(6)) for n in range(60)]
    text = "# Heat pump handbook\n\n" + "\n\n".join(sections)
    seen: list[tuple[int, int]] = []

    shelved = await home.memory.shelf.put(home.bob.person_id, "handbook.md", text.encode(),
                                          progress=lambda done, total: seen.append((done, total)))

    assert len(text) > 120_000 and shelved.passages > 150
    assert seen[-1] == (shelved.passages, shelved.passages)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) > 4
    found = await home.memory.shelf.search(home.dm(home.bob), "defrost cycle 5903")
    assert found and "defrost cycle 5903" in found[0].text
    assert found[0].citation == "handbook.md, Heat pump handbook / Chapter 59"


def _docx(paragraphs: list[tuple[str, bool]]) -> bytes:
    """A Word file: paragraphs, each (text, is a heading), headings marked by outline level
    as Word does in any language."""
    import io  # noqa: PLC0415
    import zipfile  # noqa: PLC0415
    from xml.sax.saxutils import escape  # noqa: PLC0415

    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = "".join(
        "<w:p>" + ("<w:pPr><w:outlineLvl w:val='0'/></w:pPr>" if heading else "")
        + f"<w:r><w:t>{escape(text)}</w:t></w:r></w:p>" for text, heading in paragraphs)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml",
                   f"<w:document xmlns:w='{w}'><w:body>{body}</w:body></w:document>")
    return out.getvalue()


async def test_a_word_document_is_read_with_its_headings(home: Household) -> None:
    m = home.memory
    data = _docx([("Überschrift: Mülltrennung", True),
                  ("Die gelbe Tonne wird jeden zweiten Dienstag geleert.", False),
                  ("Gäste", True), ("Nach 22 Uhr bitte keine laute Musik.", False)])
    shelved = await m.shelf.put(home.bob.person_id, "hausordnung.docx", data)
    assert shelved.format == "docx" and shelved.passages == 2
    found = await m.shelf.search(home.dm(home.bob), "gelbe Tonne geleert")
    assert found[0].citation == "hausordnung.docx, Überschrift: Mülltrennung"


async def test_a_members_export_holds_their_own_documents_and_no_one_elses(
    home: Household,
) -> None:
    m = home.memory
    await m.shelf.put(home.bob.person_id, "boiler.md", BOILER.encode())
    await m.shelf.put(home.alice.person_id, "term-dates.pdf", TERMS)

    bob = await m.export.document(_inspect(home, "bob"))
    alice = await m.export.document(_inspect(home, "alice"))

    (mine,) = bob["documents"]
    assert mine["title"] == "boiler.md" and len(mine["passages"]) == 2
    assert any("1.5 bar" in p["text"] for p in mine["passages"])
    assert [d["title"] for d in alice["documents"]] == ["term-dates.pdf"]
    assert "boiler" not in str(alice).lower()


async def test_one_line_asked_of_memory_and_the_shelf_is_embedded_once_for_its_asker(
    tmp_path: Path,
) -> None:
    embedder = TwoWayEmbedder()
    home = await make_household(tmp_path / "hearth.db", embedder=embedder)
    m = home.memory
    try:
        await m.shelf.put(home.bob.person_id, "boiler.md", BOILER.encode())
        await m.shelf.put(home.alice.person_id, "boiler.md", BOILER.encode())
        question = "what does error code E119 on the boiler mean"
        await m.recall.recollect(home.dm(home.bob), question, unrelated=True)
        assert await m.shelf.search(home.dm(home.bob), question)
        assert embedder.questions == [question]
        # Alice asking the same words is embedded for her: no one is answered sooner for
        # what someone else asked.
        assert await m.shelf.search(home.dm(home.alice), question)
        assert embedder.questions == [question, question]
    finally:
        await m.close()
