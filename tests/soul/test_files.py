"""The SOUL folder loads as Wren, refuses a tampered constitution, and fails in one clear line."""

from __future__ import annotations

import ast
import hashlib
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from soul.files import (
    Manifest,
    SoulError,
    default_soul_dir,
    load_soul,
    lore_hits,
    section,
)

FILES = (
    "CONSTITUTION.md",
    "PERSONA.md",
    "SCENARIO.md",
    "EXAMPLES.md",
    "WORLD.md",
    "NOTES.md",
    "BOOTSTRAP.md",
)


def copy_soul(tmp_path: Path) -> Path:
    return Path(shutil.copytree(default_soul_dir(), tmp_path / "soul"))


def edit(folder: Path, name: str, old: str, new: str) -> None:
    path = folder / name
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {name}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def repin(folder: Path) -> None:
    """What a person does after a deliberate edit: hash the constitution, paste it in."""
    digest = hashlib.sha256((folder / "CONSTITUTION.md").read_bytes()).hexdigest()
    manifest = folder / "soul.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        re.sub(r"constitution_sha256: \w+", f"constitution_sha256: {digest}", text),
        encoding="utf-8",
    )


def edit_manifest(folder: Path, change: Any) -> None:
    path = folder / "soul.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def failure(folder: Path) -> str:
    """Load `folder`, expect a SoulError, and return its message after checking its shape."""
    with pytest.raises(SoulError) as caught:
        load_soul(folder)
    message = str(caught.value)
    assert message.startswith("soul: ")
    assert "\n" not in message
    # Wrapped, not chained: nobody sees a yaml or pydantic traceback underneath.
    error = caught.value
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__
    assert "pydantic" not in message.lower() and "errors.pydantic.dev" not in message
    return message


# --- the bundled soul -----------------------------------------------------------------------


def test_the_bundled_soul_loads_and_is_wren() -> None:
    soul = load_soul()
    assert soul.manifest.name == "Wren"
    assert soul.manifest.version == 1
    assert soul.root == default_soul_dir()
    assert "I am Wren" in soul.constitution
    assert soul.notes and soul.scenario and soul.persona and soul.bootstrap


def test_loading_with_no_folder_means_the_bundled_one() -> None:
    assert load_soul(None) == load_soul(default_soul_dir())


def test_the_bundled_constitution_matches_its_pin() -> None:
    soul = load_soul()
    digest = hashlib.sha256((default_soul_dir() / "CONSTITUTION.md").read_bytes()).hexdigest()
    assert soul.sha256 == digest == soul.manifest.constitution_sha256


def test_the_constitution_has_its_five_sections_and_fits_its_length() -> None:
    soul = load_soul()
    for title in ("Identity", "Values", "Privacy", "Honesty", "Hard limits"):
        assert section(soul.constitution, title), title
    assert 300 <= len(soul.constitution.split()) <= 600


def test_the_constitution_carries_the_privacy_rule() -> None:
    privacy = " ".join(section(load_soul().constitution, "Privacy").split())
    assert "I never repeat one member's private words or facts to another member" in privacy
    assert "the owner included" in privacy
    assert "nor in the family group" in privacy
    assert "That's theirs to tell." in privacy


def test_the_constitution_carries_the_honesty_rule() -> None:
    honesty = " ".join(section(load_soul().constitution, "Honesty").split())
    assert "I never invent a memory." in honesty
    assert "If I was not told something, I say I don't know" in honesty
    assert "I keep what I remember apart from what I guess" in honesty


def test_the_constitution_draws_the_hard_limits() -> None:
    limits = " ".join(section(load_soul().constitution, "Hard limits").split())
    assert "not a medical, legal or financial authority" in limits
    assert "I never deceive anyone about being an AI" in limits
    assert "I never repeat a secret token" in limits
    assert "I never pressure anyone" in limits


def test_temperament_values_are_parsed() -> None:
    temperament = load_soul().temperament
    assert temperament.baseline.valence == 0.35
    assert temperament.baseline.arousal == 0.3
    assert temperament.half_life_hours == 6.0
    assert temperament.max_delta == 0.25
    assert temperament.drives == {
        "care": 0.8,
        "curiosity": 0.6,
        "playfulness": 0.4,
        "helpfulness": 0.7,
    }


def test_return_greetings_cold_open_and_journey_are_parsed() -> None:
    soul = load_soul()
    assert len(soul.return_greetings) >= 5
    for greeting in soul.return_greetings:
        assert "Alex" in greeting.format(name="Alex") or "{name}" not in greeting
    assert soul.cold_open.startswith("Hi {name}, I'm Wren.")
    assert "\n" not in soul.cold_open  # unwrapped: a chat message, not a 99-column file
    assert "the owner included" in soul.cold_open
    assert 4 <= len(soul.journey) <= 6
    assert soul.journey[0] == "What would you like me to call you?"


def test_the_examples_show_a_kind_refusal_and_an_honest_dont_know() -> None:
    examples = {example.title: example.text for example in load_soul().examples}
    assert 4 <= len(examples) <= 6
    assert "That's his to tell" in examples["Asked what another member said in private"]
    assert "I don't know" in examples["Something she was never told"]
    for text in examples.values():
        assert all(line.startswith(("{{user}}: ", "{{char}}: ")) for line in text.splitlines())


def test_the_lorebook_ships_editable_examples_and_no_password() -> None:
    lore = load_soul().lore
    assert [entry.title for entry in lore] == ["Bins", "Wifi", "Quiet hours", "Guests"]
    assert all(entry.text.startswith("Example entry, edit me.") for entry in lore)
    wifi = next(entry for entry in lore if entry.title == "Wifi")
    assert "ask the owner" in wifi.text


def test_the_bundled_budgets_fit_the_window_once_the_droppable_surfaces_go() -> None:
    manifest = load_soul().manifest
    budgets = manifest.budgets.model_dump()
    assert budgets["constitution"] == 800 and budgets["recent_turns"] == 1200
    assert manifest.window == 4096 and manifest.reply_reserve == 512
    assert manifest.overflow.drop_order == ("examples", "snapshot", "memories", "shelf", "lore")
    kept = sum(v for k, v in budgets.items() if k not in manifest.overflow.drop_order)
    assert kept <= manifest.window - manifest.reply_reserve


# --- the constitution pin -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I am Wren", "I am Wran"),  # one letter
        ("theirs to tell.", "theirs to tell!"),  # one punctuation mark
        ("## Identity\n", "## Identity\n\n"),  # one blank line
    ],
)
def test_a_one_byte_change_to_the_constitution_refuses_to_load(
    tmp_path: Path, old: str, new: str
) -> None:
    folder = copy_soul(tmp_path)
    edit(folder, "CONSTITUTION.md", old, new)
    message = failure(folder)
    assert "CONSTITUTION.md" in message
    assert "pin" in message and "soul.yaml" in message
    pinned = load_soul().sha256
    assert f"expected {pinned[:12]}" in message


def test_a_deliberate_edit_loads_again_once_a_person_re_pins_it(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit(folder, "CONSTITUTION.md", "I am Wren", "I am Wren, always")
    repin(folder)
    assert "I am Wren, always" in load_soul(folder).constitution


def test_a_pin_that_is_not_a_sha256_fails_naming_the_key(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit_manifest(folder, lambda data: data.update(constitution_sha256="abc123"))
    message = failure(folder)
    assert "soul.yaml" in message and "constitution_sha256" in message


# --- missing and malformed ------------------------------------------------------------------


@pytest.mark.parametrize("name", [*FILES, "soul.yaml"])
def test_a_missing_file_fails_naming_it(tmp_path: Path, name: str) -> None:
    folder = copy_soul(tmp_path)
    (folder / name).unlink()
    message = failure(folder)
    assert f"{name} is missing" in message


def test_a_folder_that_does_not_exist_fails_naming_it(tmp_path: Path) -> None:
    assert "is not a folder" in failure(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("PERSONA.md", "Temperament"),
        ("PERSONA.md", "Voice"),
        ("SCENARIO.md", "Return greetings"),
        ("SCENARIO.md", "Situation"),
        ("BOOTSTRAP.md", "Cold open"),
        ("BOOTSTRAP.md", "Journey"),
        ("CONSTITUTION.md", "Honesty"),
    ],
)
def test_a_missing_required_section_fails_naming_it(tmp_path: Path, name: str, title: str) -> None:
    folder = copy_soul(tmp_path)
    edit(folder, name, f"## {title}\n", f"## {title} (renamed)\n")
    if name == "CONSTITUTION.md":
        repin(folder)  # so that it is the section, not the pin, that fails
    message = failure(folder)
    assert message == f"soul: {name} lacks the section '{title}'"


def test_a_required_section_listed_only_in_the_manifest_is_enforced(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit_manifest(folder, lambda data: data["required_sections"]["NOTES.md"].append("Changelog"))
    assert failure(folder) == "soul: NOTES.md lacks the section 'Changelog'"


@pytest.mark.parametrize("value", [0, -5, 1.5, "many", True, None])
def test_a_bad_budget_fails_naming_the_key(tmp_path: Path, value: object) -> None:
    folder = copy_soul(tmp_path)
    edit_manifest(folder, lambda data: data["budgets"].update(memories=value))
    assert failure(folder) == "soul: soul.yaml: budgets.memories must be a positive integer"


def test_a_missing_budget_fails_naming_the_key(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit_manifest(folder, lambda data: data["budgets"].pop("affect"))
    assert failure(folder) == "soul: soul.yaml: budgets.affect is missing"


def test_an_unknown_budget_fails_naming_the_key(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit_manifest(folder, lambda data: data["budgets"].update(weather=100))
    assert "budgets.weather is not a known setting" in failure(folder)


def test_a_window_too_small_for_what_is_never_dropped_fails(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit_manifest(folder, lambda data: data.update(window=2000))
    message = failure(folder)
    assert "window (2000) must exceed reply_reserve (512)" in message


@pytest.mark.parametrize(
    ("overflow", "expected"),
    [
        ({"drop_order": ["examples", "partner"]}, "overflow.drop_order may name only"),
        ({"drop_order": ["lore", "lore"]}, "overflow.drop_order names a surface twice"),
        (
            {"never_drop": ["constitution", "persona", "partner"]},
            "overflow.never_drop must include honesty",
        ),
        (
            {"never_drop": ["constitution", "persona", "partner", "honesty", "vibes"]},
            "overflow.never_drop names 'vibes'",
        ),
        (
            {"never_drop": ["constitution", "persona", "partner", "honesty", "lore"]},
            "overflow names 'lore' both to drop and never to drop",
        ),
    ],
)
def test_an_overflow_policy_that_could_crowd_out_identity_fails(
    tmp_path: Path, overflow: dict[str, list[str]], expected: str
) -> None:
    folder = copy_soul(tmp_path)
    edit_manifest(folder, lambda data: data["overflow"].update(overflow))
    assert expected in failure(folder)


def test_two_parts_sharing_one_file_fail(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit_manifest(folder, lambda data: data["files"].update(notes="PERSONA.md"))
    assert failure(folder) == "soul: soul.yaml: files lists PERSONA.md for two parts"


@pytest.mark.parametrize("name", ["../CONSTITUTION.md", "/etc/passwd", "sub/PERSONA.md"])
def test_a_listed_file_outside_the_folder_is_refused(tmp_path: Path, name: str) -> None:
    folder = copy_soul(tmp_path)
    edit_manifest(folder, lambda data: data["files"].update(persona=name))
    assert "files.persona must be a plain file name" in failure(folder)


@pytest.mark.parametrize(
    "text",
    [
        "name: Wren\nfiles: [unclosed\n",  # a flow sequence never closed
        "name: Wren\n\tversion: 1\n",  # a tab where YAML wants spaces
        "- just\n- a list\n",  # YAML, but not a mapping
        "",  # nothing at all
    ],
)
def test_a_malformed_soul_yaml_fails_with_one_line(tmp_path: Path, text: str) -> None:
    folder = copy_soul(tmp_path)
    (folder / "soul.yaml").write_text(text, encoding="utf-8")
    message = failure(folder)
    assert message.startswith("soul: soul.yaml ")


def test_a_soul_file_that_is_not_utf8_fails_naming_it(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    (folder / "WORLD.md").write_bytes(b"# World\n\xff\xfe\n")
    assert failure(folder) == "soul: WORLD.md is not valid UTF-8 (at byte 8)"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("valence: 0.35", "valence: 1.5", "baseline.valence must be a number in [-1, 1]"),
        ("max_delta: 0.25", "max_delta: 0", "max_delta must be a number in (0, 1]"),
        ("half_life_hours: 6.0", "half_life_hours: -1", "half_life_hours must be a positive"),
        ("care: 0.8", "care: 2", "drives.care must be a number in [0, 1]"),
        ("care: 0.8", "Care: 0.8", "drives names must be lower-case words"),
        ("max_delta: 0.25\n", "max_delta: 0.25\nmood: sunny\n", "mood is not a known setting"),
        ("half_life_hours: 6.0\n", "", "half_life_hours is missing"),
        ("baseline: {valence", "baseline: {valence: [", "Temperament block is not valid YAML"),
        ("```yaml", "```text", "needs exactly one ```yaml block (found 0)"),
    ],
)
def test_a_malformed_temperament_fails_in_one_line(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    folder = copy_soul(tmp_path)
    edit(folder, "PERSONA.md", old, new)
    message = failure(folder)
    assert message.startswith("soul: PERSONA.md")
    assert expected in message


def test_two_temperament_blocks_are_refused(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit(folder, "PERSONA.md", "Mildly content", "```yaml\nmax_delta: 0.5\n```\n\nMildly content")
    assert "needs exactly one ```yaml block (found 2)" in failure(folder)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("- Hello again, {name}.", "- Hello again, {who}.", "uses {who}; only {name}"),
        ("- Hello again, {name}.", "- Hello again, {name.", "has a stray brace"),
    ],
)
def test_a_greeting_with_a_placeholder_that_cannot_be_filled_fails(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    folder = copy_soul(tmp_path)
    edit(folder, "SCENARIO.md", old, new)
    message = failure(folder)
    assert message.startswith("soul: SCENARIO.md: a return greeting")
    assert expected in message


def test_a_lore_entry_without_keys_fails_naming_it(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit(folder, "WORLD.md", "keys: guest, guests,", "guest, guests,")
    assert failure(folder) == "soul: WORLD.md: the entry 'Guests' needs a 'keys:' line first"


def test_an_example_with_a_stray_line_fails_naming_it(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit(folder, "EXAMPLES.md", "{{user}}: when is the boiler", "Alex: when is the boiler")
    message = failure(folder)
    assert "EXAMPLES.md" in message and "'Something she was never told'" in message


# --- lore -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("when do the bins go out", ["Bins"]),
        ("When do the BINS go out?", ["Bins"]),
        ("what size is the cabinsize suitcase", []),
        ("the bin-men came early", ["Bins"]),  # a hyphen is a word boundary
        ("the wi-fi is down again", ["Wifi"]),
        ("is tonight a   quiet\nhours night?", ["Quiet hours"]),  # any whitespace in a phrase
        ("the router broke, and it's bin day", ["Bins", "Wifi"]),  # file order, not text order
        ("we have guests, guests, guests", ["Guests"]),  # each entry once
        ("quietly", []),
        ("", []),
    ],
)
def test_lore_hits_fire_on_whole_words_only(text: str, expected: list[str]) -> None:
    assert [entry.title for entry in lore_hits(load_soul(), text)] == expected


def test_lore_keys_are_lowercased_and_deduplicated(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit(folder, "WORLD.md", "keys: wifi, wi-fi,", "keys: WiFi,  Wi-Fi , wifi,,")
    wifi = next(entry for entry in load_soul(folder).lore if entry.title == "Wifi")
    assert wifi.keys[:2] == ("wifi", "wi-fi")
    assert len(wifi.keys) == len(set(wifi.keys))


# --- another folder -------------------------------------------------------------------------


def test_a_soul_loads_from_another_folder(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    edit_manifest(folder, lambda data: data.update(name="Robin"))
    edit(
        folder,
        "WORLD.md",
        "## Guests\n",
        "## Pets\nkeys: cat, feed the cat\nThe cat eats at six.\n\n## Guests\n",
    )
    soul = load_soul(folder)
    assert soul.root == folder
    assert soul.manifest.name == "Robin"
    assert [entry.title for entry in lore_hits(soul, "did anyone feed the cat?")] == ["Pets"]


def test_file_names_come_from_the_manifest(tmp_path: Path) -> None:
    folder = copy_soul(tmp_path)
    (folder / "WORLD.md").rename(folder / "LORE.md")
    edit_manifest(folder, lambda data: data["files"].update(world="LORE.md"))
    data = yaml.safe_load((folder / "soul.yaml").read_text(encoding="utf-8"))
    data["required_sections"]["LORE.md"] = data["required_sections"].pop("WORLD.md")
    (folder / "soul.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    assert len(load_soul(folder).lore) == 4


def test_the_loaded_soul_is_frozen() -> None:
    soul = load_soul()
    with pytest.raises(ValueError, match="frozen"):
        soul.constitution = "anything"


def test_the_manifest_model_rejects_what_the_loader_rejects() -> None:
    data = yaml.safe_load((default_soul_dir() / "soul.yaml").read_text(encoding="utf-8"))
    assert Manifest.model_validate(data).name == "Wren"
    data["reply_reserve"] = 0
    with pytest.raises(ValueError, match="reply_reserve"):
        Manifest.model_validate(data)


# --- section() ------------------------------------------------------------------------------


def test_section_returns_a_stripped_body_up_to_the_next_heading() -> None:
    text = "# Title\n\n## One\n\n  first body\n### sub\nstill one\n\n## Two\nsecond\n# Top\nafter"
    assert section(text, "One") == "first body\n### sub\nstill one"
    assert section(text, "Two") == "second"
    assert section(text, "Three") == ""


def test_section_ignores_headings_inside_code_fences() -> None:
    text = "## Real\nbefore\n```\n## Fake\n```\nafter\n## Next\n"
    assert section(text, "Fake") == ""
    assert section(text, "Real") == "before\n```\n## Fake\n```\nafter"


# --- never writes ---------------------------------------------------------------------------


@pytest.mark.parametrize("module", ["files.py", "manifest.py", "markdown.py"])
def test_nothing_that_reads_the_soul_opens_a_file_for_writing(module: str) -> None:
    source = (Path(__file__).resolve().parents[2] / "soul" / module).read_text("utf-8")
    # The loader reads with Path.read_bytes and nothing else: no open() at all, in any mode,
    # and none of the calls that write, create, move or delete a file.
    forbidden = {
        "open",
        "write",
        "writelines",
        "write_text",
        "write_bytes",
        "touch",
        "mkdir",
        "rmdir",
        "unlink",
        "rename",
        "chmod",
        "copy",
        "copyfile",
        "copytree",
        "move",
    }
    offenders = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in forbidden:
                offenders.append(f"line {node.lineno}: {name}(")
    assert offenders == []
    # A plain-text net for what a call walk could miss (a getattr, an alias).
    assert not re.search(r"""open\([^)]*["'][^"']*[wax+]""", source)
    for word in ("write_text", "write_bytes", "shutil", "os.open", "tempfile"):
        assert word not in source, word
